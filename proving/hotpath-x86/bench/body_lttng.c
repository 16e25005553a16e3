/* Hubble for AOSP: scripts/hotpath-bench's LTTng-UST variant (h): the callee records its entry
 * and exit through LTTng-UST tracepoints (hubble_bench_tp.h), with a live session enabled. */
#define LTTNG_UST_TRACEPOINT_DEFINE
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "hubble_bench_tp.h"

#include "loop.h"

__attribute__((noinline)) void body(uint64_t method, uint64_t* counter) {
  lttng_ust_tracepoint(hubble_bench, entry, method);
  ++*counter;
  lttng_ust_tracepoint(hubble_bench, exit, method);
}
