//! nterp's arm64 macros in many-thread mode (issue 17 A.1; `docs/many-threads.md`): the slow
//! path of `nterp_arm64.S` calls `pool_arm64.S`'s block-end function when `begin` carries the
//! pool tag. `cpp/nterp_pool_harness.c` with `cpp/nterp_arm64_harness.S` (both include the
//! ART files unchanged) runs random traffic of several threads over one pool under
//! qemu-aarch64; the pool and every thread's words must equal `PoolWriter` fed the same calls
//! in every bit a counter value cannot change (the harness reads the real counter: a bit is
//! compared unless the reference writer sets it differently for counters 0 and all ones).
//! Needs aarch64-linux-gnu-gcc and qemu-aarch64 (scripts/deps/hotpath.apt): missing tools fail.
mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use common::{reference, run, traffic, Op, ROOMY, SATURATED};
use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::slot::Mode;
use hubble_interp_replay::{offset_defines, repo_root};

fn harness() -> Vec<String> {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    let exe = EXE.get_or_init(|| {
        let cpp = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cpp");
        let exe = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("nterp-pool-arm64");
        let ok = Command::new("aarch64-linux-gnu-gcc")
            .args(["-O2", "-Wall", "-Werror", "-static"])
            .args(offset_defines("8"))
            .arg("-I")
            .arg(repo_root().join("art-patches/files"))
            .arg(cpp.join("nterp_pool_harness.c"))
            .arg(cpp.join("nterp_arm64_harness.S"))
            .arg("-o")
            .arg(&exe)
            .status()
            .unwrap_or_else(|e| panic!("aarch64-linux-gnu-gcc: {e}"));
        assert!(ok.success(), "building the nterp pool harness failed");
        exe
    });
    vec![
        "qemu-aarch64".to_string(),
        exe.to_str().unwrap().to_string(),
    ]
}

fn script(g: Geometry, threads: usize, ops: &[Op]) -> String {
    let mut s = format!(
        "blocks {} slots {} active {} threads {threads}\n",
        g.blocks, g.block_slots, g.active
    );
    for op in ops {
        match *op {
            Op::Entry(i, p, _) => s.push_str(&format!("entry {i} {p:x}\n")),
            Op::Exit(i, _) => s.push_str(&format!("exit {i}\n")),
        }
    }
    s
}

fn check(g: Geometry, threads: usize, steps: usize, seed: u64) -> PoolWriter {
    let ops = traffic(Mode::Bits64, threads, steps, seed);
    let got = run(&harness(), &script(g, threads, &ops), threads);
    let (zero, words) = reference(Mode::Bits64, g, threads, &ops, got.base, |_| 0);
    let (ones, _) = reference(Mode::Bits64, g, threads, &ops, got.base, |_| u64::MAX);
    assert_eq!(got.slots.len(), zero.slots().len());
    for k in 0..got.slots.len() {
        let counter_bits = zero.slots()[k] ^ ones.slots()[k];
        assert_eq!(
            got.slots[k] & !counter_bits,
            zero.slots()[k] & !counter_bits,
            "pool slot {k}: {:#x}, the reference writer's {:#x} (counter bits {counter_bits:#x})",
            got.slots[k],
            zero.slots()[k]
        );
    }
    assert_eq!(got.words, words, "cursor, limit, end per thread");
    zero
}

#[test]
fn nterp_writes_the_pool_as_the_reference_writer() {
    let w = check(ROOMY, 10, 4000, 0x4855_4242);
    assert_eq!(w.dropped, 0);
    assert!(
        w.slots()[0] > 8 * ROOMY.blocks as u64,
        "{} tickets",
        w.slots()[0]
    );
}

#[test]
fn a_saturated_pool_drops_in_nterp_as_in_the_reference_writer() {
    let w = check(SATURATED, 12, 3000, 0xdead_beef);
    assert!(w.dropped > 10, "only {} drops", w.dropped);
}
