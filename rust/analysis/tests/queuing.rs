//! `queuing` against a workload whose queuing it knows: a simulation of four execution units
//! (DiagDroid Table 1) fed by one submitting thread: a serial executor (capacity 1) with one
//! slow task in front of quick ones, an undersized pool (capacity 3) fed from two sites, a
//! looper whose `Message`s are recycled, and plain threads. The simulation runs each unit first
//! in, first out, and writes every thread's method records and task records, as the runtime
//! would, into one pool in many-thread mode (`PoolWriter`: blocks small enough that threads
//! fill several), flushed as a version 4 file. Every task's submit, begin and end, its
//! queue length (completions it waited for, counted in the simulation), each queue's capacity
//! and each site's group must come back exactly.

use std::collections::{BTreeMap, VecDeque};

use hubble_analysis::queuing::{queuing, Report, UNKNOWN_SITE};
use hubble_analysis::Input;
use hubble_format::pool::{self, Geometry, PoolWriter};
use hubble_format::slot::TaskKind;
use hubble_format::{Mode, ProcessHeader, ThreadsFile};

const HZ: u64 = 19_200_000;
const MS: u64 = HZ / 1000;
const MAIN: u32 = 1;
const DISPATCH: u64 = 3; // ticks from a worker taking a task to its begin record
const PID: u32 = 4242;

/// Methods and their names.
const M: &[(u64, &str)] = &[
    (0x7000_0100, "void com.example.Feed.refresh()"),
    (0x7000_0140, "void com.example.Gallery.loadThumbs(int)"),
    (0x7000_0180, "void com.example.Gallery.prefetch()"),
    (0x7000_01c0, "void com.example.Ui.onKey(int)"),
    (0x7000_0200, "void com.example.Sync.start()"),
    (0x7000_0400, "android.os.AsyncTask android.os.AsyncTask.execute(java.lang.Object[])"),
    (0x7000_0440, "void android.os.AsyncTask$SerialExecutor.execute(java.lang.Runnable)"),
    (0x7000_0480, "void java.util.concurrent.ThreadPoolExecutor.execute(java.lang.Runnable)"),
    (0x7000_04c0, "boolean android.os.Handler.sendMessageAtTime(android.os.Message, long)"),
    (0x7000_0500, "boolean android.os.MessageQueue.enqueueMessage(android.os.Message, long)"),
    (0x7000_0540, "void java.lang.Thread.start()"),
    (0x7000_0600, "void java.util.concurrent.ThreadPoolExecutor$Worker.run()"),
    (0x7000_0640, "void java.util.concurrent.FutureTask.run()"),
    (0x7000_0680, "void com.example.ThumbTask.run()"),
    (0x7000_06c0, "void android.os.Looper.loop()"),
    (0x7000_0700, "void android.os.Handler.dispatchMessage(android.os.Message)"),
    (0x7000_0740, "void java.lang.Thread.run()"),
    (0x7000_07c0, "void com.example.SyncJob.run()"),
    (0x7000_0800, "void com.example.Db.save()"),
    (
        0x7000_0840,
        "java.util.concurrent.Future java.util.concurrent.AbstractExecutorService.submit(java.lang.Runnable)",
    ),
    (
        0x7000_0880,
        "void java.util.concurrent.ThreadPoolExecutor.beforeExecute(java.lang.Thread, java.lang.Runnable)",
    ),
    (
        0x7000_08c0,
        "void java.util.concurrent.ThreadPoolExecutor.afterExecute(java.lang.Runnable, java.lang.Throwable)",
    ),
    (0x7000_0780, "int com.example.Json.parse(java.lang.String)"),
];

fn method(name_part: &str) -> u64 {
    M.iter()
        .find(|(_, n)| n.contains(name_part))
        .unwrap_or_else(|| panic!("no method {name_part}"))
        .0
}

fn name(m: u64) -> String {
    M.iter().find(|(p, _)| *p == m).unwrap().1.to_owned()
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Enter(u64),
    Exit,
    Task(TaskKind, u32, u32),
}

/// How a unit's worker runs a task, and which records say so.
#[derive(Clone, Copy)]
enum Style {
    /// The task runs in the frame of `begin`, whose entry writes a Begin record (FutureTask.run,
    /// Handler.dispatchMessage, Thread.run), inside `outer` (the worker's loop) if any, calling
    /// `inner` (a Thread's Runnable) if any.
    Frame {
        outer: Option<u64>,
        begin: u64,
        inner: Option<u64>,
    },
    /// ThreadPoolExecutor.runWorker: beforeExecute (BeginUntilEnd), `run`, afterExecute (End);
    /// `run` is FutureTask.run (its own Begin of the same task, nested) when `nested_begin`.
    Hooks {
        outer: u64,
        run: u64,
        nested_begin: bool,
    },
}

