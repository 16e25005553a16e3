//! Many-thread mode in ART's compiled code (`docs/many-threads.md`): corpus methods
//! compiled by the patched compiler for x86_64 (their trace points and out-of-line halves as
//! `code_generator_x86_64.cc` lays them out, patch 0015), called natively many times in a row
//! with the thread in pool mode over a pool of blocks too small for two calls, the block-end
//! function (`runtime/hubble/pool_x86_64.S`, built into the harness) reached through the
//! header's `P_TAKE` as on a device. The pool read back as a flush reads it
//! (`hubble_format::pool::thread_streams`) must hold one stream of the thread's tid, its blocks
//! in seq order from 0 with none dropped, decoding to exactly an entry of the `ArtMethod*` and
//! an exit per call; the result and ART's callee-saves must be what the ring-mode run gives.
//!
//!
//! arm64: the same calls and the corpus's call trees (`Calls`, `Far`: invokes dispatched into
//! the callees' compiled code) in unicorn with the machine in pool mode (`Machine::set_pool`:
//! `pool_arm64.S` assembled, mapped where `P_TAKE` says): every run's records, read back from
//! its thread's stream, must equal the call tree the harness observed, and no trace point may
//! change a register or stack slot outside its declared clobbers (the existing checks). thumb2
//! (`pool_arm.S`, a T32 function reached with BLX) and x86 (`pool_x86.S`, `%fs`) the same.
mod common;

use std::rc::Rc;

use common::{compile_both, corpus_dex, harness_or_skip, inputs, oracle, Rng};
use hubble_art_compile::dispatch::Linker;
use hubble_art_compile::emu::PoolMode;
use hubble_art_compile::native::{self, PoolSetup, POOL_BASE};
use hubble_art_compile::pool::pool_records;
use hubble_art_compile::{check_traced, parse_args, ring_events, Runner, FIGURE_CALLS};
use hubble_format::pool::{Geometry, PoolWriter, POOL_HEADER_SLOTS};
use hubble_format::{Mode, Record};

