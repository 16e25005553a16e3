// Model of Runtime::Current()->GetThreadList() (runtime/runtime.h).
#ifndef HUBBLE_ART_MODEL_RUNTIME_H_
#define HUBBLE_ART_MODEL_RUNTIME_H_

#include "thread_list.h"

namespace art {

class Runtime {
 public:
  static Runtime* Current();
  ThreadList* GetThreadList() { return &thread_list_; }

 private:
  ThreadList thread_list_;
};

}  // namespace art

#endif  // HUBBLE_ART_MODEL_RUNTIME_H_
