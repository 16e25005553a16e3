/*
 * The pool's block-end function (art-patches/files/runtime/hubble/pool_x86_64.S, included
 * unchanged) for the x86_64 harness (x86_harness.c -DHUBBLE_POOL), with ART's x86_64 function
 * macros (runtime/arch/x86_64/asm_support_x86_64.S) reduced to what an executable needs. The
 * THREAD_*_OFFSET values come from the real Thread, as scripts/hotpath-x86-gen printed them
 * (hubble_hotpath_x86::build_pool_harness passes them with -D).
 */
#include "../../asm/art_functions.S"

#include "runtime/hubble/pool_x86_64.S"

HUBBLE_POOL_TAKE_FUNCTION
    .globl hubble_pool_take_end
hubble_pool_take_end:

    .section .note.GNU-stack, "", @progbits
