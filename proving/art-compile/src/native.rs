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
//! register discipline is checked instruction by instruction by proving/hotpath-x86).

use crate::abi::Arg;
pub use crate::native_dispatch::NativeDispatch;

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

/// Core register values, fp register values, the out area's bytes.
pub type Placed = (Vec<u64>, Vec<u64>, Vec<u8>);

/// Where the x86_64 managed ABI puts the arguments, as
/// `InvokeDexCallingConventionVisitorX86_64::GetNextLocation` (code_generator_x86_64.cc:2805)
/// does: core in rsi, rdx, rcx, r8, r9, fp in xmm0-7, the rest in the caller's out area at
/// `GetStackOffsetOf(stack_index)` = 8 + 4 * stack_index above sp at the call
/// (code_generator.h:940; every argument counts, one vreg or two). Returns the core and fp
/// register values and the out area's bytes from sp that the arguments use (its first 8, the
/// ArtMethod* slot, zero), a multiple of 8.
pub fn place_x86_64(args: &[Arg]) -> Result<Placed, NativeError> {
    let (mut core, mut fp, mut area) = (Vec::new(), Vec::new(), vec![0u8; OUT_AREA]);
    let (mut gp_index, mut float_index, mut stack_index) = (0usize, 0usize, 0usize);
    for a in args {
        let wide = matches!(a.ty, b'J' | b'D');
        let on_stack = match a.ty {
            b'F' | b'D' => {
                float_index += 1;
                float_index > 8
            }
            _ => {
                gp_index += 1;
                gp_index > 5
            }
        };
        let bits = if wide { a.bits } else { a.bits & 0xffff_ffff };
        if !on_stack && matches!(a.ty, b'F' | b'D') {
            fp.push(bits);
        } else if !on_stack {
            core.push(bits);
        }
        // Every argument also at its slot, as art_quick_invoke_stub copies them all
        // (quick_entrypoints_x86_64.S:559); only the stack-passed ones are read from there.
        let at = 8 + 4 * stack_index;
        let n = if wide { 8 } else { 4 };
        area.get_mut(at..at + n)
            .ok_or_else(|| NativeError::Args("too many arguments for the out area".into()))?
            .copy_from_slice(&bits.to_le_bytes()[..n]);
        stack_index += if wide { 2 } else { 1 };
    }
    area.truncate((8 + 4 * stack_index + 7) & !7);
    Ok((core, fp, area))
}

/// Bytes the child reserves below the return address for the callee (see the call's SAFETY).
const OUT_AREA: usize = 256;

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
    /// r12-r15 (ART's managed callee-saves the child can give values to) that the call did
    /// not preserve: bit k for r(12+k).
    pub callee_saves_changed: u64,
    /// rsp just before the call instruction.
    pub rsp_at_call: u64,
    /// For a JNI stub: what it left in the images (`crate::jni`).
    pub jni: Option<JniAfter>,
    /// The thread's `end` word after the calls (many-thread mode: the block it owns).
    pub end: u64,
    /// With invoke dispatch (`run_dispatch`): every dispatch (the callee's `ArtMethod*`) and
    /// every return (0) the child observed, in order (`crate::native_dispatch`).
    pub dispatch_log: Vec<u64>,
    /// With a heap (`run_dispatch`): its bytes after the call (the image's length).
    pub heap: Vec<u8>,
}

/// Many-thread mode (docs/many-threads.md): the pool's header as the runtime lays it out for a
/// pool at [`POOL_BASE`] (`hubble_format::pool::PoolWriter::new`, `set_take_entry` with
/// [`pool_take_entry`]), its size, and the thread's id (read by the block-end function into each
/// block it takes).
#[derive(Clone, Copy, Debug)]
pub struct PoolSetup {
    pub header: [u64; hubble_format::pool::POOL_HEADER_SLOTS],
    pub total_slots: usize,
    pub tid: u32,
}

/// Where the child maps the pool (its ring mapping, at a fixed address: the header holds it).
pub const POOL_BASE: u64 = 0x5e00_0000_0000;

