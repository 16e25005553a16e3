// Host replay of the interpreter's C++ trace point (art-patches/files/runtime/hubble/
// trace_point.h, compiled unchanged) against a fake per-thread block laid out like
// Thread::tlsPtr_.hubble_{cursor,limit,stop,begin,end}.
//
// stdin:  "mode 64|32", "slots N", then one op per line:
//           start TS      control thread: (re)start at the published end (or begin)
//           entry PTR TS  traced thread: method entry (PTR hex)
//           exit TS       traced thread: method exit
//           task K TASK QUEUE TS   traced thread: a task record (K: the kind's code 0-3; hex ids)
//           stop          control thread: request stop (stop = 1, limit = 0: the doorbell)
//           stale         control thread: limit = 0 WITHOUT a stop request (stale-limit path)
//           relimit       control thread: limit back to its real value
// stdout: "cursor <byte offset or -1 if 0>", "stop <0|1|byte offset>", then every slot in hex.
#include <sys/mman.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "runtime/hubble/trace_point.h"

// A popped frame gets an exit only where its code wrote the entry. Compiled code
// traces on arm64, arm, x86_64 and x86 (0012, 0013, 0015), nterp on arm64, arm, x86_64 and x86
// (0023); riscv64 neither; inlined callees never. Before, the unwinder wrote an exit for every
// compiled frame on every ISA: x86/x86_64 traces had exits without entries.
namespace isa_table {
using art::hubble::tp::Isa;
using art::hubble::tp::QuickFrameKind;
using art::hubble::tp::QuickFrameTracedItsEntry;
constexpr QuickFrameKind kC = QuickFrameKind::kCompiled;
constexpr QuickFrameKind kN = QuickFrameKind::kNterp;
static_assert(QuickFrameTracedItsEntry(Isa::kArm64, kC, false), "arm64 compiled");
static_assert(QuickFrameTracedItsEntry(Isa::kArm, kC, false), "arm compiled");
static_assert(QuickFrameTracedItsEntry(Isa::kX86_64, kC, false), "x86_64 compiled (0015)");
static_assert(QuickFrameTracedItsEntry(Isa::kX86, kC, false), "x86 compiled (0015)");
static_assert(!QuickFrameTracedItsEntry(Isa::kRiscv64, kC, false), "riscv64 compiled");
static_assert(QuickFrameTracedItsEntry(Isa::kArm64, kN, false), "arm64ng nterp");
static_assert(QuickFrameTracedItsEntry(Isa::kArm, kN, false), "armng nterp");
static_assert(QuickFrameTracedItsEntry(Isa::kX86_64, kN, false), "x86_64ng nterp");
static_assert(QuickFrameTracedItsEntry(Isa::kX86, kN, false), "x86ng nterp");
static_assert(!QuickFrameTracedItsEntry(Isa::kArm64, kC, true), "inlined: never entered");
static_assert(!QuickFrameTracedItsEntry(Isa::kArm64, kN, true), "inlined: never entered");

// OSR from nterp: NterpHotMethod (runtime/interpreter/mterp/nterp.cc 601-630) returns the
// OsrData that jit->PrepareForOsr made (622-626); nterp's hotness handler then drops its own
// frame and jumps into the OSR code (x86_64ng/main.S 2202-2238: `jne 3f`, `jmp *%rbx`; the
// other ISAs' main.S alike), whose return goes straight to nterp's caller. The frame's records:
// nterp's entry macro wrote its entry where nterp is traced, the OSR code's HTraceExit writes
// its exit where compiled code is traced, and the hook in NterpHotMethod (0026) writes it where
// only nterp is. One entry, one exit, or neither, on every ISA.
using art::hubble::tp::CompiledCodeTraced;
using art::hubble::tp::NterpOsrEndsFrame;
constexpr int OsrFrameBalance(Isa isa) {
  return int{QuickFrameTracedItsEntry(isa, kN, false)} - int{NterpOsrEndsFrame(isa)} -
         int{CompiledCodeTraced(isa)};
}
static_assert(OsrFrameBalance(Isa::kArm64) == 0, "arm64: the OSR code writes the exit");
static_assert(OsrFrameBalance(Isa::kArm) == 0, "arm: the OSR code writes the exit");
static_assert(OsrFrameBalance(Isa::kX86_64) == 0, "x86_64: the OSR code writes the exit");
static_assert(OsrFrameBalance(Isa::kX86) == 0, "x86: the OSR code writes the exit");
static_assert(OsrFrameBalance(Isa::kRiscv64) == 0, "riscv64: neither");
}  // namespace isa_table

