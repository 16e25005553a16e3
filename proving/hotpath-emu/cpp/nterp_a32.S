/*
 * nterp's arm trace-point macros (art-patches/files/runtime/hubble/nterp_arm.S, included
 * unchanged: A32, with its slow-path function and the T32 block-end function of pool_arm.S it
 * calls) as raw bytes for unicorn, since qemu-arm's user mode refuses armng's MRRC of CNTVCT.
 * Two A32 wrappers at fixed offsets run one macro each with rSELF (r9) = the fake Thread and
 * return to lr: 0x000 entry (r0 = ArtMethod*), 0x080 exit. THREAD_*_OFFSET come from
 * art-patches/thread-offsets.txt (4-byte pointers).
 */
#define rSELF r9
#include "../../asm/art_functions.S"

#include "runtime/hubble/nterp_arm.S"

    .text
    .arm
    .global hubble_test_entry
hubble_test_entry:
    push {lr}
    HUBBLE_NTERP_TRACE_ENTRY
    pop {pc}
    .org 0x80
    .global hubble_test_exit
hubble_test_exit:
    push {lr}
    HUBBLE_NTERP_TRACE_EXIT
    pop {pc}
    .org 0x100

HUBBLE_NTERP_SLOW_PATH_FUNCTION
