/*
 * A64 harness run under qemu-aarch64 (static, cross-compiled with aarch64-linux-gnu-gcc).
 * Reads one input file written by tests/qemu.rs:
 *   u32 magic 'HBQ1', i32 offsets[5], u32 slots, u32 nops,
 *   3 x { u32 len, bytes }  (entry, exit, entry-narrow: inline half, RET, out-of-line half)
 *   nops x u64 op           (0 = exit, 1 = stop request (control), 2 = restart (control),
 *                            otherwise entry with that ArtMethod*; bit 0 set = narrow variant)
 * Runs the ops on a real (emulated) CPU with a Thread block and an mmap'd ring, and writes to
 * stdout: u64 thread words[5] (cursor, limit, stop, begin, end), u64 ring[slots], then
 * u64 per op: the stop word after it (lets the test find the end position published).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef void (*trace_fn)(void);

static void die(const char* what) {
  fprintf(stderr, "qemu_harness: %s\n", what);
  exit(2);
}

static void read_exact(FILE* f, void* p, size_t n) {
  if (fread(p, 1, n, f) != n) die("short input");
}

static uint8_t* load_code(FILE* f) {
  uint32_t len;
  read_exact(f, &len, 4);
  uint8_t* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                       -1, 0);
  if (page == MAP_FAILED || len > 4096) die("mmap code");
  read_exact(f, page, len);
  __builtin___clear_cache((char*)page, (char*)page + len);
  return page;
}

/* x19 = thread, x0 = method; the trace point may clobber x16, x17 and the flags. */
static void call(uint8_t* code, uint8_t* thread, uint64_t method) {
  register uint64_t x0 __asm__("x0") = method;
  __asm__ volatile(
      "mov x19, %[t]\n"
      "blr %[c]\n"
      : "+r"(x0)
      : [t] "r"(thread), [c] "r"(code)
      : "x16", "x17", "x19", "x30", "cc", "memory");
  if (x0 != method) die("x0 not preserved");
}

int main(int argc, char** argv) {
  if (argc != 2) die("usage: qemu_harness INPUT");
  FILE* f = fopen(argv[1], "rb");
  if (!f) die("open input");
  uint32_t magic, slots, nops;
  int32_t off[5];
  read_exact(f, &magic, 4);
  if (magic != 0x31514248u) die("bad magic");
  read_exact(f, off, sizeof off);
  read_exact(f, &slots, 4);
  read_exact(f, &nops, 4);
  uint8_t* entry = load_code(f);
  uint8_t* exit_ = load_code(f);
  uint8_t* narrow = load_code(f);
  static uint8_t thread[4096] __attribute__((aligned(16)));
  uint64_t* ring = mmap(NULL, slots * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (ring == MAP_FAILED) die("mmap ring");
  uint64_t* words[5];
  for (int i = 0; i < 5; i++) words[i] = (uint64_t*)(thread + off[i]);
  uint64_t begin = (uint64_t)ring, end = begin + slots * 8ull, limit = end - 8;
  uint64_t* stops = calloc(nops ? nops : 1, 8);
  /* start(t, pos) as the control thread does (docs/architecture.md). */
  uint64_t pos = begin;
  for (uint32_t i = 0; i <= nops; i++) {
    uint64_t op = 0;
    if (i > 0) read_exact(f, &op, 8);
    if (i == 0 || op == 2) {
      if (pos >= limit) {
        if (pos != end) *(uint64_t*)pos = 2; /* pad */
        pos = begin;
      }
      *words[2] = 0;
      *words[1] = limit;
      *words[3] = begin;
      *words[4] = end;
      *(uint64_t*)pos = ((uint64_t)0x1000u << 32) | 3u; /* start record, ts 0x1000 */
      __atomic_store_n(words[0], pos + 8, __ATOMIC_RELEASE);
      if (i > 0) stops[i - 1] = *words[2];
      continue;
    }
    if (op == 1) {
      *words[2] = 1;
      __atomic_store_n(words[1], 0, __ATOMIC_RELEASE);
    } else if (op == 0) {
      call(exit_, thread, 0);
    } else {
      call((op & 1) ? narrow : entry, thread, op & ~(uint64_t)1);
    }
    if (*words[2] > 1) pos = *words[2];
    stops[i - 1] = *words[2];
  }
  for (int i = 0; i < 5; i++) fwrite(words[i], 8, 1, stdout);
  /* ring stored relative: the test needs begin to rebase addresses */
  fwrite(ring, 8, slots, stdout);
  fwrite(stops, 8, nops, stdout);
  return 0;
}
