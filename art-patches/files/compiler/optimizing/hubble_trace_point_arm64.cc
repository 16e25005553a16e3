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
 * Hubble for AOSP: the A64 trace point. runtime/hubble/README.md is the contract
 * (per-thread block, slot encoding, algorithm).
 *
 * Inline part (kEntry; kEntryNarrow and kExit have no TST and a CMP for the CCMP):
 *
 *     ldr   x16, [x19, #cursor]
 *     ldr   x17, [x19, #limit]
 *     tst   xM, #0xffffffff00000000      ; Z = pointer fits 32 bits (in the loads' shadow)
 *     cbz   x16, done                    ; tracing off: 4 instructions (3 without the TST)
 *     ccmp  x16, x17, #C, eq             ; fits ? (cursor - limit) : force C=1 ("hs")
 *     mrs   x17, cntvct_el0              ; in the flags' shadow; the limit is dead here
 *     b.hs  out_of_line                  ; wide pointer, ring full or stop doorbell
 *     stp   wM, w17, [x16], #8           ; hi = ts, lo = ptr   (exit: wzr)
 *     str   x16, [x19, #cursor]
 *   done:
 *
 * Why this order (measured with llvm-mca's scheduling models): an in-order core
 * (Cortex-A55) issues nothing past an instruction whose operands are not ready, so the ON path
 * costs the length of its dependency chain. In LLVM's A55 model an LDP of two X registers takes
 * 5 cycles, an LDR 3, and a flag-setting op 3 before a CCMP or B.cond may read the flags. With
 * one LDP and the TST after the CBZ, the TST could issue only with the CBZ, 5 cycles in, and the
 * CCMP 3 cycles after it: 13 cycles per back-to-back entry (11 per exit). With two LDRs and the
 * TST next to them (it reads only the method register) the chain is LDR, CCMP, B.HS: 9 and 9.
 * The out-of-order models (A76, N1, V1) give the same cycles either way. The OFF path is one
 * (exit, narrow entry) or two (entry) instructions longer, and no slower in any model but one:
 * LLVM's A76, which is its A57 model, charges the entry's TST.
 *
 * Many-thread mode (runtime/hubble/README.md): the inline part is the same; a full block reaches
 * the out-of-line half as a full ring does, and only there does bit 0 of `begin` send it to
 * the runtime's block-end function (runtime/hubble/pool_arm64.S) instead of the wrap:
 *
 *     mov   x16, x30                     ; LR is live in a method without a frame: handed
 *     ldr   x30, [x17, #take - 1]        ;   through the function, which returns it in x30
 *     blr   x30                          ; x16 = the new block's first slot, or 0: dropped
 *     cbnz  x16, recheck                 ; write the record as after a wrap
 *     b     done
 *
 * Why it is still correct (runtime/hubble/README.md): the fast path relies on no memory
 * ordering at all, and A64 gives the two loads of an LDP no order between them either (each
 * is single-copy atomic on its own, as each LDR is). So two LDRs can observe exactly the
 * (cursor, limit) pairs the LDP could, in either program order: a fresh cursor with a stale
 * limit of 0 (the slow path's reload after the barrier carries on), a doorbell with a cursor of
 * the same run (the slow path stops). The DMB ISHLD at the head of the slow path orders BOTH
 * loads before the reloads of stop/limit/begin/end, which is the acquire fence of protocol (1)
 * that pairs with request_stop's and start's release stores. The stop path is unchanged:
 * cursor = 0 first, then STLR of the end position (protocol (2), (3)). The TST touches no
 * memory, and the CCMP, MRS and B.HS keep their order, so nothing else moved.
 */
#include "hubble_trace_point_arm64.h"

namespace art {
namespace hubble {

namespace {

using vixl::aarch64::Assembler;
using vixl::aarch64::CFlag;
using vixl::ExactAssemblyScope;
using vixl::aarch64::InnerShareable;
using vixl::aarch64::BarrierReads;
using vixl::aarch64::Label;
using vixl::aarch64::MacroAssembler;
using vixl::aarch64::MemOperand;
using vixl::aarch64::Operand;
using vixl::aarch64::PostIndex;
using vixl::aarch64::Register;
using vixl::aarch64::SystemRegister;
using vixl::aarch64::kInstructionSize;

// Debian's VIXL 5.1 has no name for CNTVCT_EL0 (op0=3, op1=3, CRn=14, CRm=0, op2=2).
constexpr SystemRegister kCntvctEl0 =
    static_cast<SystemRegister>(vixl::aarch64::SystemRegisterEncoder<3, 3, 14, 0, 2>::value);

constexpr uint64_t kUpperHalf = UINT64_C(0xffffffff00000000);

// Upper bound of instructions in each half (the scopes use kMaximumSize).
constexpr size_t kMaxInline = 10;
constexpr size_t kMaxOutOfLine = 48;

void ReadCounter(MacroAssembler* masm, const TracePointArm64& tp) {
  if (tp.options.isb_before_counter) {
    masm->isb();
  }
  masm->mrs(tp.scratch, kCntvctEl0);
}

// The one-slot record (entry: lo = pointer, exit: lo = 0; hi = ts) and the cursor update.
void EmitStore(MacroAssembler* masm, const TracePointArm64& tp, TraceKind kind, Register method) {
  const Register cursor = tp.cursor.X();
  const Register scratch = tp.scratch.X();
  if (kind == TraceKind::kExit) {
    masm->stp(vixl::aarch64::wzr, scratch.W(), MemOperand(cursor, 8, PostIndex));
  } else {
    masm->stp(method.W(), scratch.W(), MemOperand(cursor, 8, PostIndex));
  }
  masm->str(cursor, MemOperand(tp.tr, tp.offsets.cursor));
}

}  // namespace

TracePointArm64 DefaultTracePointArm64(const ThreadOffsets& offsets) {
  TracePointArm64 tp{offsets, vixl::aarch64::x19, vixl::aarch64::x16, vixl::aarch64::x17,
                     TracePointOptions()};
  return tp;
}

void EmitTracePointArm64(MacroAssembler* masm,
                         const TracePointArm64& tp,
                         TraceKind kind,
                         Register method,
                         TraceLabelsArm64* labels) {
  const Register cursor = tp.cursor.X();
  const Register scratch = tp.scratch.X();
  VIXL_ASSERT(kind == TraceKind::kExit || (!method.Is(cursor) && !method.Is(scratch)));
  {
    ExactAssemblyScope scope(masm, kMaxInline * kInstructionSize,
                             ExactAssemblyScope::kMaximumSize);
    // Two LDRs, not one LDP: the cursor arrives two cycles earlier on an in-order core, and
    // the limit load issues in its shadow (see the header comment for why the pair of loads
    // still means what the LDP meant).
    masm->ldr(cursor, MemOperand(tp.tr, tp.offsets.cursor));
    masm->ldr(scratch, MemOperand(tp.tr, tp.offsets.limit));
    if (kind == TraceKind::kEntry) {
      // The width test reads only the method register, so it issues while the loads are in
      // flight; after the CBZ its flags would add a whole flag latency to the ON path.
      masm->tst(method.X(), Operand(kUpperHalf));
    }
    masm->cbz(cursor, &labels->done);
    if (kind == TraceKind::kEntry) {
      // One flag-setting pair decides both "pointer needs two slots" and "ring needs the slow
      // path": when the upper half is non-zero CCMP forces C=1, so B.HS goes out of line.
      masm->ccmp(cursor, Operand(scratch), CFlag, vixl::aarch64::eq);
    } else {
      masm->cmp(cursor, Operand(scratch));
    }
  }
  // The counter read goes between the compare and its branch: on an in-order core it fills
  // the compare's flag latency. It overwrites the limit, which only the out-of-line half needs
  // again (and reloads).
  {
    ExactAssemblyScope scope(masm, 2 * kInstructionSize, ExactAssemblyScope::kMaximumSize);
    ReadCounter(masm, tp);
  }
  // The out-of-line half sits at the end of the method, possibly beyond B.cond's +-1 MiB: the
  // macro instruction registers the branch with VIXL's veneer pool (one B.HS as a rule).
  masm->B(&labels->out_of_line, vixl::aarch64::hs);
  ExactAssemblyScope scope(masm, kMaxInline * kInstructionSize,
                           ExactAssemblyScope::kMaximumSize);
  EmitStore(masm, tp, kind, method);
  masm->bind(&labels->done);
}

void EmitTracePointOutOfLineArm64(MacroAssembler* masm,
                                  const TracePointArm64& tp,
                                  TraceKind kind,
                                  Register method,
                                  TraceLabelsArm64* labels) {
  const Register cursor = tp.cursor.X();
  const Register scratch = tp.scratch.X();
  const Register tr = tp.tr.X();
  Label wide;
  Label slow;
  Label wrap;
  Label recheck;
  Label stop;
  Label pool;
  ExactAssemblyScope scope(masm, kMaxOutOfLine * kInstructionSize,
                           ExactAssemblyScope::kMaximumSize);
  masm->bind(&labels->out_of_line);
  if (kind == TraceKind::kEntry) {
    // Here because the pointer is wide, the ring needs the slow path, or both. The limit
    // register holds the counter now: reload the limit (same address as the inline load, so
    // at least as new as what that load saw).
    masm->ldr(scratch, MemOperand(tr, tp.offsets.limit));
    masm->cmp(cursor, Operand(scratch));
    masm->b(&slow, vixl::aarch64::hs);
    // Two-slot entry: the full pointer, then hi = ts, lo = 1. cursor < limit = end - 8, so
    // both slots fit.
    masm->bind(&wide);
    ReadCounter(masm, tp);
    masm->lsl(scratch, scratch, 32);
    masm->orr(scratch, scratch, Operand(kSlotWideEntry));
    masm->stp(method.X(), scratch, MemOperand(cursor, 16, PostIndex));
    masm->str(cursor, MemOperand(tr, tp.offsets.cursor));
    masm->b(&labels->done);
  }
  masm->bind(&slow);
  // See the control thread's latest stop / limit / begin: both inline loads that brought us
  // here are ordered before these (the control thread publishes cursor and limit=0 with
  // release).
  masm->dmb(InnerShareable, BarrierReads);
  masm->ldr(scratch, MemOperand(tr, tp.offsets.stop));
  masm->cbnz(scratch, &stop);
  masm->ldr(scratch, MemOperand(tr, tp.offsets.limit));
  masm->cmp(cursor, Operand(scratch));
  masm->b(&recheck, vixl::aarch64::lo);  // the inline load saw a stale limit: carry on
  masm->ldr(scratch, MemOperand(tr, tp.offsets.begin));
  masm->tbnz(scratch, 0, &pool);  // begin = pool | 1: many-thread mode
  masm->ldr(scratch, MemOperand(tr, tp.offsets.end));
  masm->cmp(cursor, Operand(scratch));
  masm->b(&wrap, vixl::aarch64::eq);
  masm->movz(scratch, kSlotPad);  // the one slot left before the end: pad
  masm->str(scratch, MemOperand(cursor));
  masm->bind(&wrap);
  masm->ldr(cursor, MemOperand(tr, tp.offsets.begin));
  masm->bind(&recheck);
  if (kind == TraceKind::kEntry) {
    masm->tst(method.X(), Operand(kUpperHalf));
    masm->b(&wide, vixl::aarch64::ne);
  }
  // Resume: the one-slot record with a fresh counter value.
  masm->bind(&labels->resume);
  ReadCounter(masm, tp);
  EmitStore(masm, tp, kind, method);
  masm->b(&labels->done);
  // Stop requested: tracing off first, then publish the end position with release semantics
  // (the ring and the cleared cursor are visible before the control thread sees stop > 1, so
  // a restart's cursor store can never be overwritten by this thread's late clear).
  masm->bind(&stop);
  masm->str(vixl::aarch64::xzr, MemOperand(tr, tp.offsets.cursor));
  masm->add(scratch, tr, Operand(tp.offsets.stop));
  masm->stlr(cursor, MemOperand(scratch));
  masm->b(&labels->done);
  // The block is full (or the thread holds none): the runtime's block-end function seals it
  // and takes the next (runtime/hubble/pool_arm64.S has the contract). It returns the caller's
  // LR, handed over in the cursor register, in LR again, and the slot to write at (a fresh
  // block: room for two slots) or 0 when no block was free (the record is dropped).
  masm->bind(&pool);
  masm->mov(cursor, vixl::aarch64::lr);
  masm->ldr(vixl::aarch64::lr, MemOperand(scratch, kPoolTakeOffset - 1));
  masm->blr(vixl::aarch64::lr);
  masm->cbnz(cursor, &recheck);
  masm->b(&labels->done);
}

}  // namespace hubble
}  // namespace art
