/*
 * Hubble for AOSP: runs the x86_64 / x86 trace points ART emits (scripts/hotpath-x86-gen) on
 * this CPU, as a 64-bit process (x86_64) or a static 32-bit one (x86, -DHUBBLE_X86).
 *
 * The bytes go into an executable mapping and are called with every general register set to a
 * pattern (the method register to the ArtMethod*); the traced thread's %gs (x86_64) / %fs (x86)
 * base points at a Thread image whose Hubble block sits at ART's offsets, as Thread::InitCpu sets
 * it up (runtime/arch/x86_64/thread_x86_64.cc: arch_prctl(ARCH_SET_GS); runtime/arch/x86/
 * thread_x86.cc: a set_thread_area GDT entry loaded into %fs).
 *
 * Two ways to run (the `step` command):
 *  - native (step 0): the bytes run at full speed; RDTSC is the real counter, bracketed by
 *    LFENCE;RDTSC;LFENCE reads before and after the call (printed for the test to check);
 *  - single-stepped (step 1): the trap flag makes the CPU stop after every instruction (SIGTRAP;
 *    the instructions still execute natively). The handler counts the instructions executed,
 *    replaces the counter value an RDTSC / RDTSCP just produced with the scripted one (so the
 *    reference writer can be fed the exact value, as the unicorn hooks do for A64/T32), counts
 *    counter reads, and can change the limit word when execution reaches the out-of-line half
 *    (the stale-doorbell case: the inline half saw limit 0, the recheck sees the real one).
 *
 * stdin, one command a line:
 *   init <mode 64|32> <slots> <cursor> <limit> <stop> <begin> <end>   (the block's offsets)
 *   blob <entry|exit> <out_of_line offset> <hex>
 *   regs <method register index> <mask of registers the blob may change>
 *   step <0|1>
 *   start <ts>            control thread: START record, limit, stop = 0, then the cursor
 *   stop                  control thread: stop = 1, then limit = 0 (the doorbell)
 *   stale                 limit = 0 now, the real limit again at the out-of-line half (step 1)
 *   entry <ptr hex> <ts hex>  /  narrow <ptr hex> <ts hex>  /  exit <ts hex>
 *                         one trace point (ts: the scripted counter; narrow runs the
 *                         entry-narrow blob)
 * Many-thread mode (built with -DHUBBLE_POOL, next to cpp/pool_x86_64.S, or cpp/pool_x86.S for
 * x86, the runtime's block-end function that the out-of-line half calls; single-stepping goes on
 * through it):
 *   pool <slots>          map a pool of <slots> words; prints `pool <base> <take> <end>` (hex;
 *                         take = hubble_pool_take's address, for the header's P_TAKE; end =
 *                         the address after its last byte)
 *   threads <n>           map n Thread images a page apart; prints `threads <base>` (hex)
 *   thread <addr>         the traced thread is the image at addr (hex) from now on (%gs base;
 *                         x86: %fs)
 *   poke <addr> <value> / poke4 <addr> <value>     write 8 / 4 bytes (hex)
 *   dump <addr> <n>       prints `d` and n words from addr (hex)
 *   patch <addr> <hex>    overwrite code bytes (a test's mutant of the block-end function)
 * After every entry / exit / start / stop / stale:
 *   r <executed> <counter reads> <changed registers mask> <ooline 0|1> <cursor> <limit> <stop>
 *     <clock before> <clock after>    (cursor/limit/stop as offsets from the ring, -1 if 0)
 *   ring <slot hex>...
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#ifdef HUBBLE_X86
#include <asm/ldt.h>
typedef uint32_t word;
#define NREGS 8
#define REG_PC REG_EIP
#define REG_A REG_EAX
#define REG_D REG_EDX
#define REG_FLAGS REG_EFL
#else
#include <asm/prctl.h>
typedef uint64_t word;
#define NREGS 16
#define REG_PC REG_RIP
#define REG_A REG_RAX
#define REG_D REG_RDX
#define REG_FLAGS REG_EFL
#endif

/* Used by the trampolines below (hence not static). */
word g_in[NREGS], g_out[NREGS];
void* g_code;
word g_tf;
word g_flags;
word g_saved_sp;
void hubble_run(void);

