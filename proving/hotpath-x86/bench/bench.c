/*
 * Hubble for AOSP: scripts/hotpath-bench's main program, x86_64. Runs the Listing-1 loop
 * (loop.c) with each in-process variant, `rounds` times, interleaved (round 1 of every variant,
 * then round 2, ...), and prints "<round> <variant> <ns per call>" lines.
 *
 *   bench BLOBS CALLS ROUNDS
 *
 * Ours are the benchmark methods the generator emits with ART's assembler (`method x86_64 ...`
 * lines of scripts/hotpath-x86-gen's output: entry trace point, incq, exit trace point), mapped
 * executable and called with %gs at a Thread image whose Hubble block sits at ART's offsets.
 */
#define _GNU_SOURCE
#include <asm/prctl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "loop.h"

void bench_none(uint64_t, uint64_t*);
void bench_floor(uint64_t, uint64_t*);
void bench_rdtsc(uint64_t, uint64_t*);
void bench_nanoscope(uint64_t, uint64_t*);
void bench_btrace(uint64_t, uint64_t*);
uint64_t bench_btrace_cursor;
uint64_t bench_btrace_base;

#define RING_BYTES (BENCH_RING_MASK + 1)
#define BLOCK 16384 /* calls between resets: 2 records x 16 bytes x BLOCK = 512 KiB < ring */

static uint64_t thread_mem[512] __attribute__((aligned(4096)));
static int off[5]; /* cursor, limit, stop, begin, end */
static uint64_t* ring;
#define W(i) (*(volatile uint64_t*)((char*)thread_mem + off[i]))

static void reset_none(void) {}
static void reset_cursor(void) { W(0) = (uint64_t)(uintptr_t)ring; }
static void reset_btrace(void) { bench_btrace_cursor = 0; }

/* Tracing on, as the control thread starts it: START record, limit = end - 8, cursor after it. */
static void start_ours(void) {
  uint64_t begin = (uint64_t)(uintptr_t)ring;
  ring[0] = (0x1234ull << 32) | 3;
  W(2) = 0;
  W(3) = begin;
  W(4) = begin + RING_BYTES;
  W(1) = begin + RING_BYTES - 8;
  W(0) = begin + 8;
}

static callee_fn map_method(const char* hex) {
  size_t n = strlen(hex) / 2;
  uint8_t* code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED || n > 4096) exit(4);
  for (size_t i = 0; i < n; ++i) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) exit(3);
    code[i] = (uint8_t)v;
  }
  if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0) exit(4);
  return (callee_fn)(void*)code;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s BLOBS CALLS ROUNDS\n", argv[0]);
    return 2;
  }
  uint64_t calls = strtoull(argv[2], NULL, 10);
  int rounds = atoi(argv[3]);
  FILE* f = fopen(argv[1], "r");
  if (f == NULL) {
    perror(argv[1]);
    return 2;
  }
  static char line[1 << 16];
  callee_fn ours[3] = {NULL, NULL, NULL};
  const char* counters[3] = {"rdtsc", "lfence-rdtsc", "rdtscp"};
  int have_offsets = 0;
  while (fgets(line, sizeof(line), f)) {
    char hex[1 << 15];
    char counter[32];
    if (sscanf(line, "offsets 8 %d %d %d %d %d", &off[0], &off[1], &off[2], &off[3], &off[4]) == 5) {
      have_offsets = 1;
    } else if (sscanf(line, "method x86_64 %31s %32767s", counter, hex) == 2) {
      for (int i = 0; i < 3; ++i) {
        if (!strcmp(counter, counters[i])) ours[i] = map_method(hex);
      }
    }
  }
  fclose(f);
  if (!have_offsets || !ours[0] || !ours[1] || !ours[2]) {
    fprintf(stderr, "%s: no offsets or benchmark methods\n", argv[1]);
    return 3;
  }
  if (off[0] != HUBBLE_CURSOR_OFFSET) {
    fprintf(stderr, "built for cursor offset %d, the blobs say %d\n", HUBBLE_CURSOR_OFFSET, off[0]);
    return 3;
  }
  ring = aligned_alloc(4096, RING_BYTES);
  if (ring == NULL) return 4;
  memset(ring, 0, RING_BYTES);
  bench_btrace_base = (uint64_t)(uintptr_t)ring;
  if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)thread_mem) != 0) return 4;

  struct {
    const char* name;
    callee_fn f;
    reset_fn reset;
    int state; /* 0: cursor reset per block, 1: ours on, 2: ours off */
  } v[] = {
      {"none", bench_none, reset_none, 0},
      {"rdtsc", bench_rdtsc, reset_none, 0},
      {"floor", bench_floor, reset_cursor, 0},
      {"ours-on", ours[0], reset_none, 1},
      {"ours-off", ours[0], reset_none, 2},
      {"ours-on-lfence", ours[1], reset_none, 1},
      {"ours-on-rdtscp", ours[2], reset_none, 1},
      {"nanoscope", bench_nanoscope, reset_cursor, 0},
      {"btrace", bench_btrace, reset_btrace, 0},
  };
  const int nv = sizeof(v) / sizeof(v[0]);
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < nv; ++i) {
      memset(thread_mem, 0, sizeof(thread_mem));
      if (v[i].state == 2) memset(ring, 0, RING_BYTES);
      if (v[i].state == 1) start_ours();
      if (v[i].state == 0) reset_cursor();
      hubble_loop_ns_per_call(v[i].f, v[i].reset, calls / 10, BLOCK); /* warm up */
      if (v[i].state == 1) start_ours();
      double ns = hubble_loop_ns_per_call(v[i].f, v[i].reset, calls, BLOCK);
      if (ns < 0) {
        fprintf(stderr, "%s: the body did not run once per call\n", v[i].name);
        return 5;
      }
      if (v[i].state == 1 && W(0) == 0) {
        fprintf(stderr, "%s: tracing switched itself off\n", v[i].name);
        return 5;
      }
      if (v[i].state == 2 && (W(0) != 0 || ring[0] != 0 || ring[1] != 0)) {
        fprintf(stderr, "%s: wrote while off\n", v[i].name);
        return 5;
      }
      printf("%d %s %.4f\n", r, v[i].name, ns);
      fflush(stdout);
    }
  }
  return 0;
}
