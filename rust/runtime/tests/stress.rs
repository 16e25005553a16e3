//! Real-thread stress of the §6 protocol through the control plane: traced threads run a
//! synthetic call stream through the Rust model of the traced side (slot addresses from the
//! block, as the assembly does), sometimes dropping into "native" code; the control thread
//! flushes at random. Every flushed file must parse, decode, be consecutive in its trace-point
//! sequence numbers (a contiguous piece of the thread's stream, ending where the thread stopped)
//! and balance (every entry's recorded depth agrees with the entry/exit walk).
//!
//! CI runs a short version; `HUBBLE_STRESS_CYCLES=1000000 cargo test --release -p
//! hubble-runtime --test stress -- --nocapture` is the long one (prints the numbers).
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

use hubble_format::ring::{decode, RingView};
use hubble_format::{Mode, Record, TraceFile};
use hubble_runtime::props::{FakeProperties, CONSENT};
use hubble_runtime::testing::{FakeArt, FakeThread, MemStorage};
use hubble_runtime::{Config, Control, RuntimeError};

const MODE: Mode = Mode::Bits64;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn method(depth: u32, wide: bool) -> u64 {
    let base = if wide { 0x7f00_0000_0000 } else { 0x1000_0000 };
    base | (u64::from(depth) << 4)
}

fn depth_of(method: u64) -> i64 {
    ((method & 0xffff_fff0) >> 4) as i64 - if method >> 32 == 0 { 0x100_0000 } else { 0 }
}

/// One traced thread's life: trace points until `done`, with native excursions.
/// A `bursty` thread works in bursts and waits (not runnable) in between, like a UI thread
/// between frames; the other one never waits, so the machine's two cores stay contended.
fn run_traced(
    t: &FakeThread,
    seed: u64,
    bursty: bool,
    done: &AtomicBool,
    last_written: &AtomicU32,
) {
    let mut rng = Rng(seed);
    let mut depth = 0u32;
    // Just below the wrap, so that every run (CI's short one too) crosses it, as a run of
    // 10^7 cycles does after ~4.3e9 trace points of the busy thread.
    let mut seq = SEQ_START;
    t.to_runnable();
    while !done.load(Ordering::Relaxed) {
        let r = rng.next();
        let written = if depth == 0 || (r % 100 < 52 && depth < 1000) {
            let wide = r & (1 << 20) != 0;
            let w = t.entry(MODE, method(depth, wide), seq);
            depth += 1;
            w
        } else {
            depth -= 1;
            t.exit(seq)
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
            // Native code: the control thread must force the stop, or wait for our return.
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

/// The first trace point's sequence number (the record's 32-bit timestamp).
const SEQ_START: u32 = u32::MAX - 200_000;

struct Check {
    last_ts: Option<u32>,
    records: u64,
}

fn check_file(bytes: &[u8], previous: &mut Check, last_written_now: u32) {
    let file = TraceFile::parse(bytes).expect("the file parses and its CRC matches");
    let window = decode(&RingView::linear(&file.window), MODE).expect("the window decodes");
    let mut last: Option<u32> = None;
    let mut rel: i64 = 0;
    let mut base_depth: Option<i64> = None;
    for r in &window.records {
        match *r {
            Record::Start { .. } => {
                assert!(last.is_none(), "a start record only opens a window");
            }
            Record::Task { .. } => panic!("the stress test writes no task record"),
            Record::Entry { ts, .. } | Record::Exit { ts } => {
                if let Some(l) = last {
                    assert_eq!(
                        ts,
                        l.wrapping_add(1),
                        "consecutive trace points: no gap, no tear"
                    );
                } else if let Some(p) = previous.last_ts {
                    // Sequence numbers wrap (u32, like the timer's low half): compare mod 2^32.
                    assert!(
                        (ts.wrapping_sub(p) as i32) > 0,
                        "windows follow each other in stream order"
                    );
                }
                last = Some(ts);
                if let Record::Entry { method, .. } = *r {
                    let d = depth_of(method) - rel;
                    assert_eq!(*base_depth.get_or_insert(d), d, "balanced: depth agrees");
                    assert!(
                        file.symbols.contains_key(&method),
                        "every method symbolized"
                    );
                    rel += 1;
                } else {
                    rel -= 1;
                }
                previous.records += 1;
            }
        }
    }
    if let Some(l) = last {
        // Mod 2^32, as the sequence numbers wrap.
        assert!(
            (last_written_now.wrapping_sub(l) as i32) >= 0,
            "nothing in the file the thread did not write"
        );
        previous.last_ts = Some(l);
    }
}

#[test]
fn stress_start_stop_flush() {
    let cycles: u64 = std::env::var("HUBBLE_STRESS_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000);
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    let dir = std::path::PathBuf::from("/stress/hubble");
    let mut cfg = Config::new("com.stress", "com.stress", dir);
    cfg.ring_bytes = 4096;
    cfg.mode = MODE;
    cfg.threads = 2;
    cfg.max_poll_sleep = std::time::Duration::ZERO;
    let storage = Arc::new(MemStorage::default());
    let control = Control::new(FakeArt::default(), cfg, props, Box::new(storage.clone()));
    let threads: Vec<Arc<FakeThread>> = (0..2).map(|_| Arc::from(FakeThread::new())).collect();
    for (i, t) in threads.iter().enumerate() {
        control.thread_attached(t.handle(), 100 + i as u32, "traced", i == 0);
        control.thread_foreground(t.handle());
    }
    control.start_tracing().unwrap();
    assert_eq!(control.traced_threads().len(), 2);
    let done = Arc::new(AtomicBool::new(false));
    let last_written: Vec<Arc<AtomicU32>> = (0..2).map(|_| Arc::new(AtomicU32::new(0))).collect();
    // Joins the traced threads before the control plane (and its rings) go away, also when an
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
            let (t, done, lw) = (t.clone(), done.clone(), last_written[i].clone());
            std::thread::spawn(move || run_traced(&t, 0x9e37 + i as u64 * 7919, i == 1, &done, &lw))
        })
        .collect();
    let mut runners = Runners(done.clone(), runners);
    // Both traced threads are running trace points before the first stop.
    while last_written.iter().any(|w| w.load(Ordering::Relaxed) == 0) {
        std::thread::yield_now();
    }
    let mut checks: Vec<Check> = (0..2)
        .map(|_| Check {
            last_ts: None,
            records: 0,
        })
        .collect();
    let mut rng = Rng(12345);
    let started = Instant::now();
    let mut timeouts = 0u64;
    for _ in 0..cycles {
        let i = (rng.next() % 2) as usize;
        match control.flush(threads[i].handle(), "stress") {
            Ok(f) => {
                let path = f.path.expect("consent given");
                let bytes = storage.files.lock().unwrap().get(&path).cloned().unwrap();
                check_file(
                    &bytes,
                    &mut checks[i],
                    last_written[i].load(Ordering::Relaxed),
                );
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
    println!(
        "stress: {cycles} stop/flush/restart cycles in {elapsed:.2?} ({:.1} µs/cycle): \
         {coop} cooperative stops, {forced} forced (native), {saves} re-check saves, \
         {timeouts} timeouts, {} records verified",
        elapsed.as_secs_f64() * 1e6 / cycles as f64,
        checks.iter().map(|c| c.records).sum::<u64>()
    );
    assert_eq!(coop + forced, cycles - timeouts);
    assert!(coop > 0);
    assert!(checks.iter().all(|c| c.records > 0));
}
