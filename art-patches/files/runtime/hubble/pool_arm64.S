/*
 * Copyright (C) 2026 The Android Open Source Project
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

/*
 * Hubble for AOSP: the pool's block-end function on arm64 (many-thread mode,
 * runtime/hubble/README.md). Included by nterp_arm64.S, whose slow-path macro
 * expands it next to hubble_nterp_slow_path, so it is in libart wherever nterp is.
 *
 * Why one function and not inline code at every trace point: the take is ~50 instructions and
 * runs once per block (2 043 records of 16 KiB); expanded into the out-of-line half of every
 * trace point of every method it would add ~200 bytes to each, so compiled code and nterp
 * call this one copy (6 instructions at the call site, off the fast path). Compiled code finds
 * it in the pool header (slot HUBBLE_POOL_TAKE, set by the runtime), reached from `begin`:
 * no Thread word and no quick entrypoint are added.
 *
 * Contract (what the control plane and the emitter rely on):
 *   in:  xSELF (x19) = Thread*; x30 = return address; x16 = a value handed back in x30 (the
 *        caller's own x30, live in a method without a frame); the caller saw cursor >= limit
 *        after its DMB ISHLD, stop == 0 and bit 0 of begin set.
 *   out: x16 = the slot to write the record at (a fresh block: room for a two-slot entry), or
 *        0 when no block was free within HUBBLE_POOL_TRIES tickets (the record is dropped;
 *        `seq` skips one so the reader sees the gap); x30 = the x16 given.
 *        Thread words as hubble_format::pool::PoolWriter leaves them: cursor = SEALED (the
 *        caller stores the cursor after its record), limit = block end - 8 or 0, end = the
 *        block or the next seq.
 *   clobbers x17 and NZCV; every other register is preserved, SP included; 64 bytes below SP
 *   are used (a frameless leaf method's caller left far more: ART's stack-overflow reserve).
 * No call, no lock, no system call: it may run wherever a trace point runs.
 *
 * Memory order (Hubble's control plane runs the same algorithm on Rust atomics, model-checked
 * with loom): the seal's STLR of the state orders the block's data and `close`
 * before it; the claim is a CAS with acquire (LDAXR/STXR), pairing with it; the ticket is a
 * relaxed fetch-add (LDXR/STXR). LL/SC, not LSE: libart targets ARMv8.0, and this runs once
 * per block. The plain store of the new limit may overwrite a stop doorbell rung since the
 * `str xzr` above it; the control thread rings again at every poll round (protocol §6).
 */

#include "pool_layout.h"

.macro HUBBLE_POOL_TAKE_FUNCTION
ENTRY hubble_pool_take
    hint #34                                      // BTI C: reached by BLR
    stp x0, x1, [sp, #-64]!
    .cfi_adjust_cfa_offset 64
    stp x2, x3, [sp, #16]
    stp x4, x5, [sp, #32]
    stp x16, x30, [sp, #48]                       // the caller's x30, our return address
    .cfi_rel_offset x30, 56
    ldr x17, [xSELF, #THREAD_HUBBLE_BEGIN_OFFSET]
    sub x17, x17, #1                              // the pool (begin = pool | 1)
    ldr x16, [xSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
    cmp x16, #HUBBLE_POOL_SEALED
    b.eq 2f                                       // no block to seal
    // Seal: close, the next seq into end, then the state, free from head + N - A (release:
    // the data and close are visible to whoever claims the block).
    ldr x0, [xSELF, #THREAD_HUBBLE_END_OFFSET]
    str x16, [x0, #HUBBLE_BLOCK_CLOSE]
    ldr w1, [x0, #HUBBLE_BLOCK_IDENT]             // seq: the low word
    add w1, w1, #1                                // wraps in 32 bits, as the writer's
    str x1, [xSELF, #THREAD_HUBBLE_END_OFFSET]
    ldr x2, [x17, #HUBBLE_POOL_NEXT]              // relaxed: an older head, an earlier bound
    ldr x3, [x17, #HUBBLE_POOL_DELAY]
    add x2, x2, x3
    lsl x2, x2, #1
    add x0, x0, #HUBBLE_BLOCK_STATE
    stlr x2, [x0]
2:
    mov x16, #HUBBLE_POOL_SEALED
    str x16, [xSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
    str xzr, [xSELF, #THREAD_HUBBLE_LIMIT_OFFSET]
    mov x5, #HUBBLE_POOL_TRIES
3:
    ldxr x0, [x17]                                // ticket = next++ (relaxed)
    add x1, x0, #1
    stxr w2, x1, [x17]
    cbnz w2, 3b
    ldr x1, [x17, #HUBBLE_POOL_MASK]
    and x1, x1, x0
    ldr x2, [x17, #HUBBLE_POOL_BLOCK_BYTES]
    ldr x3, [x17, #HUBBLE_POOL_BLOCKS]
    madd x1, x1, x2, x3                           // the candidate block
    add x2, x1, #HUBBLE_BLOCK_STATE
    ldr x3, [x2]
    cmp x3, #HUBBLE_POOL_OWNED
    b.eq 5f                                       // owned: a lagging thread's, skip it
    cmp x0, x3, lsr #1
    b.lo 5f                                       // sealed less than N - A tickets ago
4:
    ldaxr x4, [x2]                                // claim: CAS state -> OWNED, acquire
    cmp x4, x3
    b.ne 6f                                       // another taker of the same index won
    mov x4, #HUBBLE_POOL_OWNED
    stxr w16, x4, [x2]
    cbnz w16, 4b
    ldr w16, [xSELF, #THREAD_HUBBLE_END_OFFSET]   // seq
    ldr w4, [xSELF, #THREAD_TID_OFFSET]
    orr x16, x16, x4, lsl #32
    str x16, [x1, #HUBBLE_BLOCK_IDENT]
    str x0, [x1, #HUBBLE_BLOCK_TICKET]
    mrs x16, cntvct_el0
    stp x16, xzr, [x1, #HUBBLE_BLOCK_TIME]        // time; close = 0: open
    str x1, [xSELF, #THREAD_HUBBLE_END_OFFSET]
    ldr x2, [x17, #HUBBLE_POOL_BLOCK_BYTES]
    add x2, x1, x2
    sub x2, x2, #8                                // limit = end - 8: a two-slot entry fits
    str x2, [xSELF, #THREAD_HUBBLE_LIMIT_OFFSET]
    add x16, x1, #HUBBLE_BLOCK_DATA
    b 7f
6:
    clrex
5:
    subs x5, x5, #1
    b.ne 3b
    ldr w16, [xSELF, #THREAD_HUBBLE_END_OFFSET]   // no free block: drop, seq + 1
    add w16, w16, #1
    str x16, [xSELF, #THREAD_HUBBLE_END_OFFSET]
    mov x16, #0
7:
    ldp x2, x3, [sp, #16]
    ldp x4, x5, [sp, #32]
    ldp x30, x17, [sp, #48]
    ldp x0, x1, [sp], #64
    .cfi_adjust_cfa_offset -64
    ret x17
END hubble_pool_take
.endm
