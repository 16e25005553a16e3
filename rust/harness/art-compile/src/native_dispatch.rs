//! Invoke dispatch in the native x86_64 child (`crate::native`): compiled code that calls
//! `pInvokeStaticTrampolineWithAccessCheck` continues in the callee's compiled code, natively,
//! as `crate::dispatch` does in unicorn, so call trees run compiled on x86_64 too.
//!
//! The parent lays out, before the fork, every method the call can reach through static invokes
//! (`NativeDispatch`: each method's code, its `ArtMethod*`, and per invoke the return address's
//! offset — the stack map at the call — with the dex method index the code passes and the
//! callee). In the child, the entrypoint slot leads to `hubble_native_invoke_static`, which does
//! what `art_quick_invoke_static_trampoline_with_access_check` does on x86_64 (ART 14:
//! runtime/arch/x86_64/quick_entrypoints_x86_64.S, INVOKE_TRAMPOLINE_BODY: the argument
//! registers saved, `artInvokeStaticTrampolineWithAccessCheck(method_idx, this, self, sp)`,
//! the arguments restored, RDI = the callee's `ArtMethod*`, a tail jump to its code):
//! `hubble_native_resolve` stands for the C++ function, with its checks (the caller's frame
//! holds the caller's `ArtMethod*` at the caller's sp; the return address is a call's stack map
//! in the caller's code; the method index is the invoke's).
//!
//! Returns are observed without moving anything on the stack: the resolver replaces the
//! return address the callee will return through (the slot keeps its place, so the callee's
//! frame and its view of the caller's out area are ART's) by `hubble_native_return`, which logs
//! the return and jumps to the real address, kept on a shadow stack. The log — an `ArtMethod*`
//! per dispatch, 0 per return — is the call tree the harness observed (`Outcome::calls`),
//! which the ring must equal, as in unicorn.

/// A method in the child's code region.
#[derive(Clone, Debug)]
pub struct NativeCode {
    pub code: Vec<u8>,
    pub art_method: u64,
    /// Per static invoke: (offset of the call's return address, dex method index, callee's
    /// index in `NativeDispatch::methods`).
    pub invokes: Vec<(u32, u32, usize)>,
}

/// Every method a call can reach through static invokes; `methods[0]` is the one called.
#[derive(Clone, Debug)]
pub struct NativeDispatch {
    pub methods: Vec<NativeCode>,
    /// The Thread offset of `pInvokeStaticTrampolineWithAccessCheck`.
    pub invoke_static_slot: u64,
    /// The other entrypoints' Thread offsets: a call through one ends the child with
    /// `EXIT_UNPROVIDED` (natively there is no exception delivery or runtime helper).
    pub other_slots: Vec<u64>,
}

impl NativeDispatch {
    /// Code offsets of the methods in the child's region (64-byte aligned, as the emulated
    /// arena) and its size.
    pub fn layout(&self) -> (Vec<usize>, usize) {
        let mut offsets = Vec::with_capacity(self.methods.len());
        let mut at = 0usize;
        for m in &self.methods {
            at = (at + 63) & !63;
            offsets.push(at);
            at += m.code.len();
        }
        (offsets, (at + 0xfff) & !0xfff)
    }
}

/// Dispatches and returns one call may log (an `ArtMethod*` or 0 each).
pub const LOG_CAPACITY: usize = 1 << 16;
const SHADOW_CAPACITY: usize = 1 << 12;

/// Exit statuses of a child whose dispatch failed (what the runtime would abort on).
pub const EXIT_NO_CALLER: i32 = 20;
pub const EXIT_NO_INVOKE: i32 = 21;
pub const EXIT_WRONG_INDEX: i32 = 22;
pub const EXIT_WRONG_FRAME: i32 = 23;
pub const EXIT_OVERFLOW: i32 = 24;
pub const EXIT_UNPROVIDED: i32 = 25;

/// Why a child exited with `status`, if it is one of the dispatcher's.
pub fn exit_reason(status: i32) -> Option<&'static str> {
    Some(match status {
        EXIT_NO_CALLER => "a return address outside every loaded method",
        EXIT_NO_INVOKE => "no invoke's stack map at the return address (ToDexPc's LOG(FATAL))",
        EXIT_WRONG_INDEX => "the code passed another method index than its invoke names",
        EXIT_WRONG_FRAME => "the caller's frame does not hold the caller's ArtMethod*",
        EXIT_OVERFLOW => "more dispatches or nesting than the log holds",
        EXIT_UNPROVIDED => {
            "the code called a quick entrypoint the native child does not provide (a throw or \
             a runtime helper: no native exception delivery)"
        }
        _ => return None,
    })
}