#ifdef HUBBLE_X86
__asm__(
    ".text\n.globl hubble_run\nhubble_run:\n"
    "  pushl %ebx\n  pushl %ebp\n  pushl %esi\n  pushl %edi\n"
    "  pushfl\n  popl %eax\n  orl g_tf, %eax\n  movl %eax, g_flags\n"
    "  movl %esp, g_saved_sp\n"
    "  movl g_in+0, %eax\n  movl g_in+4, %ecx\n  movl g_in+8, %edx\n  movl g_in+12, %ebx\n"
    "  movl g_in+20, %ebp\n  movl g_in+24, %esi\n  movl g_in+28, %edi\n"
    "  pushl g_flags\n  popfl\n"
    "  call *g_code\n"
    "  movl %eax, g_out+0\n  movl %ecx, g_out+4\n  movl %edx, g_out+8\n  movl %ebx, g_out+12\n"
    "  movl %esp, g_out+16\n  movl %ebp, g_out+20\n  movl %esi, g_out+24\n  movl %edi, g_out+28\n"
    "  movl g_saved_sp, %esp\n"
    "  popl %edi\n  popl %esi\n  popl %ebp\n  popl %ebx\n  ret\n");
#else
__asm__(
    ".text\n.globl hubble_run\nhubble_run:\n"
    "  pushq %rbx\n  pushq %rbp\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  subq $8, %rsp\n"
    "  pushfq\n  popq %rax\n  orq g_tf(%rip), %rax\n  movq %rax, g_flags(%rip)\n"
    "  movq %rsp, g_saved_sp(%rip)\n"
    "  movq g_in+0(%rip), %rax\n  movq g_in+8(%rip), %rcx\n  movq g_in+16(%rip), %rdx\n"
    "  movq g_in+24(%rip), %rbx\n  movq g_in+40(%rip), %rbp\n  movq g_in+48(%rip), %rsi\n"
    "  movq g_in+56(%rip), %rdi\n  movq g_in+64(%rip), %r8\n  movq g_in+72(%rip), %r9\n"
    "  movq g_in+80(%rip), %r10\n  movq g_in+88(%rip), %r11\n  movq g_in+96(%rip), %r12\n"
    "  movq g_in+104(%rip), %r13\n  movq g_in+112(%rip), %r14\n  movq g_in+120(%rip), %r15\n"
    "  pushq g_flags(%rip)\n  popfq\n"
    "  call *g_code(%rip)\n"
    "  movq %rax, g_out+0(%rip)\n  movq %rcx, g_out+8(%rip)\n  movq %rdx, g_out+16(%rip)\n"
    "  movq %rbx, g_out+24(%rip)\n  movq %rsp, g_out+32(%rip)\n  movq %rbp, g_out+40(%rip)\n"
    "  movq %rsi, g_out+48(%rip)\n  movq %rdi, g_out+56(%rip)\n  movq %r8, g_out+64(%rip)\n"
    "  movq %r9, g_out+72(%rip)\n  movq %r10, g_out+80(%rip)\n  movq %r11, g_out+88(%rip)\n"
    "  movq %r12, g_out+96(%rip)\n  movq %r13, g_out+104(%rip)\n  movq %r14, g_out+112(%rip)\n"
    "  movq %r15, g_out+120(%rip)\n"
    "  movq g_saved_sp(%rip), %rsp\n"
    "  addq $8, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbp\n  popq %rbx\n  ret\n");
#endif

static uint64_t thread_mem[512] __attribute__((aligned(4096)));
static uint64_t* cur_thread = thread_mem; /* the traced thread's image */
#define W(off) (*(volatile word*)((char*)cur_thread + (off)))
static int off_cursor, off_limit, off_stop, off_begin, off_end;
static unsigned mode;
static size_t slots;
static word begin, end, real_limit;
static uint64_t* ring;

struct Blob {
  uint8_t* code;
  size_t size;
  size_t out_of_line;
};
static struct Blob blobs[3]; /* entry, exit, entry-narrow */

