/*
 * Hubble for AOSP: the hand-written variants of scripts/hotpath-bench, x86_64 (AT&T syntax).
 * Each is a callee f(ArtMethod* in %rdi, &counter in %rsi): trace point, the body
 * (addl $1, (%rsi), as the generator emits it for ours), trace point, ret.
 * HUBBLE_CURSOR_OFFSET is ART's Thread::HubbleCursorOffset<k64> (from the blob
 * file): every per-thread variant keeps its buffer pointer in the same %gs-relative word, the
 * cache line ours uses.
 */
    .text

// (a) No tracing: the body only.
    .globl bench_none
bench_none:
    addl $1, (%rsi)
    ret

// (b) The floor: one timer read, one 8-byte store, a cursor bump; nothing else (no off check,
// no method, no wrap check: the benchmark's reset() rewinds the buffer every block).
.macro FLOOR
    movq %gs:HUBBLE_CURSOR_OFFSET, %rcx
    rdtsc
    movq %rax, (%rcx)
    addq $8, %rcx
    movq %rcx, %gs:HUBBLE_CURSOR_OFFSET
.endm
    .globl bench_floor
bench_floor:
    FLOOR
    addl $1, (%rsi)
    FLOOR
    ret

// (b-) The timer read alone (what the floor costs without its store and cursor bump): shows how
// much of every variant is RDTSC itself.
    .globl bench_rdtsc
bench_rdtsc:
    rdtsc
    addl $1, (%rsi)
    rdtsc
    ret

// (e) Nanoscope-style: its published A64 entry (docs/hot-path.md, proving/hotpath-emu:
// LDR data_ptr; CBZ; MRS; STR method, +8; STR timestamp, +8; STR data_ptr) in x86_64: 16-byte
// records (the full pointer, the full 64-bit counter), an off check, no wrap and no stop check.
.macro NANOSCOPE what
    movq %gs:HUBBLE_CURSOR_OFFSET, %rcx
    testq %rcx, %rcx
    jz 1f
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq \what, (%rcx)
    movq %rax, 8(%rcx)
    addq $16, %rcx
    movq %rcx, %gs:HUBBLE_CURSOR_OFFSET
1:
.endm
    .globl bench_nanoscope
bench_nanoscope:
    NANOSCOPE %rdi
    addl $1, (%rsi)
    NANOSCOPE $0
    ret

// (f) BTrace-style: a record allocated in a block shared by all threads with an atomic
// fetch-and-add (LOCK XADD), 16-byte records, the block wrapped by masking.
.macro BTRACE what
    movl $16, %ecx
    lock xaddq %rcx, bench_btrace_cursor(%rip)
    andq $BENCH_RING_MASK, %rcx
    addq bench_btrace_base(%rip), %rcx
    rdtsc
    shlq $32, %rdx
    orq %rdx, %rax
    movq \what, (%rcx)
    movq %rax, 8(%rcx)
.endm
    .globl bench_btrace
bench_btrace:
    BTRACE %rdi
    addl $1, (%rsi)
    BTRACE $0
    ret

    .section .note.GNU-stack,"",@progbits
