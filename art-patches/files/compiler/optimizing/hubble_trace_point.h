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
 * Hubble for AOSP: what every trace-point emitter shares (runtime/hubble/README.md).
 *
 * This header depends on nothing from ART so that the same emitter sources compile inside ART
 * and on a host against Debian's libvixl-dev (Hubble's host harness).
 */
#ifndef ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_H_
#define ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_H_

#include <cstdint>

namespace art {
namespace hubble {

// Byte offsets of the per-thread block (Thread::tlsPtr_.hubble_*) from the thread register.
// `limit` must directly follow `cursor` (one LDRD loads both on T32, one LDP in nterp's arm64
// macros; A64 compiled code loads them with two LDRs).
struct ThreadOffsets {
  int32_t cursor;
  int32_t limit;
  int32_t stop;
  int32_t begin;
  int32_t end;
};

enum class TraceKind : uint8_t {
  kEntry,        // method entry, ArtMethod* of any width (64-bit: one or two slots)
  kEntryNarrow,  // method entry, every ArtMethod* that can enter the code is below 4 GiB
  kExit,         // method exit (one slot, lo = 0)
};

// Who will run the code being compiled.
enum class CodeOrigin : uint8_t {
  kJit,  // JIT: installed as the entry point of the one method it was compiled for
  kAot,  // dex2oat: boot image, boot image extension or app oat file
};

// The entry kind of a method's code. The narrow form stores only the low 32 bits of x0, so it is
// right only if EVERY ArtMethod* that can enter the code fits 32 bits, not just the one being
// compiled. ART 14 enters AOT code with ArtMethods allocated at run time in a LinearAlloc that is
// not in the low 4 GiB outside dex2oat: ArtMethod::CopyFrom keeps an AOT entry point in copies:
// default and miranda methods copied into app classes, Proxy.<init> cloned into every proxy class
// (ClassLinker::CreateProxyConstructor); and boot classpath classes left out of the boot image get
// their ArtMethods from the runtime's LinearAlloc while running the boot oat file's code. JIT code
// is entered only with its own method: CopyFrom resets a JIT entry point in the copy, proxies get
// the proxy invoke handler (ClassLinker::CreateProxyMethod). So: narrow only for JIT code whose
// method is known and below 4 GiB.
constexpr TraceKind EntryKindFor(CodeOrigin origin, uint64_t method /* 0: not known */) {
  return origin == CodeOrigin::kJit && method != 0 && (method >> 32) == 0
      ? TraceKind::kEntryNarrow
      : TraceKind::kEntry;
}

// Build-time option: an ISB before the generic-timer read, so the read is not performed
// ahead of earlier instructions (the one buggy CPU Hubble met needed it). Off by default.
#ifndef ART_HUBBLE_ISB_BEFORE_COUNTER
#define ART_HUBBLE_ISB_BEFORE_COUNTER 0
#endif

// x86 and x86_64: how the time-stamp counter is read. RDTSC alone may execute before earlier
// instructions have completed, which only blurs a timestamp by the depth of the out-of-order
// window (tens of cycles) and never breaks the ring; LFENCE; RDTSC waits for them (Intel SDM
// vol. 2, RDTSC); RDTSCP waits for earlier instructions too and also writes ECX (IA32_TSC_AUX),
// one more clobbered register. The nterp macros (runtime/hubble/nterp_x86*.S) and
// runtime/hubble/trace_point.h use plain RDTSC: every trace point of a process reads one clock
// the same way.
enum class X86Counter : uint8_t {
  kRdtsc = 0,        // default
  kLfenceRdtsc = 1,  // LFENCE; RDTSC
  kRdtscp = 2,       // RDTSCP (clobbers ECX as well)
};

#ifndef ART_HUBBLE_X86_COUNTER
#define ART_HUBBLE_X86_COUNTER 0
#endif

struct TracePointOptions {
  bool isb_before_counter = ART_HUBBLE_ISB_BEFORE_COUNTER != 0;
  X86Counter x86_counter = static_cast<X86Counter>(ART_HUBBLE_X86_COUNTER);
};

// Slot markers (lower 32 bits); see runtime/hubble/README.md.
static constexpr uint32_t kSlotExit = 0u;
static constexpr uint32_t kSlotWideEntry = 1u;
static constexpr uint32_t kSlotPad = 2u;

// Many-thread mode (runtime/hubble/README.md): `begin` holds the pool's address | 1, and the pool
// header's slot 5 the address of the runtime's block-end function (runtime/hubble/pool_<isa>.S,
// hubble_format::pool::P_TAKE), which the out-of-line half calls when its block is full.
static constexpr int32_t kPoolTakeOffset = 5 * 8;

}  // namespace hubble
}  // namespace art

#endif  // ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_H_
