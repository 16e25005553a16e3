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
 * Hubble for AOSP: the A64 trace point (runtime/hubble/README.md).
 *
 * Two halves: EmitTracePointArm64 emits the inline part at the trace point;
 * EmitTracePointOutOfLineArm64 emits the rare part (two-slot entry, wrap, stop) wherever the
 * caller keeps out-of-line code (ART: a SlowPathCode). Only VIXL is used, so the same source
 * builds in ART and on the host (Hubble's host harness).
 */
#ifndef ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_ARM64_H_
#define ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_ARM64_H_

#include "hubble_trace_point.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include "aarch64/macro-assembler-aarch64.h"
#pragma GCC diagnostic pop

namespace art {
namespace hubble {

struct TracePointArm64 {
  ThreadOffsets offsets;
  vixl::aarch64::Register tr;       // thread register (ART: x19)
  vixl::aarch64::Register cursor;   // scratch, clobbered (ART: IP0 = x16)
  vixl::aarch64::Register scratch;  // scratch, clobbered (ART: IP1 = x17)
  TracePointOptions options;
};

// Labels shared by the two halves. The inline half binds `done`; the out-of-line half binds
// `out_of_line` and `resume` (and its own local labels) and branches back to `done`.
struct TraceLabelsArm64 {
  vixl::aarch64::Label out_of_line;
  vixl::aarch64::Label resume;
  vixl::aarch64::Label done;
};

// `method` holds the ArtMethod* for kEntry / kEntryNarrow (ART: x0 at entry); ignored for kExit.
// Clobbers `cursor`, `scratch` and NZCV; every other register is preserved.
void EmitTracePointArm64(vixl::aarch64::MacroAssembler* masm,
                         const TracePointArm64& tp,
                         TraceKind kind,
                         vixl::aarch64::Register method,
                         TraceLabelsArm64* labels);

void EmitTracePointOutOfLineArm64(vixl::aarch64::MacroAssembler* masm,
                                  const TracePointArm64& tp,
                                  TraceKind kind,
                                  vixl::aarch64::Register method,
                                  TraceLabelsArm64* labels);

// The default register assignment of ART's arm64 back end.
TracePointArm64 DefaultTracePointArm64(const ThreadOffsets& offsets);

}  // namespace hubble
}  // namespace art

#endif  // ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_ARM64_H_
