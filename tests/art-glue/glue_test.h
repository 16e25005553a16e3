/*
 * Hubble for AOSP: host tests of the ART-side glue (runtime/hubble/ *.cc) against the real,
 * patched libart.so (scripts/art-build --full), compiled with the patched ART headers inside the
 * trixie build root (tests/art-glue.sh).
 *
 * No Runtime can be created here (there is no boot class path), so the tests use ART's own
 * objects without one: Locks::Init and Thread::Startup as Runtime::Init calls them, real
 * art::Thread objects made by libart's constructor (thread.cc 2456), registered in a real
 * ThreadList by ThreadList::Register (thread_list.cc), and, where the glue asks
 * Runtime::Current(), a Runtime built by libart's own constructor (runtime.cc 240) that was never
 * Init()ed: the "minimal stand-in" is the set of fields the tests fill in (thread_list_,
 * is_zygote_, the package name, and zeroed storage for the heap, see Install), nothing of ART
 * is re-implemented. The tests run with
 * "-Xgc:CMC" on their command line, which libart reads at load (mark_compact.cc 156-166, 275):
 * the userfaultfd GC of Android 14 devices, so Register needs no heap (thread_list.cc Register's
 * gUseReadBarrier branch).
 *
 * Line numbers are those of the pristine ART 14 source ($HUBBLE_CACHE/art/pristine).
 *
 * Private members are reached as ART's own tests reach them: Thread and Runtime name some test
 * classes as friends (thread.h `friend class StubTest`, runtime.h `friend class
 * Dex2oatImageTest`); this file defines classes of those names. They are not in libart.
 */
#ifndef HUBBLE_TESTS_ART_GLUE_GLUE_TEST_H_
#define HUBBLE_TESTS_ART_GLUE_GLUE_TEST_H_

#include <execinfo.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/locks.h"
#include "base/mutex.h"
#include "gc/heap.h"
#include "runtime.h"
#include "thread-inl.h"
#include "thread.h"
#include "thread_list.h"

namespace glue {

inline int gFailures = 0;

#define GLUE_CHECK(cond, ...)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "  FAILED %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
      ++::glue::gFailures;                                                     \
    }                                                                          \
  } while (0)

struct TestCase {
  const char* name;
  void (*fn)();
};
inline std::vector<TestCase>& Tests() {
  static std::vector<TestCase> tests;
  return tests;
}
struct Register {
  Register(const char* name, void (*fn)()) { Tests().push_back({name, fn}); }
};
#define GLUE_TEST(name)                                      \
  static void name();                                        \
  static ::glue::Register name##_registered(#name, &name);   \
  static void name()

// A hang is a failure with a name, not a CI timeout: each test has kTestSeconds.
constexpr unsigned kTestSeconds = 20;
inline const char* gCurrent = "";
inline void OnAlarm(int) {
  char msg[256];
  int n = std::snprintf(msg, sizeof(msg), "  FAILED %s: still running after %u s (a hang)\n",
                        gCurrent, kTestSeconds);
  (void)!write(2, msg, n);
  _exit(3);
}

