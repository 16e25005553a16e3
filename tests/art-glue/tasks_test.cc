/*
 * Hubble for AOSP: the task record (runtime/hubble/task_hooks.h, tasks.cc) against
 * the real, patched libart.so: real ShadowFrames (ShadowFrame::CreateDeoptimizedFrame,
 * shadow_frame.h 81-93, with SetVRegReference and SetVRegLong as the invoke paths fill a callee's
 * in-registers) holding real mirror::Objects whose identity hash codes libart computes
 * (Object::IdentityHashCode, object.cc: the hash goes into the lock word), written by the hook
 * into a real Thread's Hubble block. What stands in: the ArtMethod*s, which the hook only
 * compares (no class linker here to resolve the framework's), and the objects' memory, zeroed
 * words below 4 GiB (a StackReference is 32 bits) with no class: IdentityHashCode reads and
 * swaps the lock word only. Run by tests/art-glue.sh.
 */
#include <sys/mman.h>

#include <cstring>
#include <initializer_list>
#include <string_view>

#include "glue_test.h"
#include "hubble/hubble_bridge.h"
#include "hubble/task_hooks.h"
#include "hubble/task_methods.h"
#include "hubble/tasks.h"
#include "interpreter/shadow_frame-inl.h"
#include "lock_word.h"
#include "mirror/object-inl.h"
#include "thread_list.h"

namespace {

using art::ShadowFrame;
using art::Thread;
using art::mirror::Object;
namespace tp = art::hubble::tp;
using glue::AttachAndRegister;
using glue::H;
using glue::StartUp;

constexpr size_t kSlots = 64;

// A ring of kSlots in the thread's block, as the control plane starts one: a start record, the
// cursor after it (tp::BlockWord order: cursor, limit, stop, begin, end).
uint64_t* StartRing(Thread* t) {
  static uint64_t ring[kSlots];
  std::memset(ring, 0, sizeof(ring));
  uint64_t* w = reinterpret_cast<uint64_t*>(art::hubble::BlockAddress(H(t)));
  const uint64_t begin = reinterpret_cast<uint64_t>(ring);
  ring[0] = tp::Pack(0, tp::kMarkStart);
  w[tp::kBegin] = begin;
  w[tp::kEnd] = begin + sizeof(ring);
  w[tp::kLimit] = w[tp::kEnd] - 8;
  w[tp::kStop] = 0;
  w[tp::kCursor] = begin + 8;
  return ring;
}

size_t Written(Thread* t, const uint64_t* ring) {
  const uint64_t* w = reinterpret_cast<uint64_t*>(art::hubble::BlockAddress(H(t)));
  return (w[tp::kCursor] - reinterpret_cast<uint64_t>(ring)) / 8;
}

// Zeroed 8-byte objects below 4 GiB: a class reference (unused) and an unlocked lock word.
Object* NewObject() {
  static uint8_t* arena = nullptr;
  static size_t used = 0;
  if (arena == nullptr) {
    arena = static_cast<uint8_t*>(mmap(nullptr, 1 << 16, PROT_READ | PROT_WRITE,
                                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0));
    GLUE_CHECK(arena != MAP_FAILED, "mmap below 4 GiB failed");
  }
  Object* o = reinterpret_cast<Object*>(arena + used);
  used += 16;
  return o;
}

// The table as tasks.cc's Record leaves it: each method appended with its row and sources.
void Publish(std::initializer_list<art::ArtMethod*> methods,
             std::initializer_list<int> rows,
             const art::hubble::TaskSources* sources = nullptr) {
  GLUE_CHECK(methods.size() == rows.size(), "a row for each method");
  size_t i = 0;
  auto row = rows.begin();
  for (art::ArtMethod* m : methods) {
    const art::hubble::TaskSources s =
        sources != nullptr ? sources[i] : art::hubble::TaskSources{art::hubble::kHashSource,
                                                                   art::hubble::kHashSource};
    GLUE_CHECK(art::hubble::AppendTaskMethod(m, *row++, s), "the table is full");
    ++i;
  }
}

art::LockWord::LockState StateOf(Object* o) REQUIRES_SHARED(art::Locks::mutator_lock_) {
  return o->GetLockWord(false).GetState();
}

// MessageQueue.enqueueMessage(Message, long) and then Handler.dispatchMessage(Message) of the
// same (recycled) Message: each record names the objects its method received, with the hash
// codes libart gave them, and only those objects get one.
GLUE_TEST(the_task_hook_reads_real_frames_and_libart_identity_hashes) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  uint64_t* ring = StartRing(self);
  // Distinct addresses the hook compares frames' methods with; never dereferenced.
  alignas(16) static uint8_t fake_methods[3][64];
  art::ArtMethod* enqueue = reinterpret_cast<art::ArtMethod*>(fake_methods[0]);
  art::ArtMethod* dispatch = reinterpret_cast<art::ArtMethod*>(fake_methods[1]);
  art::ArtMethod* other = reinterpret_cast<art::ArtMethod*>(fake_methods[2]);
  const int enqueue_row =
      art::hubble::FindTaskMethod("Landroid/os/MessageQueue;", "enqueueMessage",
                                  "(Landroid/os/Message;J)Z");
  const int dispatch_row = art::hubble::FindTaskMethod("Landroid/os/Handler;", "dispatchMessage",
                                                       "(Landroid/os/Message;)V");
  GLUE_CHECK(enqueue_row >= 0 && dispatch_row >= 0, "rows %d %d", enqueue_row, dispatch_row);
  Publish({dispatch, enqueue}, {dispatch_row, enqueue_row});

