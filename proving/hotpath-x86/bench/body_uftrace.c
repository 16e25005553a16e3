/* Hubble for AOSP: scripts/hotpath-bench's uftrace variant: the same loop (loop.c, built without
 * -pg), the callee built with -pg, so `uftrace record` traces exactly the callee's entry and exit.
 * main_peer.c is its main(). */
#include "loop.h"

__attribute__((noinline)) void body(uint64_t method, uint64_t* counter) {
  (void)method;
  ++*counter;
}
