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
 * Hubble for AOSP: trace points in compiled JNI stubs. See hubble_jni_trace.h for where they go
 * and why there.
 */
#include "hubble_jni_trace.h"

#include <algorithm>

#include "base/casts.h"
#include "calling_convention.h"
#include "driver/compiler_options.h"
#include "optimizing/hubble_options.h"
#include "optimizing/hubble_trace_point.h"
#include "thread.h"

#ifdef ART_ENABLE_CODEGEN_arm
#include "optimizing/hubble_trace_point_arm_vixl.h"
#include "utils/arm/jni_macro_assembler_arm_vixl.h"
#endif

#ifdef ART_ENABLE_CODEGEN_arm64
#include "optimizing/hubble_trace_point_arm64.h"
#include "utils/arm64/jni_macro_assembler_arm64.h"
#endif

#ifdef ART_ENABLE_CODEGEN_x86
#include "optimizing/hubble_trace_point_x86.h"
#include "utils/x86/jni_macro_assembler_x86.h"
#endif

#ifdef ART_ENABLE_CODEGEN_x86_64
#include "optimizing/hubble_trace_point_x86_64.h"
#include "utils/x86_64/jni_macro_assembler_x86_64.h"
#endif

namespace art HIDDEN {
namespace hubble {

template <PointerSize kPointerSize>
static ThreadOffsets JniThreadOffsets() {
  return ThreadOffsets{Thread::HubbleCursorOffset<kPointerSize>().Int32Value(),
                       Thread::HubbleLimitOffset<kPointerSize>().Int32Value(),
                       Thread::HubbleStopOffset<kPointerSize>().Int32Value(),
                       Thread::HubbleBeginOffset<kPointerSize>().Int32Value(),
                       Thread::HubbleEndOffset<kPointerSize>().Int32Value()};
}

#ifdef ART_ENABLE_CODEGEN_arm64

// A64: the sequences own IP0/IP1 (and NZCV), as in compiled code. Both are free at the entry
// (between macro operations the JNI assembler keeps nothing in them) and at the exit (the
// return value is in x0/d0).
class JniTracePointsArm64 final : public JniTracePoints {
 public:
  explicit JniTracePointsArm64(arm64::Arm64JNIMacroAssembler* jni_asm)
      : jni_asm_(jni_asm),
        masm_(jni_asm->GetAssembler()->GetVIXLAssembler()),
        tp_{JniThreadOffsets<PointerSize::k64>(),
            arm64::Arm64Assembler::reg_x(arm64::TR),
            vixl::aarch64::ip0,
            vixl::aarch64::ip1,
            TracePointOptions()},
        method_(vixl::aarch64::xzr) {}

  void EmitEntry(ManagedRegister method) override {
    method_ = arm64::Arm64Assembler::reg_x(method.AsArm64().AsXRegister());
    DCHECK(!method_.Is(tp_.cursor) && !method_.Is(tp_.scratch));
    vixl::aarch64::UseScratchRegisterScope temps(masm_);
    temps.Exclude(tp_.cursor, tp_.scratch);
    // Any width: stubs are shared by every method with the same shorty and flags (JIT stubs
    // across class loaders), so the ArtMethod* is not known when the stub is compiled.
    EmitTracePointArm64(masm_, tp_, TraceKind::kEntry, method_, &entry_);
  }

  void EmitExit() override {
    vixl::aarch64::UseScratchRegisterScope temps(masm_);
    temps.Exclude(tp_.cursor, tp_.scratch);
    EmitTracePointArm64(masm_, tp_, TraceKind::kExit, vixl::aarch64::xzr, &exit_);
  }

