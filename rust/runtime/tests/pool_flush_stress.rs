//! Many-thread mode's stop/flush/restart cycle through the control plane under real threads
//! (issue 17 A.6, the pool-mode counterpart of `tests/stress.rs`): two traced threads run a
//! synthetic call stream through the pool's traced side (`FakeThread::pool_entry`/`pool_exit`,
//! the block-end path included), a busy one and a bursty one, sometimes dropping into "native"
//! code; the control thread flushes the pool at random. The pool is tiny (8 blocks of 2 KiB,
//! A = 2), so blocks are taken, sealed, closed and reused all the time. Every flushed file must
//! parse (version 4), and for each thread every run must decode, be consecutive in its trace-point
//! sequence numbers, balance, follow the thread's previous records in stream order and hold
//! nothing the thread had not written.
//!
//! CI runs a short version; `HUBBLE_POOL_STRESS_CYCLES=10000000 cargo test --release -p
//! hubble-runtime --test pool_flush_stress -- --nocapture` is the long one (prints the numbers).
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use hubble_format::pool::Geometry;
use hubble_format::ring::{decode, RingView};
use hubble_format::{Mode, Record, Trace};
use hubble_runtime::props::{FakeProperties, CONSENT};
use hubble_runtime::testing::{FakeArt, FakeThread, MemStorage};
use hubble_runtime::{Config, Control, RuntimeError};

