/*
 * stdin/stdout protocol of replay.cc (64-bit mode only), driving nterp's trace-point macros:
 * arm64 under qemu-aarch64 (nterp_arm64_harness.S), x86_64 natively with %gs set to the fake
 * Thread (nterp_x86_64_harness.S, -DHUBBLE_X86_64). Timestamps come from the real counter, so
 * the script's TS values are only used by the control side's start records.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HUBBLE_X86_64
#include <asm/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
void hubble_test_entry(uint64_t method);
void hubble_test_exit(void);
#define ENTRY(thread, m) hubble_test_entry(m)
#define EXIT(thread) hubble_test_exit()
#else
void hubble_test_entry(void* thread, uint64_t method);
void hubble_test_exit(void* thread);
#define ENTRY(thread, m) hubble_test_entry(thread, m)
#define EXIT(thread) hubble_test_exit(thread)
#endif

static uint64_t thread_mem[64];

#define W(off) (*(uint64_t*)((char*)thread_mem + (off)))

int main(void) {
  unsigned mode = 0;
  size_t slots = 0;
  if (scanf(" mode %u slots %zu", &mode, &slots) != 2 || mode != 64 || slots < 2) return 3;
  uint64_t* ring = calloc(slots, 8);
  const uint64_t begin = (uint64_t)(uintptr_t)ring, end = begin + slots * 8, real_limit = end - 8;
  W(THREAD_HUBBLE_BEGIN_OFFSET) = begin;
  W(THREAD_HUBBLE_END_OFFSET) = end;
#ifdef HUBBLE_X86_64
  if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)thread_mem) != 0) return 4;
#endif
  char op[32];
  while (scanf("%31s", op) == 1) {
    if (!strcmp(op, "start")) {
      unsigned ts;
      if (scanf("%u", &ts) != 1) return 3;
      uint64_t pos = W(THREAD_HUBBLE_STOP_OFFSET) > 1 ? W(THREAD_HUBBLE_STOP_OFFSET) : begin;
      if (pos >= real_limit) {
        if (pos != end) *(uint64_t*)(uintptr_t)pos = 2;
        pos = begin;
      }
      *(uint64_t*)(uintptr_t)pos = ((uint64_t)ts << 32) | 3;
      W(THREAD_HUBBLE_STOP_OFFSET) = 0;
      W(THREAD_HUBBLE_LIMIT_OFFSET) = real_limit;
      W(THREAD_HUBBLE_CURSOR_OFFSET) = pos + 8;
    } else if (!strcmp(op, "entry")) {
      uint64_t ptr;
      unsigned ts;
      if (scanf("%" SCNx64 " %u", &ptr, &ts) != 2) return 3;
      ENTRY(thread_mem, ptr);
    } else if (!strcmp(op, "exit")) {
      unsigned ts;
      if (scanf("%u", &ts) != 1) return 3;
      EXIT(thread_mem);
    } else if (!strcmp(op, "stop")) {
      W(THREAD_HUBBLE_STOP_OFFSET) = 1;
      W(THREAD_HUBBLE_LIMIT_OFFSET) = 0;
    } else {
      return 3;
    }
  }
  uint64_t cursor = W(THREAD_HUBBLE_CURSOR_OFFSET), stop = W(THREAD_HUBBLE_STOP_OFFSET);
  printf("cursor %" PRId64 "\n", cursor == 0 ? (int64_t)-1 : (int64_t)(cursor - begin));
  printf("stop %" PRIu64 "\n", stop > 1 ? stop - begin : stop);
  for (size_t i = 0; i < slots; ++i) printf("%016" PRIx64 "\n", ring[i]);
  return 0;
}