/// 512 blocks of 4 data slots: a call's records (a two-slot entry and an exit, or a one-slot
/// entry and an exit) fill a block's usable part, so every call takes a block.
const GEOMETRY: Geometry = Geometry {
    blocks: 512,
    block_slots: 9,
    active: 2,
};
const CALLS: u64 = 150;
const TID: u32 = 4321;

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn compiled_x86_64_code_in_pool_mode_writes_every_call_into_blocks_it_takes() {
    let Some(harness) = harness_or_skip() else {
        return;
    };
    if !cfg!(target_arch = "x86_64") {
        eprintln!("SKIPPED: compiled x86_64 code runs natively on an x86_64 host only");
        return;
    }
    let dir = std::env::temp_dir().join(format!("hubble-pool-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dex = corpus_dex(&dir);
    let mut writer = PoolWriter::new(Mode::Bits64, GEOMETRY, POOL_BASE);
    writer.set_take_entry(native::pool_take_entry());
    let setup = PoolSetup {
        header: writer.slots()[..POOL_HEADER_SLOTS].try_into().unwrap(),
        total_slots: GEOMETRY.total_slots(),
        tid: TID,
    };
    let mut blocks_taken = 0usize;
    for (desc, text) in FIGURE_CALLS {
        let compiled = harness
            .compile(&dex, desc, "x86_64", true, &dir.join("t.txt"))
            .unwrap_or_else(|e| panic!("{desc}: {e}"));
        let code = &compiled.isas[0].code;
        let args = parse_args(&compiled.shorty, text).unwrap();
        // Both entry widths: an ArtMethod* above 4 GiB takes two slots, one below it one.
        for method in [0x6_0000_0120u64, 0x3_0120] {
            let ring = native::calls(code, &args, method, 1, true)
                .unwrap_or_else(|e| panic!("{desc}: ring mode: {e}"));
            let r = native::pool_calls(code, &args, method, CALLS, &setup)
                .unwrap_or_else(|e| panic!("{desc} {method:#x}: pool mode: {e}"));
            assert_eq!(
                r.result(&compiled.shorty),
                ring.result(&compiled.shorty),
                "{desc} {method:#x}: the result differs from the ring-mode run's"
            );
            assert_eq!(
                r.callee_saves_changed, 0,
                "{desc} {method:#x}: r12-r15 not preserved"
            );
            // Read back as a flush reads the pool: one stream of the tid, seqs from 0.
            let (records, spanned) = pool_records(
                &r.ring,
                Mode::Bits64,
                GEOMETRY,
                TID,
                POOL_BASE,
                r.cursor,
                r.end,
            )
            .unwrap_or_else(|e| panic!("{desc} {method:#x}: {e}"));
            assert!(
                spanned as u64 >= CALLS / 2,
                "{desc} {method:#x}: only {spanned} blocks for {CALLS} calls"
            );
            blocks_taken += spanned;
            let want: Vec<(bool, u64)> = (0..CALLS)
                .flat_map(|_| [(true, method), (false, 0)])
                .collect();
            assert_eq!(
                ring_events(&records),
                want,
                "{desc} {method:#x}: the stream is not an entry and an exit per call"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "pool x86_64: {} corpus calls x {CALLS} in pool mode, both entry widths: {blocks_taken} \
         blocks taken by compiled code, every record in its thread's stream",
        FIGURE_CALLS.len()
    );
}

/// Blocks of 4 data slots for a machine that runs one call at a time: a block per record or two.
const EMULATED_GEOMETRY: Geometry = Geometry {
    blocks: 1024,
    block_slots: 9,
    active: 2,
};

/// Runs of one ISA in pool mode: the figure calls and the corpus's call trees.
struct PoolRuns {
    runs: usize,
    blocks: usize,
    dispatched: usize,
    unwound: usize,
}

/// The figure calls, then every Calls/Far method on a few inputs, compiled for `isa` and run in
/// unicorn with the machine in pool mode (`take`: the ISA's block-end function): each run's
/// records, read back from its thread's stream, must be the call tree the harness observed, and
/// no trace point may change a register or stack slot outside its declared clobbers.
fn pool_runs(isa: &str, take: &[u8], tag: &str) -> PoolRuns {
    let harness = harness_or_skip().expect("the compiler harness (scripts/art-build --compiler)");
    let dir = std::env::temp_dir().join(format!("hubble-pool-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dex = corpus_dex(&dir);
    let pool = PoolMode {
        geometry: EMULATED_GEOMETRY,
        take: take.to_vec(),
        tid: TID,
    };
    let mut out = PoolRuns {
        runs: 0,
        blocks: 0,
        dispatched: 0,
        unwound: 0,
    };
    let mut rng = Rng::new(0x504f_4f4c);
    let linker = Rc::new(Linker::new(&harness, &dex, true, &dir.join("callees")));
    let mut work: Vec<(String, String, Vec<Vec<hubble_art_compile::Arg>>)> = Vec::new();
    for (desc, text) in FIGURE_CALLS {
        let c = harness
            .compile(&dex, desc, isa, true, &dir.join("t.txt"))
            .unwrap_or_else(|e| panic!("{desc}: {e}"));
        let args = parse_args(&c.shorty, text).unwrap();
        work.push((desc.to_string(), c.shorty.clone(), vec![args]));
    }
    for (desc, shorty) in oracle::list(&dir, &["Calls", "Far"]) {
        let args = inputs::inputs(&mut rng, &shorty, 4);
        work.push((desc, shorty, args));
    }
    for (desc, shorty, args_list) in &work {
        let (traced, _) = compile_both(&harness, &dex, desc, shorty, &dir);
        let i = traced.isas.iter().position(|c| c.isa == isa).unwrap();
        let mut runner = Runner::linked(&traced, &linker).unwrap();
        runner.machine(i).unwrap().set_pool(pool.clone()).unwrap();
        for args in args_list {
            let o = runner
                .run(&traced, i, args)
                .unwrap_or_else(|e| panic!("{desc} {isa} {args:x?}: {e}"));
            // An exception that unwound compiled frames: their exits were written by the
            // runtime's `tp::Exit` (the harness's unwinder), into the pool.
            if o.exception.is_some() || !o.caught.is_empty() {
                out.unwound += 1;
            }
            let problems = check_traced(&o);
            assert!(
                problems.is_empty(),
                "{desc} {isa} {args:x?} in pool mode: {problems:#?}"
            );
            assert!(o.pool_blocks > 0, "{desc} {isa}: no block taken");
            // Time goes forward through the stream: every record is less than 2^31 ticks after
            // the one before it (the unwinder's exits carry the thread's newest record's time,
            // found in a pool by seq when the thread is between blocks).
            let ts: Vec<u32> = o
                .records
                .iter()
                .filter_map(|r| match *r {
                    Record::Entry { ts, .. } | Record::Exit { ts } | Record::Start { ts } => {
                        Some(ts)
                    }
                    _ => None,
                })
                .collect();
            for (k, w) in ts.windows(2).enumerate() {
                assert!(
                    w[1].wrapping_sub(w[0]) < 1 << 31,
                    "{desc} {isa} {args:x?}: record {} at {:#x} after {:#x}",
                    k + 1,
                    w[1],
                    w[0]
                );
            }
            out.runs += 1;
            out.blocks += o.pool_blocks;
            out.dispatched += o.calls.iter().filter(|c| c.0).count() - 1;
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.dispatched > 100,
        "{isa}: only {} dispatched calls",
        out.dispatched
    );
    println!(
        "pool {isa}: {} runs in pool mode ({} dispatched calls): {} blocks taken by compiled code \
         through the block-end function, every record the harness saw in its thread's stream \
         ({} of the runs threw through compiled frames: their exits from the runtime's unwinder \
         hook)",
        out.runs, out.dispatched, out.blocks, out.unwound
    );
    out
}

#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn compiled_arm64_code_and_call_trees_in_pool_mode_record_what_the_harness_saw() {
    let Some(harness) = harness_or_skip() else {
        return;
    };
    pool_runs("arm64", hubble_hotpath_emu::pool_take_a64(), "a64");
    // The checks can fail: the function's first instruction (BTI C) made `mov x5, #0`, a
    // register the trace point does not declare, fails the register check at the entry.
    let dir = std::env::temp_dir().join(format!("hubble-pool-a64m-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let dex = corpus_dex(&dir);
    let (desc, text) = FIGURE_CALLS[0];
    let c = harness
        .compile(&dex, desc, "arm64", true, &dir.join("t.txt"))
        .unwrap();
    let args = parse_args(&c.shorty, text).unwrap();
    let linker = Rc::new(Linker::new(&harness, &dex, true, &dir.join("callees")));
    let (traced, _) = compile_both(&harness, &dex, desc, &c.shorty, &dir);
    let i = traced.isas.iter().position(|c| c.isa == "arm64").unwrap();
    let mut runner = Runner::linked(&traced, &linker).unwrap();
    let mut clobbering = PoolMode {
        geometry: EMULATED_GEOMETRY,
        take: hubble_hotpath_emu::pool_take_a64().to_vec(),
        tid: TID,
    };
    assert_eq!(
        clobbering.take[..4],
        0xd503_245f_u32.to_le_bytes(),
        "BTI C first"
    );
    clobbering.take[..4].copy_from_slice(&0xd280_0005_u32.to_le_bytes());
    runner.machine(i).unwrap().set_pool(clobbering).unwrap();
    let o = runner.run(&traced, i, &args).unwrap();
    let problems = check_traced(&o);
    assert!(
        problems.iter().any(|p| p.contains("register 5 changed")),
        "{desc}: a block-end function writing x5 went unnoticed: {problems:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The patched compiler's thumb2 output (patch 0013's out-of-line half calling `pool_arm.S`
/// through `P_TAKE` with BLX) in pool mode, as arm64's.
#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn compiled_thumb2_code_and_call_trees_in_pool_mode_record_what_the_harness_saw() {
    if harness_or_skip().is_none() {
        return;
    }
    pool_runs("thumb2", hubble_hotpath_emu::pool_take_t32(), "t32");
}

/// The patched compiler's x86 output (patch 0015's out-of-line half calling `pool_x86.S`
/// through `P_TAKE`, `%fs` the thread) in pool mode, as arm64's.
#[test]
#[ignore = "needs scripts/art-build --compiler: run by tests/stages/32-art-compiler.sh"]
fn compiled_x86_code_and_call_trees_in_pool_mode_record_what_the_harness_saw() {
    if harness_or_skip().is_none() {
        return;
    }
    pool_runs("x86", hubble_hotpath_emu::pool_take_x86(), "x86");
}
