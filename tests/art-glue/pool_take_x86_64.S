/*
 * Hubble for AOSP: the pool's block-end function (art-patches/files/runtime/hubble/
 * pool_x86_64.S, the repository's copy, as the rest of the glue under test) assembled the way
 * nterp_x86_64.S expands it inside libart: with ART's own x86_64 function macros
 * (arch/x86_64/asm_support_x86_64.S) and the THREAD_*_OFFSETs of the generated asm_defines.h
 * of the patched tree. libart's copy is a hidden symbol, unreachable from a test; this one is
 * what hubble_bridge.cc's PoolTakeEntry answers in bridge_test (tests/art-glue/glue.mk).
 */
#include "asm_support.h"
#include "arch/x86_64/asm_support_x86_64.S"
#include "hubble/pool_x86_64.S"

HUBBLE_POOL_TAKE_FUNCTION
