//! The analyses against brute force over the format crate's call tree, signatures on a
//! hand-made trace, and the summary's privacy.

use std::collections::HashMap;

use hubble_analysis::chains::{chains, Rank};
use hubble_analysis::signatures::{matches, parse};
use hubble_analysis::summary::{summarize, Options};
use hubble_analysis::top::top;
use hubble_analysis::Input;
use hubble_format::{build_tree, counter_to_ns, TraceFile, TreeOptions};
use hubble_testkit::synth::{inputs, trace, Spec, BINDER, CLICK, SLEEP};

fn sample() -> TraceFile {
    trace(&Spec {
        laps: 1.6,
        ring_slots: 5000,
        unresolved_every: 7,
        ..Spec::default()
    })
}

#[test]
fn top_equals_brute_force_over_the_tree() {
    let file = sample();
    let events = file.decode_events().unwrap().events;
    let tree = build_tree(
        &events,
        file.header.reference_counter,
        TreeOptions::default(),
    );
    let hz = file.header.timer_hz;
    // Brute force: children's time from parent links; recursion via ancestor walk.
    let mut child = vec![0u64; tree.frames.len()];
    for f in &tree.frames {
        if let Some(p) = f.parent {
            child[p as usize] += f.duration();
        }
    }
    let mut want: HashMap<Option<u64>, (u64, u64, u64)> = HashMap::new();
    for (i, f) in tree.frames.iter().enumerate() {
        let mut recursive = false;
        let mut p = f.parent;
        while let Some(q) = p {
            recursive |= tree.frames[q as usize].method == f.method;
            p = tree.frames[q as usize].parent;
        }
        let e = want.entry(f.method).or_default();
        e.0 += 1;
        e.1 += f.duration() - child[i];
        if !recursive {
            e.2 += f.duration();
        }
    }
    let input = inputs(std::slice::from_ref(&file));
    let got = top(&input).unwrap();
    assert_eq!(got.len(), want.len());
    for (method, (calls, self_ticks, incl)) in want {
        let name = hubble_format::names::display(&file.symbols, method);
        let g = got.iter().find(|s| s.method == name).unwrap();
        assert_eq!(g.calls, calls, "{name}");
        assert_eq!(g.self_ns, counter_to_ns(self_ticks, hz), "{name}");
        assert_eq!(g.inclusive_ns, counter_to_ns(incl, hz), "{name}");
    }
    assert!(got.windows(2).all(|w| w[0].self_ns >= w[1].self_ns));
}

#[test]
fn chains_partition_self_time_and_respect_the_window() {
    let file = sample();
    let input = inputs(std::slice::from_ref(&file));
    let all = chains(&input, None, Rank::Time).unwrap();
    let self_total: u64 = top(&input).unwrap().iter().map(|m| m.self_ns).sum();
    let chain_total: u64 = all.iter().map(|c| c.self_ns).sum();
    // Same ticks, converted per method vs per path: at most 1 ns of rounding each.
    assert!(self_total.abs_diff(chain_total) <= all.len() as u64 + 1000);
    assert!(all.iter().all(|c| c.depth == c.methods.len()));
    let frames: u64 = top(&input).unwrap().iter().map(|m| m.calls).sum();
    assert_eq!(all.iter().map(|c| c.count).sum::<u64>(), frames);
    // A 5 ms window holds at most 5 ms of self time, and less than the whole window.
    let near = chains(&input, Some(5_000_000), Rank::Time).unwrap();
    let near_total: u64 = near.iter().map(|c| c.self_ns).sum();
    assert!(near_total <= 5_000_000 + near.len() as u64);
    assert!(near_total < chain_total);
    let deep = chains(&input, None, Rank::Depth).unwrap();
    assert!(deep.windows(2).all(|w| w[0].depth >= w[1].depth));
}

/// click > binder, then click > x > sleep(5 ms), then a top-level sleep(1 ms); 1 MHz timer.
fn handmade() -> TraceFile {
    let (click, binder, sleep, x) = (0x1000u64, 0x2000u64, 0x3000u64, 0x4000u64);
    hubble_testkit::synth::handmade(
        &[
            (Some(click), 10),
            (Some(binder), 20),
            (None, 30),
            (Some(x), 40),
            (Some(sleep), 50),
            (None, 5050),
            (None, 5060),
            (None, 5070),
            (Some(sleep), 6000),
            (None, 7000),
        ],
        7100,
        &[
            (click, CLICK),
            (binder, BINDER),
            (sleep, SLEEP),
            (x, "void com.example.app.X.run()"),
        ],
    )
}