  void EmitOutOfLine(size_t exit_cfa_adjustment) override {
    vixl::aarch64::UseScratchRegisterScope temps(masm_);
    temps.Exclude(tp_.cursor, tp_.scratch);
    EmitTracePointOutOfLineArm64(masm_, tp_, TraceKind::kEntry, method_, &entry_);
    jni_asm_->cfi().AdjustCFAOffset(static_cast<int>(exit_cfa_adjustment));
    EmitTracePointOutOfLineArm64(masm_, tp_, TraceKind::kExit, vixl::aarch64::xzr, &exit_);
    jni_asm_->cfi().AdjustCFAOffset(-static_cast<int>(exit_cfa_adjustment));
  }

 private:
  arm64::Arm64JNIMacroAssembler* const jni_asm_;
  vixl::aarch64::MacroAssembler* const masm_;
  const TracePointArm64 tp_;
  vixl::aarch64::Register method_;
  TraceLabelsArm64 entry_;
  TraceLabelsArm64 exit_;
};

#endif  // ART_ENABLE_CODEGEN_arm64

#ifdef ART_ENABLE_CODEGEN_arm

// T32 needs three temps (cursor, and MRRC's two destinations). At the entry the managed
// callee-saves are spilled and not yet in use (the stub takes them for the lock and the
// transition after this point): r5, r6, r7. At the exit those hold the JNI environment and the
// local reference cookie until the frame is popped, so the exit uses r2 and r3 (argument
// registers that are never return registers) and LR (spilled by BuildFrame, reloaded by
// RemoveFrame, already clobbered by the native call).
class JniTracePointsArm final : public JniTracePoints {
 public:
  JniTracePointsArm(arm::ArmVIXLJNIMacroAssembler* jni_asm, const JniCallingConvention& jni_conv)
      : jni_asm_(jni_asm),
        masm_(jni_asm->GetAssembler()->GetVIXLAssembler()),
        entry_tp_(MakeTracePoint(jni_conv.CalleeSaveScratchRegisters())),
        exit_tp_{JniThreadOffsets<PointerSize::k32>(),
                 arm::tr,
                 vixl::aarch32::r2,
                 vixl::aarch32::r3,
                 vixl::aarch32::lr,
                 TracePointOptions()} {
    DCHECK_NE(jni_conv.CoreSpillMask() & (1u << arm::LR), 0u);
    ArrayRef<const ManagedRegister> args = jni_conv.ArgumentScratchRegisters();
    DCHECK(std::any_of(args.begin(), args.end(), [](ManagedRegister r) {
      return r.AsArm().AsCoreRegister() == arm::R2;
    }));
    DCHECK(std::any_of(args.begin(), args.end(), [](ManagedRegister r) {
      return r.AsArm().AsCoreRegister() == arm::R3;
    }));
  }

  void EmitEntry(ManagedRegister method) override {
    vixl::aarch32::Register m(method.AsArm().AsCoreRegister());
    DCHECK(!m.Is(entry_tp_.cursor) && !m.Is(entry_tp_.lo) && !m.Is(entry_tp_.hi));
    vixl::aarch32::UseScratchRegisterScope temps(masm_);
    Exclude(&temps, entry_tp_);
    EmitTracePointArmVIXL(masm_, entry_tp_, TraceKind::kEntry, m, &entry_);
  }

  void EmitExit() override {
    vixl::aarch32::UseScratchRegisterScope temps(masm_);
    Exclude(&temps, exit_tp_);
    EmitTracePointArmVIXL(masm_, exit_tp_, TraceKind::kExit, vixl::aarch32::r0, &exit_);
  }

  void EmitOutOfLine(size_t exit_cfa_adjustment) override {
    vixl::aarch32::UseScratchRegisterScope temps(masm_);
    Exclude(&temps, entry_tp_);
    Exclude(&temps, exit_tp_);
    EmitTracePointOutOfLineArmVIXL(masm_, entry_tp_, TraceKind::kEntry, &entry_);
    jni_asm_->cfi().AdjustCFAOffset(static_cast<int>(exit_cfa_adjustment));
    EmitTracePointOutOfLineArmVIXL(masm_, exit_tp_, TraceKind::kExit, &exit_);
    jni_asm_->cfi().AdjustCFAOffset(-static_cast<int>(exit_cfa_adjustment));
  }

