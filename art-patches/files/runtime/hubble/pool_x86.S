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
 * Hubble for AOSP: the pool's block-end function on x86 (many-thread mode,
 * runtime/hubble/README.md): pool_x86_64.S's algorithm for a 32-bit process. Included by
 * nterp_x86.S, whose slow-path macro expands it next to hubble_nterp_slow_path (nterp jumps to
 * it); compiled code's out-of-line half (hubble_trace_point_x86.cc) calls it through the pool header's
 * P_TAKE, which the runtime sets from ART's PoolTakeEntry.
 *
 * 32-bit mode: the Thread words are 32-bit (cursor, limit = the block's end, stop, begin, end);
 * the pool's header and block header slots are 64-bit, as in 64-bit mode (a ticket never wraps
 * to compare around). The ticket's fetch-add, the head read at a seal, the seal's state store
 * and the claim are LOCK CMPXCHG8B, the one 64-bit atomic a 32-bit x86 has in integer
 * registers. Masks, block addresses and block sizes fit 32 bits in a 32-bit process.
 *
 * Contract:
 *   in:  %fs = the Thread (ART's x86 thread register); the caller saw cursor >= limit, stop == 0
 *        and bit 0 of begin set.
 *   out: %ecx = the slot to write the record at (a fresh block), or 0 when no block was claimable
 *        within HUBBLE_POOL_TRIES tickets (the record is dropped; seq skips one). Thread words as
 *        hubble_format::pool::PoolWriter leaves them in 32-bit mode.
 *   clobbers %ecx and the flags; every other register is preserved (pushed: 24 bytes below the
 *   return address, and 8 more while a ticket is held). No call, no lock, no system call.
 *
 * Memory order: x86 is TSO and every LOCK-prefixed instruction is a full barrier: the seal's
 * CMPXCHG8B of the state orders the block's data and close before it (release), the claim's
 * orders the block's previous contents before our reads (acquire).
 */

#include "pool_layout.h"

.macro HUBBLE_POOL_TAKE_FUNCTION
DEFINE_FUNCTION hubble_pool_take
    pushl %eax
    .cfi_adjust_cfa_offset 4
    pushl %edx
    .cfi_adjust_cfa_offset 4
    pushl %ebx
    .cfi_adjust_cfa_offset 4
    pushl %esi
    .cfi_adjust_cfa_offset 4
    pushl %edi
    .cfi_adjust_cfa_offset 4
    pushl %ebp
    .cfi_adjust_cfa_offset 4
    movl %fs:THREAD_HUBBLE_BEGIN_OFFSET, %edi
    subl $1, %edi                                         // the pool (begin = pool | 1)
    movl %fs:THREAD_HUBBLE_CURSOR_OFFSET, %ecx
    cmpl $HUBBLE_POOL_SEALED, %ecx
    je 2f                                                 // no block to seal
    // Seal: close, the next seq into end, then the state, free from head + N - A.
    movl %fs:THREAD_HUBBLE_END_OFFSET, %esi
    movl %ecx, HUBBLE_BLOCK_CLOSE(%esi)
    movl $0, HUBBLE_BLOCK_CLOSE+4(%esi)
    movl HUBBLE_BLOCK_IDENT(%esi), %eax                   // seq: the low word
    addl $1, %eax                                         // wraps in 32 bits, as the writer's
    movl %eax, %fs:THREAD_HUBBLE_END_OFFSET
    xorl %eax, %eax                                       // the head, both halves at once: a
    xorl %edx, %edx                                       // CMPXCHG8B that writes back what it
    xorl %ebx, %ebx                                       // finds (0 for 0) loads edx:eax
    xorl %ecx, %ecx
    lock cmpxchg8b HUBBLE_POOL_NEXT(%edi)
    addl HUBBLE_POOL_DELAY(%edi), %eax
    adcl HUBBLE_POOL_DELAY+4(%edi), %edx
    addl %eax, %eax                                       // << 1
    adcl %edx, %edx
    movl %eax, %ebx
    movl %edx, %ecx
    movl HUBBLE_BLOCK_STATE(%esi), %eax
    movl HUBBLE_BLOCK_STATE+4(%esi), %edx
1:
    lock cmpxchg8b HUBBLE_BLOCK_STATE(%esi)               // a 64-bit atomic store (release)
    jne 1b
2:
    movl $HUBBLE_POOL_SEALED, %fs:THREAD_HUBBLE_CURSOR_OFFSET
    movl $0, %fs:THREAD_HUBBLE_LIMIT_OFFSET
    movl $HUBBLE_POOL_TRIES, %ebp
3:
    movl HUBBLE_POOL_NEXT(%edi), %eax                     // ticket = next++ (a torn first
    movl HUBBLE_POOL_NEXT+4(%edi), %edx                   // guess only fails the CMPXCHG8B)
4:
    movl %eax, %ebx
    movl %edx, %ecx
    addl $1, %ebx
    adcl $0, %ecx
    lock cmpxchg8b HUBBLE_POOL_NEXT(%edi)
    jne 4b                                                // edx:eax = the ticket
    movl HUBBLE_POOL_MASK(%edi), %esi
    andl %eax, %esi
    imull HUBBLE_POOL_BLOCK_BYTES(%edi), %esi
    addl HUBBLE_POOL_BLOCKS(%edi), %esi                   // the candidate block
    pushl %edx                                            // the ticket, while edx:eax hold
    .cfi_adjust_cfa_offset 4
    pushl %eax                                            // the state
    .cfi_adjust_cfa_offset 4
    movl HUBBLE_BLOCK_STATE(%esi), %eax
    movl HUBBLE_BLOCK_STATE+4(%esi), %edx
5:
    testl %edx, %edx
    jnz 6f
    cmpl $HUBBLE_POOL_OWNED, %eax
    je 8f                                                 // owned: a lagging thread's, skip it
6:
    movl %eax, %ebx                                       // bound = state >> 1 (64-bit)
    movl %edx, %ecx
    shrdl $1, %ecx, %ebx
    shrl $1, %ecx
    cmpl %ebx, (%esp)                                     // ticket - bound, for the borrow
    movl 4(%esp), %ebx
    sbbl %ecx, %ebx
    jb 8f                                                 // sealed less than N - A tickets ago
    movl $HUBBLE_POOL_OWNED, %ebx
    xorl %ecx, %ecx
    lock cmpxchg8b HUBBLE_BLOCK_STATE(%esi)               // claim if still what we read
    jne 5b                                                // it changed: look at it again
    .cfi_remember_state
    popl %eax
    .cfi_adjust_cfa_offset -4
    popl %edx
    .cfi_adjust_cfa_offset -4
    movl %fs:THREAD_HUBBLE_END_OFFSET, %ebx               // seq
    movl %ebx, HUBBLE_BLOCK_IDENT(%esi)
    movl %fs:THREAD_TID_OFFSET, %ebx
    movl %ebx, HUBBLE_BLOCK_IDENT+4(%esi)                 // seq | tid << 32
    movl %eax, HUBBLE_BLOCK_TICKET(%esi)
    movl %edx, HUBBLE_BLOCK_TICKET+4(%esi)
    rdtsc
    movl %eax, HUBBLE_BLOCK_TIME(%esi)
    movl %edx, HUBBLE_BLOCK_TIME+4(%esi)
    movl $0, HUBBLE_BLOCK_CLOSE(%esi)                     // open
    movl $0, HUBBLE_BLOCK_CLOSE+4(%esi)
    movl %esi, %fs:THREAD_HUBBLE_END_OFFSET
    movl HUBBLE_POOL_BLOCK_BYTES(%edi), %eax
    addl %esi, %eax                                       // limit = end: records are one slot
    movl %eax, %fs:THREAD_HUBBLE_LIMIT_OFFSET
    leal HUBBLE_BLOCK_DATA(%esi), %ecx
    jmp 7f
8:
    .cfi_restore_state
    addl $8, %esp                                         // the ticket
    .cfi_adjust_cfa_offset -8
    subl $1, %ebp
    jnz 3b
    movl %fs:THREAD_HUBBLE_END_OFFSET, %eax               // no free block: drop, seq + 1
    addl $1, %eax
    movl %eax, %fs:THREAD_HUBBLE_END_OFFSET
    xorl %ecx, %ecx
7:
    popl %ebp
    .cfi_adjust_cfa_offset -4
    popl %edi
    .cfi_adjust_cfa_offset -4
    popl %esi
    .cfi_adjust_cfa_offset -4
    popl %ebx
    .cfi_adjust_cfa_offset -4
    popl %edx
    .cfi_adjust_cfa_offset -4
    popl %eax
    .cfi_adjust_cfa_offset -4
    ret
END_FUNCTION hubble_pool_take
.endm
