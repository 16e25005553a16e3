// Host driver: runs the real emitters (art-patches/files/compiler/optimizing/hubble_*) against
// Debian's libvixl and hands the bytes to Rust. No sequence is written here except Nanoscope's
// published A64 entry (the comparison point of docs/performance.md).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "hubble_trace_point_arm64.h"
#include "hubble_trace_point_arm_vixl.h"

using art::hubble::ThreadOffsets;
using art::hubble::TraceKind;

namespace {

// Layout of every blob: [inline half][terminator][out-of-line half]. Execution starts at 0 and
// ends when the pc reaches the terminator (BRK / BKPT under unicorn, RET / BX LR when called).
struct BlobInfo {
  uint32_t size;
  uint32_t terminator;   // offset of the terminator instruction
  uint32_t out_of_line;  // offset of the out-of-line half
};

ThreadOffsets Offsets(const int32_t* o) { return ThreadOffsets{o[0], o[1], o[2], o[3], o[4]}; }

// Finalizes the blob in `masm` and copies it to `out`: 0, or -1 if it is larger than `cap`.
template <typename MacroAssembler>
int Finish(MacroAssembler* masm, uint8_t* out, size_t cap, BlobInfo* info) {
  masm->FinalizeCode();
  info->size = static_cast<uint32_t>(masm->GetSizeOfCodeGenerated());
  if (info->size > cap) return -1;
  std::memcpy(out, masm->GetBuffer()->template GetStartAddress<uint8_t*>(), info->size);
  return 0;
}

// The A64 terminator after the inline half (0: BRK #0, 1: RET), where the out-of-line half
// begins.
void TerminateA64(vixl::aarch64::MacroAssembler* masm, int terminator, BlobInfo* info) {
  info->terminator = static_cast<uint32_t>(masm->GetCursorOffset());
  if (terminator == 0) {
    masm->Brk(0);
  } else {
    masm->Ret();
  }
  info->out_of_line = static_cast<uint32_t>(masm->GetCursorOffset());
}

}  // namespace

extern "C" {

// kind: 0 entry, 1 entry known < 4 GiB, 2 exit. terminator: 0 BRK #0, 1 RET.
int hubble_emit_a64(int kind, int method_reg, int isb, int terminator, const int32_t* offsets,
                    uint8_t* out, size_t cap, BlobInfo* info) {
  using namespace vixl::aarch64;
  MacroAssembler masm;
  art::hubble::TracePointArm64 tp = art::hubble::DefaultTracePointArm64(Offsets(offsets));
  tp.options.isb_before_counter = isb != 0;
  art::hubble::TraceLabelsArm64 labels;
  const TraceKind k = static_cast<TraceKind>(kind);
  const Register method = XRegister(method_reg);
  art::hubble::EmitTracePointArm64(&masm, tp, k, method, &labels);
  TerminateA64(&masm, terminator, info);
  art::hubble::EmitTracePointOutOfLineArm64(&masm, tp, k, method, &labels);
  return Finish(&masm, out, cap, info);
}

// The compiler's choice of entry kind (compiler/optimizing/hubble_trace_point.h EntryKindFor):
// origin 0 = JIT, 1 = AOT; method 0 = not known. Returns the TraceKind code.
int hubble_entry_kind_for(int origin, uint64_t method) {
  return static_cast<int>(art::hubble::EntryKindFor(
      origin == 0 ? art::hubble::CodeOrigin::kJit : art::hubble::CodeOrigin::kAot, method));
}

// temps: cursor, lo, hi register codes. terminator: 0 BKPT #0, 1 BX LR.
int hubble_emit_t32(int kind, int method_reg, const int32_t* temps, int isb, int terminator,
                    const int32_t* offsets, uint8_t* out, size_t cap, BlobInfo* info) {
  using namespace vixl::aarch32;
  MacroAssembler masm(T32);
  art::hubble::TracePointArmVIXL tp{Offsets(offsets), r9, Register(temps[0]), Register(temps[1]),
                                    Register(temps[2]), art::hubble::TracePointOptions()};
  tp.options.isb_before_counter = isb != 0;
  art::hubble::TraceLabelsArmVIXL labels;
  const TraceKind k = static_cast<TraceKind>(kind);
  art::hubble::EmitTracePointArmVIXL(&masm, tp, k, Register(method_reg), &labels);
  info->terminator = static_cast<uint32_t>(masm.GetCursorOffset());
  if (terminator == 0) {
    masm.Bkpt(0);
  } else {
    masm.Bx(lr);
  }
  info->out_of_line = static_cast<uint32_t>(masm.GetCursorOffset());
  art::hubble::EmitTracePointOutOfLineArmVIXL(&masm, tp, k, &labels);
  return Finish(&masm, out, cap, info);
}

// Nanoscope's A64 entry, transcribed from its wiki (Architecture: Nanoscope ROM), encoded with
// the same VIXL so that both are measured the same way. It has no wrap and no stop check.
int hubble_emit_nanoscope_a64(int terminator, int32_t data_ptr_offset, uint8_t* out, size_t cap,
                              BlobInfo* info) {
  using namespace vixl::aarch64;
  MacroAssembler masm;
  Label done;
  {
    vixl::ExactAssemblyScope scope(&masm, 7 * kInstructionSize, vixl::ExactAssemblyScope::kMaximumSize);
    masm.ldr(x16, MemOperand(x19, data_ptr_offset));  // LDR data_ptr, [TR, data_ptr_offset]
    masm.cbz(x16, &done);                             // CBZ data_ptr, done
    masm.mrs(x17, static_cast<SystemRegister>(SystemRegisterEncoder<3, 3, 14, 0, 2>::value));
    masm.str(x0, MemOperand(x16, 8, PostIndex));      // STR MR, [data_ptr], +8
    masm.str(x17, MemOperand(x16, 8, PostIndex));     // STR timestamp, [data_ptr], +8
    masm.str(x16, MemOperand(x19, data_ptr_offset));  // STR data_ptr, [TR, data_ptr_offset]
    masm.bind(&done);
  }
  TerminateA64(&masm, terminator, info);
  return Finish(&masm, out, cap, info);
}

}  // extern "C"