/// A unit of the simulation.
struct Unit {
    queue: u32,
    capacity: usize,
    /// Its workers' tids (a plain thread unit: none, each task gets a new thread).
    workers: Vec<u32>,
    /// The method that submits to it, and the framework frames between the site and it.
    submit_path: Vec<u64>,
    style: Style,
}

impl Unit {
    /// The method the report names as the task's.
    fn task_method(&self) -> u64 {
        match self.style {
            Style::Frame { begin, .. } => begin,
            Style::Hooks { run, .. } => run,
        }
    }
}

/// What the simulation knows of one task.
#[derive(Clone, Debug)]
struct Known {
    site: u64,
    duration: u64,
    unit: usize,
    task: u32,
    submitted: u64,
    taken: Option<u64>,
    begun: Option<u64>,
    ended: Option<u64>,
    run_tid: Option<u32>,
    /// Completions in its unit between its submission and its start.
    waited_for: u64,
    /// Tasks of its unit submitted before it and unfinished at its submission.
    ahead: Vec<usize>,
}

struct Workload {
    ops: Vec<(u64, u32, Op)>,
    known: Vec<Known>,
    units: Vec<Unit>,
    flush: u64,
    names: BTreeMap<u32, String>,
}

use hubble_testkit::Rng;

fn build(seed: u64) -> Workload {
    let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let units = vec![
        Unit {
            queue: 0x0a5e_0001,
            capacity: 1,
            workers: vec![10],
            submit_path: vec![
                method("AsyncTask.execute"),
                method("SerialExecutor.execute"),
            ],
            style: Style::Frame {
                outer: Some(method("Worker.run")),
                begin: method("FutureTask.run"),
                inner: None,
            },
        },
        Unit {
            queue: 0x0b00_0002,
            capacity: 3,
            workers: vec![20, 21, 22],
            submit_path: vec![method("ThreadPoolExecutor.execute")],
            style: Style::Hooks {
                outer: method("Worker.run"),
                run: method("ThumbTask.run"),
                nested_begin: false,
            },
        },
        Unit {
            queue: 0x0c00_0003,
            capacity: 1,
            workers: vec![30],
            submit_path: vec![method("sendMessageAtTime"), method("enqueueMessage")],
            style: Style::Frame {
                outer: Some(method("Looper.loop")),
                begin: method("dispatchMessage"),
                inner: None,
            },
        },
        Unit {
            queue: 0,
            capacity: usize::MAX,
            workers: vec![],
            submit_path: vec![method("Thread.start")],
            style: Style::Frame {
                outer: None,
                begin: method("Thread.run"),
                inner: Some(method("SyncJob.run")),
            },
        },
        // A single-thread executor fed through submit(): the FutureTask's beforeExecute begins
        // it, its run() begins it again (one execution), afterExecute ends it.
        Unit {
            queue: 0x0d00_0004,
            capacity: 1,
            workers: vec![50],
            submit_path: vec![
                method("AbstractExecutorService.submit"),
                method("ThreadPoolExecutor.execute"),
            ],
            style: Style::Hooks {
                outer: method("Worker.run"),
                run: method("FutureTask.run"),
                nested_begin: true,
            },
        },
    ];
    // Submissions: (time, site, unit, duration), from MAIN, in time order.
    let mut plan: Vec<(u64, u64, usize, u64)> = Vec::new();
    let mut t = 10 * MS;
    // A slow first task on the serial executor, quick ones queued behind it.
    plan.push((t, method("Feed.refresh"), 0, (700 + rng.below(300)) * MS));
    for _ in 0..4 + rng.below(4) {
        t += (5 + rng.below(40)) * MS;
        plan.push((t, method("Feed.refresh"), 0, (5 + rng.below(30)) * MS));
    }
    // The pool: a burst of prefetches, then thumbnails behind them.
    t += 20 * MS;
    for _ in 0..4 + rng.below(3) {
        t += rng.below(3) * MS;
        plan.push((
            t,
            method("Gallery.prefetch"),
            1,
            (300 + rng.below(400)) * MS,
        ));
    }
    for _ in 0..6 + rng.below(5) {
        t += (1 + rng.below(20)) * MS;
        plan.push((
            t,
            method("Gallery.loadThumbs"),
            1,
            (20 + rng.below(200)) * MS,
        ));
    }
    // Key events on the looper: each handler runs longer than keys arrive.
    let keys_from = 5 * MS + rng.below(50) * MS;
    let mut k = keys_from;
    for _ in 0..8 + rng.below(6) {
        k += (10 + rng.below(30)) * MS;
        plan.push((k, method("Ui.onKey"), 2, (30 + rng.below(60)) * MS));
    }
    // Saves through submit(), slower than they come.
    let mut d = (30 + rng.below(100)) * MS;
    for _ in 0..3 + rng.below(4) {
        d += (50 + rng.below(100)) * MS;
        plan.push((d, method("Db.save"), 4, (200 + rng.below(600)) * MS));
    }
    // Plain threads.
    for _ in 0..3 {
        let at = (50 + rng.below(900)) * MS;
        plan.push((at, method("Sync.start"), 3, (10 + rng.below(100)) * MS));
    }
    plan.sort_by_key(|p| p.0);
    // Submissions never share a tick (one thread makes them, each takes several records).
    for i in 1..plan.len() {
        if plan[i].0 <= plan[i - 1].0 + 10 {
            plan[i].0 = plan[i - 1].0 + 11;
        }
    }
    let last = plan.last().unwrap().0;
    // The flush: after the last submission, before everything is done (some tasks still
    // queued or running).
    let flush = last + 150 * MS;

    let mut known: Vec<Known> = Vec::new();
    let mut ops: Vec<(u64, u32, Op)> = Vec::new();
    let mut next_message = 0u32;
    let mut thread_tid = 40u32;
    let mut names = BTreeMap::from([(MAIN, "main".to_owned())]);
    for (i, &(at, site, unit, duration)) in plan.iter().enumerate() {
        // The submission's instant is its task record's.
        let submitted = at + units[unit].submit_path.len() as u64;
        // Identities: a recycled Message for the looper (back in the pool once its dispatch
        // has returned: Message.recycle), a new object otherwise.
        let task = if unit == 2 {
            let in_use = |id: u32| {
                known
                    .iter()
                    .any(|k| k.unit == 2 && k.task == id && k.ended.map_or(true, |e| e >= at))
            };
            match (1..=next_message)
                .map(|n| 0x0e55_0000 + n)
                .find(|&id| !in_use(id))
            {
                Some(id) => id,
                None => {
                    next_message += 1;
                    0x0e55_0000 + next_message
                }
            }
        } else if unit == 1 && i > 0 && i % 3 == 0 && plan[i - 1].1 == site {
            // The same Runnable executed again while it is still queued: two tasks of one
            // identity, begun in the order they were submitted.
            known.last().unwrap().task
        } else {
            0x0100_0000 + i as u32 * 16
        };
        known.push(Known {
            site,
            duration,
            unit,
            task,
            submitted,
            taken: None,
            begun: None,
            ended: None,
            run_tid: None,
            waited_for: 0,
            ahead: Vec::new(),
        });
        // MAIN: the site, the framework path, the task record, all returning at once.
        let mut c = at;
        ops.push((c, MAIN, Op::Enter(site)));
        for &m in &units[unit].submit_path {
            c += 1;
            ops.push((c, MAIN, Op::Enter(m)));
        }
        ops.push((c, MAIN, Op::Task(TaskKind::Submit, task, units[unit].queue)));
        for _ in 0..=units[unit].submit_path.len() {
            c += 1;
            ops.push((c, MAIN, Op::Exit));
        }
        // Let a message be recycled only after its dispatch: simulate the looper so far.
        if unit == 2 {
            simulate(&mut known, &units, 2);
        }
    }
    for u in 0..units.len() {
        simulate(&mut known, &units, u);
    }
    // Ahead of each task: same unit (with a queue), submitted before, unfinished then.
    for i in 0..known.len() {
        if units[known[i].unit].queue == 0 {
            continue;
        }
        let s = known[i].submitted;
        known[i].ahead = (0..known.len())
            .filter(|&j| {
                known[j].unit == known[i].unit
                    && known[j].submitted < s
                    && known[j].ended.map_or(true, |e| e > s)
            })
            .collect();
    }
    // The workers' records.
    for (u, unit) in units.iter().enumerate() {
        let outer = match unit.style {
            Style::Frame { outer, .. } => outer,
            Style::Hooks { outer, .. } => Some(outer),
        };
        for &w in &unit.workers {
            names.insert(w, format!("unit{u}-{w}"));
            ops.push((1, w, Op::Enter(outer.expect("a worker loops in a frame"))));
        }
    }
    for kn in known.iter_mut() {
        if !kn.begun.is_some_and(|b| b < flush) {
            kn.taken = None;
            kn.begun = None;
            kn.ended = None;
            continue;
        }
        let unit = &units[kn.unit];
        let tid = match kn.run_tid {
            Some(tid) => tid,
            None => {
                thread_tid += 1;
                names.insert(thread_tid, format!("sync-{thread_tid}"));
                kn.run_tid = Some(thread_tid);
                thread_tid
            }
        };
        let begun = kn.begun.unwrap();
        let ended = kn.ended.unwrap();
        let done = ended < flush;
        if !done {
            kn.ended = None;
        }
        // Work inside the task: one call in the middle (durations are 5 ms and more).
        let mid = begun + (ended - begun) / 2;
        let work = |ops: &mut Vec<(u64, u32, Op)>| {
            if mid + 1 < flush {
                ops.push((mid, tid, Op::Enter(method("Json.parse"))));
                ops.push((mid + 1, tid, Op::Exit));
            } else if mid < flush {
                ops.push((mid, tid, Op::Enter(method("Json.parse"))));
            }
        };
        match unit.style {
            Style::Frame { begin, inner, .. } => {
                ops.push((begun, tid, Op::Enter(begin)));
                ops.push((begun, tid, Op::Task(TaskKind::Begin, kn.task, 0)));
                if let Some(inner) = inner {
                    ops.push((begun + 1, tid, Op::Enter(inner)));
                }
                work(&mut ops);
                if done {
                    if inner.is_some() {
                        ops.push((ended - 1, tid, Op::Exit));
                    }
                    ops.push((ended, tid, Op::Exit));
                }
            }
            Style::Hooks {
                run, nested_begin, ..
            } => {
                ops.push((begun, tid, Op::Enter(method("beforeExecute"))));
                ops.push((begun, tid, Op::Task(TaskKind::BeginUntilEnd, kn.task, 0)));
                ops.push((begun, tid, Op::Exit));
                ops.push((begun + 1, tid, Op::Enter(run)));
                if nested_begin {
                    ops.push((begun + 1, tid, Op::Task(TaskKind::Begin, kn.task, 0)));
                }
                work(&mut ops);
                if done {
                    ops.push((ended - 1, tid, Op::Exit));
                    ops.push((ended, tid, Op::Enter(method("afterExecute"))));
                    ops.push((ended, tid, Op::Task(TaskKind::End, kn.task, 0)));
                    ops.push((ended, tid, Op::Exit));
                }
            }
        }
    }
    ops.sort_by_key(|o| o.0);
    Workload {
        ops,
        known,
        units,
        flush,
        names,
    }
}

