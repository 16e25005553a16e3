//! Many-thread mode in the C++ trace point (`docs/many-threads.md`):
//! `trace_point.h`'s slow path and `pool_take.h`, compiled unchanged into `cpp/pool_replay.cc`,
//! replay random traffic of several threads over one pool, in 64- and 32-bit mode. Every pool
//! slot (both headers and all data) and every thread's cursor, limit and end must equal
//! `hubble_format::pool::PoolWriter` fed the same calls, at several points of each run.
//! Threads interleave at trace-point granularity: the races are the loom models'
//! (`rust/runtime/tests/loom_pool.rs`), on the same algorithm.
mod common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{assert_went_round, pool_line, reference, run, traffic, Op};
use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::pool_traffic::{ROOMY, SATURATED};
use hubble_format::slot::Mode;
use hubble_interp_replay::{build_cpp, mutant_header};

fn driver() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        build_cpp(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            "pool_replay.cc",
            "hubble-pool-replay",
            &[],
        )
    })
}

fn script(mode: Mode, g: Geometry, threads: usize, ops: &[Op]) -> String {
    let bits = match mode {
        Mode::Bits64 => 64,
        Mode::Bits32 => 32,
    };
    let mut s = format!("mode {bits} {}", pool_line(g, threads));
    for op in ops {
        match *op {
            Op::Entry(i, p, c) => s.push_str(&format!("entry {i} {p:x} {c:x}\n")),
            Op::Exit(i, c) => s.push_str(&format!("exit {i} {c:x}\n")),
            Op::Task(i, kind, task, queue, c) => s.push_str(&format!(
                "task {i} {} {task:x} {queue:x} {c:x}\n",
                kind.code()
            )),
        }
    }
    s
}

/// Replays prefixes of the traffic and compares; returns the final writer.
fn check(
    exe: &Path,
    mode: Mode,
    g: Geometry,
    threads: usize,
    steps: usize,
    seed: u64,
) -> PoolWriter {
    // Task records too: two slots in both modes, which in 32-bit mode pad a block's last slot.
    let ops = common::with_tasks(traffic(mode, threads, steps, seed), seed);
    let cmd = [exe.to_str().unwrap().to_string()];
    let mut last = None;
    for cut in [steps / 7, steps / 3, steps / 2, steps] {
        let got = run(&cmd, &script(mode, g, threads, &ops[..cut]), threads);
        let (w, words) = reference(mode, g, threads, &ops[..cut], got.base, |c| c);
        assert_eq!(got.slots.len(), w.slots().len());
        if let Some(k) = (0..w.slots().len()).find(|&k| got.slots[k] != w.slots()[k]) {
            panic!(
                "{mode:?}, after {cut} trace points: pool slot {k} is {:#x}, the reference \
                 writer's {:#x}",
                got.slots[k],
                w.slots()[k]
            );
        }
        assert_eq!(
            got.words, words,
            "{mode:?}, after {cut}: cursor, limit, end per thread"
        );
        last = Some(w);
    }
    last.unwrap()
}

#[test]
fn the_cpp_trace_point_writes_the_pool_as_the_reference_writer_in_both_modes() {
    for mode in [Mode::Bits64, Mode::Bits32] {
        let w = check(driver(), mode, ROOMY, 10, 4000, 0x4855_4242);
        assert_went_round(&w, &format!("{mode:?}"));
    }
}

#[test]
fn a_saturated_pool_drops_in_the_cpp_trace_point_as_in_the_reference_writer() {
    for mode in [Mode::Bits64, Mode::Bits32] {
        let w = check(driver(), mode, SATURATED, 12, 3000, 0xdead_beef);
        assert!(w.dropped > 10, "{mode:?}: only {} drops", w.dropped);
    }
}

/// The comparison can fail: `pool_take.h` without the reuse bound, or sealing without the
/// next seq, differs from the reference writer.
#[test]
fn mutated_pool_paths_are_detected() {
    let mutants = [
        (
            "pool-no-bound",
            "seen == kOwned || ticket < (seen >> 1)",
            "seen == kOwned",
        ),
        (
            "pool-no-seq",
            "Store(&block[kEnd], static_cast<Word>(seq + 1u));",
            "Store(&block[kEnd], static_cast<Word>(seq));",
        ),
    ];
    for (name, from, to) in mutants {
        let dir = mutant_header(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            name,
            "pool_take.h",
            from,
            to,
        );
        let inc = dir.to_str().unwrap().to_string();
        let exe = build_cpp(&dir, "pool_replay.cc", "hubble-pool-replay", &["-I", &inc]);
        let failed = std::panic::catch_unwind(|| {
            check(&exe, Mode::Bits64, ROOMY, 10, 4000, 0x4855_4242);
        })
        .is_err();
        assert!(failed, "mutant {name} was not detected");
    }
}
