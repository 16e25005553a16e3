/*
 * The pool's block-end function for arm (art-patches/files/runtime/hubble/pool_arm.S, included
 * unchanged) on its own, T32, for build.rs to turn into raw bytes that the tests place in
 * unicorn next to the emitted T32 trace points. THREAD_*_OFFSET come from
 * art-patches/thread-offsets.txt (4-byte pointers).
 */
#define rSELF r9
#include "../../asm/art_functions.S"

#include "runtime/hubble/pool_arm.S"

HUBBLE_POOL_TAKE_FUNCTION
