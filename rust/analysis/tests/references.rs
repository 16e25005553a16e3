//! Every analysis output against a reference computed without the analysis code: brute force
//! over the format crate's decoder and call tree (`hubble_format::build_tree`, the trusted
//! base), or numbers worked out by hand for a small trace.
//!
//! * `chains`: each frame's self time is the union of the gaps between its children; each gap
//!   is clipped to the window separately (the code under test clips inclusive times instead and
//!   subtracts), and the whole ranked list must be equal, not bounded;
//! * `top`: values and the whole order, merged by name over inputs of different timer rates;
//! * `summary`: against `top` and `chains` (both checked here against brute force), and a trace
//!   small enough to merge the unresolved methods by hand.

mod common;

use std::collections::HashMap;

use hubble_analysis::chains::{chains, Chain, Rank};
use hubble_analysis::summary::{summarize, Options, Summary};
use hubble_analysis::top::{top, MethodStats};
use hubble_analysis::Input;
use hubble_format::names::display;
use hubble_format::{counter_to_ns, CallTree, Mode, TraceFile};
use hubble_testkit::first_difference;
use hubble_testkit::synth::{handmade, inputs, trace, tree, Spec};
use proptest::prelude::*;

/// The methods of frame `i` and its ancestors, outermost first.
fn pointers(tree: &CallTree, i: usize) -> Vec<Option<u64>> {
    let mut out = Vec::new();
    let mut at = Some(i as u32);
    while let Some(j) = at {
        let f = &tree.frames[j as usize];
        out.push(f.method);
        at = f.parent;
    }
    out.reverse();
    out
}

/// Each frame's children, in time order (pre-order lists them so).
fn children(tree: &CallTree) -> Vec<Vec<usize>> {
    let mut kids = vec![Vec::new(); tree.frames.len()];
    for (i, f) in tree.frames.iter().enumerate() {
        if let Some(p) = f.parent {
            kids[p as usize].push(i);
        }
    }
    kids
}

/// Brute-force chains: per path (names), activations that touch the window [lo, hi] and the
/// self time inside it. A frame's self time is the gaps between its children; each gap is
/// clipped to the window on its own. Ticks are summed per input and path and converted once.
fn brute_chains(files: &[TraceFile], last_ns: Option<u64>) -> Vec<Chain> {
    let mut by_path: HashMap<Vec<String>, (u64, u64)> = HashMap::new();
    for file in files {
        let h = &file.header;
        let hi = h.reference_counter;
        let lo = match last_ns {
            // The window is the last `ns` before the flush, in whole ticks.
            Some(ns) => hi.saturating_sub(
                u64::try_from(u128::from(ns) * u128::from(h.timer_hz) / 1_000_000_000)
                    .unwrap_or(u64::MAX),
            ),
            None => 0,
        };
        let clipped = |a: u64, b: u64| b.min(hi).saturating_sub(a.max(lo));
        let tree = tree(file);
        let kids = children(&tree);
        // Keyed by pointers here (cheaper to hash than names), named once per path below.
        let mut ticks: HashMap<Vec<Option<u64>>, (u64, u64)> = HashMap::new();
        for (i, f) in tree.frames.iter().enumerate() {
            if f.end < lo || f.start > hi {
                continue;
            }
            let mut own = 0;
            let mut cursor = f.start;
            for &k in &kids[i] {
                own += clipped(cursor, tree.frames[k].start);
                cursor = tree.frames[k].end;
            }
            own += clipped(cursor, f.end);
            let e = ticks.entry(pointers(&tree, i)).or_default();
            e.0 += 1;
            e.1 += own;
        }
        for (p, (count, t)) in ticks {
            let names = p
                .iter()
                .map(|m| display(&file.symbols, *m).into_owned())
                .collect();
            let e = by_path.entry(names).or_default();
            e.0 += count;
            e.1 += counter_to_ns(t, h.timer_hz);
        }
    }
    by_path
        .into_iter()
        .map(|(methods, (count, self_ns))| Chain {
            depth: methods.len(),
            methods,
            count,
            self_ns,
        })
        .collect()
}