#ifdef HUBBLE_POOL
/* cpp/pool_x86{,_64}.S: runtime/hubble/pool_x86{,_64}.S's function and a label after its last
 * byte. */
extern char hubble_pool_take[], hubble_pool_take_end[];
#endif

/* Single-step state. */
static volatile const struct Blob* cur_blob;
static volatile uintptr_t prev_pc;
static volatile uint64_t executed, counter_reads, scripted_ts;
static volatile int went_out_of_line, inject_limit;

static int InBlob(uintptr_t pc) {
  uintptr_t base = (uintptr_t)cur_blob->code;
  return pc >= base && pc < base + cur_blob->size;
}

/* Code whose instructions are stepped, counted and have their counter reads scripted: the blob
 * and what it calls. */
static int InCode(uintptr_t pc) {
#ifdef HUBBLE_POOL
  if (pc >= (uintptr_t)hubble_pool_take && pc < (uintptr_t)hubble_pool_take_end) return 1;
#endif
  return InBlob(pc);
}

static void OnTrap(int sig, siginfo_t* info, void* ctx) {
  (void)sig;
  (void)info;
  ucontext_t* uc = (ucontext_t*)ctx;
  greg_t* g = uc->uc_mcontext.gregs;
  uintptr_t pc = (uintptr_t)g[REG_PC];
  if (prev_pc != 0 && InCode(prev_pc)) {
    ++executed;
    const uint8_t* p = (const uint8_t*)prev_pc;
    int rdtsc = p[0] == 0x0f && p[1] == 0x31;
    int rdtscp = p[0] == 0x0f && p[1] == 0x01 && p[2] == 0xf9;
    if (rdtsc || rdtscp) {
      /* What the instruction just wrote is replaced by the scripted counter value. */
      g[REG_A] = (greg_t)(uint32_t)scripted_ts;
      g[REG_D] = (greg_t)(uint32_t)(scripted_ts >> 32);
      ++counter_reads;
    }
  }
  if (InCode(pc)) {
    if (InBlob(pc) && pc - (uintptr_t)cur_blob->code >= cur_blob->out_of_line) {
      went_out_of_line = 1;
      if (inject_limit) {
        W(off_limit) = real_limit;
        inject_limit = 0;
      }
    }
    prev_pc = pc;
  } else if (prev_pc != 0) {
    g[REG_FLAGS] &= ~(greg_t)0x100; /* back in the trampoline: stop stepping */
    prev_pc = 0;
  } else {
    prev_pc = pc; /* the CALL into the blob has not executed yet */
  }
}

#ifdef HUBBLE_X86
/* The GDT entry of the first call, reused by later ones (a thread has only three TLS entries):
 * many-thread mode points %fs at another Thread image before every trace point. */
static int fs_entry = -1;
static int SetThreadRegister(void* thread, size_t size) {
  struct user_desc gdt_entry;
  memset(&gdt_entry, 0, sizeof(gdt_entry));
  gdt_entry.entry_number = fs_entry;
  gdt_entry.base_addr = (uintptr_t)thread;
  gdt_entry.limit = size;
  gdt_entry.seg_32bit = 1;
  gdt_entry.limit_in_pages = 1;
  gdt_entry.useable = 1;
  if (syscall(SYS_set_thread_area, &gdt_entry) == -1) return -1;
  fs_entry = (int)gdt_entry.entry_number;
  uint16_t selector = (uint16_t)((gdt_entry.entry_number << 3) | 3);
  __asm__ __volatile__("movw %w0, %%fs" : : "q"(selector));
  return 0;
}
#else
static int SetThreadRegister(void* thread, size_t size) {
  (void)size;
  return (int)syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)thread);
}
#endif

static uint64_t Clock(void) {
  uint32_t lo, hi;
  __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
  return ((uint64_t)hi << 32) | lo;
}

static uint64_t Lcg(uint64_t* s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s;
}

static long long Rel(word v) { return v == 0 ? -1 : (long long)(v - begin); }

