//! `hubble tasks`: a DiagDroid-style report of asynchronous tasks (DiagDroid §4–5), from what a
//! method trace shows.
//!
//! * **Executions.** A frame of a known dispatcher is one task execution: `Handler.dispatchMessage`,
//!   `AsyncTask…doInBackground`, `AsyncTask…onPostExecute`, `IntentService…onHandleIntent`. The
//!   task is named by the dispatcher's longest direct callee (its `run()`, `handleMessage()` …),
//!   or by the dispatcher itself when it calls nothing. `ThreadPoolExecutor.runWorker` is a loop,
//!   not one execution: one frame for the worker's whole life runs
//!   `while (task != null || (task = getTask()) != null) { beforeExecute(wt, task); task.run();
//!   afterExecute(task, thrown); }` and then `processWorkerExit` (`java.util.concurrent.
//!   ThreadPoolExecutor`, which Android's libcore takes from OpenJDK), so each of its direct
//!   calls but those four is one execution, named by itself.
//!   Per thread and task: count, total and longest execution time, and how many took longer
//!   than a frame (16 ms).
//! * **Scheduling.** Calls that schedule a task are counted per thread and API:
//!   `Handler.post*`, `Handler.sendMessage*`, `Executor.execute` / `ExecutorService.submit`,
//!   `AsyncTask.execute*`.
//!
//! DiagDroid's queuing time (schedule → start) needs to know which scheduling call created
//! which execution. A method trace does not record the task object, so this report does not
//! claim a queuing time.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::signatures::glob;
use crate::walk::walk;
use crate::{Input, Result};

/// Dispatcher globs: a frame matching one is a task execution.
pub const DISPATCHERS: &[&str] = &[
    "* android.os.Handler.dispatchMessage(*",
    "* *.doInBackground(*",
    "* *.onPostExecute(*",
    "* *.onHandleIntent(*",
];

/// Loop dispatchers: one frame runs task after task; each direct call not in [`LOOP_OWN`] is
/// one execution (see the module's text).
pub const LOOP_DISPATCHERS: &[&str] = &["* java.util.concurrent.ThreadPoolExecutor.runWorker(*"];

/// What a loop dispatcher calls around its tasks: not executions.
pub const LOOP_OWN: &[&str] = &[
    "* java.util.concurrent.ThreadPoolExecutor.getTask(*",
    "* *.beforeExecute(*",
    "* *.afterExecute(*",
    "* java.util.concurrent.ThreadPoolExecutor.processWorkerExit(*",
];

/// How a method takes part in the report.
#[derive(Clone, Copy, Default)]
struct Role {
    /// A frame of it is one execution.
    dispatcher: bool,
    /// It runs tasks in a loop: its direct calls are executions.
    loop_dispatcher: bool,
    /// A loop dispatcher's own call (not a task).
    loop_own: bool,
    /// The scheduling API it is, if any.
    api: Option<&'static str>,
}

/// Scheduling globs and the API name reported for them.
pub const SCHEDULERS: &[(&str, &str)] = &[
    ("* android.os.Handler.post*(*", "Handler.post"),
    ("* android.os.Handler.sendMessage*(*", "Handler.sendMessage"),
    (
        "* java.util.concurrent.*.execute(java.lang.Runnable)",
        "Executor.execute",
    ),
    (
        "* java.util.concurrent.*.submit(*",
        "ExecutorService.submit",
    ),
    ("* android.os.AsyncTask.execute*(*", "AsyncTask.execute"),
];

/// Count, total ns, longest ns, executions over 16 ms.
type Totals = (u64, u64, u64, u64);

/// One task's executions on one thread.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct TaskStats {
    /// The task (the dispatcher's main callee).
    pub task: String,
    /// The dispatcher.
    pub dispatcher: String,
    /// Executions.
    pub count: u64,
    /// Total execution time, ns.
    pub total_ns: u64,
    /// Longest execution, ns.
    pub max_ns: u64,
    /// Executions longer than 16 ms.
    pub over_16ms: u64,
}

/// One thread's part of the report.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct ThreadTasks {
    /// Thread name.
    pub thread: String,
    /// Thread id.
    pub tid: u32,
    /// Executions, by total time (descending).
    pub executions: Vec<TaskStats>,
    /// Scheduling calls per API.
    pub scheduled: BTreeMap<String, u64>,
}

