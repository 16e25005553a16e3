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
 * Hubble for AOSP: the C++ side of the cxx bridge between ART and the Rust control plane
 * (crate hubble-runtime in external/hubble, module `ffi`). Kept free of ART headers so
 * that the host build of the crate compiles the same declarations against a test double
 * (a double in the crate's host tests); the real definitions are in hubble_bridge.cc.
 *
 * ===== ART -> Rust (defined in Rust; include "hubble/runtime_bridge.rs.h") =====
 * All take handles as size_t: Thread* and LinearAlloc* addresses.
 *
 *   bool art::hubble::RuntimeStarted(rust::Str package, rust::Str process, rust::Str data_dir);
 *       After fork, never in zygote, once the package name is known (e.g. from
 *       Runtime::SetProcessPackageName / SetProcessDataDirectory). data_dir may be empty
 *       (then /data/data/<package>). Returns whether Hubble runs in this process. Afterwards
 *       ART reports every already-attached thread with ThreadAttached (main thread: is_ui).
 *   void art::hubble::ThreadAttached(size_t thread, uint32_t tid, rust::Str name, bool is_ui,
 *                                    bool on_itself);
 *       Thread::Init after the Thread is registered (its tlsPtr_ block is valid).
 *   void art::hubble::ThreadDetached(size_t thread);
 *       On the detaching thread itself, in Thread::Destroy before the Thread is freed.
 *       Call it with the thread NOT runnable (e.g. kNative) — it may wait for the control
 *       thread, which may need the mutator lock.
 *   bool art::hubble::ThreadRenamed(size_t thread, rust::Str name);
 *       Thread::SetThreadName: true if `name` is "HUBBLE:start", "HUBBLE:stop" or
 *       "HUBBLE:flush:<reason>"; then ART must keep the current name. Never blocks.
 *   void art::hubble::ThreadForeground(size_t thread);
 *       The thread became the foreground (e.g. process state / UI thread of the top app).
 *       Never blocks.
 *   bool art::hubble::SetThreadEnabled(size_t thread, bool enabled);
 *       Per-thread enable / disable. Never blocks.
 *   void art::hubble::ClassLoaderUnloading(size_t linear_alloc);
 *       Only through ClassLoaderUnloadingWithTable below (ClassLinker::DeleteClassLoader, on the
 *       GC thread, mutator lock held shared, ART's unload lock held): the control plane calls
 *       LoaderMethods and ResolveDyingMethods to name every method of the loader while it is
 *       alive, and returns. It never waits for a flush, a traced thread or the disk.
 *   void art::hubble::AnomalyReported(rust::Str reason);
 *       An anomaly detector fired: flush the traced threads (asynchronous, never blocks).
 *   void art::hubble::SigQuitReceived();
 *       Only through OnSigQuit (lifecycle.cc; SignalCatcher::HandleSigQuit, first thing, before
 *       the stack dump, patch 0027): records an ANR flush request and wakes the control thread.
 *       An atomic swap and a send that never waits: no I/O, no lock, no call back into ART.
 *
 * ===== Rust -> ART (declared here, defined in hubble_bridge.cc) =====
 * Called only from the Hubble control thread (attached with AttachCurrentThread) or from
 * ClassLoaderUnloading's caller.
 */
#ifndef ART_RUNTIME_HUBBLE_HUBBLE_BRIDGE_H_
#define ART_RUNTIME_HUBBLE_HUBBLE_BRIDGE_H_

#include <cstddef>
#include <cstdint>

#include "rust/cxx.h"

namespace art {

class ClassTable;
class LinearAlloc;
class Thread;

namespace hubble {

// ClassLinker::DeleteClassLoader(self, data, ...) through lifecycle.cc, before data.allocator and
// data.class_table are freed, with the mutator lock held (shared): under the unload lock, sets the
// table for LoaderMethods, calls ClassLoaderUnloading (Rust), then bumps UnloadGeneration.
void ClassLoaderUnloadingWithTable(Thread* self,
                                   LinearAlloc* allocator,
                                   const ClassTable* class_table);

// Address of thread->tlsPtr_.hubble_cursor; hubble_limit, _stop, _begin, _end follow it.
size_t BlockAddress(size_t thread);

// thread->GetState() == ThreadState::kRunnable.
bool ThreadIsRunnable(size_t thread);

// Hubble §6 "take ART's thread-state transition lock" (thread_state.cc): under thread_list_lock_
// and thread_suspend_count_lock_, raise the thread's suspend count, so that a thread in a
// suspended state (native, waiting...) blocks in TransitionFromSuspendedToRunnable until
// UnlockThreadState. Returns false if ART refused the request (then there is nothing to undo and
// the caller must not force-stop). It does not wait for a runnable thread to suspend: the Rust
// side RE-CHECKS ThreadIsRunnable after this call and only force-stops a thread that is not.
bool LockThreadState(size_t thread);
// Lowers the suspend count again, whatever the thread's state, and broadcasts
// Thread::resume_cond_ (not ThreadList::Resume, which refuses a runnable thread).
void UnlockThreadState(size_t thread);

// For a runnable thread that has not answered a stop request (thread_state.cc): a checkpoint
// (Thread::RequestCheckpoint, under thread_suspend_count_lock_) whose closure answers the stop on
// the thread itself at its next suspend check, as its next trace point would. Returns false if
// the thread is not runnable (then the force stop applies). Never waits.
bool RequestStopCheckpoint(size_t thread);

// out[i] = ArtMethod::PrettyMethod(methods[i]) for each i, under the mutator lock (shared, taken
// with ScopedObjectAccess) and then the unload lock, if UnloadGeneration() still equals
// `generation`; otherwise returns false and reads no ArtMethod (a loader finished unloading since
// the caller chose `methods`; some may be freed). Called by the control thread only.
bool ResolveMethods(rust::Slice<const uint64_t> methods, uint64_t generation,
                    rust::Vec<rust::String>& out);

// Class-loader unloads completed (acquire): bumped under the unload lock after the control plane
// has named the loader's methods (ClassLoaderUnloadingWithTable).
uint64_t UnloadGeneration();

// out[i] = ArtMethod::PrettyMethod(methods[i]), with no lock taken: only inside
// ClassLoaderUnloading, for the dying loader's own (still alive) methods.
void ResolveDyingMethods(rust::Slice<const uint64_t> methods, rust::Vec<rust::String>& out);

// Every ArtMethod* allocated in the LinearAlloc `loader` (the class loader being unloaded),
// from the ClassTable given to ClassLoaderUnloadingWithTable; empty if none was given.
void LoaderMethods(size_t loader, rust::Vec<uint64_t>& out);

// The generic timer (the clock every trace point reads) and the wall clock.
uint64_t ReadTimer();
uint64_t TimerHz();
uint64_t WallClockNs();

// Many-thread mode: the address of this ISA's hand-written block-end function
// (runtime/hubble/pool_<isa>.S), which the runtime stores in the pool header for compiled code to
// call; 0 where there is none, and then every trace point of this build lacks the pool path and
// the runtime refuses many-thread mode (runtime/hubble/README.md).
uint64_t PoolTakeEntry();

// debug.hubble.tasks: from now on the framework methods of task_methods.h write task records
// (tasks.h, InstallTaskRecords). On the attached control thread; returns how many methods do.
size_t StartTaskRecords();

// Attach / detach the calling (control) thread as a daemon in the "system" thread group.
bool AttachCurrentThread(rust::Str name);
void DetachCurrentThread();

}  // namespace hubble
}  // namespace art

#endif  // ART_RUNTIME_HUBBLE_HUBBLE_BRIDGE_H_
