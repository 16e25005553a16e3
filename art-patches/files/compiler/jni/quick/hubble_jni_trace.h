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
 * Hubble for AOSP: trace points in compiled JNI stubs.
 *
 * A native method reached through a compiled stub (boot image and app AOT stubs, JIT-compiled
 * stubs) never runs the generic JNI trampoline, so the stub itself records the entry and the
 * exit, with the same A64, T32, x86_64 and x86 sequences as compiled managed code. Both trace
 * points run while the thread is Runnable: the entry before the transition to Native, the exit
 * after the one back. A thread in Native never writes its ring, which is what lets the control
 * thread force-stop it under the thread-state lock (Hubble §6).
 */
#ifndef ART_COMPILER_JNI_QUICK_HUBBLE_JNI_TRACE_H_
#define ART_COMPILER_JNI_QUICK_HUBBLE_JNI_TRACE_H_

#include <memory>

#include "base/enums.h"
#include "base/macros.h"
#include "utils/jni_macro_assembler.h"
#include "utils/managed_register.h"

namespace art HIDDEN {

class CompilerOptions;
class JniCallingConvention;

namespace hubble {

class JniTracePoints {
 public:
  virtual ~JniTracePoints() {}

  // The inline half of the entry. `method` holds the ArtMethod* (the managed method register,
  // still intact after BuildFrame); the stub's callee-save scratch registers must be free.
  virtual void EmitEntry(ManagedRegister method) = 0;

  // The inline half of the exit, after the return value is in the managed return register.
  // Only non-return argument registers (and IP0/IP1, LR) are clobbered.
  virtual void EmitExit() = 0;

  // Both out-of-line halves (two-slot entry, wrap, stop), with the stub's other slow paths.
  // They never call and never move SP. `exit_cfa_adjustment` is what the stub's frame has
  // beyond the managed frame at the exit point (the outgoing argument area).
  virtual void EmitOutOfLine(size_t exit_cfa_adjustment) = 0;
};

// nullptr when the stub gets no trace points: Hubble compiled out, an ISA without an emitter
// (riscv64, as its code generator), or @CriticalNative (no managed
// frame, no thread transition; compiled callers call those natives directly).
std::unique_ptr<JniTracePoints> CreateJniTracePoints(JNIMacroAssembler<PointerSize::k32>* jni_asm,
                                                     const CompilerOptions& compiler_options,
                                                     const JniCallingConvention& jni_conv,
                                                     bool is_critical_native);
std::unique_ptr<JniTracePoints> CreateJniTracePoints(JNIMacroAssembler<PointerSize::k64>* jni_asm,
                                                     const CompilerOptions& compiler_options,
                                                     const JniCallingConvention& jni_conv,
                                                     bool is_critical_native);

}  // namespace hubble
}  // namespace art

#endif  // ART_COMPILER_JNI_QUICK_HUBBLE_JNI_TRACE_H_
