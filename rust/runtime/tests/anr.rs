//! The ANR flush: ART's signal catcher reports SIGQUIT (the ANR / bugreport
//! stack dump) through `SigQuitReceived`, which only records the request and wakes the control
//! thread; the control thread stops every traced thread at once and flushes each with reason
//! `anr`. Run against the runtime's doubles ([`FakeArt`], [`FakeThread`]) with the real control
//! loop ([`control_loop`]) on its own thread, and the same request path the bridge uses
//! ([`hubble_runtime::request_anr_flush`]).
#![cfg(not(loom))]

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use hubble_format::{EventKind, Mode, TraceFile, WindowStart};
use hubble_runtime::flush::{PendingFile, Storage};
use hubble_runtime::props::{ANR_INTERVAL, CONSENT};
use hubble_runtime::{control_loop, request_anr_flush, Anr, Config, Control, Message};
use hubble_testkit::runtime::{
    entry_methods, FakeArt, FakeProperties, FakeThread, MemStorage, Workers,
};

const MODE: Mode = Mode::Bits64;
/// A bound on waits that must end quickly; reaching it fails the test (nothing sleeps).
const BOUND: Duration = Duration::from_secs(20);

/// Files in memory, behind a gate: while it is closed, `create_atomic` (the first step of a
/// flush's disk I/O) reports that it was entered and blocks until the test opens the gate.
#[derive(Default)]
struct Gate {
    files: MemStorage,
    closed: Mutex<bool>,
    opened: Condvar,
    entered: Mutex<Option<mpsc::Sender<PathBuf>>>,
    commits: AtomicUsize,
}

struct GateStorage(Arc<Gate>);

struct Counted<'a> {
    inner: Box<dyn PendingFile + 'a>,
    commits: &'a AtomicUsize,
}

impl PendingFile for Counted<'_> {
    fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, bytes)
    }
    fn commit(self: Box<Self>) -> io::Result<()> {
        self.inner.commit()?;
        self.commits.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

impl Storage for GateStorage {
    fn create_atomic(&self, path: &Path) -> io::Result<Box<dyn PendingFile + '_>> {
        if let Some(tx) = self.0.entered.lock().unwrap().as_ref() {
            let _ = tx.send(path.to_path_buf());
        }
        let mut closed = self.0.closed.lock().unwrap();
        while *closed {
            closed = self.0.opened.wait(closed).unwrap();
        }
        drop(closed);
        Ok(Box::new(Counted {
            inner: self.0.files.create_atomic(path)?,
            commits: &self.0.commits,
        }))
    }
    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        self.0.files.ensure_dir(dir)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<(String, u64)>> {
        self.0.files.list(dir)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.0.files.remove(path)
    }
}

impl Gate {
    fn close(&self) {
        *self.closed.lock().unwrap() = true;
    }
    fn open(&self) {
        *self.closed.lock().unwrap() = false;
        self.opened.notify_all();
    }
    fn files(&self) -> HashMap<PathBuf, Vec<u8>> {
        self.files.files.lock().unwrap().clone()
    }
}

fn config() -> Config {
    let mut c = Config::new("com.example", "com.example", PathBuf::from("/data/hubble"));
    c.ring_bytes = 64 << 10;
    c.mode = MODE;
    c
}

fn props() -> Arc<FakeProperties> {
    let p = Arc::new(FakeProperties::default());
    p.set(CONSENT, "1");
    p
}

/// A control plane writing into a gated memory storage, two traced threads (tids 100, 101).
struct Setup {
    control: Arc<Control<FakeArt>>,
    gate: Arc<Gate>,
    props: Arc<FakeProperties>,
    threads: Vec<Arc<FakeThread>>,
}

fn setup() -> Setup {
    let gate = Arc::new(Gate::default());
    let props = props();
    let control = Arc::new(Control::new(
        FakeArt::default(),
        config(),
        props.clone(),
        Box::new(GateStorage(gate.clone())),
    ));
    let threads: Vec<Arc<FakeThread>> = (0..2).map(|_| Arc::from(FakeThread::new())).collect();
    control.thread_attached(threads[0].handle(), 100, "main", true);
    control.thread_attached(threads[1].handle(), 101, "worker", false);
    control.thread_foreground(threads[1].handle());
    control.start_tracing().unwrap();
    let mut traced = control.traced_threads();
    traced.sort_unstable();
    let mut want: Vec<_> = threads.iter().map(|t| t.handle()).collect();
    want.sort_unstable();
    assert_eq!(traced, want, "both threads traced");
    Setup {
        control,
        gate,
        props,
        threads,
    }
}

