// Model of libartbase/arch/instruction_set.h (ART 14, lines 29-38 and 41-52): the enum, and
// kRuntimeISA chosen by the test (HUBBLE_MODEL_ISA) instead of the host's predefined macros, so
// that one host builds the hooks as each ISA's libart would.
#ifndef HUBBLE_ART_MODEL_ARCH_INSTRUCTION_SET_H_
#define HUBBLE_ART_MODEL_ARCH_INSTRUCTION_SET_H_

namespace art {

enum class InstructionSet { kNone, kArm, kArm64, kThumb2, kRiscv64, kX86, kX86_64, kLast = kX86_64 };

#ifndef HUBBLE_MODEL_ISA
#error "HUBBLE_MODEL_ISA (kArm, kArm64, kX86, kX86_64) must be defined"
#endif
static constexpr InstructionSet kRuntimeISA = InstructionSet::HUBBLE_MODEL_ISA;

}  // namespace art

#endif  // HUBBLE_ART_MODEL_ARCH_INSTRUCTION_SET_H_
