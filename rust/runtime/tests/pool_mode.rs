//! Many-thread mode in the control plane (`docs/many-threads.md`).
#![cfg(not(loom))]

use hubble_format::pool::{Geometry, H_CLOSE, H_STATE, OWNED};
use hubble_format::Mode;
use hubble_runtime::block::{self, ThreadBlock, SLOT};
use hubble_runtime::pool::{self, Pool};

const MODE: Mode = Mode::Bits64;

/// docs/many-threads.md "What is left" 3: a thread that answers a stop (cursor 0, end published)
/// and exits before the control thread restarts it must not keep its block OWNED: nobody
/// restarts a thread that is gone, so the pool would lose the block and the flush its records.
#[test]
fn a_thread_that_exits_after_answering_a_stop_has_its_block_sealed() {
    let g = Geometry {
        blocks: 8,
        block_slots: 64,
        active: 2,
    };
    let p = Pool::new(MODE, g).unwrap();
    let b = ThreadBlock::default();
    pool::start(&b, &p, 0);
    for i in 0..5u64 {
        assert!(pool::trace_entry(&b, &p, 7, 0x1000 + 16 * i, 100 + i));
    }
    let held = b.end.load(std::sync::atomic::Ordering::Relaxed);
    block::request_stop(&b);
    assert!(!pool::trace_exit(&b, &p, 7, 200), "answers the stop");
    let end = block::poll_stopped(&b).expect("published");
    pool::unregister(&b, &p);
    let at = |slot: usize| p.copy()[(held - p.base()) / SLOT + slot];
    assert_ne!(at(H_STATE), OWNED, "the block of a thread gone stays owned");
    assert_eq!(at(H_CLOSE), end as u64);
}

// ---------------------------------------------------------------------------------------------
// The control plane in many-thread mode, with the runtime's doubles.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use hubble_format::{EventKind, Trace};
use hubble_runtime::props::CONSENT;
use hubble_runtime::{Anr, Art, Config, Control, RuntimeError};
use hubble_testkit::runtime::{FakeArt, FakeProperties, FakeThread, MemStorage};

/// (entry?, method, full counter) of one record, as the test's thread wrote it.
type Rec = (bool, u64, u64);

/// 128 blocks of 4 KiB, A = 16: room for everything the tests write, so the pool keeps every
/// record (checked: no drop, and the head never passes the block count, so no block is reused).
const G: Geometry = Geometry {
    blocks: 128,
    block_slots: 512,
    active: 16,
};

fn pool_control(stop_timeout: Duration) -> (Arc<Control<FakeArt>>, Arc<MemStorage>) {
    let mut c = Config::new("com.example", "com.example", PathBuf::from("/data/hubble"));
    c.mode = MODE;
    c.pool = Some(G);
    c.max_files = 100;
    c.stop_timeout = stop_timeout;
    let p = Arc::new(FakeProperties::default());
    p.set(CONSENT, "1");
    let files = Arc::new(MemStorage::default());
    let control = Control::new(FakeArt::default(), c, p, Box::new(files.clone()));
    (Arc::new(control), files)
}

/// A method of thread `tid` (1-slot entries: below 2^32).
fn method(tid: u32, i: u32) -> u64 {
    0x1000_0000 | (u64::from(tid) << 12) | (u64::from(i % 256) << 4)
}

/// `calls` nested calls on `t`, returning what was written (every record must be accepted).
fn write_calls(c: &Control<FakeArt>, t: &FakeThread, tid: u32, calls: u32) -> Vec<Rec> {
    let p = c.pool().expect("pool mode");
    let mut out = Vec::new();
    t.to_runnable();
    for i in 0..calls {
        let (m, now) = (method(tid, i), c.art().timer());
        assert!(t.pool_entry(p, tid, m, now), "tid {tid} entry {i}");
        out.push((true, m, now));
    }
    for i in 0..calls {
        let now = c.art().timer();
        assert!(t.pool_exit(p, tid, now), "tid {tid} exit {i}");
        out.push((false, 0, now));
    }
    t.to_native();
    out
}

enum Cmd {
    /// Nested calls, then native (the flush force-stops it).
    Write(u32),
    /// Runnable: calls as fast as it can, up to a bound, then waits (still runnable, no trace
    /// point) for the doorbell and answers it with one more trace point.
    Spin(usize),
    /// `ThreadDetached` on itself, then the OS thread ends.
    Exit,
}

