//! Many-thread mode in ART's compiled code (issue 17; `docs/many-threads.md`): corpus methods
//! compiled by the patched compiler for x86_64 (their trace points and out-of-line halves as
//! `code_generator_x86_64.cc` lays them out, patch 0015), called natively many times in a row
//! with the thread in pool mode over a pool of blocks too small for two calls, the block-end
//! function (`runtime/hubble/pool_x86_64.S`, built into the harness) reached through the
//! header's `P_TAKE` as on a device. The pool read back as a flush reads it
//! (`hubble_format::pool::thread_streams`) must hold one stream of the thread's tid, its blocks
//! in seq order from 0 with none dropped, decoding to exactly an entry of the `ArtMethod*` and
//! an exit per call; the result and ART's callee-saves must be what the ring-mode run gives.
//!
//! arm64 and thumb2 compiled code runs in unicorn with a ring only (docs/many-threads.md, "What
//! is left"); the A64 emitter's block-end path is proven on its own bytes
//! (`hotpath-emu/tests/pool_a64.rs`).
mod common;

use common::{corpus_dex, harness_or_skip};
use hubble_art_compile::native::{self, PoolSetup, POOL_BASE};
use hubble_art_compile::{parse_args, ring_events, FIGURE_CALLS};
use hubble_format::pool::{thread_streams, Geometry, PoolWriter, H_CLOSE, POOL_HEADER_SLOTS};
use hubble_format::ring::{decode, RingView};
use hubble_format::Mode;

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
            // The flush closes the block a thread still owns at its published cursor.
            let mut image = r.ring[..GEOMETRY.total_slots()].to_vec();
            let open = ((r.end - POOL_BASE) / 8) as usize;
            assert!(
                open >= POOL_HEADER_SLOTS && open < image.len(),
                "{desc}: the thread owns no block of the pool (end {:#x})",
                r.end
            );
            image[open + H_CLOSE] = r.cursor;
            let streams = thread_streams(&image, GEOMETRY, POOL_BASE)
                .unwrap_or_else(|e| panic!("{desc} {method:#x}: {e}"));
            assert_eq!(streams.len(), 1, "{desc}: one thread, one stream");
            let s = &streams[0];
            assert_eq!(s.tid, TID, "{desc}: blocks stamped with another tid");
            let seqs: Vec<u32> = s.blocks.iter().map(|b| b.seq).collect();
            assert_eq!(
                seqs,
                (0..seqs.len() as u32).collect::<Vec<_>>(),
                "{desc} {method:#x}: blocks not taken in seq order from 0 (a drop or a lost block)"
            );
            assert!(
                s.blocks.len() as u64 >= CALLS / 2,
                "{desc} {method:#x}: only {} blocks for {CALLS} calls",
                s.blocks.len()
            );
            blocks_taken += s.blocks.len();
            let window = decode(&RingView::linear(&s.slots), Mode::Bits64).unwrap_or_else(|e| {
                panic!("{desc} {method:#x}: the stream does not decode: {e:?}")
            });
            let want: Vec<(bool, u64)> = (0..CALLS)
                .flat_map(|_| [(true, method), (false, 0)])
                .collect();
            assert_eq!(
                ring_events(&window.records),
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
