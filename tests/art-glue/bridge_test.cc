/*
 * Hubble for AOSP: runtime/hubble/hubble_bridge.cc and thread_state.cc (compiled from
 * art-patches/files with libart's flags and linked with the real debian/out/libart.so.0, see
 * glue.mk), on real art::Thread objects and ART's real suspend protocol
 * (Thread::ModifySuspendCount, ThreadList::Resume, TransitionFromSuspendedToRunnable,
 * CheckSuspend), with no model of ART in between. See glue_test.h for what stands in for a
 * Runtime. Run by tests/art-glue.sh.
 */
#include <time.h>

#include <algorithm>
#include <cinttypes>

#include "glue_test.h"
#include "hubble/hubble_bridge.h"
#include "scoped_thread_state_change-inl.h"

namespace {

using art::Dex2oatImageTest;
using art::StubTest;
using glue::AttachAndRegister;
using glue::H;
using glue::Mutator;
using glue::StartUp;
using art::Thread;
using art::ThreadState;

uint64_t Now(clockid_t clock) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u + static_cast<uint64_t>(ts.tv_nsec);
}

void ToRunnable(Thread* t) { t->TransitionFromSuspendedToRunnable(); }
void ToNative(Thread* t) { t->TransitionFromRunnableToSuspended(ThreadState::kNative); }

// Before anything installs a Runtime: the control thread cannot attach to none.
GLUE_TEST(attach_without_a_runtime_fails_and_detach_is_harmless) {
  StubTest::StartUp();  // no Runtime installed
  GLUE_CHECK(art::Runtime::Current() == nullptr, "a runtime exists");
  GLUE_CHECK(!art::hubble::AttachCurrentThread("HubbleControl"), "attached without a runtime");
  art::hubble::DetachCurrentThread();
}

GLUE_TEST(the_timer_counts_at_timer_hz_and_the_wall_clock_is_clock_realtime) {
  const uint64_t hz = art::hubble::TimerHz();
  GLUE_CHECK(hz >= 1000000u && hz <= 100000000000u, "TimerHz %" PRIu64 " out of range", hz);
  // Over 200 ms of CLOCK_MONOTONIC, ticks / hz must match within 2%.
  uint64_t n0 = Now(CLOCK_MONOTONIC), t0 = art::hubble::ReadTimer();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  uint64_t t1 = art::hubble::ReadTimer(), n1 = Now(CLOCK_MONOTONIC);
  double timer_s = static_cast<double>(t1 - t0) / static_cast<double>(hz);
  double mono_s = static_cast<double>(n1 - n0) / 1e9;
  GLUE_CHECK(t1 > t0, "the timer did not advance");
  GLUE_CHECK(timer_s > mono_s * 0.98 && timer_s < mono_s * 1.02,
             "timer says %.4f s, CLOCK_MONOTONIC %.4f s", timer_s, mono_s);
  uint64_t w0 = Now(CLOCK_REALTIME), w = art::hubble::WallClockNs(), w1 = Now(CLOCK_REALTIME);
  GLUE_CHECK(w0 <= w && w <= w1, "WallClockNs %" PRIu64 " not within [%" PRIu64 ", %" PRIu64 "]",
             w, w0, w1);
}

// The offset the hot path and the Rust side use (art-patches/thread-offsets.txt, checked against
// the accessors by art-build --touched) is where libart's BlockAddress points, and a new Thread's
// block is all zero (cursor == limit == 0: a thread Hubble never started records nothing).
GLUE_TEST(block_address_is_the_committed_cursor_offset_and_a_new_block_is_zero) {
  StartUp();
  const char* path = std::getenv("GLUE_OFFSETS");
  GLUE_CHECK(path != nullptr, "GLUE_OFFSETS (art-patches/thread-offsets.txt) not set");
  if (path == nullptr) return;
  std::ifstream f(path);
  std::string field;
  long size = 0, offset = -1, want = -1;
  long tid_offset = -1;
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    char name[64];
    if (std::sscanf(line.c_str(), "%63s %ld %ld", name, &size, &offset) == 3 &&
        size == static_cast<long>(sizeof(void*))) {
      if (std::strcmp(name, "hubble_cursor") == 0) want = offset;
      if (std::strcmp(name, "tid") == 0) tid_offset = offset;
    }
  }
  GLUE_CHECK(want > 0, "no hubble_cursor line for %zu-byte pointers in %s", sizeof(void*), path);
  GLUE_CHECK(tid_offset >= 0, "no tid line for %zu-byte pointers in %s", sizeof(void*), path);
  Thread* t = AttachAndRegister("main");
  size_t block = art::hubble::BlockAddress(H(t));
  GLUE_CHECK(static_cast<long>(block - H(t)) == want, "BlockAddress - Thread* = %ld, want %ld",
             static_cast<long>(block - H(t)), want);
  // The pool's block-end functions read the tid there into each block header.
  const uint32_t tid_there = *reinterpret_cast<const uint32_t*>(H(t) + tid_offset);
  GLUE_CHECK(tid_there == static_cast<uint32_t>(t->GetTid()), "Thread+%ld holds %u, GetTid() %d",
             tid_offset, tid_there, t->GetTid());
  const uint64_t* words = reinterpret_cast<const uint64_t*>(block);
  for (int i = 0; i < 5; ++i) GLUE_CHECK(words[i] == 0, "block word %d = %" PRIx64, i, words[i]);
}

