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

use std::sync::Arc;
use std::time::Instant;

use hubble_format::ring::{decode, RingView};
use hubble_format::{Mode, TraceFile};
use hubble_runtime::{Config, Control, RuntimeError};
use hubble_testkit::runtime::{FakeArt, FakeThread, MemStorage};

mod stream;

use stream::{check_window, Check, Runners};

const MODE: Mode = Mode::Bits64;

fn check_file(bytes: &[u8], previous: &mut Check, last_written_now: u32) {
    let file = TraceFile::parse(bytes).expect("the file parses and its CRC matches");
    let window = decode(&RingView::linear(&file.window), MODE).expect("the window decodes");
    check_window(&window.records, previous, last_written_now, &file.symbols);
}

#[test]
fn stress_start_stop_flush() {
    let cycles = stream::cycles("HUBBLE_STRESS_CYCLES");
    let props = stream::consenting_properties();
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
    let runners = Runners::start(&threads, true, |_, t, m, seq| match m {
        Some(m) => t.entry(MODE, m, seq),
        None => t.exit(seq),
    });
    let mut checks: Vec<Check> = (0..2).map(|_| Check::default()).collect();
    let mut rng = stream::Rng::new(12345);
    let started = Instant::now();
    let mut timeouts = 0u64;
    for _ in 0..cycles {
        let i = (rng.next() % 2) as usize;
        match control.flush(threads[i].handle(), "stress") {
            Ok(f) => {
                let path = f.path.expect("consent given");
                let bytes = storage.files.lock().unwrap().get(&path).cloned().unwrap();
                check_file(&bytes, &mut checks[i], runners.written(i));
            }
            Err(RuntimeError::StopTimeout(..)) => timeouts += 1,
            Err(e) => panic!("flush failed: {e}"),
        }
    }
    let elapsed = started.elapsed();
    runners.join();
    let (coop, forced, saves) = stream::stops(&control.stats);
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
