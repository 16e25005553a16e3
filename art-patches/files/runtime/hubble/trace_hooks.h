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
 * Hubble for AOSP: where ART's C++ code writes trace points (runtime/hubble/README.md).
 *
 * The glue between art::Thread and the ART-independent trace point (trace_point.h): the block
 * is found exactly as compiled code finds it, at Thread::HubbleCursorOffset() from the Thread*.
 * Every function is inline, lock-free and allocation-free; with tracing off each costs one load
 * and one branch. Building with ART_HUBBLE_TRACING=0 compiles every trace point out.
 */
#ifndef ART_RUNTIME_HUBBLE_TRACE_HOOKS_H_
#define ART_RUNTIME_HUBBLE_TRACE_HOOKS_H_

#include <cstdint>

#include "arch/instruction_set.h"
#include "art_method.h"
#include "base/macros.h"
#include "hubble/trace_point.h"
#include "interpreter/shadow_frame.h"
#include "oat_quick_method_header.h"
#include "thread.h"

#ifndef ART_HUBBLE_TRACING
#define ART_HUBBLE_TRACING 1
#endif

namespace art {
namespace hubble {

ALWAYS_INLINE inline uintptr_t* BlockOf(Thread* self) {
  static_assert(Thread::HubbleLimitOffset<kRuntimePointerSize>().Int32Value() ==
                    Thread::HubbleCursorOffset<kRuntimePointerSize>().Int32Value() +
                        static_cast<int32_t>(sizeof(uintptr_t)) * tp::kLimit,
                "Hubble block order: cursor, limit");
  static_assert(Thread::HubbleStopOffset<kRuntimePointerSize>().Int32Value() ==
                    Thread::HubbleCursorOffset<kRuntimePointerSize>().Int32Value() +
                        static_cast<int32_t>(sizeof(uintptr_t)) * tp::kStop,
                "Hubble block order: stop");
  static_assert(Thread::HubbleBeginOffset<kRuntimePointerSize>().Int32Value() ==
                    Thread::HubbleCursorOffset<kRuntimePointerSize>().Int32Value() +
                        static_cast<int32_t>(sizeof(uintptr_t)) * tp::kBegin,
                "Hubble block order: begin");
  static_assert(Thread::HubbleEndOffset<kRuntimePointerSize>().Int32Value() ==
                    Thread::HubbleCursorOffset<kRuntimePointerSize>().Int32Value() +
                        static_cast<int32_t>(sizeof(uintptr_t)) * tp::kEnd,
                "Hubble block order: end");
  return reinterpret_cast<uintptr_t*>(reinterpret_cast<uint8_t*>(self) +
                                      Thread::HubbleCursorOffset<kRuntimePointerSize>().Int32Value());
}

// ART's tid field, which the pool path of the trace point writes into each block header.
ALWAYS_INLINE inline const uint32_t* TidOf(Thread* self) {
  return reinterpret_cast<const uint32_t*>(reinterpret_cast<uint8_t*>(self) +
                                           Thread::TidOffset<kRuntimePointerSize>().Int32Value());
}

// A method starts executing in the switch interpreter (interpreter.cc, Execute, not when
// resuming a deoptimized frame) or a native method is entered through the generic JNI path.
ALWAYS_INLINE inline void TraceEntry(Thread* self, ArtMethod* method) {
  if (ART_HUBBLE_TRACING) {
    tp::Entry<uintptr_t>(BlockOf(self), reinterpret_cast<uintptr_t>(method), TidOf(self));
  }
}

// A traced frame ends: normal return, unwound by an exception, or a native method returned.
ALWAYS_INLINE inline void TraceExit(Thread* self) {
  if (ART_HUBBLE_TRACING) {
    tp::Exit<uintptr_t>(BlockOf(self), TidOf(self));
  }
}

// A switch-interpreter frame ends (normal return or exception): its exit unless it was marked as
// already recorded (OSR: the compiled OSR code wrote it) or never entered (a deoptimized frame of
// an inlined callee: inlined methods are not traced).
ALWAYS_INLINE inline void TraceInterpretedExit(Thread* self, const ShadowFrame& frame) {
  if (ART_HUBBLE_TRACING && LIKELY(!frame.GetHubbleNoExitRecord())) {
    TraceExit(self);
  }
}

// EnterInterpreterFromDeoptimize drops a deoptimized frame without running it again: an exception
// is pending and the frame has no handler for it, so Execute, which writes the exit of every frame
// it runs, is not called. The frame's exit, if its entry was traced (compiled code or nterp wrote
// it before the frame was deoptimized), as Execute would have written it.
ALWAYS_INLINE inline void TraceDeoptimizedFrameUnwound(Thread* self, const ShadowFrame& frame) {
  TraceInterpretedExit(self, frame);
}

constexpr tp::Isa ToHubbleIsa(InstructionSet isa) {
  switch (isa) {
    case InstructionSet::kArm64:
      return tp::Isa::kArm64;
    case InstructionSet::kArm:
    case InstructionSet::kThumb2:
      return tp::Isa::kArm;
    case InstructionSet::kX86_64:
      return tp::Isa::kX86_64;
    case InstructionSet::kX86:
      return tp::Isa::kX86;
    default:
      return tp::Isa::kRiscv64;
  }
}

constexpr tp::Isa kHubbleIsa = ToHubbleIsa(kRuntimeISA);

// Nterp is about to replace its frame with OSR code (NterpHotMethod returns OsrData): the frame's
// exit, where that code writes none (tp::NterpOsrEndsFrame: an ISA whose nterp traces and whose
// compiled code does not; none today, every ISA with nterp trace points has an emitter).
ALWAYS_INLINE inline void TraceNterpFrameReplacedByOsr(Thread* self) {
  if (ART_HUBBLE_TRACING && tp::NterpOsrEndsFrame(kHubbleIsa)) {
    TraceExit(self);
  }
}

// Whether compiled code of this process writes trace points (OSR: whether the OSR code traced
// the exit of the frame it took over).
constexpr bool kCompiledCodeTraced = tp::CompiledCodeTraced(kHubbleIsa);

// OSR code is about to finish a switch-interpreter frame (jit.cc MaybeDoOnStackReplacement, once
// it has OSR code for the frame's dex pc; the frame is not OSR'd again after that). Where compiled
// code traces, the OSR code writes that frame's exit: its HTraceExit at the return, the unwinder's
// exit if an exception leaves it, the interpreter's if it deoptimizes again. So the interpreter
// must not write it too, and a frame whose entry was never traced (a deoptimized inlined callee:
// inlined methods are not traced) gets its entry now, from where the OSR code takes over, so that
// the exit closes an entry of the same method rather than its caller's. Where compiled code does
// not trace, the OSR code writes nothing and the frame's mark is left as the deoptimizer or the
// interpreter set it: the interpreter writes the exit if and only if the entry was traced.
ALWAYS_INLINE inline void TraceOsrTakesOver(Thread* self, ShadowFrame* frame) {
  if (ART_HUBBLE_TRACING && kCompiledCodeTraced) {
    if (frame->GetHubbleNoExitRecord()) {
      TraceEntry(self, frame->GetMethod());
    }
    frame->SetHubbleNoExitRecord(true);
  }
}

// Whether the quick frame being visited (compiled code or nterp; `header` may be null for a
// frame without one) wrote its entry: then whoever pops it writes its exit.
ALWAYS_INLINE inline bool QuickFrameTracedItsEntry(const OatQuickMethodHeader* header,
                                                   bool is_inlined) {
  tp::QuickFrameKind kind = header != nullptr && header->IsNterpMethodHeader()
      ? tp::QuickFrameKind::kNterp
      : tp::QuickFrameKind::kCompiled;
  return tp::QuickFrameTracedItsEntry(kHubbleIsa, kind, is_inlined);
}

// The exception unwinder pops a quick frame (compiled code or nterp) that gets no chance to run
// its own exit trace point: its exit, if it wrote an entry. Native frames record their exit on the
// JNI return path before the exception is delivered (the generic JNI trampoline; compiled JNI
// stubs on every ISA with an emitter: arm64, arm, x86_64, x86) or were never entered
// (@CriticalNative, riscv64 stubs).
ALWAYS_INLINE inline void TraceUnwoundQuickFrame(Thread* self,
                                                 ArtMethod* method,
                                                 const OatQuickMethodHeader* header,
                                                 bool is_inlined) {
  if (ART_HUBBLE_TRACING && !method->IsNative() && QuickFrameTracedItsEntry(header, is_inlined)) {
    TraceExit(self);
  }
}

}  // namespace hubble
}  // namespace art

#endif  // ART_RUNTIME_HUBBLE_TRACE_HOOKS_H_
