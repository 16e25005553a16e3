// The main job's many-thread scene (proving/main-job/src/tasks/): the runtime side of a task record,
// built natively and loaded into the main job with the block-end function (pool_x86_64.S).
//
// On a device the task record comes from a runtime entrypoint (docs/tasks.md, "How the runtime
// writes them": artHubbleTask computes the identity hashes, then calls tp::Task). That
// entrypoint's last step is this header's tp::Task, compiled here unchanged against the same
// Thread words as the emitted trace points, so that the record goes through the trace point's
// own slow path: stop, stale limit and, in many-thread mode, the pool's next block.
//
// Returns the cursor after the call (0: nothing written, the thread stopped or had no block).
#include <cstdint>

#include "runtime/hubble/trace_point.h"

extern "C" uint64_t hubble_main_job_task(uint64_t* block, uint32_t kind, uint32_t task,
                                         uint32_t queue, const uint32_t* tid) {
  namespace tp = art::hubble::tp;
  tp::Task<uint64_t>(block, static_cast<tp::TaskKind>(kind), task, queue, tid);
  return __atomic_load_n(&block[tp::kCursor], __ATOMIC_RELAXED);
}