// A crash names its frames (libart has symbols: -g, not stripped).
inline void OnCrash(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  char msg[128];
  int len = std::snprintf(msg, sizeof(msg), "  %s in %s:\n", strsignal(sig), gCurrent);
  (void)!write(2, msg, len);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

// Waits (bounded) for `cond`; false if it never held.
inline bool WaitFor(const std::function<bool()>& cond, int ms = 10000) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

// Whether the kernel thread `tid` of this process is blocked in futex(2) (an ART Mutex or
// ConditionVariable wait): /proc/self/task/<tid>/syscall starts with the syscall number. Where
// that file cannot be read (it needs ptrace access), the thread's state in .../stat: sleeping.
inline bool InFutexWait(pid_t tid) {
  const std::string task = "/proc/self/task/" + std::to_string(tid);
  std::ifstream f(task + "/syscall");
  long nr = -1;
  if (f >> nr) return nr == SYS_futex;
  std::ifstream st(task + "/stat");
  std::string line;
  if (!std::getline(st, line)) return false;
  size_t paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'S';
}

// Each test runs in a child process of its own (fork before any ART state exists), so that a
// crash or a hang is reported with the test's name and no test sees another's threads or globals.
inline int RunAll(int argc, char** argv) {
  bool cmc = false;
  for (int i = 1; i < argc; ++i) cmc |= std::strcmp(argv[i], "-Xgc:CMC") == 0;
  if (!cmc || art::gUseReadBarrier) {
    std::fprintf(stderr, "run with -Xgc:CMC (libart must see it at load: gUseReadBarrier=%d)\n",
                 art::gUseReadBarrier);
    return 2;
  }
  const char* only = std::getenv("GLUE_ONLY");
  int failed_tests = 0, ran = 0;
  for (const TestCase& t : Tests()) {
    if (only != nullptr && std::strstr(t.name, only) == nullptr) continue;
    std::fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
      gCurrent = t.name;
      signal(SIGALRM, OnAlarm);
      signal(SIGSEGV, OnCrash);
      signal(SIGBUS, OnCrash);
      signal(SIGABRT, OnCrash);
      alarm(kTestSeconds);
      t.fn();
      std::fflush(stderr);
      _exit(gFailures == 0 ? 0 : 1);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ++ran;
    bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    failed_tests += ok ? 0 : 1;
    if (WIFSIGNALED(status)) {
      std::fprintf(stderr, "  FAILED %s: killed by signal %d (%s)\n", t.name, WTERMSIG(status),
                   strsignal(WTERMSIG(status)));
    }
    std::fprintf(stderr, "%s %s\n", ok ? "ok    " : "FAILED", t.name);
  }
  std::fprintf(stderr, "%d tests, %d failed\n", ran, failed_tests);
  // With no filter, running nothing is a failure (a broken registration must not pass).
  return (failed_tests == 0 && (ran > 0 || only != nullptr)) ? 0 : 1;
}

}  // namespace glue

namespace art {

// thread.h: `friend class StubTest;  // For accessing entrypoints.`
class StubTest {
 public:
  // ART's start-up order (Runtime::Init: Locks::Init, then Thread::Startup).
  static void StartUp() {
    Locks::Init();
    Thread::Startup();
  }
  // A Thread as libart constructs it (kNative, thread.cc 2456-2487), made the calling pthread's
  // Thread::Current() and given its tid (Thread::Init does both, thread.cc InitTid / self_tls_).
  static Thread* AttachCalling(const char* name, bool daemon = false) {
    Thread* t = new Thread(daemon);
    Thread::self_tls_ = t;
    t->InitTid();
    t->tlsPtr_.pthread_self = pthread_self();
    if (name != nullptr) t->tlsPtr_.name.store(strdup(name), std::memory_order_relaxed);
    return t;
  }
  static void DetachCalling() { Thread::self_tls_ = nullptr; }
  // The thread register at `t` (x86_64: %gs via arch_prctl, then a read of %gs:THREAD_SELF
  // checked; runtime/arch/x86_64/thread_x86_64.cc 42-68), as Thread::Init sets it for every
  // thread ART attaches (thread.cc 977). libart's own function, called, not modelled.
  static void InitCpu(Thread* t) { t->InitCpu(); }
  // ART's name for the thread (what Thread::GetThreadName reads), set as SetCachedThreadName does.
  static void SetName(Thread* t, const char* name) {
    t->tlsPtr_.name.store(strdup(name), std::memory_order_seq_cst);
  }
  static int SuspendCount(Thread* t) {
    MutexLock mu(Thread::Current(), *Locks::thread_suspend_count_lock_);
    return t->tls32_.suspend_count;
  }
  // Set by ScopedTransitioningToRunnable while the thread waits on resume_cond_ in
  // TransitionFromSuspendedToRunnable (thread-inl.h).
  static bool TransitioningToRunnable(Thread* t) {
    return reinterpret_cast<std::atomic<Thread::tls_32bit_sized_values::bool32_t>*>(&t->tls32_.is_transitioning_to_runnable)
        ->load(std::memory_order_seq_cst);
  }
  static pid_t Tid(Thread* t) { return t->tls32_.tid; }
  // Test rescue after a detected leak: lowers the count to 0 and wakes the thread (as
  // ThreadList::Resume does, thread_list.cc 863-874), so the failing test reports instead of
  // hanging.
  static void Release(Thread* t) {
    Thread* self = Thread::Current();
    MutexLock list(self, *Locks::thread_list_lock_);
    MutexLock mu(self, *Locks::thread_suspend_count_lock_);
    while (t->tls32_.suspend_count > 0) {
      (void)!t->ModifySuspendCount(self, -1, nullptr, SuspendReason::kInternal);
    }
    Thread::resume_cond_->Broadcast(self);
  }
};

// runtime.h: `friend class Dex2oatImageTest;`
class Dex2oatImageTest {
 public:
  // Runtime::Current() for the glue: libart's constructor, never Init()ed; a real ThreadList.
  static Runtime* Install() {
    if (Runtime::instance_ == nullptr) {
      Runtime* r = new Runtime();
      r->thread_list_ = new ThreadList(/*thread_suspend_timeout_ns=*/ 10ull * 1000 * 1000 * 1000);
      // Thread's constructor asks the heap whether its sampler is on (Thread::ResetTlab,
      // thread.cc 4592-4594): zeroed storage of a gc::Heap answers false (HeapSampler::enabled_),
      // and no other field of it is read by what these tests run.
      r->heap_ = static_cast<gc::Heap*>(calloc(1, sizeof(gc::Heap)));
      Runtime::instance_ = r;
    }
    return Runtime::instance_;
  }
  static void SetZygote(bool zygote) { Runtime::instance_->is_zygote_ = zygote; }
};

}  // namespace art

