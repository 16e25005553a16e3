//! Flush of a full 32 MiB ring, symbolization of 50k distinct pointers and fsync included,
//! against `cp` of the same bytes in the same run (target: at most 1.5×). Prints a table.
//!
//!   cargo bench -p hubble-runtime --bench flush
//!
//! The file goes to rust/target/flush-bench (a real disk here, so fsync costs what it costs).

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hubble_format::Mode;
use hubble_runtime::flush::FsStorage;
use hubble_runtime::props::{FakeProperties, CONSENT};
use hubble_runtime::testing::{FakeArt, FakeThread};
use hubble_runtime::{Config, Control};

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

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/flush-bench");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    let iterations = 7;
    let mut flush_times = Vec::new();
    let mut last_file = None;
    let mut symbols = 0;
    for i in 0..iterations {
        let dir = root.join(format!("hubble{i}"));
        let mut cfg = Config::new("com.bench", "com.bench", dir);
        cfg.ring_bytes = RING;
        cfg.mode = Mode::Bits64;
        cfg.max_files = 100;
        cfg.max_bytes = u64::MAX;
        // A fresh control plane each time: a cold symbol cache, all 50k resolved.
        let c = Control::new(FakeArt::default(), cfg, props.clone(), Box::new(FsStorage));
        let t = FakeThread::new();
        c.thread_attached(t.handle(), 1, "main", true);
        c.start_tracing().unwrap();
        t.to_runnable();
        let mut ts = 0u32;
        // Fill (and wrap) the whole ring: entries over 50k distinct methods, 1 in 16 wide.
        for k in 0..(RING as u64 / 8) {
            let m = k % DISTINCT;
            let method = if m % 16 == 0 {
                0x7f00_0000_0000 + 16 * m
            } else {
                0x1000_0000 + 16 * m
            };
            t.entry(Mode::Bits64, method, ts);
            t.exit(ts + 1);
            ts = ts.wrapping_add(2);
        }
        t.to_native();
        let start = Instant::now();
        let f = c.flush(t.handle(), "bench").unwrap();
        flush_times.push(start.elapsed());
        symbols = f.symbols;
        eprintln!(
            "phases (stop+copy, symbolize, serialize, write+fsync): {:.1?}",
            f.phases
        );
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
    println!(
        "| what ({} MiB file, {symbols} symbols) | median of {iterations} | ratio |",
        bytes >> 20
    );
    println!("|---|---|---|");
    println!("| hubble flush (stop, copy, decode, symbolize, write, fsync, rename) | {flush:.2?} | 1.00 |");
    println!(
        "| cp | {cp:.2?} | flush/cp = {:.2} |",
        flush.as_secs_f64() / cp.as_secs_f64()
    );
    println!(
        "| cp + sync FILE (fsync) | {cp_sync:.2?} | flush/(cp+sync) = {:.2} |",
        flush.as_secs_f64() / cp_sync.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&root);
}