fn ranked(mut out: Vec<Chain>, rank: Rank) -> Vec<Chain> {
    // Ranked as documented: by time (then deeper first), or by depth (then time); then names.
    out.sort_by_key(|c| {
        let (first, second) = match rank {
            Rank::Time => (c.self_ns, c.depth as u64),
            Rank::Depth => (c.depth as u64, c.self_ns),
        };
        (
            std::cmp::Reverse(first),
            std::cmp::Reverse(second),
            c.methods.clone(),
        )
    });
    out
}

/// Brute-force top: per method, calls, self ticks (duration minus children's) and inclusive
/// ticks of activations with no ancestor of the same method; converted per input, added up by
/// name, ranked by self time (descending) then name.
fn brute_top(files: &[TraceFile]) -> Vec<MethodStats> {
    let mut rows = Vec::new();
    for file in files {
        let tree = tree(file);
        let kids = children(&tree);
        let mut per: HashMap<Option<u64>, (u64, u64, u64)> = HashMap::new();
        for (i, f) in tree.frames.iter().enumerate() {
            let in_kids: u64 = kids[i].iter().map(|&k| tree.frames[k].duration()).sum();
            let mut outermost = true;
            let mut p = f.parent;
            while let Some(q) = p {
                outermost &= tree.frames[q as usize].method != f.method;
                p = tree.frames[q as usize].parent;
            }
            let e = per.entry(f.method).or_default();
            e.0 += 1;
            e.1 += f.duration() - in_kids;
            if outermost {
                e.2 += f.duration();
            }
        }
        let hz = file.header.timer_hz;
        for (m, (calls, own, incl)) in per {
            let name = display(&file.symbols, m).into_owned();
            rows.push((name, calls, counter_to_ns(own, hz), counter_to_ns(incl, hz)));
        }
    }
    common::top_by_name(rows)
}

/// One or two threads: wrapped or not, 64- or 32-bit, timer rates that do and do not divide
/// 10⁹, some methods unresolved.
fn files(seed: u64, two: bool, laps: f64, rate: usize) -> Vec<TraceFile> {
    let rates = [19_200_000u64, 24_000_000, 1_000_000, 62_500_000];
    (0..1 + usize::from(two))
        .map(|i| {
            trace(&Spec {
                mode: if (seed + i as u64) % 3 == 0 {
                    Mode::Bits32
                } else {
                    Mode::Bits64
                },
                ring_slots: 1500 + 500 * i,
                laps: laps + i as f64 * 0.4,
                seed: seed * 2 + i as u64,
                methods: 40,
                unresolved_every: 4,
                timer_hz: rates[(rate + i) % rates.len()],
                tid: 10 + i as u32,
                ..Spec::default()
            })
        })
        .collect()
}

/// The whole window of `files` in ns, the longest one's.
fn span_ns(files: &[TraceFile]) -> u64 {
    files
        .iter()
        .map(|f| {
            let t = tree(f);
            counter_to_ns(t.window_end - t.window_start, f.header.timer_hz)
        })
        .max()
        .unwrap()
}

/// What [`files`] makes a case of: a seed, one file or two, the laps of their rings, their
/// timer rate.
fn case() -> impl Strategy<Value = (u64, bool, f64, usize)> {
    (1u64..1_000_000, any::<bool>(), 0.3f64..2.5, 0usize..4)
}

