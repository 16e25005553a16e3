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
 * Hubble for AOSP: the x86_64 trace point (runtime/hubble/README.md).
 *
 * Two halves, as on arm64: EmitTracePointX86_64 emits the inline part at the trace point;
 * EmitTracePointOutOfLineX86_64 emits the rare part (two-slot entry, wrap + pad, stop) wherever
 * the caller keeps out-of-line code (ART: a SlowPathCode). Only ART's X86_64Assembler is used;
 * Hubble's host proof links this file with ART's assembler and runs the
 * bytes natively.
 */
#ifndef ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_X86_64_H_
#define ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_X86_64_H_

#include "hubble_trace_point.h"
#include "utils/x86_64/assembler_x86_64.h"

namespace art HIDDEN {
namespace hubble {

// The Thread is reached through %gs (Thread::InitCpu, runtime/arch/x86_64/thread_x86_64.cc), as
// every Thread field in ART's x86_64 code. The counter read writes RAX and RDX (and RCX with
// X86Counter::kRdtscp): the code generator declares them as fixed temps, so the register
// allocator keeps nothing live in them across the trace point.
struct TracePointX86_64 {
  ThreadOffsets offsets;
  x86_64::CpuRegister cursor;  // scratch, clobbered; not RAX, RDX (RCX with RDTSCP), the method
  TracePointOptions options;
};

// Labels shared by the two halves. The inline half binds `done`; the out-of-line half binds
// `out_of_line` (ring full or stop doorbell), `wide` (kEntry: the pointer needs two slots) and
// its own local labels, and jumps back to `done`.
struct TraceLabelsX86_64 {
  Label out_of_line;
  Label wide;
  Label done;
};

// `method` holds the ArtMethod* for kEntry / kEntryNarrow (ART: RDI at entry); ignored for kExit.
// Clobbers `cursor`, RAX, RDX (RCX with RDTSCP) and the flags; every other register is preserved.
void EmitTracePointX86_64(x86_64::X86_64Assembler* assembler,
                          const TracePointX86_64& tp,
                          TraceKind kind,
                          x86_64::CpuRegister method,
                          TraceLabelsX86_64* labels);

void EmitTracePointOutOfLineX86_64(x86_64::X86_64Assembler* assembler,
                                   const TracePointX86_64& tp,
                                   TraceKind kind,
                                   x86_64::CpuRegister method,
                                   TraceLabelsX86_64* labels);

// Whether `reg` is written by the trace point's counter read (RAX, RDX; RCX with RDTSCP).
bool CounterClobbersX86_64(const TracePointOptions& options, x86_64::Register reg);

}  // namespace hubble
}  // namespace art

#endif  // ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_X86_64_H_
