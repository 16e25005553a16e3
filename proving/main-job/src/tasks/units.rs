//! The scene's app: a UI thread that submits work to two execution units and then blocks on a
//! result, as an app that ANRs does (DiagDroid's two most common causes):
//!
//! * **an `AsyncTask` serial executor** (one worker, `AsyncTask #1`): `Feed.refresh()` submits a
//!   slow task and then quick ones, which queue behind it (`SerialExecutor.execute` → Submit;
//!   `FutureTask.run` → Begin, the task runs until that frame returns). Simplified: the
//!   framework's serial executor hands each task on to `THREAD_POOL_EXECUTOR` (a second
//!   submission, of a wrapper `Runnable`, to the pool's queue); here its one thread takes them
//!   from the serial queue itself;
//! * **an undersized `ThreadPoolExecutor`** (two workers, `pool-1-thread-N`): `Gallery
//!   .loadThumbs(int)` submits more tasks than it has threads (`ThreadPoolExecutor.execute` →
//!   Submit; `beforeExecute` → BeginUntilEnd; `afterExecute` → End).
//!
//! Each unit is first in, first out, like the framework's. Its queue is a mutex and a condition
//! variable, and each thread is in ART's states around them: native while it waits for the mutex
//! or on the condition (ART's `kBlocked`/`kWaiting`, where the control plane stops it by force),
//! runnable while it runs methods. Two things happen under the unit's mutex so that the scene
//! knows each task's queue length without reading the trace: a submission (its method's entry
//! and task record, then the enqueue), and a completion (the end record, the count of
//! completions, then the next task's dequeue). A task's queue length is then the completions
//! counted between its submission and its dequeue, and the records' order is the mutex's.

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, MutexGuard};

use anyhow::Result;
use hubble_format::slot::TaskKind;

use crate::tasks::tracer::{Traced, Tracer};

/// Methods: boot-image framework methods below 4 GiB, the app's above (two-slot entries).
pub mod m {
    /// `MainActivity.onCreate`.
    pub const ON_CREATE: u64 = 0x7f_2000_0100;
    /// `Feed.refresh`: the serial executor's submitting site.
    pub const FEED_REFRESH: u64 = 0x7f_2000_0140;
    /// `Gallery.loadThumbs`: the pool's submitting site.
    pub const LOAD_THUMBS: u64 = 0x7f_2000_0180;
    /// The feed task's work.
    pub const DO_IN_BACKGROUND: u64 = 0x7f_2000_01c0;
    /// Called by the feed task.
    pub const PARSE: u64 = 0x7f_2000_0200;
    /// The pool's task.
    pub const THUMB_RUN: u64 = 0x7f_2000_0240;
    /// Called by the pool's task.
    pub const DECODE: u64 = 0x7f_2000_0280;
    /// `AsyncTask.execute`.
    pub const ASYNC_EXECUTE: u64 = 0x7000_0400;
    /// `AsyncTask$SerialExecutor.execute`: Submit.
    pub const SERIAL_EXECUTE: u64 = 0x7000_0440;
    /// `ThreadPoolExecutor.execute`: Submit.
    pub const POOL_EXECUTE: u64 = 0x7000_0480;
    /// `AsyncTask.get`: where the UI thread blocks.
    pub const ASYNC_GET: u64 = 0x7000_04c0;
    /// `ThreadPoolExecutor$Worker.run`: a worker thread's `Runnable`.
    pub const WORKER_RUN: u64 = 0x7000_0600;
    /// `ThreadPoolExecutor.runWorker`: its loop (`getTask`, then the task, until shutdown).
    pub const RUN_WORKER: u64 = 0x7000_0620;
    /// `FutureTask.run`: Begin.
    pub const FUTURE_RUN: u64 = 0x7000_0640;
    /// `ThreadPoolExecutor.beforeExecute`: BeginUntilEnd.
    pub const BEFORE_EXECUTE: u64 = 0x7000_0880;
    /// `ThreadPoolExecutor.afterExecute`: End.
    pub const AFTER_EXECUTE: u64 = 0x7000_08c0;
}

