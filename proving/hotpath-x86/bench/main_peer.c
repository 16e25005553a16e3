/* Hubble for AOSP: main() of scripts/hotpath-bench's uftrace and LTTng variants (built without
 * -pg): the Listing-1 loop over `body` (body_uftrace.c or body_lttng.c). Prints ns per call. */
#include <stdio.h>
#include <stdlib.h>

#include "loop.h"

void body(uint64_t method, uint64_t* counter);
static void reset(void) {}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  uint64_t calls = strtoull(argv[1], NULL, 10);
  hubble_loop_ns_per_call(body, reset, calls / 10, 16384);
  double ns = hubble_loop_ns_per_call(body, reset, calls, 16384);
  if (ns < 0) return 5;
  printf("%.4f\n", ns);
  return 0;
}