static void Report(uint64_t ex, uint64_t reads, unsigned changed, int ool, uint64_t before,
                   uint64_t after) {
  word stop = W(off_stop);
  printf("r %" PRIu64 " %" PRIu64 " %u %d %lld %lld %lld %" PRIu64 " %" PRIu64 "\n", ex, reads,
         changed, ool, Rel(W(off_cursor)), Rel(W(off_limit)),
         stop > 1 ? (long long)(stop - begin) : (long long)stop, before, after);
  printf("ring");
  for (size_t i = 0; i < slots; ++i) printf(" %" PRIx64, ring[i]);
  printf("\n");
  fflush(stdout);
}

static void* MapPages(size_t bytes) {
  void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

int main(void) {
  static char line[1 << 16];
  int method_reg = -1;
  unsigned clobber = 0;
  int step = 0;
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_sigaction = OnTrap;
  sa.sa_flags = SA_SIGINFO;
  if (sigaction(SIGTRAP, &sa, NULL) != 0) return 4;
  if (SetThreadRegister(thread_mem, sizeof(thread_mem)) != 0) return 4;
  while (fgets(line, sizeof(line), stdin)) {
    char cmd[16];
    if (sscanf(line, "%15s", cmd) != 1) continue;
    if (!strcmp(cmd, "init")) {
      if (sscanf(line, "init %u %zu %d %d %d %d %d", &mode, &slots, &off_cursor, &off_limit,
                 &off_stop, &off_begin, &off_end) != 7 || mode != 8 * sizeof(word)) {
        return 3;
      }
      ring = slots == 0 ? (uint64_t*)thread_mem : MapPages(slots * 8); /* 0: pool mode */
      if (ring == NULL) return 4;
      begin = (word)(uintptr_t)ring;
      end = begin + slots * 8;
      real_limit = mode == 64 ? end - 8 : end;
      W(off_begin) = begin;
      W(off_end) = end;
      continue;
    }
    if (!strcmp(cmd, "blob")) {
      char which[16];
      size_t ool;
      int n = 0;
      if (sscanf(line, "blob %15s %zu %n", which, &ool, &n) != 2) return 3;
      struct Blob* b = &blobs[!strcmp(which, "exit") ? 1 : !strcmp(which, "entry-narrow") ? 2 : 0];
      const char* hex = line + n;
      size_t len = strcspn(hex, " \n") / 2;
      b->code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                     -1, 0);
      if (b->code == MAP_FAILED || len > 4096) return 4;
      for (size_t i = 0; i < len; ++i) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 3;
        b->code[i] = (uint8_t)v;
      }
      b->size = len;
      b->out_of_line = ool;
      continue;
    }
    if (!strcmp(cmd, "regs")) {
      if (sscanf(line, "regs %d %u", &method_reg, &clobber) != 2) return 3;
      continue;
    }
    if (!strcmp(cmd, "step")) {
      if (sscanf(line, "step %d", &step) != 1) return 3;
      continue;
    }
    if (!strcmp(cmd, "start")) {
      unsigned ts;
      if (sscanf(line, "start %u", &ts) != 1) return 3;
      word pos = W(off_stop) > 1 ? W(off_stop) : begin;
      if (pos >= real_limit) {
        if (pos != end) *(uint64_t*)(uintptr_t)pos = 2;
        pos = begin;
      }
      *(uint64_t*)(uintptr_t)pos = ((uint64_t)ts << 32) | 3;
      W(off_stop) = 0;
      W(off_limit) = real_limit;
      W(off_cursor) = pos + 8;
      Report(0, 0, 0, 0, 0, 0);
      continue;
    }
    if (!strcmp(cmd, "stop")) {
      W(off_stop) = 1;
      W(off_limit) = 0;
      Report(0, 0, 0, 0, 0, 0);
      continue;
    }
    if (!strcmp(cmd, "stale")) {
      W(off_limit) = 0;
      inject_limit = 1;
      Report(0, 0, 0, 0, 0, 0);
      continue;
    }
#ifdef HUBBLE_POOL
    if (!strcmp(cmd, "pool")) {
      size_t n;
      if (sscanf(line, "pool %zu", &n) != 1 || n == 0) return 3;
      void* pool = MapPages(n * 8);
      if (pool == NULL) return 4;
      printf("pool %" PRIxPTR " %" PRIxPTR " %" PRIxPTR "\n", (uintptr_t)pool,
             (uintptr_t)hubble_pool_take, (uintptr_t)hubble_pool_take_end);
      fflush(stdout);
      continue;
    }
    if (!strcmp(cmd, "threads")) {
      size_t n;
      if (sscanf(line, "threads %zu", &n) != 1 || n == 0) return 3;
      void* images = MapPages(n * 4096);
      if (images == NULL) return 4;
      printf("threads %" PRIxPTR "\n", (uintptr_t)images);
      fflush(stdout);
      continue;
    }
    if (!strcmp(cmd, "thread")) {
      uintptr_t at;
      if (sscanf(line, "thread %" SCNxPTR, &at) != 1) return 3;
      cur_thread = (uint64_t*)at;
      if (SetThreadRegister(cur_thread, 4096) != 0) return 4;
      continue;
    }
    if (!strcmp(cmd, "poke") || !strcmp(cmd, "poke4")) {
      uintptr_t at;
      uint64_t v;
      if (sscanf(line, "%*s %" SCNxPTR " %" SCNx64, &at, &v) != 2) return 3;
      if (cmd[4] == '4') {
        *(volatile uint32_t*)at = (uint32_t)v;
      } else {
        *(volatile uint64_t*)at = v;
      }
      continue;
    }
    if (!strcmp(cmd, "patch")) {
      uintptr_t at;
      int n = 0;
      if (sscanf(line, "patch %" SCNxPTR " %n", &at, &n) != 1) return 3;
      const char* hex = line + n;
      size_t len = strcspn(hex, " \n") / 2;
      uintptr_t page = at & ~(uintptr_t)4095;
      if (mprotect((void*)page, at + len - page, PROT_READ | PROT_WRITE | PROT_EXEC) != 0) return 4;
      for (size_t i = 0; i < len; ++i) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) return 3;
        ((volatile uint8_t*)at)[i] = (uint8_t)v;
      }
      continue;
    }
    if (!strcmp(cmd, "dump")) {
      uintptr_t at;
      size_t n;
      if (sscanf(line, "dump %" SCNxPTR " %zu", &at, &n) != 2) return 3;
      printf("d");
      for (size_t i = 0; i < n; ++i) printf(" %" PRIx64, ((volatile uint64_t*)at)[i]);
      printf("\n");
      fflush(stdout);
      continue;
    }
