/*
 * Runs nterp's x86_64 trace-point macros (art-patches/files/runtime/hubble/nterp_x86_64.S,
 * included unchanged) outside ART: the harness points %gs at a fake Thread whose Hubble block
 * sits at the real offsets (THREAD_HUBBLE_*_OFFSET from the command line).
 */
.macro DEFINE_FUNCTION name
    .text
    .global \name
    .type \name, @function
\name:
.endm
.macro END_FUNCTION name
    .size \name, .-\name
.endm

#include "runtime/hubble/nterp_x86_64.S"

// void hubble_test_entry(uint64_t method)   (%gs = the fake Thread)
DEFINE_FUNCTION hubble_test_entry
    HUBBLE_NTERP_TRACE_ENTRY %rdi, %edi
    ret
END_FUNCTION hubble_test_entry

// void hubble_test_exit(void)
DEFINE_FUNCTION hubble_test_exit
    HUBBLE_NTERP_TRACE_EXIT
    ret
END_FUNCTION hubble_test_exit

HUBBLE_NTERP_SLOW_PATH_FUNCTION
    .section .note.GNU-stack,"",@progbits
