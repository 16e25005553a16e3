/*
 * Hubble for AOSP: runtime/hubble/lifecycle.cc (compiled from art-patches/files with libart's
 * flags, see glue.mk) against the real libart.so: real Threads in a real ThreadList, ART's
 * thread_list_lock_, Thread::GetThreadName, FindThreadByTid, and a Runtime that libart
 * constructed but never started (glue_test.h). What stands in is the other side of the bridge:
 * the Rust control plane's entry points (RuntimeStarted, ThreadAttached, ...) are recorded here,
 * which is what lets a test see a Thread* handed to Rust that Rust will never hear of again.
 * Run by tests/art-glue.sh.
 */
#include <mutex>
#include <set>

#include "glue_test.h"
#include "hubble/hubble_bridge.h"
#include "hubble/lifecycle.h"
#include "hubble/runtime_bridge.rs.h"

namespace {

struct Event {
  std::string kind;
  size_t thread;
  uint32_t tid;
  std::string name;
  bool is_ui;
  bool on_itself = false;
};

std::mutex gMu;
std::vector<Event> gEvents;
std::atomic<bool> gEnabled{true};
std::atomic<bool> gHoldFirstReport{false}, gHeld{false}, gRelease{false};
std::string gStartedWith;

void Record(Event e) {
  std::lock_guard<std::mutex> g(gMu);
  gEvents.push_back(std::move(e));
}
std::vector<Event> Events() {
  std::lock_guard<std::mutex> g(gMu);
  return gEvents;
}
size_t Count(const std::string& kind) {
  size_t n = 0;
  for (const Event& e : Events()) n += e.kind == kind ? 1 : 0;
  return n;
}
std::string S(rust::Str s) { return std::string(s.data(), s.size()); }

// What the control plane holds after the events so far: the threads reported attached and not
// detached since (rust/runtime/src/control.rs: thread_attached queues, thread_detached removes).
std::set<size_t> Registry() {
  std::set<size_t> live;
  for (const Event& e : Events()) {
    if (e.kind == "attached") live.insert(e.thread);
    if (e.kind == "detached") live.erase(e.thread);
  }
  return live;
}

}  // namespace

// The Rust side of the bridge (declarations: the generated hubble/runtime_bridge.rs.h).
namespace art {
namespace hubble {
bool RuntimeStarted(rust::Str package, rust::Str process, rust::Str data_dir) noexcept {
  {
    std::lock_guard<std::mutex> g(gMu);
    gStartedWith = S(package) + "|" + S(process) + "|" + S(data_dir);
  }
  Record({"started", 0, 0, S(package), false});
  return gEnabled.load();
}
void ThreadAttached(size_t thread, uint32_t tid, rust::Str name, bool is_ui,
                    bool on_itself) noexcept {
  // A report on the thread itself may start tracing it, which takes the control plane's registry
  // lock: never under thread_list_lock_ (the control thread takes that lock holding the registry).
  if (on_itself && art::Locks::thread_list_lock_->IsExclusiveHeld(art::Thread::Current())) {
    Record({"attached-itself-under-thread-list-lock", thread, tid, S(name), is_ui, on_itself});
  }
  Record({"attached", thread, tid, S(name), is_ui, on_itself});
  // A test can hold the start inside its report of the first thread (thread_list_lock_ held).
  if (gHoldFirstReport.exchange(false)) {
    gHeld = true;
    while (!gRelease.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}
void ThreadDetached(size_t thread) noexcept { Record({"detached", thread, 0, "", false}); }
bool ThreadRenamed(size_t thread, rust::Str name) noexcept {
  Record({"renamed", thread, 0, S(name), false});
  return S(name).rfind("HUBBLE:", 0) == 0;
}
void ThreadForeground(size_t thread) noexcept { Record({"foreground", thread, 0, "", false}); }
void SigQuitReceived() noexcept { Record({"sigquit", 0, 0, "", false}); }
}  // namespace hubble
}  // namespace art

namespace {

using art::Thread;
using glue::AttachAndRegister;
using glue::H;
using glue::Mutator;
using glue::StartUp;

// The app process after fork: not the zygote, package and data directory set
// (VMRuntime.setProcessPackageName / setProcessDataDirectory, patch 0024).
void AppProcess(const char* package = "com.example.app") {
  art::Runtime* r = art::Runtime::Current();
  art::Dex2oatImageTest::SetZygote(false);
  r->SetProcessPackageName(package);
  r->SetProcessDataDirectory("/data/user/0/com.example.app");
}

GLUE_TEST(in_the_zygote_nothing_reaches_rust) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess();
  art::Dex2oatImageTest::SetZygote(true);
  art::hubble::OnProcessStarted(self);
  GLUE_CHECK(Events().empty(), "%zu events from the zygote", Events().size());
  GLUE_CHECK(!art::hubble::gStarted.load(), "started in the zygote");
}

GLUE_TEST(without_a_package_nothing_reaches_rust) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess("");
  art::hubble::OnProcessStarted(self);
  GLUE_CHECK(Events().empty(), "%zu events without a package", Events().size());
}

GLUE_TEST(a_process_hubble_does_not_trace_reports_nothing_after_asking) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess();
  gEnabled = false;
  art::hubble::OnProcessStarted(self);
  GLUE_CHECK(Count("started") == 1, "RuntimeStarted called %zu times", Count("started"));
  Mutator m("worker");
  m.Run([&] { art::hubble::OnThreadAttached(m.thread()); });
  GLUE_CHECK(!art::hubble::OnThreadRenaming(self, "HUBBLE:start"), "a command in an untraced process");
  art::hubble::OnProcessStateChanged(art::ProcessState::kProcessStateJankPerceptible);
  m.Run([&] { art::hubble::OnThreadDetaching(m.thread()); });
  GLUE_CHECK(Events().size() == 1, "%zu events after RuntimeStarted said no", Events().size() - 1);
}