/// Runs unit `u` first in, first out: fills `taken`, `begun`, `ended`, `run_tid`, `waited_for`.
fn simulate(known: &mut [Known], units: &[Unit], u: usize) {
    let unit = &units[u];
    let mut line: VecDeque<usize> = (0..known.len()).filter(|&i| known[i].unit == u).collect();
    if unit.workers.is_empty() {
        // A new thread per task: it starts 2 ms after `start()`.
        for i in line {
            let k = &mut known[i];
            k.taken = Some(k.submitted + 2 * MS);
            k.begun = Some(k.submitted + 2 * MS + DISPATCH);
            k.ended = Some(k.submitted + 2 * MS + DISPATCH + k.duration);
        }
        return;
    }
    let mut free_at: Vec<(u64, u32)> = unit.workers.iter().map(|&w| (0, w)).collect();
    let mut completions: Vec<u64> = Vec::new();
    while let Some(i) = line.pop_front() {
        free_at.sort();
        let (free, w) = free_at[0];
        let taken = free.max(known[i].submitted);
        let begun = taken + DISPATCH;
        let ended = begun + known[i].duration;
        free_at[0] = (ended, w);
        let k = &mut known[i];
        k.taken = Some(taken);
        k.begun = Some(begun);
        k.ended = Some(ended);
        k.run_tid = Some(w);
        k.waited_for = completions
            .iter()
            .filter(|&&c| c > k.submitted && c <= taken)
            .count() as u64;
        completions.push(ended);
    }
}