struct Worker {
    tid: u32,
    thread: Arc<FakeThread>,
    tx: mpsc::Sender<Cmd>,
    done: mpsc::Receiver<Vec<Rec>>,
    started: mpsc::Receiver<()>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Worker {
    fn start(c: &Arc<Control<FakeArt>>, tid: u32, name: &str) -> Worker {
        let thread: Arc<FakeThread> = Arc::from(FakeThread::new());
        c.thread_attached(thread.handle(), tid, name, false);
        let (tx, rx) = mpsc::channel::<Cmd>();
        let (done_tx, done) = mpsc::channel();
        let (started_tx, started) = mpsc::channel();
        let (c2, t) = (c.clone(), thread.clone());
        let handle = std::thread::spawn(move || {
            while let Ok(cmd) = rx.recv() {
                match cmd {
                    Cmd::Write(n) => done_tx.send(write_calls(&c2, &t, tid, n)).unwrap(),
                    Cmd::Spin(bound) => {
                        let p = c2.pool().unwrap();
                        let mut out = Vec::new();
                        t.to_runnable();
                        let mut i = 0u32;
                        loop {
                            if out.len() >= bound {
                                // A long stretch without a trace point, until the doorbell.
                                while t.block.stop.load(Ordering::Acquire) == 0 {
                                    std::thread::yield_now();
                                }
                            }
                            let now = c2.art().timer();
                            let rec = if i % 2 == 0 {
                                (t.pool_entry(p, tid, method(tid, i), now), true)
                            } else {
                                (t.pool_exit(p, tid, now), false)
                            };
                            if !rec.0 {
                                break; // answered the stop: not written
                            }
                            out.push((rec.1, if rec.1 { method(tid, i) } else { 0 }, now));
                            if i == 0 {
                                started_tx.send(()).unwrap();
                            }
                            i += 1;
                        }
                        t.to_native();
                        done_tx.send(out).unwrap();
                    }
                    Cmd::Exit => {
                        c2.thread_detached(t.handle());
                        done_tx.send(Vec::new()).unwrap();
                        return;
                    }
                }
            }
        });
        Worker {
            tid,
            thread,
            tx,
            done,
            started,
            handle: Some(handle),
        }
    }
    fn send(&self, cmd: Cmd) {
        self.tx.send(cmd).unwrap();
    }
    fn wait(&self) -> Vec<Rec> {
        self.done.recv_timeout(Duration::from_secs(30)).unwrap()
    }
    fn exit(mut self) {
        self.send(Cmd::Exit);
        self.wait();
        self.handle.take().unwrap().join().unwrap();
    }
}

/// The file at `path`, per tid: every run's records decoded (start records left out), runs in
/// order, with the counters recovered from the file alone.
fn records_by_tid(files: &MemStorage, path: &std::path::Path) -> (Trace, BTreeMap<u32, Vec<Rec>>) {
    let bytes = files.files.lock().unwrap()[path].clone();
    let trace = Trace::parse(&bytes).expect("the flush's file parses");
    let mut out: BTreeMap<u32, Vec<Rec>> = BTreeMap::new();
    for section in trace.sections() {
        let recs = out.entry(section.tid).or_default();
        for run in &section.runs {
            for e in run.decode_events(MODE).expect("every run decodes").events {
                match e.kind {
                    EventKind::Entry { method } => recs.push((true, method, e.counter)),
                    EventKind::Exit => recs.push((false, 0, e.counter)),
                    EventKind::Start => {}
                    EventKind::Task { .. } => panic!("no trace point here writes a task record"),
                }
            }
        }
    }
    out.retain(|_, v| !v.is_empty());
    (trace, out)
}

fn add(expected: &mut BTreeMap<u32, Vec<Rec>>, tid: u32, recs: Vec<Rec>) {
    if !recs.is_empty() {
        expected.entry(tid).or_default().extend(recs);
    }
}

/// One round: every long-lived worker writes (some runnable and answering the doorbell, the
/// others in native code at the flush), short-lived threads start, write and exit before it,
/// two more start and exit without a trace point. Returns what each thread wrote.
fn round(
    c: &Arc<Control<FakeArt>>,
    workers: &[Worker],
    next_tid: &mut u32,
    salt: u32,
) -> (BTreeMap<u32, Vec<Rec>>, Vec<usize>) {
    let mut expected = BTreeMap::new();
    let mut spinners = Vec::new();
    for (i, w) in workers.iter().enumerate() {
        if i % 4 == 3 {
            w.send(Cmd::Spin(300 + 200 * i));
            spinners.push(i);
        } else if i == 0 {
            // Many blocks: a run across block ends.
            w.send(Cmd::Write(700 + salt));
        } else {
            w.send(Cmd::Write(3 + 5 * i as u32 + salt));
        }
    }
    for i in 0..8u32 {
        let tid = *next_tid;
        *next_tid += 1;
        let w = Worker::start(c, tid, &format!("short-{tid}"));
        c.rebalance().unwrap(); // the control thread's answer to the attach
        if i < 6 {
            w.send(Cmd::Write(10 + i + salt));
            add(&mut expected, tid, w.wait());
        }
        w.exit();
    }
    for (i, w) in workers.iter().enumerate() {
        if spinners.contains(&i) {
            w.started.recv_timeout(Duration::from_secs(30)).unwrap();
        } else {
            add(&mut expected, w.tid, w.wait());
        }
    }
    (expected, spinners)
}

/// `debug.hubble.threads all` traces every thread in one pool; a flush stops them
/// all (doorbells, force stops of threads in native code), writes ONE version 4 file whose runs
/// decode to exactly what each thread wrote (short-lived threads gone before the flush
/// included), restarts every thread, and the next flush holds exactly what they wrote since.
#[test]
fn every_thread_is_traced_and_each_flush_writes_one_file_of_what_they_wrote() {
    let (c, files) = pool_control(Duration::from_secs(20));
    c.start_tracing().unwrap();
    let workers: Vec<Worker> = (0..16)
        .map(|i| Worker::start(&c, 200 + i, &format!("worker-{i}")))
        .collect();
    c.rebalance().unwrap();
    assert_eq!(
        c.traced_threads().len(),
        16,
        "every thread, not the N most recent"
    );
    let mut next_tid = 1000;
    let mut paths = Vec::new();
    for r in 0..2u32 {
        let (mut expected, spinners) = round(&c, &workers, &mut next_tid, r);
        let forced = c.stats.forced_stops.load(Ordering::Relaxed);
        let coop = c.stats.cooperative_stops.load(Ordering::Relaxed);
        let flushed = c.flush(workers[1].thread.handle(), "jank").unwrap();
        for &i in &spinners {
            add(&mut expected, workers[i].tid, workers[i].wait());
        }
        // The spinners answered their doorbells; the others were in native code.
        assert_eq!(
            c.stats.cooperative_stops.load(Ordering::Relaxed) - coop,
            spinners.len() as u64
        );
        assert_eq!(
            c.stats.forced_stops.load(Ordering::Relaxed) - forced,
            (16 - spinners.len()) as u64
        );
        let path = flushed.path.expect("consent given");
        assert!(
            path.to_str().unwrap().ends_with("-0-jank.hubble"),
            "{path:?}"
        );
        let (trace, got) = records_by_tid(&files, &path);
        let Trace::Threads(file) = &trace else {
            panic!("not a version 4 file")
        };
        assert_eq!(file.header.reason, "jank");
        // Named by its header's wall clock in ms, this process, tid 0 (every thread).
        assert_eq!(
            path.file_name().unwrap().to_str().unwrap(),
            format!(
                "{:013}-{}-0-jank.hubble",
                file.header.wall_clock_ns / 1_000_000,
                std::process::id()
            )
        );
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>()
        );
        for (tid, want) in &expected {
            assert_eq!(&got[tid], want, "round {r}: thread {tid}");
        }
        // Names of threads gone are kept; every method is named once.
        let t = file.threads.iter().find(|t| t.tid == 1000 + 8 * r).unwrap();
        assert_eq!(t.thread_name, format!("short-{}", 1000 + 8 * r));
        for m in expected.values().flatten().filter(|r| r.0).map(|r| r.1) {
            assert_eq!(file.symbols[&m], FakeArt::name_of(m));
        }
        assert!(
            file.threads
                .iter()
                .any(|t| t.runs.iter().map(|r| r.blocks).sum::<u32>() > 2),
            "a run across blocks"
        );
        paths.push(path);
    }
    assert_eq!(files.files.lock().unwrap().len(), 2, "one file per flush");
    let p = c.pool().unwrap();
    assert_eq!(p.stats().drops.load(Ordering::Relaxed), 0);
    assert!(pool::head(p) < G.blocks as u64, "no block was reused");
    for w in workers {
        w.exit();
    }
}

