//! Flush of a full 32 MiB ring, symbolization of 50k distinct pointers and fsync included,
//! against `cp` and `cp` + `sync` of the same bytes in the same run (target: at most 1.5×).
//! Prints a table, then the flush's phases (medians).
//!
//!   cargo bench -p hubble-runtime --bench flush
//!
//! The file goes to rust/target/flush-bench (a real disk here, so fsync costs what it costs).
//! One control plane serves all flushes, as in a process: its copy-out buffer stays mapped
//! between flushes. Each iteration traces 50k methods it has not traced before, so the symbol
//! cache is cold every time (all 50k resolved through the fake ART, with PrettyMethod-sized
//! names).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hubble_format::Mode;
use hubble_runtime::flush::FsStorage;
use hubble_runtime::props::CONSENT;
use hubble_runtime::{Config, Control};
use hubble_testkit::runtime::{FakeArt, FakeProperties, FakeThread};

const RING: usize = 32 << 20;
const DISTINCT: u64 = 50_000;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn run(cmd: &mut Command) -> Duration {
    let t = Instant::now();
    let s = cmd.status().expect("spawn");
    assert!(s.success());
    t.elapsed()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/flush-bench");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    let iterations: usize = std::env::var("HUBBLE_FLUSH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    let dir = root.join("hubble");
    let mut cfg = Config::new("com.bench", "com.bench", dir);
    cfg.ring_bytes = RING;
    cfg.mode = Mode::Bits64;
    cfg.max_files = 100;
    cfg.max_bytes = u64::MAX;
    let mut art = FakeArt::default();
    art.pretty_names = true;
    let c = Control::new(art, cfg, props.clone(), Box::new(FsStorage));
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 1, "main", true);
    c.start_tracing().unwrap();
    let mut flush_times = Vec::new();
    let mut phases: [Vec<Duration>; 4] = Default::default();
    let mut last_file = None;
    let mut symbols = 0;
    let mut ts = 0u32;
    for i in 0..iterations as u64 {
        t.to_runnable();
        // Fill (and wrap) the whole ring: entries over 50k distinct methods, 1 in 16 wide,
        // none of them seen by an earlier iteration (cold symbol cache).
        let base = i * 0x0100_0000;
        for k in 0..(RING as u64 / 8) {
            let m = k % DISTINCT;
            let method = if m % 16 == 0 {
                0x7f00_0000_0000 + base + 16 * m
            } else {
                0x1000_0000 + base + 16 * m
            };
            t.entry(Mode::Bits64, method, ts);
            t.exit(ts + 1);
            ts = ts.wrapping_add(2);
        }
        t.to_native();
        let resolved = c.art().resolved.load(std::sync::atomic::Ordering::Relaxed);
        let start = Instant::now();
        let f = c.flush(t.handle(), "bench").unwrap();
        flush_times.push(start.elapsed());
        assert_eq!(
            c.art().resolved.load(std::sync::atomic::Ordering::Relaxed) - resolved,
            DISTINCT,
            "the symbol cache must be cold"
        );
        symbols = f.symbols;
        eprintln!(
            "flush {i}: {:.1?} (stop+copy+restart, symbolize, window write ∥, finish): {:.1?}",
            flush_times[i as usize], f.phases
        );
        for (all, p) in phases.iter_mut().zip(f.phases) {
            all.push(p);
        }
        last_file = f.path;
    }
    let file = last_file.unwrap();
    let bytes = std::fs::metadata(&file).unwrap().len();
    let mut cp_times = Vec::new();
    let mut cp_sync_times = Vec::new();
    for i in 0..iterations {
        let dst = root.join(format!("copy{i}"));
        cp_times.push(run(Command::new("cp").arg(&file).arg(&dst)));
        let dst2 = root.join(format!("copy-sync{i}"));
        let t = Instant::now();
        run(Command::new("cp").arg(&file).arg(&dst2));
        run(Command::new("sync").arg(&dst2));
        cp_sync_times.push(t.elapsed());
    }
    let flush = median(flush_times);
    let cp = median(cp_times);
    let cp_sync = median(cp_sync_times);
    println!("load average after the run: {}", load_average());
    println!(
        "| what ({:.1} MiB file, {symbols} symbols) | median of {iterations} | ratio |",
        bytes as f64 / (1 << 20) as f64
    );
    println!("|---|---|---|");
    println!(
        "| hubble flush (stop, copy, restart, symbolize ∥ write window, write rest, fsync, \
         rename, dir fsync) | {flush:.2?} | 1.00 |"
    );
    println!(
        "| cp | {cp:.2?} | flush/cp = {:.2} |",
        flush.as_secs_f64() / cp.as_secs_f64()
    );
    println!(
        "| cp + sync FILE (fsync) | {cp_sync:.2?} | flush/(cp+sync) = {:.2} |",
        flush.as_secs_f64() / cp_sync.as_secs_f64()
    );
    let [stop, symbolize, window, finish] = phases.map(median);
    println!(
        "phases (medians): stop+copy+restart {stop:.1?}; symbolize {symbolize:.1?} (walk, \
         cache, ART) ∥ window write+CRC {window:.1?} (helper thread); finish {finish:.1?} \
         (encode header/symbols, write them, fsync, rename, dir fsync)"
    );
    let _ = std::fs::remove_dir_all(&root);
}
