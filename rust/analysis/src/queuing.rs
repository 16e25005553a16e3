//! Queuing time, execution time, pool capacity and queue length of asynchronous tasks
//! (DiagDroid, FSE '16, §4–5), from the task records the runtime writes
//! (`docs/tasks.md`).
//!
//! A submitting method (`ThreadPoolExecutor.execute`, `MessageQueue.enqueueMessage`,
//! `Thread.start`) writes a *submit* record right after its entry; the method that begins the
//! task (its `run()`, `Handler.dispatchMessage`) writes a *begin* record, and the task runs
//! until that frame returns. Records name the task and its queue by identity hash only. Here:
//!
//! * a begin is matched to the oldest unmatched submission of the same task identity before it,
//!   on any thread of the same process (identities are per process; a recycled `Message` is
//!   submitted and begun again later: first in, first out); the queue is the submission's;
//! * **queuing time** = begin − submit; **execution time** = the begin frame's exit − begin;
//!   a task still queued or running at the flush has the time up to the flush, marked so;
//! * **pool capacity** of a queue = the most of its tasks that ran at once in the trace (a
//!   lower bound that is exact once the pool was saturated, which is when tasks queue at all);
//! * **queue length** of a task = how many completions of tasks ahead of it (of its queue,
//!   submitted before it, unfinished at its submission) it had to wait for:
//!   max(0, unfinished ahead − capacity + 1) (DiagDroid Def. 5 and Fig. 4: "a queuing length L
//!   indicates that the task should wait for the completion of other L tasks");
//! * tasks are grouped by their **submitting code site**, the innermost caller of the
//!   submitting method outside the framework ([`FRAMEWORK`]); a group is anomalous when its
//!   longest queuing or execution time exceeds τ (500 ms by default), and anomalous groups
//!   come first, longest first. For its tasks queued τ or longer, a group lists the sites of
//!   the tasks they waited behind (DiagDroid's "runtime dependency").

use std::collections::{BTreeMap, HashMap, VecDeque};

use hubble_format::slot::TaskKind;
use hubble_format::{counter_to_ns, decode_events, EventKind, RingView};
use serde::Serialize;

use crate::signatures::glob;
use crate::{Input, Result};

/// DiagDroid's threshold τ: 500 ms.
pub const DEFAULT_TAU_NS: u64 = 500_000_000;

/// Frames of the framework's task machinery, skipped when looking for the submitting site.
pub const FRAMEWORK: &[&str] = &[
    "* java.util.concurrent.*",
    "* android.os.Handler.*",
    "* android.os.MessageQueue.*",
    "* android.os.AsyncTask.*",
    "* android.os.AsyncTask$*",
    "* java.lang.Thread.*",
    "* kotlinx.coroutines.*",
    "* kotlin.coroutines.*",
];

/// The site reported when no caller outside the framework is in the window.
pub const UNKNOWN_SITE: &str = "(site before the window)";

/// One task's life, as far as the trace shows it.
#[derive(Clone, Debug, Default, Serialize, PartialEq, Eq)]
pub struct Task {
    /// The process.
    pub pid: u32,
    /// The submitting code site, or [`UNKNOWN_SITE`]; `None` when the submission is not in the
    /// trace (the task was begun, its submission is older than the window).
    pub site: Option<String>,
    /// The task's identity hash.
    pub task: u32,
    /// Its queue's identity hash (0: none, as for `Thread.start`, or unknown).
    pub queue: u32,
    /// The submitting thread.
    pub submit_tid: Option<u32>,
    /// The thread that ran it.
    pub run_tid: Option<u32>,
    /// The method that began it (`run()`, `dispatchMessage`).
    pub method: Option<String>,
    /// Timer value of the submission.
    pub submitted: Option<u64>,
    /// Timer value of the begin.
    pub begun: Option<u64>,
    /// Timer value of the end (the begin frame's exit).
    pub ended: Option<u64>,
    /// Queuing time, ns (up to the flush when `still_queued`).
    pub queued_ns: Option<u64>,
    /// Submitted and not begun at the flush.
    pub still_queued: bool,
    /// Execution time, ns (up to the flush when `running`).
    pub exec_ns: Option<u64>,
    /// Begun and not ended at the flush.
    pub running: bool,
    /// Completions of tasks ahead it waited for (see the module's text); `None` without a
    /// submission or a queue.
    pub queue_length: Option<u64>,
}

