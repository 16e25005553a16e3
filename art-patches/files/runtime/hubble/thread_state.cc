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
 * Hubble for AOSP: the §6 force stop's "thread-state transition lock", and the checkpoint that
 * answers a stop for a thread that runs no trace point (hubble_bridge.h). Kept
 * apart from hubble_bridge.cc, with only these includes, so that the host tests compile this very
 * file against a model of the ART functions it calls (in Hubble's runtime crate, each function
 * following ART 14's source line by line with citations).
 *
 * The lock is a suspend request: a thread in a suspended state (native, waiting...) cannot turn
 * runnable while its suspend count is raised (TransitionFromSuspendedToRunnable waits on
 * Thread::resume_cond_). The control thread re-checks the state after taking it, and a thread
 * that turned runnable just before is left to answer the doorbell; the request must then be undone
 * although the thread is runnable. ThreadList::Resume cannot do that: it refuses a thread that is
 * not suspended (its IsSuspended() check) and keeps the count, so the thread parked at its next
 * suspend check for good (an ANR). UnlockThreadState therefore lowers the count itself when the
 * thread is runnable (no waiter can exist then), and leaves a suspended one to Resume, which also
 * wakes it (Thread::resume_cond_ is private to Thread and its friends).
 */
#include "hubble/hubble_bridge.h"

#include "base/logging.h"
#include "base/mutex.h"
#include "base/systrace.h"
#include "hubble/trace_point.h"
#include "runtime.h"
#include "thread-inl.h"
#include "thread.h"
#include "thread_list.h"
#include "thread_pool.h"  // Closure

namespace art {
namespace hubble {

namespace {

Thread* AsThread(size_t thread) { return reinterpret_cast<Thread*>(thread); }

// A thread spinning in managed code without calls reaches no trace point and never leaves the
// runnable state, so neither the doorbell nor the force stop reaches it; every flush of it (the
// ANR flush too) would wait for as long as it spins. Its loop's suspend checks do run: ART runs a
// requested checkpoint there, or before the thread next leaves the runnable state
// (Thread::RunCheckpointFunction, TransitionToSuspendedAndRunCheckpoints).
class AnswerStopClosure final : public Closure {
 public:
  void Run(Thread* self) override {
    tp::AnswerStopAtSuspendCheck(
        reinterpret_cast<uintptr_t*>(BlockAddress(reinterpret_cast<size_t>(self))));
  }
};

}  // namespace

bool ThreadIsRunnable(size_t thread) {
  return AsThread(thread)->GetState() == ThreadState::kRunnable;
}

bool LockThreadState(size_t thread) {
  Thread* self = Thread::Current();
  Thread* target = AsThread(thread);
  // thread_list_lock_ as ThreadList::Resume takes it: ModifySuspendCountInternal asserts it for
  // a target that is not suspended.
  MutexLock list(self, *Locks::thread_list_lock_);
  MutexLock count(self, *Locks::thread_suspend_count_lock_);
  // With read barriers or userfaultfd (every Android 14 GC) ModifySuspendCount retries until the
  // request is placed (Thread::ModifySuspendCount); otherwise it may refuse during a thread flip
  // (Thread::ModifySuspendCountInternal). A refused request is not a lock: the caller must not
  // force-stop.
  if (!target->ModifySuspendCount(self, +1, nullptr, SuspendReason::kInternal)) {
    return false;
  }
  // Ended by UnlockThreadState: directly, or by ThreadList::Resume, which assumes its caller
  // began one.
  ATraceBegin("hubble force stop");
  return true;
}

bool RequestStopCheckpoint(size_t thread) {
  // Stateless and never freed: a request may still be queued when its stop has long been answered
  // (the closure then does nothing).
  static AnswerStopClosure* const closure = new AnswerStopClosure();
  Thread* self = Thread::Current();
  MutexLock count(self, *Locks::thread_suspend_count_lock_);
  return AsThread(thread)->RequestCheckpoint(closure);
}

void UnlockThreadState(size_t thread) {
  Thread* self = Thread::Current();
  Thread* target = AsThread(thread);
  {
    MutexLock list(self, *Locks::thread_list_lock_);
    MutexLock count(self, *Locks::thread_suspend_count_lock_);
    if (!target->IsSuspended()) {
      // Runnable (our request is still set, Thread::IsSuspended): it cannot be waiting on
      // resume_cond_, which only a thread in a suspended state does, with this lock held, after
      // seeing the request (Thread::TransitionFromSuspendedToRunnable). Lowering the count clears
      // the request (Thread::ModifySuspendCountInternal); a thread about to wait re-checks the
      // flags under this lock first.
      bool lowered = target->ModifySuspendCount(self, -1, nullptr, SuspendReason::kInternal);
      DCHECK(lowered) << "hubble: no suspend request of ours to undo";
      ATraceEnd();  // Paired with LockThreadState's ATraceBegin.
      return;
    }
  }
  // Suspended with our request set: it may be waiting on resume_cond_ and cannot leave that state
  // while the request stands, so ThreadList::Resume (which lowers the count, broadcasts
  // Thread::resume_cond_ and ends the ATrace section) will not refuse it.
  if (!Runtime::Current()->GetThreadList()->Resume(target, SuspendReason::kInternal)) {
    LOG(ERROR) << "hubble: ThreadList::Resume refused a suspended thread";
  }
}

}  // namespace hubble
}  // namespace art
