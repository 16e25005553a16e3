//! nterp's macros in many-thread mode (`docs/many-threads.md`): the slow path of
//! `nterp_arm64.S` / `nterp_x86_64.S` / `nterp_x86.S` calls `pool_<isa>.S`'s block-end function
//! when `begin` carries the pool tag. `cpp/nterp_pool_harness.c` with `cpp/nterp_<isa>_harness.S`
//! (which include the ART files unchanged) runs random traffic of several threads over one pool,
//! arm64 under qemu-aarch64, x86_64 natively and x86 as a static i386 binary (registers checked
//! around every op on both); the pool and every thread's words must equal `PoolWriter` (64-bit,
//! or 32-bit for x86) fed the same calls
//! in every bit a counter value cannot change (the harness reads the real counter: a bit is
//! compared unless the reference writer sets it differently for counters 0 and all ones).
//! Needs aarch64-linux-gnu-gcc, qemu-aarch64, gcc and i686-linux-gnu-gcc (scripts/deps): missing
//! tools fail. (armng's macros run in unicorn: `hotpath-emu/tests/nterp_pool_a32.rs`.)
mod common;

use std::path::Path;

use common::{assert_went_round, pool_line, reference, run, traffic, Op};
use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::pool_traffic::{ROOMY, SATURATED};
use hubble_format::slot::Mode;
use hubble_interp_replay::{nterp_harness, NterpIsa};

fn harness(isa: NterpIsa) -> Vec<String> {
    nterp_harness(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        isa,
        "nterp_pool_harness.c",
    )
}

fn script(g: Geometry, threads: usize, ops: &[Op]) -> String {
    let mut s = pool_line(g, threads);
    for op in ops {
        match *op {
            Op::Entry(i, p, _) => s.push_str(&format!("entry {i} {p:x}\n")),
            Op::Exit(i, _) => s.push_str(&format!("exit {i}\n")),
            Op::Task(..) => unreachable!("nterp's macros write no task records"),
        }
    }
    s
}

fn check(
    cmd: &[String],
    mode: Mode,
    g: Geometry,
    threads: usize,
    steps: usize,
    seed: u64,
) -> PoolWriter {
    let ops = traffic(mode, threads, steps, seed);
    let got = run(cmd, &script(g, threads, &ops), threads);
    let (zero, words) = reference(mode, g, threads, &ops, got.base, |_| 0);
    let (ones, _) = reference(mode, g, threads, &ops, got.base, |_| u64::MAX);
    assert_eq!(got.slots.len(), zero.slots().len());
    for k in 0..got.slots.len() {
        let counter_bits = zero.slots()[k] ^ ones.slots()[k];
        assert_eq!(
            got.slots[k] & !counter_bits,
            zero.slots()[k] & !counter_bits,
            "{}: pool slot {k}: {:#x}, the reference writer's {:#x} (counter bits {counter_bits:#x})",
            cmd.join(" "),
            got.slots[k],
            zero.slots()[k]
        );
    }
    assert_eq!(
        got.words,
        words,
        "{}: cursor, limit, end per thread",
        cmd.join(" ")
    );
    zero
}

/// Every harness with the mode of its Thread words.
fn harnesses() -> [(Vec<String>, Mode); 3] {
    [
        (harness(NterpIsa::Arm64), Mode::Bits64),
        (harness(NterpIsa::X86_64), Mode::Bits64),
        (harness(NterpIsa::X86), Mode::Bits32),
    ]
}

#[test]
fn nterp_writes_the_pool_as_the_reference_writer() {
    for (cmd, mode) in harnesses() {
        let w = check(&cmd, mode, ROOMY, 10, 4000, 0x4855_4242);
        assert_went_round(&w, &cmd.join(" "));
    }
}

#[test]
fn a_saturated_pool_drops_in_nterp_as_in_the_reference_writer() {
    for (cmd, mode) in harnesses() {
        let w = check(&cmd, mode, SATURATED, 12, 3000, 0xdead_beef);
        assert!(w.dropped > 10, "only {} drops", w.dropped);
    }
}
