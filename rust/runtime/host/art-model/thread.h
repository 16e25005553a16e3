// Model of art::Thread (runtime/thread.h, thread-inl.h, thread.cc at android-14.0.0_r15) reduced
// to the suspend protocol and the checkpoints that Hubble's stops rely on. Each function follows
// ART's source; the line numbers are of art/ at that tag. Left out: empty checkpoints, suspend
// barriers, user-code suspension, thread flips, the mutator lock's share (nothing here runs
// managed code), implicit suspend checks' signal path (CheckSuspend is called directly), and the
// packing of state and flags into one word: separate atomics here, and where ART's CAS on the
// whole word makes a check and a change atomic, the model makes both under
// thread_suspend_count_lock_, which every change of a request also holds.
#ifndef HUBBLE_ART_MODEL_THREAD_H_
#define HUBBLE_ART_MODEL_THREAD_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>

#include "base/logging.h"
#include "base/mutex.h"
#include "thread_pool.h"

namespace art {

// runtime/thread_state.h 28: kRunnable is 0; the suspended states are the rest.
enum class ThreadState : uint8_t { kRunnable = 0, kNative, kSuspended, kWaitingPerformingGc };

// runtime/suspend_reason.h 25-31.
enum class SuspendReason : char { kInternal, kForUserCode };

using AtomicInteger = std::atomic<int32_t>;

class ThreadList;

class Thread {
 public:
  // Not ART's layout: the host double's Thread* points here, and BlockAddress returns this
  // (the real block is at Thread::HubbleCursorOffset, checked by art-build --touched).
  uintptr_t hubble_block[5] = {0, 0, 0, 0, 0};

  explicit Thread(ThreadState state) : state_(state) {}

  // thread.h Current(): the calling OS thread's Thread (created on first use here).
  static Thread* Current();

  ThreadState GetState() const { return state_.load(std::memory_order_relaxed); }

  // thread.h 323-327.
  bool IsSuspended() const {
    return GetState() != ThreadState::kRunnable &&
           suspend_request_.load(std::memory_order_relaxed);
  }

  int GetSuspendCount() const { return suspend_count_; }

  // thread-inl.h 454-486: with read barriers (every Android 14 GC) and another thread, the
  // internal function is retried until it succeeds; it only fails for barriers and flips, which
  // are not modelled, so one call is the same.
  bool ModifySuspendCount(Thread* self, int delta, AtomicInteger* suspend_barrier,
                          SuspendReason reason) {
    return ModifySuspendCountInternal(self, delta, suspend_barrier, reason);
  }

  // thread-inl.h 268-284 via TransitionToSuspendedAndRunCheckpoints 223-266: pending checkpoints
  // run first (228-231), then the state changes with a CAS that fails if a checkpoint was
  // requested meanwhile (the model: the check and the change under the lock that requests
  // hold); a pending suspend request does not block this direction.
  void TransitionFromRunnableToSuspended(ThreadState new_state) {
    DCHECK(GetState() == ThreadState::kRunnable);
    while (true) {
      if (checkpoint_request_.load(std::memory_order_relaxed)) {
        RunCheckpointFunction();
        continue;
      }
      MutexLock mu(this, *Locks::thread_suspend_count_lock_);
      if (checkpoint_request_.load(std::memory_order_relaxed)) {
        continue;
      }
      state_.store(new_state, std::memory_order_release);
      return;
    }
  }

  // thread-inl.h 286-347: without a suspend request, CAS the state to runnable (304-312); with
  // one, wait on resume_cond_ under thread_suspend_count_lock_ until it is gone (323-347), then
  // try again. ART's CAS on the combined state-and-flags word succeeds only with no request set,
  // and requests change only under thread_suspend_count_lock_; doing the whole transition under
  // that lock has the same outcomes.
  void TransitionFromSuspendedToRunnable() {
    DCHECK(GetState() != ThreadState::kRunnable);
    MutexLock mu(this, *Locks::thread_suspend_count_lock_);
    while (suspend_request_.load(std::memory_order_relaxed)) {
      waiting_.fetch_add(1);
      resume_cond_->Wait(this);  // 340-346
      waiting_.fetch_sub(1);
    }
    DCHECK(GetSuspendCount() == 0);  // 347
    state_.store(ThreadState::kRunnable, std::memory_order_release);
  }

