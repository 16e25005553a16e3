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
 * Hubble for AOSP: task records from ART (tasks.h).
 */
#include "hubble/tasks.h"

#include <mutex>
#include <string>
#include <string_view>

#include "art_field-inl.h"
#include "art_method-inl.h"
#include "base/logging.h"
#include "class_linker.h"
#include "dex/signature.h"
#include "gc/collector_type.h"
#include "gc/gc_cause.h"
#include "gc/scoped_gc_critical_section.h"
#include "hubble/task_hooks.h"
#include "hubble/task_methods.h"
#include "instrumentation.h"
#include "jit/jit.h"
#include "mirror/class-inl.h"
#include "runtime.h"
#include "scoped_thread_state_change-inl.h"
#include "thread-inl.h"
#include "thread_list.h"

namespace art {
namespace hubble {

namespace {

std::mutex gInstallLock;  // one install at a time; the table is written once

// Where a row's object gets its identity: its IdentityField resolved in its class (the field
// may be declared by a superclass), or its hash code if the field has no name, or this build's
// class lacks it (logged: its next lock may then inflate).
IdentitySource ResolveIdentity(Thread* self, const TaskMethod& m, int object, IdentityField field)
    REQUIRES_SHARED(Locks::mutator_lock_) {
  if (field.name == nullptr || object == kNoObject) {
    return kHashSource;
  }
  // The class of the row's object: the method's own for the receiver, else its parameter's type.
  const std::string descriptor(object == kReceiver
                                   ? std::string_view(m.descriptor)
                                   : ReferenceParameterOf(m.signature, object).descriptor);
  ObjPtr<mirror::Class> klass =
      descriptor.empty()
          ? nullptr
          : Runtime::Current()->GetClassLinker()->FindSystemClass(self, descriptor.c_str());
  ArtField* f = klass == nullptr ? nullptr : klass->FindInstanceField(field.name, field.type);
  if (f == nullptr) {
    self->ClearException();
    LOG(WARNING) << "hubble: no field " << field.name << " " << field.type << " in " << descriptor
                 << ": " << m.name << "'s records use its identity hash code";
    return kHashSource;
  }
  return IdentitySource{f->GetOffset().Uint32Value(), field.type[0]};
}

// The table's rows this build has, resolved (mutator lock held, shared).
size_t ResolveTaskMethods(Thread* self, ArtMethod** methods, int* rows, TaskSources* sources)
    REQUIRES_SHARED(Locks::mutator_lock_) {
  ClassLinker* linker = Runtime::Current()->GetClassLinker();
  size_t found = 0;
  for (size_t row = 0; row < kNumTaskMethods; ++row) {
    const TaskMethod& m = kTaskMethods[row];
    ObjPtr<mirror::Class> klass = linker->FindSystemClass(self, m.descriptor);
    if (klass == nullptr) {
      self->ClearException();  // NoClassDefFoundError: this build has no such class
      LOG(WARNING) << "hubble: no class " << m.descriptor << ": no task records from " << m.name;
      continue;
    }
    ArtMethod* method = klass->FindClassMethod(m.name, m.signature, kRuntimePointerSize);
    // Declared by the class itself (not inherited), with a code item, callable: what the
    // interpreter's hook reads its in-registers from.
    if (method == nullptr || method->GetDeclaringClass() != klass || method->IsStatic() ||
        method->IsNative() || method->IsAbstract() || !method->IsInvokable() ||
        method->IsProxyMethod()) {
      LOG(WARNING) << "hubble: " << m.descriptor << " has no method " << m.name << m.signature
                   << " with code: no task records from it";
      continue;
    }
    methods[found] = method;
    rows[found] = static_cast<int>(row);
    sources[found] = {ResolveIdentity(self, m, m.task, m.task_field),
                      ResolveIdentity(self, m, m.queue, m.queue_field)};
    ++found;
  }
  return found;
}

}  // namespace

size_t InstallTaskRecords(Thread* self) {
  // A process debuggable from its start can get a debugger with breakpoints (full JVMTI): a
  // breakpoint in one of these methods would deoptimize it a second time, and
  // Instrumentation::Deoptimize refuses that with a CHECK, aborting the app.
  if (Runtime::Current()->IsJavaDebuggableAtInit()) {
    LOG(WARNING) << "hubble: no task records in a debuggable process (a debugger's breakpoint in "
                 << "a task method would abort it)";
    return 0;
  }
  std::lock_guard<std::mutex> once(gInstallLock);
  const size_t installed = gTaskMethodCount.load(std::memory_order_acquire);
  if (installed != 0) {
    return installed;
  }
  ArtMethod* methods[kNumTaskMethods] = {};
  int rows[kNumTaskMethods] = {};
  TaskSources sources[kNumTaskMethods] = {};
  size_t found;
  {
    ScopedObjectAccess soa(self);
    found = ResolveTaskMethods(self, methods, rows, sources);
  }
  if (found == 0) {
    return 0;
  }
  // As ART's own single-method deoptimization is done (instrumentation_test.cc
  // DeoptimizeMethod; JVMTI's ScopedDeoptimizationContext): no GC running, every thread
  // suspended, then Instrumentation::Deoptimize. A frame of one of these methods already
  // running compiled code finishes there without a record; every later entry is interpreted.
  // The JIT is drained and held first: a compilation of one of them already under way would
  // commit after the deoptimization, and with no entry/exit hooks installed (a non-debuggable
  // process) UpdateMethodsCode's fast path would point the method back at compiled code; a
  // compilation asked for later sees IsDeoptimized and declines.
  jit::ScopedJitSuspend no_compilation_in_flight;
  {
    gc::ScopedGCCriticalSection gcs(self, gc::kGcCauseInstrumentation,
                                    gc::kCollectorTypeInstrumentation);
    ScopedSuspendAll ssa("Hubble task records");
    instrumentation::Instrumentation* instrumentation = Runtime::Current()->GetInstrumentation();
    for (size_t i = 0; i < found; ++i) {
      if (!instrumentation->IsDeoptimized(methods[i])) {  // a debugger may have done it already
        instrumentation->Deoptimize(methods[i]);
      }
    }
    // Published with every thread suspended: no entry of these methods is half-way through the
    // hook while the table appears.
    PublishTaskMethods(methods, rows, found, sources);
  }
  LOG(INFO) << "hubble: task records from " << found << " of " << kNumTaskMethods
            << " framework methods";
  return found;
}

void OnBootImageMethodsRemapped(const void* bridge) {
  Locks::mutator_lock_->AssertExclusiveHeld(Thread::Current());
  const size_t count = gTaskMethodCount.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i) {
    ArtMethod* method = gTaskMethods[i];
    if (method->GetEntryPointFromQuickCompiledCode() != bridge) {
      method->SetEntryPointFromQuickCompiledCode(bridge);
    }
  }
}

bool WritesTaskRecord(ArtMethod* method) {
  const char* name = method->GetName();
  if (LIKELY(!IsTaskMethodName(name))) {
    return false;
  }
  return FindTaskMethod(method->GetDeclaringClassDescriptor(), name,
                        method->GetSignature().ToString()) >= 0;
}

}  // namespace hubble
}  // namespace art
