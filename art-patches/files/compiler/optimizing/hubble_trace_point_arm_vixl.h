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
 * Hubble for AOSP: the T32 trace point (runtime/hubble/README.md). 32-bit mode: every record is one
 * slot. Same split as the A64 emitter: inline half + out-of-line half; VIXL only.
 */
#ifndef ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_ARM_VIXL_H_
#define ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_ARM_VIXL_H_

#include "hubble_trace_point.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#include "aarch32/macro-assembler-aarch32.h"
#pragma GCC diagnostic pop

namespace art {
namespace hubble {

struct TracePointArmVIXL {
  ThreadOffsets offsets;
  vixl::aarch32::Register tr;      // thread register (ART: r9)
  vixl::aarch32::Register cursor;  // three distinct temps from the register allocator;
  vixl::aarch32::Register lo;      // `cursor` gets CBZ when it is r0-r7
  vixl::aarch32::Register hi;
  TracePointOptions options;
};

struct TraceLabelsArmVIXL {
  vixl::aarch32::Label out_of_line;
  vixl::aarch32::Label resume;
  vixl::aarch32::Label done;
};

// kEntry and kEntryNarrow are the same in 32-bit mode. `method` is the ArtMethod* register
// (ART: r0 at entry). Clobbers the three temps and the flags.
void EmitTracePointArmVIXL(vixl::aarch32::MacroAssembler* masm,
                           const TracePointArmVIXL& tp,
                           TraceKind kind,
                           vixl::aarch32::Register method,
                           TraceLabelsArmVIXL* labels);

void EmitTracePointOutOfLineArmVIXL(vixl::aarch32::MacroAssembler* masm,
                                    const TracePointArmVIXL& tp,
                                    TraceKind kind,
                                    TraceLabelsArmVIXL* labels);

// The raw T32 encoding of MRRC p15, 1, <rt>, <rt2>, c14 (CNTVCT; VIXL has no MRRC).
uint32_t MrrcCntvctT32(vixl::aarch32::Register rt, vixl::aarch32::Register rt2);

}  // namespace hubble
}  // namespace art

#endif  // ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_ARM_VIXL_H_