// Every thread in the list is reported once, with its tid and ART's name for it; the one whose
// tid is the pid (this process's main thread) as the UI thread.
GLUE_TEST(start_reports_every_registered_thread_once_with_the_main_thread_as_ui) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess();
  Mutator a("worker-a"), b("worker-b");
  art::hubble::OnProcessStarted(self);
  GLUE_CHECK(art::hubble::gStarted.load(), "not started");
  GLUE_CHECK(gStartedWith == "com.example.app|com.example.app|/data/user/0/com.example.app",
             "RuntimeStarted(%s)", gStartedWith.c_str());
  struct Want { Thread* t; const char* name; bool ui; };
  for (const Want& w : {Want{self, "main", true}, Want{a.thread(), "worker-a", false},
                        Want{b.thread(), "worker-b", false}}) {
    size_t n = 0;
    for (const Event& e : Events()) {
      if (e.kind != "attached" || e.thread != H(w.t)) continue;
      ++n;
      GLUE_CHECK(e.tid == static_cast<uint32_t>(art::StubTest::Tid(w.t)), "%s: tid %u", w.name, e.tid);
      GLUE_CHECK(e.name == w.name, "%s reported as '%s'", w.name, e.name.c_str());
      GLUE_CHECK(e.is_ui == w.ui, "%s: is_ui %d", w.name, e.is_ui);
      GLUE_CHECK(!e.on_itself, "%s: the start's report (under thread_list_lock_) said on_itself",
                 w.name);
    }
    GLUE_CHECK(n == 1, "%s reported %zu times", w.name, n);
  }
  GLUE_CHECK(Count("attached") == 3, "%zu threads reported, 3 registered", Count("attached"));
  GLUE_CHECK(getpid() == art::StubTest::Tid(self), "the test's main thread is not the process's");
}

// After the start, each hook forwards its event (and only the foreground state names the UI
// thread); class-loader unloading reaches the bridge's unload handshake.
GLUE_TEST(after_the_start_each_hook_forwards_its_event) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess();
  art::hubble::OnProcessStarted(self);
  const size_t reported = Events().size();
  Mutator m("kernel-name");
  m.Run([&] { art::hubble::OnThreadAttached(m.thread()); });
  auto ev = Events();
  GLUE_CHECK(ev.size() == reported + 1 && ev.back().kind == "attached" &&
                 ev.back().thread == H(m.thread()) && ev.back().name == "kernel-name" &&
                 !ev.back().is_ui && ev.back().on_itself,
             "attach not forwarded as such");
  GLUE_CHECK(Count("attached-itself-under-thread-list-lock") == 0,
             "a thread reported itself under thread_list_lock_");
  GLUE_CHECK(art::hubble::OnThreadRenaming(m.thread(), "HUBBLE:start"), "a command was not kept");
  GLUE_CHECK(!art::hubble::OnThreadRenaming(m.thread(), "plain"), "a plain name was swallowed");
  GLUE_CHECK(!art::hubble::OnThreadRenaming(m.thread(), nullptr), "a null name was swallowed");
  GLUE_CHECK(Count("renamed") == 2, "%zu renames forwarded, want 2", Count("renamed"));
  art::hubble::OnProcessStateChanged(art::ProcessState::kProcessStateJankImperceptible);
  GLUE_CHECK(Count("foreground") == 0, "background state made a thread foreground");
  art::hubble::OnProcessStateChanged(art::ProcessState::kProcessStateJankPerceptible);
  ev = Events();
  GLUE_CHECK(Count("foreground") == 1 && ev.back().thread == H(self),
             "the UI thread was not made foreground");
  const uint64_t g0 = art::hubble::UnloadGeneration();
  {
    art::ReaderMutexLock mu(self, *art::Locks::mutator_lock_);
    art::hubble::OnClassLoaderUnloading(self, reinterpret_cast<art::LinearAlloc*>(0x1000), nullptr);
  }
  GLUE_CHECK(art::hubble::UnloadGeneration() == g0 + 1, "the unload did not reach the bridge");
  m.Run([&] { art::hubble::OnThreadDetaching(m.thread()); });
  GLUE_CHECK(Registry().count(H(m.thread())) == 0, "a detached thread is still registered");
}