  Object* queue = NewObject();
  Object* message = NewObject();
  Object* handler = NewObject();
  Object* bystander = NewObject();
  art::ReaderMutexLock mu(self, *art::Locks::mutator_lock_);
  {
    // enqueueMessage: 2 locals, then the ins: this, msg, when (a long: two registers).
    ShadowFrame* f = ShadowFrame::CreateDeoptimizedFrame(6, enqueue, 0);
    f->SetVRegReference(0, bystander);  // a local: not an argument, never hashed
    f->SetVRegReference(2, queue);
    f->SetVRegReference(3, message);
    f->SetVRegLong(4, 0x1234'5678'9abc'def0);
    art::hubble::TraceTaskOnEntry(self, *f, 4);
    ShadowFrame::DeleteDeoptimizedFrame(f);
  }
  {
    // dispatchMessage: 1 local, then this, msg.
    ShadowFrame* f = ShadowFrame::CreateDeoptimizedFrame(3, dispatch, 0);
    f->SetVRegReference(1, handler);
    f->SetVRegReference(2, message);
    art::hubble::TraceTaskOnEntry(self, *f, 2);
    ShadowFrame::DeleteDeoptimizedFrame(f);
  }
  {
    ShadowFrame* f = ShadowFrame::CreateDeoptimizedFrame(2, other, 0);
    f->SetVRegReference(1, handler);
    art::hubble::TraceTaskOnEntry(self, *f, 1);
    ShadowFrame::DeleteDeoptimizedFrame(f);
  }
  GLUE_CHECK(Written(self, ring) == 5, "%zu slots written, want the start and two records",
             Written(self, ring));
  GLUE_CHECK(StateOf(message) == art::LockWord::kHashCode &&
                 StateOf(queue) == art::LockWord::kHashCode,
             "libart did not store the hash codes in the lock words");
  GLUE_CHECK(StateOf(handler) == art::LockWord::kUnlocked &&
                 StateOf(bystander) == art::LockWord::kUnlocked,
             "an object no record names was hashed");
  const uint32_t m = static_cast<uint32_t>(message->IdentityHashCode());
  const uint32_t q = static_cast<uint32_t>(queue->IdentityHashCode());
  auto check = [&](size_t slot, uint32_t kind, uint32_t task, uint32_t want_queue) {
    const uint64_t payload = ring[slot];
    const uint64_t stamp = ring[slot + 1];
    const uint32_t lo = static_cast<uint32_t>(payload);
    GLUE_CHECK(static_cast<uint32_t>(stamp) == tp::kMarkTask, "slot %zu: no task mark", slot + 1);
    GLUE_CHECK((lo >> 4) == (task & tp::kIdentityMask), "slot %zu: task %#x, want %#x", slot,
               lo >> 4, task);
    GLUE_CHECK((((lo >> 1) & 1u) | (((lo >> 3) & 1u) << 1)) == kind, "slot %zu: kind", slot);
    GLUE_CHECK(static_cast<uint32_t>(payload >> 32) == (want_queue & tp::kIdentityMask),
               "slot %zu: queue %#x, want %#x", slot, static_cast<uint32_t>(payload >> 32),
               want_queue);
  };
  check(1, static_cast<uint32_t>(tp::TaskKind::kSubmit), m, q);
  check(3, static_cast<uint32_t>(tp::TaskKind::kBegin), m, 0);
}

// Objects code synchronizes on are known by a field, never hashed: a hashed lock word makes the
// object's next `synchronized` inflate a monitor (monitor.cc). MessageQueue.enqueueMessage's
// queue by its native queue's address (a long), AsyncTask$SerialExecutor.execute's executor by
// its ArrayDeque (a reference: that object's hash), Thread.start's thread by its id. Each stays
// unlocked, and the record carries the field's identity.
GLUE_TEST(an_object_code_locks_is_known_by_a_field_and_never_hashed) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  uint64_t* ring = StartRing(self);
  alignas(16) static uint8_t fake_methods[3][64];
  art::ArtMethod* enqueue = reinterpret_cast<art::ArtMethod*>(fake_methods[0]);
  art::ArtMethod* execute = reinterpret_cast<art::ArtMethod*>(fake_methods[1]);
  art::ArtMethod* start = reinterpret_cast<art::ArtMethod*>(fake_methods[2]);
  const int enqueue_row = art::hubble::FindTaskMethod(
      "Landroid/os/MessageQueue;", "enqueueMessage", "(Landroid/os/Message;J)Z");
  const int execute_row = art::hubble::FindTaskMethod(
      "Landroid/os/AsyncTask$SerialExecutor;", "execute", "(Ljava/lang/Runnable;)V");
  const int start_row = art::hubble::FindTaskMethod("Ljava/lang/Thread;", "start", "()V");
  GLUE_CHECK(enqueue_row >= 0 && execute_row >= 0 && start_row >= 0, "rows");
  // The table names the fields; tasks.cc resolves their offsets in the classes. Offset 8: the
  // first field after the class reference and the lock word.
  const art::hubble::TaskMethod& row = art::hubble::kTaskMethods[enqueue_row];
  GLUE_CHECK(std::string_view(row.queue_field.name) == "mPtr", "MessageQueue not known by mPtr");
  const art::hubble::IdentitySource hash = art::hubble::kHashSource;
  art::hubble::TaskSources sources[] = {{hash, {8, 'J'}}, {hash, {8, 'L'}}, {{8, 'J'}, hash}};
  Publish({enqueue, execute, start}, {enqueue_row, execute_row, start_row}, sources);

