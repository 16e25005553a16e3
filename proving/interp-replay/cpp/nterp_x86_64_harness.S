/*
 * Runs nterp's x86_64 trace-point macros (art-patches/files/runtime/hubble/nterp_x86_64.S,
 * included unchanged) outside ART: the harness points %gs at a fake Thread whose Hubble block
 * sits at the real offsets (THREAD_HUBBLE_*_OFFSET from the command line).
 *
 * Around each macro every register but the ones nterp_x86_64.S may clobber (rcx, rdx, r11, the
 * flags) is set to a pattern and compared afterwards: x86_64ng's START_EXECUTING_INSTRUCTIONS
 * needs rdi (the ArtMethod*), r12-r15 (rPC, rFP, rIBASE, rREFS); op_return* needs rax and xmm0
 * (the return value) and r15. The functions return the mask of changed registers (bit n = rax,
 * rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8 ... r15, then xmm0 = bit 16).
 */
#include "../../asm/art_functions.S"

#include "runtime/hubble/nterp_x86_64.S"

    .data
    .balign 16
xmm_pattern:
    .quad 0x0706050403020100, 0x0f0e0d0c0b0a0908
saved_rsp:
    .quad 0
saved_rdi:
    .quad 0

.macro SET_PATTERNS
    movabsq $0xa0a0a0a0a0a0a0a0, %rax                    // the return value
    movabsq $0xb0b0b0b0b0b0b0b0, %rbx                    // rINST
    movabsq $0xb9b9b9b9b9b9b9b9, %rbp
    movabsq $0x5151515151515151, %rsi
    movabsq $0x0808080808080808, %r8
    movabsq $0x0909090909090909, %r9
    movabsq $0x1010101010101010, %r10
    movabsq $0x1212121212121212, %r12                    // rPC
    movabsq $0x1313131313131313, %r13                    // rFP
    movabsq $0x1414141414141414, %r14                    // rIBASE
    movabsq $0x1515151515151515, %r15                    // rREFS
    movdqa xmm_pattern(%rip), %xmm0
    movq %rsp, saved_rsp(%rip)
.endm

// ecx |= 1 << \bit unless \reg == \value (clobbers rdx).
.macro EXPECT reg, value, bit
    movabsq $\value, %rdx
    cmpq %rdx, \reg
    je 1f
    orl $(1 << \bit), %ecx
1:
.endm

// eax = mask of the registers that changed (rcx, rdx, r11 excluded: the macros clobber them).
.macro COMPARE_PATTERNS
    xorl %ecx, %ecx
    EXPECT %rax, 0xa0a0a0a0a0a0a0a0, 0
    EXPECT %rbx, 0xb0b0b0b0b0b0b0b0, 3
    cmpq saved_rsp(%rip), %rsp
    je 2f
    orl $(1 << 4), %ecx
    movq saved_rsp(%rip), %rsp                           // so that the epilogue still works
2:
    EXPECT %rbp, 0xb9b9b9b9b9b9b9b9, 5
    EXPECT %rsi, 0x5151515151515151, 6
    cmpq saved_rdi(%rip), %rdi
    je 3f
    orl $(1 << 7), %ecx
3:
    EXPECT %r8, 0x0808080808080808, 8
    EXPECT %r9, 0x0909090909090909, 9
    EXPECT %r10, 0x1010101010101010, 10
    EXPECT %r12, 0x1212121212121212, 12
    EXPECT %r13, 0x1313131313131313, 13
    EXPECT %r14, 0x1414141414141414, 14
    EXPECT %r15, 0x1515151515151515, 15
    movdqa xmm_pattern(%rip), %xmm1
    pcmpeqb %xmm0, %xmm1
    pmovmskb %xmm1, %edx
    cmpl $0xffff, %edx
    je 4f
    orl $(1 << 16), %ecx
4:
    movl %ecx, %eax
.endm

.macro PROLOGUE
    pushq %rbx
    pushq %rbp
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
.endm
.macro EPILOGUE
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbp
    popq %rbx
    ret
.endm

// uint32_t hubble_test_entry(uint64_t method)   (%gs = the fake Thread)
DEFINE_FUNCTION hubble_test_entry
    PROLOGUE
    movq %rdi, saved_rdi(%rip)                           // the ArtMethod*
    SET_PATTERNS
    HUBBLE_NTERP_TRACE_ENTRY %rdi, %edi
    COMPARE_PATTERNS
    EPILOGUE
END_FUNCTION hubble_test_entry

// uint32_t hubble_test_exit(void)
DEFINE_FUNCTION hubble_test_exit
    PROLOGUE
    movabsq $0xd1d1d1d1d1d1d1d1, %rdi
    movq %rdi, saved_rdi(%rip)
    SET_PATTERNS
    HUBBLE_NTERP_TRACE_EXIT
    COMPARE_PATTERNS
    EPILOGUE
END_FUNCTION hubble_test_exit

HUBBLE_NTERP_SLOW_PATH_FUNCTION
    .section .note.GNU-stack,"",@progbits
