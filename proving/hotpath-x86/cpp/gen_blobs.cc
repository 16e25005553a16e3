/*
 * Hubble for AOSP: prints the bytes of the x86_64 and x86 trace points as ART emits them.
 *
 * Built in the trixie build root by scripts/hotpath-x86-gen from the patched ART work tree:
 * this file, the emitters (compiler/optimizing/hubble_trace_point_x86_64.cc, hubble_trace_point_x86.cc)
 * and ART's own assemblers (compiler/utils/x86_64/assembler_x86_64.cc, x86/assembler_x86.cc,
 * utils/assembler.cc), linked against the patched libart.so.0 (libartbase: arenas, logging).
 * The Thread offsets are ART's accessors (Thread::Hubble*Offset<PointerSize>()), as the code
 * generators pass them (patch 0015).
 *
 * Output, one line per blob:
 *   blob <isa> <kind> <counter> <cursor> <method> <terminator> <out_of_line> <hex bytes>
 * laid out [inline half][RET][out-of-line half] (the out-of-line half jumps back to the end of
 * the inline half, so the blob is a callable function), and one line per benchmark method:
 *   method x86_64 <counter> <hex bytes>
 * [entry trace point][body: addl $1, (%rsi)][exit trace point][RET][both out-of-line halves], the
 * Listing-1 callee of scripts/hotpath-bench (ArtMethod* in RDI, as ART's x86_64 ABI).
 */
#include <cstdio>
#include <cstring>
#include <vector>

#include "base/arena_allocator.h"
#include "base/malloc_arena_pool.h"
#include "base/memory_region.h"
#include "optimizing/hubble_trace_point_x86.h"
#include "optimizing/hubble_trace_point_x86_64.h"
#include "thread.h"

