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
 * Hubble for AOSP: the T32 trace point (contract: runtime/hubble/README.md).
 *
 *     ldrd  rC, rL, [r9, #cursor]        ; cursor and limit in one load
 *     cbz   rC, done                     ; (cmp rC, #0; beq done when rC is not r0-r7)
 *     cmp   rC, rL
 *     bhs   out_of_line                  ; ring or block full, or stop doorbell
 *   resume:
 *     mrrc  p15, 1, rL, rH, c14          ; CNTVCT: rL = low word
 *     strd  r0, rL, [rC], #8             ; entry: lo = ptr, hi = ts
 *        (exit: mov rH, #0; strd rH, rL, [rC], #8)
 *     str   rC, [r9, #cursor]
 *   done:
 */
#include "hubble_trace_point_arm_vixl.h"

namespace art {
namespace hubble {

namespace {

using vixl::ExactAssemblyScope;
using vixl::aarch32::Label;
using vixl::aarch32::MacroAssembler;
using vixl::aarch32::MemOperand;
using vixl::aarch32::Narrow;
using vixl::aarch32::PostIndex;
using vixl::aarch32::Register;
using vixl::aarch32::Wide;

constexpr size_t kMaxInlineBytes = 40;
constexpr size_t kMaxOutOfLineBytes = 96;

void ReadCounter(MacroAssembler* masm, const TracePointArmVIXL& tp) {
  if (tp.options.isb_before_counter) {
    masm->isb(vixl::aarch32::SY);
  }
  const uint32_t insn = MrrcCntvctT32(tp.lo, tp.hi);
  // A 32-bit T32 instruction is stored as its first halfword, then its second.
  masm->GetBuffer()->Emit16(static_cast<uint16_t>(insn >> 16));
  masm->GetBuffer()->Emit16(static_cast<uint16_t>(insn & 0xffff));
}

}  // namespace

uint32_t MrrcCntvctT32(Register rt, Register rt2) {
  constexpr uint32_t kOpc1 = 1;
  constexpr uint32_t kCRm = 14;
  const uint32_t hw1 = 0xEC50u | rt2.GetCode();
  const uint32_t hw2 = (rt.GetCode() << 12) | 0xF00u | (kOpc1 << 4) | kCRm;
  return (hw1 << 16) | hw2;
}

void EmitTracePointArmVIXL(MacroAssembler* masm,
                           const TracePointArmVIXL& tp,
                           TraceKind kind,
                           Register method,
                           TraceLabelsArmVIXL* labels) {
  VIXL_ASSERT(tp.offsets.limit == tp.offsets.cursor + 4);
  VIXL_ASSERT(!tp.cursor.Is(tp.lo) && !tp.cursor.Is(tp.hi) && !tp.lo.Is(tp.hi));
  VIXL_ASSERT(kind == TraceKind::kExit ||
              (!method.Is(tp.cursor) && !method.Is(tp.lo) && !method.Is(tp.hi)));
  {
    ExactAssemblyScope scope(masm, kMaxInlineBytes, ExactAssemblyScope::kMaximumSize);
    masm->ldrd(tp.cursor, tp.lo, MemOperand(tp.tr, tp.offsets.cursor));
    if (tp.cursor.IsLow()) {
      masm->cbz(tp.cursor, &labels->done);
    } else {
      masm->cmp(tp.cursor, 0);
      masm->b(vixl::aarch32::eq, Narrow, &labels->done);
    }
    masm->cmp(tp.cursor, tp.lo);
  }
  // The out-of-line half sits at the end of the method: the macro instruction handles any
  // distance (veneers), as ART's own slow-path branches do.
  masm->B(vixl::aarch32::hs, &labels->out_of_line);
  ExactAssemblyScope scope(masm, kMaxInlineBytes, ExactAssemblyScope::kMaximumSize);
  masm->bind(&labels->resume);
  ReadCounter(masm, tp);
  if (kind == TraceKind::kExit) {
    // T32 has no zero register: the high word of the counter is dead, so it becomes the 0.
    masm->mov(Wide, tp.hi, 0);
    masm->strd(tp.hi, tp.lo, MemOperand(tp.cursor, 8, PostIndex));
  } else {
    masm->strd(method, tp.lo, MemOperand(tp.cursor, 8, PostIndex));
  }
  masm->str(tp.cursor, MemOperand(tp.tr, tp.offsets.cursor));
  masm->bind(&labels->done);
}

void EmitTracePointOutOfLineArmVIXL(MacroAssembler* masm,
                                    const TracePointArmVIXL& tp,
                                    TraceKind kind,
                                    TraceLabelsArmVIXL* labels) {
  (void)kind;  // every 32-bit record is one slot: entry and exit share the slow path
  Label stop;
  Label carry_on;
  Label pool;
  ExactAssemblyScope scope(masm, kMaxOutOfLineBytes, ExactAssemblyScope::kMaximumSize);
  masm->bind(&labels->out_of_line);
  // DMB ISH, not ISHLD: ARMv7 has no load-only barrier. Orders the LDRD before the loads
  // below (acquire side) and every ring store before the stores below (release side).
  masm->dmb(vixl::aarch32::ISH);
  masm->ldr(Wide, tp.lo, MemOperand(tp.tr, tp.offsets.stop));
  masm->cmp(tp.lo, 0);
  masm->b(vixl::aarch32::ne, Narrow, &stop);
  masm->ldr(Wide, tp.lo, MemOperand(tp.tr, tp.offsets.limit));
  masm->cmp(tp.cursor, tp.lo);
  // Cursor below the fresh limit: the LDRD saw a stale limit, carry on. Only unconditional
  // B.W (+-16 MiB) goes back to the inline half, which may be far away.
  masm->b(vixl::aarch32::lo, Narrow, &carry_on);
  // 32-bit mode: limit == end, nothing to pad; wrap to begin, unless begin = pool | 1
  // (many-thread mode).
  masm->ldr(Wide, tp.cursor, MemOperand(tp.tr, tp.offsets.begin));
  masm->tst(tp.cursor, 1);
  masm->b(vixl::aarch32::ne, Narrow, &pool);
  masm->bind(&carry_on);
  masm->b(Wide, &labels->resume);
  // Stop requested: tracing off, barrier, then publish the end position.
  masm->bind(&stop);
  masm->mov(Wide, tp.lo, 0);
  masm->str(Wide, tp.lo, MemOperand(tp.tr, tp.offsets.cursor));
  masm->dmb(vixl::aarch32::ISH);
  masm->str(Wide, tp.cursor, MemOperand(tp.tr, tp.offsets.stop));
  masm->b(Wide, &labels->done);
  // The block is full (or the thread holds none): the runtime's block-end function seals it
  // and takes the next (runtime/hubble/pool_arm.S has the contract). It takes the caller's LR
  // in IP and hands it back in LR, and returns in IP the slot to write at (a fresh block) or 0
  // when no block was free (the record is dropped). Its address, loaded from the pool header,
  // goes into a temp that is neither IP nor LR (a JNI stub may give LR as a temp; then its own
  // LR is saved in the frame, and whatever is handed back does not matter).
  masm->bind(&pool);
  Register target = tp.hi;
  for (Register r : {tp.hi, tp.lo, tp.cursor}) {
    if (!r.Is(vixl::aarch32::ip) && !r.Is(vixl::aarch32::lr)) {
      target = r;
      break;
    }
  }
  masm->ldr(Wide, target, MemOperand(tp.cursor, kPoolTakeOffset - 1));
  masm->mov(vixl::aarch32::ip, vixl::aarch32::lr);
  masm->blx(target);
  if (!tp.cursor.Is(vixl::aarch32::ip)) {
    masm->mov(tp.cursor, vixl::aarch32::ip);
  }
  masm->cmp(tp.cursor, 0);
  masm->b(vixl::aarch32::ne, Narrow, &carry_on);
  masm->b(Wide, &labels->done);
}

}  // namespace hubble
}  // namespace art