  Object* queue = NewObject();
  Object* message = NewObject();
  Object* executor = NewObject();
  Object* deque = NewObject();
  Object* runnable = NewObject();
  Object* thread = NewObject();
  const uint64_t native_queue = 0x7a3c'5e10'0c40;
  std::memcpy(reinterpret_cast<uint8_t*>(queue) + 8, &native_queue, 8);
  const uint32_t deque_ref = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(deque));
  std::memcpy(reinterpret_cast<uint8_t*>(executor) + 8, &deque_ref, 4);
  const uint64_t tid = 42;
  std::memcpy(reinterpret_cast<uint8_t*>(thread) + 8, &tid, 8);
  art::ReaderMutexLock mu(self, *art::Locks::mutator_lock_);
  {
    ShadowFrame* f = ShadowFrame::CreateDeoptimizedFrame(4, enqueue, 0);  // this, msg, when
    f->SetVRegReference(0, queue);
    f->SetVRegReference(1, message);
    f->SetVRegLong(2, 5);
    art::hubble::TraceTaskOnEntry(self, *f, 4);
    ShadowFrame::DeleteDeoptimizedFrame(f);
  }
  {
    ShadowFrame* f = ShadowFrame::CreateDeoptimizedFrame(2, execute, 0);  // this, r
    f->SetVRegReference(0, executor);
    f->SetVRegReference(1, runnable);
    art::hubble::TraceTaskOnEntry(self, *f, 2);
    ShadowFrame::DeleteDeoptimizedFrame(f);
  }
  {
    ShadowFrame* f = ShadowFrame::CreateDeoptimizedFrame(1, start, 0);  // this
    f->SetVRegReference(0, thread);
    art::hubble::TraceTaskOnEntry(self, *f, 1);
    ShadowFrame::DeleteDeoptimizedFrame(f);
  }
  GLUE_CHECK(Written(self, ring) == 7, "%zu slots written, want the start and three records",
             Written(self, ring));
  GLUE_CHECK(StateOf(queue) == art::LockWord::kUnlocked &&
                 StateOf(executor) == art::LockWord::kUnlocked &&
                 StateOf(thread) == art::LockWord::kUnlocked,
             "an object code locks was hashed: its next lock inflates");
  GLUE_CHECK(StateOf(message) == art::LockWord::kHashCode &&
                 StateOf(deque) == art::LockWord::kHashCode &&
                 StateOf(runnable) == art::LockWord::kHashCode,
             "the tasks and the executor's deque were not hashed");
  auto payload = [&](size_t slot) { return ring[slot]; };
  const uint32_t want_queue = art::hubble::FoldIdentity(native_queue);
  GLUE_CHECK(static_cast<uint32_t>(payload(1) >> 32) == want_queue, "queue %#x, want %#x",
             static_cast<uint32_t>(payload(1) >> 32), want_queue);
  const uint32_t d = static_cast<uint32_t>(deque->IdentityHashCode()) & tp::kIdentityMask;
  GLUE_CHECK(static_cast<uint32_t>(payload(3) >> 32) == d, "executor %#x, want its deque's %#x",
             static_cast<uint32_t>(payload(3) >> 32), d);
  const uint32_t t = (static_cast<uint32_t>(payload(5)) >> 4) & tp::kIdentityMask;
  GLUE_CHECK(t == art::hubble::FoldIdentity(tid), "thread %#x, want %#x", t,
             art::hubble::FoldIdentity(tid));
}

