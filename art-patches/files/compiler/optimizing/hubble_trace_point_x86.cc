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
 * Hubble for AOSP: the x86 (32-bit) trace point (contract: runtime/hubble/README.md).
 *
 *     mov   rC, fs:[cursor]
 *     test  rC, rC
 *     jz    done                   ; tracing off: 3 instructions
 *     cmp   rC, fs:[limit]
 *     jae   out_of_line            ; ring full (limit = end) or stop doorbell (0)
 *   resume:
 *     rdtsc
 *     mov   [rC + 4], eax          ; hi = ts
 *     mov   [rC], rM               ; lo = ArtMethod* (exit: mov dword [rC], 0)
 *     add   rC, 8
 *     mov   fs:[cursor], rC        ; publish: TSO orders it after both halves of the slot
 *   done:
 *
 * A slot is two 4-byte stores, as in nterp_x86.S: a reader only trusts slots below a cursor it
 * has read, and the cursor store comes after both (stores are not reordered with stores).
 */
#include "hubble_trace_point_x86.h"

namespace art HIDDEN {
namespace hubble {

namespace {

using x86::Address;
using x86::Immediate;
using x86::NearLabel;
using x86::Register;
using x86::X86Assembler;

Address ThreadField(int32_t offset) { return Address::Absolute(static_cast<uintptr_t>(offset)); }

void ReadCounter(X86Assembler* assembler, const TracePointX86& tp) {
  switch (tp.options.x86_counter) {
    case X86Counter::kRdtsc:
      assembler->rdtsc();
      break;
    case X86Counter::kLfenceRdtsc:
      assembler->lfence();
      assembler->rdtsc();
      break;
    case X86Counter::kRdtscp:
      assembler->rdtscp();
      break;
  }
}

}  // namespace

bool CounterClobbersX86(const TracePointOptions& options, x86::Register reg) {
  return reg == x86::EAX || reg == x86::EDX ||
         (reg == x86::ECX && options.x86_counter == X86Counter::kRdtscp);
}

void EmitTracePointX86(X86Assembler* assembler,
                       const TracePointX86& tp,
                       TraceKind kind,
                       Register method,
                       TraceLabelsX86* labels) {
  DCHECK(!CounterClobbersX86(tp.options, tp.cursor));
  DCHECK(kind == TraceKind::kExit ||
         (!CounterClobbersX86(tp.options, method) && method != tp.cursor));
  NearLabel off;
  assembler->fs()->movl(tp.cursor, ThreadField(tp.offsets.cursor));
  assembler->testl(tp.cursor, tp.cursor);
  assembler->j(x86::kEqual, &off);
  assembler->fs()->cmpl(tp.cursor, ThreadField(tp.offsets.limit));
  assembler->j(x86::kAboveEqual, &labels->out_of_line);
  assembler->Bind(&labels->resume);
  ReadCounter(assembler, tp);
  assembler->movl(Address(tp.cursor, 4), x86::EAX);
  if (kind == TraceKind::kExit) {
    assembler->movl(Address(tp.cursor, 0), Immediate(kSlotExit));
  } else {
    assembler->movl(Address(tp.cursor, 0), method);
  }
  assembler->addl(tp.cursor, Immediate(8));
  assembler->fs()->movl(ThreadField(tp.offsets.cursor), tp.cursor);
  assembler->Bind(&off);
  assembler->Bind(&labels->done);
}

void EmitTracePointOutOfLineX86(X86Assembler* assembler,
                                const TracePointX86& tp,
                                TraceLabelsX86* labels) {
  NearLabel stop;
  NearLabel pool;
  assembler->Bind(&labels->out_of_line);
  // TSO: not performed before the inline half's loads (no fence instruction needed).
  assembler->fs()->cmpl(ThreadField(tp.offsets.stop), Immediate(0));
  assembler->j(x86::kNotEqual, &stop);
  assembler->fs()->cmpl(tp.cursor, ThreadField(tp.offsets.limit));
  assembler->j(x86::kBelow, &labels->resume);  // the first load saw a stale limit: carry on
  // Wrap. 32-bit mode: limit == end, every record is one slot, nothing to pad; unless
  // begin = pool | 1 (many-thread mode).
  assembler->fs()->movl(tp.cursor, ThreadField(tp.offsets.begin));
  assembler->testl(tp.cursor, Immediate(1));
  assembler->j(x86::kNotEqual, &pool);
  assembler->jmp(&labels->resume);
  // Stop requested: tracing off first, then publish the end position (release under TSO).
  assembler->Bind(&stop);
  assembler->fs()->movl(ThreadField(tp.offsets.cursor), Immediate(0));
  assembler->fs()->movl(ThreadField(tp.offsets.stop), tp.cursor);
  assembler->jmp(&labels->done);
  // The block is full (or the thread holds none): the runtime's block-end function seals it
  // and takes the next (runtime/hubble/pool_x86.S has the contract). It answers in ECX, the slot
  // to write at or 0 when no block was free (the record is dropped), and preserves every other
  // register; ECX is saved around the call when it is not the cursor. The cursor holds
  // pool | 1: P_TAKE is at pool + 40.
  assembler->Bind(&pool);
  const bool save_ecx = tp.cursor != x86::ECX;
  if (save_ecx) {
    assembler->pushl(x86::ECX);
  }
  assembler->call(Address(tp.cursor, kPoolTakeOffset - 1));
  if (save_ecx) {
    assembler->movl(tp.cursor, x86::ECX);
    assembler->popl(x86::ECX);
  }
  assembler->testl(tp.cursor, tp.cursor);
  assembler->j(x86::kNotEqual, &labels->resume);
  assembler->jmp(&labels->done);
}

}  // namespace hubble
}  // namespace art
