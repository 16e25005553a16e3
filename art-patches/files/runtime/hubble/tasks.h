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
 * Hubble for AOSP: task records from ART (runtime/hubble/README.md).
 *
 * The methods of task_methods.h write a record when entered. Compiled code has no hook for them,
 * so while task records are on they run in the switch interpreter, whose entry hook writes it
 * (task_hooks.h): upstream's single-method deoptimization (Instrumentation::Deoptimize, what
 * JVMTI's breakpoints use) points their entry at the interpreter bridge and keeps the JIT and
 * any instrumentation change from pointing it back. Callers never carry an inlined copy: the
 * optimizing compiler does not inline them (WritesTaskRecord, patch 0016), on the device's boot
 * image, app code and JIT code alike.
 */
#ifndef ART_RUNTIME_HUBBLE_TASKS_H_
#define ART_RUNTIME_HUBBLE_TASKS_H_

#include <cstddef>

#include "base/locks.h"

namespace art {

class ArtMethod;
class LinearAlloc;
class Thread;

namespace hubble {

// Resolves the table's methods in the boot class path and in the classes loaded so far, keeps
// them interpreted and publishes them to the interpreter's hook; from then on, each class
// prepared in any class loader adds its methods of the table's library rows (kotlinx.coroutines).
// Once per process, on the control thread (attached, not Runnable), when debug.hubble.tasks is
// on; a later call returns how many record. A boot class path method a build does not have (an
// OEM framework) is logged and left out. None in a process debuggable from its start (a debugger
// could set a breakpoint in one). Returns how many methods record.
size_t InstallTaskRecords(Thread* self)
    REQUIRES(!Locks::mutator_lock_, !Locks::thread_list_lock_);

// JIT zygote (Jit::MapBootImageMethods, every other thread suspended): the boot image's methods
// section was just replaced by the zygote's pages, whose entry points are the zygote's compiled
// code; the table's methods go back to `bridge` (GetQuickToInterpreterBridge(), passed by the
// caller: libart keeps the trampoline's symbol hidden), their deoptimization stands.
void OnBootImageMethodsRemapped(const void* bridge) REQUIRES(Locks::mutator_lock_);

// Whether `method` is one of the table's: the optimizing compiler's inliner leaves its calls as
// calls (an inlined copy would be entered without its record).
bool WritesTaskRecord(ArtMethod* method) REQUIRES_SHARED(Locks::mutator_lock_);

// A class loader whose methods live in `allocator` is being unloaded (ClassLinker's
// DeleteClassLoader): its methods stop recording, so that a method allocated later at one of
// their addresses never writes their records.
void OnTaskClassLoaderUnloading(const LinearAlloc* allocator);

}  // namespace hubble
}  // namespace art

#endif  // ART_RUNTIME_HUBBLE_TASKS_H_