/// One queue (execution unit).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Queue {
    /// The process.
    pub pid: u32,
    /// Identity hash.
    pub queue: u32,
    /// The most of its tasks that ran at once.
    pub capacity: u64,
    /// Its tasks in the trace.
    pub tasks: u64,
}

/// The tasks of one submitting site.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Group {
    /// The submitting code site.
    pub site: String,
    /// Tasks submitted from it.
    pub tasks: u64,
    /// Longest queuing time, ns (DiagDroid's M_q).
    pub max_queued_ns: u64,
    /// Longest execution time, ns (M_e).
    pub max_exec_ns: u64,
    /// Capacity of the queues its tasks went to (the largest; 0 without a queue).
    pub capacity: u64,
    /// Whether M_q or M_e exceeds τ.
    pub anomalous: bool,
    /// Its tasks queued τ or longer.
    pub queued_over_tau: u64,
    /// Their mean queue length.
    pub mean_queue_length: f64,
    /// Mean execution time of the tasks they waited behind, ns.
    pub mean_exec_ahead_ns: u64,
    /// Sites of the tasks they waited behind, with counts (runtime dependency).
    pub behind: BTreeMap<String, u64>,
}

/// The report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Report {
    /// τ, ns.
    pub tau_ns: u64,
    /// Groups, anomalous first, longest first.
    pub groups: Vec<Group>,
    /// Queues by process and identity.
    pub queues: Vec<Queue>,
    /// Every task, by submission (then begin) time.
    pub tasks: Vec<Task>,
}

struct Submission {
    pid: u32,
    counter: u64,
    task: u32,
    queue: u32,
    tid: u32,
    site: String,
    hz: u64,
}

struct Begin {
    pid: u32,
    counter: u64,
    task: u32,
    queue: u32,
    tid: u32,
    method: Option<u64>,
    input: usize,
    end: Option<u64>,
    hz: u64,
}

/// The report for `inputs` (every traced thread of a flush, `flushes[i]` the counter when input
/// `i` was cut), τ = `tau_ns`. Inputs of several processes are told apart by their pid: a task
/// is matched, and a queue counted, within its process only.
pub fn queuing(inputs: &[Input<'_>], flushes: &[u64], tau_ns: u64) -> Result<Report> {
    if flushes.len() != inputs.len() {
        return Err(crate::AnalysisError::Unsupported(format!(
            "{} flush counters for {} inputs",
            flushes.len(),
            inputs.len()
        )));
    }
    let mut submissions = Vec::new();
    let mut begins = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        scan(i, input, &mut submissions, &mut begins)?;
    }
    // Per process, its last flush: where tasks still queued or running are cut.
    let mut flush: BTreeMap<u32, u64> = BTreeMap::new();
    for (input, &f) in inputs.iter().zip(flushes) {
        let e = flush.entry(input.file.header.pid).or_default();
        *e = (*e).max(f);
    }
    let mut tasks = pair(&submissions, &begins, inputs, &flush);
    let members = by_queue(&tasks);
    let queues = capacities(&tasks, &members, &flush);
    lengths(&mut tasks, &members, &queues);
    let groups = group(&tasks, &members, &queues, tau_ns);
    Ok(Report {
        tau_ns,
        groups,
        queues: queues.into_values().collect(),
        tasks,
    })
}

