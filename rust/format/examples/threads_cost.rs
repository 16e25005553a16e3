//! What a version 4 flush costs to write and to read, at the default pool: `cargo run --release
//! -p hubble-format --example threads_cost [THREADS]`. A `PoolWriter` run of 64 MiB (4 096 blocks
//! of 16 KiB, A = 128) with THREADS threads (default 64; a quarter write 8× as often as the
//! rest) fills the pool one and a half times; then, timed: `thread_streams` on the snapshot, the
//! v4 file's bytes, `ThreadsFile::parse`, `into_run_files` (one v3-like window per run, with the
//! symbols it names) and decoding every run. Prints one line per step.

use std::collections::BTreeMap;
use std::time::Instant;

use hubble_format::pool::{self, Geometry, PoolWriter, BLOCK_BYTES};
use hubble_format::{Mode, ProcessHeader, ThreadsFile};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let threads: u32 = std::env::args().nth(1).map_or(Ok(64), |s| s.parse())?;
    let geometry = Geometry {
        blocks: 4096,
        block_slots: BLOCK_BYTES / 8,
        active: 128,
    };
    let base = 0x7000_0000_0000;
    let mut w = PoolWriter::new(Mode::Bits64, geometry, base);
    for tid in 1..=threads {
        w.start_thread(tid);
    }
    // 2 000 methods, a tenth above 4 GiB (two-slot entries).
    let methods = hubble_testkit::method_mix(2000);
    let symbols: BTreeMap<u64, String> = methods
        .iter()
        .map(|m| (*m, format!("void com.example.C{m:x}.run(int)")))
        .collect();
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut depth = vec![0u32; threads as usize + 1];
    let budget = geometry.blocks * geometry.data_slots();
    let mut counter = 1u64 << 40;
    let mut written = 0usize;
    while written < budget * 3 / 2 {
        let r = next();
        let tid = if r % 3 == 0 {
            1 + (r >> 8) as u32 % ((threads + 3) / 4)
        } else {
            1 + (r >> 8) as u32 % threads
        };
        counter += 1 + (r >> 40) % 200;
        let d = &mut depth[tid as usize];
        if *d > 0 && (r >> 20) % 2 == 0 {
            *d -= 1;
            w.exit(tid, counter);
            written += 1;
        } else {
            *d += 1;
            let m = methods[(r >> 24) as usize % methods.len()];
            w.entry(tid, m, counter)?;
            written += if m >> 32 == 0 { 1 } else { 2 };
        }
    }
    let snapshot = w.snapshot();
    let t = Instant::now();
    let streams = pool::thread_streams(&snapshot, geometry, base)?;
    let runs = streams.len();
    println!("thread_streams:  {:>8.1} ms ({runs} runs)", ms(t));
    let header = ProcessHeader {
        mode: Mode::Bits64,
        timer_hz: 19_200_000,
        reference_counter: counter + 10,
        wall_clock_ns: 1_764_000_000_000_000_000,
        pid: 1,
        process_name: "com.example.app".into(),
        reason: "cost".into(),
        metadata: BTreeMap::new(),
    };
    let names = (1..=threads).map(|t| (t, format!("thread-{t}"))).collect();
    let t = Instant::now();
    let file = ThreadsFile::from_streams(header, streams, &names, &BTreeMap::new(), symbols);
    let bytes = file.to_bytes()?;
    println!(
        "write v4:        {:>8.1} ms ({:.1} MiB for a {} MiB pool, {} threads)",
        ms(t),
        bytes.len() as f64 / (1 << 20) as f64,
        (geometry.blocks * BLOCK_BYTES) >> 20,
        file.threads.len()
    );
    let t = Instant::now();
    let back = ThreadsFile::parse(&bytes)?;
    println!("parse v4:        {:>8.1} ms", ms(t));
    let t = Instant::now();
    let run_files = back.into_run_files();
    println!("into_run_files:  {:>8.1} ms", ms(t));
    let t = Instant::now();
    let mut events = 0;
    for r in &run_files {
        events += r.file.decode_events()?.events.len();
    }
    println!("decode all runs: {:>8.1} ms ({events} events)", ms(t));
    Ok(())
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}
