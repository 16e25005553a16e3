//! Writes synthetic trace files: `synth OUT_DIR [RING_SLOTS] [THREADS]`.
//!
//! Thread 1 is the process's main thread; the others are workers of the same process, and one
//! more file comes from a second, 32-bit process. Each file is `<tid>.hubble`.

use hubble_format::Mode;
use hubble_testkit::synth::{trace, Spec};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir =
        std::path::PathBuf::from(args.get(1).expect("usage: synth OUT_DIR [SLOTS] [THREADS]"));
    let slots: usize = args.get(2).map_or(4096, |s| s.parse().expect("slots"));
    let threads: u32 = args.get(3).map_or(3, |s| s.parse().expect("threads"));
    std::fs::create_dir_all(&dir).expect("create output directory");
    for n in 0..threads {
        let second_process = threads > 1 && n == threads - 1;
        let spec = Spec {
            mode: if second_process {
                Mode::Bits32
            } else {
                Mode::Bits64
            },
            ring_slots: slots,
            laps: if n % 2 == 0 { 1.7 } else { 0.8 },
            seed: 7 + u64::from(n),
            unresolved_every: if n == 1 { 17 } else { 0 },
            // Different timer frequencies and reference pairs: the wall clock must line them up.
            timer_hz: [19_200_000, 24_000_000, 62_500_000][n as usize % 3],
            start_counter: (1u64 << 36) * u64::from(n + 1) + 12_345,
            wall_clock_ns: 1_700_000_000_123_456_789 + u64::from(n) * 3_000_000,
            pid: if second_process { 5151 } else { 4242 },
            tid: if n == 0 { 4242 } else { 4300 + n },
            thread_name: if n == 0 {
                "main".into()
            } else {
                format!("worker-{n}")
            },
            process_name: if second_process {
                "com.example.other".into()
            } else {
                "com.example.app".into()
            },
            ..Spec::default()
        };
        let file = trace(&spec);
        let path = dir.join(format!("{}.hubble", spec.tid));
        file.write_atomic(&path).expect("write trace");
        println!("{}", path.display());
    }
}
