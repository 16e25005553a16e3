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
 * Hubble for AOSP: nterp's trace points on x86_64 (included by interpreter/mterp/x86_64ng/main.S).
 *
 * x86_64 has no compiled-code trace points (the optimizing compiler instruments arm and arm64);
 * nterp and the switch interpreter still trace, so that x86_64 emulators and cuttlefish
 * record interpreted code. Same algorithm and encoding (64-bit mode) as
 * runtime/hubble/README.md; the thread block is reached through %gs like every other Thread field
 * in x86_64 nterp; the clock is RDTSC, the same source as runtime/hubble/trace_point.h uses on
 * x86_64. x86 is TSO: loads are not reordered with loads (the acquire fence needs no
 * instruction) and a plain MOV is a release store.
 * In many-thread mode (bit 0 of begin) a full block goes to the pool's block-end function,
 * hubble_pool_take (pool_x86_64.S, expanded here too), instead of the wrap.
 * Clobbers rcx, rdx, r11 and the flags; preserves rax/xmm0 (the return value) and rdi.
 */

#include "pool_x86_64.S"

// Method entry: \method holds the ArtMethod* (%rdi in START_EXECUTING_INSTRUCTIONS).
.macro HUBBLE_NTERP_TRACE_ENTRY method, method32
    movq %gs:THREAD_HUBBLE_CURSOR_OFFSET, %rcx
    testq %rcx, %rcx
    jz 9f                                                 // tracing off
    movq \method, %r11
    shrq $32, %r11
    jnz 3f                                                // wide pointer
    cmpq %gs:THREAD_HUBBLE_LIMIT_OFFSET, %rcx
    jb 5f
    call hubble_nterp_slow_path                           // rcx = where to write, or 0
    testq %rcx, %rcx
    jz 9f
    jmp 5f
3:
    cmpq %gs:THREAD_HUBBLE_LIMIT_OFFSET, %rcx
    jb 4f
    call hubble_nterp_slow_path
    testq %rcx, %rcx
    jz 9f
4:
    movq %rax, %r11
    rdtsc
    shlq $32, %rax
    orq $1, %rax
    movq \method, (%rcx)                                  // two slots: ptr, ts << 32 | 1
    movq %rax, 8(%rcx)
    addq $16, %rcx
    movq %r11, %rax
    jmp 8f
5:
    movq %rax, %r11
    rdtsc
    shlq $32, %rax
    movl \method32, %edx
    orq %rdx, %rax
    movq %rax, (%rcx)                                     // hi = ts, lo = ptr
    addq $8, %rcx
    movq %r11, %rax
8:
    movq %rcx, %gs:THREAD_HUBBLE_CURSOR_OFFSET
9:
.endm

// Method exit (op_return*).
.macro HUBBLE_NTERP_TRACE_EXIT
    movq %gs:THREAD_HUBBLE_CURSOR_OFFSET, %rcx
    testq %rcx, %rcx
    jz 9f
    cmpq %gs:THREAD_HUBBLE_LIMIT_OFFSET, %rcx
    jb 5f
    call hubble_nterp_slow_path
    testq %rcx, %rcx
    jz 9f
5:
    movq %rax, %r11
    rdtsc
    shlq $32, %rax                                       // hi = ts, lo = 0
    movq %rax, (%rcx)
    addq $8, %rcx
    movq %rcx, %gs:THREAD_HUBBLE_CURSOR_OFFSET
    movq %r11, %rax
9:
.endm

// In: rcx = cursor. Out: rcx = slot to write, 0 = stopped.
.macro HUBBLE_NTERP_SLOW_PATH_FUNCTION
DEFINE_FUNCTION hubble_nterp_slow_path
    cmpq $0, %gs:THREAD_HUBBLE_STOP_OFFSET
    jne 2f
    cmpq %gs:THREAD_HUBBLE_LIMIT_OFFSET, %rcx
    jb 1f                                                 // stale limit: carry on
    testb $1, %gs:THREAD_HUBBLE_BEGIN_OFFSET
    jnz hubble_pool_take                                  // begin = pool | 1: its ret is ours
    cmpq %gs:THREAD_HUBBLE_END_OFFSET, %rcx
    je 0f
    movq $2, (%rcx)                                      // pad the one slot left
0:
    movq %gs:THREAD_HUBBLE_BEGIN_OFFSET, %rcx             // wrap
1:
    ret
2:
    movq $0, %gs:THREAD_HUBBLE_CURSOR_OFFSET             // tracing off
    movq %rcx, %gs:THREAD_HUBBLE_STOP_OFFSET              // publish the end (TSO: release)
    xorl %ecx, %ecx
    ret
END_FUNCTION hubble_nterp_slow_path
HUBBLE_POOL_TAKE_FUNCTION
.endm