/// The ANR request in many-thread mode: one file of every thread with reason `anr`.
#[test]
fn an_anr_in_pool_mode_writes_one_file_of_every_thread() {
    let (c, files) = pool_control(Duration::from_secs(20));
    c.start_tracing().unwrap();
    let workers: Vec<Worker> = (0..4)
        .map(|i| Worker::start(&c, 300 + i, &format!("w{i}")))
        .collect();
    c.rebalance().unwrap();
    let mut expected = BTreeMap::new();
    for w in &workers {
        w.send(Cmd::Write(5 + w.tid % 7));
        add(&mut expected, w.tid, w.wait());
    }
    assert!(c.request_anr());
    assert_eq!(c.handle_anr(), Some(Anr::Flushed(1)));
    let all = files
        .files
        .lock()
        .unwrap()
        .keys()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(all.len(), 1, "{all:?}");
    assert!(all[0].to_str().unwrap().ends_with("-0-anr.hubble"));
    let (trace, got) = records_by_tid(&files, &all[0]);
    assert_eq!(trace.common().reason, "anr");
    assert_eq!(got, expected);
    for w in workers {
        w.exit();
    }
}

/// docs/many-threads.md "What is left" 3, through the control plane: a flush times out on a
/// runnable thread T (a long stretch without calls) and writes nothing; T then answers its stop
/// and exits before anyone restarts it. `ThreadDetached` must seal T's block from its published
/// end: the next flush holds everything T wrote, and the pool has the block back. The other
/// thread was let go where it stopped (no start record), so its records are all there too.
#[test]
fn a_thread_that_exits_after_answering_a_stop_keeps_its_records_and_frees_its_block() {
    let (c, files) = pool_control(Duration::from_millis(20));
    c.start_tracing().unwrap();
    let a = Worker::start(&c, 400, "a");
    let t: Arc<FakeThread> = Arc::from(FakeThread::new());
    c.thread_attached(t.handle(), 401, "t", false);
    c.rebalance().unwrap();
    a.send(Cmd::Write(9));
    let mut expected = BTreeMap::new();
    add(&mut expected, 400, a.wait());
    let p = c.pool().unwrap();
    t.to_runnable();
    let mut wrote = Vec::new();
    for i in 0..6 {
        let now = c.art().timer();
        assert!(t.pool_entry(p, 401, method(401, i), now));
        wrote.push((true, method(401, i), now));
    }
    let held = t.block.end.load(Ordering::Relaxed);
    // T stays runnable without a trace point or a suspend check (a long call into the runtime):
    // the flush cannot stop it.
    match c.flush(a.thread.handle(), "jank") {
        Err(RuntimeError::StopTimeout(h, _)) => assert_eq!(h, t.handle()),
        other => panic!("expected a stop timeout, got {other:?}"),
    }
    assert!(files.files.lock().unwrap().is_empty());
    // T answers (its next trace point is not written) and exits.
    assert!(!t.pool_exit(p, 401, c.art().timer()));
    t.to_native();
    c.thread_detached(t.handle());
    add(&mut expected, 401, wrote);
    a.send(Cmd::Write(4));
    add(&mut expected, 400, a.wait());
    let path = c.flush(a.thread.handle(), "jank").unwrap().path.unwrap();
    let (_, got) = records_by_tid(&files, &path);
    assert_eq!(got, expected);
    let state = p.copy()[(held - p.base()) / SLOT + H_STATE];
    assert_ne!(state, OWNED, "the block of a thread gone is owned for good");
    a.exit();
}