const MODE: Mode = Mode::Bits64;
const TIDS: [u32; 2] = [100, 101];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A method at `depth` (1-slot entries: below 2^32; the pool's entries are all one slot here so
/// that the tiny blocks fill by record count).
fn method(depth: u32) -> u64 {
    0x1000_0000 | (u64::from(depth) << 4)
}

fn depth_of(method: u64) -> i64 {
    ((method & 0x0fff_fff0) >> 4) as i64
}

/// The first trace point's sequence number (the record's 32-bit timestamp): just below the wrap,
/// so that every run crosses it.
const SEQ_START: u32 = u32::MAX - 200_000;

/// One traced thread's life, as `tests/stress.rs`'s, on the pool.
fn run_traced(
    control: &Control<FakeArt>,
    t: &FakeThread,
    tid: u32,
    seed: u64,
    bursty: bool,
    done: &AtomicBool,
    last_written: &AtomicU32,
) {
    let pool = control.pool().expect("many-thread mode");
    let mut rng = Rng(seed);
    let mut depth = 0u32;
    let mut seq = SEQ_START;
    t.to_runnable();
    while !done.load(Ordering::Relaxed) {
        let r = rng.next();
        let written = if depth == 0 || (r % 100 < 52 && depth < 1000) {
            let w = t.pool_entry(pool, tid, method(depth), u64::from(seq));
            depth += 1;
            w
        } else {
            depth -= 1;
            t.pool_exit(pool, tid, u64::from(seq))
        };
        if written {
            last_written.store(seq, Ordering::Relaxed);
        }
        seq = seq.wrapping_add(1);
        if bursty && seq % 8192 == 0 {
            t.to_native();
            std::thread::sleep(std::time::Duration::from_micros(200));
            t.to_runnable();
        } else if r % 4096 == 0 {
            t.to_native();
            for _ in 0..(r >> 40) % 200 {
                std::hint::spin_loop();
            }
            if r & (0xfff << 33) == 0 {
                std::thread::yield_now();
            }
            t.to_runnable();
        }
    }
    t.to_native();
}

#[derive(Default)]
struct Check {
    last_ts: Option<u32>,
    records: u64,
    runs: u64,
}

/// Every run of thread `tid` in one file, checked against what came before and what the thread
/// had written when the file was made.
fn check_thread(runs: &[&[u64]], previous: &mut Check, last_written_now: u32, file: &Trace) {
    for slots in runs {
        let window = decode(&RingView::linear(slots), MODE).expect("every run decodes");
        let mut last: Option<u32> = None;
        let mut rel: i64 = 0;
        let mut base_depth: Option<i64> = None;
        for r in &window.records {
            match *r {
                Record::Start { .. } => assert!(last.is_none(), "a start record only opens a run"),
                Record::Task { .. } => panic!("the stress test writes no task record"),
                Record::Entry { ts, .. } | Record::Exit { ts } => {
                    if let Some(l) = last {
                        assert_eq!(
                            ts,
                            l.wrapping_add(1),
                            "consecutive trace points within a run: no gap, no tear"
                        );
                    } else if let Some(p) = previous.last_ts {
                        assert!(
                            (ts.wrapping_sub(p) as i32) > 0,
                            "runs follow each other in stream order"
                        );
                    }
                    last = Some(ts);
                    if let Record::Entry { method, .. } = *r {
                        let d = depth_of(method) - rel;
                        assert_eq!(*base_depth.get_or_insert(d), d, "balanced: depth agrees");
                        let Trace::Threads(f) = file else {
                            unreachable!()
                        };
                        assert!(f.symbols.contains_key(&method), "every method symbolized");
                        rel += 1;
                    } else {
                        rel -= 1;
                    }
                    previous.records += 1;
                }
            }
        }
        if let Some(l) = last {
            assert!(
                (last_written_now.wrapping_sub(l) as i32) >= 0,
                "nothing in the file the thread did not write"
            );
            previous.last_ts = Some(l);
            previous.runs += 1;
        }
    }
}

#[test]
fn pool_stop_flush_restart_cycles() {
    let cycles: u64 = std::env::var("HUBBLE_POOL_STRESS_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    let mut cfg = Config::new("com.stress", "com.stress", "/stress/hubble".into());
    cfg.mode = MODE;
    cfg.pool = Some(Geometry {
        blocks: 8,
        block_slots: 256,
        active: 2,
    });
    cfg.max_poll_sleep = std::time::Duration::ZERO;
    let storage = Arc::new(MemStorage::default());
    let control = Arc::new(Control::new(
        FakeArt::default(),
        cfg,
        props,
        Box::new(storage.clone()),
    ));
    let threads: Vec<Arc<FakeThread>> = (0..2).map(|_| Arc::from(FakeThread::new())).collect();
    for (t, tid) in threads.iter().zip(TIDS) {
        control.thread_attached(t.handle(), tid, "traced", tid == TIDS[0]);
    }
    control.start_tracing().unwrap();
    assert_eq!(control.traced_threads().len(), 2);
    let done = Arc::new(AtomicBool::new(false));
    let last_written: Vec<Arc<AtomicU32>> = (0..2).map(|_| Arc::new(AtomicU32::new(0))).collect();
    // Joins the traced threads before the control plane (and its pool) goes away, also when an
    // assertion fails.
    struct Runners(Arc<AtomicBool>, Vec<std::thread::JoinHandle<()>>);
    impl Drop for Runners {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
            for r in self.1.drain(..) {
                let _ = r.join();
            }
        }
    }
    let runners: Vec<_> = threads
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let (c, t, done, lw) = (
                control.clone(),
                t.clone(),
                done.clone(),
                last_written[i].clone(),
            );
            std::thread::spawn(move || {
                run_traced(
                    &c,
                    &t,
                    TIDS[i],
                    0x9e37 + i as u64 * 7919,
                    i == 1,
                    &done,
                    &lw,
                )
            })
        })
        .collect();
    let mut runners = Runners(done.clone(), runners);
    while last_written.iter().any(|w| w.load(Ordering::Relaxed) == 0) {
        std::thread::yield_now();
    }
    let mut checks: Vec<Check> = (0..2).map(|_| Check::default()).collect();
    let started = Instant::now();
    let mut timeouts = 0u64;
    for _ in 0..cycles {
        match control.flush(threads[0].handle(), "stress") {
            Ok(f) => {
                // What each thread had written when the flush returned: the file can hold no more.
                let written: Vec<u32> = last_written
                    .iter()
                    .map(|w| w.load(Ordering::Relaxed))
                    .collect();
                let path = f.path.expect("consent given");
                let bytes = storage.files.lock().unwrap().remove(&path).unwrap();
                let trace = Trace::parse(&bytes).expect("the file parses and its CRC matches");
                assert!(matches!(trace, Trace::Threads(_)), "a version 4 file");
                for section in trace.sections() {
                    let i = TIDS
                        .iter()
                        .position(|&t| t == section.tid)
                        .unwrap_or_else(|| panic!("a section of unknown thread {}", section.tid));
                    let runs: Vec<&[u64]> = section.runs.iter().map(|r| r.slots).collect();
                    check_thread(&runs, &mut checks[i], written[i], &trace);
                }
            }
            Err(RuntimeError::StopTimeout(..)) => timeouts += 1,
            Err(e) => panic!("flush failed: {e}"),
        }
    }
    let elapsed = started.elapsed();
    done.store(true, Ordering::Relaxed);
    for r in runners.1.drain(..) {
        r.join().unwrap();
    }
    let s = &control.stats;
    let coop = s.cooperative_stops.load(Ordering::Relaxed);
    let forced = s.forced_stops.load(Ordering::Relaxed);
    let saves = s.recheck_saves.load(Ordering::Relaxed);
    let pool = control.pool().unwrap().stats();
    println!(
        "pool stress: {cycles} stop/flush/restart cycles in {elapsed:.2?} ({:.1} µs/cycle): \
         {coop} cooperative stops, {forced} forced (native), {saves} re-check saves, \
         {timeouts} timeouts, {} records in {} runs verified, {} blocks taken, {} drops",
        elapsed.as_secs_f64() * 1e6 / cycles as f64,
        checks.iter().map(|c| c.records).sum::<u64>(),
        checks.iter().map(|c| c.runs).sum::<u64>(),
        pool.takes.load(Ordering::Relaxed),
        pool.drops.load(Ordering::Relaxed),
    );
    // Two threads a cycle, each stopped cooperatively or by force, unless the cycle timed out.
    assert_eq!(coop + forced, 2 * (cycles - timeouts));
    assert!(coop > 0 && forced > 0);
    assert!(checks.iter().all(|c| c.records > 0));
}