#if defined(__x86_64__)
// hubble_pool_take's contract (runtime/hubble/pool_x86_64.S): %gs = the Thread; the slot comes
// back in RCX, every other register is preserved. The CALL and the function's pushes go below
// the red zone this C++ function may be using.
uint64_t CallPoolTake(uint64_t fn) {
  uint64_t slot;
  __asm__ __volatile__("subq $128, %%rsp\n\tcall *%1\n\taddq $128, %%rsp"
                       : "=&c"(slot)
                       : "r"(fn)
                       : "cc", "memory");
  return slot;
}

// The block-end function x86_64 trace points call in many-thread mode, as PoolTakeEntry names
// it, on a real Thread whose %gs ART's Thread::InitCpu set: it reaches the thread's Hubble words
// at the offsets of the tree's asm_defines.h (the emitters' and nterp's), where BlockAddress
// says they are, and stamps each block with Thread::GetTid(). Pool layout: hubble_format::pool
// (header: next ticket, mask, blocks, delay, block bytes, take; block: ident, ticket, time,
// close, state, data).
GLUE_TEST(pool_take_claims_and_seals_blocks_of_the_thread_gs_points_at) {
  StartUp();
  const uint64_t fn = art::hubble::PoolTakeEntry();
  GLUE_CHECK(fn != 0, "PoolTakeEntry is 0 on x86_64");
  constexpr uint64_t kBlocks = 4, kBlockSlots = 9, kDelay = 2, kSealed = 8, kOwned = 1;
  static uint64_t pool[6 + kBlocks * kBlockSlots];
  uint64_t* blocks = pool + 6;
  const uint64_t base = reinterpret_cast<uint64_t>(pool);
  const uint64_t block0 = reinterpret_cast<uint64_t>(blocks);
  const uint64_t block1 = block0 + 8 * kBlockSlots;
  pool[1] = kBlocks - 1;
  pool[2] = block0;
  pool[3] = kDelay;
  pool[4] = 8 * kBlockSlots;
  pool[5] = fn;
  Mutator m("pool");
  uint64_t first = 0, second = 0, limit0 = 0;
  uint64_t words[2][5] = {};
  bool ran = m.Run([&] {
    Thread* t = m.thread();
    StubTest::InitCpu(t);
    uint64_t* w = reinterpret_cast<uint64_t*>(art::hubble::BlockAddress(H(t)));
    // pool::start: no block, seq 0 (cursor, limit, stop, begin, end).
    w[0] = kSealed;
    w[1] = 0;
    w[2] = 0;
    w[3] = base | 1;
    w[4] = 0;
    first = CallPoolTake(fn);
    std::copy(w, w + 5, words[0]);
    limit0 = w[1];
    w[0] = w[1];  // the trace points filled the block up to its limit
    second = CallPoolTake(fn);
    std::copy(w, w + 5, words[1]);
    std::fill(w, w + 5, 0);
  });
  GLUE_CHECK(ran, "the mutator did not run the calls");
  if (!ran) return;
  const uint64_t tid = static_cast<uint32_t>(StubTest::Tid(m.thread()));
  GLUE_CHECK(first == block0 + 40, "first take: slot %#" PRIx64 ", want block 0's data %#" PRIx64,
             first, block0 + 40);
  GLUE_CHECK(words[0][0] == kSealed && words[0][4] == block0 &&
                 words[0][1] == block0 + 8 * kBlockSlots - 8,
             "after the first take: cursor %#" PRIx64 " end %#" PRIx64 " limit %#" PRIx64,
             words[0][0], words[0][4], words[0][1]);
  GLUE_CHECK(second == block1 + 40, "second take: slot %#" PRIx64 ", want block 1's data %#" PRIx64,
             second, block1 + 40);
  GLUE_CHECK(words[1][4] == block1 && words[1][1] == block1 + 8 * kBlockSlots - 8,
             "after the second take: end %#" PRIx64 " limit %#" PRIx64, words[1][4], words[1][1]);
  // Block 0: seq 0 and the tid, ticket 0, a time, closed at the cursor, free from ticket
  // (next at the seal + delay), encoded << 1.
  GLUE_CHECK(blocks[0] == (tid << 32), "block 0 ident %#" PRIx64 ", want tid %" PRIu64 " seq 0",
             blocks[0], tid);
  GLUE_CHECK(blocks[1] == 0 && blocks[2] != 0, "block 0 ticket %" PRIu64 " time %" PRIu64,
             blocks[1], blocks[2]);
  GLUE_CHECK(blocks[3] == limit0, "block 0 close %#" PRIx64 ", want %#" PRIx64, blocks[3], limit0);
  GLUE_CHECK(blocks[4] == (1 + kDelay) << 1, "block 0 state %" PRIu64, blocks[4]);
  // Block 1: seq 1, ticket 1, owned.
  const uint64_t* b1 = blocks + kBlockSlots;
  GLUE_CHECK(b1[0] == (tid << 32 | 1) && b1[1] == 1 && b1[3] == 0 && b1[4] == kOwned,
             "block 1 ident %#" PRIx64 " ticket %" PRIu64 " close %" PRIu64 " state %" PRIu64,
             b1[0], b1[1], b1[3], b1[4]);
  GLUE_CHECK(pool[0] == 2, "tickets taken: %" PRIu64, pool[0]);
}
#endif

