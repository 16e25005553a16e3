//! Many-thread mode's stop/flush/restart cycle through the control plane under real threads
//! (the pool-mode counterpart of `tests/stress.rs`): two traced threads run a
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

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use hubble_format::pool::Geometry;
use hubble_format::ring::{decode, RingView};
use hubble_format::{Mode, Trace};
use hubble_runtime::{Config, Control, RuntimeError};
use hubble_testkit::runtime::{FakeArt, FakeThread, MemStorage};

mod stream;

use stream::{check_window, Check, Runners};

const MODE: Mode = Mode::Bits64;
const TIDS: [u32; 2] = [100, 101];

#[test]
fn pool_stop_flush_restart_cycles() {
    let cycles = stream::cycles("HUBBLE_POOL_STRESS_CYCLES");
    let props = stream::consenting_properties();
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
    let c = control.clone();
    // One-slot entries only, so that the tiny blocks fill by record count.
    let runners = Runners::start(&threads, false, move |i, t, m, seq| {
        let (p, tid) = (c.pool().expect("many-thread mode"), TIDS[i]);
        match m {
            Some(m) => t.pool_entry(p, tid, m, u64::from(seq)),
            None => t.pool_exit(p, tid, u64::from(seq)),
        }
    });
    let mut checks: Vec<Check> = (0..2).map(|_| Check::default()).collect();
    let started = Instant::now();
    let mut timeouts = 0u64;
    for _ in 0..cycles {
        match control.flush(threads[0].handle(), "stress") {
            Ok(f) => {
                // What each thread had written when the flush returned: the file can hold no more.
                let written: Vec<u32> = (0..2).map(|i| runners.written(i)).collect();
                let path = f.path.expect("consent given");
                let bytes = storage.files.lock().unwrap().remove(&path).unwrap();
                let trace = Trace::parse(&bytes).expect("the file parses and its CRC matches");
                assert!(matches!(trace, Trace::Threads(_)), "a version 4 file");
                for section in trace.sections() {
                    let i = TIDS
                        .iter()
                        .position(|&t| t == section.tid)
                        .unwrap_or_else(|| panic!("a section of unknown thread {}", section.tid));
                    let Trace::Threads(file) = &trace else {
                        unreachable!("checked above")
                    };
                    for run in &section.runs {
                        let window =
                            decode(&RingView::linear(run.slots), MODE).expect("every run decodes");
                        check_window(&window.records, &mut checks[i], written[i], &file.symbols);
                    }
                }
            }
            Err(RuntimeError::StopTimeout(..)) => timeouts += 1,
            Err(e) => panic!("flush failed: {e}"),
        }
    }
    let elapsed = started.elapsed();
    runners.join();
    let (coop, forced, saves) = stream::stops(&control.stats);
    let pool = control.pool().unwrap().stats();
    println!(
        "pool stress: {cycles} stop/flush/restart cycles in {elapsed:.2?} ({:.1} µs/cycle): \
         {coop} cooperative stops, {forced} forced (native), {saves} re-check saves, \
         {timeouts} timeouts, {} records in {} runs verified, {} blocks taken, {} drops",
        elapsed.as_secs_f64() * 1e6 / cycles as f64,
        checks.iter().map(|c| c.records).sum::<u64>(),
        checks.iter().map(|c| c.windows).sum::<u64>(),
        pool.takes.load(Ordering::Relaxed),
        pool.drops.load(Ordering::Relaxed),
    );
    // Two threads a cycle, each stopped cooperatively or by force, unless the cycle timed out.
    assert_eq!(coop + forced, 2 * (cycles - timeouts));
    assert!(coop > 0 && forced > 0);
    assert!(checks.iter().all(|c| c.records > 0));
}
