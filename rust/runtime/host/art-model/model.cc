// Statics of the ART model (rust/runtime/host/art-model/).
#include "base/mutex.h"
#include "base/systrace.h"
#include "runtime.h"
#include "thread.h"

namespace art {
namespace model {
thread_local int gATraceDepth = 0;
}  // namespace model

Mutex* Locks::thread_list_lock_ = new Mutex("thread list lock");
Mutex* Locks::thread_suspend_count_lock_ = new Mutex("thread suspend count lock");
ConditionVariable* Thread::resume_cond_ =
    new ConditionVariable("Thread resumption condition variable",
                          *Locks::thread_suspend_count_lock_);

Thread* Thread::Current() {
  // The calling OS thread's Thread: a control thread of the tests gets one on first use.
  static thread_local Thread* self = new Thread(ThreadState::kNative);
  return self;
}

Runtime* Runtime::Current() {
  static Runtime* runtime = new Runtime();
  return runtime;
}

}  // namespace art
