// Model of runtime/thread.h (ART 14 with patch 0001): the Hubble block's offsets
// (HubbleCursorOffset() ... HubbleEndOffset(), in that order, one pointer apart: trace_hooks.h
// static_asserts it), ThreadOffset::Int32Value() (libartbase/base/offsets.h) and
// kRuntimePointerSize (libartbase/base/pointer_size.h / globals). The host is 64-bit, so the
// block's words are 64-bit whatever HUBBLE_MODEL_ISA says: the ISA selects which code traces,
// not the slot encoding (replay.rs covers the 32-bit mode). The model's thread state (pending
// exception, managed stack) lives in deopt_model.cc.
#ifndef HUBBLE_ART_MODEL_THREAD_H_
#define HUBBLE_ART_MODEL_THREAD_H_

#include <cstddef>
#include <cstdint>

namespace art {

enum class PointerSize : size_t { k32 = 4, k64 = 8 };
static constexpr PointerSize kRuntimePointerSize =
    sizeof(void*) == 8 ? PointerSize::k64 : PointerSize::k32;

template <PointerSize kPointerSize>
class ThreadOffset {
 public:
  explicit constexpr ThreadOffset(size_t v) : v_(v) {}
  constexpr int32_t Int32Value() const { return static_cast<int32_t>(v_); }

 private:
  size_t v_;
};

class Thread {
 public:
  // tlsPtr_.hubble_{cursor,limit,stop,begin,end}: first in this model, as first in tlsPtr_.
  uintptr_t hubble_block[5] = {0, 0, 0, 0, 0};
  // tls32_.tid: ART 14's runtime/thread.h 789-793 (TidOffset = OFFSETOF_MEMBER(Thread, tls32_) +
  // OFFSETOF_MEMBER(tls_32bit_sized_values, tid)), the field at 1819, after state_and_flags,
  // suspend_count and thin_lock_thread_id (1816): 12 (art-build --touched prints it into
  // thread-offsets.txt). Here only its value matters; the pool path reads it.
  uint32_t tid = 0;

  template <PointerSize kSize>
  static constexpr ThreadOffset<kSize> HubbleCursorOffset() {
    return ThreadOffset<kSize>(0);
  }
  template <PointerSize kSize>
  static constexpr ThreadOffset<kSize> HubbleLimitOffset() {
    return ThreadOffset<kSize>(sizeof(uintptr_t));
  }
  template <PointerSize kSize>
  static constexpr ThreadOffset<kSize> HubbleStopOffset() {
    return ThreadOffset<kSize>(2 * sizeof(uintptr_t));
  }
  template <PointerSize kSize>
  static constexpr ThreadOffset<kSize> HubbleBeginOffset() {
    return ThreadOffset<kSize>(3 * sizeof(uintptr_t));
  }
  template <PointerSize kSize>
  static constexpr ThreadOffset<kSize> HubbleEndOffset() {
    return ThreadOffset<kSize>(4 * sizeof(uintptr_t));
  }
  template <PointerSize kSize>
  static constexpr ThreadOffset<kSize> TidOffset() {
    return ThreadOffset<kSize>(5 * sizeof(uintptr_t));
  }
};

}  // namespace art

#endif  // HUBBLE_ART_MODEL_THREAD_H_