fn ns(ticks: u64) -> u64 {
    (u128::from(ticks) * 1_000_000_000 / u128::from(HZ)) as u64
}

/// The workload through a pool in many-thread mode, flushed as a version 4 file.
fn flushed(w: &Workload, mode: Mode) -> ThreadsFile {
    flushed_as(w, mode, PID)
}

/// [`flushed`] as process `pid`.
fn flushed_as(w: &Workload, mode: Mode, pid: u32) -> ThreadsFile {
    let geometry = Geometry {
        blocks: 256,
        block_slots: pool::BLOCK_HEADER_SLOTS + 24,
        active: 8,
    };
    let base = 0x10_0000;
    let mut writer = PoolWriter::new(mode, geometry, base);
    let mut started = std::collections::BTreeSet::new();
    for &(counter, tid, op) in &w.ops {
        assert!(
            counter < w.flush,
            "the workload writes nothing at or after the flush"
        );
        if started.insert(tid) {
            writer.start_thread(tid);
        }
        let kept = match op {
            Op::Enter(m) => writer.entry(tid, m, counter).unwrap(),
            Op::Exit => writer.exit(tid, counter),
            Op::Task(kind, task, queue) => writer.task(tid, kind, task, queue, counter).unwrap(),
        };
        assert!(kept, "the pool is big enough to keep every record");
    }
    let streams = pool::thread_streams(&writer.snapshot(), geometry, base).unwrap();
    ThreadsFile::from_streams(
        ProcessHeader {
            mode,
            timer_hz: HZ,
            reference_counter: w.flush,
            wall_clock_ns: 1_700_000_000_000_000_000,
            pid,
            process_name: "com.example.app".to_owned(),
            reason: "anr".to_owned(),
            metadata: BTreeMap::new(),
        },
        streams,
        &w.names,
        &BTreeMap::new(),
        M.iter().map(|(m, n)| (*m, (*n).to_owned())).collect(),
    )
}