/// `depth` nested calls of distinct methods, starting at `base`; returns the methods entered.
fn calls(t: &FakeThread, base: u64, depth: u32) -> Vec<u64> {
    t.to_runnable();
    let mut methods = Vec::new();
    for i in 0..depth {
        let m = base + 16 * u64::from(i);
        assert!(t.entry(MODE, m, 1000 + i));
        methods.push(m);
    }
    for i in 0..depth {
        assert!(t.exit(2000 + i));
    }
    t.to_native();
    methods
}

/// The real control loop on its own thread. Dropping it opens the gate (a failed test must not
/// leave the loop blocked in a flush) and ends the loop.
struct Loop {
    tx: Arc<Mutex<mpsc::Sender<Message>>>,
    handle: Option<std::thread::JoinHandle<()>>,
    gate: Arc<Gate>,
}

impl Loop {
    fn start(control: &Arc<Control<FakeArt>>, gate: &Arc<Gate>) -> Loop {
        let (tx, rx) = mpsc::channel();
        let control = control.clone();
        let handle = std::thread::Builder::new()
            .name("HubbleControl".into())
            .spawn(move || control_loop(&*control, &rx))
            .unwrap();
        Loop {
            tx: Arc::new(Mutex::new(tx)),
            handle: Some(handle),
            gate: gate.clone(),
        }
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        self.gate.open();
        let _ = self.tx.lock().unwrap().send(Message::Shutdown);
        if let Some(h) = self.handle.take() {
            h.join().unwrap();
        }
    }
}

/// [`request_anr_flush`] called on another thread (as the signal catcher calls it); its result,
/// which must come back while the flush it caused may still be running. A request that waited
/// for the flush fails the test here instead of hanging it.
fn request_elsewhere(
    control: &Arc<Control<FakeArt>>,
    tx: &Arc<Mutex<mpsc::Sender<Message>>>,
) -> bool {
    let (control, tx) = (control.clone(), tx.clone());
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(request_anr_flush(&*control, &tx));
    });
    done_rx
        .recv_timeout(BOUND)
        .expect("the SIGQUIT request returned without waiting for the flush")
}

/// Waits (bounded) until `n` files were committed.
fn wait_commits(gate: &Gate, n: usize) {
    let deadline = std::time::Instant::now() + BOUND;
    while gate.commits.load(Ordering::SeqCst) < n {
        assert!(
            std::time::Instant::now() < deadline,
            "only {} of {n} files committed",
            gate.commits.load(Ordering::SeqCst)
        );
        std::thread::yield_now();
    }
}

/// A request made on another thread (the signal catcher) returns while the flush it caused is
/// held inside its disk I/O by the test; once released, every traced thread has one file with
/// reason `anr` holding exactly the calls it made before the request.
#[test]
fn sigquit_request_returns_at_once_and_each_traced_thread_gets_an_anr_file() {
    let s = setup();
    let main_calls = calls(&s.threads[0], 0x1000, 12);
    let worker_calls = calls(&s.threads[1], 0x9000, 7);
    let (entered_tx, entered_rx) = mpsc::channel();
    *s.gate.entered.lock().unwrap() = Some(entered_tx);
    s.gate.close();
    let control_loop = Loop::start(&s.control, &s.gate);
    // The signal catcher: requests, then reports that the call returned.
    let (returned_tx, returned_rx) = mpsc::channel();
    let catcher = {
        let (control, tx) = (s.control.clone(), control_loop.tx.clone());
        std::thread::spawn(move || {
            let woke = request_anr_flush(&*control, &tx);
            returned_tx.send(woke).unwrap();
        })
    };
    // The flush has reached its disk I/O and is held there by the gate ...
    let first = entered_rx
        .recv_timeout(BOUND)
        .expect("the control thread started an anr flush");
    assert!(
        first.to_str().unwrap().ends_with("-anr.hubble"),
        "{first:?}"
    );
    // ... and the request has returned all the same (a request that waited for the flush would
    // still be blocked behind the gate).
    assert!(
        returned_rx
            .recv_timeout(BOUND)
            .expect("the SIGQUIT request returned while the flush was held"),
        "the first request wakes the control thread"
    );
    assert_eq!(
        s.gate.commits.load(Ordering::SeqCst),
        0,
        "nothing written yet"
    );
    catcher.join().unwrap();
    s.gate.open();
    wait_commits(&s.gate, 2);
    let files = s.gate.files();
    assert_eq!(files.len(), 2, "{:?}", files.keys());
    let mut by_tid = HashMap::new();
    for (path, bytes) in &files {
        let name = path.file_name().unwrap().to_str().unwrap();
        let file = TraceFile::parse(bytes).unwrap();
        assert_eq!(file.header.reason, "anr");
        assert!(
            name.ends_with(&format!(
                "-{}-{}-anr.hubble",
                std::process::id(),
                file.header.tid
            )),
            "{name}"
        );
        assert_eq!(
            file.decode_events().unwrap().start,
            WindowStart::StartRecord
        );
        by_tid.insert(file.header.tid, entry_methods(&file));
    }
    assert_eq!(by_tid[&100], main_calls);
    assert_eq!(by_tid[&101], worker_calls);
    assert_eq!(s.control.stats.anr_flushes.load(Ordering::Relaxed), 1);
    drop(control_loop);
    // Tracing restarted on both threads.
    for t in &s.threads {
        t.to_runnable();
        assert!(t.exit(1));
        t.to_native();
    }
}