proptest! {
    // Each case runs the analyses (debug build) several times over a few thousand frames: a
    // dozen cases keep the file under a few seconds on CI's two cores.
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// `chains` equals the brute force exactly, for windows from nothing to more than the
    /// whole trace, and the whole window.
    #[test]
    fn chains_equal_brute_force_clipped_windows(
        (seed, two, laps, rate) in case(),
        permille in prop::collection::vec(0u64..1300, 2),
    ) {
        let files = files(seed, two, laps, rate);
        let input = inputs(&files);
        let span = span_ns(&files);
        let mut windows: Vec<Option<u64>> = permille.iter().map(|p| Some(span * p / 1000)).collect();
        windows.push(None);
        for last in windows {
            let unranked = brute_chains(&files, last);
            for rank in [Rank::Time, Rank::Depth] {
                let got = chains(&input, last, rank).unwrap();
                let want = ranked(unranked.clone(), rank);
                let d = first_difference(&got, &want);
                prop_assert!(
                    d.is_none(),
                    "window {:?} of {} ns, {:?}: {}",
                    last,
                    span,
                    rank,
                    d.unwrap_or_default()
                );
            }
        }
    }

    /// `top` equals the brute force exactly, in the same order, merged over two threads whose
    /// timer rates differ.
    #[test]
    fn top_values_and_order_equal_brute_force((seed, two, laps, rate) in case()) {
        let files = files(seed, two, laps, rate);
        let d = first_difference(&top(&inputs(&files)).unwrap(), &brute_top(&files));
        prop_assert!(d.is_none(), "{}", d.unwrap_or_default());
    }

    /// `summary`'s top list is `top` with every unresolved method merged into one line before
    /// ranking and cutting, and its chains are `chains` over the window, timeless ones
    /// dropped, names scrubbed.
    #[test]
    fn summary_equals_top_and_chains_merged(
        (seed, two, laps, rate) in case(),
        n_top in 1usize..40,
        n_chains in 1usize..40,
        permille in 1u64..1300,
    ) {
        let files = files(seed, two, laps, rate);
        let input = inputs(&files);
        let window = span_ns(&files) * permille / 1000;
        let got = summarize(
            &input,
            &[],
            Options { top: n_top, chains: n_chains, chain_window_ns: window },
        )
        .unwrap();
        let all = brute_top(&files);
        // The unresolved methods' line, added up from the brute force's.
        let unresolved: Vec<&MethodStats> =
            all.iter().filter(|m| m.method.starts_with("0x")).collect();
        let mut want: Vec<(String, u64, u64, u64)> = all
            .iter()
            .filter(|m| !m.method.starts_with("0x"))
            .map(|m| (m.method.clone(), m.calls, m.self_ns, m.inclusive_ns))
            .collect();
        if !unresolved.is_empty() {
            want.push((
                "<unresolved>".into(),
                unresolved.iter().map(|m| m.calls).sum(),
                unresolved.iter().map(|m| m.self_ns).sum(),
                unresolved.iter().map(|m| m.inclusive_ns).sum(),
            ));
        }
        want.sort_by_key(|w| (std::cmp::Reverse(w.2), w.0.clone()));
        want.truncate(n_top);
        let got_top: Vec<(String, u64, u64, u64)> = got
            .top
            .iter()
            .map(|t| (t.method.clone(), t.calls, t.self_ns, t.inclusive_ns))
            .collect();
        let d = first_difference(&got_top, &want);
        prop_assert!(d.is_none(), "top: {}", d.unwrap_or_default());

        let want_chains: Vec<(Vec<String>, usize, u64, u64)> =
            ranked(brute_chains(&files, Some(window)), Rank::Time)
                .into_iter()
                .filter(|c| c.self_ns > 0)
                .take(n_chains)
                .map(|c| {
                    let names = c
                        .methods
                        .iter()
                        .map(|m| if m.starts_with("0x") { "<unresolved>".into() } else { m.clone() })
                        .collect();
                    (names, c.depth, c.count, c.self_ns)
                })
                .collect();
        let got_chains: Vec<(Vec<String>, usize, u64, u64)> = got
            .chains
            .iter()
            .map(|c| (c.methods.clone(), c.depth, c.count, c.self_ns))
            .collect();
        let d = first_difference(&got_chains, &want_chains);
        prop_assert!(d.is_none(), "chains: {}", d.unwrap_or_default());
        prop_assert_eq!(got.chain_window_ns, window);
    }
}