/// The report for `inputs` (one entry per input).
pub fn tasks(inputs: &[Input<'_>]) -> Result<Vec<ThreadTasks>> {
    tasks_threads(inputs, &(0..inputs.len()).collect::<Vec<_>>())
}

/// The report for `inputs`, input `i` in thread `threads[i]`: one entry per thread, in the order
/// threads first appear, its inputs' executions and scheduling calls added up (the runs of a
/// version 4 file's thread).
pub fn tasks_threads(inputs: &[Input<'_>], threads: &[usize]) -> Result<Vec<ThreadTasks>> {
    if threads.len() != inputs.len() {
        return Err(crate::AnalysisError::Unsupported(format!(
            "{} thread numbers for {} inputs",
            threads.len(),
            inputs.len()
        )));
    }
    let mut merged: Vec<(usize, ThreadTasks)> = Vec::new();
    for (report, &thread) in per_input(inputs)?.into_iter().zip(threads) {
        match merged.iter_mut().find(|(t, _)| *t == thread) {
            None => merged.push((thread, report)),
            Some((_, into)) => {
                for e in report.executions {
                    match into
                        .executions
                        .iter_mut()
                        .find(|x| x.task == e.task && x.dispatcher == e.dispatcher)
                    {
                        Some(x) => {
                            x.count += e.count;
                            x.total_ns += e.total_ns;
                            x.max_ns = x.max_ns.max(e.max_ns);
                            x.over_16ms += e.over_16ms;
                        }
                        None => into.executions.push(e),
                    }
                }
                for (api, n) in report.scheduled {
                    *into.scheduled.entry(api).or_default() += n;
                }
            }
        }
    }
    Ok(merged
        .into_iter()
        .map(|(_, mut t)| {
            sort_executions(&mut t.executions);
            t
        })
        .collect())
}

fn sort_executions(executions: &mut [TaskStats]) {
    executions.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.task.cmp(&b.task))
    });
}

/// One report per input.
fn per_input(inputs: &[Input<'_>]) -> Result<Vec<ThreadTasks>> {
    let mut out = Vec::new();
    for input in inputs {
        let symbols = &input.file.symbols;
        let clock = hubble_format::clock::WallClock::new(&input.file.header);
        let mut kind: std::collections::HashMap<Option<u64>, Role> = Default::default();
        let mut classify = |m: Option<u64>| -> Role {
            *kind.entry(m).or_insert_with(|| {
                let name = hubble_format::names::display(symbols, m);
                let any = |globs: &[&str]| globs.iter().any(|g| glob(g, &name));
                Role {
                    dispatcher: any(DISPATCHERS),
                    loop_dispatcher: any(LOOP_DISPATCHERS),
                    loop_own: any(LOOP_OWN),
                    api: SCHEDULERS
                        .iter()
                        .find(|(g, _)| glob(g, &name))
                        .map(|(_, api)| *api),
                }
            })
        };
        // Per depth: the longest completed direct child (method, ticks) of the open frame.
        let mut longest: Vec<Option<(Option<u64>, u64)>> = Vec::new();
        let mut stats: BTreeMap<(Option<u64>, Option<u64>), Totals> = BTreeMap::new();
        let mut scheduled: BTreeMap<String, u64> = BTreeMap::new();
        walk(*input, |ancestors, frame| {
            let d = ancestors.len();
            longest.resize(longest.len().max(d + 2), None);
            let child = longest[d + 1].take();
            let role = classify(frame.method);
            if let Some(api) = role.api {
                *scheduled.entry(api.to_owned()).or_default() += 1;
            }
            // One execution: a dispatcher's frame (named by its longest callee), or a loop
            // dispatcher's direct call that is not its own.
            let parent = ancestors.last().map(|p| p.method);
            let execution = if role.dispatcher {
                Some((frame.method, child.map_or(frame.method, |(m, _)| m)))
            } else if !role.loop_own && parent.is_some_and(|p| classify(p).loop_dispatcher) {
                Some((parent.flatten(), frame.method))
            } else {
                None
            };
            if let Some(key) = execution {
                let ns = clock.ticks_to_ns(frame.ticks()) as u64;
                let e = stats.entry(key).or_default();
                e.0 += 1;
                e.1 += ns;
                e.2 = e.2.max(ns);
                e.3 += u64::from(ns > 16_000_000);
            }
            let slot = &mut longest[d];
            if slot.map_or(true, |(_, t)| frame.ticks() > t) {
                *slot = Some((frame.method, frame.ticks()));
            }
        })?;
        let mut executions: Vec<TaskStats> = stats
            .into_iter()
            .map(
                |((dispatcher, task), (count, total_ns, max_ns, over))| TaskStats {
                    task: hubble_format::names::display(symbols, task).into_owned(),
                    dispatcher: hubble_format::names::display(symbols, dispatcher).into_owned(),
                    count,
                    total_ns,
                    max_ns,
                    over_16ms: over,
                },
            )
            .collect();
        sort_executions(&mut executions);
        out.push(ThreadTasks {
            thread: input.file.header.thread_name.clone(),
            tid: input.file.header.tid,
            executions,
            scheduled,
        });
    }
    Ok(out)
}
