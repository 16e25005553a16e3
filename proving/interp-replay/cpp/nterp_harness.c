/*
 * stdin/stdout protocol of replay.cc, driving nterp's trace-point macros: arm64 under
 * qemu-aarch64 (nterp_arm64_harness.S), x86_64 natively with %gs set to the fake Thread
 * (nterp_x86_64_harness.S, -DHUBBLE_X86_64), both in 64-bit mode; x86 as a static i386 binary
 * with %fs set to the fake Thread (nterp_x86_harness.S, -DHUBBLE_X86), in 32-bit mode. Timestamps
 * come from the real counter, so the script's TS values are only used by the control side's
 * start records.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(HUBBLE_X86_64) || defined(HUBBLE_X86)
/* Each runs one macro with the registers it must keep set to patterns and returns the mask of
 * those it changed (nterp_x86*_harness.S): 0 = all preserved. */
#ifdef HUBBLE_X86_64
#include <asm/prctl.h>
uint32_t hubble_test_entry(uint64_t method);
static const char* const kRegNames[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                        "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15",
                                        "xmm0"};
#else
#include <asm/ldt.h>
uint32_t hubble_test_entry(uint32_t method);
static const char* const kRegNames[] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi",
                                        "xmm0"};
#endif
#include <sys/syscall.h>
#include <unistd.h>
uint32_t hubble_test_exit(void);
#define ENTRY(thread, m) Preserved("entry", hubble_test_entry((uintptr_t)(m)))
#define EXIT(thread) Preserved("exit", hubble_test_exit())
static void Preserved(const char* what, uint32_t changed) {
  if (changed == 0) return;
  fprintf(stderr, "%s macro changed:", what);
  for (size_t i = 0; i < sizeof(kRegNames) / sizeof(kRegNames[0]); ++i) {
    if (changed & (1u << i)) fprintf(stderr, " %s", kRegNames[i]);
  }
  fprintf(stderr, "\n");
  exit(5);
}
#endif

#if defined(HUBBLE_X86)
/* %fs = the fake Thread, as ART 14's Thread::InitCpu does on Linux
 * (runtime/arch/x86/thread_x86.cc:44-133): one TLS GDT entry chosen by the kernel
 * (set_thread_area, entry_number -1) with base = the Thread, a 32-bit data segment whose limit is
 * counted in pages, then selector = entry_number << 3 | 0 (GDT) | 3 (RPL) loaded into %fs. */
static int SetFs(void* thread, size_t size) {
  struct user_desc gdt_entry;
  memset(&gdt_entry, 0, sizeof(gdt_entry));
  gdt_entry.entry_number = -1;
  gdt_entry.base_addr = (uintptr_t)thread;
  gdt_entry.limit = size;
  gdt_entry.seg_32bit = 1;
  gdt_entry.contents = 0; /* MODIFY_LDT_CONTENTS_DATA */
  gdt_entry.read_exec_only = 0;
  gdt_entry.limit_in_pages = 1;
  gdt_entry.seg_not_present = 0;
  gdt_entry.useable = 1;
  if (syscall(SYS_set_thread_area, &gdt_entry) == -1) return -1;
  uint16_t selector = (uint16_t)((gdt_entry.entry_number << 3) | 0 | 3);
  __asm__ __volatile__("movw %w0, %%fs" : : "q"(selector));
  return 0;
}
#elif !defined(HUBBLE_X86_64)
void hubble_test_entry(void* thread, uint64_t method);
void hubble_test_exit(void* thread);
#define ENTRY(thread, m) hubble_test_entry(thread, m)
#define EXIT(thread) hubble_test_exit(thread)
#endif

/* The counter the macros read (low 32 bits), fenced so that a macro's read between two of these
 * calls is ordered between them: RDTSC with LFENCE on both sides (Intel SDM, RDTSC), ISB + MRS
 * CNTVCT_EL0 on arm64. */
static uint32_t Counter(void) {
#if defined(HUBBLE_X86_64) || defined(HUBBLE_X86)
  uint32_t lo, hi;
  __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
  (void)hi;
  return lo;
#else
  uint64_t t;
  __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0\n\tisb" : "=r"(t) : : "memory");
  return (uint32_t)t;
#endif
}

/* The counter before and after each entry/exit op, printed after the ring: the test checks that
 * every timestamp a macro wrote lies between the two around its op. */
#define MAX_CLOCKED_OPS 8192
static uint32_t clock_before[MAX_CLOCKED_OPS], clock_after[MAX_CLOCKED_OPS];
static size_t clocked_ops;

/* The block's words are pointer-sized: 64-bit mode on arm64/x86_64, 32-bit mode on x86. */
#ifdef HUBBLE_X86
typedef uint32_t word;
#define MODE 32u
#else
typedef uint64_t word;
#define MODE 64u
#endif

static uint64_t thread_mem[64];

#define W(off) (*(word*)((char*)thread_mem + (off)))

int main(void) {
  unsigned mode = 0;
  size_t slots = 0;
  if (scanf(" mode %u slots %zu", &mode, &slots) != 2 || mode != MODE || slots < 2) return 3;
  uint64_t* ring = calloc(slots, 8);
  /* 64-bit mode: limit = end - 8 (a two-slot entry fits); 32-bit mode: limit = end. */
  const word begin = (word)(uintptr_t)ring, end = begin + slots * 8,
             real_limit = MODE == 64 ? end - 8 : end;
  W(THREAD_HUBBLE_BEGIN_OFFSET) = begin;
  W(THREAD_HUBBLE_END_OFFSET) = end;
#if defined(HUBBLE_X86_64)
  if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)thread_mem) != 0) return 4;
#elif defined(HUBBLE_X86)
  if (SetFs(thread_mem, sizeof(thread_mem)) != 0) return 4;
#endif
  char op[32];
  while (scanf("%31s", op) == 1) {
    if (!strcmp(op, "start")) {
      unsigned ts;
      if (scanf("%u", &ts) != 1) return 3;
      word pos = W(THREAD_HUBBLE_STOP_OFFSET) > 1 ? W(THREAD_HUBBLE_STOP_OFFSET) : begin;
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
      if (scanf("%" SCNx64 " %u", &ptr, &ts) != 2 || clocked_ops == MAX_CLOCKED_OPS) return 3;
      clock_before[clocked_ops] = Counter();
      ENTRY(thread_mem, ptr);
      clock_after[clocked_ops++] = Counter();
    } else if (!strcmp(op, "exit")) {
      unsigned ts;
      if (scanf("%u", &ts) != 1 || clocked_ops == MAX_CLOCKED_OPS) return 3;
      clock_before[clocked_ops] = Counter();
      EXIT(thread_mem);
      clock_after[clocked_ops++] = Counter();
    } else if (!strcmp(op, "stop")) {
      W(THREAD_HUBBLE_STOP_OFFSET) = 1;
      W(THREAD_HUBBLE_LIMIT_OFFSET) = 0;
    } else {
      return 3;
    }
  }
  word cursor = W(THREAD_HUBBLE_CURSOR_OFFSET), stop = W(THREAD_HUBBLE_STOP_OFFSET);
  printf("cursor %" PRId64 "\n", cursor == 0 ? (int64_t)-1 : (int64_t)(cursor - begin));
  printf("stop %" PRIu64 "\n", (uint64_t)(stop > 1 ? stop - begin : stop));
  for (size_t i = 0; i < slots; ++i) printf("%016" PRIx64 "\n", ring[i]);
  for (size_t i = 0; i < clocked_ops; ++i) printf("clock %u %u\n", clock_before[i], clock_after[i]);
  return 0;
}