GLUE_TEST(thread_is_runnable_follows_arts_own_transitions) {
  StartUp();
  Thread* t = AttachAndRegister("main");
  GLUE_CHECK(!art::hubble::ThreadIsRunnable(H(t)), "a new Thread is kNative, not runnable");
  ToRunnable(t);
  GLUE_CHECK(art::hubble::ThreadIsRunnable(H(t)), "runnable after TransitionFromSuspendedToRunnable");
  ToNative(t);
  GLUE_CHECK(!art::hubble::ThreadIsRunnable(H(t)), "runnable after returning to native");
}

// §6 force stop: while the lock is held, a thread in native cannot become runnable; unlocking
// lets it go and leaves no suspend request.
GLUE_TEST(the_state_lock_holds_a_native_thread_out_of_runnable_until_unlocked) {
  StartUp();
  AttachAndRegister("control");
  Mutator m("target");
  Thread* t = m.thread();
  GLUE_CHECK(art::hubble::LockThreadState(H(t)), "ART refused the request");
  std::atomic<bool> runnable{false};
  m.Post([&] { ToRunnable(t); runnable = true; });
  // It waits on resume_cond_ inside TransitionFromSuspendedToRunnable (thread-inl.h).
  GLUE_CHECK(glue::WaitFor([&] { return StubTest::TransitioningToRunnable(t) &&
                                        glue::InFutexWait(StubTest::Tid(t)); }),
             "the target never waited: the lock did not hold it");
  GLUE_CHECK(!runnable.load() && !art::hubble::ThreadIsRunnable(H(t)), "it became runnable");
  art::hubble::UnlockThreadState(H(t));
  GLUE_CHECK(glue::WaitFor([&] { return runnable.load(); }), "still held after UnlockThreadState");
  GLUE_CHECK(StubTest::SuspendCount(t) == 0, "suspend count %d left", StubTest::SuspendCount(t));
  if (!runnable.load()) StubTest::Release(t);
  m.Run([&] { ToNative(t); });
}

