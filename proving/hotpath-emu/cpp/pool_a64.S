/*
 * The pool's block-end function (art-patches/files/runtime/hubble/pool_arm64.S, included
 * unchanged) on its own, for build.rs to turn into raw bytes that the tests place in unicorn
 * next to the emitted trace points. THREAD_*_OFFSET come from art-patches/thread-offsets.txt.
 */
#define xSELF x19
#include "../../asm/art_functions.S"

#include "runtime/hubble/pool_arm64.S"

HUBBLE_POOL_TAKE_FUNCTION
