//! Every writer's numbers against a reference computed without the writers: the format
//! crate's decoder and call tree (`hubble_format::build_tree`, the trusted base) and its
//! definition of wall-clock time (`TraceFile::counter_to_wall_ns`). Nothing here goes through
//! `stream`, `clock` or the trie of `folded`.
//!
//! * folded stacks: per call path, the self time of its frames (duration minus children's),
//!   exactly;
//! * flame-graph SVG: every rectangle's samples (`fg:w`, the title's count) are the sum of
//!   the reference values under its path, its width that share of the total;
//! * `.trace`: every record's thread, action, method and µs since the file's start;
//! * Chrome JSON: every event's phase, name and `ts` (ns, from its text) since the origin.

#[path = "common/dot_trace.rs"]
mod dot_trace;

use std::collections::{BTreeMap, HashMap};

use hubble_format::names::{self, display, BEFORE_WINDOW_SPLIT};
use hubble_format::{counter_to_ns, CallTree, Mode, TraceFile};
use hubble_testkit::first_difference;
use hubble_testkit::synth::{inputs, trace, tree, Spec};
use proptest::prelude::*;

fn wall(file: &TraceFile, counter: u64) -> u64 {
    u64::try_from(file.counter_to_wall_ns(counter)).unwrap()
}

/// A step: a frame begins (its method) or ends (the method it leaves).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Enter(Option<u64>),
    Exit(Option<u64>),
}

/// The frames of the call tree as enter/exit steps with their timer values: a frame ends
/// before the next frame at its depth or above begins.
fn tree_steps(tree: &CallTree) -> Vec<(u64, Ev)> {
    let mut out = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for (i, f) in tree.frames.iter().enumerate() {
        while let Some(&j) = open.last() {
            if tree.frames[j].depth < f.depth {
                break;
            }
            open.pop();
            out.push((tree.frames[j].end, Ev::Exit(tree.frames[j].method)));
        }
        open.push(i);
        out.push((f.start, Ev::Enter(f.method)));
    }
    while let Some(j) = open.pop() {
        out.push((tree.frames[j].end, Ev::Exit(tree.frames[j].method)));
    }
    out
}

/// The reference folded stacks: per path (thread root first when there are several files), the
/// ns of the ticks its frames spent outside their children, converted per file.
fn folded_reference(files: &[TraceFile]) -> BTreeMap<Vec<String>, u64> {
    let mut by_path: BTreeMap<Vec<String>, u64> = BTreeMap::new();
    for file in files {
        let tree = tree(file);
        let mut in_kids = vec![0u64; tree.frames.len()];
        for f in &tree.frames {
            if let Some(p) = f.parent {
                in_kids[p as usize] += f.duration();
            }
        }
        let mut ticks: HashMap<Vec<String>, u64> = HashMap::new();
        for (i, f) in tree.frames.iter().enumerate() {
            let mut path = Vec::new();
            let mut at = Some(i as u32);
            while let Some(j) = at {
                let g = &tree.frames[j as usize];
                path.push(display(&file.symbols, g.method).replace([';', '\n'], ":"));
                at = g.parent;
            }
            if files.len() > 1 {
                let h = &file.header;
                path.push(format!("{} (tid {})", h.thread_name, h.tid));
            }
            path.reverse();
            *ticks.entry(path).or_default() += f.duration() - in_kids[i];
        }
        for (path, t) in ticks {
            *by_path.entry(path).or_default() += counter_to_ns(t, file.header.timer_hz);
        }
    }
    by_path.retain(|_, v| *v > 0);
    by_path
}

/// One to three threads: wrapped or not, 64- or 32-bit, timer rates that do and do not divide
/// 10⁹, on wall clocks a few ms apart so that they interleave.
fn files(seed: u64, n: usize, laps: f64, rate: usize, unresolved_every: usize) -> Vec<TraceFile> {
    let rates = [
        19_200_000u64,
        24_000_000,
        1_000_000_000,
        62_500_000,
        1_000_000,
    ];
    (0..n)
        .map(|i| {
            let k = i as u64;
            trace(&Spec {
                mode: if (seed + k) % 3 == 0 {
                    Mode::Bits32
                } else {
                    Mode::Bits64
                },
                ring_slots: 1200 + 700 * i,
                laps: laps + 0.5 * i as f64,
                seed: seed * 3 + k,
                methods: 60,
                unresolved_every,
                timer_hz: rates[(rate + i) % rates.len()],
                start_counter: (1 << 33) * (k + 1),
                wall_clock_ns: 1_700_000_000_000_000_000 + (seed % 5 + k) * 1_000_000,
                pid: 40 + (i as u32) / 2,
                tid: 100 + i as u32,
                thread_name: format!("thread{i}"),
                ..Spec::default()
            })
        })
        .collect()
}