#[test]
fn signatures_match_methods_and_ordered_chains() {
    let file = handmade();
    let sigs = parse(
        "sigs",
        "method sleep *Thread.sleep*\n\
         method long-sleep min=2ms *Thread.sleep*\n\
         chain sleep-under-click *.onClick(* > *Thread.sleep*\n\
         chain binder-under-click *.onClick(* > *BinderProxy.transact*\n\
         chain wrong-order *Thread.sleep* > *.onClick(*\n\
         chain via-x *onClick* > *X.run* > *sleep*\n\
         method nothing *NoSuchMethod*\n",
    )
    .unwrap();
    let input = inputs(std::slice::from_ref(&file));
    let got: HashMap<String, (u64, u64, u64)> = matches(&input, &sigs)
        .unwrap()
        .into_iter()
        .map(|m| (m.name, (m.count, m.total_ns, m.max_ns)))
        .collect();
    assert_eq!(got["sleep"], (2, 6_000_000, 5_000_000));
    assert_eq!(got["long-sleep"], (1, 5_000_000, 5_000_000));
    assert_eq!(got["sleep-under-click"], (1, 5_000_000, 5_000_000));
    assert_eq!(got["binder-under-click"], (1, 10_000, 10_000));
    assert_eq!(got["wrong-order"].0, 0);
    assert_eq!(got["via-x"].0, 1);
    assert_eq!(got["nothing"].0, 0);
}

#[test]
fn summary_leaks_nothing_but_names_and_durations() {
    let pid = 987_653u32;
    let tid = 876_541u32;
    let wall = 1_712_345_678_901_234_567u64;
    let file = trace(&Spec {
        pid,
        tid,
        wall_clock_ns: wall,
        thread_name: "SecretThreadName".into(),
        process_name: "com.secret.process".into(),
        unresolved_every: 3,
        laps: 1.3,
        ..Spec::default()
    });
    let mut file = file;
    file.header.reason = "SecretReason".into();
    let input = [Input {
        file: &file,
        name: "/data/data/com.secret.process/files/hubble/x.hubble",
    }];
    let sigs = parse("s", "method sleep *Thread.sleep*\nchain c *onClick* > *\n").unwrap();
    let summary = summarize(
        &input,
        &sigs,
        Options {
            top: 50,
            chains: 50,
            chain_window_ns: u64::MAX,
        },
    )
    .unwrap();
    assert!(!summary.top.is_empty() && !summary.chains.is_empty() && !summary.matched.is_empty());
    let json = serde_json::to_string(&summary).unwrap();
    let h = &file.header;
    let mut forbidden: Vec<String> = vec![
        h.thread_name.clone(),
        h.process_name.clone(),
        h.reason.clone(),
        "secret".into(),
        pid.to_string(),
        tid.to_string(),
        h.reference_counter.to_string(),
        format!("{:x}", h.reference_counter),
    ];
    // Any prefix of the wall clock down to whole seconds (ns, µs, ms, s renderings).
    for digits in [19, 16, 13, 10] {
        forbidden.push(wall.to_string()[..digits].to_owned());
    }
    for ptr in file.symbols.keys().chain(
        file.decode_events()
            .unwrap()
            .events
            .iter()
            .filter_map(|e| match e.kind {
                hubble_format::EventKind::Entry { method } => Some(method),
                _ => None,
            })
            .collect::<Vec<_>>()
            .iter(),
    ) {
        forbidden.push(format!("{ptr:x}"));
        forbidden.push(ptr.to_string());
    }
    let lower = json.to_lowercase();
    for f in &forbidden {
        assert!(!lower.contains(&f.to_lowercase()), "summary leaks {f}");
    }
    // The schema is closed: exactly these fields.
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let keys: Vec<&str> = value
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "chain_window_ns",
            "chains",
            "hubble_summary",
            "matched",
            "top"
        ]
    );
    assert!(json.contains("<unresolved>"));
}