// The force stop's lock race (modelled in rust/runtime/tests/thread_state.rs), now against ART
// itself: the thread turned runnable between the control thread's look and the lock; the
// re-check sees it runnable and undoes the lock. Its next suspend check must pass
// (ThreadList::Resume would refuse a runnable thread and leave the request: an ANR).
GLUE_TEST(undoing_the_lock_of_a_thread_that_turned_runnable_leaves_no_suspend_request) {
  StartUp();
  AttachAndRegister("control");
  Mutator m("target");
  Thread* t = m.thread();
  GLUE_CHECK(!art::hubble::ThreadIsRunnable(H(t)), "the control thread sees it in native");
  m.Run([&] { ToRunnable(t); });  // ...and it returns to managed code
  GLUE_CHECK(art::hubble::LockThreadState(H(t)), "ART refused the request");
  GLUE_CHECK(art::hubble::ThreadIsRunnable(H(t)), "the re-check sees it runnable");
  art::hubble::UnlockThreadState(H(t));
  bool passed = m.Run([&] { t->CheckSuspend(); }, 5000);
  GLUE_CHECK(passed, "parked at its next suspend check: a suspend request leaked (count %d)",
             StubTest::SuspendCount(t));
  if (!passed) {
    StubTest::Release(t);
    glue::WaitFor([&] { return false; }, 100);
  }
  GLUE_CHECK(StubTest::SuspendCount(t) == 0, "suspend count %d", StubTest::SuspendCount(t));
  m.Run([&] { ToNative(t); });
}

// A runnable thread that meets the request at a suspend check parks in kSuspended; unlocking
// (through ThreadList::Resume, which needs Runtime::Current()->GetThreadList()) wakes it.
GLUE_TEST(unlocking_wakes_a_thread_that_parked_at_a_suspend_check) {
  StartUp();
  AttachAndRegister("control");
  Mutator m("target");
  Thread* t = m.thread();
  m.Run([&] { ToRunnable(t); });
  GLUE_CHECK(art::hubble::LockThreadState(H(t)), "ART refused the request");
  std::atomic<bool> passed{false};
  m.Post([&] { t->CheckSuspend(); passed = true; });
  GLUE_CHECK(glue::WaitFor([&] { return t->GetState() == ThreadState::kSuspended &&
                                        StubTest::TransitioningToRunnable(t); }),
             "the target did not park at its suspend check");
  GLUE_CHECK(!passed.load(), "passed the suspend check while locked");
  art::hubble::UnlockThreadState(H(t));
  GLUE_CHECK(glue::WaitFor([&] { return passed.load(); }), "still parked after UnlockThreadState");
  if (!passed.load()) StubTest::Release(t);
  GLUE_CHECK(StubTest::SuspendCount(t) == 0, "suspend count %d", StubTest::SuspendCount(t));
  m.Run([&] { ToNative(t); });
}

// The unload handshake (docs/protocol.md): each completed unload bumps the generation once, the
// unload lock is released after each (a second unload and a resolution can take it), and a
// resolution with a stale generation reads nothing.
GLUE_TEST(unloads_bump_the_generation_and_stale_resolutions_are_refused) {
  StartUp();
  Thread* self = AttachAndRegister("gc");
  const uint64_t g0 = art::hubble::UnloadGeneration();
  {
    // As ClassLinker::CleanupClassLoaders runs it: not runnable, mutator lock held shared.
    art::ReaderMutexLock mu(self, *art::Locks::mutator_lock_);
    art::hubble::ClassLoaderUnloadingWithTable(self, reinterpret_cast<art::LinearAlloc*>(0x1000),
                                               nullptr);
    art::hubble::ClassLoaderUnloadingWithTable(self, reinterpret_cast<art::LinearAlloc*>(0x2000),
                                               nullptr);
  }
  GLUE_CHECK(art::hubble::UnloadGeneration() == g0 + 2, "generation %" PRIu64 ", want %" PRIu64,
             art::hubble::UnloadGeneration(), g0 + 2);
  rust::Vec<rust::String> out;
  std::vector<uint64_t> none;
  rust::Slice<const uint64_t> empty(none.data(), 0);
  GLUE_CHECK(!art::hubble::ResolveMethods(empty, g0, out), "a stale generation was accepted");
  GLUE_CHECK(art::hubble::ResolveMethods(empty, g0 + 2, out), "the current generation refused");
  GLUE_CHECK(out.empty(), "names for no methods");
  GLUE_CHECK(!art::hubble::ThreadIsRunnable(H(self)), "ResolveMethods left the caller runnable");
  rust::Vec<uint64_t> methods;
  art::hubble::LoaderMethods(0x1000, methods);
  GLUE_CHECK(methods.empty(), "LoaderMethods outside ClassLoaderUnloading listed methods");
}

}  // namespace

int main(int argc, char** argv) { return glue::RunAll(argc, argv); }