/// The method table the `Art` double resolves.
pub fn names() -> HashMap<u64, String> {
    [
        (m::ON_CREATE, "void com.example.app.MainActivity.onCreate(android.os.Bundle)"),
        (m::FEED_REFRESH, "void com.example.app.Feed.refresh()"),
        (m::LOAD_THUMBS, "void com.example.app.Gallery.loadThumbs(int)"),
        (
            m::DO_IN_BACKGROUND,
            "java.lang.Object com.example.app.FeedTask.doInBackground(java.lang.Object[])",
        ),
        (m::PARSE, "int com.example.app.Json.parse(java.lang.String)"),
        (m::THUMB_RUN, "void com.example.app.ThumbTask.run()"),
        (
            m::DECODE,
            "android.graphics.Bitmap com.example.app.Thumbs.decode(int)",
        ),
        (
            m::ASYNC_EXECUTE,
            "android.os.AsyncTask android.os.AsyncTask.execute(java.lang.Object[])",
        ),
        (
            m::SERIAL_EXECUTE,
            "void android.os.AsyncTask$SerialExecutor.execute(java.lang.Runnable)",
        ),
        (
            m::POOL_EXECUTE,
            "void java.util.concurrent.ThreadPoolExecutor.execute(java.lang.Runnable)",
        ),
        (m::ASYNC_GET, "java.lang.Object android.os.AsyncTask.get()"),
        (
            m::WORKER_RUN,
            "void java.util.concurrent.ThreadPoolExecutor$Worker.run()",
        ),
        (
            m::RUN_WORKER,
            "void java.util.concurrent.ThreadPoolExecutor.runWorker(java.util.concurrent.ThreadPoolExecutor$Worker)",
        ),
        (m::FUTURE_RUN, "void java.util.concurrent.FutureTask.run()"),
        (
            m::BEFORE_EXECUTE,
            "void java.util.concurrent.ThreadPoolExecutor.beforeExecute(java.lang.Thread, java.lang.Runnable)",
        ),
        (
            m::AFTER_EXECUTE,
            "void java.util.concurrent.ThreadPoolExecutor.afterExecute(java.lang.Runnable, java.lang.Throwable)",
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_string()))
    .collect()
}

/// How a unit's worker runs a task, and which records say so.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `FutureTask.run()` writes Begin; the task ends when that frame returns.
    Future,
    /// `beforeExecute` writes BeginUntilEnd, `afterExecute` End, around the task's `run()`.
    Hooks,
}

/// An execution unit.
pub struct Unit {
    /// Its threads' name prefix.
    pub name: &'static str,
    /// The executor's identity hash.
    pub queue: u32,
    /// Its threads: the capacity.
    pub workers: usize,
    /// The submitting site.
    pub site: u64,
    /// How it runs a task.
    pub style: Style,
    state: Mutex<UnitState>,
    cv: Condvar,
}

#[derive(Default)]
struct UnitState {
    queue: VecDeque<usize>,
    completions: u64,
    shutdown: bool,
}

/// What the scene knows of one task, from its own records and its units' counts.
#[derive(Clone, Debug, Default)]
pub struct Known {
    /// Its unit.
    pub unit: usize,
    /// The task object's identity hash.
    pub task: u32,
    /// Work it does (ms).
    pub ms: u64,
    /// The submission's task record: (index in the UI thread's records, counter).
    pub submit: Option<(usize, u64)>,
    /// The begin record (index in the worker's records, counter).
    pub begin: Option<(usize, u64)>,
    /// The end: `FutureTask.run`'s exit, or `afterExecute`'s End record.
    pub end: Option<(usize, u64)>,
    /// Who submitted it.
    pub submit_tid: u32,
    /// Who ran it.
    pub run_tid: Option<u32>,
    /// Completions of its unit when it was submitted.
    pub at_submit: u64,
    /// ... and when a worker dequeued it.
    pub at_take: Option<u64>,
    /// Done.
    pub done: bool,
}

