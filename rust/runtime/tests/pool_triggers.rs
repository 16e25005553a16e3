//! Duration triggers in many-thread mode (`debug.hubble.threads all`): the tick follows each
//! pooled thread's blocks in `seq` order (`src/triggers/pool.rs`). Fake ART with a manual clock
//! (1 GHz), the pool's traced side in Rust (`hubble_runtime::pool`, what the emitted block-end
//! functions are checked against), blocks of 8 data slots so that a few calls cross blocks.
#![cfg(not(loom))]

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use hubble_format::pool::Geometry;
use hubble_format::{Mode, Trace};
use hubble_runtime::props::{CONSENT, TRIGGERS};
use hubble_runtime::{Config, Control};
use hubble_testkit::runtime::{FakeArt, FakeProperties, FakeThread, MemStorage};

mod trigger_methods;
use trigger_methods::{one_firing, BIND, DO_FRAME, JANK, MS, OTHER, T0};

const MODE: Mode = Mode::Bits64;
const MAIN: u32 = 42;
const WORKER: u32 = 43;

/// 16 blocks of 8 data slots (64-bit: a block takes 8 one-slot records), A = 4: a sealed block
/// is reused 12 tickets later, so a thread that writes 100 blocks between two ticks overwrites
/// what the detector has not read yet.
const G: Geometry = Geometry {
    blocks: 16,
    block_slots: 5 + 9,
    active: 4,
};

struct Rig {
    props: Arc<FakeProperties>,
    files: Arc<MemStorage>,
    c: Control<FakeArt>,
    main: Box<FakeThread>,
    worker: Box<FakeThread>,
}

fn rig(triggers: &str) -> Rig {
    let art = trigger_methods::art();
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    props.set(TRIGGERS, triggers);
    let mut config = Config::new("com.example", "com.example", "/data/hubble".into());
    config.mode = MODE;
    config.pool = Some(G);
    let files = Arc::new(MemStorage::default());
    let c = Control::new(art, config, props.clone(), Box::new(files.clone()));
    c.start_tracing().unwrap();
    let (main, worker) = (FakeThread::new(), FakeThread::new());
    c.thread_attached(main.handle(), MAIN, "main", true);
    c.thread_attached(worker.handle(), WORKER, "worker", false);
    c.rebalance().unwrap();
    assert_eq!(c.traced_threads().len(), 2);
    let r = Rig {
        props,
        files,
        c,
        main,
        worker,
    };
    r.tick_at(0);
    r
}

fn ts(ms: u64) -> u64 {
    T0 + ms * MS
}

impl Rig {
    fn thread(&self, tid: u32) -> &FakeThread {
        if tid == MAIN {
            &self.main
        } else {
            &self.worker
        }
    }
    fn entry(&self, tid: u32, method: u64, ms: u64) {
        let p = self.c.pool().unwrap();
        assert!(self.thread(tid).pool_entry(p, tid, method, ts(ms)));
    }
    fn exit(&self, tid: u32, ms: u64) {
        let p = self.c.pool().unwrap();
        assert!(self.thread(tid).pool_exit(p, tid, ts(ms)));
    }
    fn call(&self, tid: u32, method: u64, from: u64, to: u64) {
        self.entry(tid, method, from);
        self.exit(tid, to);
    }
    /// `n` calls of OTHER at `ms` on `tid`: n blocks' worth of slots / 4.
    fn fillers(&self, tid: u32, ms: u64, n: u64) {
        for _ in 0..n {
            self.call(tid, OTHER, ms, ms);
        }
    }
    /// The control thread's tick at time `ms`, both threads out of runnable (a flush forces
    /// them at once).
    fn tick_at(&self, ms: u64) {
        self.c.art().set_timer(ts(ms));
        self.main.to_native();
        self.worker.to_native();
        self.c.tick();
        self.main.to_runnable();
        self.worker.to_runnable();
    }
    /// A flush of main (in this mode: of every thread), both threads out of runnable.
    fn flush(&self, reason: &str) {
        self.main.to_native();
        self.worker.to_native();
        self.c.flush(self.main.handle(), reason).unwrap();
        self.main.to_runnable();
        self.worker.to_runnable();
    }
    fn reasons(&self) -> Vec<String> {
        let files = self.files.files.lock().unwrap();
        files
            .values()
            .map(|bytes| match Trace::parse(bytes).unwrap() {
                Trace::Threads(f) => f.header.reason,
                other => panic!("not a version 4 file in pool mode: {other:?}"),
            })
            .collect()
    }
    fn takes(&self) -> u64 {
        self.c.pool().unwrap().stats().takes.load(Ordering::Relaxed)
    }
}

