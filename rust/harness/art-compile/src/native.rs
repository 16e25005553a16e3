//! Runs ART-compiled x86_64 code natively, in a forked child (a wrong byte kills the child,
//! never the harness): code in an executable mapping, the `ArtMethod*` in rdi, arguments as
//! code_generator_x86_64.cc's InvokeDexCallingConventionVisitorX86_64 places them (rsi, rdx,
//! rcx, r8, r9; xmm0-xmm7), and gs pointing at a `Thread` image (ART addresses Thread through
//! gs on x86_64): zero state_and_flags (no suspend request) and the Hubble block as the control
//! thread's start() leaves it, with a ring of its own. The child sends back the return
//! registers, the cursor and the ring; the caller decodes the ring as the tools do.
//!
//! What native execution cannot observe: the instructions executed, which trace points ran and
//! the registers around each one (arm64 and thumb2 get those from unicorn; the x86_64 sequence's
//! register discipline is checked instruction by instruction by rust/harness/hotpath-x86).

use crate::abi::Arg;

#[derive(Debug, thiserror::Error)]
pub enum NativeError {
    #[error("arguments: {0}")]
    Args(String),
    #[error("{0}")]
    Os(String),
    #[error("the compiled code crashed the child process (signal {0})")]
    Crashed(i32),
    #[error("native x86_64 execution needs an x86_64 host")]
    WrongHost,
}

/// Where the x86_64 managed ABI puts the arguments: core registers in rsi, rdx, rcx, r8, r9
/// order; fp in xmm0-7.
pub fn place_x86_64(args: &[Arg]) -> Result<(Vec<u64>, Vec<u64>), NativeError> {
    let (mut core, mut fp) = (Vec::new(), Vec::new());
    for a in args {
        match a.ty {
            b'F' | b'D' => fp.push(a.bits),
            b'J' => core.push(a.bits),
            _ => core.push(a.bits & 0xffff_ffff),
        }
    }
    if core.len() > 5 || fp.len() > 8 {
        return Err(NativeError::Args(
            "stack-passed arguments are not supported yet".into(),
        ));
    }
    Ok((core, fp))
}

/// Slots in the child's ring: far more than one corpus call writes, so a single call never wraps
/// (a timed loop of many calls does, through the trace point's own wrap path).
pub const RING_SLOTS: usize = 1 << 14;

/// What the child returns after its calls.
#[derive(Clone, Debug)]
pub struct NativeRun {
    pub rax: u64,
    pub xmm0: u64,
    /// The cursor after the calls, in bytes from the ring's start (0: tracing off).
    pub cursor: u64,
    /// Wall time of all the calls, in nanoseconds (CLOCK_MONOTONIC around the loop).
    pub elapsed_ns: u64,
    /// The ring, slot 0 holding the START record the harness wrote.
    pub ring: Vec<u64>,
}

const HEADER: usize = 32;
const RESULT_BYTES: usize = HEADER + RING_SLOTS * 8;

/// Calls the code once, tracing on.
pub fn run(code: &[u8], args: &[Arg], method: u64) -> Result<NativeRun, NativeError> {
    calls(code, args, method, 1, true)
}

