//! Many-thread mode on x86, a 32-bit process (`docs/many-threads.md`): the trace
//! points ART's x86 assembler emits (`hubble_trace_point_x86.cc`, from `scripts/hotpath-x86-gen`) and
//! the runtime's block-end function they call (`runtime/hubble/pool_x86.S`, assembled unchanged
//! into the static 32-bit harness) run natively, single-stepped, for many threads sharing one
//! pool: each thread a page laid out like `Thread` at the real 32-bit offsets (`tid` included),
//! `%fs` at the one being traced, as ART's x86 code finds its `Thread`. After every trace point
//! the whole pool and every thread's words must equal `hubble_format::pool::PoolWriter` in 32-bit
//! mode fed the same calls; every general register but the cursor and the counter's (EAX, EDX;
//! ECX for RDTSCP) must be unchanged, ECX included when it is not the cursor. The pool's 64-bit
//! tickets and block states go through `LOCK CMPXCHG8B`.
mod common;

use common::pool::{
    a_stop_publishes_the_cursor, blobs, block_take_counts, drops_as_the_reference_writer,
    function_bytes, traffic, without_saving_the_answer_register, writes_slot_for_slot, Pool,
    Variant,
};
use hubble_format::pool_traffic::ROOMY;
use hubble_hotpath_x86::{blob_command, Isa, Kind};

const ECX_CURSOR: Variant = Variant {
    counter: "rdtsc",
    cursor: "ecx",
    method: "esi",
};

/// The register assignments the generator emits for x86, with each counter read they allow.
const VARIANTS: [Variant; 5] = [
    ECX_CURSOR,
    Variant {
        counter: "rdtsc",
        cursor: "ebx",
        method: "edi",
    },
    Variant {
        counter: "rdtsc",
        cursor: "ebp",
        method: "esi",
    },
    Variant {
        counter: "lfence-rdtsc",
        cursor: "edi",
        method: "ebx",
    },
    Variant {
        counter: "rdtscp",
        cursor: "ebx",
        method: "edi",
    },
];

fn pool(geometry: hubble_format::pool::Geometry, threads: usize, v: Variant) -> Pool {
    Pool::new(Isa::X86, geometry, threads, v)
}

#[test]
fn many_threads_write_the_pool_slot_for_slot_as_the_reference_writer() {
    writes_slot_for_slot(Isa::X86, &VARIANTS);
}

#[test]
fn a_saturated_pool_drops_records_exactly_as_the_reference_writer() {
    drops_as_the_reference_writer(Isa::X86, VARIANTS[1]);
}

/// The head starts just below 2^32: tickets, the seal's bound and the claim's comparison carry
/// into the high word.
fn past_two_to_the_32(p: &mut Pool) {
    let head = (1u64 << 32) - 5;
    p.writer.set_next_ticket(head);
    let at = p.h.pool;
    p.h.poke(at, head);
    traffic(p, 4, 1500, 0x32);
    assert!(p.pool_slots()[0] > 1 << 32, "the head crossed 2^32");
}

#[test]
fn tickets_past_two_to_the_32_carry_into_the_high_word() {
    let mut p = pool(ROOMY, 4, ECX_CURSOR);
    past_two_to_the_32(&mut p);
}

#[test]
fn a_stop_in_pool_mode_publishes_the_cursor_in_the_current_block() {
    a_stop_publishes_the_cursor(Isa::X86, 3, ECX_CURSOR);
}

/// The only occurrence of `pattern` in the block-end function, as an address.
fn find(p: &mut Pool, pattern: &[u8]) -> u64 {
    let code = function_bytes(p);
    let at: Vec<usize> = code
        .windows(pattern.len())
        .enumerate()
        .filter(|(_, w)| *w == pattern)
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        at.len(),
        1,
        "{pattern:x?} in the block-end function: {at:?}"
    );
    p.h.take + at[0] as u64
}

/// The comparison can fail: the reuse bound's `jb` (after `sbb %ecx, %ebx`, the high half of
/// ticket - (state >> 1)) turned into two NOPs claims a block the reference writer keeps.
#[test]
#[should_panic(expected = "the reference writer's")]
fn without_the_reuse_bound_the_pool_differs_from_the_reference_writer() {
    let mut p = pool(ROOMY, 10, ECX_CURSOR);
    let at = find(&mut p, &[0x19, 0xcb, 0x72]) + 2;
    p.h.patch(at, &[0x90, 0x90]);
    traffic(&mut p, 10, 3000, 0x4855_4242);
}

/// The high word matters: the ticket's `adc $0, %ecx` replaced by `xor %ecx, %ecx; nop` breaks
/// the pool once the head passes 2^32.
#[test]
#[should_panic(expected = "the reference writer's")]
fn without_the_carry_the_head_differs_past_two_to_the_32() {
    let mut p = pool(ROOMY, 4, ECX_CURSOR);
    let at = find(&mut p, &[0x83, 0xd1, 0x00]);
    p.h.patch(at, &[0x31, 0xc9, 0x90]);
    past_two_to_the_32(&mut p);
}

/// A cursor other than ECX: ECX must come back unchanged from the call (the function answers in
/// it). The same emitted code with the PUSH ECX / POP ECX pair turned into NOPs must fail.
#[test]
#[should_panic(expected = "changed [\"ecx\"]")]
fn without_saving_ecx_the_call_clobbers_a_register() {
    let v = VARIANTS[1];
    let blob = blobs().get(Isa::X86, Kind::Entry, v.counter, v.cursor, v.method);
    let blob = without_saving_the_answer_register(blob.clone());
    let mut p = pool(ROOMY, 3, v);
    p.h.send(&blob_command("entry", &blob)); // replaces the blob
    p.run(0, Kind::Entry, 0x7000_0040, 10);
}

/// What a block take costs (docs/many-threads.md quotes these): instructions executed by one
/// trace point, single-stepped, the block-end function included. Exact, like the golden
/// listings: a change to the emitter or to pool_x86.S must update them and the doc.
#[test]
fn instructions_of_a_block_take() {
    let counts = block_take_counts(Isa::X86, 3, Kind::Entry, [ECX_CURSOR, VARIANTS[1]]);
    println!("x86 instructions per trace point, cursor ecx / ebx: {counts:?}");
    // 1st: no block yet (nothing to seal), the first candidate free; then the fast path until
    // the block's 4 data slots are used (32-bit mode: limit = end); the 5th seals and takes. A
    // cursor other than ECX adds PUSH, MOV and POP.
    assert_eq!(
        counts,
        [[92, 10, 10, 10, 113, 10], [95, 10, 10, 10, 116, 10]],
        "instructions per trace point"
    );
}
