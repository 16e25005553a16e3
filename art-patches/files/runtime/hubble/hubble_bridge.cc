/*
 * Hubble for AOSP: ART's side of the cxx bridge (declarations and contract: hubble_bridge.h).
 * Called by the Rust control plane (rust/runtime) from its control thread, and from
 * ClassLoaderUnloading's caller.
 */
#include "hubble/hubble_bridge.h"

#include <time.h>

#include <string>

#include "art_method-inl.h"
#include "base/locks.h"
#include "base/mutex.h"
#include "class_table-inl.h"
#include "mirror/class-inl.h"
#include "runtime.h"
#include "scoped_thread_state_change-inl.h"
#include "thread-inl.h"
#include "thread_list.h"

namespace art {
namespace hubble {

namespace {

Thread* AsThread(size_t thread) { return reinterpret_cast<Thread*>(thread); }

// The class table of the loader being unloaded, set by ClassLoaderUnloadingWithTable for the
// duration of the synchronous ClassLoaderUnloading call (same thread).
thread_local const ClassTable* gUnloadingTable = nullptr;

uint64_t ClockNs(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * UINT64_C(1000000000) + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

size_t BlockAddress(size_t thread) {
  return reinterpret_cast<size_t>(AsThread(thread)) +
         Thread::HubbleCursorOffset<kRuntimePointerSize>().SizeValue();
}

bool ThreadIsRunnable(size_t thread) {
  return AsThread(thread)->GetState() == ThreadState::kRunnable;
}

void LockThreadState(size_t thread) {
  Thread* self = Thread::Current();
  Thread* target = AsThread(thread);
  MutexLock list(self, *Locks::thread_list_lock_);
  MutexLock count(self, *Locks::thread_suspend_count_lock_);
  // A suspend request: a thread in a suspended state (native, waiting) now blocks in
  // TransitionFromSuspendedToRunnable; its CAS to runnable fails if this lands first. A thread
  // that is runnable already is not waited for: the caller re-checks ThreadIsRunnable.
  bool ok = target->ModifySuspendCount(self, +1, nullptr, SuspendReason::kInternal);
  DCHECK(ok);
}

void UnlockThreadState(size_t thread) {
  // Lowers the suspend count and broadcasts Thread::resume_cond_.
  Runtime::Current()->GetThreadList()->Resume(AsThread(thread), SuspendReason::kInternal);
}

void ResolveMethods(rust::Slice<const uint64_t> methods, rust::Vec<rust::String>& out) {
  Thread* self = Thread::Current();
  auto resolve_all = [&]() REQUIRES_SHARED(Locks::mutator_lock_) {
    for (uint64_t m : methods) {
      std::string name = ArtMethod::PrettyMethod(reinterpret_cast<ArtMethod*>(m), true);
      out.push_back(rust::String(name.data(), name.size()));
    }
  };
  if (Locks::mutator_lock_->IsSharedHeld(self)) {
    resolve_all();
  } else {
    ScopedObjectAccess soa(self);
    resolve_all();
  }
}

void LoaderMethods(size_t loader, rust::Vec<uint64_t>& out) {
  const ClassTable* table = gUnloadingTable;
  LinearAlloc* alloc = reinterpret_cast<LinearAlloc*>(loader);
  if (table == nullptr) {
    return;  // Unknown loader: the control plane falls back to flushing every ring.
  }
  Thread* self = Thread::Current();
  auto visit = [&]() REQUIRES_SHARED(Locks::mutator_lock_) {
    const_cast<ClassTable*>(table)->Visit<kWithoutReadBarrier>(
        [&](ObjPtr<mirror::Class> klass) REQUIRES_SHARED(Locks::mutator_lock_) {
          for (ArtMethod& m : klass->GetMethods(kRuntimePointerSize)) {
            if (alloc->ContainsUnsafe(&m)) {
              out.push_back(reinterpret_cast<uint64_t>(&m));
            }
          }
          return true;
        });
  };
  if (Locks::mutator_lock_->IsSharedHeld(self)) {
    visit();
  } else {
    ScopedObjectAccess soa(self);
    visit();
  }
}

void ClassLoaderUnloadingWithTable(LinearAlloc* alloc, const ClassTable* table) {
  gUnloadingTable = table;
  ClassLoaderUnloading(reinterpret_cast<size_t>(alloc));
  gUnloadingTable = nullptr;
}

uint64_t ReadTimer() {
#if defined(__aarch64__)
  uint64_t t;
  asm volatile("mrs %0, cntvct_el0" : "=r"(t));
  return t;
#elif defined(__arm__)
  uint64_t t;
  asm volatile("mrrc p15, 1, %Q0, %R0, c14" : "=r"(t));
  return t;
#elif defined(__x86_64__) || defined(__i386__)
  uint32_t lo, hi;
  asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
  return (static_cast<uint64_t>(hi) << 32) | lo;
#else
  return ClockNs(CLOCK_MONOTONIC);
#endif
}

uint64_t TimerHz() {
#if defined(__aarch64__)
  uint64_t f;
  asm volatile("mrs %0, cntfrq_el0" : "=r"(f));
  return f;
#elif defined(__arm__)
  uint32_t f;
  asm volatile("mrc p15, 0, %0, c14, c0, 0" : "=r"(f));
  return f;
#elif defined(__x86_64__) || defined(__i386__)
  // The TSC has no architectural frequency register: calibrate once against CLOCK_MONOTONIC.
  static const uint64_t hz = []() {
    uint64_t n0 = ClockNs(CLOCK_MONOTONIC);
    uint64_t t0 = ReadTimer();
    timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, nullptr);
    uint64_t n1 = ClockNs(CLOCK_MONOTONIC);
    uint64_t t1 = ReadTimer();
    return (t1 - t0) * UINT64_C(1000000000) / (n1 - n0);
  }();
  return hz;
#else
  return UINT64_C(1000000000);
#endif
}

uint64_t WallClockNs() { return ClockNs(CLOCK_REALTIME); }

bool AttachCurrentThread(rust::Str name) {
  std::string n(name.data(), name.size());
  Runtime* runtime = Runtime::Current();
  return runtime != nullptr &&
         runtime->AttachCurrentThread(n.c_str(), /*as_daemon=*/ true,
                                      runtime->GetSystemThreadGroup(),
                                      /*create_peer=*/ true);
}

void DetachCurrentThread() {
  Runtime* runtime = Runtime::Current();
  if (runtime != nullptr && Thread::Current() != nullptr) {
    runtime->DetachCurrentThread();
  }
}

}  // namespace hubble
}  // namespace art