/// Submissions and begins of one input, with their frames.
fn scan(
    index: usize,
    input: &Input<'_>,
    submissions: &mut Vec<Submission>,
    begins: &mut Vec<Begin>,
) -> Result<()> {
    let header = &input.file.header;
    let decoded = decode_events(
        &RingView::linear(&input.file.window),
        header.mode,
        header.time_base(),
    )
    .map_err(|source| hubble_format::stream::InputError {
        name: input.name.to_owned(),
        source,
    })?;
    let symbols = &input.file.symbols;
    let framework = |m: Option<u64>| {
        let name = hubble_format::names::display(symbols, m);
        FRAMEWORK.iter().any(|g| glob(g, &name))
    };
    // Open frames of the window: the method and the begin it holds, if any.
    let mut stack: Vec<(Option<u64>, Option<usize>)> = Vec::new();
    // Executions running on this thread, by task: the begin (BeginUntilEnd's wait for their End).
    let mut running: HashMap<u32, usize> = HashMap::new();
    // A BeginUntilEnd's task is named by the next method entered at its frame's depth (after
    // `beforeExecute` returns, `runWorker` calls the task's `run()`): (depth, begin).
    let mut name_next: Option<(usize, usize)> = None;
    for e in &decoded.events {
        match e.kind {
            EventKind::Entry { method } => {
                if let Some((depth, b)) = name_next {
                    match stack.len().cmp(&depth) {
                        std::cmp::Ordering::Equal => {
                            begins[b].method = Some(method);
                            name_next = None;
                        }
                        // The worker loop returned first: the task keeps its writer's name.
                        std::cmp::Ordering::Less => name_next = None,
                        std::cmp::Ordering::Greater => {}
                    }
                }
                stack.push((Some(method), None));
            }
            EventKind::Exit => {
                if let Some((_, Some(b))) = stack.pop() {
                    begins[b].end = Some(e.counter);
                    running.remove(&begins[b].task);
                }
            }
            EventKind::Start => {
                stack.clear();
                running.clear();
                name_next = None;
            }
            EventKind::Task {
                kind: TaskKind::End,
                task,
                ..
            } => {
                if let Some(b) = running.remove(&task) {
                    begins[b].end = Some(e.counter);
                }
            }
            EventKind::Task {
                kind: TaskKind::Submit,
                task,
                queue,
            } => {
                // The submitting method is the innermost frame; its callers are the site.
                let callers = &stack[..stack.len().saturating_sub(1)];
                let site = callers
                    .iter()
                    .rev()
                    .find(|(m, _)| !framework(*m))
                    .map_or(UNKNOWN_SITE.to_owned(), |(m, _)| {
                        hubble_format::names::display(symbols, *m).into_owned()
                    });
                submissions.push(Submission {
                    pid: header.pid,
                    counter: e.counter,
                    task,
                    queue,
                    tid: header.tid,
                    site,
                    hz: header.timer_hz,
                });
            }
            EventKind::Task {
                kind: kind @ (TaskKind::Begin | TaskKind::BeginUntilEnd),
                task,
                queue,
            } => {
                // A task already running here begins once: `FutureTask.run` inside the
                // execution `beforeExecute` began is the same one.
                if running.contains_key(&task) {
                    continue;
                }
                running.insert(task, begins.len());
                // A Begin's frame is the innermost; one entered before the window (the record
                // came right after an entry the window lost) gets a frame here, so that its
                // exit, which would otherwise close nothing, ends the task.
                if stack.is_empty() {
                    stack.push((None, None));
                }
                let depth = stack.len() - 1;
                let top = stack.last_mut().expect("not empty");
                if kind == TaskKind::Begin {
                    top.1 = Some(begins.len());
                } else {
                    name_next = Some((depth, begins.len()));
                }
                begins.push(Begin {
                    pid: header.pid,
                    counter: e.counter,
                    task,
                    queue,
                    tid: header.tid,
                    method: top.0,
                    input: index,
                    end: None,
                    hz: header.timer_hz,
                });
            }
        }
    }
    Ok(())
}