/// The paths whose values differ, with (got, want), for a failure message of a useful size.
fn differences(
    got: &BTreeMap<Vec<String>, u64>,
    want: &BTreeMap<Vec<String>, u64>,
) -> Vec<(String, Option<u64>, Option<u64>)> {
    let mut keys: Vec<&Vec<String>> = got.keys().chain(want.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| got.get(*k) != want.get(*k))
        .map(|k| (k.join(";"), got.get(k).copied(), want.get(k).copied()))
        .collect()
}

fn parse_folded(lines: &[String]) -> BTreeMap<Vec<String>, u64> {
    let mut out = BTreeMap::new();
    for line in lines {
        let (stack, value) = line.rsplit_once(' ').unwrap();
        let path: Vec<String> = stack.split(';').map(str::to_owned).collect();
        assert!(out.insert(path, value.parse().unwrap()).is_none(), "{line}");
    }
    out
}

/// A rectangle of the flame graph.
#[derive(Debug)]
struct Rect {
    title: String,
    y: u64,
    x_pct: f64,
    width_pct: f64,
    x: u64,
    w: u64,
}

fn attr<'a>(tag: &'a str, name: &str) -> &'a str {
    let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    &tag[at..at + tag[at..].find('"').unwrap()]
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// Checks the SVG of `files` against the reference folded values.
fn check_svg(files: &[TraceFile]) {
    let reference = folded_reference(files);
    let total: u64 = reference.values().sum();
    // Every prefix of a path holds the values of the paths under it.
    let mut under: HashMap<Vec<String>, u64> = HashMap::new();
    for (path, v) in &reference {
        for d in 1..=path.len() {
            *under.entry(path[..d].to_vec()).or_default() += v;
        }
    }
    let mut out = Vec::new();
    hubble_export::folded::write_svg(&inputs(files), "t", &mut out).unwrap();
    let svg = String::from_utf8(out).unwrap();
    let frames_tag = &svg[svg.find("<svg id=\"frames\"").unwrap()..];
    assert_eq!(
        attr(frames_tag, "total_samples"),
        total.to_string(),
        "total samples: the flame graph's, the reference's"
    );
    let mut rects = Vec::new();
    for g in svg.split("<g><title>").skip(1) {
        let (title, rest) = g.split_once("</title>").unwrap();
        let tag = &rest[rest.find("<rect").unwrap()..];
        let tag = &tag[..tag.find("/>").unwrap()];
        let pct = |name| {
            attr(tag, name)
                .strip_suffix('%')
                .unwrap()
                .parse::<f64>()
                .unwrap()
        };
        rects.push(Rect {
            title: unescape(title),
            y: attr(tag, "y").parse().unwrap(),
            x_pct: pct("x"),
            width_pct: pct("width"),
            x: attr(tag, "fg:x").parse().unwrap(),
            w: attr(tag, "fg:w").parse().unwrap(),
        });
    }
    // Depth 0 (the root, "all") is drawn lowest: the largest y.
    let mut ys: Vec<u64> = rects.iter().map(|r| r.y).collect();
    ys.sort_unstable_by(|a, b| b.cmp(a));
    ys.dedup();
    let depth = |r: &Rect| ys.iter().position(|y| *y == r.y).unwrap();
    let mut paths: Vec<Option<Vec<String>>> = vec![None; rects.len()];
    let mut order: Vec<usize> = (0..rects.len()).collect();
    order.sort_by_key(|&i| depth(&rects[i]));
    let mut drawn = 0;
    for &i in &order {
        let r = &rects[i];
        // Widths and offsets are the samples' share of the total (printed to 4 decimals).
        let share = |n: u64| n as f64 * 100.0 / total as f64;
        assert!((r.width_pct - share(r.w)).abs() < 6e-5, "{r:?}");
        assert!((r.x_pct - share(r.x)).abs() < 6e-5, "{r:?}");
        let (name, count) = r.title.rsplit_once(" (").unwrap();
        let count: u64 = count
            .split_once(' ')
            .unwrap()
            .0
            .replace(',', "")
            .parse()
            .unwrap();
        assert_eq!(count, r.w, "{r:?}");
        if depth(r) == 0 {
            assert_eq!((name, r.x, r.w), ("all", 0, total));
            paths[i] = Some(Vec::new());
            continue;
        }
        // The parent: the rectangle one level down that spans this one.
        let parent = order
            .iter()
            .copied()
            .find(|&j| {
                depth(&rects[j]) + 1 == depth(r)
                    && rects[j].x <= r.x
                    && r.x + r.w <= rects[j].x + rects[j].w
            })
            .unwrap();
        let mut path = paths[parent].clone().unwrap();
        path.push(name.to_owned());
        assert_eq!(Some(&r.w), under.get(&path), "{path:?}");
        paths[i] = Some(path);
        drawn += 1;
    }
    // Each path is one rectangle (no name here is a prefix of another, so the sorted lines keep
    // a path's stacks together); only those under inferno's minimum width (0.01 %) are left out.
    let visible = under
        .values()
        .filter(|v| **v as f64 >= total as f64 * 1e-4)
        .count();
    assert!(
        drawn >= visible && drawn <= under.len(),
        "{drawn} of {visible}"
    );
}