/// Both traced threads run managed code without pause. The request rings every thread's stop
/// doorbell before any file is written: while the first file is held in its disk I/O, both
/// threads have already stopped (their trace points report tracing off), so each window ends at
/// the ANR and not after the other threads' flushes.
#[test]
fn every_traced_thread_stops_at_the_request_before_any_file_is_written() {
    let s = setup();
    let (entered_tx, entered_rx) = mpsc::channel();
    *s.gate.entered.lock().unwrap() = Some(entered_tx);
    s.gate.close();
    let (stopped_tx, stopped_rx) = mpsc::channel();
    let (started_tx, started_rx) = mpsc::channel();
    let mut runners = Workers::default();
    for (i, t) in s.threads.iter().enumerate() {
        let (t, tx, started) = (t.clone(), stopped_tx.clone(), started_tx.clone());
        runners.spawn(move |quit| {
            t.to_runnable();
            // Tracing is on and the thread runnable before the request is made (a thread
            // not runnable yet would be force-stopped and restarted, and then run on).
            assert!(t.entry(MODE, 0x4000 + 0x100 * i as u64, 0));
            assert!(t.exit(1));
            started.send(i).unwrap();
            let mut ts = 2u32;
            let mut n = 1u64;
            // Runs until a trace point finds tracing off (its stop answered).
            while !quit.load(Ordering::Relaxed) {
                if !t.entry(MODE, 0x4000 + 0x100 * i as u64, ts) {
                    break;
                }
                n += 1;
                if !t.exit(ts + 1) {
                    break;
                }
                ts = ts.wrapping_add(2);
            }
            tx.send((i, n)).unwrap();
            // Stay runnable without trace points until told: the cooperative stop is what
            // is being tested, not the native force stop.
            while !quit.load(Ordering::Relaxed) {
                std::thread::yield_now();
            }
            t.to_native();
        });
    }
    for _ in 0..2 {
        started_rx.recv_timeout(BOUND).expect("both threads run");
    }
    let control_loop = Loop::start(&s.control, &s.gate);
    assert!(request_elsewhere(&s.control, &control_loop.tx));
    entered_rx
        .recv_timeout(BOUND)
        .expect("the control thread started an anr flush");
    // The gate is still closed: no file written, and both threads stopped.
    let mut stopped = Vec::new();
    for _ in 0..2 {
        stopped.push(
            stopped_rx
                .recv_timeout(BOUND)
                .expect("every traced thread stopped while the first file was held"),
        );
    }
    assert_eq!(s.gate.commits.load(Ordering::SeqCst), 0);
    stopped.sort_unstable();
    assert!(stopped.iter().all(|&(_, n)| n > 0), "{stopped:?}");
    s.gate.open();
    wait_commits(&s.gate, 2);
    runners.join();
    drop(control_loop);
    for bytes in s.gate.files().values() {
        let file = TraceFile::parse(bytes).unwrap();
        assert_eq!(file.header.reason, "anr");
        let events = file.decode_events().unwrap().events;
        // The thread's own loop, entries and exits alternating up to its stop.
        assert!(events.len() > 2, "{events:?}");
        let method = match events.iter().find_map(|e| match e.kind {
            EventKind::Entry { method } => Some(method),
            _ => None,
        }) {
            Some(m) => m,
            None => panic!("no entry in {events:?}"),
        };
        assert!(method == 0x4000 || method == 0x4100, "{method:#x}");
        for pair in events.windows(2) {
            assert_ne!(pair[0].kind, pair[1].kind, "{pair:?}");
        }
    }
    assert_eq!(s.control.stats.cooperative_stops.load(Ordering::Relaxed), 2);
}