#[cfg(target_arch = "x86_64")]
mod child {
    use super::*;

    // The child's state: written only in the forked child, which is single-threaded. The
    // assembly below reads and writes the log and the shadow stack by name.
    #[no_mangle]
    static mut HUBBLE_NATIVE_LOG: [u64; LOG_CAPACITY] = [0; LOG_CAPACITY];
    #[no_mangle]
    static mut HUBBLE_NATIVE_LOG_LEN: u64 = 0;
    #[no_mangle]
    static mut HUBBLE_NATIVE_SHADOW: [u64; SHADOW_CAPACITY] = [0; SHADOW_CAPACITY];
    #[no_mangle]
    static mut HUBBLE_NATIVE_SHADOW_TOP: u64 = 0;
    static mut DISPATCH: *const NativeDispatch = std::ptr::null();
    static mut STARTS: [u64; 256] = [0; 256];

    extern "C" {
        fn hubble_native_invoke_static();
        fn hubble_native_return();
    }

    std::arch::global_asm!(
        ".globl hubble_native_invoke_static",
        "hubble_native_invoke_static:",
        // [rsp] = the return address in the caller, rdi = the dex method index, the managed
        // arguments in rsi, rdx, rcx, r8, r9 and xmm0-7: saved (5 pushes and 128 bytes keep
        // rsp 16-byte aligned for the call, the caller's sp having been aligned at its call).
        "push rsi",
        "push rdx",
        "push rcx",
        "push r8",
        "push r9",
        "sub rsp, 128",
        "movdqu [rsp], xmm0",
        "movdqu [rsp + 16], xmm1",
        "movdqu [rsp + 32], xmm2",
        "movdqu [rsp + 48], xmm3",
        "movdqu [rsp + 64], xmm4",
        "movdqu [rsp + 80], xmm5",
        "movdqu [rsp + 96], xmm6",
        "movdqu [rsp + 112], xmm7",
        // hubble_native_resolve(method_idx, &return address slot): rax = ArtMethod*, rdx = code.
        "lea rsi, [rsp + 168]",
        "call {resolve}",
        "mov r11, rdx",
        "mov rdi, rax",
        "movdqu xmm0, [rsp]",
        "movdqu xmm1, [rsp + 16]",
        "movdqu xmm2, [rsp + 32]",
        "movdqu xmm3, [rsp + 48]",
        "movdqu xmm4, [rsp + 64]",
        "movdqu xmm5, [rsp + 80]",
        "movdqu xmm6, [rsp + 96]",
        "movdqu xmm7, [rsp + 112]",
        "add rsp, 128",
        "pop r9",
        "pop r8",
        "pop rcx",
        "pop rdx",
        "pop rsi",
        "jmp r11",
        "",
        ".globl hubble_native_return",
        "hubble_native_return:",
        // A callee returned (rax and xmm0 hold its result: untouched; r10 and r11 are scratch
        // at a return): log 0, pop the real return address, go there.
        "mov r10, [rip + HUBBLE_NATIVE_LOG_LEN]",
        "lea r11, [rip + HUBBLE_NATIVE_LOG]",
        "mov qword ptr [r11 + r10 * 8], 0",
        "inc r10",
        "mov [rip + HUBBLE_NATIVE_LOG_LEN], r10",
        "mov r10, [rip + HUBBLE_NATIVE_SHADOW_TOP]",
        "dec r10",
        "mov [rip + HUBBLE_NATIVE_SHADOW_TOP], r10",
        "lea r11, [rip + HUBBLE_NATIVE_SHADOW]",
        "mov r11, [r11 + r10 * 8]",
        "jmp r11",
        resolve = sym hubble_native_resolve,
    );

    /// Every entrypoint slot but the invoke trampoline's: the child ends, saying so.
    extern "C" fn hubble_native_unprovided() {
        // SAFETY: exits the child; nothing else.
        unsafe { libc::_exit(EXIT_UNPROVIDED) }
    }

    #[repr(C)]
    struct Pair {
        method: u64,
        code: u64,
    }

