// Host test double of ART for the cxx bridge (art/runtime/hubble/hubble_bridge.h).
//
// A "Thread*" is the address of a DoubleThread (created by hubble_double_new_thread), whose
// first member is the five-word block. Thread state and the state lock are modelled: a thread
// "in native" that wants to become runnable waits while the lock is held, as ART's
// TransitionFromSuspendedToRunnable waits while a suspend request is pending.
#include "hubble/hubble_bridge.h"

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace {

struct DoubleThread {
  uintptr_t block[5] = {0, 0, 0, 0, 0};
  std::atomic<bool> runnable{true};
  std::mutex mu;
  std::condition_variable cv;
  int suspend_count = 0;
};

uint64_t Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

DoubleThread* T(size_t thread) { return reinterpret_cast<DoubleThread*>(thread); }

}  // namespace

extern "C" {
size_t hubble_double_new_thread() { return reinterpret_cast<size_t>(new DoubleThread()); }
void hubble_double_free_thread(size_t t) { delete T(t); }
// The thread's own transitions: to native never waits; to runnable waits for the lock.
void hubble_double_set_runnable(size_t t, bool runnable) {
  DoubleThread* d = T(t);
  std::unique_lock<std::mutex> l(d->mu);
  if (runnable) {
    d->cv.wait(l, [d] { return d->suspend_count == 0; });
  }
  d->runnable.store(runnable, std::memory_order_release);
}
// Method "names" of the double: "m<hex pointer>".
}

namespace art {
namespace hubble {

size_t BlockAddress(size_t thread) { return reinterpret_cast<size_t>(&T(thread)->block[0]); }

bool ThreadIsRunnable(size_t thread) {
  return T(thread)->runnable.load(std::memory_order_acquire);
}

void LockThreadState(size_t thread) {
  DoubleThread* d = T(thread);
  std::lock_guard<std::mutex> l(d->mu);
  d->suspend_count++;
}

void UnlockThreadState(size_t thread) {
  DoubleThread* d = T(thread);
  {
    std::lock_guard<std::mutex> l(d->mu);
    d->suspend_count--;
  }
  d->cv.notify_all();
}

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
bool AttachCurrentThread(rust::Str) { return true; }
void DetachCurrentThread() {}

}  // namespace hubble
}  // namespace art
