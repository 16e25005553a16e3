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
 * Hubble for AOSP: ART's lifecycle events, forwarded to the Rust control plane.
 *
 * The only file of the runtime integration that calls the cxx bridge (the ART -> Rust half
 * generated from the Hubble runtime crate into hubble/runtime_bridge.rs.h; see
 * hubble/hubble_bridge.h for the contract of each call). ART's own files call these functions
 * at one line each (patches 0024-0026), so a change of the bridge touches only lifecycle.cc.
 *
 * Nothing reaches Rust before OnProcessStarted: the zygote and every process that Hubble does
 * not trace never call into the control plane (and never start its thread).
 */
#ifndef ART_RUNTIME_HUBBLE_LIFECYCLE_H_
#define ART_RUNTIME_HUBBLE_LIFECYCLE_H_

#include <atomic>

#include "base/locks.h"
#include "process_state.h"

namespace art {

class ClassTable;
class LinearAlloc;
class Thread;

namespace hubble {

// True once the control plane runs in this process (after fork, package known, enabled).
extern std::atomic<bool> gStarted;

// VMRuntime.setProcessDataDirectory: the app's package and data directory are known and this
// is a forked app process (never the zygote). Starts the control plane if Hubble is enabled for
// the package, then reports every thread already attached (the process's main thread, whose tid
// is the pid, is the UI thread). `self` is in the Native state (normal JNI method).
void OnProcessStarted(Thread* self) REQUIRES(!Locks::thread_list_lock_);

// Thread::CreateCallback and Thread::Attach, once Thread::Init registered the thread, on the
// thread itself, before it runs Java code, holding no ART lock: not runtime_shutdown_lock_
// (Init's), which every thread start and every GC request takes, because in many-thread mode
// the control plane starts tracing the thread before this returns and may wait for its registry
// meanwhile (at most 2 ms: during a flush the thread goes on untraced until the control thread
// starts it). So the thread's first Java frame, its Thread.run(), is recorded.
void OnThreadAttached(Thread* thread)
    REQUIRES(!Locks::runtime_shutdown_lock_, !Locks::thread_list_lock_);

// Thread::Destroy, first thing, on the detaching thread (not Runnable), which stays in the thread
// list until ThreadList::Unregister. Before OnProcessStarted has decided whether the control plane
// runs (never in the zygote), it takes thread_list_lock_ and marks the thread, so that the start
// does not report a thread that is already going away.
void OnThreadDetaching(Thread* self) REQUIRES(!Locks::thread_list_lock_);

// Thread::SetThreadName: true if `name` was a Hubble command ("HUBBLE:start", "HUBBLE:stop",
// "HUBBLE:flush:<reason>", Nanoscope style); then the thread keeps its name.
bool OnThreadRenaming(Thread* thread, const char* name);

// VMRuntime.updateProcessState: the app came to the foreground: its UI thread is foreground.
void OnProcessStateChanged(ProcessState state);

// ClassLinker::DeleteClassLoader, before the loader's LinearAlloc (its ArtMethods) and its class
// table are freed, on the GC thread holding the mutator lock (shared). Synchronous and bounded:
// the control plane names every method of the loader from `class_table` and never waits for a
// flush, a traced thread or the disk (runtime/hubble/README.md).
void OnClassLoaderUnloading(Thread* self, LinearAlloc* allocator, const ClassTable* class_table)
    REQUIRES_SHARED(Locks::mutator_lock_);

// SignalCatcher::HandleSigQuit, first thing, on the signal catcher thread (not Runnable): SIGQUIT
// arrived (the platform's ANR stack dump, a bugreport, `kill -3`) and the dump is about to start.
// Records an ANR flush request for the control thread and returns: one atomic
// swap and, for a new request, a wake of the control thread that never waits. No I/O, no
// symbolization, no ART lock: the dump that follows takes the locks below and must not wait for
// Hubble; the control thread stops, symbolizes and writes on its own thread, as any thread would.
void OnSigQuit() REQUIRES(!Locks::mutator_lock_, !Locks::thread_list_lock_,
                          !Locks::thread_suspend_count_lock_);

}  // namespace hubble
}  // namespace art

#endif  // ART_RUNTIME_HUBBLE_LIFECYCLE_H_