namespace {

using art::ArenaAllocator;
using art::MallocArenaPool;
using art::MemoryRegion;
using art::PointerSize;
using art::Thread;
namespace hubble = art::hubble;
namespace x86 = art::x86;
namespace x86_64 = art::x86_64;

template <PointerSize kPs>
hubble::ThreadOffsets Offsets() {
  return hubble::ThreadOffsets{Thread::HubbleCursorOffset<kPs>().Int32Value(),
                               Thread::HubbleLimitOffset<kPs>().Int32Value(),
                               Thread::HubbleStopOffset<kPs>().Int32Value(),
                               Thread::HubbleBeginOffset<kPs>().Int32Value(),
                               Thread::HubbleEndOffset<kPs>().Int32Value()};
}

const char* const kRegs64[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                               "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
const char* const kRegs32[] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"};
const char* const kCounters[] = {"rdtsc", "lfence-rdtsc", "rdtscp"};
const char* const kKinds[] = {"entry", "entry-narrow", "exit"};

template <typename Assembler>
std::vector<uint8_t> Finish(Assembler* assembler) {
  assembler->FinalizeCode();
  std::vector<uint8_t> bytes(assembler->CodeSize());
  MemoryRegion region(bytes.data(), bytes.size());
  assembler->FinalizeInstructions(region);
  return bytes;
}

void PrintHex(const std::vector<uint8_t>& bytes) {
  for (uint8_t b : bytes) {
    std::printf("%02x", b);
  }
  std::printf("\n");
}

hubble::TracePointOptions Options(int counter) {
  hubble::TracePointOptions options;
  options.x86_counter = static_cast<hubble::X86Counter>(counter);
  return options;
}

void BlobX86_64(hubble::TraceKind kind, int counter, x86_64::Register cursor,
                x86_64::Register method) {
  MallocArenaPool pool;
  ArenaAllocator allocator(&pool);
  x86_64::X86_64Assembler assembler(&allocator);
  const hubble::TracePointX86_64 tp{
      Offsets<PointerSize::k64>(), x86_64::CpuRegister(cursor), Options(counter)};
  hubble::TraceLabelsX86_64 labels;
  hubble::EmitTracePointX86_64(&assembler, tp, kind, x86_64::CpuRegister(method), &labels);
  const size_t terminator = assembler.CodeSize();
  assembler.ret();
  const size_t out_of_line = assembler.CodeSize();
  hubble::EmitTracePointOutOfLineX86_64(
      &assembler, tp, kind, x86_64::CpuRegister(method), &labels);
  std::vector<uint8_t> bytes = Finish(&assembler);
  std::printf("blob x86_64 %s %s %s %s %zu %zu ", kKinds[static_cast<int>(kind)],
              kCounters[counter], kRegs64[cursor], kRegs64[method], terminator, out_of_line);
  PrintHex(bytes);
}

void BlobX86(hubble::TraceKind kind, int counter, x86::Register cursor, x86::Register method) {
  MallocArenaPool pool;
  ArenaAllocator allocator(&pool);
  x86::X86Assembler assembler(&allocator);
  const hubble::TracePointX86 tp{Offsets<PointerSize::k32>(), cursor, Options(counter)};
  hubble::TraceLabelsX86 labels;
  hubble::EmitTracePointX86(&assembler, tp, kind, method, &labels);
  const size_t terminator = assembler.CodeSize();
  assembler.ret();
  const size_t out_of_line = assembler.CodeSize();
  hubble::EmitTracePointOutOfLineX86(&assembler, tp, &labels);
  std::vector<uint8_t> bytes = Finish(&assembler);
  std::printf("blob x86 %s %s %s %s %zu %zu ", kKinds[static_cast<int>(kind)],
              kCounters[counter], kRegs32[cursor], kRegs32[method], terminator, out_of_line);
  PrintHex(bytes);
}

// The benchmark's traced callee: what the x86_64 code generator lays out for a method whose body
// increments a counter (cursor temp RCX, as the allocator picks for a leaf; RAX/RDX free).
void MethodX86_64(int counter) {
  MallocArenaPool pool;
  ArenaAllocator allocator(&pool);
  x86_64::X86_64Assembler assembler(&allocator);
  const hubble::TracePointX86_64 tp{Offsets<PointerSize::k64>(),
                                    x86_64::CpuRegister(counter == 2 ? x86_64::R8 : x86_64::RCX),
                                    Options(counter)};
  const x86_64::CpuRegister method(x86_64::RDI);
  hubble::TraceLabelsX86_64 entry;
  hubble::TraceLabelsX86_64 exit;
  hubble::EmitTracePointX86_64(&assembler, tp, hubble::TraceKind::kEntry, method, &entry);
  assembler.addl(x86_64::Address(x86_64::CpuRegister(x86_64::RSI), 0), x86_64::Immediate(1));
  hubble::EmitTracePointX86_64(&assembler, tp, hubble::TraceKind::kExit, method, &exit);
  assembler.ret();
  hubble::EmitTracePointOutOfLineX86_64(&assembler, tp, hubble::TraceKind::kEntry, method, &entry);
  hubble::EmitTracePointOutOfLineX86_64(&assembler, tp, hubble::TraceKind::kExit, method, &exit);
  std::printf("method x86_64 %s ", kCounters[counter]);
  PrintHex(Finish(&assembler));
}

}  // namespace

int main() {
  const hubble::ThreadOffsets o64 = Offsets<PointerSize::k64>();
  const hubble::ThreadOffsets o32 = Offsets<PointerSize::k32>();
  std::printf("offsets 8 %d %d %d %d %d\n", o64.cursor, o64.limit, o64.stop, o64.begin, o64.end);
  std::printf("offsets 4 %d %d %d %d %d\n", o32.cursor, o32.limit, o32.stop, o32.begin, o32.end);
  // Where the pool's block-end functions read the thread's id (runtime/hubble/pool_x86*.S).
  std::printf("tid 8 %d\n", Thread::TidOffset<PointerSize::k64>().Int32Value());
  std::printf("tid 4 %d\n", Thread::TidOffset<PointerSize::k32>().Int32Value());
  // Register assignments: what the register allocator may pick (any cursor but the counter's
  // registers; the method where ART keeps it or elsewhere) and the JNI stubs' fixed ones
  // (compiler/jni/quick/hubble_jni_trace.cc: x86_64 entry RBX/RDI, exit R8; x86 entry EBP/ESI,
  // exit EBX).
  struct Pair64 { x86_64::Register cursor, method; };
  const Pair64 pairs64[] = {{x86_64::RCX, x86_64::RDI}, {x86_64::R11, x86_64::RDI},
                            {x86_64::RBX, x86_64::RDI}, {x86_64::R8, x86_64::RDI},
                            {x86_64::R15, x86_64::R9},  {x86_64::RSI, x86_64::R12}};
  struct Pair32 { x86::Register cursor, method; };
  const Pair32 pairs32[] = {{x86::ECX, x86::ESI}, {x86::EBP, x86::ESI}, {x86::EBX, x86::EDI},
                            {x86::EDI, x86::EBX}};
  for (int counter = 0; counter < 3; ++counter) {
    const hubble::TracePointOptions options = Options(counter);
    for (int kind = 0; kind < 3; ++kind) {
      for (const Pair64& p : pairs64) {
        if (hubble::CounterClobbersX86_64(options, p.cursor) ||
            hubble::CounterClobbersX86_64(options, p.method)) {
          continue;
        }
        BlobX86_64(static_cast<hubble::TraceKind>(kind), counter, p.cursor, p.method);
      }
      if (kind == static_cast<int>(hubble::TraceKind::kEntryNarrow)) {
        continue;  // 32-bit mode: every entry is one slot
      }
      for (const Pair32& p : pairs32) {
        if (hubble::CounterClobbersX86(options, p.cursor) ||
            hubble::CounterClobbersX86(options, p.method)) {
          continue;
        }
        BlobX86(static_cast<hubble::TraceKind>(kind), counter, p.cursor, p.method);
      }
    }
    MethodX86_64(counter);
  }
  return 0;
}