fn report(w: &Workload, mode: Mode, tau_ns: u64) -> Report {
    // Through the bytes, as `hubble tasks` reads a file.
    let bytes = flushed(w, mode).to_bytes().unwrap();
    let runs = ThreadsFile::parse(&bytes).unwrap().into_run_files();
    // (The simulated workloads; a hand-made trace is a few records.)
    assert!(
        w.known.is_empty() || runs.iter().any(|r| r.seq.last > r.seq.first),
        "blocks small enough that a thread fills several"
    );
    let inputs: Vec<Input<'_>> = runs
        .iter()
        .map(|r| Input {
            file: &r.file,
            name: "workload.hubble",
        })
        .collect();
    queuing(&inputs, &vec![w.flush; inputs.len()], tau_ns).unwrap()
}

/// What the report must say of each task, from the simulation alone.
fn expected_tasks(w: &Workload) -> Vec<hubble_analysis::queuing::Task> {
    w.known
        .iter()
        .map(|k| {
            let unit = &w.units[k.unit];
            let begun = k.begun.filter(|&b| b < w.flush);
            hubble_analysis::queuing::Task {
                pid: PID,
                site: Some(name(k.site)),
                task: k.task,
                queue: unit.queue,
                submit_tid: Some(MAIN),
                run_tid: begun.and(k.run_tid),
                method: begun.map(|_| name(unit.task_method())),
                submitted: Some(k.submitted),
                begun,
                ended: k.ended,
                queued_ns: Some(ns(begun.unwrap_or(w.flush) - k.submitted)),
                still_queued: begun.is_none(),
                exec_ns: begun.map(|b| ns(k.ended.unwrap_or(w.flush) - b)),
                running: begun.is_some() && k.ended.is_none(),
                queue_length: (unit.queue != 0).then_some(k.waited_for),
            }
        })
        .collect()
}

const SEEDS: std::ops::Range<u64> = 1..25;

// Every task's submission, begin, end, queuing and execution time and queue length, exactly,
// in both modes; a recycled Message is two tasks.
#[test]
fn every_tasks_queuing_is_what_the_workload_produced() {
    let (mut queued_at_flush, mut running_at_flush, mut recycled, mut waited) = (0, 0, 0, 0);
    let mut twice_queued = 0;
    for seed in SEEDS {
        let w = build(seed);
        let want = expected_tasks(&w);
        for mode in [Mode::Bits64, Mode::Bits32] {
            let r = report(&w, mode, 500_000_000);
            assert_eq!(r.tasks.len(), want.len(), "seed {seed} {mode:?}");
            for (got, want) in r.tasks.iter().zip(&want) {
                assert_eq!(got, want, "seed {seed} {mode:?}");
            }
        }
        queued_at_flush += want.iter().filter(|t| t.still_queued).count();
        running_at_flush += want.iter().filter(|t| t.running).count();
        waited += want
            .iter()
            .filter(|t| t.queue_length.unwrap_or(0) > 1)
            .count();
        let mut ids: Vec<u32> = want
            .iter()
            .filter(|t| t.queue == 0x0c00_0003)
            .map(|t| t.task)
            .collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        recycled += n - ids.len();
        twice_queued += (1..want.len())
            .filter(|&i| {
                want[i].queue == 0x0b00_0002
                    && want[i - 1].task == want[i].task
                    && want[i - 1]
                        .begun
                        .map_or(true, |b| b > want[i].submitted.unwrap())
            })
            .count();
    }
    assert!(twice_queued > 0, "a Runnable queued twice at once");
    // The workload reaches every case.
    assert!(
        queued_at_flush > 0 && running_at_flush > 0,
        "{queued_at_flush} {running_at_flush}"
    );
    assert!(recycled > 0 && waited > 0, "{recycled} {waited}");
}

