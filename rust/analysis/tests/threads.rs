//! The analyses over a version 4 file (every thread, runs with gaps), against references the
//! test computes from its model of the pool (`format/tests/common/pool_scenario.rs`): the
//! frames of the records each thread wrote and the pool kept.

mod common;
#[path = "../../format/tests/common/pool_scenario.rs"]
mod scenario;

use std::collections::BTreeMap;

use hubble_analysis::chains::{chains, chains_before, Rank};
use hubble_analysis::tasks::{tasks_threads, TaskStats};
use hubble_analysis::top::top;
use hubble_analysis::Input;
use hubble_format::RunFile;
use scenario::{frames, ModelFrame, Scenario};

struct Case {
    s: Scenario,
    runs: Vec<RunFile>,
    /// Per thread, its frames.
    frames: BTreeMap<u32, Vec<ModelFrame>>,
}

impl Case {
    fn inputs(&self) -> Vec<Input<'_>> {
        scenario::inputs(&self.runs)
    }
    fn ns(&self, ticks: u64) -> u64 {
        (u128::from(ticks) * 1_000_000_000 / u128::from(self.s.timer_hz)) as u64
    }
}

fn cases() -> Vec<Case> {
    scenario::sampled()
        .into_iter()
        .map(|(s, runs)| {
            let frames = s
                .thread_steps()
                .iter()
                .map(|(tid, steps)| (*tid, frames(steps)))
                .collect();
            Case { s, runs, frames }
        })
        .collect()
}

// `top` adds every thread's runs up: per method, its frames' calls, self time and (outermost
// activations only) inclusive time, ticks converted to ns per run as each run has its clock.
#[test]
fn top_covers_every_thread_and_run() {
    for c in cases() {
        let mut ticks: BTreeMap<(String, u32, usize), (u64, u64, u64)> = BTreeMap::new();
        for (tid, frames) in &c.frames {
            for f in frames {
                let e = ticks
                    .entry((c.s.frame_name(f.method), *tid, f.run))
                    .or_default();
                e.0 += 1;
                e.1 += f.self_ticks();
                if !f.ancestors.contains(&f.method) {
                    e.2 += f.ticks();
                }
            }
        }
        let want = common::top_by_name(
            ticks
                .into_iter()
                .map(|((name, _, _), (calls, s, i))| (name, calls, c.ns(s), c.ns(i))),
        );
        assert_eq!(top(&c.inputs()).unwrap(), want);
    }
}

// `chains` in the last 200 ms before the flush: every thread idled 2^33 ticks or more before
// it, so only the frames still open at the flush (in each thread's newest run) are in the
// window: the innermost holds the thread for the whole window, its ancestors for nothing.
// An older run ends long before the flush; measured from its own end (plain `chains`, which
// takes each input's reference as its flush) it would add chains that were not running.
#[test]
fn chains_use_the_flush_for_every_run() {
    let window_ns = 200_000_000u64;
    let mut older_runs_differ = false;
    for c in cases() {
        let flush = c.s.reference;
        let window_ticks =
            (u128::from(window_ns) * u128::from(c.s.timer_hz) / 1_000_000_000) as u64;
        let lo = flush - window_ticks;
        let mut want: BTreeMap<Vec<String>, (u64, u64)> = BTreeMap::new();
        for frames in c.frames.values() {
            for f in frames.iter().filter(|f| f.end >= lo) {
                assert_eq!(
                    f.end, flush,
                    "only frames open at the flush reach the window"
                );
                let mut path: Vec<String> =
                    f.ancestors.iter().map(|m| c.s.frame_name(*m)).collect();
                path.push(c.s.frame_name(f.method));
                let innermost = !frames.iter().any(|g| {
                    g.end == flush
                        && g.ancestors.len() == f.ancestors.len() + 1
                        && g.start >= f.start
                });
                let e = want.entry(path).or_default();
                e.0 += 1;
                e.1 += if innermost { c.ns(window_ticks) } else { 0 };
            }
        }
        let flushes = vec![flush; c.runs.len()];
        let got = chains_before(&c.inputs(), &flushes, Some(window_ns), Rank::Time).unwrap();
        let got: BTreeMap<Vec<String>, (u64, u64)> = got
            .into_iter()
            .map(|ch| (ch.methods, (ch.count, ch.self_ns)))
            .collect();
        assert_eq!(got, want);
        let plain: BTreeMap<Vec<String>, (u64, u64)> =
            chains(&c.inputs(), Some(window_ns), Rank::Time)
                .unwrap()
                .into_iter()
                .map(|ch| (ch.methods, (ch.count, ch.self_ns)))
                .collect();
        older_runs_differ |= plain != want;
    }
    assert!(
        older_runs_differ,
        "no scenario shows why the flush must be given"
    );
}

// `tasks`: one report per thread, whatever its runs: per (dispatcher, task) the executions of
// the dispatcher frames (the task is the longest direct child, the first of equals), and the
// scheduling calls.
#[test]
fn tasks_report_each_thread_once() {
    let mut executions = 0;
    for c in cases() {
        let threads: Vec<usize> = c.runs.iter().map(|r| r.section).collect();
        let got = tasks_threads(&c.inputs(), &threads).unwrap();
        assert_eq!(
            got.iter()
                .map(|t| (t.tid, t.thread.clone()))
                .collect::<Vec<_>>(),
            c.frames
                .keys()
                .map(|t| (*t, c.s.thread_name(*t)))
                .collect::<Vec<_>>()
        );
        for t in &got {
            let mut want: BTreeMap<(String, String), TaskStats> = BTreeMap::new();
            let mut scheduled: BTreeMap<String, u64> = BTreeMap::new();
            for f in &c.frames[&t.tid] {
                let name = c.s.frame_name(f.method);
                if name.contains("ThreadPoolExecutor.execute(") {
                    *scheduled.entry("Executor.execute".to_owned()).or_default() += 1;
                }
                if !name.contains("android.os.Handler.dispatchMessage(") {
                    continue;
                }
                let mut task = f.method;
                let mut best = None;
                for &(m, ticks) in &f.children {
                    if best.map_or(true, |b| ticks > b) {
                        best = Some(ticks);
                        task = m;
                    }
                }
                let ns = c.ns(f.ticks());
                let task = c.s.frame_name(task);
                let e = want
                    .entry((name.clone(), task.clone()))
                    .or_insert(TaskStats {
                        task,
                        dispatcher: name,
                        count: 0,
                        total_ns: 0,
                        max_ns: 0,
                        over_16ms: 0,
                    });
                e.count += 1;
                e.total_ns += ns;
                e.max_ns = e.max_ns.max(ns);
                e.over_16ms += u64::from(ns > 16_000_000);
            }
            let mut want: Vec<TaskStats> = want.into_values().collect();
            want.sort_by(|a, b| {
                b.total_ns
                    .cmp(&a.total_ns)
                    .then_with(|| a.task.cmp(&b.task))
            });
            executions += want.len();
            assert_eq!(t.executions, want, "tid {}", t.tid);
            assert_eq!(t.scheduled, scheduled, "tid {}", t.tid);
        }
    }
    assert!(executions > 0);
}