 private:
  static TracePointArmVIXL MakeTracePoint(ArrayRef<const ManagedRegister> callee_save_scratch) {
    DCHECK_GE(callee_save_scratch.size(), 3u);
    // The lowest-numbered register holds the cursor: CBZ takes only r0-r7.
    vixl::aarch32::Register t[3] = {
        vixl::aarch32::Register(callee_save_scratch[0].AsArm().AsCoreRegister()),
        vixl::aarch32::Register(callee_save_scratch[1].AsArm().AsCoreRegister()),
        vixl::aarch32::Register(callee_save_scratch[2].AsArm().AsCoreRegister())};
    std::sort(t, t + 3, [](vixl::aarch32::Register a, vixl::aarch32::Register b) {
      return a.GetCode() < b.GetCode();
    });
    return TracePointArmVIXL{
        JniThreadOffsets<PointerSize::k32>(), arm::tr, t[0], t[1], t[2], TracePointOptions()};
  }

  static void Exclude(vixl::aarch32::UseScratchRegisterScope* temps, const TracePointArmVIXL& tp) {
    temps->Exclude(tp.cursor, tp.lo, tp.hi);
  }

  arm::ArmVIXLJNIMacroAssembler* const jni_asm_;
  arm::ArmVIXLMacroAssembler* const masm_;
  const TracePointArmVIXL entry_tp_;
  const TracePointArmVIXL exit_tp_;
  TraceLabelsArmVIXL entry_;
  TraceLabelsArmVIXL exit_;
};

#endif  // ART_ENABLE_CODEGEN_arm

#ifdef ART_ENABLE_CODEGEN_x86_64

// x86_64: RDTSC writes RAX and RDX (RDTSCP also RCX); a stub has no register allocator, so the
// trace points take fixed registers and keep what is live in the counter's registers around
// them (two or three MOVs, executed with tracing off too: a stub's transitions cost far more).
// Entry (managed ABI: ArtMethod* in RDI, arguments in RSI, RDX, RCX, R8, R9, XMM0-7; RAX holds
// nothing): the cursor in RBX and RDX (RCX) kept in R12 (R13), managed callee-saves that
// BuildFrame spilled and that the stub has not used yet. Exit (return value in RAX or XMM0): the
// cursor in R8 and RAX kept in RSI, argument registers that are never return registers (RDX and
// RCX are such too).
class JniTracePointsX86_64 final : public JniTracePoints {
 public:
  explicit JniTracePointsX86_64(x86_64::X86_64JNIMacroAssembler* jni_asm)
      : jni_asm_(jni_asm),
        asm_(jni_asm->GetAssembler()),
        entry_tp_{JniThreadOffsets<PointerSize::k64>(),
                  x86_64::CpuRegister(x86_64::RBX),
                  TracePointOptions()},
        exit_tp_{JniThreadOffsets<PointerSize::k64>(),
                 x86_64::CpuRegister(x86_64::R8),
                 TracePointOptions()},
        method_(x86_64::RDI) {}

  void EmitEntry(ManagedRegister method) override {
    method_ = method.AsX86_64().AsCpuRegister().AsRegister();
    DCHECK(!CounterClobbersX86_64(entry_tp_.options, method_));
    DCHECK_NE(method_, entry_tp_.cursor.AsRegister());
    const bool rcx = CounterClobbersX86_64(entry_tp_.options, x86_64::RCX);
    asm_->movq(kSaveRdx, x86_64::CpuRegister(x86_64::RDX));
    if (rcx) {
      asm_->movq(kSaveRcx, x86_64::CpuRegister(x86_64::RCX));
    }
    // Any width: the stub is shared by every native method with its shorty and flags.
    EmitTracePointX86_64(
        asm_, entry_tp_, TraceKind::kEntry, x86_64::CpuRegister(method_), &entry_);
    asm_->movq(x86_64::CpuRegister(x86_64::RDX), kSaveRdx);
    if (rcx) {
      asm_->movq(x86_64::CpuRegister(x86_64::RCX), kSaveRcx);
    }
  }