/// The app: its units and its tasks.
pub struct Scene {
    /// The serial executor and the pool.
    pub units: Vec<Unit>,
    /// Every task, in submission order.
    pub known: Mutex<Vec<Known>>,
    done: Condvar,
    aborted: std::sync::atomic::AtomicBool,
}

/// Takes `m` as ART takes a contended monitor: native while waiting for it.
fn lock<'a, T>(t: &Traced, m: &'a Mutex<T>) -> MutexGuard<'a, T> {
    t.state.to_native();
    let g = m.lock().unwrap();
    t.state.to_runnable();
    g
}

/// `Object.wait()`: native while waiting.
fn wait<'a, T>(t: &Traced, cv: &Condvar, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    t.state.to_native();
    let g = cv.wait(g).unwrap();
    t.state.to_runnable();
    g
}

/// Shape of the scene.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Feed tasks (the first is the slow one).
    pub feed: usize,
    /// The slow feed task's work (ms).
    pub slow_ms: u64,
    /// Every other feed task's work (ms).
    pub quick_ms: u64,
    /// Thumbnail tasks for the pool.
    pub thumbs: usize,
    /// Each thumbnail's work (ms).
    pub thumb_ms: u64,
    /// Pool threads.
    pub pool_threads: usize,
    /// Seed of the identity hashes.
    pub seed: u64,
}