#[cfg(target_arch = "x86_64")]
extern "C" {
    /// runtime/hubble/pool_x86_64.S, assembled by build.rs (the `call *P_TAKE` target).
    fn hubble_pool_take();
}

/// The block-end function's address, for the pool header's `P_TAKE` (ART: `PoolTakeEntry`).
#[cfg(target_arch = "x86_64")]
pub fn pool_take_entry() -> u64 {
    hubble_pool_take as *const () as u64
}

#[cfg(not(target_arch = "x86_64"))]
pub fn pool_take_entry() -> u64 {
    0
}

impl NativeRun {
    /// The return value's bits for a method of `shorty` (rax, or xmm0 for floating point),
    /// narrowed to the return type (ART leaves the upper bits undefined).
    pub fn result(&self, shorty: &str) -> u64 {
        match shorty.as_bytes()[0] {
            b'J' => self.rax,
            b'D' => self.xmm0,
            b'F' => self.xmm0 & 0xffff_ffff,
            b'V' => 0,
            _ => self.rax & 0xffff_ffff,
        }
    }
}

/// The `Thread` and `JNIEnvExt` fields a JNI stub must leave as it found them (read after the
/// call, natively or in unicorn).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StubLeft {
    /// `Thread::tls32_.state_and_flags`.
    pub state: u64,
    pub held_mutator_lock: u64,
    pub top_quick_frame: u64,
    pub exception: u64,
    pub cookie: u64,
    pub segment_state: u64,
}

/// What the child reads after a JNI stub's call: the fields, and where the JNIEnv was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JniAfter {
    pub left: StubLeft,
    pub env: u64,
    /// The objects the last `JniLockObject` / `JniUnlockObject` calls got (rbx), and how many
    /// calls each had.
    pub locked: u64,
    pub unlocked: u64,
    pub lock_calls: u32,
    pub unlock_calls: u32,
}

/// What a JNI stub needs besides the `Thread` image managed code reads (offsets from
/// `crate::jni::JniLayout`): the native code and its entry, the JNIEnv and ArtMethod fields.
#[derive(Clone, Copy, Debug)]
pub struct JniImage<'a> {
    pub natives: &'a [u8],
    /// Offset of the native function in `natives`.
    pub entry: u64,
    pub method_jni_entrypoint: u64,
    pub env_self: u64,
    pub env_cookie: u64,
    pub env_segment_state: u64,
    pub jni_env: u64,
    pub mutator_lock: u64,
    pub held_mutator_lock: u64,
    pub exception: u64,
    pub top_quick_frame: u64,
    pub class_ref: u32,
    pub mutator_lock_value: u64,
    pub cookie_value: u32,
    pub segment_state_value: u32,
    /// Thread offsets of the pJniLockObject / pJniUnlockObject entrypoints.
    pub lock_entrypoint: u64,
    pub unlock_entrypoint: u64,
}

/// Patterns given to r12-r15 before each call (checked after it).
const CALLEE_SAVE_PATTERN: [u64; 4] = [
    0x1212_0000_0000_0012,
    0x1313_0000_0000_0013,
    0x1414_0000_0000_0014,
    0x1515_0000_0000_0015,
];

/// rax, xmm0, cursor, elapsed ns, then what a JNI stub left (`JniAfter`), rsp at the call,
/// the mask of r12-r15 that came back changed, the thread's `end` word.
const HEADER: usize = 17 * 8;
const RESULT_BYTES: usize = HEADER + RING_SLOTS * 8;

/// Calls the code once, tracing on.
pub fn run(code: &[u8], args: &[Arg], method: u64) -> Result<NativeRun, NativeError> {
    calls(code, args, method, 1, true)
}

/// Calls `d.methods[0]` once, tracing on, its invokes dispatched into the other methods' code
/// and its field accesses served (`crate::native_dispatch`), with `heap` (the objects,
/// `heap::image`) mapped at `heap::HEAP_BASE`.
pub fn run_dispatch(
    d: &NativeDispatch,
    heap: &[u8],
    args: &[Arg],
) -> Result<NativeRun, NativeError> {
    let entry = d
        .methods
        .first()
        .ok_or_else(|| NativeError::Args("no method to call".into()))?;
    run_child(
        &entry.code,
        args,
        entry.art_method,
        1,
        true,
        None,
        None,
        Some((d, heap)),
    )
}