// The bridge's entry on a runtime that never started (no class linker to resolve the framework's
// methods with) returns 0 and publishes nothing, instead of crashing the app.
GLUE_TEST(start_task_records_without_a_started_runtime_does_nothing) {
  StartUp();
  AttachAndRegister("control");
  const size_t before = art::hubble::gTaskMethodCount.load();
  GLUE_CHECK(art::hubble::StartTaskRecords() == 0, "task records started without a runtime");
  GLUE_CHECK(art::hubble::gTaskMethodCount.load() == before, "the table changed");
}

// A process debuggable from its start gets no task records (a debugger's breakpoint in a task
// method would deoptimize it twice: Instrumentation::Deoptimize CHECKs against that). Decided
// before anything else: this runtime has no class linker, which the resolution would need.
GLUE_TEST(a_debuggable_process_gets_no_task_records) {
  StartUp();
  Thread* self = AttachAndRegister("control");
  art::Runtime::Current()->SetRuntimeDebugState(
      art::Runtime::RuntimeDebugState::kJavaDebuggableAtInit);
  GLUE_CHECK(art::hubble::InstallTaskRecords(self) == 0, "task records in a debuggable process");
  GLUE_CHECK(art::hubble::gTaskMethodCount.load() == 0, "the table was published");
}

// The JIT zygote's remap (Jit::MapBootImageMethods, under ScopedSuspendAll in RunPollingThread)
// puts the zygote's entry points back into the boot image's methods: the hook right after it
// points every published task method at the interpreter bridge again (before it, their records
// silently stopped), and leaves one already there as it is.
GLUE_TEST(the_jit_zygote_remap_leaves_the_task_methods_interpreted) {
  StartUp();
  AttachAndRegister("BootImagePollingThread");
  alignas(16) static uint8_t storage[2][sizeof(art::ArtMethod)];
  art::ArtMethod* remapped = new (storage[0]) art::ArtMethod();
  art::ArtMethod* kept = new (storage[1]) art::ArtMethod();
  // Any address stands for the bridge: the hook is given it (jit.cc passes
  // GetQuickToInterpreterBridge(), hidden in libart).
  const void* bridge = reinterpret_cast<const void*>(0x7000'2000);
  const void* zygote_code = reinterpret_cast<const void*>(0x7000'1000);
  remapped->SetEntryPointFromQuickCompiledCode(zygote_code);
  kept->SetEntryPointFromQuickCompiledCode(bridge);
  Publish({remapped, kept}, {0, 1});
  {
    art::ScopedSuspendAll ssa("the remap");
    art::hubble::OnBootImageMethodsRemapped(bridge);
  }
  GLUE_CHECK(remapped->GetEntryPointFromQuickCompiledCode() == bridge,
             "a task method runs the zygote's compiled code after the remap");
  GLUE_CHECK(kept->GetEntryPointFromQuickCompiledCode() == bridge, "the other one moved");
}

}  // namespace

int main(int argc, char** argv) { return glue::RunAll(argc, argv); }