// SignalCatcher::HandleSigQuit calls OnSigQuit first (patch 0027), on the signal catcher thread,
// before its dump: Runtime::DumpForSigQuit runs ThreadList::Dump's checkpoint (thread_list_lock_,
// thread_suspend_count_lock_) and readers of the mutator lock, and a GC or SuspendAll may hold
// the mutator lock exclusively meanwhile. Before the start nothing reaches Rust; after it, every
// SIGQUIT is one SigQuitReceived, and it is made while another thread holds all three of those
// locks (the mutator lock exclusively): the hook waits for none of them.
GLUE_TEST(sigquit_reaches_rust_after_the_start_and_waits_for_no_lock_the_dump_takes) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess();
  glue::Mutator catcher("Signal Catcher");
  GLUE_CHECK(catcher.Run([] { art::hubble::OnSigQuit(); }), "OnSigQuit did not return");
  GLUE_CHECK(Count("sigquit") == 0, "SIGQUIT reached Rust before the control plane started");
  art::hubble::OnProcessStarted(self);
  GLUE_CHECK(catcher.Run([] { art::hubble::OnSigQuit(); }), "OnSigQuit did not return");
  GLUE_CHECK(Count("sigquit") == 1, "%zu SigQuitReceived after one SIGQUIT", Count("sigquit"));
  art::Locks::mutator_lock_->ExclusiveLock(self);
  art::Locks::thread_list_lock_->ExclusiveLock(self);
  art::Locks::thread_suspend_count_lock_->ExclusiveLock(self);
  const bool returned = catcher.Run([] { art::hubble::OnSigQuit(); }, 5000);
  art::Locks::thread_suspend_count_lock_->ExclusiveUnlock(self);
  art::Locks::thread_list_lock_->ExclusiveUnlock(self);
  art::Locks::mutator_lock_->ExclusiveUnlock(self);
  GLUE_CHECK(returned, "OnSigQuit waited for a lock that the stack dump takes");
  GLUE_CHECK(Count("sigquit") == 2, "%zu SigQuitReceived after two SIGQUITs", Count("sigquit"));
}

// Thread::Destroy calls OnThreadDetaching first and then runs on (managed code, callbacks) while
// the thread stays in the list until ThreadList::Unregister removes and deletes it. A thread that
// began detaching before the control plane started must not be reported by the start: nothing
// would ever tell Rust that its Thread* was freed.
GLUE_TEST(a_thread_that_began_detaching_before_the_start_is_not_left_registered) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess();
  Mutator dying("dying");
  dying.Run([&] { art::hubble::OnThreadDetaching(dying.thread()); });
  art::hubble::OnProcessStarted(self);
  GLUE_CHECK(Registry().count(H(dying.thread())) == 0,
             "a detaching thread was reported attached and will never be reported detached "
             "(its Thread* dangles in the control plane)");
  GLUE_CHECK(Registry().count(H(self)) == 1, "the main thread was not reported");
}

// `dying` detaches on its own thread (its hook posted) while the start is held up; returns once
// the hook has returned or waits on a futex (behind the start's lock). `entered` and `detached`
// (the test's: the hook may outlive this call) say how far it got.
void DetachWhileTheStartIsHeld(Mutator& dying, std::atomic<bool>& entered,
                               std::atomic<bool>& detached) {
  dying.Post([&] {
    entered = true;
    art::hubble::OnThreadDetaching(dying.thread());
    detached = true;
  });
  glue::WaitFor([&] {
    return entered.load() &&
           (detached.load() || glue::InFutexWait(art::StubTest::Tid(dying.thread())));
  });
}

