//! Many-thread mode on x86_64 (`docs/many-threads.md`): the trace points ART's x86_64
//! assembler emits (`hubble_trace_point_x86_64.cc`, from `scripts/hotpath-x86-gen`) and the runtime's
//! block-end function they call (`runtime/hubble/pool_x86_64.S`, assembled unchanged into the
//! harness) run natively on this CPU, single-stepped, for many threads sharing one pool: each
//! thread a page laid out like `Thread` at the real offsets (`tid` included), `%gs` at the one
//! being traced. After every trace point the whole pool and every thread's words must equal
//! `hubble_format::pool::PoolWriter` fed the same calls; every general register but the cursor
//! and the counter's (RAX, RDX; RCX for RDTSCP) must be unchanged, RCX included when it is not
//! the cursor (compiled code may keep an argument there across the call).
//!
//! Threads interleave at trace-point granularity (one thread runs at a time): this proves the
//! sequential algorithm slot for slot; the races are the loom models' (`loom_pool.rs`).
mod common;

use common::pool::{
    a_stop_publishes_the_cursor, blobs, block_take_counts, drops_as_the_reference_writer,
    function_bytes, traffic, without_saving_the_answer_register, writes_slot_for_slot, Pool,
    Variant,
};
use hubble_format::pool_traffic::ROOMY;
use hubble_hotpath_x86::{blob_command, Isa, Kind};

const RCX_CURSOR: Variant = Variant {
    counter: "rdtsc",
    cursor: "rcx",
    method: "rdi",
};

/// Every register assignment the generator emits, with each counter read it allows.
const VARIANTS: [Variant; 7] = [
    RCX_CURSOR,
    Variant {
        counter: "rdtsc",
        cursor: "r8",
        method: "rdi",
    },
    Variant {
        counter: "rdtsc",
        cursor: "rbx",
        method: "rdi",
    },
    Variant {
        counter: "rdtsc",
        cursor: "r15",
        method: "r9",
    },
    Variant {
        counter: "lfence-rdtsc",
        cursor: "rsi",
        method: "r12",
    },
    Variant {
        counter: "rdtscp",
        cursor: "r8",
        method: "rdi",
    },
    Variant {
        counter: "rdtscp",
        cursor: "r11",
        method: "rdi",
    },
];

#[test]
fn many_threads_write_the_pool_slot_for_slot_as_the_reference_writer() {
    writes_slot_for_slot(Isa::X86_64, &VARIANTS);
}

#[test]
fn a_saturated_pool_drops_records_exactly_as_the_reference_writer() {
    drops_as_the_reference_writer(Isa::X86_64, VARIANTS[1]);
}

#[test]
fn a_stop_in_pool_mode_publishes_the_cursor_in_the_current_block() {
    a_stop_publishes_the_cursor(Isa::X86_64, 2, RCX_CURSOR);
}

/// The comparison can fail: the block-end function with its reuse bound check removed (the
/// `jb` after `cmp %rdx, %rsi`, ticket against state >> 1, turned into two NOPs) claims a block
/// the reference writer still keeps for its N - A tickets.
#[test]
#[should_panic(expected = "the reference writer's")]
fn without_the_reuse_bound_the_pool_differs_from_the_reference_writer() {
    let mut p = Pool::new(Isa::X86_64, ROOMY, 10, RCX_CURSOR);
    let take = p.h.take;
    let code = function_bytes(&mut p);
    // cmp %rdx, %rsi (REX.W 39 /r, ModRM 11 010 110) and a short JB.
    let at: Vec<usize> = code
        .windows(4)
        .enumerate()
        .filter(|(_, w)| w[..3] == [0x48, 0x39, 0xd6] && w[3] == 0x72)
        .map(|(k, _)| k + 3)
        .collect();
    assert_eq!(
        at.len(),
        1,
        "the bound check: cmp %rdx, %rsi; jb (found {at:?})"
    );
    p.h.patch(take + at[0] as u64, &[0x90, 0x90]);
    traffic(&mut p, 10, 3000, 0x4855_4242);
}

/// A cursor other than RCX: RCX must come back unchanged from the call (the function answers in
/// it). The same emitted code with the PUSH RCX / POP RCX pair turned into NOPs must fail the
/// register check.
#[test]
#[should_panic(expected = "changed [\"rcx\"]")]
fn without_saving_rcx_the_call_clobbers_an_argument() {
    let v = VARIANTS[1];
    let blob = blobs().get(
        Isa::X86_64,
        Kind::EntryNarrow,
        v.counter,
        v.cursor,
        v.method,
    );
    // push %rcx (51) ... pop %rcx (59).
    let blob = without_saving_the_answer_register(blob.clone());
    let mut p = Pool::new(Isa::X86_64, ROOMY, 2, v);
    p.h.send(&blob_command("entry-narrow", &blob)); // replaces the blob
    p.run(0, Kind::EntryNarrow, 0x7000_0040, 10);
}

/// What a block take costs (docs/many-threads.md quotes these): instructions executed by one
/// trace point, single-stepped, the block-end function included. Exact, like the golden
/// listings: a change to the emitter or to pool_x86_64.S must update them and the doc.
#[test]
fn instructions_of_a_block_take() {
    let variants = [RCX_CURSOR, VARIANTS[1]];
    let counts = block_take_counts(Isa::X86_64, 1, Kind::EntryNarrow, variants);
    println!("x86_64 instructions per trace point, cursor rcx / r8: {counts:?}");
    // 1st: no block yet (nothing to seal), the first candidate free; 2nd, 3rd: the fast path;
    // 4th: cursor == limit = end - 8, so seal + take; then the fast path again. A cursor
    // other than RCX adds PUSH, MOV and POP.
    assert_eq!(
        counts,
        [[75, 12, 12, 84, 12, 12], [78, 12, 12, 87, 12, 12]],
        "instructions per trace point"
    );
}
