// Model of the parts of runtime/base/mutex.h and base/locks.h that thread_state.cc and the
// modelled Thread functions use: Mutex with an owner (for AssertHeld), MutexLock, ConditionVariable
// bound to a Mutex, and the two global locks of the suspend protocol. Lock levels are not
// modelled (the order the code takes them in is the same as ART's: thread_list_lock_ then
// thread_suspend_count_lock_, thread_list.cc 848-850).
#ifndef HUBBLE_ART_MODEL_BASE_MUTEX_H_
#define HUBBLE_ART_MODEL_BASE_MUTEX_H_

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "base/logging.h"

#define REQUIRES(...)
#define REQUIRES_SHARED(...)

namespace art {

class Thread;

class Mutex {
 public:
  explicit Mutex(const char* name) : name_(name) {}
  void ExclusiveLock(Thread* self) {
    mu_.lock();
    owner_.store(self);
  }
  void ExclusiveUnlock(Thread*) {
    owner_.store(nullptr);
    mu_.unlock();
  }
  void AssertHeld(Thread* self) const {
    DCHECK(owner_.load() == self) << name_ << " not held";
  }
  bool IsExclusiveHeld(Thread* self) const { return owner_.load() == self; }

 private:
  friend class ConditionVariable;
  const char* name_;
  std::mutex mu_;
  std::atomic<Thread*> owner_{nullptr};
};

class MutexLock {
 public:
  MutexLock(Thread* self, Mutex& mu) : self_(self), mu_(mu) { mu_.ExclusiveLock(self_); }
  ~MutexLock() { mu_.ExclusiveUnlock(self_); }

 private:
  Thread* const self_;
  Mutex& mu_;
};

// runtime/base/mutex.h ConditionVariable: Wait releases and re-acquires the guarding Mutex.
class ConditionVariable {
 public:
  ConditionVariable(const char*, Mutex& guard) : guard_(guard) {}
  void Wait(Thread* self) {
    std::unique_lock<std::mutex> l(guard_.mu_, std::adopt_lock);
    guard_.owner_.store(nullptr);
    cv_.wait(l);
    guard_.owner_.store(self);
    l.release();
  }
  void Broadcast(Thread* self) {
    guard_.AssertHeld(self);
    cv_.notify_all();
  }

 private:
  Mutex& guard_;
  std::condition_variable cv_;
};

// base/locks.h 265 and 357.
struct Locks {
  static Mutex* thread_list_lock_;
  static Mutex* thread_suspend_count_lock_;
};

}  // namespace art

#endif  // HUBBLE_ART_MODEL_BASE_MUTEX_H_