// Each queue's capacity is its unit's number of workers (every unit saturates), and plain
// threads have no queue.
#[test]
fn capacities_are_the_units_worker_counts() {
    for seed in SEEDS {
        let w = build(seed);
        let r = report(&w, Mode::Bits64, 500_000_000);
        assert!(r.queues.iter().all(|q| q.pid == PID));
        let got: Vec<(u32, u64, u64)> = r
            .queues
            .iter()
            .map(|q| (q.queue, q.capacity, q.tasks))
            .collect();
        let want: Vec<(u32, u64, u64)> = w
            .units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.queue != 0)
            .map(|(i, u)| {
                let tasks = w.known.iter().filter(|k| k.unit == i).count() as u64;
                (u.queue, u.capacity as u64, tasks)
            })
            .collect();
        assert_eq!(got, want, "seed {seed}");
    }
}

// Groups by submitting site (the framework frames between a site and the submitting method
// skipped), DiagDroid's M_q and M_e, the anomalous ones first, and for tasks queued τ or more
// the sites they waited behind; τ moves the verdicts.
#[test]
fn groups_rank_sites_and_name_what_they_waited_behind() {
    for seed in SEEDS {
        let w = build(seed);
        let tasks = expected_tasks(&w);
        for tau in [500_000_000u64, 100_000_000, 5_000_000_000] {
            let r = report(&w, Mode::Bits64, tau);
            assert_eq!(r.tau_ns, tau);
            let mut sites: Vec<String> = tasks.iter().filter_map(|t| t.site.clone()).collect();
            sites.sort();
            sites.dedup();
            assert_eq!(r.groups.len(), sites.len(), "seed {seed}");
            for g in &r.groups {
                let mine: Vec<usize> = (0..tasks.len())
                    .filter(|&i| tasks[i].site.as_ref() == Some(&g.site))
                    .collect();
                let mq = mine
                    .iter()
                    .map(|&i| tasks[i].queued_ns.unwrap())
                    .max()
                    .unwrap();
                let me = mine
                    .iter()
                    .map(|&i| tasks[i].exec_ns.unwrap_or(0))
                    .max()
                    .unwrap();
                assert_eq!(
                    (g.tasks, g.max_queued_ns, g.max_exec_ns),
                    (mine.len() as u64, mq, me)
                );
                assert_eq!(g.anomalous, mq > tau || me > tau, "{}", g.site);
                let unit = &w.units[w.known[mine[0]].unit];
                let cap = if unit.queue == 0 {
                    0
                } else {
                    unit.capacity as u64
                };
                assert_eq!(g.capacity, cap, "{}", g.site);
                let over: Vec<usize> = mine
                    .iter()
                    .copied()
                    .filter(|&i| tasks[i].queued_ns.unwrap() >= tau)
                    .collect();
                assert_eq!(g.queued_over_tau, over.len() as u64);
                let mut behind: BTreeMap<String, u64> = BTreeMap::new();
                let (mut exec_sum, mut exec_n, mut len_sum) = (0u64, 0u64, 0u64);
                for &i in &over {
                    len_sum += tasks[i].queue_length.unwrap_or(0);
                    for &j in &w.known[i].ahead {
                        *behind.entry(name(w.known[j].site)).or_default() += 1;
                        exec_sum += tasks[j].exec_ns.unwrap_or(0);
                        exec_n += 1;
                    }
                }
                assert_eq!(g.behind, behind, "seed {seed} {}", g.site);
                assert_eq!(
                    g.mean_exec_ahead_ns,
                    exec_sum.checked_div(exec_n).unwrap_or(0)
                );
                let mean = if over.is_empty() {
                    0.0
                } else {
                    len_sum as f64 / over.len() as f64
                };
                assert_eq!(g.mean_queue_length, mean);
            }
            // Ranked: anomalous first, then by the larger of M_q and M_e, then by site.
            let keys: Vec<(bool, u64, &str)> = r
                .groups
                .iter()
                .map(|g| {
                    (
                        !g.anomalous,
                        u64::MAX - g.max_queued_ns.max(g.max_exec_ns),
                        g.site.as_str(),
                    )
                })
                .collect();
            let mut sorted = keys.clone();
            sorted.sort();
            assert_eq!(keys, sorted, "seed {seed} tau {tau}");
        }
        // τ itself is not anomalous (DiagDroid: "larger than a threshold τ"), one ns less is,
        // for either metric: the looper's and the threads' groups have M_e > M_q.
        if seed <= 4 {
            let r = report(&w, Mode::Bits64, 500_000_000);
            for g in &r.groups {
                let top = g.max_queued_ns.max(g.max_exec_ns);
                for (tau, anomalous) in [(top, false), (top - 1, true)] {
                    let again = report(&w, Mode::Bits64, tau);
                    let h = again.groups.iter().find(|h| h.site == g.site).unwrap();
                    assert_eq!(h.anomalous, anomalous, "{} at tau {tau}", g.site);
                }
            }
            assert!(r.groups.iter().any(|g| g.max_exec_ns > g.max_queued_ns));
            assert!(r.groups.iter().any(|g| g.max_queued_ns > g.max_exec_ns));
        }
        // The serial executor's quick tasks wait behind its slow first one (DiagDroid's case 1),
        // and thumbnails behind prefetches on the undersized pool.
        let r = report(&w, Mode::Bits64, 500_000_000);
        let feed = r
            .groups
            .iter()
            .find(|g| g.site.contains("Feed.refresh"))
            .unwrap();
        assert!(feed.anomalous && feed.capacity == 1, "{feed:?}");
        assert!(
            feed.behind.keys().all(|s| s.contains("Feed.refresh")),
            "{feed:?}"
        );
        assert!(r.groups.iter().all(|g| g.site != UNKNOWN_SITE));
    }
}

