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
 * Hubble for AOSP: the pool's block-end function on arm (many-thread mode,
 * runtime/hubble/README.md): pool_arm64.S's algorithm in T32, for a 32-bit process. Included by
 * nterp_arm.S, whose slow-path macro expands it next to hubble_nterp_slow_path, so it is in
 * libart wherever nterp is. Compiled code's out-of-line half (hubble_trace_point_arm_vixl.cc) calls it
 * through the pool header's P_TAKE, which the runtime sets from ART's PoolTakeEntry; nterp (A32)
 * calls it with BLX (interworking).
 *
 * 32-bit mode: the Thread words are 32-bit (cursor, limit = the block's end, stop, begin, end);
 * the pool's header and block header slots are 64-bit, as in 64-bit mode (a ticket never wraps
 * to compare around). Tickets, the head and block states are 64-bit atomics: LDREXD/STREXD,
 * which ARMv7-A has and which pairs the two halves (a plain LDRD/STRD is single-copy atomic
 * only with LPAE). Masks, block addresses and block sizes fit 32 bits in a 32-bit process.
 *
 * Contract (what the control plane and the emitter rely on):
 *   in:  rSELF (r9) = Thread*; lr = return address; ip (r12) = a value handed back in lr (the
 *        caller's own lr, live in a method without a frame); the caller saw cursor >= limit
 *        after its DMB ISH, stop == 0 and bit 0 of begin set.
 *   out: ip = the slot to write the record at (a fresh block), or 0 when no block was free
 *        within HUBBLE_POOL_TRIES tickets (the record is dropped; `seq` skips one so the reader
 *        sees the gap); lr = the ip given. Thread words as hubble_format::pool::PoolWriter
 *        leaves them in 32-bit mode: cursor = SEALED (the caller stores the cursor after its
 *        record), limit = the block's end or 0, end = the block or the next seq.
 *   clobbers the flags; every other register is preserved, sp included; 40 bytes below sp are
 *   used (a frameless leaf method's caller left far more: ART's stack-overflow reserve).
 * No call, no lock, no system call: it may run wherever a trace point runs.
 *
 * Memory order (Hubble's control plane runs the same algorithm on Rust atomics, model-checked
 * with loom): the seal's DMB ISH then atomic store of the state orders the block's
 * data and `close` before it; the claim is a 64-bit compare-and-swap followed by DMB ISH (its
 * acquire); the ticket is a relaxed fetch-add. The plain store of the new limit may overwrite a
 * stop doorbell rung since the store of 0 above it; the control thread rings again at every poll
 * round (protocol §6).
 */

#include "pool_layout.h"

.macro HUBBLE_POOL_TAKE_FUNCTION
ENTRY hubble_pool_take
    push {r0-r7, r12, lr}                                 // ip: the caller's lr; lr: ours
    .cfi_adjust_cfa_offset 40
    .cfi_rel_offset lr, 36
    ldr r7, [rSELF, #THREAD_HUBBLE_BEGIN_OFFSET]
    sub r7, r7, #1                                        // the pool (begin = pool | 1)
    ldr r0, [rSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
    cmp r0, #HUBBLE_POOL_SEALED
    beq 2f                                                // no block to seal
    // Seal: close, the next seq into end, then the state, free from head + N - A (release:
    // the data and close are visible to whoever claims the block).
    ldr r1, [rSELF, #THREAD_HUBBLE_END_OFFSET]
    mov r2, #0
    strd r0, r2, [r1, #HUBBLE_BLOCK_CLOSE]
    ldr r3, [r1, #HUBBLE_BLOCK_IDENT]                     // seq: the low word
    add r3, r3, #1                                        // wraps in 32 bits, as the writer's
    str r3, [rSELF, #THREAD_HUBBLE_END_OFFSET]
    ldrexd r4, r5, [r7]                                   // the head, both halves at once
    clrex                                                 // (relaxed: an older head, an earlier bound)
    ldrd r2, r3, [r7, #HUBBLE_POOL_DELAY]
    adds r4, r4, r2
    adc r5, r5, r3
    adds r4, r4, r4                                       // << 1
    adc r5, r5, r5
    add r1, r1, #HUBBLE_BLOCK_STATE
    dmb ish
1:
    ldrexd r2, r3, [r1]                                   // a 64-bit single-copy atomic store
    strexd r6, r4, r5, [r1]
    cmp r6, #0
    bne 1b
2:
    mov r0, #HUBBLE_POOL_SEALED
    str r0, [rSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
    mov r0, #0
    str r0, [rSELF, #THREAD_HUBBLE_LIMIT_OFFSET]
    mov r6, #HUBBLE_POOL_TRIES
3:
    ldrexd r0, r1, [r7]                                   // ticket = next++ (relaxed)
    adds r2, r0, #1
    adc r3, r1, #0
    strexd r12, r2, r3, [r7]
    cmp r12, #0
    bne 3b
    ldr r2, [r7, #HUBBLE_POOL_MASK]
    and r2, r2, r0
    ldr r3, [r7, #HUBBLE_POOL_BLOCK_BYTES]
    ldr r4, [r7, #HUBBLE_POOL_BLOCKS]
    mla r2, r2, r3, r4                                    // the candidate block
    add r3, r2, #HUBBLE_BLOCK_STATE
4:
    ldrexd r4, r5, [r3]                                   // claim: CAS state -> OWNED
    cmp r5, #0
    bne 41f
    cmp r4, #HUBBLE_POOL_OWNED
    beq 6f                                                // owned: a lagging thread's, skip it
41:
    lsr lr, r4, #1                                        // bound = state >> 1 (64-bit)
    orr lr, lr, r5, lsl #31
    lsr r12, r5, #1
    subs lr, r0, lr                                       // ticket - bound, for the borrow
    sbcs r12, r1, r12
    blo 6f                                                // sealed less than N - A tickets ago
    mov r4, #HUBBLE_POOL_OWNED
    mov r5, #0
    strexd lr, r4, r5, [r3]
    cmp lr, #0
    bne 4b                                                // lost the reservation: look again
    dmb ish                                               // acquire: the sealer's data first
    ldr r4, [rSELF, #THREAD_HUBBLE_END_OFFSET]            // seq
    ldr r5, [rSELF, #THREAD_TID_OFFSET]
    strd r4, r5, [r2, #HUBBLE_BLOCK_IDENT]                // seq | tid << 32
    strd r0, r1, [r2, #HUBBLE_BLOCK_TICKET]
    mrrc p15, 1, r4, r5, c14                              // CNTVCT: the full counter
    strd r4, r5, [r2, #HUBBLE_BLOCK_TIME]
    mov r4, #0
    mov r5, #0
    strd r4, r5, [r2, #HUBBLE_BLOCK_CLOSE]                // open
    str r2, [rSELF, #THREAD_HUBBLE_END_OFFSET]
    ldr r3, [r7, #HUBBLE_POOL_BLOCK_BYTES]
    add r3, r2, r3                                        // limit = end: 32-bit records are one slot
    str r3, [rSELF, #THREAD_HUBBLE_LIMIT_OFFSET]
    add r12, r2, #HUBBLE_BLOCK_DATA
    b 7f
6:
    clrex
    subs r6, r6, #1
    bne 3b
    ldr r4, [rSELF, #THREAD_HUBBLE_END_OFFSET]            // no free block: drop, seq + 1
    add r4, r4, #1
    str r4, [rSELF, #THREAD_HUBBLE_END_OFFSET]
    mov r12, #0
7:
    pop {r0-r7}
    .cfi_adjust_cfa_offset -32
    ldr lr, [sp], #4                                      // the caller's lr, handed back
    .cfi_adjust_cfa_offset -4
    pop {pc}                                              // our return (interworking)
END hubble_pool_take
.endm