/// A thread born while a flush holds the registry (the flush waits for a thread that has not
/// answered its stop yet) is not held up for the flush's length: its own attach gives up after
/// `ATTACH_WAIT` and it runs on untraced; the control thread's rebalance after the flush starts
/// it. Before, it waited for the registry as long as the flush did (up to the stop timeout, with
/// ART's Thread.start() caller waiting for it to run).
#[test]
fn a_thread_born_during_a_flush_is_not_held_up_by_it() {
    let (c, files) = pool_control(Duration::from_secs(20));
    c.start_tracing().unwrap();
    let slow: Arc<FakeThread> = Arc::from(FakeThread::new());
    c.thread_attached(slow.handle(), 600, "slow", false);
    c.rebalance().unwrap();
    let p = c.pool().unwrap();
    // Runnable, wrote a call, then silent (no trace point, no suspend check) until it answers
    // below, after the newborn's attach: the flush holds the registry until then.
    slow.to_runnable();
    assert!(slow.pool_entry(p, 600, method(600, 0), c.art().timer()));
    let flusher = {
        let c = c.clone();
        std::thread::spawn(move || c.flush(0, "held"))
    };
    // The flush holds the registry once it has rung the doorbell.
    while slow.block.stop.load(Ordering::Acquire) == 0 {
        std::thread::yield_now();
    }
    let newborn: Arc<FakeThread> = Arc::from(FakeThread::new());
    let (tx, rx) = mpsc::channel();
    {
        let (c, t) = (c.clone(), newborn.clone());
        std::thread::spawn(move || {
            tx.send(c.thread_attached_itself(t.handle(), 601, "newborn", false))
        });
    }
    let started = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("the newborn's attach waited for the flush");
    assert!(
        !started,
        "it cannot have started under the flush's registry lock"
    );
    assert!(!flusher.is_finished(), "the flush was still waiting");
    // Now the slow thread answers (its next trace point is not written), and the flush ends.
    assert!(!slow.pool_exit(p, 600, c.art().timer()));
    slow.to_native();
    flusher.join().unwrap().unwrap();
    // The control thread's answer to the attach: the newborn is traced from here on.
    c.rebalance().unwrap();
    newborn.to_runnable();
    let now = c.art().timer();
    assert!(
        newborn.pool_entry(p, 601, method(601, 0), now),
        "traced after the rebalance"
    );
    newborn.to_native();
    assert!(!files.files.lock().unwrap().is_empty());
}