// A begin whose submission is older than the window: the task has no site, queuing or queue
// length, only its execution; a submission whose begin is past the flush is still queued.
#[test]
fn a_task_half_in_the_window_keeps_what_the_window_shows() {
    let w = build(3);
    let mut ops: Vec<(u64, u32, Op)> = w.ops.clone();
    // Drop the first submission's records from MAIN (its site, path, record and exits).
    let first = w.known[0].submitted;
    ops.retain(|&(c, tid, _)| !(tid == MAIN && c <= first + 8 && c + 8 >= first));
    let w2 = Workload {
        ops,
        known: w.known.clone(),
        units: Vec::new(),
        flush: w.flush,
        names: w.names.clone(),
    };
    let r = report(&w2, Mode::Bits64, 500_000_000);
    let t = r.tasks.iter().find(|t| t.task == w.known[0].task).unwrap();
    assert_eq!(t.site, None);
    assert_eq!(
        (t.submitted, t.queued_ns, t.queue_length),
        (None, None, None)
    );
    assert_eq!(t.begun, w.known[0].begun);
    let end = w.known[0].ended.unwrap_or(w.flush);
    assert_eq!(t.exec_ns, Some(ns(end - w.known[0].begun.unwrap())));
    assert_eq!(t.running, w.known[0].ended.is_none());
}

// Identities are per process: two processes whose tasks and queues have the same identity
// hashes (two workloads numbered alike, timed differently), read together, give each process
// exactly its own report.
#[test]
fn processes_are_kept_apart() {
    let (a, b) = (build(3), build(5));
    let files = [
        flushed_as(&a, Mode::Bits64, 100).to_bytes().unwrap(),
        flushed_as(&b, Mode::Bits64, 200).to_bytes().unwrap(),
    ];
    let runs: Vec<_> = files
        .iter()
        .flat_map(|f| ThreadsFile::parse(f).unwrap().into_run_files())
        .collect();
    let inputs: Vec<Input<'_>> = runs
        .iter()
        .map(|r| Input {
            file: &r.file,
            name: "two.hubble",
        })
        .collect();
    let flushes: Vec<u64> = runs
        .iter()
        .map(|r| {
            if r.file.header.pid == 100 {
                a.flush
            } else {
                b.flush
            }
        })
        .collect();
    let r = queuing(&inputs, &flushes, 500_000_000).unwrap();
    for (w, pid) in [(&a, 100u32), (&b, 200)] {
        let want: Vec<_> = expected_tasks(w)
            .into_iter()
            .map(|mut t| {
                t.pid = pid;
                t
            })
            .collect();
        let got: Vec<_> = r.tasks.iter().filter(|t| t.pid == pid).cloned().collect();
        assert_eq!(got, want, "pid {pid}");
        let queues = r.queues.iter().filter(|q| q.pid == pid).count();
        assert_eq!(queues, 4, "pid {pid}");
    }
}

