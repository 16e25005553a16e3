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
 * Hubble for AOSP: the x86_64 trace point. runtime/hubble/README.md is the contract
 * (per-thread block, slot encoding, algorithm).
 *
 * Inline part (kEntry; kEntryNarrow has no width test, kExit stores hi = ts, lo = 0):
 *
 *     mov   rC, gs:[cursor]
 *     test  rC, rC
 *     jz    done                   ; tracing off: 3 instructions (TEST+JZ fuse)
 *     cmp   rC, gs:[limit]
 *     jae   out_of_line            ; ring full or stop doorbell
 *     mov   edx, edi               ; the pointer's low half, zero-extended
 *     cmp   rdx, rdi
 *     jne   wide                   ; upper half non-zero: two slots
 *     rdtsc                        ; eax = counter low half (rax's upper half cleared)
 *     shl   rax, 32                ; hi = ts
 *     or    rax, rdi               ; lo = ptr (fits 32 bits here)
 *     mov   [rC], rax              ; the whole slot in one 8-byte store
 *     add   rC, 8
 *     mov   gs:[cursor], rC        ; publish (TSO: ordered after the slot)
 *   done:
 *
 * x86 is TSO: loads are not reordered with other loads and stores not with other stores, so
 * the acquire fence of the slow path (DMB ISHLD on arm64) and the release store of the stop
 * publication (STLR) are plain MOVs here, as in nterp_x86_64.S.
 */
#include "hubble_trace_point_x86_64.h"

namespace art HIDDEN {
namespace hubble {

namespace {

using x86_64::Address;
using x86_64::CpuRegister;
using x86_64::Immediate;
using x86_64::NearLabel;
using x86_64::X86_64Assembler;

const CpuRegister kRax(x86_64::RAX);
const CpuRegister kRdx(x86_64::RDX);
const CpuRegister kRcx(x86_64::RCX);

// gs-relative Thread field (absolute disp32, no RIP: ART's Address::Absolute(..., true)).
Address ThreadField(int32_t offset) {
  return Address::Absolute(static_cast<uintptr_t>(offset), /* no_rip= */ true);
}

// rax = counter << 32: the slot's upper half is the counter's low 32 bits
// (runtime/hubble/README.md; the control plane recovers the rest from the reference read at
// flush).
void ReadCounterHigh(X86_64Assembler* assembler, const TracePointX86_64& tp) {
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
  assembler->shlq(kRax, Immediate(32));
}

// Width test: ZF = the pointer fits 32 bits. RDX is the counter's anyway.
void TestNarrow(X86_64Assembler* assembler, CpuRegister method) {
  assembler->movl(kRdx, method);
  assembler->cmpq(kRdx, method);
}

// The one-slot record and the cursor update. kEntry reaches it only with a narrow pointer.
void EmitStore(X86_64Assembler* assembler,
               const TracePointX86_64& tp,
               TraceKind kind,
               CpuRegister method) {
  ReadCounterHigh(assembler, tp);
  if (kind == TraceKind::kEntry) {
    assembler->orq(kRax, method);
  } else if (kind == TraceKind::kEntryNarrow) {
    assembler->movl(kRdx, method);  // the low half only, whatever the upper half holds
    assembler->orq(kRax, kRdx);
  }
  assembler->movq(Address(tp.cursor, 0), kRax);
  assembler->addq(tp.cursor, Immediate(8));
  assembler->gs()->movq(ThreadField(tp.offsets.cursor), tp.cursor);
}

}  // namespace

bool CounterClobbersX86_64(const TracePointOptions& options, x86_64::Register reg) {
  return reg == x86_64::RAX || reg == x86_64::RDX ||
         (reg == x86_64::RCX && options.x86_counter == X86Counter::kRdtscp);
}

void EmitTracePointX86_64(X86_64Assembler* assembler,
                          const TracePointX86_64& tp,
                          TraceKind kind,
                          CpuRegister method,
                          TraceLabelsX86_64* labels) {
  DCHECK(!CounterClobbersX86_64(tp.options, tp.cursor.AsRegister()));
  DCHECK(kind == TraceKind::kExit ||
         (!CounterClobbersX86_64(tp.options, method.AsRegister()) &&
          method.AsRegister() != tp.cursor.AsRegister()));
  NearLabel off;
  assembler->gs()->movq(tp.cursor, ThreadField(tp.offsets.cursor));
  assembler->testq(tp.cursor, tp.cursor);
  assembler->j(x86_64::kEqual, &off);
  // Unsigned: cursor >= limit covers the ring's end (limit = end - 8) and the doorbell (0).
  assembler->gs()->cmpq(tp.cursor, ThreadField(tp.offsets.limit));
  assembler->j(x86_64::kAboveEqual, &labels->out_of_line);
  if (kind == TraceKind::kEntry) {
    TestNarrow(assembler, method);
    assembler->j(x86_64::kNotEqual, &labels->wide);
  }
  EmitStore(assembler, tp, kind, method);
  assembler->Bind(&off);
  assembler->Bind(&labels->done);
}

void EmitTracePointOutOfLineX86_64(X86_64Assembler* assembler,
                                   const TracePointX86_64& tp,
                                   TraceKind kind,
                                   CpuRegister method,
                                   TraceLabelsX86_64* labels) {
  NearLabel wrap;
  NearLabel recheck;
  NearLabel stop;
  NearLabel pool;
  if (kind == TraceKind::kEntry) {
    // Two slots: the full pointer, then hi = ts, lo = 1. Reached with cursor < limit = end - 8
    // (from the inline half, or after the recheck below), so both fit.
    assembler->Bind(&labels->wide);
    ReadCounterHigh(assembler, tp);
    assembler->orq(kRax, Immediate(kSlotWideEntry));
    assembler->movq(Address(tp.cursor, 0), method);
    assembler->movq(Address(tp.cursor, 8), kRax);
    assembler->addq(tp.cursor, Immediate(16));
    assembler->gs()->movq(ThreadField(tp.offsets.cursor), tp.cursor);
    assembler->jmp(&labels->done);
  }
  assembler->Bind(&labels->out_of_line);
  // TSO: these loads are not performed before the inline half's loads of cursor and limit.
  assembler->gs()->cmpq(ThreadField(tp.offsets.stop), Immediate(0));
  assembler->j(x86_64::kNotEqual, &stop);
  assembler->gs()->cmpq(tp.cursor, ThreadField(tp.offsets.limit));
  assembler->j(x86_64::kBelow, &recheck);  // the first load saw a stale limit: carry on
  assembler->gs()->testb(ThreadField(tp.offsets.begin), Immediate(1));
  assembler->j(x86_64::kNotEqual, &pool);  // begin = pool | 1: many-thread mode
  assembler->gs()->cmpq(tp.cursor, ThreadField(tp.offsets.end));
  assembler->j(x86_64::kEqual, &wrap);
  assembler->movq(Address(tp.cursor, 0), Immediate(kSlotPad));  // the one slot left: pad
  assembler->Bind(&wrap);
  assembler->gs()->movq(tp.cursor, ThreadField(tp.offsets.begin));
  assembler->Bind(&recheck);
  if (kind == TraceKind::kEntry) {
    TestNarrow(assembler, method);
    assembler->j(x86_64::kNotEqual, &labels->wide);
  }
  // The one-slot record with a fresh counter value.
  EmitStore(assembler, tp, kind, method);
  assembler->jmp(&labels->done);
  // Stop requested: tracing off first, then publish the end position (a plain MOV is a release
  // store under TSO; the ring and the cleared cursor are visible before it).
  assembler->Bind(&stop);
  assembler->gs()->movq(ThreadField(tp.offsets.cursor), Immediate(0));
  assembler->gs()->movq(ThreadField(tp.offsets.stop), tp.cursor);
  assembler->jmp(&labels->done);
  // The block is full (or the thread holds none): the runtime's block-end function seals it and
  // takes the next (runtime/hubble/pool_x86_64.S has the contract). It answers in RCX, the slot
  // to write at (a fresh block: room for two slots) or 0 when no block was free (the record is
  // dropped), and preserves every other register; RCX is saved around the call when it is not
  // the cursor (compiled code may keep an argument there). Stack: 8 for RCX, 8 for the return
  // address, 40 for the function, all within the reserved region the frame entry probed.
  assembler->Bind(&pool);
  const bool save_rcx = tp.cursor.AsRegister() != x86_64::RCX;
  if (save_rcx) {
    assembler->pushq(kRcx);
  }
  assembler->gs()->movq(tp.cursor, ThreadField(tp.offsets.begin));
  assembler->call(Address(tp.cursor, kPoolTakeOffset - 1));
  if (save_rcx) {
    assembler->movq(tp.cursor, kRcx);
    assembler->popq(kRcx);
  }
  assembler->testq(tp.cursor, tp.cursor);
  assembler->j(x86_64::kNotEqual, &recheck);
  assembler->jmp(&labels->done);
}

}  // namespace hubble
}  // namespace art
