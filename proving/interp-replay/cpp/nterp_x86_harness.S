/*
 * Runs nterp's x86 (32-bit) trace-point macros (art-patches/files/runtime/hubble/nterp_x86.S,
 * included unchanged) outside ART, as a static i386 binary: the harness points %fs at a fake
 * Thread whose Hubble block sits at the real k32 offsets (THREAD_HUBBLE_*_OFFSET from the
 * command line).
 *
 * Around each macro every register nterp keeps live at that place is set to a pattern and
 * compared afterwards (x86ng/main.S START_EXECUTING_INSTRUCTIONS: eax = the ArtMethod*, edx =
 * rIBASE, esi = rPC, edi = rFP, ebp = rREFS; control_flow.S op_return*: eax, edx:eax and xmm0 =
 * the return value, ebp = rREFS, esi/edi/ebx). Only ecx and the flags may change. The
 * functions return the mask of changed registers (bit n = eax, ecx, edx, ebx, esp, ebp, esi,
 * edi, xmm0), ecx excluded.
 */
#include "../../asm/art_functions.S"

#include "runtime/hubble/nterp_x86.S"

    .data
    .balign 16
xmm_pattern:
    .long 0x0f0e0d0c, 0x1b1a1918, 0x27262524, 0x33323130
saved_esp:
    .long 0
saved_method:
    .long 0

// Sets the live registers to their patterns; eax is set by the caller.
.macro SET_PATTERNS
    movl $0xb0b0b0b0, %ebx
    movl $0xd0d0d0d0, %edx                               // rIBASE / high half of a long
    movl $0x51515151, %esi                               // rPC
    movl $0xd1d1d1d1, %edi                               // rFP
    movl $0xb9b9b9b9, %ebp                               // rREFS
    movdqa xmm_pattern, %xmm0
    movl $0xc0c0c0c0, %ecx                               // clobbered by the macros
    movl %esp, saved_esp
.endm

// ecx = mask of the registers that differ from their patterns (eax compared to \eax_want).
.macro COMPARE_PATTERNS eax_want
    xorl %ecx, %ecx
    cmpl \eax_want, %eax
    je 10f
    orl $0x001, %ecx
10:
    cmpl $0xd0d0d0d0, %edx
    je 12f
    orl $0x004, %ecx
12:
    cmpl $0xb0b0b0b0, %ebx
    je 13f
    orl $0x008, %ecx
13:
    cmpl saved_esp, %esp
    je 14f
    orl $0x010, %ecx
    movl saved_esp, %esp                                 // so that the epilogue still works
14:
    cmpl $0xb9b9b9b9, %ebp
    je 15f
    orl $0x020, %ecx
15:
    cmpl $0x51515151, %esi
    je 16f
    orl $0x040, %ecx
16:
    cmpl $0xd1d1d1d1, %edi
    je 17f
    orl $0x080, %ecx
17:
    movdqa xmm_pattern, %xmm1
    pcmpeqb %xmm0, %xmm1
    pmovmskb %xmm1, %eax
    cmpl $0xffff, %eax
    je 18f
    orl $0x100, %ecx
18:
    movl %ecx, %eax
.endm

// uint32_t hubble_test_entry(uint32_t method)   (%fs = the fake Thread)
DEFINE_FUNCTION hubble_test_entry
    pushl %ebp
    pushl %edi
    pushl %esi
    pushl %ebx
    movl 20(%esp), %eax                                  // the ArtMethod*
    movl %eax, saved_method
    SET_PATTERNS
    HUBBLE_NTERP_TRACE_ENTRY
    COMPARE_PATTERNS saved_method
    popl %ebx
    popl %esi
    popl %edi
    popl %ebp
    ret
END_FUNCTION hubble_test_entry

// uint32_t hubble_test_exit(void)
DEFINE_FUNCTION hubble_test_exit
    pushl %ebp
    pushl %edi
    pushl %esi
    pushl %ebx
    movl $0xa0a0a0a0, %eax                               // the return value (low half)
    SET_PATTERNS
    HUBBLE_NTERP_TRACE_EXIT
    COMPARE_PATTERNS $0xa0a0a0a0
    popl %ebx
    popl %esi
    popl %edi
    popl %ebp
    ret
END_FUNCTION hubble_test_exit

HUBBLE_NTERP_SLOW_PATH_FUNCTION
    .section .note.GNU-stack,"",@progbits
