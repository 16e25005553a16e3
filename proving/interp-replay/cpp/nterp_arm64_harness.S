/*
 * Runs nterp's arm64 trace-point macros (art-patches/files/runtime/hubble/nterp_arm64.S,
 * included unchanged) outside ART: a fake Thread whose Hubble block sits at the real offsets.
 * THREAD_HUBBLE_*_OFFSET come from the compiler command line (art-patches/thread-offsets.txt).
 */
#define xSELF x19
#include "../../asm/art_functions.S"

#include "runtime/hubble/nterp_arm64.S"

// void hubble_test_entry(void* thread, uint64_t method)
ENTRY hubble_test_entry
    stp x19, x30, [sp, #-16]!
    mov x19, x0
    mov x0, x1
    HUBBLE_NTERP_TRACE_ENTRY x0, w0
    ldp x19, x30, [sp], #16
    ret
END hubble_test_entry

// void hubble_test_exit(void* thread)
ENTRY hubble_test_exit
    stp x19, x30, [sp, #-16]!
    mov x19, x0
    HUBBLE_NTERP_TRACE_EXIT
    ldp x19, x30, [sp], #16
    ret
END hubble_test_exit

HUBBLE_NTERP_SLOW_PATH_FUNCTION
