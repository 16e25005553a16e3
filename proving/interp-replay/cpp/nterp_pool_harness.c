/*
 * nterp's trace-point macros in many-thread mode: the macros of
 * art-patches/files/runtime/hubble/nterp_arm64.S through nterp_arm64_harness.S (under
 * qemu-aarch64, a static binary), of nterp_x86_64.S through nterp_x86_64_harness.S
 * (-DHUBBLE_X86_64, natively: %gs is pointed at each op's Thread, and every register the macros
 * must keep is checked around each op), or of nterp_x86.S through nterp_x86_harness.S
 * (-DHUBBLE_X86, a static i386 binary: %fs, 32-bit Thread words), all unchanged, whose slow-path function calls the
 * pool's block-end function (pool_<isa>.S) when bit 0 of begin is set. Several fake Threads
 * (the five Hubble words and ART's tid at the real offsets) share one pool.
 *
 * stdin:  "blocks N slots B active A threads T", then "entry I PTR" (hex) / "exit I" lines.
 *         Thread I has tid 1000 + 7 I and starts as pool::start leaves it (cursor SEALED,
 *         limit 0, begin = pool | 1, end 0).
 * stdout: "base <hex>", "thread <cursor> <limit> <end>" (hex) per thread, every pool slot (hex).
 * Timestamps are the real counter's: the test compares every bit the counter cannot change.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(HUBBLE_X86_64) || defined(HUBBLE_X86)
#include <sys/syscall.h>
#include <unistd.h>
/* Each returns the mask of the registers it should have kept but changed (0: all kept). */
#ifdef HUBBLE_X86_64
#include <asm/prctl.h>
uint32_t hubble_test_entry(uint64_t method);
static void On(void* thread) {
  if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)thread) != 0) exit(4);
}
#else
#include <asm/ldt.h>
uint32_t hubble_test_entry(uint32_t method);
/* %fs = the thread, as Thread::InitCpu sets it (runtime/arch/x86/thread_x86.cc): a TLS GDT
 * entry with base = the Thread; the first call's entry is reused (a thread has three). */
static void On(void* thread) {
  static int entry = -1;
  struct user_desc d;
  memset(&d, 0, sizeof(d));
  d.entry_number = entry;
  d.base_addr = (uintptr_t)thread;
  d.limit = 1;
  d.seg_32bit = 1;
  d.limit_in_pages = 1;
  d.useable = 1;
  if (syscall(SYS_set_thread_area, &d) == -1) exit(4);
  entry = (int)d.entry_number;
  uint16_t selector = (uint16_t)((d.entry_number << 3) | 3);
  __asm__ __volatile__("movw %w0, %%fs" : : "q"(selector));
}
#endif
uint32_t hubble_test_exit(void);
static void Kept(const char* what, uint32_t changed) {
  if (changed == 0) return;
  fprintf(stderr, "%s macro changed registers (mask %#x)\n", what, changed);
  exit(5);
}
#define ENTRY(thread, m) (On(thread), Kept("entry", hubble_test_entry((uintptr_t)(m))))
#define EXIT(thread) (On(thread), Kept("exit", hubble_test_exit()))
#else
void hubble_test_entry(void* thread, uint64_t method);
void hubble_test_exit(void* thread);
#define ENTRY(thread, m) hubble_test_entry(thread, m)
#define EXIT(thread) hubble_test_exit(thread)
#endif

/* The Thread words: 64-bit, or 32-bit in a 32-bit process (x86). */
#ifdef HUBBLE_X86
typedef uint32_t word;
#else
typedef uint64_t word;
#endif
#define W(t, off) (*(word*)((char*)(t) + (off)))

int main(void) {
  size_t blocks = 0, block_slots = 0, active = 0, threads = 0;
  if (scanf(" blocks %zu slots %zu active %zu threads %zu", &blocks, &block_slots, &active,
            &threads) != 4 || threads == 0 || blocks == 0 || active > blocks) {
    return 3;
  }
  const size_t header = 6; /* hubble_format::pool::POOL_HEADER_SLOTS */
  const size_t slots = header + blocks * block_slots;
  uint64_t* pool = calloc(slots, 8);
  pool[1] = blocks - 1;
  pool[2] = (uint64_t)(uintptr_t)(pool + header);
  pool[3] = blocks - active;
  pool[4] = block_slots * 8;
  /* pool[5], the block-end function for compiled code: nterp calls it directly. */
  uint64_t(*thread)[64] = calloc(threads, sizeof(*thread));
  for (size_t i = 0; i < threads; ++i) {
    W(thread[i], THREAD_HUBBLE_CURSOR_OFFSET) = 8; /* SEALED */
    W(thread[i], THREAD_HUBBLE_BEGIN_OFFSET) = (word)(uintptr_t)pool | 1;
    *(uint32_t*)((char*)thread[i] + THREAD_TID_OFFSET) = (uint32_t)(1000 + 7 * i);
  }
  char op[16];
  size_t i;
  while (scanf("%15s %zu", op, &i) == 2) {
    if (i >= threads) return 3;
    if (strcmp(op, "entry") == 0) {
      uint64_t method;
      if (scanf("%" SCNx64, &method) != 1) return 3;
      ENTRY(thread[i], method);
    } else if (strcmp(op, "exit") == 0) {
      EXIT(thread[i]);
    } else {
      return 3;
    }
  }
  printf("base %" PRIxPTR "\n", (uintptr_t)pool);
  for (size_t t = 0; t < threads; ++t) {
    printf("thread %" PRIx64 " %" PRIx64 " %" PRIx64 "\n",
           (uint64_t)W(thread[t], THREAD_HUBBLE_CURSOR_OFFSET),
           (uint64_t)W(thread[t], THREAD_HUBBLE_LIMIT_OFFSET),
           (uint64_t)W(thread[t], THREAD_HUBBLE_END_OFFSET));
  }
  for (size_t s = 0; s < slots; ++s) printf("%" PRIx64 "\n", pool[s]);
  return 0;
}
