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
#include <vector>

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
#include "linear_alloc.h"
#include "mirror/class-inl.h"
#include "runtime.h"
#include "runtime_callbacks.h"
#include "scoped_thread_state_change-inl.h"
#include "thread-inl.h"
#include "thread_list.h"

namespace art {
namespace hubble {

namespace {

// The table's one writer at a time: the install, a class prepared. Taken only by a thread that
// is not Runnable, or that holds it before it becomes Runnable (the install), never by the GC.
std::mutex gInstallLock;

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

// Whether `method` (the row's, declared by the class searched) can write records: with a code
// item, callable, what the interpreter's hook reads its in-registers from.
bool IsRecordable(ArtMethod* method) REQUIRES_SHARED(Locks::mutator_lock_) {
  return !method->IsStatic() && !method->IsNative() && !method->IsAbstract() &&
         method->IsInvokable() && !method->IsProxyMethod();
}

// The method row `row` names in `klass`, declared there, or null.
ArtMethod* DeclaredMethodOf(ObjPtr<mirror::Class> klass, const TaskMethod& m)
    REQUIRES_SHARED(Locks::mutator_lock_) {
  ArtMethod* method = klass->FindClassMethod(m.name, m.signature, kRuntimePointerSize);
  return method != nullptr && method->GetDeclaringClass() == klass ? method : nullptr;
}

// Whether `klass` is a proper subclass of the class `base` names. `base` is one of the table's
// literals, so its data() is terminated as DescriptorEquals needs.
bool Extends(ObjPtr<mirror::Class> klass, std::string_view base)
    REQUIRES_SHARED(Locks::mutator_lock_) {
  for (ObjPtr<mirror::Class> k = klass->GetSuperClass(); k != nullptr; k = k->GetSuperClass()) {
    if (k->DescriptorEquals(base.data())) {
      return true;
    }
  }
  return false;
}

struct Found {
  ArtMethod* method;
  int row;
  TaskSources sources;
};

// The table's boot class path rows this build has, resolved (mutator lock held, shared).
void ResolveBootTaskMethods(Thread* self, std::vector<Found>* found)
    REQUIRES_SHARED(Locks::mutator_lock_) {
  ClassLinker* linker = Runtime::Current()->GetClassLinker();
  for (size_t row = 0; row < kNumTaskMethods; ++row) {
    const TaskMethod& m = kTaskMethods[row];
    if (m.match != Match::kBootClassPath) {
      continue;
    }
    ObjPtr<mirror::Class> klass = linker->FindSystemClass(self, m.descriptor);
    if (klass == nullptr) {
      self->ClearException();  // NoClassDefFoundError: this build has no such class
      LOG(WARNING) << "hubble: no class " << m.descriptor << ": no task records from " << m.name;
      continue;
    }
    ArtMethod* method = DeclaredMethodOf(klass, m);
    if (method == nullptr || !IsRecordable(method)) {
      LOG(WARNING) << "hubble: " << m.descriptor << " has no method " << m.name << m.signature
                   << " with code: no task records from it";
      continue;
    }
    found->push_back({method, static_cast<int>(row),
                      {ResolveIdentity(self, m, m.task, m.task_field),
                       ResolveIdentity(self, m, m.queue, m.queue_field)}});
  }
}

// The methods of the rows that any class loader may define that `klass` declares: the row's own
// class (kAnyClassLoader) or a subclass overriding its method (kOverrides). Identities are hash
// codes for these rows (TableIsConsistent).
void MatchClass(ObjPtr<mirror::Class> klass, std::vector<Found>* found)
    REQUIRES_SHARED(Locks::mutator_lock_) {
  if (klass->IsInterface() || klass->IsArrayClass() || klass->IsPrimitive() ||
      klass->IsProxyClass() || !klass->IsResolved()) {
    return;
  }
  for (size_t row = 0; row < kNumTaskMethods; ++row) {
    const TaskMethod& m = kTaskMethods[row];
    const bool defines = m.match == Match::kAnyClassLoader && klass->DescriptorEquals(m.descriptor);
    if (!defines && !(m.match == Match::kOverrides && Extends(klass, m.descriptor))) {
      continue;
    }
    ArtMethod* method = DeclaredMethodOf(klass, m);
    if (method != nullptr && IsRecordable(method)) {
      found->push_back({method, static_cast<int>(row), {kHashSource, kHashSource}});
    }
  }
}

// Keeps `found` in the switch interpreter and adds it to the table, inside
// WithEveryThreadSuspended (as instrumentation_test.cc's DeoptimizeMethod and JVMTI's
// ScopedDeoptimizationContext do). A frame of one of these methods already running compiled code
// finishes there without a record; every later entry is interpreted. Returns how many were
// added. Called with gInstallLock held: the table has one writer.
size_t Record(const std::vector<Found>& found) REQUIRES(Locks::mutator_lock_) {
  instrumentation::Instrumentation* instrumentation = Runtime::Current()->GetInstrumentation();
  size_t added = 0;
  for (const Found& f : found) {
    if (IsPublishedTaskMethod(f.method)) {
      continue;  // a class prepared while the install swept the loaded ones
    }
    if (!instrumentation->IsDeoptimized(f.method)) {  // a debugger may have done it already
      instrumentation->Deoptimize(f.method);
    }
    if (!AppendTaskMethod(f.method, f.row, f.sources)) {
      LOG(WARNING) << "hubble: more than " << kMaxTaskMethods << " task methods: "
                   << f.method->PrettyMethod() << " writes no task records";
      continue;
    }
    ++added;
  }
  return added;
}

// Runs `change` (which deoptimizes and publishes) as ART's own single-method deoptimization is
// done: the JIT drained and held, no GC running, every thread suspended. The JIT first: a
// compilation of one of these methods already under way would commit after the deoptimization,
// and with no entry/exit hooks installed (a non-debuggable process) UpdateMethodsCode's fast path
// would point the method back at compiled code; a compilation asked for later sees
// IsDeoptimized and declines. The caller is not Runnable.
template <typename Change>
size_t WithEveryThreadSuspended(Thread* self, Change change) {
  jit::ScopedJitSuspend no_compilation_in_flight;
  gc::ScopedGCCriticalSection gcs(self, gc::kGcCauseInstrumentation,
                                  gc::kCollectorTypeInstrumentation);
  ScopedSuspendAll ssa("Hubble task records");
  return change();
}

// Each class prepared from now on, in any class loader: its methods of the table's
// kAnyClassLoader and kOverrides rows start recording before any of them can have run long. A
// class the table does not name costs a few descriptor comparisons.
class TaskClassWatcher final : public ClassLoadCallback {
 public:
  void ClassLoad(Handle<mirror::Class> klass ATTRIBUTE_UNUSED) override
      REQUIRES_SHARED(Locks::mutator_lock_) {}