/// Calls the code `iterations` times in a row in one child, with tracing on (the Hubble block
/// as start() leaves it) or off (cursor 0, as between stop and restart), and times the loop.
pub fn calls(
    code: &[u8],
    args: &[Arg],
    method: u64,
    iterations: u64,
    tracing: bool,
) -> Result<NativeRun, NativeError> {
    run_child(code, args, method, iterations, tracing, None, None, None)
}

/// Calls the code `iterations` times in a row with the thread in many-thread mode, as
/// `pool::start` leaves it (no block, `begin` = the pool | 1, `tid` set): the trace points take
/// blocks of the pool `pool` describes through its `P_TAKE`. The result's `ring` holds the
/// pool's slots from [`POOL_BASE`], `cursor` the thread's cursor (absolute), `end` its block.
pub fn pool_calls(
    code: &[u8],
    args: &[Arg],
    method: u64,
    iterations: u64,
    pool: &PoolSetup,
) -> Result<NativeRun, NativeError> {
    if pool.total_slots > RING_SLOTS {
        return Err(NativeError::Args(format!(
            "a pool of {} slots is larger than the child's {RING_SLOTS}",
            pool.total_slots
        )));
    }
    run_child(
        code,
        args,
        method,
        iterations,
        true,
        None,
        Some(*pool),
        None,
    )
}

/// Calls a compiled JNI stub once, `method` an `ArtMethod*` the child maps (its declaring
/// class and entry point from JNI written from `jni`), around the native code in `jni`.
pub fn jni_call(
    code: &[u8],
    args: &[Arg],
    method: u64,
    jni: &JniImage<'_>,
) -> Result<NativeRun, NativeError> {
    run_child(code, args, method, 1, true, Some(*jni), None, None)
}

#[cfg(target_arch = "x86_64")]
#[allow(clippy::too_many_arguments)]
fn run_child(
    code: &[u8],
    args: &[Arg],
    method: u64,
    iterations: u64,
    tracing: bool,
    jni: Option<JniImage<'_>>,
    pool: Option<PoolSetup>,
    dispatch: Option<(&NativeDispatch, &[u8])>,
) -> Result<NativeRun, NativeError> {
    let (core, fp, area) = place_x86_64(args)?;
    let mut out_area = [0u8; OUT_AREA];
    out_area[..area.len()].copy_from_slice(&area);
    let mut c = [0u64; 5];
    c[..core.len()].copy_from_slice(&core);
    let mut f = [0u64; 8];
    f[..fp.len()].copy_from_slice(&fp);
    // Before the fork: the child of a multithreaded process must not allocate.
    let offs = crate::thread::hubble_offsets(8);
    let tid_offset = crate::thread::tid_offset(8);
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
                    out_area: &out_area,
                    out_area_used: area.len(),
                    offs: &offs,
                    iterations,
                    tracing,
                    jni,
                    pool,
                    tid_offset,
                    dispatch,
                },
                fds[1],
            )
        }
    }
    // SAFETY: closing our copy of the write end.
    unsafe { libc::close(fds[1]) };
    // The header and the ring, then the dispatch log's length and entries, then the heap.
    let heap_len = dispatch.map_or(0, |(_, h)| h.len());
    let mut buf = vec![0u8; RESULT_BYTES + 8];
    let mut got = 0usize;
    loop {
        if got == buf.len() {
            let logged =
                u64::from_le_bytes(buf[RESULT_BYTES..RESULT_BYTES + 8].try_into().unwrap());
            let want = RESULT_BYTES
                + 8
                + 8 * logged.min(crate::native_dispatch::LOG_CAPACITY as u64) as usize
                + heap_len;
            if want == buf.len() {
                break;
            }
            buf.resize(want, 0);
        }
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
    if let Some(why) = libc::WIFEXITED(status)
        .then(|| crate::native_dispatch::exit_reason(libc::WEXITSTATUS(status)))
        .flatten()
    {
        return Err(NativeError::Os(format!("invoke dispatch: {why}")));
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
        callee_saves_changed: word(14),
        rsp_at_call: word(13),
        jni: jni.map(|_| JniAfter {
            left: StubLeft {
                state: word(4),
                held_mutator_lock: word(5),
                top_quick_frame: word(6),
                exception: word(7),
                cookie: word(8),
                segment_state: word(9),
            },
            env: word(10),
            locked: word(11),
            unlocked: word(12),
            lock_calls: word(15) as u32,
            unlock_calls: (word(15) >> 32) as u32,
        }),
        end: word(16),
        dispatch_log: (RESULT_BYTES / 8 + 1..(buf.len() - heap_len) / 8)
            .map(word)
            .collect(),
        heap: buf[buf.len() - heap_len..].to_vec(),
    })
}