// The definitions at one tick, on a hand-made trace (queue Q, capacity 1): task 1 ends on the
// very tick tasks 2 and 3 are submitted (from two threads), so neither waits for it, nor for
// each other (submitted together: neither is ahead); task 4 joins and ends on the tick task 5
// is submitted. A BeginUntilEnd whose worker loop returns before calling anything at its depth
// keeps the name of the method that wrote it. τ = 1 ns, so every wait is listed with what it
// waited behind.
#[test]
fn ticks_at_the_edges_follow_the_definitions() {
    const Q: u32 = 0x0a00_000a;
    let m = method;
    let mut ops: Vec<(u64, u32, Op)> = Vec::new();
    let submit = |ops: &mut Vec<(u64, u32, Op)>, tid: u32, site: &str, task: u32, at: u64| {
        ops.push((at - 1, tid, Op::Enter(m(site))));
        ops.push((at, tid, Op::Enter(m("ThreadPoolExecutor.execute"))));
        ops.push((at, tid, Op::Task(TaskKind::Submit, task, Q)));
        ops.push((at + 1, tid, Op::Exit));
        ops.push((at + 2, tid, Op::Exit));
    };
    submit(&mut ops, MAIN, "Feed.refresh", 1, 50);
    submit(&mut ops, MAIN, "Feed.refresh", 2, 200);
    submit(&mut ops, 2, "Gallery.prefetch", 3, 200);
    submit(&mut ops, MAIN, "Feed.refresh", 5, 700);
    let w = 10;
    ops.push((1, w, Op::Enter(m("Worker.run"))));
    for (task, queue, from, to) in [
        (1u32, 0, 100u64, 200u64),
        (2, 0, 300, 400),
        (3, 0, 500, 600),
        (4, Q, 700, 700),
    ] {
        ops.push((from, w, Op::Enter(m("FutureTask.run"))));
        ops.push((from, w, Op::Task(TaskKind::Begin, task, queue)));
        ops.push((to, w, Op::Exit));
    }
    let p = 20;
    ops.push((10, p, Op::Enter(m("Worker.run"))));
    ops.push((20, p, Op::Enter(m("beforeExecute"))));
    ops.push((20, p, Op::Task(TaskKind::BeginUntilEnd, 6, 0x0b00_000b)));
    ops.push((21, p, Op::Exit));
    ops.push((22, p, Op::Exit));
    ops.push((30, p, Op::Enter(m("Worker.run"))));
    ops.push((31, p, Op::Enter(m("Json.parse"))));
    ops.sort_by_key(|o| o.0);
    let names = BTreeMap::from([
        (MAIN, "main".to_owned()),
        (2, "c".to_owned()),
        (w, "w".to_owned()),
        (p, "p".to_owned()),
    ]);
    let work = Workload {
        ops,
        known: Vec::new(),
        units: Vec::new(),
        flush: 1000,
        names,
    };
    let r = report(&work, Mode::Bits64, 1);
    let by_task = |t: u32| r.tasks.iter().find(|x| x.task == t).unwrap();
    let lengths: Vec<Option<u64>> = [1, 2, 3, 5]
        .iter()
        .map(|&t| by_task(t).queue_length)
        .collect();
    assert_eq!(lengths, [Some(0), Some(0), Some(0), Some(0)]);
    assert_eq!(by_task(5).queued_ns, Some(ns(300)));
    assert!(by_task(5).still_queued);
    assert_eq!(
        r.queues
            .iter()
            .map(|q| (q.queue, q.capacity))
            .collect::<Vec<_>>(),
        [(Q, 1), (0x0b00_000b, 1)]
    );
    for g in &r.groups {
        assert!(
            g.behind.is_empty(),
            "{}: waited behind {:?}",
            g.site,
            g.behind
        );
    }
    let t6 = by_task(6);
    assert_eq!(
        t6.method.as_deref(),
        Some(name(m("beforeExecute")).as_str())
    );
    assert!(t6.running);
}
