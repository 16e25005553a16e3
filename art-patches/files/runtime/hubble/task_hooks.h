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
 * Hubble for AOSP: the switch interpreter's task record (runtime/hubble/README.md).
 *
 * When task records are on (debug.hubble.tasks, hubble/tasks.cc), the methods of
 * task_methods.h run in the switch interpreter only, and Execute() calls TraceTaskOnEntry right
 * after the method's entry record (patch 0028). It writes one task record: the identities of the
 * task object and of its queue (an identity hash, or a field of an object code locks:
 * task_methods.h's IdentityField), read from the frame's in-registers before the first
 * instruction runs. No other method pays more than one relaxed load; with task records off that
 * load reads 0.
 */
#ifndef ART_RUNTIME_HUBBLE_TASK_HOOKS_H_
#define ART_RUNTIME_HUBBLE_TASK_HOOKS_H_

#include <atomic>
#include <cstdint>

#include "art_method.h"
#include "base/macros.h"
#include "hubble/task_methods.h"
#include "hubble/trace_hooks.h"
#include "interpreter/shadow_frame.h"
#include "mirror/object-inl.h"
#include "thread.h"

namespace art {
namespace hubble {

// An IdentityField resolved: the field's offset in the object and its type's first character
// ('J' or 'L'); type 0 for the identity hash code.
struct IdentitySource {
  uint32_t offset;
  char type;
};
inline constexpr IdentitySource kHashSource = {0, 0};

// A row's sources, task then queue.
struct TaskSources {
  IdentitySource task;
  IdentitySource queue;
};

// The resolved methods, their rows of kTaskMethods and their identity sources. Entries below the
// count are written before the count is released and never change again, but for the method
// becoming null when its class loader is unloaded (ForgetTaskMethodsOf): every interpreted entry
// reads the count (acquire) and compares the methods below it.
inline std::atomic<const ArtMethod*> gTaskMethods[kMaxTaskMethods] = {};
inline int gTaskRows[kMaxTaskMethods] = {};
inline TaskSources gTaskSources[kMaxTaskMethods] = {};
inline std::atomic<size_t> gTaskMethodCount{0};

// Makes `method` (row `row`; its objects' identities from `sources`) visible to TraceTaskOnEntry.
// One writer at a time (tasks.cc holds its install lock). False if the table is full.
inline bool AppendTaskMethod(const ArtMethod* method, int row, TaskSources sources) {
  const size_t count = gTaskMethodCount.load(std::memory_order_relaxed);
  if (count == kMaxTaskMethods) {
    return false;
  }
  gTaskMethods[count].store(method, std::memory_order_relaxed);
  gTaskRows[count] = row;
  gTaskSources[count] = sources;
  gTaskMethodCount.store(count + 1, std::memory_order_release);
  return true;
}

// Whether `method` is in the table already.
inline bool IsPublishedTaskMethod(const ArtMethod* method) {
  const size_t count = gTaskMethodCount.load(std::memory_order_acquire);
  for (size_t i = 0; i < count; ++i) {
    if (gTaskMethods[i].load(std::memory_order_relaxed) == method) {
      return true;
    }
  }
  return false;
}

// A class loader is being unloaded (none of its methods is on any stack): its methods leave the
// table, so that another method allocated at the same address later never writes their records.
// `dies(method)` tells whether a method is that loader's. Their slots are not reused.
template <typename Dies>
inline size_t ForgetTaskMethodsOf(Dies dies) {
  const size_t count = gTaskMethodCount.load(std::memory_order_acquire);
  size_t forgotten = 0;
  for (size_t i = 0; i < count; ++i) {
    const ArtMethod* method = gTaskMethods[i].load(std::memory_order_relaxed);
    if (method != nullptr && dies(method)) {
      gTaskMethods[i].store(nullptr, std::memory_order_relaxed);
      ++forgotten;
    }
  }
  return forgotten;
}

// A 64-bit field value as a 28-bit identity (a native address or an id: every bit counts).
constexpr uint32_t FoldIdentity(uint64_t value) {
  return static_cast<uint32_t>(value ^ (value >> 28) ^ (value >> 56)) & tp::kIdentityMask;
}

// The identity of the object in the frame's in-register `in` (counted from the first), 0 for
// null, from `source`. Read from the frame each time: computing a hash code may suspend this
// thread (it inflates a lock another thread holds thin), and a moving collection updates the
// frame's references, not a copy of them.
ALWAYS_INLINE inline uint32_t IdentityInFrame(const ShadowFrame& frame, uint16_t ins_size,
                                              int in, IdentitySource source)
    REQUIRES_SHARED(Locks::mutator_lock_) {
  if (in < 0) {
    return 0u;
  }
  mirror::Object* object = frame.GetVRegReference(frame.NumberOfVRegs() - ins_size + in);
  if (object == nullptr) {
    return 0u;
  }
  switch (source.type) {
    case 'J':
      return FoldIdentity(static_cast<uint64_t>(object->GetField64(MemberOffset(source.offset))));
    case 'L': {
      mirror::Object* field = object->GetFieldObject<mirror::Object>(MemberOffset(source.offset));
      return field == nullptr ? 0u : static_cast<uint32_t>(field->IdentityHashCode());
    }
    default:
      return static_cast<uint32_t>(object->IdentityHashCode());
  }
}

// Execute(), entering `frame`'s method (not resuming a deoptimized frame), right after its entry
// record: the task record if the method is one of the table's. `ins_size` is the method's code
// item's (its in-registers are the frame's last ins_size).
ALWAYS_INLINE inline void TraceTaskOnEntry(Thread* self, const ShadowFrame& frame,
                                           uint16_t ins_size)
    REQUIRES_SHARED(Locks::mutator_lock_) {
  if (!ART_HUBBLE_TRACING) {
    return;
  }
  const size_t count = gTaskMethodCount.load(std::memory_order_acquire);
  if (LIKELY(count == 0)) {
    return;
  }
  const ArtMethod* method = frame.GetMethod();
  for (size_t i = 0; i < count; ++i) {
    if (gTaskMethods[i].load(std::memory_order_relaxed) != method) {
      continue;
    }
    const TaskMethod& row = kTaskMethods[gTaskRows[i]];
    const TaskSources& sources = gTaskSources[i];
    const uint32_t task =
        IdentityInFrame(frame, ins_size, InRegisterOf(row.signature, row.task), sources.task);
    const uint32_t queue =
        IdentityInFrame(frame, ins_size, InRegisterOf(row.signature, row.queue), sources.queue);
    tp::Task<uintptr_t>(BlockOf(self), row.kind, task, queue, TidOf(self));
    return;
  }
}

}  // namespace hubble
}  // namespace art

#endif  // ART_RUNTIME_HUBBLE_TASK_HOOKS_H_