// Once the start is let go: it and the detach both end, and the detaching thread is not left
// registered (`why`: what it would mean), the main thread `self` is.
void CheckNotLeftRegistered(Thread* self, Mutator& dying, const std::atomic<bool>& started,
                            const std::atomic<bool>& detached, const char* why) {
  GLUE_CHECK(glue::WaitFor([&] { return started.load() && detached.load(); }), "hung");
  GLUE_CHECK(Registry().count(H(dying.thread())) == 0, "%s", why);
  GLUE_CHECK(Registry().count(H(self)) == 1, "the main thread was not reported");
}

// The same while the start is under way: the detaching thread runs its hook after
// RuntimeStarted and before the start reports the list (held up here on thread_list_lock_).
// Whatever the order, it must end up not registered.
GLUE_TEST(a_thread_detaching_while_the_start_reports_is_not_left_registered) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess();
  Mutator dying("dying"), starter("starter");
  art::Locks::thread_list_lock_->ExclusiveLock(self);
  std::atomic<bool> started{false}, detached{false};
  starter.Post([&] { art::hubble::OnProcessStarted(starter.thread()); started = true; });
  bool blocked = glue::WaitFor([&] {
    return Count("started") == 1 && glue::InFutexWait(art::StubTest::Tid(starter.thread()));
  });
  GLUE_CHECK(blocked, "the start did not reach thread_list_lock_");
  std::atomic<bool> entered{false};
  DetachWhileTheStartIsHeld(dying, entered, detached);
  art::Locks::thread_list_lock_->ExclusiveUnlock(self);
  CheckNotLeftRegistered(self, dying, started, detached,
                         "a detaching thread was left registered (reported attached after its "
                         "detach)");
}

// The same while the start is inside its reports (held here in the report of the first thread,
// under thread_list_lock_): a thread that detaches then must not be reported after its detach.
GLUE_TEST(a_thread_detaching_while_the_start_is_inside_its_reports_is_not_left_registered) {
  StartUp();
  Thread* self = AttachAndRegister("main");  // first in the list: its report is held
  AppProcess();
  Mutator dying("dying"), starter("starter");
  gHoldFirstReport = true;
  std::atomic<bool> started{false}, entered{false}, detached{false};
  starter.Post([&] { art::hubble::OnProcessStarted(starter.thread()); started = true; });
  GLUE_CHECK(glue::WaitFor([&] { return gHeld.load(); }), "the start reported nothing");
  DetachWhileTheStartIsHeld(dying, entered, detached);
  gRelease = true;
  CheckNotLeftRegistered(self, dying, started, detached,
                         "a thread that detached during the reports was reported after its "
                         "detach");
}

// Thread names reach ART as modified UTF-8 (Thread.setName -> GetStringUTFChars: a supplementary
// character as two 3-byte surrogates, U+0000 as C0 80), and the kernel's copy is cut at 15 bytes
// (art::SetThreadName), possibly inside a character; rust::Str accepts only UTF-8 (cxx aborts the
// process otherwise). Names are handed over as UTF-8: surrogate pairs joined, anything else that
// is not UTF-8 replaced by U+FFFD.
GLUE_TEST(names_that_are_not_utf8_reach_rust_as_utf8) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess();
  // U+1F600 is D83D DE00 in UTF-16: ED A0 BD ED B8 80 in modified UTF-8, F0 9F 98 80 in UTF-8.
  const char* modified = "\xed\xa0\xbd\xed\xb8\x80 worker";
  const std::string utf8 = "\xf0\x9f\x98\x80 worker";
  const std::string fffd = "\xef\xbf\xbd";
  Mutator listed("listed");
  art::StubTest::SetName(listed.thread(), modified);
  art::hubble::OnProcessStarted(self);
  std::string reported = "(none)";
  for (const Event& e : Events()) {
    if (e.kind == "attached" && e.thread == H(listed.thread())) reported = e.name;
  }
  GLUE_CHECK(reported == utf8, "GetThreadName's modified UTF-8 reported as '%s'", reported.c_str());
  GLUE_CHECK(!art::hubble::OnThreadRenaming(self, modified), "a plain name was swallowed");
  GLUE_CHECK(Events().back().kind == "renamed" && Events().back().name == utf8,
             "renamed to '%s'", Events().back().name.c_str());
  // Cut inside a character (C3 A9 is U+00E9), a lone surrogate, U+0000, a stray continuation.
  const struct { const char* in; std::string want; } cases[] = {
      {"abcdefghijklmn\xc3", "abcdefghijklmn" + fffd},
      {"x\xed\xa0\xbdy", "x" + fffd + "y"},
      {"a\xc0\x80" "b", "a" + fffd + "b"},
      {"\x80\xc3\xa9", fffd + "\xc3\xa9"},
  };
  for (const auto& c : cases) {
    art::hubble::OnThreadRenaming(self, c.in);
    GLUE_CHECK(Events().back().name == c.want, "'%s' forwarded as '%s'", c.in,
               Events().back().name.c_str());
  }
  // The kernel's name of a thread that attaches later, cut at 15 bytes inside a character.
  Mutator late("late");
  late.Run([&] {
    pthread_setname_np(pthread_self(), "abcdefghijklmn\xc3");
    art::hubble::OnThreadAttached(late.thread());
  });
  GLUE_CHECK(Events().back().kind == "attached" && Events().back().name == "abcdefghijklmn" + fffd,
             "kernel name forwarded as '%s'", Events().back().name.c_str());
}

