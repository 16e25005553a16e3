//! The synthetic call stream and its check, shared by the two stop/flush/restart stress tests:
//! `stress.rs` (per-thread rings) and `pool_flush_stress.rs` (many-thread mode). A traced thread
//! runs the stream through whichever traced side its test gives it; every flushed window (a ring's,
//! or each run of a version 4 file) must be consecutive in its trace-point sequence numbers,
//! balance, follow the thread's previous records in stream order and hold nothing the thread had
//! not written.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

use hubble_format::Record;
use hubble_runtime::control::Stats;
use hubble_runtime::props::CONSENT;
use hubble_testkit::runtime::{FakeProperties, FakeThread, Workers};

pub use hubble_testkit::Rng;

/// The method at `depth`: one slot below 2^32, or a wide entry above it.
pub fn method(depth: u32, wide: bool) -> u64 {
    let base = if wide { 0x7f00_0000_0000 } else { 0x1000_0000 };
    base | (u64::from(depth) << 4)
}

fn depth_of(method: u64) -> i64 {
    ((method & 0xffff_fff0) >> 4) as i64 - if method >> 32 == 0 { 0x100_0000 } else { 0 }
}

/// The first trace point's sequence number (the record's 32-bit timestamp): just below the wrap,
/// so that every run (CI's short one too) crosses it, as a long run does after ~4.3e9 trace
/// points of the busy thread.
pub const SEQ_START: u32 = u32::MAX - 200_000;

/// One traced thread's life: trace points until `done`, with native excursions. `point(Some(method),
/// seq)` runs an entry trace point, `point(None, seq)` an exit, and says whether it was written. A `bursty` thread
/// works in bursts and waits (not runnable) in between, like a UI thread between frames; the
/// other one never waits, so the machine's two cores stay contended.
pub fn run_traced(
    t: &FakeThread,
    seed: u64,
    bursty: bool,
    done: &AtomicBool,
    last_written: &AtomicU32,
    wide_entries: bool,
    mut point: impl FnMut(Option<u64>, u32) -> bool,
) {
    let mut rng = Rng::new(seed);
    let mut depth = 0u32;
    let mut seq = SEQ_START;
    t.to_runnable();
    while !done.load(Ordering::Relaxed) {
        let r = rng.next();
        let written = if depth == 0 || (r % 100 < 52 && depth < 1000) {
            let wide = wide_entries && r & (1 << 20) != 0;
            let w = point(Some(method(depth, wide)), seq);
            depth += 1;
            w
        } else {
            depth -= 1;
            point(None, seq)
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

/// What one thread's flushed windows held so far.
#[derive(Default)]
pub struct Check {
    pub last_ts: Option<u32>,
    pub records: u64,
    pub windows: u64,
}

/// One decoded window of a thread (a ring's, or one run of a version 4 file), checked against
/// what came before and what the thread had written when the file was made.
pub fn check_window(
    records: &[Record],
    previous: &mut Check,
    last_written_now: u32,
    symbols: &BTreeMap<u64, String>,
) {
    let mut last: Option<u32> = None;
    let mut rel: i64 = 0;
    let mut base_depth: Option<i64> = None;
    for r in records {
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
                    assert!(symbols.contains_key(&method), "every method symbolized");
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
        previous.windows += 1;
    }
}

/// How many stop/flush/restart cycles a stress test runs: `var` from the environment for the
/// long run, 2000 (CI's short one) without it.
pub fn cycles(var: &str) -> u64 {
    std::env::var(var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

/// Properties that give consent, so that every flush writes a file.
pub fn consenting_properties() -> Arc<FakeProperties> {
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    props
}

/// The stops of the control's flushes so far: (cooperative, forced, re-check saves).
pub fn stops(stats: &Stats) -> (u64, u64, u64) {
    (
        stats.cooperative_stops.load(Ordering::Relaxed),
        stats.forced_stops.load(Ordering::Relaxed),
        stats.recheck_saves.load(Ordering::Relaxed),
    )
}

/// The traced threads, each running the stream ([`run_traced`]: thread 1 bursty, each from its
/// own seed) through the traced side `point(i, thread, method, seq)` until they are joined.
pub struct Runners {
    workers: Workers,
    last_written: Vec<Arc<AtomicU32>>,
}

impl Runners {
    /// Starts them and returns once every one has written a trace point, so that the first stop
    /// finds them all running.
    pub fn start<P>(threads: &[Arc<FakeThread>], wide_entries: bool, point: P) -> Runners
    where
        P: Fn(usize, &FakeThread, Option<u64>, u32) -> bool + Send + Sync + 'static,
    {
        let point = Arc::new(point);
        let mut runners = Runners {
            workers: Workers::default(),
            last_written: threads.iter().map(|_| Arc::default()).collect(),
        };
        for (i, t) in threads.iter().enumerate() {
            let (t, lw, point) = (t.clone(), runners.last_written[i].clone(), point.clone());
            runners.workers.spawn(move |done| {
                let seed = 0x9e37 + i as u64 * 7919;
                run_traced(&t, seed, i == 1, done, &lw, wide_entries, |m, seq| {
                    point(i, &t, m, seq)
                })
            });
        }
        while (0..threads.len()).any(|i| runners.written(i) == 0) {
            std::thread::yield_now();
        }
        runners
    }

    /// What thread `i` had written last.
    pub fn written(&self, i: usize) -> u32 {
        self.last_written[i].load(Ordering::Relaxed)
    }

    /// Stops the threads and waits for them; a thread's panic fails the test.
    pub fn join(mut self) {
        self.workers.join();
    }
}