  void EmitExit() override {
    asm_->movq(kSaveRax, x86_64::CpuRegister(x86_64::RAX));
    EmitTracePointX86_64(
        asm_, exit_tp_, TraceKind::kExit, x86_64::CpuRegister(x86_64::RDI), &exit_);
    asm_->movq(x86_64::CpuRegister(x86_64::RAX), kSaveRax);
  }

  void EmitOutOfLine(size_t exit_cfa_adjustment) override {
    EmitTracePointOutOfLineX86_64(
        asm_, entry_tp_, TraceKind::kEntry, x86_64::CpuRegister(method_), &entry_);
    jni_asm_->cfi().AdjustCFAOffset(static_cast<int>(exit_cfa_adjustment));
    EmitTracePointOutOfLineX86_64(
        asm_, exit_tp_, TraceKind::kExit, x86_64::CpuRegister(x86_64::RDI), &exit_);
    jni_asm_->cfi().AdjustCFAOffset(-static_cast<int>(exit_cfa_adjustment));
  }

 private:
  const x86_64::CpuRegister kSaveRdx{x86_64::R12};
  const x86_64::CpuRegister kSaveRcx{x86_64::R13};
  const x86_64::CpuRegister kSaveRax{x86_64::RSI};

  x86_64::X86_64JNIMacroAssembler* const jni_asm_;
  x86_64::X86_64Assembler* const asm_;
  const TracePointX86_64 entry_tp_;
  const TracePointX86_64 exit_tp_;
  x86_64::Register method_;  // CpuRegister is not assignable
  TraceLabelsX86_64 entry_;
  TraceLabelsX86_64 exit_;
};

#endif  // ART_ENABLE_CODEGEN_x86_64

#ifdef ART_ENABLE_CODEGEN_x86

// x86: RDTSC writes EAX and EDX (RDTSCP also ECX). Entry (managed ABI: ArtMethod* in EAX,
// arguments in ECX, EDX, EBX, XMM0-3): the three managed callee-saves BuildFrame spilled, not
// yet in use, hold the cursor (EBP), a copy of the ArtMethod* (ESI) and EDX (EDI); ECX goes to
// XMM7 for RDTSCP (XMM4-7 carry no argument). Exit (return value in EAX, EDX:EAX or XMM0; the
// callee-saves now hold the JNI environment and cookie): the cursor in EBX (an argument register,
// never a return register), EAX and EDX kept in XMM6 and XMM7 (caller-saved everywhere, and the
// native code has just clobbered them anyway).
class JniTracePointsX86 final : public JniTracePoints {
 public:
  explicit JniTracePointsX86(x86::X86JNIMacroAssembler* jni_asm)
      : jni_asm_(jni_asm),
        asm_(jni_asm->GetAssembler()),
        entry_tp_{JniThreadOffsets<PointerSize::k32>(), x86::EBP, TracePointOptions()},
        exit_tp_{JniThreadOffsets<PointerSize::k32>(), x86::EBX, TracePointOptions()} {}

  void EmitEntry(ManagedRegister method) override {
    const x86::Register m = method.AsX86().AsCpuRegister();
    const bool ecx = CounterClobbersX86(entry_tp_.options, x86::ECX);
    DCHECK(m != x86::EBP && m != x86::ESI && m != x86::EDI);
    asm_->movl(x86::ESI, m);
    asm_->movl(x86::EDI, x86::EDX);
    if (ecx) {
      asm_->movd(x86::XMM7, x86::ECX);
    }
    EmitTracePointX86(asm_, entry_tp_, TraceKind::kEntry, x86::ESI, &entry_);
    if (m != x86::ESI) {
      asm_->movl(m, x86::ESI);
    }
    asm_->movl(x86::EDX, x86::EDI);
    if (ecx) {
      asm_->movd(x86::ECX, x86::XMM7);
    }
  }