#[test]
fn a_call_across_blocks_is_timed_by_its_threads_blocks_alone() {
    let r = rig(JANK);
    // Both threads interleave their blocks; only main's doFrame is long.
    r.entry(MAIN, DO_FRAME, 10);
    for ms in 11..20 {
        r.fillers(MAIN, ms, 2);
        r.call(WORKER, DO_FRAME, ms, ms + 1); // 1 ms frames on the worker
        r.fillers(WORKER, ms, 1);
    }
    r.exit(MAIN, 60); // 50 ms
    assert!(r.takes() > 8, "the calls cross blocks");
    r.tick_at(100);
    r.tick_at(200);
    let fired = r.c.triggers().fired();
    one_firing(&fired, true, 50);
    assert_eq!(fired[0].thread, r.main.handle());
    assert!(fired[0].path.is_some());
    assert_eq!(r.reasons(), vec!["jank"]);
    r.tick_at(300);
    r.tick_at(400);
    assert_eq!(r.reasons().len(), 1);
}

#[test]
fn a_short_call_across_blocks_fires_nothing() {
    let r = rig(JANK);
    r.entry(MAIN, BIND, 5);
    r.entry(MAIN, DO_FRAME, 10);
    r.fillers(MAIN, 20, 12);
    r.exit(MAIN, 42); // 32 ms: not longer than the threshold
    r.exit(MAIN, 90);
    for ms in [100, 200, 300] {
        r.tick_at(ms);
    }
    assert!(r.c.triggers().fired().is_empty());
    assert!(r.reasons().is_empty());
}

#[test]
fn a_call_still_open_past_its_threshold_fires_before_it_returns() {
    let r = rig(JANK);
    r.entry(MAIN, DO_FRAME, 10);
    r.fillers(MAIN, 20, 6);
    r.tick_at(100);
    r.tick_at(200);
    let fired = r.c.triggers().fired();
    one_firing(&fired, false, 90);
}

/// The detector starts (the triggers are set) while a doFrame that began three blocks back is
/// still running: the backfill walks back through the thread's blocks and times it (open for
/// 50 ms when the reader started, not yet past its 55 ms; 60 ms at its exit).
#[test]
fn a_call_that_began_blocks_before_the_detector_looked_is_timed() {
    let r = rig("");
    r.entry(MAIN, DO_FRAME, 10);
    r.fillers(MAIN, 20, 12); // three blocks
    r.tick_at(50);
    r.props
        .set(TRIGGERS, "android.view.Choreographer.doFrame>55ms=jank");
    r.tick_at(60); // the reader starts here
    r.fillers(MAIN, 65, 2);
    r.exit(MAIN, 70);
    r.tick_at(100);
    r.tick_at(200);
    let fired = r.c.triggers().fired();
    one_firing(&fired, true, 60);
}

