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
 * Hubble for AOSP: the framework and library methods that write a task record when they are
 * entered (task records: runtime/hubble/README.md).
 *
 * One table for the three places that must agree on it: the runtime resolves these methods and
 * keeps them in the switch interpreter while task records are on (hubble/tasks.cc), the
 * interpreter's entry hook writes the record from the frame's arguments (hubble/task_hooks.h),
 * and the optimizing compiler never inlines them (patch 0016), because an inlined copy is entered
 * without the record.
 *
 * Like trace_point.h this header depends on nothing from ART, so that Hubble's host harness
 * compiles the very same table and argument arithmetic.
 */
#ifndef ART_RUNTIME_HUBBLE_TASK_METHODS_H_
#define ART_RUNTIME_HUBBLE_TASK_METHODS_H_

#include <cstddef>
#include <string_view>

#include "hubble/trace_point.h"

namespace art {
namespace hubble {

// Where an identity comes from: the receiver, a declared parameter (1 = the first), or nowhere
// (the record carries 0).
constexpr int kReceiver = 0;
constexpr int kNoObject = -1;

// Where the identity of an object that code synchronizes on comes from instead of its identity
// hash code: hashing it stores the hash in its lock word, and its next `synchronized` then
// inflates a monitor, on every later lock too (monitor.cc: a hashed lock word cannot hold a thin
// lock). An instance field of it that is unique and stable for its life: a `long` (type "J",
// its value) or a reference (that object's hash; nothing locks it). {nullptr, nullptr}: the
// object's own identity hash code.
struct IdentityField {
  const char* name;
  const char* type;
};
inline constexpr IdentityField kHashCode = {nullptr, nullptr};

// Which methods a row stands for.
enum class Match {
  // The method the row's class declares, found on the boot class path when task records start.
  kBootClassPath,
  // The method the row's class declares, in every class loader that defines that class (a
  // library each app ships in its own dex, such as kotlinx.coroutines): found as each class is
  // prepared.
  kAnyClassLoader,
  // Every override of the row's (abstract) method in a subclass, in any class loader: the code
  // that really runs behind an abstract call (each CoroutineDispatcher's dispatch).
  kOverrides,
};

struct TaskMethod {
  const char* descriptor;
  const char* name;
  const char* signature;
  tp::TaskKind kind;
  int task;   // kReceiver or a parameter number
  int queue;  // kReceiver, a parameter number or kNoObject
  IdentityField task_field = kHashCode;
  IdentityField queue_field = kHashCode;
  Match match = Match::kBootClassPath;
};

// Thread.start() and Thread.join() are synchronized: a thread is known by its id (Thread.tid).
inline constexpr IdentityField kThreadId = {"tid", "J"};

// Android 14's framework (libcore and frameworks/base at android-14.0.0_r15). Every method is an
// instance method with a code item (none is native or abstract): tasks.cc refuses any other.
inline constexpr TaskMethod kTaskMethods[] = {
    {"Ljava/util/concurrent/ThreadPoolExecutor;", "execute", "(Ljava/lang/Runnable;)V",
     tp::TaskKind::kSubmit, 1, kReceiver},
    // execute() is synchronized: the executor is known by its queue of tasks.
    {"Landroid/os/AsyncTask$SerialExecutor;", "execute", "(Ljava/lang/Runnable;)V",
     tp::TaskKind::kSubmit, 1, kReceiver, kHashCode, {"mTasks", "Ljava/util/ArrayDeque;"}},
    // Every MessageQueue method locks the queue: it is known by its native queue's address.
    {"Landroid/os/MessageQueue;", "enqueueMessage", "(Landroid/os/Message;J)Z",
     tp::TaskKind::kSubmit, 1, kReceiver, kHashCode, {"mPtr", "J"}},
    {"Ljava/lang/Thread;", "start", "()V", tp::TaskKind::kSubmit, kReceiver, kNoObject,
     kThreadId},
    {"Ljava/util/concurrent/ThreadPoolExecutor;", "beforeExecute",
     "(Ljava/lang/Thread;Ljava/lang/Runnable;)V", tp::TaskKind::kBeginUntilEnd, 2, kReceiver},
    {"Ljava/util/concurrent/ThreadPoolExecutor;", "afterExecute",
     "(Ljava/lang/Runnable;Ljava/lang/Throwable;)V", tp::TaskKind::kEnd, 1, kReceiver},
    {"Ljava/util/concurrent/FutureTask;", "run", "()V", tp::TaskKind::kBegin, kReceiver,
     kNoObject},
    {"Landroid/os/Handler;", "dispatchMessage", "(Landroid/os/Message;)V",
     tp::TaskKind::kBegin, 1, kNoObject},
    {"Ljava/lang/Thread;", "run", "()V", tp::TaskKind::kBegin, kReceiver, kNoObject, kThreadId},
    // Kotlin coroutines (kotlinx.coroutines, inside each app's dex): a coroutine is handed to its
    // dispatcher as a DispatchedTask (a launch, a yield, a resumption from another thread), which
    // the dispatcher's thread runs. The dispatcher is abstract: every override is a row's method.
    // dispatchYield's default calls dispatch; the schedulers that override it do not.
    {"Lkotlinx/coroutines/CoroutineDispatcher;", "dispatch",
     "(Lkotlin/coroutines/CoroutineContext;Ljava/lang/Runnable;)V", tp::TaskKind::kSubmit, 2,
     kReceiver, kHashCode, kHashCode, Match::kOverrides},
    {"Lkotlinx/coroutines/CoroutineDispatcher;", "dispatchYield",
     "(Lkotlin/coroutines/CoroutineContext;Ljava/lang/Runnable;)V", tp::TaskKind::kSubmit, 2,
     kReceiver, kHashCode, kHashCode, Match::kOverrides},
    {"Lkotlinx/coroutines/DispatchedTask;", "run", "()V", tp::TaskKind::kBegin, kReceiver,
     kNoObject, kHashCode, kHashCode, Match::kAnyClassLoader},
};
inline constexpr size_t kNumTaskMethods = sizeof(kTaskMethods) / sizeof(kTaskMethods[0]);

// How many methods can record at once: the boot class path's rows plus one per class loader
// that defines a kAnyClassLoader row's class and one per override. Beyond it a method is logged
// and records nothing.
inline constexpr size_t kMaxTaskMethods = 64;

// Whether any row has this name: the optimizing compiler's inliner asks for every callee, and
// almost every one is ruled out here, before its signature is built.
constexpr bool IsTaskMethodName(std::string_view name) {
  for (const TaskMethod& m : kTaskMethods) {
    if (name == m.name) {
      return true;
    }
  }
  return false;
}

// The row of a method declared by the class `descriptor`, or -1. `extends(base)` tells whether
// that class is a proper subclass of the class descriptor `base` (a kOverrides row's method).
template <typename Extends>
constexpr int FindTaskMethod(std::string_view descriptor,
                             std::string_view name,
                             std::string_view signature,
                             Extends extends) {
  for (size_t row = 0; row < kNumTaskMethods; ++row) {
    const TaskMethod& m = kTaskMethods[row];
    if (name != m.name || signature != m.signature) {
      continue;
    }
    if (m.match == Match::kOverrides ? extends(std::string_view(m.descriptor))
                                     : descriptor == m.descriptor) {
      return static_cast<int>(row);
    }
  }
  return -1;
}

// The row of a method declared by the class `descriptor`, which overrides none of the table's.
constexpr int FindTaskMethod(std::string_view descriptor,
                             std::string_view name,
                             std::string_view signature) {
  return FindTaskMethod(descriptor, name, signature, [](std::string_view) { return false; });
}

// Reference parameter `param` (1 = the first) of an instance method's `signature`: its type
// descriptor, and its virtual register counted from the method's first in-register, as the dex
// calling convention lays out an instance method's ins: the receiver, then each parameter in
// order, long and double taking two registers. vreg -1 (and no descriptor) for a parameter the
// signature does not have, or for one that is not a reference.
struct ReferenceParameter {
  std::string_view descriptor;
  int vreg;
};

constexpr ReferenceParameter ReferenceParameterOf(std::string_view signature, int param) {
  constexpr ReferenceParameter kNone = {std::string_view(), -1};
  if (signature.empty() || signature[0] != '(') {
    return kNone;
  }
  int vreg = 1;  // after the receiver
  int n = 1;
  size_t i = 1;
  while (i < signature.size() && signature[i] != ')') {
    const char type = signature[i];
    size_t end = i + 1;  // one past this parameter's descriptor
    if (type == '[' || type == 'L') {
      while (end - 1 < signature.size() && signature[end - 1] == '[') {
        ++end;  // array dimensions; the element type follows
      }
      if (end - 1 >= signature.size()) {
        return kNone;
      }
      if (signature[end - 1] == 'L') {
        const size_t semicolon = signature.find(';', end - 1);
        if (semicolon == std::string_view::npos) {
          return kNone;
        }
        end = semicolon + 1;
      }
      if (n == param) {
        return {signature.substr(i, end - i), vreg};
      }
      vreg += 1;
    } else {
      if (n == param) {
        return kNone;  // a primitive carries no identity
      }
      vreg += (type == 'J' || type == 'D') ? 2 : 1;
    }
    ++n;
    i = end;
  }
  return kNone;
}

// The virtual register of `object` (kReceiver or a parameter number) counted from the method's
// first in-register (ReferenceParameterOf). -1 for kNoObject, for a parameter the signature does
// not have, or for one that is not a reference.
constexpr int InRegisterOf(std::string_view signature, int object) {
  if (object == kNoObject) {
    return -1;
  }
  if (object == kReceiver) {
    return 0;
  }
  return ReferenceParameterOf(signature, object).vreg;
}

// Every row names objects its signature has, as references, and only a row of the boot class
// path reads an identity from a field (a field is resolved once, in the boot class path's class):
// checked where the table is built.
constexpr bool TableIsConsistent() {
  if (kNumTaskMethods > kMaxTaskMethods) {
    return false;
  }
  for (size_t row = 0; row < kNumTaskMethods; ++row) {
    const TaskMethod& m = kTaskMethods[row];
    if (m.match != Match::kBootClassPath &&
        (m.task_field.name != nullptr || m.queue_field.name != nullptr)) {
      return false;
    }
    if (InRegisterOf(m.signature, m.task) < 0) {
      return false;
    }
    if (m.queue != kNoObject && InRegisterOf(m.signature, m.queue) < 0) {
      return false;
    }
  }
  return true;
}
static_assert(TableIsConsistent(), "a task method's identity is not a reference it receives");
static_assert(InRegisterOf("(Landroid/os/Message;J)Z", 1) == 1);
static_assert(InRegisterOf("(JLandroid/os/Message;)Z", 2) == 3);
static_assert(InRegisterOf("([[ILjava/lang/Runnable;)V", 2) == 2);
static_assert(InRegisterOf("(Ljava/lang/Thread;Ljava/lang/Runnable;)V", 2) == 2);
static_assert(InRegisterOf("(I)V", 1) == -1);

}  // namespace hubble
}  // namespace art

#endif  // ART_RUNTIME_HUBBLE_TASK_METHODS_H_