/// A (resolved) calls U1 (20..80), then U2 (90..150) which calls U1 (100..130); B (resolved)
/// runs 300..1300; U2 again 1400..1420; flush at 1500. U1 and U2 have no symbol.
fn by_hand() -> TraceFile {
    let (a, b, u1, u2) = (
        Some(0x1000u64),
        Some(0x2000u64),
        Some(0x5000u64),
        Some(0x6000u64),
    );
    handmade(
        &[
            (a, 10),
            (u1, 20),
            (None, 80),
            (u2, 90),
            (u1, 100),
            (None, 130),
            (None, 150),
            (None, 200),
            (b, 300),
            (None, 1300),
            (u2, 1400),
            (None, 1420),
        ],
        1500,
        &[(0x1000, "void A.a()"), (0x2000, "void B.b()")],
    )
}

/// Methods with equal self time are ranked by name, in `top` and in the summary: `b`, `c` and
/// `a` run 100 ticks each, in that order, and `d` 50.
#[test]
fn ties_rank_by_name() {
    let (a, b, c, d) = (
        Some(0x1000u64),
        Some(0x2000u64),
        Some(0x3000u64),
        Some(0x4000u64),
    );
    let file = handmade(
        &[
            (b, 0),
            (None, 100),
            (d, 100),
            (None, 150),
            (c, 200),
            (None, 300),
            (a, 300),
            (None, 400),
        ],
        500,
        &[
            (0x1000, "void a()"),
            (0x2000, "void b()"),
            (0x3000, "void c()"),
            (0x4000, "void d()"),
        ],
    );
    let input = inputs(std::slice::from_ref(&file));
    let names: Vec<String> = top(&input).unwrap().into_iter().map(|m| m.method).collect();
    assert_eq!(names, ["void a()", "void b()", "void c()", "void d()"]);
    let summary = summarize(&input, &[], Options::default()).unwrap();
    let names: Vec<&str> = summary.top.iter().map(|m| m.method.as_str()).collect();
    assert_eq!(names, ["void a()", "void b()", "void c()", "void d()"]);
}