/// What [`files`] makes a case of: a seed, `n` files, the laps of their rings, their timer rate.
fn case(n: std::ops::Range<usize>) -> impl Strategy<Value = (u64, usize, f64, usize)> {
    (1u64..1_000_000, n, 0.2f64..2.5, 0usize..5)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Folded values are the call tree's per-path self time, exactly.
    #[test]
    fn folded_values_are_per_path_self_time((seed, n, laps, rate) in case(1..4)) {
        let files = files(seed, n, laps, rate, 5);
        let got = hubble_export::folded::folded_lines(&inputs(&files)).unwrap();
        let mut sorted = got.clone();
        sorted.sort();
        prop_assert_eq!(&got, &sorted);
        let diff = differences(&parse_folded(&got), &folded_reference(&files));
        prop_assert!(
            diff.is_empty(),
            "{} of {} paths differ (path, folded, reference); first: {:?}",
            diff.len(),
            got.len(),
            &diff[..diff.len().min(3)]
        );
    }

    /// Every rectangle of the flame graph is as wide as the reference values under its path.
    #[test]
    fn svg_widths_are_the_folded_values((seed, n, laps, rate) in case(1..3)) {
        check_svg(&files(seed, n, laps, rate, 0));
    }

    /// `.trace` records: per thread, the call tree's steps with their µs since the start.
    #[test]
    fn dot_trace_times_are_the_trees((seed, n, laps, rate) in case(1..4)) {
        check_dot_trace(&files(seed, n, laps, rate, 5));
    }

    /// Chrome events: per thread, the call tree's steps with their ns since the origin.
    #[test]
    fn chrome_times_are_the_trees((seed, n, laps, rate) in case(1..4)) {
        check_chrome(&files(seed, n, laps, rate, 5));
    }
}

/// Per file, the reference steps on the wall clock, and the earliest of them all.
fn wall_steps(files: &[TraceFile]) -> (Vec<Vec<(u64, Ev)>>, u64) {
    let steps: Vec<Vec<(u64, Ev)>> = files
        .iter()
        .map(|f| {
            tree_steps(&tree(f))
                .into_iter()
                .map(|(c, e)| (wall(f, c), e))
                .collect()
        })
        .collect();
    let origin = steps.iter().filter_map(|s| s.first()).map(|s| s.0).min();
    (steps, origin.unwrap())
}

/// A `.trace` record as read back: action, the method's (class, method, signature), µs.
type TraceRecord = (u32, dot_trace::Method, u32);

