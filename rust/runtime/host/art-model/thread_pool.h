// Model of art::Closure (runtime/thread_pool.h 37-41 at android-14.0.0_r15), the checkpoint
// function's type; the pool itself is not modelled.
#ifndef HUBBLE_ART_MODEL_THREAD_POOL_H_
#define HUBBLE_ART_MODEL_THREAD_POOL_H_

namespace art {

class Thread;

class Closure {
 public:
  virtual ~Closure() {}
  virtual void Run(Thread* self) = 0;
};

}  // namespace art

#endif  // HUBBLE_ART_MODEL_THREAD_POOL_H_
