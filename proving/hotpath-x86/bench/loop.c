/*
 * Hubble for AOSP: the Listing-1 loop of scripts/hotpath-bench (Hubble §7.1, Listing 1: a loop
 * over calls whose bodies do almost nothing, so that the trace points dominate).
 *
 * Every variant runs this same loop, compiled from this same file: `calls` indirect calls of a
 * callee `f(ArtMethod*, &counter)` whose body increments the counter, with one of eight
 * ArtMethod* values (framework-like, below 4 GiB). Only the callee differs: no tracing, the
 * floor, ours (the bytes ART emits), the peers' sequences, or a C body built with -pg (uftrace)
 * or with LTTng-UST tracepoints. Every `block` calls the loop calls `reset` (rings without a wrap
 * check start over; the same call for every variant).
 */
#include <stdint.h>
#include <time.h>

#include "loop.h"

static const uint64_t kMethods[8] = {0x70a01238, 0x70a01290, 0x70b2c010, 0x70c00400,
                                     0x71000128, 0x7123a0f0, 0x7200fff0, 0x72345678};

double hubble_loop_ns_per_call(callee_fn f, reset_fn reset, uint64_t calls, uint64_t block) {
  volatile callee_fn vf = f; /* one indirect call per iteration, for every variant alike */
  uint64_t counter = 0;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (uint64_t i = 0; i < calls; ++i) {
    if ((i & (block - 1)) == 0) reset();
    vf(kMethods[i & 7], &counter);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (counter != calls) return -1.0; /* the body ran once per call, or the variant is broken */
  return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
         (double)calls;
}
