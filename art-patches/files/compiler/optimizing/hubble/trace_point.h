/*
 * Hubble for AOSP: what every trace-point emitter shares (docs/architecture.md, docs/hot-path.md).
 *
 * This header depends on nothing from ART so that the same emitter sources compile inside ART
 * and on a host against Debian's libvixl-dev (rust/hotpath-emu).
 */
#ifndef ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_H_
#define ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_H_

#include <cstdint>

namespace art {
namespace hubble {

// Byte offsets of the per-thread block (Thread::tlsPtr_.hubble_*) from the thread register.
// `limit` must directly follow `cursor` (one LDP / LDRD loads both).
struct ThreadOffsets {
  int32_t cursor;
  int32_t limit;
  int32_t stop;
  int32_t begin;
  int32_t end;
};

enum class TraceKind : uint8_t {
  kEntry,        // method entry, ArtMethod* of any width (64-bit: one or two slots)
  kEntryNarrow,  // method entry, ArtMethod* known at compile time to be below 4 GiB (one slot)
  kExit,         // method exit (one slot, lo = 0)
};

// Build-time option: an ISB before the generic-timer read, so the read is not performed
// ahead of earlier instructions (the one buggy CPU Hubble met needed it). Off by default.
#ifndef ART_HUBBLE_ISB_BEFORE_COUNTER
#define ART_HUBBLE_ISB_BEFORE_COUNTER 0
#endif

struct TracePointOptions {
  bool isb_before_counter = ART_HUBBLE_ISB_BEFORE_COUNTER != 0;
};

// Slot markers (lower 32 bits); see docs/architecture.md "Slot encoding".
static constexpr uint32_t kSlotExit = 0u;
static constexpr uint32_t kSlotWideEntry = 1u;
static constexpr uint32_t kSlotPad = 2u;

}  // namespace hubble
}  // namespace art

#endif  // ART_COMPILER_OPTIMIZING_HUBBLE_TRACE_POINT_H_