/// Matches begins to submissions (oldest unmatched submission of the same identity before the
/// begin, across threads), in one pass over both in time order.
fn pair(
    submissions: &[Submission],
    begins: &[Begin],
    inputs: &[Input<'_>],
    flush: &BTreeMap<u32, u64>,
) -> Vec<Task> {
    // Time order; at equal counters a submission comes first.
    let mut order: Vec<(u64, bool, usize)> = submissions
        .iter()
        .enumerate()
        .map(|(i, s)| (s.counter, false, i))
        .chain(begins.iter().enumerate().map(|(i, b)| (b.counter, true, i)))
        .collect();
    order.sort_unstable();
    let mut waiting: HashMap<(u32, u32), VecDeque<usize>> = HashMap::new();
    let mut begun_by: Vec<Option<usize>> = vec![None; submissions.len()];
    let mut unsubmitted = Vec::new();
    for (_, is_begin, i) in order {
        if !is_begin {
            let s = &submissions[i];
            waiting.entry((s.pid, s.task)).or_default().push_back(i);
            continue;
        }
        let b = &begins[i];
        match waiting
            .get_mut(&(b.pid, b.task))
            .and_then(VecDeque::pop_front)
        {
            Some(s) => begun_by[s] = Some(i),
            None => unsubmitted.push(i),
        }
    }
    let ns = |ticks: u64, hz: u64| counter_to_ns(ticks, hz.max(1));
    let run_part = |t: &mut Task, b: &Begin| {
        t.run_tid = Some(b.tid);
        t.method = Some(
            hubble_format::names::display(&inputs[b.input].file.symbols, b.method).into_owned(),
        );
        t.begun = Some(b.counter);
        t.ended = b.end;
        t.running = b.end.is_none();
        let cut = flush.get(&b.pid).copied().unwrap_or(b.counter);
        t.exec_ns = Some(ns(b.end.unwrap_or(cut).saturating_sub(b.counter), b.hz));
    };
    let mut out = Vec::new();
    for (s, b) in submissions.iter().zip(&begun_by) {
        let mut t = Task {
            pid: s.pid,
            site: Some(s.site.clone()),
            task: s.task,
            queue: s.queue,
            submit_tid: Some(s.tid),
            submitted: Some(s.counter),
            still_queued: b.is_none(),
            ..Task::default()
        };
        let cut = flush.get(&s.pid).copied().unwrap_or(s.counter);
        let start = b.map_or(cut, |b| begins[b].counter);
        t.queued_ns = Some(ns(start.saturating_sub(s.counter), s.hz));
        if let Some(b) = b {
            run_part(&mut t, &begins[*b]);
        }
        out.push(t);
    }
    for b in unsubmitted {
        let b = &begins[b];
        let mut t = Task {
            pid: b.pid,
            task: b.task,
            queue: b.queue,
            ..Task::default()
        };
        run_part(&mut t, b);
        out.push(t);
    }
    out.sort_by_key(|t| (t.pid, t.submitted.or(t.begun), t.begun));
    out
}

/// Each queue's capacity: the most of its tasks running at once (begin to end, or to the flush).
fn capacities(
    tasks: &[Task],
    members: &BTreeMap<(u32, u32), Vec<usize>>,
    flush: &BTreeMap<u32, u64>,
) -> BTreeMap<(u32, u32), Queue> {
    members
        .iter()
        .map(|(&(pid, queue), members)| {
            let mut edges: Vec<(u64, i64)> = Vec::new();
            for t in members.iter().map(|&i| &tasks[i]) {
                if let Some(b) = t.begun {
                    // An end sorts before a begin at the same counter: one task handing its
                    // worker to the next is not two at once.
                    edges.push((b, 1));
                    let cut = flush.get(&pid).copied().unwrap_or(b);
                    edges.push((t.ended.unwrap_or(cut), -1));
                }
            }
            edges.sort_unstable();
            let (mut now, mut most) = (0i64, 0i64);
            for (_, d) in edges {
                now += d;
                most = most.max(now);
            }
            let q = Queue {
                pid,
                queue,
                capacity: most as u64,
                tasks: members.len() as u64,
            };
            ((pid, queue), q)
        })
        .collect()
}

/// Whether `l` is unfinished at `t`: not ended by then (running, queued, or ended later).
fn unfinished_at(l: &Task, t: u64) -> bool {
    l.ended.map_or(true, |end| end > t)
}

/// Tasks of each queue (with a queue), by process and identity.
fn by_queue(tasks: &[Task]) -> BTreeMap<(u32, u32), Vec<usize>> {
    let mut out: BTreeMap<(u32, u32), Vec<usize>> = BTreeMap::new();
    for (i, t) in tasks.iter().enumerate() {
        if t.queue != 0 {
            out.entry((t.pid, t.queue)).or_default().push(i);
        }
    }
    out
}

/// When a task joined its queue: its submission, or without one in the trace its begin.
fn joined(t: &Task) -> Option<u64> {
    t.submitted.or(t.begun)
}

/// Each submitted task's queue length: completions of tasks ahead it had to wait for, from how
/// many tasks ahead of it were unfinished at its submission. In O(n log n) per queue (a main
/// thread's looper runs tens of thousands of messages in a trace): the tasks that joined before
/// `s`, less those of them that ended by `s`. A task ends after it joins, so every task that
/// ended by `s` joined by `s`, and before `s` unless it joined and ended at `s` itself.
fn lengths(
    tasks: &mut [Task],
    members: &BTreeMap<(u32, u32), Vec<usize>>,
    queues: &BTreeMap<(u32, u32), Queue>,
) {
    for (key, members) in members {
        let Some(q) = queues.get(key) else { continue };
        let mut joins: Vec<u64> = members.iter().filter_map(|&j| joined(&tasks[j])).collect();
        let mut ends: Vec<u64> = members.iter().filter_map(|&j| tasks[j].ended).collect();
        let mut instant: HashMap<u64, u64> = HashMap::new();
        for &j in members {
            if let (Some(a), Some(e)) = (joined(&tasks[j]), tasks[j].ended) {
                if a == e {
                    *instant.entry(a).or_default() += 1;
                }
            }
        }
        joins.sort_unstable();
        ends.sort_unstable();
        for &i in members {
            let Some(s) = tasks[i].submitted else {
                continue;
            };
            let before = joins.partition_point(|&a| a < s) as u64;
            let ended = ends.partition_point(|&e| e <= s) as u64 - instant.get(&s).unwrap_or(&0);
            let ahead = before - ended;
            tasks[i].queue_length = Some((ahead + 1).saturating_sub(q.capacity.max(1)));
        }
    }
}

/// The tasks ahead of task `i` at its submission: same queue, joined before it, unfinished
/// then (`members`: its queue's tasks).
fn ahead_of(tasks: &[Task], members: &[usize], i: usize) -> Vec<usize> {
    let Some(s) = tasks[i].submitted else {
        return Vec::new();
    };
    members
        .iter()
        .copied()
        .filter(|&j| {
            j != i && joined(&tasks[j]).is_some_and(|t| t < s) && unfinished_at(&tasks[j], s)
        })
        .collect()
}

/// Groups by site, ranked.
fn group(
    tasks: &[Task],
    members: &BTreeMap<(u32, u32), Vec<usize>>,
    queues: &BTreeMap<(u32, u32), Queue>,
    tau_ns: u64,
) -> Vec<Group> {
    let mut groups: BTreeMap<String, Group> = BTreeMap::new();
    let mut lengths: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut exec_ahead: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (i, l) in tasks.iter().enumerate() {
        let Some(site) = &l.site else { continue };
        let g = groups.entry(site.clone()).or_insert_with(|| Group {
            site: site.clone(),
            tasks: 0,
            max_queued_ns: 0,
            max_exec_ns: 0,
            capacity: 0,
            anomalous: false,
            queued_over_tau: 0,
            mean_queue_length: 0.0,
            mean_exec_ahead_ns: 0,
            behind: BTreeMap::new(),
        });
        g.tasks += 1;
        let queued = l.queued_ns.unwrap_or(0);
        g.max_queued_ns = g.max_queued_ns.max(queued);
        g.max_exec_ns = g.max_exec_ns.max(l.exec_ns.unwrap_or(0));
        g.capacity = g
            .capacity
            .max(queues.get(&(l.pid, l.queue)).map_or(0, |q| q.capacity));
        if queued >= tau_ns {
            g.queued_over_tau += 1;
            let len = lengths.entry(site.clone()).or_default();
            len.0 += l.queue_length.unwrap_or(0);
            len.1 += 1;
            let queue = members
                .get(&(l.pid, l.queue))
                .map_or(&[][..], Vec::as_slice);
            for j in ahead_of(tasks, queue, i) {
                let behind = tasks[j].site.as_deref().unwrap_or(UNKNOWN_SITE);
                *g.behind.entry(behind.to_owned()).or_default() += 1;
                let x = exec_ahead.entry(site.clone()).or_default();
                x.0 += tasks[j].exec_ns.unwrap_or(0);
                x.1 += 1;
            }
        }
    }
    let mut out: Vec<Group> = groups
        .into_values()
        .map(|mut g| {
            g.anomalous = g.max_queued_ns > tau_ns || g.max_exec_ns > tau_ns;
            // An entry is made with its first count: n ≥ 1.
            if let Some((sum, n)) = lengths.get(&g.site) {
                g.mean_queue_length = *sum as f64 / *n as f64;
            }
            if let Some((sum, n)) = exec_ahead.get(&g.site) {
                g.mean_exec_ahead_ns = sum / n;
            }
            g
        })
        .collect();
    out.sort_by(|a, b| {
        b.anomalous
            .cmp(&a.anomalous)
            .then_with(|| {
                b.max_queued_ns
                    .max(b.max_exec_ns)
                    .cmp(&a.max_queued_ns.max(a.max_exec_ns))
            })
            .then_with(|| a.site.cmp(&b.site))
    });
    out
}
