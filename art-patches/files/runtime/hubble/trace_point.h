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
 * Hubble for AOSP: the trace point in C++, for the parts of ART that are not compiled code
 * (the switch interpreter, the exception unwinder, the generic JNI path).
 *
 * It is the traced-side algorithm (runtime/hubble/README.md), line for line
 * the same as the hand-written A64/T32 sequences of art/compiler/optimizing/hubble_trace_point_*.cc and the
 * nterp macros (runtime/hubble/nterp_*.S), writing the same slots
 * (Hubble's hubble_format::RingWriter is the reference; its host harness checks slot for slot).
 *
 * This header depends on nothing from ART (only <cstdint>/<atomic>) so that the very same code
 * compiles on the host against a fake per-thread block (Hubble's host harness). The ART
 * glue that finds the block inside art::Thread is runtime/hubble/trace_hooks.h.
 *
 * Memory order (runtime/hubble/README.md, Hubble §6):
 *  - fast path: the block words are read and the cursor written with RELAXED atomics (plain
 *    LDR/STR on arm/arm64, MOV on x86_64: the same instructions as the compiled code; atomics
 *    only so that the C++ compiler neither tears, fuses nor invents these accesses, which is
 *    the undefined behaviour Hubble §5.2 warns about for plain C++). Slots are plain stores.
 *  - slow path: an ACQUIRE fence first (DMB ISHLD on arm64), so that the stop/limit/begin/end
 *    read next are at least as new as the limit the fast path acted on; a stop is honoured by
 *    clearing the cursor and then RELEASE-storing the end position into `stop` (STLR): the
 *    control thread that acquires `stop` > 1 sees every slot written before it and cursor = 0.
 *    Clearing the cursor before the publication (as the A64 emitter does) means a restart by the
 *    control thread, which can only follow the publication, is never undone by our clear.
 */
#ifndef ART_RUNTIME_HUBBLE_TRACE_POINT_H_
#define ART_RUNTIME_HUBBLE_TRACE_POINT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace art {
namespace hubble {
namespace tp {

// Word index of each field in the per-thread block (Thread::tlsPtr_.hubble_*), in this order.
enum BlockWord : size_t {
  kCursor = 0,  // Hubble "start": next slot, 0 = off
  kLimit = 1,   // end - 8 (64-bit mode) / end (32-bit mode); 0 = stop doorbell
  kStop = 2,    // 0 running, 1 stop requested, else the end position published
  kBegin = 3,   // first slot of the ring
  kEnd = 4,     // one past the last slot
  kBlockWords = 5,
};

// Lower-32-bit markers (slot encoding: runtime/hubble/README.md).
constexpr uint32_t kMarkExit = 0u;
constexpr uint32_t kMarkWideEntry = 1u;
constexpr uint32_t kMarkPad = 2u;
constexpr uint32_t kMarkStart = 3u;
constexpr uint32_t kMarkTask = 4u;

// A task record's kind (hubble_format::slot::TaskKind in Hubble): the method just entered
// put a task in its queue, began running it (until this frame returns, or until the task's kEnd
// record on this thread), or finished running it.
enum class TaskKind : uint32_t { kSubmit = 0, kBegin = 1, kBeginUntilEnd = 2, kEnd = 3 };
// Identities are ART's identity hash codes (LockWord::kHashSize = 28 bits).
constexpr uint32_t kIdentityMask = (1u << 28) - 1;

// The generic timer, read directly as the compiled code does.
//  - arm64: MRS CNTVCT_EL0 (the A64 emitter's instruction).
//  - arm:   MRRC p15, 1, <lo>, <hi>, c14 (CNTVCT; the T32 emitter's instruction).
//  - x86_64 / x86 (host builds and the x86 emulators; there is no generic timer): RDTSC, which
//    nterp's x86_64 and x86 macros and the compiled code's trace points (0015) also use, so
//    every trace point of one process reads one clock. The runtime crate reads the same counter
//    for the flush's reference value (hubble::ReadCounter) and calibrates its frequency against
//    CLOCK_MONOTONIC (invariant TSC on every x86_64 CPU that runs Android's x86 and x86_64
//    emulators and cuttlefish).
struct GenericTimer {
  static inline uint64_t Read() {
#if defined(__aarch64__)
    uint64_t t;
#if defined(ART_HUBBLE_ISB_BEFORE_COUNTER) && ART_HUBBLE_ISB_BEFORE_COUNTER
    asm volatile("isb" ::: "memory");
#endif
    asm volatile("mrs %0, cntvct_el0" : "=r"(t));
    return t;
#elif defined(__arm__)
    uint64_t t;
#if defined(ART_HUBBLE_ISB_BEFORE_COUNTER) && ART_HUBBLE_ISB_BEFORE_COUNTER
    asm volatile("isb" ::: "memory");
#endif
    asm volatile("mrrc p15, 1, %Q0, %R0, c14" : "=r"(t));
    return t;
#elif defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
#error "Hubble: no counter for this ISA"
#endif
  }
};

template <typename Word>
inline Word Load(Word* w) {
  return __atomic_load_n(w, __ATOMIC_RELAXED);
}
template <typename Word>
inline void Store(Word* w, Word v) {
  __atomic_store_n(w, v, __ATOMIC_RELAXED);
}

inline void WriteSlot(uintptr_t at, uint64_t value) {
  *reinterpret_cast<uint64_t*>(at) = value;
}

inline uint64_t Pack(uint32_t ts, uint32_t lo) {
  return (static_cast<uint64_t>(ts) << 32) | lo;
}

}  // namespace tp
}  // namespace hubble
}  // namespace art

#include "pool_take.h"  // uses Load/Store above

namespace art {
namespace hubble {
namespace tp {

// The out-of-line part: stop request, stale limit, wrap, or (many-thread mode, bit 0 of begin)
// the pool's next block. Returns the cursor to write at, or 0 when nothing may be written
// (tracing stopped here, or no block was free). `Word` is the pointer-sized word of the block:
// uint64_t in 64-bit mode, uint32_t in 32-bit mode; `tid` is ART's Thread::tls32_.tid, read
// only by the pool path.
template <typename Word, typename Clock>
__attribute__((noinline, cold)) Word SlowPath(Word* block, Word cursor, const uint32_t* tid) {
  std::atomic_thread_fence(std::memory_order_acquire);  // DMB ISHLD
  if (Load(&block[kStop]) != 0) {
    Store(&block[kCursor], Word{0});                    // tracing off
    __atomic_store_n(&block[kStop], cursor, __ATOMIC_RELEASE);  // STLR: publish the end
    return 0;
  }
  if (cursor < Load(&block[kLimit])) {
    return cursor;  // the first load saw a stale limit: carry on
  }
  if ((Load(&block[kBegin]) & 1) != 0) {
    return PoolTake<Word, Clock>(block, tid);
  }
  if (sizeof(Word) == 8 && cursor != Load(&block[kEnd])) {
    WriteSlot(static_cast<uintptr_t>(cursor), Pack(0, kMarkPad));  // at most one slot left
  }
  return Load(&block[kBegin]);
}

// The stop answered at a suspend check, for a thread that runs managed code without reaching a
// trace point (a loop with no calls): a checkpoint closure (thread_state.cc) runs this on the
// thread itself, between two of its instructions, never inside a trace point, so it may do what
// SlowPath does on the doorbell. Nothing when tracing is off or no stop is asked: the request may
// be served after a trace point answered it and tracing restarted.
template <typename Word>
inline void AnswerStopAtSuspendCheck(Word* block) {
  const Word cursor = Load(&block[kCursor]);
  if (cursor == 0) {
    return;
  }
  std::atomic_thread_fence(std::memory_order_acquire);  // as SlowPath: stop is as new as cursor
  if (Load(&block[kStop]) == 0) {
    return;
  }
  Store(&block[kCursor], Word{0});
  __atomic_store_n(&block[kStop], cursor, __ATOMIC_RELEASE);
}

// Method entry. `method` is the ArtMethod* (never 0..3); `tid` as for SlowPath.
template <typename Word, typename Clock = GenericTimer>
inline void Entry(Word* block, Word method, const uint32_t* tid) {
  Word cursor = Load(&block[kCursor]);
  if (cursor == 0) {
    return;  // OFF: one load, one branch
  }
  if (cursor >= Load(&block[kLimit])) {
    cursor = SlowPath<Word, Clock>(block, cursor, tid);
    if (cursor == 0) {
      return;
    }
  }
  const uint32_t ts = static_cast<uint32_t>(Clock::Read());
  const uint64_t m = static_cast<uint64_t>(method);
  if (sizeof(Word) == 8 && (m >> 32) != 0) {
    // Two slots: full pointer, then ts | 1. limit = end - 8 guarantees 16 bytes here.
    WriteSlot(static_cast<uintptr_t>(cursor), m);
    WriteSlot(static_cast<uintptr_t>(cursor) + 8, Pack(ts, kMarkWideEntry));
    Store(&block[kCursor], static_cast<Word>(cursor + 16));
  } else {
    WriteSlot(static_cast<uintptr_t>(cursor), Pack(ts, static_cast<uint32_t>(m)));
    Store(&block[kCursor], static_cast<Word>(cursor + 8));
  }
}

// Method exit (normal return or unwound by an exception).
template <typename Word, typename Clock = GenericTimer>
inline void Exit(Word* block, const uint32_t* tid) {
  Word cursor = Load(&block[kCursor]);
  if (cursor == 0) {
    return;
  }
  if (cursor >= Load(&block[kLimit])) {
    cursor = SlowPath<Word, Clock>(block, cursor, tid);
    if (cursor == 0) {
      return;
    }
  }
  const uint32_t ts = static_cast<uint32_t>(Clock::Read());
  WriteSlot(static_cast<uintptr_t>(cursor), Pack(ts, kMarkExit));
  Store(&block[kCursor], static_cast<Word>(cursor + 8));
}

// A task record (runtime/hubble/README.md): the payload (queue identity above;
// below, the task identity << 4 and the kind's two bits in bits 1 and 3: bits 0 and 2 stay
// clear, so read forwards it is never a marker), then ts | 4. Two slots in both modes, written
// right after the entry of the method it describes, by the hook that knows the task and queue
// objects; never on the fast path of any other method. In 32-bit mode the limit is the end, so
// a record that would end past it first pads the one slot left, as a 64-bit wrap does
// (hubble_format's RingWriter and PoolWriter::task are the reference).
template <typename Word, typename Clock = GenericTimer>
inline void Task(Word* block, TaskKind kind, uint32_t task, uint32_t queue, const uint32_t* tid) {
  Word cursor = Load(&block[kCursor]);
  if (cursor == 0) {
    return;
  }
  // Twice at most: a slow path that found the limit stale (the doorbell's 0 read first) hands
  // the cursor back, which in 32-bit mode may have one slot left to pad.
  for (int pass = 0; pass < 2; ++pass) {
    if (sizeof(Word) == 4) {
      const Word limit = Load(&block[kLimit]);
      if (cursor < limit && limit - cursor <= 8) {
        WriteSlot(static_cast<uintptr_t>(cursor), Pack(0, kMarkPad));
        cursor += 8;
        Store(&block[kCursor], cursor);  // a stop taken next publishes the pad with the window
      }
    }
    if (cursor < Load(&block[kLimit])) {
      break;
    }
    cursor = SlowPath<Word, Clock>(block, cursor, tid);
    if (cursor == 0) {
      return;
    }
  }
  const uint32_t ts = static_cast<uint32_t>(Clock::Read());
  const uint32_t code = static_cast<uint32_t>(kind);
  const uint32_t lo = ((task & kIdentityMask) << 4) | ((code & 1u) << 1) | ((code >> 1) << 3);
  WriteSlot(static_cast<uintptr_t>(cursor), Pack(queue & kIdentityMask, lo));
  WriteSlot(static_cast<uintptr_t>(cursor) + 8, Pack(ts, kMarkTask));
  Store(&block[kCursor], static_cast<Word>(cursor + 16));
}

// The counter the trace points read (for the control plane's reference value at flush).
inline uint64_t ReadCounter() { return GenericTimer::Read(); }

// Which code writes its own trace points, per ISA: compiled code and compiled JNI stubs where
// the compiler has emitters (0012, 0013, 0015, 0025: arm64, arm, x86_64 and x86), nterp where
// its macros are patched in (0023: arm64ng, armng, x86_64ng, x86ng; Hubble's host harness
// holds this against the series). The C++ paths that write an exit for a frame they did not
// enter (the unwinder, a deoptimized frame's interpreter exit, OSR) ask here, so that no ISA
// gets an exit without an entry.
enum class Isa { kArm, kArm64, kX86, kX86_64, kRiscv64 };
enum class QuickFrameKind { kCompiled, kNterp };

constexpr bool CompiledCodeTraced(Isa isa) {
  return isa == Isa::kArm64 || isa == Isa::kArm || isa == Isa::kX86_64 || isa == Isa::kX86;
}

constexpr bool NterpTraced(Isa isa) {
  return isa == Isa::kArm64 || isa == Isa::kArm || isa == Isa::kX86_64 || isa == Isa::kX86;
}

// Whether a quick frame wrote its entry: inlined callees never do (they have no frame of their
// own), native frames are handled on their JNI paths.
constexpr bool QuickFrameTracedItsEntry(Isa isa, QuickFrameKind kind, bool is_inlined) {
  return !is_inlined &&
         (kind == QuickFrameKind::kNterp ? NterpTraced(isa) : CompiledCodeTraced(isa));
}

// OSR from nterp replaces a frame that nterp entered with OSR code. Where compiled code is
// untraced, that code writes no exit, so the frame's trace ends when nterp hands it over
// (NterpHotMethod, 0026): the rest of the method's time counts to its caller, and its callees,
// nested until then, become its siblings. Balanced, if coarser.
constexpr bool NterpOsrEndsFrame(Isa isa) { return NterpTraced(isa) && !CompiledCodeTraced(isa); }

}  // namespace tp
}  // namespace hubble
}  // namespace art

#endif  // ART_RUNTIME_HUBBLE_TRACE_POINT_H_
