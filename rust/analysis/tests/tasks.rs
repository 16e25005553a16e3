//! The asynchronous-task report on a hand-made worker thread.

use std::collections::BTreeMap;

use hubble_analysis::tasks::tasks;
use hubble_analysis::Input;
use hubble_format::{Mode, RingWriter, TraceFile, TraceHeader};

/// A pool worker as `ThreadPoolExecutor` runs one: a single `runWorker` frame looping over
/// `getTask`, `beforeExecute`, the task's `run()` and `afterExecute`, then `processWorkerExit`
/// (OpenJDK's, which Android's libcore takes). Each `run()` is one execution; the loop and its
/// own calls are none. A `Handler` dispatch that calls nothing is named after itself.
#[test]
fn each_task_a_pool_worker_runs_is_one_execution_and_posts_are_counted() {
    let names = [
        (0x100u64, "void java.util.concurrent.ThreadPoolExecutor.runWorker(java.util.concurrent.ThreadPoolExecutor$Worker)"),
        (0x200, "java.lang.Runnable java.util.concurrent.ThreadPoolExecutor.getTask()"),
        (0x300, "void com.example.app.Download.run()"),
        (0x400, "boolean android.os.Handler.post(java.lang.Runnable)"),
        (0x500, "void android.os.Handler.dispatchMessage(android.os.Message)"),
        (0x600, "void java.util.concurrent.ThreadPoolExecutor.beforeExecute(java.lang.Thread, java.lang.Runnable)"),
        (0x700, "void java.util.concurrent.ThreadPoolExecutor.afterExecute(java.lang.Runnable, java.lang.Throwable)"),
        (0x800, "void java.util.concurrent.ThreadPoolExecutor.processWorkerExit(java.util.concurrent.ThreadPoolExecutor$Worker, boolean)"),
    ];
    // 1 MHz: one tick = 1 µs.
    let mut ring = RingWriter::new(Mode::Bits64, 256);
    ring.start(0);
    let mut t = 1;
    ring.entry(0x100, t).unwrap(); // runWorker: the worker's whole life
                                   // Tasks of 20 ms, 16.995 ms, exactly 16 ms and 1 ms: two are longer than 16 ms. getTask waits
                                   // 50 ms before the first (a loop frame that would count it would be far off).
    for (k, length) in [20_000u32, 16_995, 16_000, 1_000].into_iter().enumerate() {
        let wait = if k == 0 { 50_000 } else { 2 };
        ring.entry(0x200, t + 1).unwrap(); // getTask
        ring.exit(t + 1 + wait);
        t += wait;
        ring.entry(0x600, t + 2).unwrap(); // beforeExecute
        ring.exit(t + 3);
        ring.entry(0x300, t + 4).unwrap(); // the task
        ring.entry(0x400, t + 5).unwrap(); // it posts to a handler
        ring.exit(t + 6);
        ring.exit(t + 4 + length);
        ring.entry(0x700, t + 5 + length).unwrap(); // afterExecute
        ring.exit(t + 6 + length);
        t += 10 + length;
    }
    ring.entry(0x800, t).unwrap(); // processWorkerExit
    ring.exit(t + 1);
    ring.exit(t + 2); // runWorker returns
    t += 3;
    ring.entry(0x500, t).unwrap(); // a dispatch that calls nothing
    ring.exit(t + 2);
    let file = worker_file(&ring, &names, u64::from(t) + 10);
    let report = tasks(&[Input {
        file: &file,
        name: "t",
    }])
    .unwrap();
    assert_eq!(report.len(), 1);
    let r = &report[0];
    assert_eq!(r.thread, "pool-1-thread-1");
    assert_eq!(r.scheduled.get("Handler.post"), Some(&4));
    assert_eq!(r.executions.len(), 2, "{:#?}", r.executions);
    let download = &r.executions[0];
    assert_eq!(download.task, names[2].1);
    assert!(download.dispatcher.contains("runWorker"));
    assert_eq!(download.count, 4);
    assert_eq!(download.total_ns, (20_000 + 16_995 + 16_000 + 1_000) * 1000);
    assert_eq!(download.max_ns, 20_000 * 1000);
    assert_eq!(download.over_16ms, 2);
    let dispatch = &r.executions[1];
    assert_eq!(dispatch.task, names[4].1);
    assert_eq!((dispatch.count, dispatch.total_ns), (1, 2000));
}

/// The worker thread's file: `ring` at 1 MHz, flushed at `flush`.
fn worker_file(ring: &RingWriter, names: &[(u64, &str)], flush: u64) -> TraceFile {
    let slots = ring.slots()[..(ring.write_pos_bytes() / 8) as usize].to_vec();
    let symbols: BTreeMap<u64, String> = names.iter().map(|(p, n)| (*p, (*n).to_owned())).collect();
    TraceFile {
        header: TraceHeader {
            mode: Mode::Bits64,
            timer_hz: 1_000_000,
            reference_counter: flush,
            wall_clock_ns: 1_000_000_000_000,
            ring_bytes: ring.slots().len() as u64 * 8,
            write_pos: ring.write_pos_bytes(),
            pid: 7,
            tid: 8,
            thread_name: "pool-1-thread-1".into(),
            process_name: "p".into(),
            reason: "r".into(),
            anchors: Vec::new(),
            metadata: Default::default(),
        },
        window: slots,
        symbols,
    }
}

fn executions(file: &TraceFile) -> Vec<(String, u64, u64)> {
    let report = tasks(&[Input { file, name: "t" }]).unwrap();
    report[0]
        .executions
        .iter()
        .map(|e| (e.task.clone(), e.count, e.total_ns))
        .collect()
}

const DISPATCH: (u64, &str) = (
    0x500,
    "void android.os.Handler.dispatchMessage(android.os.Message)",
);

/// A thread whose first frame is a dispatch that calls nothing (no deeper frame was seen
/// before it): the execution is named after the dispatch itself.
#[test]
fn a_first_frame_without_callees_names_itself() {
    let mut ring = RingWriter::new(Mode::Bits64, 64);
    ring.start(0);
    ring.entry(DISPATCH.0, 1).unwrap();
    ring.exit(4);
    let file = worker_file(&ring, &[DISPATCH], 10);
    assert_eq!(executions(&file), [(DISPATCH.1.to_owned(), 1, 3000)]);
}

/// Of two callees that ran equally long, the first one names the task.
#[test]
fn of_two_equally_long_callees_the_first_names_the_task() {
    let names = [
        DISPATCH,
        (0x600, "void a.First.run()"),
        (0x700, "void a.Second.run()"),
    ];
    let mut ring = RingWriter::new(Mode::Bits64, 64);
    ring.start(0);
    ring.entry(0x500, 1).unwrap();
    ring.entry(0x600, 2).unwrap();
    ring.exit(12);
    ring.entry(0x700, 13).unwrap();
    ring.exit(23);
    ring.exit(30);
    let file = worker_file(&ring, &names, 40);
    assert_eq!(executions(&file), [(names[1].1.to_owned(), 1, 29_000)]);
}
