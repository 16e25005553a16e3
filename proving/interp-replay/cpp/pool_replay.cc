// Host replay of the C++ trace point in many-thread mode (art-patches/files/runtime/hubble/
// trace_point.h and pool_take.h, compiled unchanged): several threads' blocks (the five
// Thread words and ART's tid) over one pool, against hubble_format::pool::PoolWriter.
//
// stdin:  "mode 64|32 blocks N slots B active A threads T", then one op per line:
//           entry I PTR COUNTER   thread I: method entry (PTR, COUNTER hex)
//           exit I COUNTER        thread I: method exit
//           task I K TASK QUEUE COUNTER   thread I: a task record (K: the kind's code 0-3; hex)
//         Thread I has tid 1000 + 7 I and starts as the control thread starts it in pool
//         mode: cursor SEALED, limit 0, begin = pool | 1, end 0 (seq 0).
// stdout: "base <hex>", then "thread <cursor> <limit> <end>" (hex) per thread, then every
//         pool slot in hex.
#include <sys/mman.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/hubble/trace_point.h"

namespace {

uint64_t g_counter = 0;
struct ScriptedClock {
  static uint64_t Read() { return g_counter; }
};

template <typename Word>
int Run(size_t blocks, size_t block_slots, size_t active, size_t threads) {
  namespace tp = art::hubble::tp;
  const size_t slots = tp::kPoolTake + 1 + blocks * block_slots;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  if (sizeof(Word) == 4) flags |= MAP_32BIT;  // 32-bit mode: addresses fit a Word
  void* mem = mmap(nullptr, slots * 8, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (mem == MAP_FAILED) { perror("mmap"); return 2; }
  const uintptr_t base = reinterpret_cast<uintptr_t>(mem);
  uint64_t* pool = static_cast<uint64_t*>(mem);
  // The runtime's part of the header (rust/runtime/src/pool.rs Pool::new).
  pool[tp::kPoolMask] = blocks - 1;
  pool[tp::kPoolBlocks] = base + (tp::kPoolTake + 1) * 8;
  pool[tp::kPoolDelay] = blocks - active;
  pool[tp::kPoolBlockBytes] = block_slots * 8;
  std::vector<Word> words(threads * tp::kBlockWords);
  std::vector<uint32_t> tids(threads);
  for (size_t i = 0; i < threads; ++i) {
    Word* w = &words[i * tp::kBlockWords];
    w[tp::kCursor] = static_cast<Word>(tp::kSealed);
    w[tp::kBegin] = static_cast<Word>(base | 1);
    tids[i] = static_cast<uint32_t>(1000 + 7 * i);
  }
  char op[32];
  while (scanf("%31s", op) == 1) {
    std::string o(op);
    size_t i;
    if (scanf("%zu", &i) != 1 || i >= threads) return 3;
    Word* w = &words[i * tp::kBlockWords];
    if (o == "entry") {
      uint64_t ptr;
      if (scanf("%" SCNx64 " %" SCNx64, &ptr, &g_counter) != 2) return 3;
      tp::Entry<Word, ScriptedClock>(w, static_cast<Word>(ptr), &tids[i]);
    } else if (o == "exit") {
      if (scanf("%" SCNx64, &g_counter) != 1) return 3;
      tp::Exit<Word, ScriptedClock>(w, &tids[i]);
    } else if (o == "task") {
      unsigned kind;
      uint32_t task, queue;
      if (scanf("%u %" SCNx32 " %" SCNx32 " %" SCNx64, &kind, &task, &queue, &g_counter) != 4 ||
          kind > 3) {
        return 3;
      }
      tp::Task<Word, ScriptedClock>(w, static_cast<tp::TaskKind>(kind), task, queue, &tids[i]);
    } else {
      fprintf(stderr, "bad op %s\n", op);
      return 3;
    }
  }
  printf("base %" PRIxPTR "\n", base);
  for (size_t i = 0; i < threads; ++i) {
    const Word* w = &words[i * tp::kBlockWords];
    printf("thread %" PRIx64 " %" PRIx64 " %" PRIx64 "\n", static_cast<uint64_t>(w[tp::kCursor]),
           static_cast<uint64_t>(w[tp::kLimit]), static_cast<uint64_t>(w[tp::kEnd]));
  }
  for (size_t s = 0; s < slots; ++s) printf("%" PRIx64 "\n", pool[s]);
  return 0;
}

}  // namespace

int main() {
  unsigned mode = 0;
  size_t blocks = 0, block_slots = 0, active = 0, threads = 0;
  if (scanf(" mode %u blocks %zu slots %zu active %zu threads %zu", &mode, &blocks, &block_slots,
            &active, &threads) != 5 ||
      blocks == 0 || (blocks & (blocks - 1)) != 0 || active > blocks || threads == 0) {
    return 3;
  }
  return mode == 64 ? Run<uint64_t>(blocks, block_slots, active, threads)
                    : Run<uint32_t>(blocks, block_slots, active, threads);
}
