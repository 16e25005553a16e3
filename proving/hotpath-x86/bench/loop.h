/* Hubble for AOSP: the Listing-1 loop shared by every variant of scripts/hotpath-bench. */
#ifndef HUBBLE_BENCH_LOOP_H_
#define HUBBLE_BENCH_LOOP_H_
#include <stdint.h>
typedef void (*callee_fn)(uint64_t method, uint64_t* counter);
typedef void (*reset_fn)(void);
/* ns per call over `calls` calls (block: a power of two); -1 if the body did not run. */
double hubble_loop_ns_per_call(callee_fn f, reset_fn reset, uint64_t calls, uint64_t block);
#endif