  void ClassPrepare(Handle<mirror::Class> temp_klass ATTRIBUTE_UNUSED,
                    Handle<mirror::Class> klass) override REQUIRES_SHARED(Locks::mutator_lock_) {
    std::vector<Found> found;
    MatchClass(klass.Get(), &found);
    if (found.empty()) {
      return;
    }
    // RuntimeCallbacks lets a class prepare listener suspend every thread (JVMTI's does). The
    // handle keeps the class, and so its methods, alive meanwhile. The install lock is taken
    // only once suspended: the install holds it while Runnable and suspends every thread.
    Thread* self = Thread::Current();
    ScopedThreadSuspension sts(self, ThreadState::kSuspended);
    std::lock_guard<std::mutex> one_writer(gInstallLock);
    const size_t added = WithEveryThreadSuspended(
        self, [&found]() REQUIRES(Locks::mutator_lock_) { return Record(found); });
    if (added != 0) {
      LOG(INFO) << "hubble: task records from " << added << " method(s) of "
                << klass->PrettyDescriptor();
    }
  }
};

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
  static bool installed = false;
  if (installed) {
    return gTaskMethodCount.load(std::memory_order_acquire);
  }
  installed = true;
  std::vector<Found> found;
  {
    ScopedObjectAccess soa(self);
    ResolveBootTaskMethods(self, &found);
  }
  const size_t added = WithEveryThreadSuspended(self, [&found]() REQUIRES(Locks::mutator_lock_) {
    // The classes of any class loader loaded so far, then every class prepared after the
    // suspension ends: none is missed (one prepared while suspended here is both, and is
    // added once).
    auto match = [&found](ObjPtr<mirror::Class> klass) REQUIRES_SHARED(Locks::mutator_lock_) {
      MatchClass(klass, &found);
      return true;
    };
    ClassFuncVisitor<decltype(match)> visitor(match);
    Runtime::Current()->GetClassLinker()->VisitClasses(&visitor);
    // Published with every thread suspended: no entry of these methods is half-way through the
    // hook while the table appears.
    const size_t recorded = Record(found);
    // Never freed, never removed (RuntimeCallbacks' rule), and no exit-time destructor: a daemon
    // thread may still prepare a class while the process exits.
    Runtime::Current()->GetRuntimeCallbacks()->AddClassLoadCallback(new TaskClassWatcher());
    return recorded;
  });
  LOG(INFO) << "hubble: task records from " << added << " method(s) found, the table's "
            << kNumTaskMethods << " rows";
  return added;
}

void OnBootImageMethodsRemapped(const void* bridge) {
  Locks::mutator_lock_->AssertExclusiveHeld(Thread::Current());
  const size_t count = gTaskMethodCount.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i) {
    // Boot image methods were remapped; the table's others have no reason to change, and a
    // forgotten one (null) is gone.
    ArtMethod* method = const_cast<ArtMethod*>(gTaskMethods[i].load(std::memory_order_relaxed));
    if (method != nullptr && method->GetEntryPointFromQuickCompiledCode() != bridge) {
      method->SetEntryPointFromQuickCompiledCode(bridge);
    }
  }
}

bool WritesTaskRecord(ArtMethod* method) {
  const char* name = method->GetName();
  if (LIKELY(!IsTaskMethodName(name))) {
    return false;
  }
  ObjPtr<mirror::Class> klass = method->GetDeclaringClass();
  auto extends = [klass](std::string_view base) REQUIRES_SHARED(Locks::mutator_lock_) {
    return Extends(klass, base);
  };
  return FindTaskMethod(method->GetDeclaringClassDescriptor(), name,
                        method->GetSignature().ToString(), extends) >= 0;
}

void OnTaskClassLoaderUnloading(const LinearAlloc* allocator) {
  // Not under the install lock: its holder may be waiting for this GC. The table's one writer
  // only appends past the count read here, and never for this loader, whose classes are gone.
  const size_t forgotten = ForgetTaskMethodsOf([allocator](const ArtMethod* method) {
    return allocator->ContainsUnsafe(const_cast<ArtMethod*>(method));
  });
  if (forgotten != 0) {
    LOG(INFO) << "hubble: " << forgotten << " task method(s) unloaded with their class loader";
  }
}

}  // namespace hubble
}  // namespace art
