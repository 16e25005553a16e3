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
 * Hubble for AOSP: nterp's trace points on arm (included by interpreter/mterp/armng/main.S).
 *
 * armng runs in A32 (ARM) state, so these are the A32 forms of the T32 emitter's instructions
 * (compiler/optimizing/hubble_trace_point_arm_vixl.cc) in 32-bit mode:
 * one LDRD of cursor+limit from rSELF (r9), MRRC p15, 1, <lo>, <hi>, c14 (CNTVCT), one STRD with
 * post-increment (lo = ptr or 0, hi = ts), every record one slot, no pad (limit = end).
 * A32 differences: no CBZ (CMP + BEQ) and LDRD/STRD need an even/odd register pair, so the pair
 * is r2/r3 (dead at both places: START_EXECUTING_INSTRUCTIONS has set up the frame and
 * op_return holds its value in r0/r1 and s0/d0); at exit the cursor moves to lr to free the
 * pair for (0, ts). The slow path is one shared function called with BL (op_return handlers must
 * fit NTERP_HANDLER_SIZE; lr is dead: nterp saved it with the callee saves). In many-thread
 * mode (bit 0 of begin) a full block goes to the pool's block-end function, hubble_pool_take
 * (pool_arm.S, T32, expanded here too and reached with BLX), instead of the wrap.
 * Entry clobbers r1, r2, r3, ip, lr; exit clobbers r2, r3, ip, lr; both the flags.
 */

#include "pool_arm.S"

// Method entry: the ArtMethod* in r0 (START_EXECUTING_INSTRUCTIONS).
.macro HUBBLE_NTERP_TRACE_ENTRY
    ldrd r2, r3, [rSELF, #THREAD_HUBBLE_CURSOR_OFFSET]    // cursor, limit: one load
    cmp r2, #0
    beq 9f                                                // tracing off
    cmp r2, r3
    blo 5f
    bl hubble_nterp_slow_path                             // r2 = where to write, or 0
    cmp r2, #0
    beq 9f
5:
    mrrc p15, 1, r1, ip, c14                              // r1 = CNTVCT[31:0]
    strd r0, r1, [r2], #8                                 // lo = ptr, hi = ts
    str r2, [rSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
9:
.endm

// Method exit (op_return*). Preserves r0/r1 and s0/d0 (the return value).
.macro HUBBLE_NTERP_TRACE_EXIT
    ldrd r2, r3, [rSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
    cmp r2, #0
    beq 9f
    cmp r2, r3
    blo 5f
    bl hubble_nterp_slow_path
    cmp r2, #0
    beq 9f
5:
    mov lr, r2
    mrrc p15, 1, r3, ip, c14                              // r3 = CNTVCT[31:0]
    mov r2, #0
    strd r2, r3, [lr], #8                                 // lo = 0, hi = ts
    str lr, [rSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
9:
.endm

// In: r2 = cursor. Out: r2 = slot to write, 0 = stopped or dropped. Clobbers ip. Returns
// with BX lr.
.macro HUBBLE_NTERP_SLOW_PATH_FUNCTION
ARM_ENTRY hubble_nterp_slow_path
    dmb ish                                               // ARMv7 has no DMB ISHLD
    ldr ip, [rSELF, #THREAD_HUBBLE_STOP_OFFSET]
    cmp ip, #0
    bne 2f
    ldr ip, [rSELF, #THREAD_HUBBLE_LIMIT_OFFSET]
    cmp r2, ip
    blo 1f                                                // stale limit: carry on
    ldr ip, [rSELF, #THREAD_HUBBLE_BEGIN_OFFSET]
    tst ip, #1
    bne 3f                                                // begin = pool | 1: many threads
    mov r2, ip                                            // wrap (32-bit mode: never a pad)
1:
    bx lr
2:
    mov ip, #0
    str ip, [rSELF, #THREAD_HUBBLE_CURSOR_OFFSET]         // tracing off
    dmb ish                                               // release: the ring before `stop`
    str r2, [rSELF, #THREAD_HUBBLE_STOP_OFFSET]           // publish the end
    mov r2, #0
    bx lr
3:
    mov ip, lr                                            // handed back in lr
    blx hubble_pool_take                                  // ip = a fresh block's slot, or 0
    mov r2, ip
    bx lr
END hubble_nterp_slow_path

HUBBLE_POOL_TAKE_FUNCTION
.endm