/// Calls the code `iterations` times in a row in one child, with tracing on (the Hubble block
/// as start() leaves it) or off (cursor 0, as between stop and restart), and times the loop.
#[cfg(target_arch = "x86_64")]
pub fn calls(
    code: &[u8],
    args: &[Arg],
    method: u64,
    iterations: u64,
    tracing: bool,
) -> Result<NativeRun, NativeError> {
    let (core, fp) = place_x86_64(args)?;
    let mut c = [0u64; 5];
    c[..core.len()].copy_from_slice(&core);
    let mut f = [0u64; 8];
    f[..fp.len()].copy_from_slice(&fp);
    // Before the fork: the child of a multithreaded process must not allocate.
    let offs = crate::thread::hubble_offsets(8);
    let mut fds = [0i32; 2];
    // SAFETY: fds is a valid array of two ints.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(NativeError::Os("pipe failed".into()));
    }
    // SAFETY: the child only calls async-signal-safe functions (mmap, arch_prctl, write,
    // _exit) and the compiled code before exiting.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(NativeError::Os("fork failed".into()));
    }
    if pid == 0 {
        // SAFETY: in the child; see child().
        unsafe {
            child(
                &Call {
                    code,
                    method,
                    c: &c,
                    f: &f,
                    offs: &offs,
                    iterations,
                    tracing,
                },
                fds[1],
            )
        }
    }
    // SAFETY: closing our copy of the write end.
    unsafe { libc::close(fds[1]) };
    let mut buf = vec![0u8; RESULT_BYTES];
    let mut got = 0usize;
    while got < buf.len() {
        // SAFETY: reading into the unread tail of buf.
        let n = unsafe { libc::read(fds[0], buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    // SAFETY: closing the read end; waiting for our own child.
    let mut status = 0i32;
    unsafe {
        libc::close(fds[0]);
        libc::waitpid(pid, &mut status, 0);
    }
    if libc::WIFSIGNALED(status) {
        return Err(NativeError::Crashed(libc::WTERMSIG(status)));
    }
    if got != buf.len() {
        return Err(NativeError::Os(format!(
            "child exited ({status:#x}) without a result"
        )));
    }
    let word = |i: usize| u64::from_le_bytes(buf[i * 8..i * 8 + 8].try_into().unwrap());
    Ok(NativeRun {
        rax: word(0),
        xmm0: word(1),
        cursor: word(2),
        elapsed_ns: word(3),
        ring: (HEADER / 8..RESULT_BYTES / 8).map(word).collect(),
    })
}

#[cfg(not(target_arch = "x86_64"))]
pub fn calls(
    _code: &[u8],
    _args: &[Arg],
    _method: u64,
    _iterations: u64,
    _tracing: bool,
) -> Result<NativeRun, NativeError> {
    Err(NativeError::WrongHost)
}

/// Everything the child needs, prepared before the fork.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Call<'a> {
    code: &'a [u8],
    method: u64,
    c: &'a [u64; 5],
    f: &'a [u64; 8],
    offs: &'a [u64; 5],
    iterations: u64,
    tracing: bool,
}

/// # Safety
/// Only in a freshly forked child: never returns, never allocates.
#[cfg(target_arch = "x86_64")]
unsafe fn child(call: &Call<'_>, out: i32) -> ! {
    let Call {
        code,
        method,
        c,
        f,
        offs,
        iterations,
        tracing,
    } = *call;
    const ARCH_SET_GS: i32 = 0x1001;
    let len = (code.len() + 0xfff) & !0xfff;
    let ring_bytes = RING_SLOTS * 8;
    // SAFETY: anonymous private mappings; the code is copied in, then made executable; the
    // Hubble block's offsets lie inside the thread mapping (thread-offsets.txt: < 0x200).
    let (mem, thread, ring) = unsafe {
        let (mem, thread, ring) = (anon_rw(len), anon_rw(0x2000), anon_rw(ring_bytes));
        if mem == libc::MAP_FAILED || thread == libc::MAP_FAILED || ring == libc::MAP_FAILED {
            libc::_exit(3);
        }
        // The Hubble block as the control thread's start() leaves it (docs/architecture.md):
        // stop 0, limit = end - 8, a START record in slot 0, the cursor after it.
        let (begin, end) = (ring as u64, ring as u64 + ring_bytes as u64);
        let field = |f: usize, v: u64| {
            thread
                .cast::<u8>()
                .add(offs[f] as usize)
                .cast::<u64>()
                .write_unaligned(v)
        };
        ring.cast::<u64>()
            .write(hubble_format::slot::encode_start(0));
        field(crate::thread::STOP, 0);
        field(crate::thread::LIMIT, end - 8);
        field(crate::thread::BEGIN, begin);
        field(crate::thread::END, end);
        field(crate::thread::CURSOR, if tracing { begin + 8 } else { 0 });
        std::ptr::copy_nonoverlapping(code.as_ptr(), mem.cast::<u8>(), code.len());
        // A method that does not return is killed (SIGALRM) after 10 s.
        libc::alarm(10);
        if libc::mprotect(mem, len, libc::PROT_READ | libc::PROT_EXEC) != 0
            || libc::syscall(libc::SYS_arch_prctl, ARCH_SET_GS, thread as u64) != 0
        {
            libc::_exit(4);
        }
        (mem, thread, ring)
    };
    let (mut rax, mut xmm0_f) = (0u64, 0f64);
    let t0 = monotonic_ns();
    for _ in 0..iterations {
        // SAFETY: calls the compiled method with ART's managed ABI; the stack is realigned to
        // 16 bytes around the call and restored through rbp (callee-saved in ART's x86_64 ABI
        // too). Below the return address the caller owns an area for the callee's ArtMethod*
        // slot and its arguments, which compiled code spills incoming arguments into
        // ([rsp + frame + 16] and up): art_quick_invoke_static_stub (ART 14:
        // runtime/arch/x86_64/quick_entrypoints_x86_64.S:547 "Reserve stack space for argument
        // array", :552 a null ArtMethod* slot, :559 the arguments copied above it) reserves it
        // before its call, and so does this (256 bytes: the ArtMethod* slot and 13 register
        // arguments need 112; not filled in: compiled code reads only what it spilled there).
        // Without it the callee overwrote this function's own stack (LPressure;->live30's
        // spills hung the release-built benchmark's loop).
        unsafe {
            std::arch::asm!(
                "push rbp",
                "mov rbp, rsp",
                "and rsp, -16",
                "sub rsp, 256",
                "call {entry}",
                "mov rsp, rbp",
                "pop rbp",
                entry = in(reg) mem,
                in("rdi") method,
                in("rsi") c[0], in("rdx") c[1], in("rcx") c[2], in("r8") c[3], in("r9") c[4],
                in("xmm0") f64::from_bits(f[0]), in("xmm1") f64::from_bits(f[1]),
                in("xmm2") f64::from_bits(f[2]), in("xmm3") f64::from_bits(f[3]),
                in("xmm4") f64::from_bits(f[4]), in("xmm5") f64::from_bits(f[5]),
                in("xmm6") f64::from_bits(f[6]), in("xmm7") f64::from_bits(f[7]),
                lateout("rax") rax,
                lateout("xmm0") xmm0_f,
                clobber_abi("C"),
            );
        }
    }
    let elapsed = monotonic_ns() - t0;
    // SAFETY: the cursor field lies inside the thread mapping; the ring mapping is ring_bytes
    // long; the result is written to the pipe, then the child leaves without destructors.
    unsafe {
        let cursor = thread
            .cast::<u8>()
            .add(offs[crate::thread::CURSOR] as usize)
            .cast::<u64>()
            .read_unaligned();
        let cursor = if cursor == 0 { 0 } else { cursor - ring as u64 };
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(&rax.to_le_bytes());
        header[8..16].copy_from_slice(&xmm0_f.to_bits().to_le_bytes());
        header[16..24].copy_from_slice(&cursor.to_le_bytes());
        header[24..].copy_from_slice(&elapsed.to_le_bytes());
        if !write_all(out, &header)
            || !write_all(
                out,
                std::slice::from_raw_parts(ring.cast::<u8>(), ring_bytes),
            )
        {
            libc::_exit(5);
        }
        libc::_exit(0)
    }
}

/// A private anonymous read-write mapping of `len` bytes (MAP_FAILED on failure).
///
/// # Safety
/// Only mmap(2); async-signal-safe, so callable in the forked child.
#[cfg(target_arch = "x86_64")]
unsafe fn anon_rw(len: usize) -> *mut libc::c_void {
    // SAFETY: a fresh anonymous mapping aliases nothing.
    unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    }
}

/// write(2) until all of `bytes` is out (the pipe takes 64 KiB at a time).
#[cfg(target_arch = "x86_64")]
fn write_all(fd: i32, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: writing from a live slice.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            return false;
        }
        bytes = &bytes[n as usize..];
    }
    true
}

/// CLOCK_MONOTONIC in nanoseconds (the vDSO: no allocation, safe in the forked child).
#[cfg(target_arch = "x86_64")]
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