/// A thread spinning in a loop without calls (runnable, no trace point; the loop's back edge
/// checks for suspension) while every thread is flushed, and while an ANR flushes them: each
/// flush asks it for a checkpoint, which answers its stop at its next suspend check, so both
/// files are written while it spins and hold what it wrote before. Without the checkpoint the
/// flush times out (run-test 121-simple-suspend-check found this on the real VM).
fn spinner_is_flushed(without_stop_checkpoints: bool) -> Result<(), RuntimeError> {
    let mut c = Config::new("com.example", "com.example", PathBuf::from("/data/hubble"));
    c.mode = MODE;
    c.pool = Some(G);
    c.stop_timeout = Duration::from_millis(200);
    let p = Arc::new(FakeProperties::default());
    p.set(CONSENT, "1");
    let files = Arc::new(MemStorage::default());
    let mut art = FakeArt::default();
    art.without_stop_checkpoints = without_stop_checkpoints;
    let c = Arc::new(Control::new(art, c, p, Box::new(files.clone())));
    c.start_tracing().unwrap();
    let a = Worker::start(&c, 500, "a");
    let s: Arc<FakeThread> = Arc::from(FakeThread::new());
    c.thread_attached(s.handle(), 501, "spinner", false);
    c.rebalance().unwrap();
    let (wrote_tx, wrote) = mpsc::channel();
    let quit = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let spinner = {
        let (c, s, quit) = (c.clone(), s.clone(), quit.clone());
        std::thread::spawn(move || {
            let p = c.pool().unwrap();
            s.to_runnable();
            let mut recs = Vec::new();
            for i in 0..40 {
                let now = c.art().timer();
                assert!(s.pool_entry(p, 501, method(501, i), now));
                recs.push((true, method(501, i), now));
            }
            wrote_tx.send(recs).unwrap();
            while !quit.load(Ordering::Acquire) {
                s.suspend_check();
                std::hint::spin_loop();
            }
            s.to_native();
        })
    };
    let mut expected = BTreeMap::new();
    add(
        &mut expected,
        501,
        wrote.recv_timeout(Duration::from_secs(30)).unwrap(),
    );
    a.send(Cmd::Write(7));
    add(&mut expected, 500, a.wait());
    let flushed = c.flush(a.thread.handle(), "jank");
    let anr = flushed.is_ok().then(|| {
        assert!(c.request_anr());
        c.handle_anr()
    });
    quit.store(true, Ordering::Release);
    spinner.join().unwrap();
    let path = flushed?.path.unwrap();
    let (_, got) = records_by_tid(&files, &path);
    assert_eq!(
        got, expected,
        "the spinner's records, and the other thread's"
    );
    assert_eq!(
        anr,
        Some(Some(Anr::Flushed(1))),
        "the ANR flush is not held up either"
    );
    assert!(c.stats.stop_checkpoints.load(Ordering::Relaxed) >= 2);
    a.exit();
    Ok(())
}

#[test]
fn a_thread_spinning_without_calls_answers_every_flush_at_a_suspend_check() {
    spinner_is_flushed(false).unwrap();
}

#[test]
fn without_the_checkpoint_a_thread_spinning_without_calls_holds_up_the_flush() {
    match spinner_is_flushed(true) {
        Err(RuntimeError::StopTimeout(..)) => {}
        other => panic!("expected a stop timeout, got {other:?}"),
    }
}

/// Two stops pending on a pooled thread: it was disabled (a reclaim) and did not answer in time,
/// then a flush was asked and timed out on it too. The flush takes the reclaim's place: once
/// the thread answers, the tick writes the flush's file (not only the reclaim's rebalance).
#[test]
fn a_pending_flush_outranks_a_pending_reclaim_of_a_pooled_thread() {
    let (c, files) = pool_control(Duration::from_millis(5));
    c.start_tracing().unwrap();
    let t: Arc<FakeThread> = Arc::from(FakeThread::new());
    c.thread_attached(t.handle(), 401, "t", false);
    c.rebalance().unwrap();
    let p = c.pool().unwrap();
    t.to_runnable();
    assert!(t.pool_entry(p, 401, method(401, 0), c.art().timer()));
    // Runnable without a trace point: neither stop is answered in time.
    assert!(matches!(
        c.set_thread_enabled(t.handle(), false),
        Err(RuntimeError::StopTimeout(..))
    ));
    assert!(matches!(
        c.flush(t.handle(), "jank"),
        Err(RuntimeError::StopTimeout(..))
    ));
    assert!(files.files.lock().unwrap().is_empty());
    assert!(
        !t.pool_exit(p, 401, c.art().timer()),
        "answers the doorbell"
    );
    c.tick();
    let files = files.files.lock().unwrap();
    assert_eq!(files.len(), 1, "the flush was finished");
}