std::string Hex(const std::string& s) {
  std::string h;
  char b[4];
  for (unsigned char c : s) {
    std::snprintf(b, sizeof(b), "%02x ", c);
    h += b;
  }
  return h;
}

// Rust's own judgement of UTF-8 (std::str::from_utf8, through cxx's runtime in libart: what
// rust::Str's constructor asks before it aborts), as the independent reference.
extern "C" bool cxxbridge1$str$from(rust::Str* self, const char* ptr, std::size_t len) noexcept;
bool IsUtf8(const std::string& s) {
  rust::Str str;
  return cxxbridge1$str$from(&str, s.data(), s.size());
}

// Random names, half of them random bytes that start or continue multi-byte characters, half
// random characters encoded as UTF-8: every one reaches Rust as UTF-8, and a name that already is
// UTF-8 arrives unchanged.
GLUE_TEST(every_byte_string_reaches_rust_as_utf8_and_utf8_unchanged) {
  StartUp();
  Thread* self = AttachAndRegister("main");
  AppProcess();
  art::hubble::OnProcessStarted(self);
  const uint8_t alphabet[] = {'a', 0x7f, 0x80, 0x9f, 0xa0, 0xbf, 0xc0, 0xc2, 0xc3, 0xdf, 0xe0,
                              0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0xbd, 0xb8, 0x9e};
  uint64_t x = 0x9e3779b97f4a7c15u;
  size_t valid_inputs = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string in;
    x ^= x << 13; x ^= x >> 7; x ^= x << 17;
    int len = 1 + static_cast<int>(x % 12);
    const bool bytes = (round % 2) == 0;
    for (int k = 0; k < len; ++k) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      if (bytes) {
        in.push_back(static_cast<char>(alphabet[x % sizeof(alphabet)]));
        continue;
      }
      // A scalar value of 1, 2, 3 or 4 bytes (no surrogate), encoded by the definition.
      const uint32_t limits[] = {0x7f, 0x7ff, 0xffff, 0x10ffff};
      uint32_t c = 1 + static_cast<uint32_t>((x >> 8) % limits[x % 4]);
      if (c >= 0xd800 && c <= 0xdfff) c -= 0x800;
      if (c < 0x80) {
        in.push_back(static_cast<char>(c));
      } else if (c < 0x800) {
        in.push_back(static_cast<char>(0xc0 | (c >> 6)));
        in.push_back(static_cast<char>(0x80 | (c & 0x3f)));
      } else if (c < 0x10000) {
        in.push_back(static_cast<char>(0xe0 | (c >> 12)));
        in.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
        in.push_back(static_cast<char>(0x80 | (c & 0x3f)));
      } else {
        in.push_back(static_cast<char>(0xf0 | (c >> 18)));
        in.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3f)));
        in.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3f)));
        in.push_back(static_cast<char>(0x80 | (c & 0x3f)));
      }
    }
    art::hubble::OnThreadRenaming(self, in.c_str());
    const std::string out = Events().back().name;
    if (!IsUtf8(out)) {
      GLUE_CHECK(false, "round %d: output not UTF-8", round);
      break;
    }
    if (IsUtf8(in)) {
      ++valid_inputs;
      if (out != in) {
        GLUE_CHECK(false, "round %d: UTF-8 input %s changed to %s", round, Hex(in).c_str(),
                   Hex(out).c_str());
        break;
      }
    }
    std::lock_guard<std::mutex> g(gMu);
    gEvents.pop_back();
  }
  GLUE_CHECK(valid_inputs >= 10000, "only %zu inputs were UTF-8: the generator is off",
             valid_inputs);
}

}  // namespace

int main(int argc, char** argv) { return glue::RunAll(argc, argv); }
