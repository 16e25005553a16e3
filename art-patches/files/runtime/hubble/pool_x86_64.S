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
 * Hubble for AOSP: the pool's block-end function on x86_64 (many-thread mode,
 * runtime/hubble/README.md): pool_arm64.S's algorithm with x86 atomics.
 * Included by nterp_x86_64.S, whose slow-path macro expands it next to hubble_nterp_slow_path
 * (nterp jumps to it); compiled code's out-of-line half (hubble_trace_point_x86_64.cc) calls it through
 * the pool header's P_TAKE, which the runtime sets from ART's PoolTakeEntry (its address).
 *
 * Contract:
 *   in:  %gs = the Thread (ART's x86_64 thread register); the caller saw cursor >= limit,
 *        stop == 0 and bit 0 of begin set.
 *   out: %rcx = the slot to write the record at (a fresh block: room for a two-slot entry), or
 *        0 when no block was claimable within HUBBLE_POOL_TRIES tickets (the record is dropped;
 *        seq skips one). Thread words as hubble_format::pool::PoolWriter leaves them.
 *   clobbers %rcx and the flags; every other register is preserved (pushed: 40 bytes below the
 *   return address). No call, no lock, no system call.
 *
 * Memory order: x86 is TSO, so the seal's plain MOV of the state is a release store (the data
 * and close before it are visible first); LOCK XADD takes the ticket and LOCK CMPXCHG claims
 * the state, each a full barrier (the claim's acquire).
 */

#include "pool_layout.h"

.macro HUBBLE_POOL_TAKE_FUNCTION
DEFINE_FUNCTION hubble_pool_take
    pushq %rax
    .cfi_adjust_cfa_offset 8
    pushq %rdx
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %r8
    .cfi_adjust_cfa_offset 8
    movq %gs:THREAD_HUBBLE_BEGIN_OFFSET, %rdi
    subq $1, %rdi                                         // the pool (begin = pool | 1)
    movq %gs:THREAD_HUBBLE_CURSOR_OFFSET, %rcx
    cmpq $HUBBLE_POOL_SEALED, %rcx
    je 2f                                                 // no block to seal
    // Seal: close, the next seq into end, then the state, free from head + N - A.
    movq %gs:THREAD_HUBBLE_END_OFFSET, %rsi
    movq %rcx, HUBBLE_BLOCK_CLOSE(%rsi)
    movl HUBBLE_BLOCK_IDENT(%rsi), %eax                  // seq: the low word
    addl $1, %eax                                         // wraps in 32 bits, as the writer's
    movq %rax, %gs:THREAD_HUBBLE_END_OFFSET
    movq HUBBLE_POOL_NEXT(%rdi), %rax                     // an older head: an earlier bound
    addq HUBBLE_POOL_DELAY(%rdi), %rax
    shlq $1, %rax
    movq %rax, HUBBLE_BLOCK_STATE(%rsi)                   // TSO: a release store
2:
    movq $HUBBLE_POOL_SEALED, %gs:THREAD_HUBBLE_CURSOR_OFFSET
    movq $0, %gs:THREAD_HUBBLE_LIMIT_OFFSET
    movl $HUBBLE_POOL_TRIES, %r8d
3:
    movl $1, %esi
    lock xaddq %rsi, HUBBLE_POOL_NEXT(%rdi)               // rsi = ticket
    movq HUBBLE_POOL_MASK(%rdi), %rcx
    andq %rsi, %rcx
    imulq HUBBLE_POOL_BLOCK_BYTES(%rdi), %rcx
    addq HUBBLE_POOL_BLOCKS(%rdi), %rcx                   // the candidate block
    movq HUBBLE_BLOCK_STATE(%rcx), %rax
    cmpq $HUBBLE_POOL_OWNED, %rax
    je 5f                                                 // owned: a lagging thread's, skip it
    movq %rax, %rdx
    shrq $1, %rdx
    cmpq %rdx, %rsi
    jb 5f                                                 // sealed less than N - A tickets ago
    movl $HUBBLE_POOL_OWNED, %edx
    lock cmpxchgq %rdx, HUBBLE_BLOCK_STATE(%rcx)          // claim if still what we read
    jne 5f                                                // another taker of the same index won
    movl %gs:THREAD_HUBBLE_END_OFFSET, %eax               // seq
    movl %gs:THREAD_TID_OFFSET, %edx
    shlq $32, %rdx
    orq %rdx, %rax
    movq %rax, HUBBLE_BLOCK_IDENT(%rcx)
    movq %rsi, HUBBLE_BLOCK_TICKET(%rcx)
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq %rax, HUBBLE_BLOCK_TIME(%rcx)
    movq $0, HUBBLE_BLOCK_CLOSE(%rcx)                     // open
    movq %rcx, %gs:THREAD_HUBBLE_END_OFFSET
    movq HUBBLE_POOL_BLOCK_BYTES(%rdi), %rax
    leaq -8(%rcx, %rax), %rax                             // limit = end - 8: two slots fit
    movq %rax, %gs:THREAD_HUBBLE_LIMIT_OFFSET
    addq $HUBBLE_BLOCK_DATA, %rcx
    jmp 7f
5:
    subl $1, %r8d
    jnz 3b
    movl %gs:THREAD_HUBBLE_END_OFFSET, %eax               // no free block: drop, seq + 1
    addl $1, %eax
    movq %rax, %gs:THREAD_HUBBLE_END_OFFSET
    xorl %ecx, %ecx
7:
    popq %r8
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdx
    .cfi_adjust_cfa_offset -8
    popq %rax
    .cfi_adjust_cfa_offset -8
    ret
END_FUNCTION hubble_pool_take
.endm