/// Dead-loader names in many-thread mode: the scan reads every block of the pool and keeps
/// the names of a narrow and a wide entry (the pointer's slot, then its marker) a thread wrote
/// after other calls; the flush names both.
#[test]
fn the_dead_name_scan_keeps_what_the_pool_holds() {
    let mut cfg = Config::new("com.example", "com.example", PathBuf::from("/data/hubble"));
    cfg.mode = MODE;
    cfg.pool = Some(G);
    cfg.dead_names_scan_at = 16;
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    let files = Arc::new(MemStorage::default());
    let c = Control::new(FakeArt::default(), cfg, props, Box::new(files.clone()));
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 21, "t", false);
    c.start_tracing().unwrap();
    let p = c.pool().unwrap();
    let (wide_loader, narrow_loader) = (0x7f10_0000_0000usize, 0x7000_0000usize);
    let wide = FakeArt::loader_methods_of(wide_loader)[2];
    let narrow = FakeArt::loader_methods_of(narrow_loader)[4];
    let mut wrote = write_calls(&c, &t, 21, 3);
    t.to_runnable();
    for m in [wide, method(21, 9), narrow] {
        let now = c.art().timer();
        assert!(t.pool_entry(p, 21, m, now));
        wrote.push((true, m, now));
    }
    t.to_native();
    for l in [wide_loader, narrow_loader] {
        c.art().unload(l, |l| {
            c.class_loader_unloading(l);
        });
    }
    assert_eq!(c.dead_names(), 16);
    c.tick();
    assert_eq!(c.dead_names(), 2, "the two names the pool holds");
    let path = c.flush(0, "after").unwrap().path.unwrap();
    let (trace, got) = records_by_tid(&files, &path);
    assert_eq!(got[&21], wrote);
    let Trace::Threads(file) = &trace else {
        panic!("not a version 4 file")
    };
    for m in [wide, narrow] {
        assert_eq!(file.symbols[&m], FakeArt::name_of(m));
    }
}

/// A pooled thread disabled while it runs without trace points keeps its block until it
/// stops; once it has answered, the next tick completes the reclaim: it leaves the traced set
/// and its block is handed back. A reclaim writes no file.
#[test]
fn a_late_reclaim_of_a_pooled_thread_is_completed_on_the_next_tick() {
    let (c, files) = pool_control(Duration::from_millis(5));
    c.start_tracing().unwrap();
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 402, "t", false);
    c.rebalance().unwrap();
    let p = c.pool().unwrap();
    t.to_runnable();
    assert!(t.pool_entry(p, 402, method(402, 0), c.art().timer()));
    let held = t.block.end.load(Ordering::Relaxed);
    assert!(matches!(
        c.set_thread_enabled(t.handle(), false),
        Err(RuntimeError::StopTimeout(..))
    ));
    c.tick();
    assert_eq!(
        c.traced_threads(),
        vec![t.handle()],
        "runnable and silent: it keeps its block"
    );
    assert!(
        !t.pool_exit(p, 402, c.art().timer()),
        "answers the doorbell"
    );
    c.tick();
    assert!(c.traced_threads().is_empty(), "reclaimed");
    let state = p.copy()[(held - p.base()) / SLOT + H_STATE];
    assert_ne!(state, OWNED, "its block handed back");
    assert!(files.files.lock().unwrap().is_empty());
}

/// Idle gaps in many-thread mode (the idle-gap time anchors, in the pool): a thread idle in
/// native code across two ticks gets an anchor at its cursor, an address in its block. After
/// a gap of more than 2^32 ticks it writes on in the same block, and every record before the
/// gap decodes to the counter it was written with; walking back from the flush alone, each
/// would come out 2^32 ticks late. The file carries the anchor in the thread's section.
#[test]
fn an_idle_gap_longer_than_the_counter_wraps_is_anchored_in_the_pool() {
    let (c, files) = pool_control(Duration::from_secs(5));
    c.art().set_timer(1_000);
    c.start_tracing().unwrap();
    let (other, t) = (FakeThread::new(), FakeThread::new());
    c.thread_attached(other.handle(), 30, "other", false);
    c.thread_attached(t.handle(), 31, "t", false);
    c.rebalance().unwrap();
    // The other thread takes the first block: the anchored one is not block 0.
    let before = write_calls(&c, &other, 30, 1);
    let mut wrote = write_calls(&c, &t, 31, 3);
    c.art().set_timer(2_000);
    c.tick();
    c.tick();
    c.art().set_timer(2_000 + (1 << 32) + 5_000);
    wrote.extend(write_calls(&c, &t, 31, 2));
    let path = c.flush(0, "gap").unwrap().path.unwrap();
    let (trace, got) = records_by_tid(&files, &path);
    assert_eq!(got[&31], wrote);
    assert_eq!(got[&30], before);
    let Trace::Threads(file) = &trace else {
        panic!("not a version 4 file")
    };
    // tid 31's anchor is before its last 4 records (the 2 calls after the gap); each bound is
    // the counter of the first tick that saw the cursor there, plus the 1 ms margin.
    let anchor = |slots_after| hubble_format::TimeAnchor {
        slots_after,
        bound: 2_000 + 1_000_000,
    };
    // tid 30 idled through both ticks too, at its end.
    assert_eq!(file.threads[0].anchors, vec![anchor(0)]);
    assert_eq!(file.threads[1].anchors, vec![anchor(4)]);
}