// Found by cargo-mutants (docs/tools.md): units, boundaries and helpers no test pinned down.

#[test]
fn ms_prints_milliseconds_with_three_decimals() {
    use hubble_analysis::ms;
    assert_eq!(ms(0), "0.000");
    assert_eq!(ms(999), "0.000");
    assert_eq!(ms(1_000), "0.001");
    assert_eq!(ms(1_234_567), "1.234");
    assert_eq!(ms(12_000_999_999), "12000.999");
}

#[test]
fn signature_durations_take_every_unit_and_errors_name_the_line() {
    let sigs = parse(
        "units",
        "method a min=5ns *x*\nmethod b min=5us *x*\n\nmethod c min=5ms *x*\nmethod d min=1.5s *x*\n",
    )
    .unwrap();
    let mins: Vec<u64> = sigs.iter().map(|s| s.min_ns).collect();
    assert_eq!(mins, [5, 5_000, 5_000_000, 1_500_000_000]);
    match parse("bad", "method a *x*\n# a comment\nmethod b min=5m *x*\n") {
        Err(hubble_analysis::AnalysisError::Signature { file, line, .. }) => {
            assert_eq!((file.as_str(), line), ("bad", 3));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_frame_exactly_as_long_as_min_counts() {
    // handmade(): Thread.sleep runs 1 ms and 5 ms.
    let file = handmade();
    let input = inputs(std::slice::from_ref(&file));
    let sigs = parse(
        "s",
        "method at-min min=5ms *Thread.sleep*\nmethod above min=5000001ns *Thread.sleep*\n",
    )
    .unwrap();
    let got: Vec<u64> = matches(&input, &sigs)
        .unwrap()
        .iter()
        .map(|m| m.count)
        .collect();
    assert_eq!(got, [1, 0]);
}

#[test]
fn scrub_turns_only_hex_pointers_into_unresolved() {
    use hubble_analysis::summary::scrub;
    assert_eq!(scrub("0x7f001234"), "<unresolved>");
    assert_eq!(scrub("0x"), "0x");
    assert_eq!(scrub("0xnothex"), "0xnothex");
    assert_eq!(scrub("void a.B.c()"), "void a.B.c()");
}

#[test]
fn the_summary_lists_only_signatures_that_matched() {
    let file = handmade();
    let input = inputs(std::slice::from_ref(&file));
    let sigs = parse(
        "s",
        "method sleep *Thread.sleep*\nmethod nothing *NoSuchMethod*\n",
    )
    .unwrap();
    let summary = summarize(
        &input,
        &sigs,
        Options {
            top: 10,
            chains: 0,
            chain_window_ns: 1_000_000,
        },
    )
    .unwrap();
    let names: Vec<&str> = summary
        .matched
        .iter()
        .map(|m| m.signature.as_str())
        .collect();
    assert_eq!(names, ["sleep"]);
}

/// The glob against a recursive matcher that follows its definition (`*` any run, `?` one
/// character, the rest literal), on every pattern and text over a small alphabet.
#[test]
fn glob_equals_its_definition() {
    use hubble_analysis::signatures::glob;
    fn reference(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('*', rest)) => (0..=t.len()).any(|i| reference(rest, &t[i..])),
            Some(('?', rest)) => !t.is_empty() && reference(rest, &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && reference(rest, &t[1..]),
        }
    }
    fn all(alphabet: &[char], max: usize) -> Vec<String> {
        let mut out = vec![String::new()];
        let mut last = vec![String::new()];
        for _ in 0..max {
            last = last
                .iter()
                .flat_map(|s| alphabet.iter().map(move |c| format!("{s}{c}")))
                .collect();
            out.extend(last.iter().cloned());
        }
        out
    }
    let patterns = all(&['a', 'b', '*', '?'], 5);
    let texts = all(&['a', 'b'], 6);
    for p in &patterns {
        let pc: Vec<char> = p.chars().collect();
        for t in &texts {
            let tc: Vec<char> = t.chars().collect();
            assert_eq!(glob(p, t), reference(&pc, &tc), "glob({p:?}, {t:?})");
        }
    }
}
