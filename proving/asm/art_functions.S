/*
 * ART's assembly function macros (runtime/arch/arm64/asm_support_arm64.S and
 * runtime/arch/arm/asm_support_arm.S ENTRY (T32), ARM_ENTRY (A32) and END,
 * runtime/arch/x86{,_64}/asm_support_x86{,_64}.S DEFINE_FUNCTION/END_FUNCTION) reduced to what
 * a host executable needs: for the harnesses that assemble ART's hand-written Hubble code
 * unchanged (hotpath-emu/cpp/pool_a64.S, pool_t32.S and nterp_a32.S, hotpath-x86/cpp/pool_x86_64.S,
 * interp-replay/cpp/nterp_*_harness.S). ART's own versions add hidden visibility, entry
 * alignment and (x86) the 0xff method-header bytes, none of which the host code relies on.
 */
#if defined(__aarch64__)
.macro ENTRY name
    .text
    .global \name
    .type \name, %function
\name:
    .cfi_startproc
.endm
.macro END name
    .cfi_endproc
    .size \name, .-\name
.endm
#elif defined(__arm__)
    .syntax unified
    .arch armv7-a
    .thumb
// ENTRY and ARM_ENTRY differ only in the instruction set of the function that follows.
.macro FUNCTION_START name
    .type \name, %function
    .global \name
    .balign 16
\name:
    .cfi_startproc
.endm
.macro ENTRY name
    .thumb_func
    FUNCTION_START \name
.endm
.macro ARM_ENTRY name
    .arm
    FUNCTION_START \name
.endm
.macro END name
    .cfi_endproc
    .size \name, .-\name
.endm
#else
.macro DEFINE_FUNCTION name
    .text
    .global \name
    .type \name, @function
\name:
    .cfi_startproc
.endm
.macro END_FUNCTION name
    .cfi_endproc
    .size \name, .-\name
.endm
#endif