/// BTrace's bound on active blocks: a thread that idles in native code after writing a little
/// would keep its block OWNED for good. Once the pool has gone more than N − A tickets round
/// since it took its block, the tick closes it (under its state lock); a runnable thread's
/// block is left alone. The closed block stays readable, the thread's next record takes a new
/// block, and the flush reads both as one run: nothing lost, no gap in `seq`.
#[test]
fn the_tick_closes_the_block_of_a_thread_idle_since_the_pool_went_round() {
    let g = Geometry {
        blocks: 64,
        block_slots: 16,
        active: 48,
    }; // N − A = 16 tickets
    let mut cfg = Config::new("com.example", "com.example", PathBuf::from("/data/hubble"));
    cfg.mode = MODE;
    cfg.pool = Some(g);
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    let files = Arc::new(MemStorage::default());
    let c = Control::new(FakeArt::default(), cfg, props, Box::new(files.clone()));
    let threads: Vec<Box<FakeThread>> = (0..3).map(|_| FakeThread::new()).collect();
    let (idle, busy, running) = (&threads[0], &threads[1], &threads[2]);
    for (t, tid) in [(idle, 10), (busy, 11), (running, 12)] {
        c.thread_attached(t.handle(), tid, "t", false);
    }
    c.start_tracing().unwrap();
    let p = c.pool().unwrap();
    let mut wrote = write_calls(&c, idle, 10, 2);
    // Runnable, in its block, between two trace points.
    running.to_runnable();
    assert!(running.pool_entry(p, 12, method(12, 0), c.art().timer()));
    // Not yet N − A tickets round: nothing to close.
    write_calls(&c, busy, 11, 20);
    c.tick();
    assert_eq!(c.stats.lagging_closed.load(Ordering::Relaxed), 0);
    // Now far more: 600 records, over 50 blocks.
    write_calls(&c, busy, 11, 300);
    assert!(pool::head(p) > 2 * g.delay());
    let held = idle.block.end.load(Ordering::Relaxed);
    c.tick();
    assert_eq!(c.stats.lagging_closed.load(Ordering::Relaxed), 1);
    assert_eq!(
        idle.block.cursor.load(Ordering::Relaxed) as u64,
        hubble_format::pool::SEALED,
        "the idle thread's block closed"
    );
    assert_ne!(
        p.copy()[(held - p.base()) / SLOT + H_STATE],
        OWNED,
        "handed back"
    );
    assert_ne!(
        running.block.cursor.load(Ordering::Relaxed) as u64,
        hubble_format::pool::SEALED,
        "a runnable thread's block is its own"
    );
    running.to_native();
    // The idle thread writes again (a new block), then a flush reads all it wrote.
    wrote.extend(write_calls(&c, idle, 10, 1));
    let path = c.flush(0, "tick").unwrap().path.unwrap();
    let (trace, got) = records_by_tid(&files, &path);
    assert_eq!(got[&10], wrote);
    let section = trace.sections().into_iter().find(|s| s.tid == 10).unwrap();
    assert_eq!(section.runs.len(), 1, "one run: seq without a gap");
}