#endif
    int is_entry = !strcmp(cmd, "entry") || !strcmp(cmd, "narrow");
    if (!is_entry && strcmp(cmd, "exit")) return 3;
    uint64_t ptr = 0, ts = 0;
    if (is_entry ? sscanf(line, "%*s %" SCNx64 " %" SCNx64, &ptr, &ts) != 2
                 : sscanf(line, "exit %" SCNx64, &ts) != 1) {
      return 3;
    }
    const struct Blob* b = &blobs[!is_entry ? 1 : cmd[0] == 'n' ? 2 : 0];
    if (b->code == NULL || method_reg < 0) return 3;
    for (int i = 0; i < NREGS; ++i) g_in[i] = (word)Lcg(&seed);
    if (is_entry) g_in[method_reg] = (word)ptr;
    cur_blob = b;
    g_code = b->code;
    g_tf = step ? 0x100 : 0;
    prev_pc = 0;
    executed = counter_reads = 0;
    went_out_of_line = 0;
    scripted_ts = ts;
    uint64_t before = Clock();
    hubble_run();
    uint64_t after = Clock();
    if (inject_limit) return 6; /* the stale limit was never restored: no out-of-line half */
    unsigned changed = 0;
    for (int i = 0; i < NREGS; ++i) {
      if (i != 4 && g_in[i] != g_out[i]) changed |= 1u << i;
    }
    (void)clobber;
    Report(step ? executed : 0, step ? counter_reads : 0, changed, step ? went_out_of_line : 0,
           before, after);
  }
  return 0;
}