/// The summary of `input` with its `top` methods and 10 chains over the last `window_ns`.
fn summary(input: &[Input<'_>], top: usize, window_ns: u64) -> Summary {
    let options = Options {
        top,
        chains: 10,
        chain_window_ns: window_ns,
    };
    summarize(input, &[], options).unwrap()
}

/// The small trace's summary, worked out by hand:
/// * B: 1 call, 1000 ticks self and inclusive;
/// * A: 1 call, 190 inclusive, 190 − 60 (U1) − 60 (U2) = 70 self;
/// * U1: 2 calls, 60 + 30 = 90 self and inclusive; U2: 2 calls, self 30 + 20 = 50, inclusive
///   60 + 20 = 80; merged, `<unresolved>`: 4 calls, 140 self, 170 inclusive — above A, which
///   neither of them is alone;
/// * chains over the last 300 µs (ticks 1200..1500): B's last 100 ticks, U2's 20.
#[test]
fn summary_of_a_trace_merged_by_hand() {
    let file = by_hand();
    let input = inputs(std::slice::from_ref(&file));
    let row = |t: &hubble_analysis::summary::TopMethod| {
        (t.method.clone(), t.calls, t.self_ns, t.inclusive_ns)
    };
    let s = summary(&input, 2, 300_000);
    assert_eq!(
        s.top.iter().map(row).collect::<Vec<_>>(),
        [
            ("void B.b()".to_owned(), 1, 1_000_000, 1_000_000),
            ("<unresolved>".to_owned(), 4, 140_000, 170_000),
        ]
    );
    let chain =
        |c: &hubble_analysis::summary::ChainShape| (c.methods.join(" > "), c.count, c.self_ns);
    assert_eq!(
        s.chains.iter().map(chain).collect::<Vec<_>>(),
        [
            ("void B.b()".to_owned(), 1, 100_000),
            ("<unresolved>".to_owned(), 1, 20_000),
        ]
    );
    let s = summary(&input, 10, u64::MAX);
    assert_eq!(
        s.top.iter().map(row).collect::<Vec<_>>(),
        [
            ("void B.b()".to_owned(), 1, 1_000_000, 1_000_000),
            ("<unresolved>".to_owned(), 4, 140_000, 170_000),
            ("void A.a()".to_owned(), 1, 70_000, 190_000),
        ]
    );
    // Ties on time go to the deeper chain.
    assert_eq!(
        s.chains.iter().map(chain).collect::<Vec<_>>(),
        [
            ("void B.b()".to_owned(), 1, 1_000_000),
            ("void A.a()".to_owned(), 1, 70_000),
            ("void A.a() > <unresolved>".to_owned(), 1, 60_000),
            (
                "void A.a() > <unresolved> > <unresolved>".to_owned(),
                1,
                30_000
            ),
            ("void A.a() > <unresolved>".to_owned(), 1, 30_000),
            ("<unresolved>".to_owned(), 1, 20_000),
        ]
    );
}

/// A (10..200), then C entered on the flush's very tick (1500): frames that end where a window
/// begins and begin where it ends.
fn edge_frames() -> TraceFile {
    let (a, c) = (Some(0x1000u64), Some(0x3000u64));
    handmade(
        &[(a, 10), (None, 200), (c, 1500)],
        1500,
        &[(0x1000, "void A.a()"), (0x3000, "void C.c()")],
    )
}

/// Windows whose start falls exactly on a frame's end, start or the flush: a frame that only
/// touches the window is counted with no time, as in the brute force (`[lo, hi]` is closed), at
/// every edge of the hand-made trace plus a frame entered on the flush's very tick.
#[test]
fn chains_at_every_frame_edge_equal_brute_force() {
    let edge = edge_frames();
    for file in [by_hand(), edge] {
        let files = [file];
        let input = inputs(&files);
        let flush = files[0].header.reference_counter;
        let mut ticks: Vec<u64> = tree(&files[0])
            .frames
            .iter()
            .flat_map(|f| [f.start, f.end])
            .collect();
        ticks.sort_unstable();
        ticks.dedup();
        for t in ticks {
            // 1 MHz: the window reaching back to tick t is (flush - t) µs long.
            let last = Some((flush - t) * 1000);
            for rank in [Rank::Time, Rank::Depth] {
                let got = chains(&input, last, rank).unwrap();
                let want = ranked(brute_chains(&files, last), rank);
                assert_eq!(first_difference(&got, &want), None, "window from tick {t}");
            }
        }
    }
}

/// A frame entered on the flush's tick is in the window (with no time yet), and a frame that
/// ended exactly where the window begins is too; both are counted, neither gets time.
#[test]
fn frames_touching_the_window_are_counted_without_time() {
    let file = edge_frames();
    let input = inputs(std::slice::from_ref(&file));
    // The window is ticks 200..1500: A ends on its first tick, C begins on its last.
    let got = chains(&input, Some(1_300_000), Rank::Depth).unwrap();
    let shape: Vec<(String, u64, u64)> = got
        .iter()
        .map(|c| (c.methods.join(" > "), c.count, c.self_ns))
        .collect();
    assert_eq!(
        shape,
        [
            ("void A.a()".to_owned(), 1, 0),
            ("void C.c()".to_owned(), 1, 0)
        ]
    );
    // The summary leaves chains without time out.
    let s = summary(&input, 10, 1_300_000);
    assert!(s.chains.is_empty(), "{:?}", s.chains);
}