/// A thread that reports its own attach (`Thread::Init`, `on_itself`) in many-thread mode is
/// traced from its first trace point: no control-thread round trip, which its `Thread.run()`
/// (a plain thread's task begin) used to lose. A thread reported by someone else, or before
/// tracing is on, is only queued for the control thread, as before.
#[test]
fn a_thread_attached_on_itself_is_traced_from_its_first_trace_point() {
    let (c, files) = pool_control(Duration::from_secs(20));
    let early = FakeThread::new();
    assert!(
        !c.thread_attached_itself(early.handle(), 300, "early", false),
        "started before tracing is on"
    );
    c.start_tracing().unwrap();
    let p = c.pool().unwrap();
    let t = FakeThread::new();
    assert!(c.thread_attached_itself(t.handle(), 301, "new", false));
    t.to_runnable();
    assert!(
        t.pool_entry(p, 301, method(301, 0), c.art().timer()),
        "the first entry is lost"
    );
    assert!(t.pool_exit(p, 301, c.art().timer()));
    t.to_native();
    // Reported by the start (possibly under ART's thread_list_lock_): queued, not started.
    let other = FakeThread::new();
    c.thread_attached(other.handle(), 302, "other", false);
    other.to_runnable();
    assert!(!other.pool_entry(p, 302, method(302, 0), c.art().timer()));
    other.to_native();
    let flushed = c.flush(t.handle(), "test").unwrap();
    let (_, got) = records_by_tid(&files, &flushed.path.unwrap());
    assert_eq!(got[&301].len(), 2, "the new thread's entry and exit");
    assert!(!got.contains_key(&302));
    for h in [early.handle(), t.handle(), other.handle()] {
        c.thread_detached(h);
    }
}

/// The control thread attaches to ART as a daemon (`Thread::Init` reports it like any thread).
/// In many-thread mode nothing excluded it: it was started in the pool and, at a flush, asked
/// to stop by itself; the forced stop of a thread in native code then resumed itself, against
/// `DCHECK_NE(thread, self)` in `ThreadList::Resume`. Its row is never traced, whatever asks.
#[test]
fn the_control_thread_is_never_traced_nor_stopped_by_itself() {
    let (c, _files) = pool_control(Duration::from_millis(50));
    c.start_tracing().unwrap();
    c.set_control_tid(400);
    let control = FakeThread::new();
    assert!(
        !c.thread_attached_itself(control.handle(), 400, "HubbleControl", false),
        "the control thread started tracing itself"
    );
    c.rebalance().unwrap();
    assert_eq!(control.block.cursor.load(Ordering::Relaxed), 0);
    assert_eq!(control.block.begin.load(Ordering::Relaxed), 0);
    // An explicit start (`HUBBLE:start` on it, the API) does not change that either.
    c.set_thread_enabled(control.handle(), true).unwrap();
    assert_eq!(control.block.begin.load(Ordering::Relaxed), 0);
    // Every other thread still is, and a flush stops them and not the control thread.
    let t = FakeThread::new();
    assert!(c.thread_attached_itself(t.handle(), 401, "worker", false));
    let stops = c.stats.forced_stops.load(Ordering::Relaxed);
    c.flush(t.handle(), "test").unwrap();
    assert_eq!(
        c.stats.forced_stops.load(Ordering::Relaxed),
        stops + 1,
        "the worker only"
    );
    for h in [control.handle(), t.handle()] {
        c.thread_detached(h);
    }
}

/// A plugin's loader unloaded and a new one allocated at the same place (ART hands the arenas
/// back): the method at the reused address ran before the unload as A's and after it as B's.
/// The flush names each record by its time: B's under the pointer (ART's name for it now), A's
/// under the alias (the pointer | 2) with the name saved at the unload. The pool flush used to
/// name every record A's, for as long as B ran (the dead name was never pruned: B's records
/// kept its pointer in the pool).
#[test]
fn a_method_at_an_address_a_dead_loader_had_is_named_by_when_it_ran() {
    let (c, files) = pool_control(Duration::from_secs(20));
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 22, "t", false);
    c.start_tracing().unwrap();
    let p = c.pool().unwrap();
    let loader = 0x7000_0000usize;
    let m = FakeArt::loader_methods_of(loader)[3];
    let mut wrote = Vec::new();
    let call = |wrote: &mut Vec<Rec>| {
        t.to_runnable();
        let t0 = c.art().timer();
        assert!(t.pool_entry(p, 22, m, t0));
        let t1 = c.art().timer();
        assert!(t.pool_exit(p, 22, t1));
        t.to_native();
        wrote.push((true, m, t0));
        wrote.push((false, 0, t1));
    };
    call(&mut wrote);
    c.art().unload(loader, |l| {
        c.class_loader_unloading(l);
    });
    c.art().reuse_loader(loader, &[(m, "void B.run()")]);
    call(&mut wrote);
    let path = c.flush(0, "after").unwrap().path.unwrap();
    let (trace, got) = records_by_tid(&files, &path);
    let Trace::Threads(file) = &trace else {
        panic!("not a version 4 file")
    };
    assert_eq!(file.symbols[&m], "void B.run()", "B's records");
    assert_eq!(file.symbols[&(m | 2)], FakeArt::name_of(m), "A's records");
    let alias = m | hubble_runtime::reuse::ALIAS_BIT;
    let expected: Vec<Rec> = wrote
        .iter()
        .enumerate()
        .map(|(i, &(e, meth, ts))| (e, if i == 0 { alias } else { meth }, ts))
        .collect();
    assert_eq!(got[&22], expected);
}