    /// artInvokeStaticTrampolineWithAccessCheck for the child (see the module doc); exits the
    /// child where the runtime would abort.
    extern "C" fn hubble_native_resolve(method_idx: u64, ret_slot: *mut u64) -> Pair {
        // SAFETY: in the child only (the trampoline is reachable only from code the child
        // runs), which is single-threaded: DISPATCH and STARTS were set by `install` before
        // the call; ret_slot points at the return address the `call` pushed, and the caller's
        // sp (one slot above) at its frame's ArtMethod* (ART's x86_64 frame entry stores RDI
        // at [rsp]).
        unsafe {
            let d = &*DISPATCH;
            let ret = *ret_slot;
            let Some(k) = (0..d.methods.len()).find(|&k| {
                let start = STARTS[k];
                ret > start && ret <= start + d.methods[k].code.len() as u64
            }) else {
                libc::_exit(EXIT_NO_CALLER)
            };
            let caller = &d.methods[k];
            if *ret_slot.add(1) != caller.art_method {
                libc::_exit(EXIT_WRONG_FRAME);
            }
            let offset = (ret - STARTS[k]) as u32;
            let Some(&(_, idx, target)) = caller.invokes.iter().find(|i| i.0 == offset) else {
                libc::_exit(EXIT_NO_INVOKE)
            };
            if idx != method_idx as u32 {
                libc::_exit(EXIT_WRONG_INDEX);
            }
            let (len, top) = (
                HUBBLE_NATIVE_LOG_LEN as usize,
                HUBBLE_NATIVE_SHADOW_TOP as usize,
            );
            // Room for this entry and every open frame's return.
            if len + top + 2 >= LOG_CAPACITY || top + 1 >= SHADOW_CAPACITY {
                libc::_exit(EXIT_OVERFLOW);
            }
            let callee = &d.methods[target];
            let log = std::ptr::addr_of_mut!(HUBBLE_NATIVE_LOG).cast::<u64>();
            *log.add(len) = callee.art_method;
            HUBBLE_NATIVE_LOG_LEN = (len + 1) as u64;
            let shadow = std::ptr::addr_of_mut!(HUBBLE_NATIVE_SHADOW).cast::<u64>();
            *shadow.add(top) = ret;
            HUBBLE_NATIVE_SHADOW_TOP = (top + 1) as u64;
            *ret_slot = hubble_native_return as *const () as u64;
            Pair {
                method: callee.art_method,
                code: STARTS[target],
            }
        }
    }

    /// In the child: copies every method's code into `region` (the layout's size, writable),
    /// points the Thread's invoke slot at the trampoline; returns the called method's code.
    ///
    /// # Safety
    /// In the forked child only, before the code runs; `region` is a fresh mapping of
    /// `d.layout().1` bytes, `thread` the Thread image (the slot offset lies inside it).
    pub unsafe fn install(d: &NativeDispatch, region: *mut u8, thread: *mut u8) -> u64 {
        // SAFETY: the caller's contract; offsets come from `layout`, inside the region.
        unsafe {
            if d.methods.len() > 256 {
                libc::_exit(EXIT_OVERFLOW);
            }
            let (offsets, _) = d.layout();
            for (k, m) in d.methods.iter().enumerate() {
                let at = region.add(offsets[k]);
                std::ptr::copy_nonoverlapping(m.code.as_ptr(), at, m.code.len());
                STARTS[k] = at as u64;
            }
            DISPATCH = d;
            HUBBLE_NATIVE_LOG_LEN = 0;
            HUBBLE_NATIVE_SHADOW_TOP = 0;
            for &slot in &d.other_slots {
                thread
                    .add(slot as usize)
                    .cast::<u64>()
                    .write_unaligned(hubble_native_unprovided as *const () as u64);
            }
            thread
                .add(d.invoke_static_slot as usize)
                .cast::<u64>()
                .write_unaligned(hubble_native_invoke_static as *const () as u64);
            STARTS[0]
        }
    }

    /// The log after the call: its length and entries.
    ///
    /// # Safety
    /// In the child, after the calls.
    pub unsafe fn log() -> &'static [u64] {
        // SAFETY: the child is single-threaded; the length never exceeds the capacity.
        unsafe {
            std::slice::from_raw_parts(
                std::ptr::addr_of!(HUBBLE_NATIVE_LOG).cast::<u64>(),
                HUBBLE_NATIVE_LOG_LEN as usize,
            )
        }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use child::{install, log};