  void EmitExit() override {
    asm_->movd(x86::XMM6, x86::EAX);
    asm_->movd(x86::XMM7, x86::EDX);
    EmitTracePointX86(asm_, exit_tp_, TraceKind::kExit, x86::EAX, &exit_);
    asm_->movd(x86::EAX, x86::XMM6);
    asm_->movd(x86::EDX, x86::XMM7);
  }

  void EmitOutOfLine(size_t exit_cfa_adjustment) override {
    EmitTracePointOutOfLineX86(asm_, entry_tp_, &entry_);
    jni_asm_->cfi().AdjustCFAOffset(static_cast<int>(exit_cfa_adjustment));
    EmitTracePointOutOfLineX86(asm_, exit_tp_, &exit_);
    jni_asm_->cfi().AdjustCFAOffset(-static_cast<int>(exit_cfa_adjustment));
  }

 private:
  x86::X86JNIMacroAssembler* const jni_asm_;
  x86::X86Assembler* const asm_;
  const TracePointX86 entry_tp_;
  const TracePointX86 exit_tp_;
  TraceLabelsX86 entry_;
  TraceLabelsX86 exit_;
};

#endif  // ART_ENABLE_CODEGEN_x86

template <PointerSize kPointerSize>
static std::unique_ptr<JniTracePoints> Create(JNIMacroAssembler<kPointerSize>* jni_asm,
                                              const CompilerOptions& compiler_options,
                                              const JniCallingConvention& jni_conv ATTRIBUTE_UNUSED,
                                              bool is_critical_native) {
  if (!kUseHubble || is_critical_native) {
    return nullptr;
  }
  InstructionSet isa ATTRIBUTE_UNUSED = compiler_options.GetInstructionSet();
  if constexpr (kPointerSize == PointerSize::k64) {
#ifdef ART_ENABLE_CODEGEN_arm64
    if (isa == InstructionSet::kArm64) {
      return std::make_unique<JniTracePointsArm64>(
          down_cast<arm64::Arm64JNIMacroAssembler*>(jni_asm));
    }
#endif
#ifdef ART_ENABLE_CODEGEN_x86_64
    if (isa == InstructionSet::kX86_64) {
      return std::make_unique<JniTracePointsX86_64>(
          down_cast<x86_64::X86_64JNIMacroAssembler*>(jni_asm));
    }
#endif
  } else {
#ifdef ART_ENABLE_CODEGEN_arm
    if (isa == InstructionSet::kArm || isa == InstructionSet::kThumb2) {
      return std::make_unique<JniTracePointsArm>(
          down_cast<arm::ArmVIXLJNIMacroAssembler*>(jni_asm), jni_conv);
    }
#endif
#ifdef ART_ENABLE_CODEGEN_x86
    if (isa == InstructionSet::kX86) {
      return std::make_unique<JniTracePointsX86>(down_cast<x86::X86JNIMacroAssembler*>(jni_asm));
    }
#endif
  }
  return nullptr;
}

std::unique_ptr<JniTracePoints> CreateJniTracePoints(JNIMacroAssembler<PointerSize::k32>* jni_asm,
                                                     const CompilerOptions& compiler_options,
                                                     const JniCallingConvention& jni_conv,
                                                     bool is_critical_native) {
  return Create(jni_asm, compiler_options, jni_conv, is_critical_native);
}

std::unique_ptr<JniTracePoints> CreateJniTracePoints(JNIMacroAssembler<PointerSize::k64>* jni_asm,
                                                     const CompilerOptions& compiler_options,
                                                     const JniCallingConvention& jni_conv,
                                                     bool is_critical_native) {
  return Create(jni_asm, compiler_options, jni_conv, is_critical_native);
}

}  // namespace hubble
}  // namespace art