/// The pool ran round between two ticks: the blocks behind the detector were taken again, the
/// doFrame's exit with them. Read as if nothing were lost, the call would close at a later exit.
#[test]
fn blocks_overwritten_between_ticks_are_not_misread() {
    let r = rig("android.view.Choreographer.doFrame>300ms=jank");
    r.entry(MAIN, DO_FRAME, 10);
    r.tick_at(100);
    r.tick_at(200); // the open doFrame is on the detector's stack now
    r.exit(MAIN, 210); // a 200 ms frame: no jank
    r.entry(MAIN, OTHER, 220);
    r.fillers(MAIN, 400, 300); // 75 blocks: the pool goes round more than four times
                               // Read as if nothing had been lost, this exit would close the doFrame after 740 ms.
    r.exit(MAIN, 750);
    for ms in [800, 900, 1000] {
        r.tick_at(ms);
    }
    assert!(r.reasons().is_empty(), "{:?}", r.c.triggers().fired());
    // And the detector is back on its feet.
    r.call(MAIN, DO_FRAME, 1010, 1400);
    r.tick_at(1500);
    r.tick_at(1600);
    assert_eq!(r.reasons(), vec!["jank"]);
    assert_eq!(
        r.c.triggers().fired()[0].duration,
        Duration::from_millis(390)
    );
}

/// A doFrame blocked in native code: the worker's traffic takes the pool round, the tick closes
/// main's block (BTrace's bound), and main holds no block any more. The call is still open and
/// fires once it has been open past its threshold.
#[test]
fn a_call_open_in_a_block_the_tick_closed_still_fires() {
    let r = rig(JANK);
    r.entry(MAIN, DO_FRAME, 10);
    r.tick_at(20);
    r.fillers(WORKER, 21, 4 * 13);
    r.tick_at(30);
    assert_eq!(
        r.c.stats.lagging_closed.load(Ordering::Relaxed),
        1,
        "main's block was closed"
    );
    r.tick_at(60);
    assert!(r.c.triggers().fired().is_empty(), "open for 20 ms so far");
    r.tick_at(100);
    let fired = r.c.triggers().fired();
    one_firing(&fired, false, 50);
    assert_eq!(fired[0].thread, r.main.handle());
}

/// A flush restarts every thread behind a start record: the calls in progress are forgotten.
#[test]
fn a_flush_between_ticks_forgets_the_calls_in_progress() {
    let r = rig(JANK);
    r.entry(MAIN, DO_FRAME, 10);
    r.tick_at(20);
    r.flush("anr");
    r.fillers(MAIN, 30, 5);
    r.exit(MAIN, 90); // would close the doFrame after 80 ms
    for ms in [100, 200, 300] {
        r.tick_at(ms);
    }
    assert!(r.c.triggers().fired().is_empty());
    assert_eq!(r.reasons(), vec!["anr"]);
}

/// A flush that finds a thread's block full restarts it in a new block, `seq` skipping one (no
/// room for a start record): the gap is read as one, and the doFrame that began in the full
/// block, read in the same stretch, is not closed by an exit after the restart.
#[test]
fn a_restart_in_a_new_block_forgets_the_calls_in_progress() {
    let r = rig(JANK);
    r.tick_at(20);
    r.entry(MAIN, DO_FRAME, 30);
    r.fillers(MAIN, 31, 3);
    r.entry(MAIN, OTHER, 32); // the block's eighth and last slot
    assert_eq!(r.takes(), 1);
    r.flush("anr");
    r.exit(MAIN, 80);
    r.exit(MAIN, 90); // read on across the gap, this would close the doFrame after 60 ms
    assert_eq!(r.takes(), 2);
    for ms in [100, 200, 300] {
        r.tick_at(ms);
    }
    assert!(r.c.triggers().fired().is_empty());
    assert_eq!(r.reasons(), vec!["anr"]);
}

