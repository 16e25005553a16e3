//! Runs ART-compiled x86_64 code natively, in a forked child (a wrong byte kills the child,
//! never the harness): code in an executable mapping, the `ArtMethod*` in rdi, arguments as
//! code_generator_x86_64.cc's InvokeDexCallingConventionVisitorX86_64 places them (rsi, rdx,
//! rcx, r8, r9; xmm0-xmm7), and gs pointing at a zeroed `Thread` image (ART addresses Thread
//! through gs on x86_64; a zero state_and_flags means no suspend request).
//!
//! x86_64 code carries no trace point yet (patch 0014 emits nothing for the nodes; the x86
//! emitters are their own issue), so this is the untraced control: its result must equal the
//! arm64 and thumb2 results.

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

/// Calls the code once and returns (rax, xmm0 bits).
#[cfg(target_arch = "x86_64")]
pub fn run(code: &[u8], args: &[Arg], method: u64) -> Result<(u64, u64), NativeError> {
    let (core, fp) = place_x86_64(args)?;
    let mut c = [0u64; 5];
    c[..core.len()].copy_from_slice(&core);
    let mut f = [0u64; 8];
    f[..fp.len()].copy_from_slice(&fp);
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
        unsafe { child(code, method, &c, &f, fds[1]) }
    }
    // SAFETY: closing our copy of the write end.
    unsafe { libc::close(fds[1]) };
    let mut buf = [0u8; 16];
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
    Ok((
        u64::from_le_bytes(buf[..8].try_into().unwrap()),
        u64::from_le_bytes(buf[8..].try_into().unwrap()),
    ))
}

#[cfg(not(target_arch = "x86_64"))]
pub fn run(_code: &[u8], _args: &[Arg], _method: u64) -> Result<(u64, u64), NativeError> {
    Err(NativeError::WrongHost)
}

/// # Safety
/// Only in a freshly forked child: never returns.
#[cfg(target_arch = "x86_64")]
unsafe fn child(code: &[u8], method: u64, c: &[u64; 5], f: &[u64; 8], out: i32) -> ! {
    const ARCH_SET_GS: i32 = 0x1001;
    let len = (code.len() + 0xfff) & !0xfff;
    // SAFETY: anonymous private mappings; the code is copied in, then made executable.
    let (mem, thread) = unsafe {
        let mem = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        let thread = libc::mmap(
            std::ptr::null_mut(),
            0x2000,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if mem == libc::MAP_FAILED || thread == libc::MAP_FAILED {
            libc::_exit(3);
        }
        std::ptr::copy_nonoverlapping(code.as_ptr(), mem.cast::<u8>(), code.len());
        // A method that does not return is killed (SIGALRM) after 10 s.
        libc::alarm(10);
        if libc::mprotect(mem, len, libc::PROT_READ | libc::PROT_EXEC) != 0
            || libc::syscall(libc::SYS_arch_prctl, ARCH_SET_GS, thread as u64) != 0
        {
            libc::_exit(4);
        }
        (mem, thread)
    };
    let _ = thread;
    let rax: u64;
    let xmm0_f: f64;
    // SAFETY: calls the compiled method with ART's managed ABI; the stack is realigned to 16
    // bytes around the call and restored through rbp (callee-saved in ART's x86_64 ABI too).
    unsafe {
        std::arch::asm!(
            "push rbp",
            "mov rbp, rsp",
            "and rsp, -16",
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
    let mut buf = [0u8; 16];
    buf[..8].copy_from_slice(&rax.to_le_bytes());
    buf[8..].copy_from_slice(&xmm0_f.to_bits().to_le_bytes());
    // SAFETY: writing our result to the pipe, then leaving without running destructors.
    unsafe {
        libc::write(out, buf.as_ptr().cast(), buf.len());
        libc::_exit(0)
    }
}
