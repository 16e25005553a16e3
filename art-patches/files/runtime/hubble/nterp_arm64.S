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
 * Hubble for AOSP: nterp's trace points on arm64 (included by interpreter/mterp/arm64ng/main.S).
 *
 * The same instructions, registers and thread offsets as the A64 emitter of the optimizing
 * compiler (compiler/optimizing/hubble_trace_point_arm64.cc): xSELF = x19,
 * scratch IP0/IP1 = x16/x17, the ArtMethod* in x0, CNTVCT_EL0, one LDP of cursor+limit, the
 * slot encoding and the slow path of runtime/hubble/README.md. Differences, all off the fast path:
 *  - the fast path branches forward over the out-of-line part (b.lo) instead of jumping out to
 *    it (b.hs), because a macro has no out-of-line section: both paths have 8 instructions ON
 *    and 2 OFF;
 *  - the slow path (stop, stale limit, wrap/pad) is one shared function, hubble_nterp_slow_path,
 *    called with BL (x30 is dead at both places: nterp saved it with the callee saves), because
 *    the op_return handlers must fit NTERP_HANDLER_SIZE (128 bytes).
 *  - in many-thread mode (bit 0 of begin) a full block goes to the pool's block-end function,
 *    hubble_pool_take (pool_arm64.S, expanded here too), instead of the wrap.
 * Clobbers x16, x17, x30 and the flags.
 */

#include "pool_arm64.S"

// Method entry: \method holds the ArtMethod* (x0 in START_EXECUTING_INSTRUCTIONS).
.macro HUBBLE_NTERP_TRACE_ENTRY method, method_w
    ldp x16, x17, [xSELF, #THREAD_HUBBLE_CURSOR_OFFSET]   // cursor, limit: one load
    cbz x16, 9f                                           // tracing off
    tst \method, #0xffffffff00000000                      // Z = pointer fits 32 bits
    ccmp x16, x17, #2, eq                                 // fits ? cursor - limit : C = 1
    b.lo 5f                                               // narrow and room: fast path
    cmp x16, x17
    b.lo 3f                                               // room: the pointer is wide
    bl hubble_nterp_slow_path                             // x16 = where to write, or 0
    cbz x16, 9f                                           // stopped here: write nothing
    tst \method, #0xffffffff00000000
    b.eq 5f
3:
    mrs x17, cntvct_el0                                   // two slots: ptr, ts << 32 | 1
    lsl x17, x17, #32
    orr x17, x17, #1
    stp \method, x17, [x16], #16
    b 8f
5:
    mrs x17, cntvct_el0
    stp \method_w, w17, [x16], #8                         // hi = ts, lo = ptr
8:
    str x16, [xSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
9:
.endm

// Method exit (op_return*). Preserves x0/d0 (the return value).
.macro HUBBLE_NTERP_TRACE_EXIT
    ldp x16, x17, [xSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
    cbz x16, 9f
    cmp x16, x17
    b.lo 5f
    bl hubble_nterp_slow_path
    cbz x16, 9f
5:
    mrs x17, cntvct_el0
    stp wzr, w17, [x16], #8                               // hi = ts, lo = 0
    str x16, [xSELF, #THREAD_HUBBLE_CURSOR_OFFSET]
9:
.endm

// The out-of-line part, once per nterp (expanded in main.S's footer).
// In: x16 = cursor (>= the limit the fast path loaded). Out: x16 = slot to write, 0 = stopped.
// Clobbers x17.
.macro HUBBLE_NTERP_SLOW_PATH_FUNCTION
ENTRY hubble_nterp_slow_path
    dmb ishld                                             // see the newest stop/limit
    ldr x17, [xSELF, #THREAD_HUBBLE_STOP_OFFSET]
    cbnz x17, 2f
    ldr x17, [xSELF, #THREAD_HUBBLE_LIMIT_OFFSET]
    cmp x16, x17
    b.lo 1f                                               // stale limit: carry on
    ldr x17, [xSELF, #THREAD_HUBBLE_BEGIN_OFFSET]
    tbnz x17, #0, 3f                                      // begin = pool | 1
    ldr x17, [xSELF, #THREAD_HUBBLE_END_OFFSET]
    cmp x16, x17
    b.eq 0f
    mov x17, #2                                           // pad the one slot left
    str x17, [x16]
0:
    ldr x16, [xSELF, #THREAD_HUBBLE_BEGIN_OFFSET]         // wrap
1:
    ret
2:
    str xzr, [xSELF, #THREAD_HUBBLE_CURSOR_OFFSET]        // tracing off
    add x17, xSELF, #THREAD_HUBBLE_STOP_OFFSET
    stlr x16, [x17]                                       // publish the end (release)
    mov x16, #0
    ret
3:
    mov x16, x30                                          // handed back in x30
    bl hubble_pool_take                                   // x16 = slot to write, or 0
    ret
END hubble_nterp_slow_path
HUBBLE_POOL_TAKE_FUNCTION
.endm