impl Scene {
    /// The app of `shape`: two units and their tasks (identity hashes drawn from the seed).
    pub fn new(shape: Shape) -> Scene {
        let mut x = shape.seed | 1;
        let mut next_id = || loop {
            // xorshift64; identity hashes are 28 bits and never 0 (LockWord::kHashSize).
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let id = (x >> 20) as u32 & ((1 << 28) - 1);
            if id != 0 {
                return id;
            }
        };
        let unit = |name, queue, workers, site, style| Unit {
            name,
            queue,
            workers,
            site,
            style,
            state: Mutex::default(),
            cv: Condvar::new(),
        };
        let units = vec![
            unit("AsyncTask #", next_id(), 1, m::FEED_REFRESH, Style::Future),
            unit(
                "pool-1-thread-",
                next_id(),
                shape.pool_threads,
                m::LOAD_THUMBS,
                Style::Hooks,
            ),
        ];
        let mut known = Vec::new();
        let mut ids = std::collections::HashSet::new();
        for (unit, n) in [(0, shape.feed), (1, shape.thumbs)] {
            for i in 0..n {
                let task = loop {
                    let id = next_id();
                    if ids.insert(id) && units.iter().all(|u| u.queue != id) {
                        break id;
                    }
                };
                let ms = match (unit, i) {
                    (0, 0) => shape.slow_ms,
                    (0, _) => shape.quick_ms,
                    _ => shape.thumb_ms,
                };
                known.push(Known {
                    unit,
                    task,
                    ms,
                    ..Known::default()
                });
            }
        }
        Scene {
            units,
            known: Mutex::new(known),
            done: Condvar::new(),
            aborted: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A thread failed: the others stop waiting for it (the UI thread for its result, the
    /// workers for tasks), so that every thread ends and the error is reported.
    pub fn abort(&self) {
        self.aborted
            .store(true, std::sync::atomic::Ordering::SeqCst);
        for u in &self.units {
            u.state.lock().unwrap().shutdown = true;
            u.cv.notify_all();
        }
        let _known = self.known.lock().unwrap();
        self.done.notify_all();
    }

    /// The UI thread: submits every task, then blocks in `AsyncTask.get()` on the last feed task
    /// until it is done (`blocked` is called once it waits), then shuts the units down.
    pub fn ui(&self, t: &Traced, tr: &Tracer<'_>, blocked: impl FnOnce()) -> Result<()> {
        t.state.to_runnable();
        tr.enter(m::ON_CREATE)?;
        let n = self.known.lock().unwrap().len();
        let mut last_feed = 0;
        for k in 0..n {
            let unit = self.known.lock().unwrap()[k].unit;
            let u = &self.units[unit];
            tr.enter(u.site)?;
            if u.style == Style::Future {
                tr.enter(m::ASYNC_EXECUTE)?;
                last_feed = k;
            }
            {
                let mut g = lock(t, &u.state);
                tr.enter(if u.style == Style::Future {
                    m::SERIAL_EXECUTE
                } else {
                    m::POOL_EXECUTE
                })?;
                let mut known = self.known.lock().unwrap();
                let kn = &mut known[k];
                kn.submit = tr.task(TaskKind::Submit, kn.task, u.queue)?;
                kn.submit_tid = t.tid;
                kn.at_submit = g.completions;
                g.queue.push_back(k);
                drop(known);
                tr.exit()?;
                u.cv.notify_one();
            }
            if u.style == Style::Future {
                tr.exit()?;
            }
            tr.exit()?;
            tr.work_us(300);
        }
        tr.exit()?; // onCreate
        tr.enter(m::ASYNC_GET)?;
        {
            t.state.to_native();
            blocked();
            let mut known = self.known.lock().unwrap();
            while !known[last_feed].done && !self.aborted.load(std::sync::atomic::Ordering::SeqCst)
            {
                known = self.done.wait(known).unwrap();
            }
            drop(known);
            t.state.to_runnable();
        }
        tr.exit()?;
        for u in &self.units {
            let mut g = lock(t, &u.state);
            g.shutdown = true;
            u.cv.notify_all();
        }
        t.state.to_native();
        Ok(())
    }

    /// A worker of unit `unit`: takes tasks first in, first out until the unit shuts down.
    pub fn worker(&self, unit: usize, t: &Traced, tr: &Tracer<'_>) -> Result<()> {
        let u = &self.units[unit];
        t.state.to_runnable();
        tr.enter(m::WORKER_RUN)?;
        tr.enter(m::RUN_WORKER)?;
        let mut g = lock(t, &u.state);
        loop {
            while g.queue.is_empty() && !g.shutdown {
                g = wait(t, &u.cv, g);
            }
            let Some(k) = g.queue.pop_front() else {
                break;
            };
            let (task, ms) = {
                let mut known = self.known.lock().unwrap();
                let kn = &mut known[k];
                kn.at_take = Some(g.completions);
                kn.run_tid = Some(t.tid);
                (kn.task, kn.ms)
            };
            drop(g);
            let (begin, end);
            match u.style {
                Style::Future => {
                    tr.enter(m::FUTURE_RUN)?;
                    begin = tr.task(TaskKind::Begin, task, 0)?;
                    tr.enter(m::DO_IN_BACKGROUND)?;
                    body(tr, m::PARSE, ms)?;
                    tr.exit()?;
                    g = lock(t, &u.state);
                    end = tr.exit()?; // FutureTask.run returns: the task's end
                }
                Style::Hooks => {
                    tr.enter(m::BEFORE_EXECUTE)?;
                    begin = tr.task(TaskKind::BeginUntilEnd, task, u.queue)?;
                    tr.exit()?;
                    tr.enter(m::THUMB_RUN)?;
                    body(tr, m::DECODE, ms)?;
                    tr.exit()?;
                    g = lock(t, &u.state);
                    tr.enter(m::AFTER_EXECUTE)?;
                    end = tr.task(TaskKind::End, task, u.queue)?;
                    tr.exit()?;
                }
            }
            g.completions += 1;
            let mut known = self.known.lock().unwrap();
            known[k].begin = begin;
            known[k].end = end;
            known[k].done = true;
            self.done.notify_all();
        }
        drop(g);
        tr.exit()?; // runWorker
        tr.exit()?; // Worker.run
        t.state.to_native();
        Ok(())
    }
}

/// A task's work: calls of `callee`, each a few µs of computation, for `ms`.
fn body(tr: &Tracer<'_>, callee: u64, ms: u64) -> Result<()> {
    let t0 = std::time::Instant::now();
    while t0.elapsed().as_millis() < u128::from(ms) {
        tr.enter(callee)?;
        tr.work_us(20);
        tr.exit()?;
    }
    Ok(())
}