fn check_dot_trace(files: &[TraceFile]) {
    let (steps, origin) = wall_steps(files);
    let mut out = Vec::new();
    hubble_export::android_trace::write(&inputs(files), &mut out).unwrap();
    let read = dot_trace::read(&out);
    let start_us = origin / 1000;
    let flush_us = files
        .iter()
        .map(|f| wall(f, f.header.reference_counter))
        .max()
        .unwrap()
        / 1000;
    assert!(read
        .key
        .contains(&format!("\nelapsed-time-usec={}\n", flush_us - start_us)));
    let threads: HashMap<u16, String> = read.threads.into_iter().collect();
    assert_eq!(read.start_us, start_us);
    let mut got: HashMap<u16, Vec<TraceRecord>> = HashMap::new();
    let mut last = 0;
    for (tid, action, method, us) in read.records {
        assert!(us >= last, "records in time order");
        last = us;
        got.entry(tid).or_default().push((action, method, us));
    }
    let split = |m: Option<u64>, file: &TraceFile| match m {
        None => (
            BEFORE_WINDOW_SPLIT.0.to_owned(),
            BEFORE_WINDOW_SPLIT.1.to_owned(),
            "()".to_owned(),
        ),
        Some(_) => {
            let s = names::split(&display(&file.symbols, m));
            (s.class, s.method, s.signature)
        }
    };
    assert_eq!(got.len(), files.len());
    for (file, steps) in files.iter().zip(&steps) {
        // Thread ids below 32768 and distinct are kept.
        let tid = file.header.tid as u16;
        assert_eq!(threads[&tid], file.header.thread_name);
        let want: Vec<TraceRecord> = steps
            .iter()
            .map(|&(ns, e)| {
                let (action, m) = match e {
                    Ev::Enter(m) => (0, m),
                    Ev::Exit(m) => (1, m),
                };
                (action, split(m, file), (ns / 1000 - start_us) as u32)
            })
            .collect();
        let d = first_difference(&got[&tid], &want);
        assert!(d.is_none(), "tid {tid}: {}", d.unwrap_or_default());
    }
}

/// A Chrome event as read back: phase, name (begins only), ns since the origin.
type ChromeEvent = (String, Option<String>, u64);

fn check_chrome(files: &[TraceFile]) {
    let (steps, origin) = wall_steps(files);
    let mut out = Vec::new();
    hubble_export::chrome::write(&inputs(files), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        doc["otherData"]["wall_clock_origin_ns"],
        origin.to_string().as_str()
    );
    let mut got: HashMap<(u64, u64), Vec<ChromeEvent>> = HashMap::new();
    let mut last = 0;
    // One event a line; `ts` is read from its text, not as a float.
    for line in text.lines().filter(|l| l.starts_with("{\"ph\":\"")) {
        let event: serde_json::Value = serde_json::from_str(line.trim_end_matches(',')).unwrap();
        let ph = event["ph"].as_str().unwrap().to_owned();
        if ph == "M" {
            continue;
        }
        let ts = &line[line.find("\"ts\":").unwrap() + 5..line.rfind('}').unwrap()];
        let (us, frac) = ts.split_once('.').unwrap();
        assert_eq!(frac.len(), 3, "{line}");
        let ns = us.parse::<u64>().unwrap() * 1000 + frac.parse::<u64>().unwrap();
        assert!(ns >= last, "events in time order");
        last = ns;
        let key = (
            event["pid"].as_u64().unwrap(),
            event["tid"].as_u64().unwrap(),
        );
        let name = event.get("name").map(|n| n.as_str().unwrap().to_owned());
        got.entry(key).or_default().push((ph, name, ns));
    }
    assert_eq!(got.len(), files.len());
    for (file, steps) in files.iter().zip(&steps) {
        let want: Vec<ChromeEvent> = steps
            .iter()
            .map(|&(ns, e)| match e {
                Ev::Enter(m) => (
                    "B".to_owned(),
                    Some(display(&file.symbols, m).into_owned()),
                    ns - origin,
                ),
                Ev::Exit(_) => ("E".to_owned(), None, ns - origin),
            })
            .collect();
        let h = &file.header;
        let d = first_difference(&got[&(u64::from(h.pid), u64::from(h.tid))], &want);
        assert!(d.is_none(), "tid {}: {}", h.tid, d.unwrap_or_default());
    }
}

/// The references see the window edges: frames cut at the start and running at the flush.
#[test]
fn the_references_cover_both_edges_and_several_threads() {
    let files = files(7, 3, 1.7, 0, 5);
    let trees: Vec<CallTree> = files.iter().map(tree).collect();
    assert!(trees
        .iter()
        .any(|t| t.frames.iter().any(|f| f.begins_before_window)));
    assert!(trees.iter().all(|t| t.frames.iter().any(|f| f.open_at_end)));
    check_svg(&files);
    check_dot_trace(&files);
    check_chrome(&files);
}