/// Writers on their own OS threads, the control thread ticking beside them, a pool small enough
/// to go round several times a second: laps, gaps, takes under way and the flushes the triggers
/// themselves cause (every thread stopped and restarted) all race the detector's reads. Every
/// call it reports as finished lasted exactly as long as a call of that thread did, and every
/// call it reports still open had lasted no longer than that thread's longest.
#[test]
fn concurrent_writers_never_get_a_duration_no_call_had() {
    use hubble_runtime::props::TRIGGER_INTERVAL;
    use hubble_runtime::Art;
    use std::collections::HashMap;
    use std::sync::atomic::AtomicBool;
    use std::sync::Mutex;

    let art = FakeArt::default();
    art.names.lock().unwrap().insert(
        DO_FRAME,
        "void android.view.Choreographer.doFrame(long, int)".into(),
    );
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    props.set(TRIGGERS, "android.view.Choreographer.doFrame>1ms=jank");
    props.set(TRIGGER_INTERVAL, "1ms");
    let mut config = Config::new("com.example", "com.example", "/data/hubble".into());
    config.mode = MODE;
    config.pool = Some(Geometry {
        blocks: 64,
        block_slots: 64,
        active: 8,
    });
    config.max_files = 2;
    config.stop_timeout = Duration::from_millis(100);
    let files = Arc::new(MemStorage::default());
    let c = Arc::new(Control::new(art, config, props, Box::new(files)));
    c.start_tracing().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let durations: Arc<Mutex<HashMap<usize, Vec<u64>>>> = Arc::default();
    let rounds: u64 = std::env::var("HUBBLE_TRIGGER_STRESS_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let writers: Vec<_> = (0..3u32)
        .map(|i| {
            let (c, durations) = (c.clone(), durations.clone());
            let t: Arc<FakeThread> = Arc::from(FakeThread::new());
            let tid = 100 + i;
            c.thread_attached(t.handle(), tid, "w", false);
            std::thread::spawn(move || {
                let p = c.pool().unwrap();
                let mut rng = hubble_testkit::Rng::new(0x9e37_79b9_7f4a_7c15u64 ^ u64::from(tid));
                t.to_runnable();
                let mut mine = Vec::new();
                for _ in 0..rounds {
                    // 0 to 3 ms, a call every 10 µs or so within.
                    let length = rng.next() % 3_000_000;
                    let t0 = c.art().timer();
                    t.pool_entry(p, tid, DO_FRAME, t0);
                    loop {
                        let now = c.art().timer();
                        if now - t0 >= length {
                            break;
                        }
                        t.pool_entry(p, tid, OTHER, now);
                        let until = now + rng.next() % 20_000;
                        while c.art().timer() < until {
                            std::hint::spin_loop();
                        }
                        t.pool_exit(p, tid, c.art().timer());
                    }
                    let t1 = c.art().timer();
                    // A record refused (the thread was stopping) leaves the call unrecorded:
                    // then it never happened for the detector either.
                    if t.pool_exit(p, tid, t1) {
                        mine.push(t1 - t0);
                    }
                }
                t.to_native();
                durations.lock().unwrap().insert(t.handle(), mine);
            })
        })
        .collect();
    c.rebalance().unwrap();
    // The detector keeps its last 256 firings: the ticker collects every firing after each
    // tick (one tick adds at most one per thread), so a long run checks them all.
    let ticker = {
        let (c, stop) = (c.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut all: Vec<hubble_runtime::triggers::Fired> = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                c.tick();
                let log = c.triggers().fired();
                let seen = all.last().map(|f| format!("{f:?}"));
                let new_from = seen
                    .and_then(|s| log.iter().rposition(|f| format!("{f:?}") == s))
                    .map_or(0, |i| i + 1);
                all.extend_from_slice(&log[new_from..]);
                std::thread::sleep(Duration::from_millis(2));
            }
            all
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let fired = ticker.join().unwrap();
    let durations = durations.lock().unwrap();
    let (mut exited, mut open) = (0, 0);
    for f in &fired {
        let calls = &durations[&f.thread];
        let ns = f.duration.as_nanos() as u64;
        if f.exited {
            exited += 1;
            assert!(
                calls.contains(&ns),
                "{f:?}: no call of its thread lasted {ns} ns"
            );
        } else {
            open += 1;
            let longest = calls.iter().max().copied().unwrap_or(0);
            assert!(
                ns <= longest,
                "{f:?}: open longer than its thread's longest call"
            );
        }
    }
    eprintln!(
        "{} firings checked ({exited} at their exit, {open} open), {} suppressed, {} takes",
        fired.len(),
        c.triggers().suppressed.load(Ordering::Relaxed),
        c.pool().unwrap().stats().takes.load(Ordering::Relaxed)
    );
    assert!(exited > 0, "the detector timed calls");
}