  // thread-inl.h 76-97 (CheckSuspend) and thread.cc 1928-1940 (FullSuspendCheck): a runnable
  // thread that sees a suspend request transitions to suspended and back, waiting while the
  // request stands.
  // (ART DCHECKs that `this` is the calling thread; the tests call it on the thread that plays
  // this Thread, which the model does not bind to Current().)
  // A requested checkpoint runs first (thread-inl.h 82-83), as often as one is pending.
  void CheckSuspend() {
    while (true) {
      if (checkpoint_request_.load(std::memory_order_relaxed)) {
        RunCheckpointFunction();
      } else if (suspend_request_.load(std::memory_order_relaxed)) {
        TransitionFromRunnableToSuspended(ThreadState::kSuspended);
        TransitionFromSuspendedToRunnable();
      } else {
        return;
      }
    }
  }

  // thread.cc 1658-1681: only a runnable thread takes a checkpoint (it runs it itself); the
  // flag is set with a CAS that fails if the state changed (the model: under the lock).
  bool RequestCheckpoint(Closure* function) {
    Locks::thread_suspend_count_lock_->AssertHeld(Current());
    if (GetState() != ThreadState::kRunnable) {
      return false;
    }
    checkpoint_request_.store(true, std::memory_order_seq_cst);
    if (checkpoint_function_ == nullptr) {
      checkpoint_function_ = function;
    } else {
      checkpoint_overflow_.push_back(function);
    }
    return true;
  }

  // thread.cc 1608-1648 (the flip-function part left out): takes the next checkpoint under the
  // lock, clearing the flag with the last, and runs it outside the lock.
  void RunCheckpointFunction() {
    Closure* checkpoint;
    {
      MutexLock mu(this, *Locks::thread_suspend_count_lock_);
      checkpoint = checkpoint_function_;
      if (!checkpoint_overflow_.empty()) {
        checkpoint_function_ = checkpoint_overflow_.front();
        checkpoint_overflow_.pop_front();
      } else {
        checkpoint_function_ = nullptr;
        checkpoint_request_.store(false, std::memory_order_seq_cst);
      }
    }
    DCHECK(checkpoint != nullptr) << "Checkpoint flag set without pending checkpoint";
    checkpoint->Run(this);
  }

  // Checkpoints requested and not run yet (for tests).
  size_t PendingCheckpoints() {
    MutexLock mu(Current(), *Locks::thread_suspend_count_lock_);
    return (checkpoint_function_ != nullptr ? 1 : 0) + checkpoint_overflow_.size();
  }

  // Threads waiting in TransitionFromSuspendedToRunnable (for tests).
  int Waiting() const { return waiting_.load(); }

  // thread.h 1756 (private in ART: only Thread and its friends, ThreadList among them, use it).
  static ConditionVariable* resume_cond_;

 private:
  // thread.cc 1475-1541, minus user-code counts, barriers and flips (see the file comment).
  bool ModifySuspendCountInternal(Thread* self, int delta, AtomicInteger*, SuspendReason) {
    DCHECK(delta == -1 || delta == +1) << delta;                 // 1480-1481
    Locks::thread_suspend_count_lock_->AssertHeld(self);          // 1482
    if (this != self && !IsSuspended()) {                         // 1483-1485
      Locks::thread_list_lock_->AssertHeld(self);
    }
    if (delta < 0 && suspend_count_ <= 0) {                       // 1496-1499
      LOG(FATAL) << "UnsafeLogFatalForSuspendCount: suspend count " << suspend_count_;
      return false;
    }
    suspend_count_ += delta;                                       // 1524
    if (suspend_count_ == 0) {                                     // 1533-1539
      suspend_request_.store(false, std::memory_order_seq_cst);
    } else {
      suspend_request_.store(true, std::memory_order_seq_cst);
    }
    return true;                                                   // 1540
  }

  std::atomic<ThreadState> state_;
  std::atomic<bool> suspend_request_{false};  // ThreadFlag::kSuspendRequest
  int suspend_count_ = 0;                     // tls32_.suspend_count, under the lock
  std::atomic<int> waiting_{0};
  std::atomic<bool> checkpoint_request_{false};  // ThreadFlag::kCheckpointRequest
  Closure* checkpoint_function_ = nullptr;       // tlsPtr_.checkpoint_function, under the lock
  std::list<Closure*> checkpoint_overflow_;      // under the lock

  friend class ThreadList;
};

}  // namespace art

#endif  // HUBBLE_ART_MODEL_THREAD_H_
