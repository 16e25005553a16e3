//! What the ANR hook costs the signal catcher, and how long after SIGQUIT the
//! files are on disk (`docs/art-runtime-integration.md` §7).
//!
//!   cargo bench -p hubble-runtime --bench anr
//!
//! 1. The request path ([`request_anr_flush`], what `SigQuitReceived` runs): a new request
//!    (atomic swap, try-lock, channel send) and one coalesced into a pending request (the swap
//!    alone), 200 000 each, timed one by one (`Instant` around the call: its own ~20-40 ns are
//!    in the figures). Between two new requests the control side takes the flag with
//!    `debug.hubble.anr_interval` = `off`, which flushes nothing.
//! 2. End to end: two traced threads (rings of `HUBBLE_ANR_RING_MB`, default 4 MiB, filled with
//!    distinct methods, one thread in native code, one runnable answering its doorbell), the real
//!    control loop on its own thread, files written to a temporary directory with fsync: time
//!    from the request to both files renamed, median of 7.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use hubble_format::Mode;
use hubble_runtime::flush::FsStorage;
use hubble_runtime::props::{ANR_INTERVAL, CONSENT};
use hubble_runtime::{control_loop, request_anr_flush, Config, Control, Message};
use hubble_testkit::runtime::{FakeArt, FakeProperties, FakeThread, MemStorage};

fn percentile(v: &mut [u64], p: f64) -> u64 {
    v.sort_unstable();
    v[((v.len() - 1) as f64 * p) as usize]
}

fn request_path() {
    let props = Arc::new(FakeProperties::default());
    props.set(ANR_INTERVAL, "off");
    let c = Control::new(
        FakeArt::default(),
        Config::new("b", "b", PathBuf::from("/nonexistent")),
        props,
        Box::new(MemStorage::default()),
    );
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    const N: usize = 200_000;
    let (mut new, mut coalesced) = (Vec::with_capacity(N), Vec::with_capacity(N));
    for _ in 0..N {
        let t = Instant::now();
        assert!(request_anr_flush(&c, &tx));
        new.push(t.elapsed().as_nanos() as u64);
        let t = Instant::now();
        assert!(!request_anr_flush(&c, &tx));
        coalesced.push(t.elapsed().as_nanos() as u64);
        c.handle_anr();
        while rx.try_recv().is_ok() {}
    }
    for (what, v) in [("new request", &mut new), ("coalesced", &mut coalesced)] {
        println!(
            "request path, {what}: median {} ns, p99 {} ns, max {} ns ({N} calls)",
            percentile(v, 0.5),
            percentile(v, 0.99),
            percentile(v, 1.0)
        );
    }
}

fn end_to_end() {
    let mb: usize = std::env::var("HUBBLE_ANR_RING_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let tmp = std::env::temp_dir().join(format!("hubble-anr-bench-{}", std::process::id()));
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    props.set(ANR_INTERVAL, "0ms");
    let mut cfg = Config::new("b", "b", tmp.clone());
    cfg.ring_bytes = mb << 20;
    cfg.mode = Mode::Bits64;
    cfg.max_files = 1000;
    cfg.max_bytes = u64::MAX;
    let c = Arc::new(Control::new(
        FakeArt::default(),
        cfg,
        props,
        Box::new(FsStorage),
    ));
    let threads: Vec<Arc<FakeThread>> = (0..2).map(|_| Arc::from(FakeThread::new())).collect();
    c.thread_attached(threads[0].handle(), 1, "main", true);
    c.thread_attached(threads[1].handle(), 2, "worker", false);
    c.thread_foreground(threads[1].handle());
    c.start_tracing().unwrap();
    // Thread 0 runs managed code and answers its doorbell; thread 1 is in native code.
    let quit = Arc::new(AtomicBool::new(false));
    let runner = {
        let (t, quit) = (threads[0].clone(), quit.clone());
        std::thread::spawn(move || {
            t.to_runnable();
            let mut i = 0u64;
            while !quit.load(Ordering::Relaxed) {
                let m = 0x1000 + 16 * (i % 50_000);
                t.entry(Mode::Bits64, m, i as u32);
                t.exit(i as u32 + 1);
                i += 1;
            }
            t.to_native();
        })
    };
    let t1 = &threads[1];
    t1.to_runnable();
    for i in 0..(mb << 20) as u64 / 16 {
        t1.entry(Mode::Bits64, 0x80_0000 + 16 * (i % 50_000), i as u32);
        t1.exit(i as u32 + 1);
    }
    t1.to_native();
    let (tx, rx) = mpsc::channel();
    let tx = Arc::new(Mutex::new(tx));
    let looper = {
        let c = c.clone();
        std::thread::spawn(move || control_loop(&*c, &rx))
    };
    // The runner's ring fills (a few ms) before the first request.
    std::thread::sleep(Duration::from_millis(200));
    let mut took = Vec::new();
    for _ in 0..7 {
        let before = c.stats.flushes.load(Ordering::Relaxed);
        let t = Instant::now();
        assert!(request_anr_flush(&*c, &tx));
        while c.stats.flushes.load(Ordering::Relaxed) < before + 2 {
            assert_eq!(c.stats.failed_flushes.load(Ordering::Relaxed), 0);
            std::thread::yield_now();
        }
        took.push(t.elapsed().as_micros() as u64);
    }
    quit.store(true, Ordering::Relaxed);
    runner.join().unwrap();
    let _ = tx.lock().unwrap().send(Message::Shutdown);
    looper.join().unwrap();
    let bytes: u64 = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum::<u64>()
        / 14; // 7 requests x 2 files
    let _ = std::fs::remove_dir_all(&tmp);
    println!(
        "end to end, 2 threads x {mb} MiB rings (~{:.1} MiB per file): median {:.1} ms, min {:.1} ms, max {:.1} ms (7 requests)",
        bytes as f64 / (1 << 20) as f64,
        percentile(&mut took.clone(), 0.5) as f64 / 1000.0,
        percentile(&mut took.clone(), 0.0) as f64 / 1000.0,
        percentile(&mut took, 1.0) as f64 / 1000.0,
    );
}

fn main() {
    request_path();
    end_to_end();
}