/// The compiled code is x86_64's: on any other host no child can run it.
#[cfg(not(target_arch = "x86_64"))]
#[allow(clippy::too_many_arguments)]
fn run_child(
    _code: &[u8],
    _args: &[Arg],
    _method: u64,
    _iterations: u64,
    _tracing: bool,
    _jni: Option<JniImage<'_>>,
    _pool: Option<PoolSetup>,
    _dispatch: Option<(&NativeDispatch, &[u8])>,
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
    /// The caller's out area (stack-passed arguments), copied below the return address.
    out_area: &'a [u8; OUT_AREA],
    /// Bytes of it the arguments use (copied per call, as the invoke stub copies them).
    out_area_used: usize,
    offs: &'a [u64; 5],
    iterations: u64,
    tracing: bool,
    jni: Option<JniImage<'a>>,
    pool: Option<PoolSetup>,
    tid_offset: u64,
    dispatch: Option<(&'a NativeDispatch, &'a [u8])>,
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
        out_area,
        out_area_used,
        offs,
        iterations,
        tracing,
        jni,
        pool,
        tid_offset,
        dispatch,
    } = *call;
    const ARCH_SET_GS: i32 = 0x1001;
    let len = match dispatch {
        Some((d, _)) => d.layout().1,
        None => (code.len() + 0xfff) & !0xfff,
    };
    let ring_bytes = RING_SLOTS * 8;
    // SAFETY: anonymous private mappings; the code is copied in, then made executable; the
    // Hubble block's offsets lie inside the thread mapping (thread-offsets.txt: < 0x200).
    let (entry, thread, ring) = unsafe {
        // Many-thread mode: the ring mapping is the pool, at the address its header names.
        let ring_at = if pool.is_some() { POOL_BASE } else { 0 };
        let (mem, thread, ring) = (
            anon_rw(len),
            anon_rw(0x2000),
            anon_rw_at(ring_at, ring_bytes),
        );
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
        if let Some(p) = pool {
            // pool::start: no block (cursor SEALED, limit 0), seq 0 in `end`, the pool tag in
            // `begin`; the tid where Thread::TidOffset says.
            std::ptr::copy_nonoverlapping(p.header.as_ptr(), ring.cast::<u64>(), p.header.len());
            thread
                .cast::<u8>()
                .add(tid_offset as usize)
                .cast::<u32>()
                .write_unaligned(p.tid);
            field(crate::thread::STOP, 0);
            field(crate::thread::LIMIT, 0);
            field(crate::thread::BEGIN, begin | 1);
            field(crate::thread::END, 0);
            field(crate::thread::CURSOR, hubble_format::pool::SEALED);
        } else {
            ring.cast::<u64>()
                .write(hubble_format::slot::encode_start(0));
            field(crate::thread::STOP, 0);
            field(crate::thread::LIMIT, end - 8);
            field(crate::thread::BEGIN, begin);
            field(crate::thread::END, end);
            field(crate::thread::CURSOR, if tracing { begin + 8 } else { 0 });
        }
        let entry = match dispatch {
            Some((d, heap)) => {
                crate::native_dispatch::install(d, heap, mem.cast::<u8>(), thread.cast::<u8>())
            }
            None => {
                std::ptr::copy_nonoverlapping(code.as_ptr(), mem.cast::<u8>(), code.len());
                mem as u64
            }
        };
        // A method that does not return is killed (SIGALRM) after 10 s.
        libc::alarm(10);
        if libc::mprotect(mem, len, libc::PROT_READ | libc::PROT_EXEC) != 0
            || libc::syscall(libc::SYS_arch_prctl, ARCH_SET_GS, thread as u64) != 0
        {
            libc::_exit(4);
        }
        (entry, thread, ring)
    };
    // SAFETY: fresh mappings (the ArtMethod's page at its fixed address, which nothing else
    // in this child uses); every field offset comes from ART's accessors and lies inside its
    // mapping (Thread image 0x2000 bytes, JNIEnv page 0x1000, ArtMethod below 0x100).
    let env = match jni {
        None => 0u64,
        Some(j) => unsafe { jni_images(&j, thread.cast::<u8>(), method) },
    };
    let (mut rax, mut xmm0_f) = (0u64, 0f64);
    let mut rsp_at_call = 0u64;
    let mut saves = [0u64; 4];
    let mut changed = 0u64;
    let ctx: [u64; 4] = [
        entry,
        &mut rsp_at_call as *mut u64 as u64,
        out_area.as_ptr() as u64,
        out_area_used as u64,
    ];
    let t0 = monotonic_ns();
    for _ in 0..iterations {
        // SAFETY: calls the compiled method with ART's managed ABI; the stack is realigned to
        // 16 bytes around the call and restored through rbp (callee-saved in ART's x86_64 ABI
        // too). Below the return address the caller owns an area for the callee's ArtMethod*
        // slot and its arguments, which compiled code spills incoming arguments into
        // ([rsp + frame + 16] and up): art_quick_invoke_static_stub (ART 14:
        // runtime/arch/x86_64/quick_entrypoints_x86_64.S:547 "Reserve stack space for argument
        // array", :552 a null ArtMethod* slot, :559 the arguments copied above it) reserves it
        // before its call, and so does this (256 bytes, filled as that stub fills it: a null
        // ArtMethod* slot, then every argument at its vreg slot, `place_x86_64`).
        // Without it the callee overwrote this function's own stack (LPressure;->live30's
        // spills hung the release-built benchmark's loop).
        // r12-r15 get patterns and are read back (ART's managed callee-saves: the code must
        // give them back; rbx and rbp cannot be asm operands, and rbp restores the stack).
        unsafe {
            std::arch::asm!(
                "push rbp",
                "mov rbp, rsp",
                "and rsp, -16",
                "sub rsp, 256",
                // rax = the context: [code entry, &rsp_at_call, out area, bytes used]
                // (registers are scarce: every other free one carries an argument or a
                // callee-save pattern). The out area: the ArtMethod* slot, then every argument
                // at its slot; only the bytes the arguments use (8 at least), so that the
                // timed loop of benches/x86_64_overhead.rs pays one or two stores for it.
                "xor r10d, r10d",
                "2:",
                "mov r11, [rax + 16]",
                "mov r11, [r11 + r10]",
                "mov [rsp + r10], r11",
                "add r10, 8",
                "cmp r10, [rax + 24]",
                "jb 2b",
                "mov r11, [rax + 8]",
                "mov [r11], rsp",
                "call [rax]",
                "mov rsp, rbp",
                "pop rbp",
                inout("rax") ctx.as_ptr() as u64 => rax,
                out("r10") _,
                out("r11") _,
                inout("r12") CALLEE_SAVE_PATTERN[0] => saves[0],
                inout("r13") CALLEE_SAVE_PATTERN[1] => saves[1],
                inout("r14") CALLEE_SAVE_PATTERN[2] => saves[2],
                inout("r15") CALLEE_SAVE_PATTERN[3] => saves[3],
                in("rdi") method,
                in("rsi") c[0], in("rdx") c[1], in("rcx") c[2], in("r8") c[3], in("r9") c[4],
                in("xmm0") f64::from_bits(f[0]), in("xmm1") f64::from_bits(f[1]),
                in("xmm2") f64::from_bits(f[2]), in("xmm3") f64::from_bits(f[3]),
                in("xmm4") f64::from_bits(f[4]), in("xmm5") f64::from_bits(f[5]),
                in("xmm6") f64::from_bits(f[6]), in("xmm7") f64::from_bits(f[7]),
                lateout("xmm0") xmm0_f,
                clobber_abi("C"),
            );
        }
        for k in 0..4 {
            if saves[k] != CALLEE_SAVE_PATTERN[k] {
                changed |= 1 << k;
            }
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
        let cursor = if cursor == 0 || pool.is_some() {
            cursor
        } else {
            cursor - ring as u64
        };
        let end_word = thread
            .cast::<u8>()
            .add(offs[crate::thread::END] as usize)
            .cast::<u64>()
            .read_unaligned();
        let mut header = [0u8; HEADER];
        header[..8].copy_from_slice(&rax.to_le_bytes());
        header[8..16].copy_from_slice(&xmm0_f.to_bits().to_le_bytes());
        header[16..24].copy_from_slice(&cursor.to_le_bytes());
        header[24..32].copy_from_slice(&elapsed.to_le_bytes());
        if let Some(j) = jni {
            let t = thread.cast::<u8>();
            let e = env as *const u8;
            let words = [
                u64::from(t.cast::<u32>().read_unaligned()),
                t.add(j.held_mutator_lock as usize)
                    .cast::<u64>()
                    .read_unaligned(),
                t.add(j.top_quick_frame as usize)
                    .cast::<u64>()
                    .read_unaligned(),
                t.add(j.exception as usize).cast::<u64>().read_unaligned(),
                u64::from(e.add(j.env_cookie as usize).cast::<u32>().read_unaligned()),
                u64::from(
                    e.add(j.env_segment_state as usize)
                        .cast::<u32>()
                        .read_unaligned(),
                ),
                env,
                e.add(LOCK_SLOTS).cast::<u64>().read_unaligned(),
                e.add(LOCK_SLOTS + 16).cast::<u64>().read_unaligned(),
            ];
            for (k, w) in words.iter().enumerate() {
                header[32 + 8 * k..40 + 8 * k].copy_from_slice(&w.to_le_bytes());
            }
            let counts = e.add(LOCK_SLOTS + 8).cast::<u64>().read_unaligned()
                | (e.add(LOCK_SLOTS + 24).cast::<u64>().read_unaligned() << 32);
            header[120..128].copy_from_slice(&counts.to_le_bytes());
        }
        header[104..112].copy_from_slice(&rsp_at_call.to_le_bytes());
        header[112..120].copy_from_slice(&changed.to_le_bytes());
        header[128..136].copy_from_slice(&end_word.to_le_bytes());
        // Then the dispatch log: its length and entries (none without dispatch).
        let (log, heap): (&[u64], &[u8]) = match dispatch {
            Some((_, image)) => (
                crate::native_dispatch::log(),
                crate::native_dispatch::heap(image.len()),
            ),
            None => (&[], &[]),
        };
        if !write_all(out, &header)
            || !write_all(
                out,
                std::slice::from_raw_parts(ring.cast::<u8>(), ring_bytes),
            )
            || !write_all(out, &(log.len() as u64).to_le_bytes())
            || !write_all(
                out,
                std::slice::from_raw_parts(log.as_ptr().cast::<u8>(), log.len() * 8),
            )
            || !write_all(out, heap)
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
/// Lays out what a JNI stub reads besides the Hubble block (as `crate::jni::JniMachine` does
/// in unicorn): the thread Runnable with the mutator lock held, its JNIEnv, the ArtMethod at
/// `method` with its declaring class and entry point from JNI, the native code executable.
/// Returns the JNIEnv's address; exits the child on a mapping failure.
///
/// # Safety
/// In the forked child only; `thread` is the 0x2000-byte Thread image.
#[cfg(target_arch = "x86_64")]
unsafe fn jni_images(j: &JniImage<'_>, thread: *mut u8, method: u64) -> u64 {
    // SAFETY: the caller's contract; each write stays inside the mapping it names.
    unsafe {
        let env = anon_rw(0x1000);
        let page = method & !0xfff;
        let art_method = libc::mmap(
            page as *mut libc::c_void,
            0x1000,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        );
        let natives_len = (j.natives.len() + 0xfff) & !0xfff;
        let natives = anon_rw(natives_len);
        if env == libc::MAP_FAILED || art_method as u64 != page || natives == libc::MAP_FAILED {
            libc::_exit(6);
        }
        std::ptr::copy_nonoverlapping(j.natives.as_ptr(), natives.cast::<u8>(), j.natives.len());
        if libc::mprotect(natives, natives_len, libc::PROT_READ | libc::PROT_EXEC) != 0 {
            libc::_exit(6);
        }
        let put = |base: *mut u8, off: u64, v: u64| {
            base.add(off as usize).cast::<u64>().write_unaligned(v)
        };
        let put32 = |base: *mut u8, off: u64, v: u32| {
            base.add(off as usize).cast::<u32>().write_unaligned(v)
        };
        let env = env.cast::<u8>();
        put32(thread, 0, 0);
        put(thread, j.jni_env, env as u64);
        put(thread, j.mutator_lock, j.mutator_lock_value);
        put(thread, j.held_mutator_lock, j.mutator_lock_value);
        put(thread, j.exception, 0);
        put(thread, j.top_quick_frame, 0);
        put(env, j.env_self, thread as u64);
        put32(env, j.env_cookie, j.cookie_value);
        put32(env, j.env_segment_state, j.segment_state_value);
        let m = method as *mut u8;
        put32(m, 0, j.class_ref);
        put(m, j.method_jni_entrypoint, natives as u64 + j.entry);
        // The monitor entrypoints of synchronized stubs (jni_compiler.cc 2.1/7.2; the object
        // in rbx, X86_64JniCallingConvention::LockingArgumentRegister): one thread, so the
        // monitor is free; each records the object and counts its calls in the JNIEnv page:
        //   push rax; movabs rax, SLOT; mov [rax], rbx; inc qword [rax+8]; pop rax; ret
        let stubs = anon_rw(0x1000);
        if stubs == libc::MAP_FAILED {
            libc::_exit(6);
        }
        for (k, off) in [j.lock_entrypoint, j.unlock_entrypoint]
            .into_iter()
            .enumerate()
        {
            let slot = env as u64 + (LOCK_SLOTS + 16 * k) as u64;
            let mut code = [0u8; 20];
            code[..3].copy_from_slice(&[0x50, 0x48, 0xb8]);
            code[3..11].copy_from_slice(&slot.to_le_bytes());
            code[11..].copy_from_slice(&[0x48, 0x89, 0x18, 0x48, 0xff, 0x40, 0x08, 0x58, 0xc3]);
            let at = stubs.cast::<u8>().add(32 * k);
            std::ptr::copy_nonoverlapping(code.as_ptr(), at, code.len());
            put(thread, off, at as u64);
        }
        if libc::mprotect(stubs, 0x1000, libc::PROT_READ | libc::PROT_EXEC) != 0 {
            libc::_exit(6);
        }
        env as u64
    }
}

/// Where the monitor stubs record their calls in the JNIEnv page (after the JNIEnvExt fields).
#[cfg(target_arch = "x86_64")]
const LOCK_SLOTS: usize = 0x800;

/// The same at `at` exactly (MAP_FIXED_NOREPLACE; MAP_FAILED if taken), or anywhere for 0.
///
/// # Safety
/// As [`anon_rw`].
#[cfg(target_arch = "x86_64")]
unsafe fn anon_rw_at(at: u64, len: usize) -> *mut libc::c_void {
    if at == 0 {
        // SAFETY: the caller's contract.
        return unsafe { anon_rw(len) };
    }
    // SAFETY: a fresh anonymous mapping at an address nothing else in the child uses; the
    // kernel refuses (MAP_FAILED) rather than replace an existing mapping.
    let p = unsafe {
        libc::mmap(
            at as *mut libc::c_void,
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
            -1,
            0,
        )
    };
    if p as u64 == at {
        p
    } else {
        libc::MAP_FAILED
    }
}

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
