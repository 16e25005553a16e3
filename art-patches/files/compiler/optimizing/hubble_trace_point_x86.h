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
 * Hubble for AOSP: the x86 (32-bit) trace point.
 *
 * 32-bit mode (runtime/hubble/README.md): every record is one slot (lo = ArtMethod* or 0, hi = the
 * counter's low 32 bits), limit = end, no pad, so entry and exit share the out-of-line half's
 * shape. Only ART's X86Assembler is used; Hubble's host proof links this
 * file with ART's assembler and runs the bytes as a 32-bit process.
 */
#ifndef ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_X86_H_
#define ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_X86_H_

#include "hubble_trace_point.h"
#include "utils/x86/assembler_x86.h"

namespace art HIDDEN {
namespace hubble {

// The Thread is reached through %fs (Thread::InitCpu, runtime/arch/x86/thread_x86.cc), as every
// Thread field in ART's x86 code. The counter read writes EAX and EDX (and ECX with
// X86Counter::kRdtscp): the code generator declares them as fixed temps.
struct TracePointX86 {
  ThreadOffsets offsets;
  x86::Register cursor;  // scratch, clobbered; not EAX, EDX (ECX with RDTSCP), the method
  TracePointOptions options;
};

// `resume` is bound by the inline half (the record's store) and jumped to by the out-of-line
// half after a stale-limit recheck or a wrap; `done` likewise.
struct TraceLabelsX86 {
  Label out_of_line;
  Label resume;
  Label done;
};

// `method` holds the ArtMethod* for an entry (any register but the clobbered ones); ignored for
// kExit. Clobbers `cursor`, EAX, EDX (ECX with RDTSCP) and the flags.
void EmitTracePointX86(x86::X86Assembler* assembler,
                       const TracePointX86& tp,
                       TraceKind kind,
                       x86::Register method,
                       TraceLabelsX86* labels);

void EmitTracePointOutOfLineX86(x86::X86Assembler* assembler,
                                const TracePointX86& tp,
                                TraceLabelsX86* labels);

// Whether `reg` is written by the trace point's counter read (EAX, EDX; ECX with RDTSCP).
bool CounterClobbersX86(const TracePointOptions& options, x86::Register reg);

}  // namespace hubble
}  // namespace art

#endif  // ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_X86_H_
