//! Writes synthetic version 4 (many-thread) trace files: `synth_threads OUT_DIR [COUNT]`.
//!
//! Each is a flush of a `PoolWriter` run (the model the format's tests use,
//! `format/tests/common/pool_scenario.rs`): several threads, one with several runs (blocks the
//! pool reused between them), one whose first run follows dropped records, lost oldest blocks,
//! every thread idle for 2^33 ticks or more before the flush. `COUNT` files (default 2), 64- and
//! 32-bit, named `threads-<n>.hubble`.

#[path = "../../format/tests/common/pool_scenario.rs"]
mod scenario;

use hubble_format::Mode;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(args.get(1).expect("usage: synth_threads OUT_DIR [COUNT]"));
    let count: usize = args.get(2).map_or(2, |s| s.parse().expect("count"));
    std::fs::create_dir_all(&dir).expect("create output directory");
    let mut written = 0;
    for seed in scenario::SEEDS {
        if written == count {
            break;
        }
        let mode = if written % 2 == 0 {
            Mode::Bits64
        } else {
            Mode::Bits32
        };
        let s = scenario::build(mode, seed);
        let runs = s.expected_runs();
        let gaps =
            runs.values().any(|r| r.len() > 1) && s.drops.iter().any(|(t, _)| runs.contains_key(t));
        if !gaps {
            continue;
        }
        let path = dir.join(format!("threads-{written}.hubble"));
        std::fs::write(&path, s.file().to_bytes().expect("valid file")).expect("write");
        println!("{}", path.display());
        written += 1;
    }
    assert_eq!(written, count, "not enough seeds with every kind of gap");
}