namespace glue {

inline size_t H(art::Thread* t) { return reinterpret_cast<size_t>(t); }

// The calling thread, attached and registered as Thread::Init does (Register after Init).
inline art::Thread* AttachAndRegister(const char* name) {
  art::Thread* t = art::StubTest::AttachCalling(name);
  art::Runtime::Current()->GetThreadList()->Register(t);
  return t;
}

inline void StartUp() {
  art::StubTest::StartUp();
  art::Dex2oatImageTest::Install();  // before any Thread is constructed (ResetTlab asks the heap)
}

// A mutator thread whose steps the test drives one at a time (each step runs on that thread).
class Mutator {
 public:
  explicit Mutator(const char* name) : worker_([this, name] { Loop(name); }) {
    WaitFor([this] { return thread_.load() != nullptr; });
  }
  ~Mutator() {
    Post([this] { quit_ = true; });
    worker_.join();
  }
  art::Thread* thread() const { return thread_.load(); }
  // Runs `step` on the mutator; returns without waiting for it to finish.
  void Post(std::function<void()> step) {
    std::lock_guard<std::mutex> g(m_);
    steps_.push_back(std::move(step));
  }
  // Runs `step` on the mutator and waits (bounded) for it: false if it did not finish.
  bool Run(std::function<void()> step, int ms = 10000) {
    // Shared: a step that did not finish in time may finish after Run returned.
    auto done = std::make_shared<std::atomic<bool>>(false);
    Post([done, step] { step(); *done = true; });
    bool finished = WaitFor([done] { return done->load(); }, ms);
    if (!finished) abandoned_ = true;
    return finished;
  }
  bool abandoned() const { return abandoned_; }

 private:
  void Loop(const char* name) {
    pthread_setname_np(pthread_self(), name);  // the kernel's name, as a new thread has it
    thread_ = AttachAndRegister(name);
    while (!quit_) {
      std::function<void()> step;
      {
        std::lock_guard<std::mutex> g(m_);
        if (!steps_.empty()) {
          step = std::move(steps_.front());
          steps_.erase(steps_.begin());
        }
      }
      if (step) {
        step();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }
    art::StubTest::DetachCalling();
  }
  std::atomic<art::Thread*> thread_{nullptr};
  std::mutex m_;
  std::vector<std::function<void()>> steps_;
  bool quit_ = false;
  std::atomic<bool> abandoned_{false};
  std::thread worker_;
};

}  // namespace glue

#endif  // HUBBLE_TESTS_ART_GLUE_GLUE_TEST_H_
