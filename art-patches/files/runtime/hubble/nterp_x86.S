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
 * Hubble for AOSP: nterp's trace points on x86 (included by interpreter/mterp/x86ng/main.S).
 *
 * The same algorithm as the x86 trace points of compiled code
 * (compiler/optimizing/hubble_trace_point_x86.cc, patch 0015), so that interpreted frames of the
 * 32-bit x86 emulator images are traced too, as nterp_x86_64.S does for x86_64. The algorithm of runtime/hubble/README.md in
 * 32-bit mode: every record one slot (lo = ArtMethod* or 0, hi = the counter's low 32 bits), no
 * pad (limit = end). The thread block is reached through %fs like every other Thread field in
 * x86 nterp (rSELF); the clock is RDTSC, as in runtime/hubble/trace_point.h on x86 and x86_64.
 * x86 is TSO: loads are not reordered with loads (the acquire fence needs no instruction) and a
 * plain MOV is a release store. A slot is two 32-bit stores; the cursor store that publishes it
 * comes after both, and stores are not reordered with stores.
 *
 * RDTSC writes edx:eax, which hold what nterp needs at both places (entry: eax = ArtMethod*,
 * edx = rIBASE; exit: eax or edx:eax = the return value). With ecx holding the cursor, only ebx
 * (rINST) is also free: one register for two values, so both are kept on the stack around it
 * (the CFA of an nterp frame is computed from rREFS by NTERP_DEF_CFA, not from esp).
 * In many-thread mode (bit 0 of begin) a full block goes to the pool's block-end function,
 * hubble_pool_take (pool_x86.S, expanded here too), instead of the wrap.
 * Clobbers ecx and the flags only.
 */

#include "pool_x86.S"

// Method entry: the ArtMethod* in eax (START_EXECUTING_INSTRUCTIONS has just loaded it).
.macro HUBBLE_NTERP_TRACE_ENTRY
    movl %fs:THREAD_HUBBLE_CURSOR_OFFSET, %ecx
    testl %ecx, %ecx
    jz 9f                                                 // tracing off
    cmpl %fs:THREAD_HUBBLE_LIMIT_OFFSET, %ecx
    jb 5f
    call hubble_nterp_slow_path                           // ecx = where to write, or 0
    testl %ecx, %ecx
    jz 9f
5:
    pushl %eax
    pushl %edx
    rdtsc
    movl %eax, 4(%ecx)                                    // hi = ts
    popl %edx
    popl %eax
    movl %eax, (%ecx)                                     // lo = ptr
    addl $8, %ecx
    movl %ecx, %fs:THREAD_HUBBLE_CURSOR_OFFSET
9:
.endm

// Method exit (op_return*). Preserves eax, edx and xmm0 (the return value).
.macro HUBBLE_NTERP_TRACE_EXIT
    movl %fs:THREAD_HUBBLE_CURSOR_OFFSET, %ecx
    testl %ecx, %ecx
    jz 9f
    cmpl %fs:THREAD_HUBBLE_LIMIT_OFFSET, %ecx
    jb 5f
    call hubble_nterp_slow_path
    testl %ecx, %ecx
    jz 9f
5:
    pushl %eax
    pushl %edx
    rdtsc
    movl %eax, 4(%ecx)                                    // hi = ts
    movl $0, (%ecx)                                       // lo = 0
    popl %edx
    popl %eax
    addl $8, %ecx
    movl %ecx, %fs:THREAD_HUBBLE_CURSOR_OFFSET
9:
.endm

// In: ecx = cursor. Out: ecx = slot to write, 0 = stopped or dropped. Preserves every other
// register.
.macro HUBBLE_NTERP_SLOW_PATH_FUNCTION
DEFINE_FUNCTION hubble_nterp_slow_path
    cmpl $0, %fs:THREAD_HUBBLE_STOP_OFFSET
    jne 2f
    cmpl %fs:THREAD_HUBBLE_LIMIT_OFFSET, %ecx
    jb 1f                                                 // stale limit: carry on
    testb $1, %fs:THREAD_HUBBLE_BEGIN_OFFSET
    jnz hubble_pool_take                                  // many threads: its ret is ours
    movl %fs:THREAD_HUBBLE_BEGIN_OFFSET, %ecx             // wrap (32-bit mode: never a pad)
1:
    ret
2:
    movl $0, %fs:THREAD_HUBBLE_CURSOR_OFFSET              // tracing off
    movl %ecx, %fs:THREAD_HUBBLE_STOP_OFFSET              // publish the end (TSO: release)
    xorl %ecx, %ecx
    ret
END_FUNCTION hubble_nterp_slow_path

HUBBLE_POOL_TAKE_FUNCTION
.endm