namespace {

uint32_t g_ts = 0;
// The tid the pool path would read (unused in ring mode, which this driver replays).
const uint32_t kTid = 4242;
struct ScriptedClock {
  static uint64_t Read() { return (uint64_t{0xabcd} << 32) | g_ts; }  // upper half ignored
};

template <typename Word>
int Run(size_t slots) {
  namespace tp = art::hubble::tp;
  const size_t bytes = slots * 8;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  if (sizeof(Word) == 4) flags |= MAP_32BIT;  // 32-bit mode: ring addresses fit a Word
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (mem == MAP_FAILED) { perror("mmap"); return 2; }
  const uintptr_t base = reinterpret_cast<uintptr_t>(mem);
  if (sizeof(Word) == 4 && (base >> 32) != 0) { fprintf(stderr, "ring above 4 GiB\n"); return 2; }
  Word block[tp::kBlockWords] = {};
  const Word begin = static_cast<Word>(base);
  const Word end = static_cast<Word>(base + bytes);
  const Word real_limit = sizeof(Word) == 8 ? end - 8 : end;
  block[tp::kBegin] = begin;
  block[tp::kEnd] = end;
  char op[32];
  while (scanf("%31s", op) == 1) {
    std::string o(op);
    if (o == "start") {
      unsigned ts; if (scanf("%u", &ts) != 1) return 3;
      Word pos = block[tp::kStop] > 1 ? block[tp::kStop] : begin;
      if (pos >= real_limit) {
        if (pos != end) tp::WriteSlot(pos, tp::Pack(0, tp::kMarkPad));
        pos = begin;
      }
      tp::WriteSlot(pos, tp::Pack(ts, tp::kMarkStart));
      block[tp::kStop] = 0;
      block[tp::kLimit] = real_limit;
      block[tp::kCursor] = pos + 8;
    } else if (o == "entry") {
      uint64_t ptr; unsigned ts;
      if (scanf("%" SCNx64 " %u", &ptr, &ts) != 2) return 3;
      g_ts = ts;
      tp::Entry<Word, ScriptedClock>(block, static_cast<Word>(ptr), &kTid);
    } else if (o == "exit") {
      unsigned ts; if (scanf("%u", &ts) != 1) return 3;
      g_ts = ts;
      tp::Exit<Word, ScriptedClock>(block, &kTid);
    } else if (o == "task") {
      unsigned kind, ts;
      uint32_t task, queue;
      if (scanf("%u %" SCNx32 " %" SCNx32 " %u", &kind, &task, &queue, &ts) != 4 || kind > 3) {
        return 3;
      }
      g_ts = ts;
      tp::Task<Word, ScriptedClock>(block, static_cast<tp::TaskKind>(kind), task, queue, &kTid);
    } else if (o == "stop") {
      block[tp::kStop] = 1;
      block[tp::kLimit] = 0;
    } else if (o == "stale") {
      block[tp::kLimit] = 0;
    } else if (o == "relimit") {
      block[tp::kLimit] = real_limit;
    } else {
      fprintf(stderr, "bad op %s\n", op);
      return 3;
    }
  }
  printf("cursor %" PRId64 "\n",
         block[tp::kCursor] == 0 ? int64_t{-1} : static_cast<int64_t>(block[tp::kCursor] - begin));
  const uint64_t stop = block[tp::kStop];
  printf("stop %" PRIu64 "\n", stop > 1 ? stop - begin : stop);
  const uint64_t* s = static_cast<const uint64_t*>(mem);
  for (size_t i = 0; i < slots; ++i) printf("%016" PRIx64 "\n", s[i]);
  return 0;
}

// "isa-table": which quick frames write their own entry, per ISA, for tests/nterp_macros.rs to
// hold against the interpreters the series patches.
int PrintIsaTable() {
  using art::hubble::tp::Isa;
  namespace tp = art::hubble::tp;
  const struct { Isa isa; const char* name; } kIsas[] = {
      {Isa::kArm, "arm"}, {Isa::kArm64, "arm64"}, {Isa::kX86, "x86"}, {Isa::kX86_64, "x86_64"},
      {Isa::kRiscv64, "riscv64"}};
  for (const auto& i : kIsas) {
    printf("%s nterp %d compiled %d\n", i.name,
           tp::QuickFrameTracedItsEntry(i.isa, tp::QuickFrameKind::kNterp, false) ? 1 : 0,
           tp::QuickFrameTracedItsEntry(i.isa, tp::QuickFrameKind::kCompiled, false) ? 1 : 0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "isa-table") == 0) return PrintIsaTable();
  unsigned mode = 0;
  size_t slots = 0;
  if (scanf(" mode %u slots %zu", &mode, &slots) != 2 || slots < 2) return 3;
  return mode == 64 ? Run<uint64_t>(slots) : Run<uint32_t>(slots);
}
