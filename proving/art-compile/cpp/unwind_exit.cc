// The exit an unwound compiled frame gets, written by the runtime's own trace point: patch 0021
// has CatchBlockStackVisitor call hubble::TraceUnwoundQuickFrame (runtime/hubble/trace_hooks.h),
// which for a compiled frame that wrote its entry calls TraceExit, i.e. tp::Exit on the thread's
// block (runtime/hubble/trace_point.h). This file compiles that trace_point.h unchanged for the
// harness (src/unwind.rs), which calls it once per frame its double of the unwinder pops,
// innermost first, on a copy of the emulated thread's block and ring (or pool).
#include <cstdint>

#include "hubble/trace_point.h"

namespace {

// The unwinder runs right after the throw: its exits carry the emulated counter value the
// harness read at the throw (the host's counter would be another clock in the same ring).
uint64_t g_now;

struct HarnessClock {
  static uint64_t Read() { return g_now; }
};

}  // namespace

// `tid` is the emulated thread's (Thread::tls32_.tid): in many-thread mode an exit at a block's
// end takes the next block through pool_take.h, which stamps it with the tid.
extern "C" void hubble_harness_unwind_exits64(uint64_t* block, uint32_t frames, uint64_t now,
                                              uint32_t tid) {
  g_now = now;
  for (uint32_t i = 0; i < frames; ++i) {
    art::hubble::tp::Exit<uint64_t, HarnessClock>(block, &tid);
  }
}

extern "C" void hubble_harness_unwind_exits32(uint32_t* block, uint32_t frames, uint64_t now,
                                              uint32_t tid) {
  g_now = now;
  for (uint32_t i = 0; i < frames; ++i) {
    art::hubble::tp::Exit<uint32_t, HarnessClock>(block, &tid);
  }
}