/// Requests made before the control thread handles one are coalesced into it; requests within
/// `debug.hubble.anr_interval` (default 60 s) of the last ANR flush are suppressed and counted;
/// the interval is a property; `off` turns the ANR flush off; a bad value is logged and the
/// interval in force kept. The clock is the runtime timer (set by the test).
#[test]
fn anr_requests_are_coalesced_and_rate_limited() {
    let s = setup();
    let art = s.control.art();
    let sec = 1_000_000_000u64;
    art.set_timer(1000 * sec);
    let c = &s.control;
    assert_eq!(c.handle_anr(), None, "nothing requested");
    // A storm before the control thread looks: one flush.
    assert!(
        c.request_anr(),
        "the first request wakes the control thread"
    );
    assert!(!c.request_anr(), "later ones are coalesced");
    assert!(!c.request_anr());
    assert_eq!(c.handle_anr(), Some(Anr::Flushed(2)));
    assert_eq!(c.handle_anr(), None, "one flush for the three requests");
    assert_eq!(s.gate.files().len(), 2);
    assert_eq!(c.stats.anr_requests.load(Ordering::Relaxed), 3);
    assert_eq!(c.stats.anr_coalesced.load(Ordering::Relaxed), 2);
    // 59 s later: within the default interval.
    art.set_timer(1059 * sec);
    assert!(c.request_anr());
    assert_eq!(c.handle_anr(), Some(Anr::Suppressed));
    assert_eq!(c.stats.anr_suppressed.load(Ordering::Relaxed), 1);
    assert_eq!(s.gate.files().len(), 2);
    // 60 s after the last flush: allowed again.
    art.set_timer(1060 * sec);
    assert!(c.request_anr());
    assert_eq!(c.handle_anr(), Some(Anr::Flushed(2)));
    assert_eq!(c.stats.anr_flushes.load(Ordering::Relaxed), 2);
    // A shorter interval from the property.
    s.props.set(ANR_INTERVAL, "5s");
    art.set_timer(1064 * sec);
    assert!(c.request_anr());
    assert_eq!(c.handle_anr(), Some(Anr::Suppressed));
    art.set_timer(1065 * sec);
    assert!(c.request_anr());
    assert_eq!(c.handle_anr(), Some(Anr::Flushed(2)));
    // A bad value keeps 5 s.
    s.props.set(ANR_INTERVAL, "soon");
    art.set_timer(1069 * sec);
    assert!(c.request_anr());
    assert_eq!(c.handle_anr(), Some(Anr::Suppressed));
    // Off: no flush, whenever.
    s.props.set(ANR_INTERVAL, "off");
    art.set_timer(2000 * sec);
    assert!(c.request_anr());
    assert_eq!(c.handle_anr(), Some(Anr::Disabled));
    assert_eq!(c.stats.anr_flushes.load(Ordering::Relaxed), 3);
    // Every flush wrote one file per traced thread.
    assert_eq!(c.stats.flushes.load(Ordering::Relaxed), 6);
}

/// A request that arrives while the ANR flush runs is not lost and not run at once: it is
/// handled after the flush, against the interval (suppressed here).
#[test]
fn a_request_during_the_flush_is_rate_limited_after_it() {
    let s = setup();
    let art = s.control.art();
    art.set_timer(5_000_000_000);
    let (entered_tx, entered_rx) = mpsc::channel();
    *s.gate.entered.lock().unwrap() = Some(entered_tx);
    s.gate.close();
    let control_loop = Loop::start(&s.control, &s.gate);
    assert!(request_elsewhere(&s.control, &control_loop.tx));
    entered_rx.recv_timeout(BOUND).expect("flush started");
    // During the flush: a new request (the pending flag was cleared when the flush began).
    assert!(request_elsewhere(&s.control, &control_loop.tx));
    s.gate.open();
    wait_commits(&s.gate, 2);
    let deadline = std::time::Instant::now() + BOUND;
    while s.control.stats.anr_suppressed.load(Ordering::Relaxed) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "second request handled"
        );
        std::thread::yield_now();
    }
    drop(control_loop);
    assert_eq!(s.control.stats.anr_flushes.load(Ordering::Relaxed), 1);
    assert_eq!(s.gate.files().len(), 2);
}
