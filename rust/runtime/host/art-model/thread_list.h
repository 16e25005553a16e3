// Model of ThreadList::Resume (runtime/thread_list.cc 838-878 at android-14.0.0_r15).
#ifndef HUBBLE_ART_MODEL_THREAD_LIST_H_
#define HUBBLE_ART_MODEL_THREAD_LIST_H_

#include "base/logging.h"
#include "base/mutex.h"
#include "base/systrace.h"
#include "thread.h"

namespace art {

class ThreadList {
 public:
  bool Resume(Thread* thread, SuspendReason reason) {
    // This assumes there was an ATraceBegin when we suspended the thread.
    ATraceEnd();                                                   // 839-840
    Thread* self = Thread::Current();                              // 842
    {
      MutexLock mu(self, *Locks::thread_list_lock_);               // 848
      MutexLock mu2(self, *Locks::thread_suspend_count_lock_);     // 850
      if (!thread->IsSuspended()) {                                // 851-855
        LOG(ERROR) << "Resume(" << thread << ") thread not suspended";
        return false;
      }
      // 856-862: Contains(thread) — every thread of the model is in the list.
      if (!thread->ModifySuspendCount(self, -1, nullptr, reason)) {  // 863-867
        LOG(ERROR) << "Resume(" << thread << ") could not modify suspend count.";
        return false;
      }
    }
    {
      MutexLock mu(self, *Locks::thread_suspend_count_lock_);      // 872
      Thread::resume_cond_->Broadcast(self);                       // 873
    }
    return true;                                                   // 877
  }
};

}  // namespace art

#endif  // HUBBLE_ART_MODEL_THREAD_LIST_H_
