/*
 * The pool's block-end function for x86 (art-patches/files/runtime/hubble/pool_x86.S, included
 * unchanged) for the static 32-bit harness (x86_harness.c -DHUBBLE_X86 -DHUBBLE_POOL), with ART's
 * x86 function macros (runtime/arch/x86/asm_support_x86.S) reduced to what an executable needs.
 * The THREAD_*_OFFSET values come from the real Thread (4-byte pointers), as
 * scripts/hotpath-x86-gen printed them (hubble_hotpath_x86::pool::build_pool_harness).
 */
#include "../../asm/art_functions.S"

#include "runtime/hubble/pool_x86.S"

HUBBLE_POOL_TAKE_FUNCTION
    .globl hubble_pool_take_end
hubble_pool_take_end:

    .section .note.GNU-stack, "", @progbits
