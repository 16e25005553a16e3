/*
 * Hubble for AOSP: trace points in compiled JNI stubs. See hubble_jni_trace.h for where they go
 * and docs/art-runtime-integration.md §4 for why there.
 */
#include "hubble_jni_trace.h"

#include <algorithm>

#include "base/casts.h"
#include "calling_convention.h"
#include "driver/compiler_options.h"
#include "optimizing/hubble/hubble_options.h"
#include "optimizing/hubble/trace_point.h"
#include "thread.h"

#ifdef ART_ENABLE_CODEGEN_arm
#include "optimizing/hubble/trace_point_arm_vixl.h"
#include "utils/arm/jni_macro_assembler_arm_vixl.h"
#endif

#ifdef ART_ENABLE_CODEGEN_arm64
#include "optimizing/hubble/trace_point_arm64.h"
#include "utils/arm64/jni_macro_assembler_arm64.h"
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
  } else {
#ifdef ART_ENABLE_CODEGEN_arm
    if (isa == InstructionSet::kArm || isa == InstructionSet::kThumb2) {
      return std::make_unique<JniTracePointsArm>(
          down_cast<arm::ArmVIXLJNIMacroAssembler*>(jni_asm), jni_conv);
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
