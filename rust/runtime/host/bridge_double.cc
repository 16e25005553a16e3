// Host test double of ART for the cxx bridge (art/runtime/hubble/hubble_bridge.h).
//
// A "Thread*" is an art::Thread of the ART model in art-model/ (created by
// hubble_double_new_thread), whose first member is the five-word block. The force stop's lock is
// the real art/runtime/hubble/thread_state.cc compiled against that model, whose suspend protocol
// follows ART 14's source line by line (art-model/thread.h, thread_list.h). The rest (names,
// loader methods, clocks) is a plain double.
#include "hubble/hubble_bridge.h"

#include <cstdio>
#include <ctime>
#include <string>

#include "base/systrace.h"
#include "thread.h"

namespace {

uint64_t Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

art::Thread* T(size_t thread) { return reinterpret_cast<art::Thread*>(thread); }

}  // namespace

extern "C" {
// A Thread of the ART model (art-model/thread.h), runnable as a new attached thread would be.
size_t hubble_double_new_thread() {
  return reinterpret_cast<size_t>(new art::Thread(art::ThreadState::kRunnable));
}
void hubble_double_free_thread(size_t t) { delete T(t); }
// The thread's own transitions, through the model of ART's: to native never waits; to runnable
// waits while a suspend request stands. Idempotent.
void hubble_double_set_runnable(size_t t, bool runnable) {
  art::Thread* thread = T(t);
  bool is_runnable = thread->GetState() == art::ThreadState::kRunnable;
  if (runnable && !is_runnable) {
    thread->TransitionFromSuspendedToRunnable();
  } else if (!runnable && is_runnable) {
    thread->TransitionFromRunnableToSuspended(art::ThreadState::kNative);
  }
}
// A suspend check of the (runnable) thread: runs pending checkpoints, parks while a suspend
// request stands.
void hubble_double_suspend_check(size_t t) { T(t)->CheckSuspend(); }
size_t hubble_double_pending_checkpoints(size_t t) { return T(t)->PendingCheckpoints(); }
int hubble_double_suspend_count(size_t t) {
  art::MutexLock mu(art::Thread::Current(), *art::Locks::thread_suspend_count_lock_);
  return T(t)->GetSuspendCount();
}
int hubble_double_waiting(size_t t) { return T(t)->Waiting(); }
// The calling thread's open atrace sections.
int hubble_double_atrace_depth() { return art::model::gATraceDepth; }
// Test rescue after a detected leak: lowers the count to 0 and wakes the thread, so that the
// failing test can report instead of hanging.
void hubble_double_release(size_t t) {
  art::Thread* self = art::Thread::Current();
  art::MutexLock list(self, *art::Locks::thread_list_lock_);
  art::MutexLock mu(self, *art::Locks::thread_suspend_count_lock_);
  while (T(t)->GetSuspendCount() > 0) {
    T(t)->ModifySuspendCount(self, -1, nullptr, art::SuspendReason::kInternal);
  }
  art::Thread::resume_cond_->Broadcast(self);
}
// Method "names" of the double: "m<hex pointer>".
}

namespace art {
namespace hubble {

size_t BlockAddress(size_t thread) { return reinterpret_cast<size_t>(&T(thread)->hubble_block[0]); }

// ThreadIsRunnable, LockThreadState, UnlockThreadState, RequestStopCheckpoint: the real
// thread_state.cc, compiled against art-model/ (build.rs).

void ResolveDyingMethods(rust::Slice<const uint64_t> methods, rust::Vec<rust::String>& out) {
  char buf[32];
  for (uint64_t m : methods) {
    std::snprintf(buf, sizeof(buf), "m%llx", static_cast<unsigned long long>(m));
    out.push_back(rust::String(buf));
  }
}

// The double never unloads: the generation stays 0 (tests/control.rs drives unloading through
// the Rust fake, which models the lock and the generation).
uint64_t UnloadGeneration() { return 0; }

bool ResolveMethods(rust::Slice<const uint64_t> methods, uint64_t generation,
                    rust::Vec<rust::String>& out) {
  if (generation != UnloadGeneration()) return false;
  ResolveDyingMethods(methods, out);
  return true;
}

// The double's loader L owns the methods L+8, L+16, ..., L+8*8.
void LoaderMethods(size_t loader, rust::Vec<uint64_t>& out) {
  for (uint64_t i = 1; i <= 8; ++i) out.push_back(loader + 8 * i);
}

uint64_t ReadTimer() { return Now(CLOCK_MONOTONIC); }
uint64_t TimerHz() { return 1000000000u; }
uint64_t WallClockNs() { return Now(CLOCK_REALTIME); }
// The host's C++ double has no compiled code calling a block-end function: no pool path.
uint64_t PoolTakeEntry() { return 0; }
// No framework here: none of the task methods of runtime/hubble/task_methods.h exists.
size_t StartTaskRecords() { return 0; }
bool AttachCurrentThread(rust::Str) { return true; }
void DetachCurrentThread() {}

}  // namespace hubble
}  // namespace art
