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

/// Where a call site continues: one method, or the method the receiver's class gives.
#[derive(Clone, Debug)]
pub enum Target {
    /// invoke-static, -direct, -super: the method at this index of `NativeDispatch::methods`.
    Fixed(usize),
    /// invoke-virtual, -interface: per receiver class (its class object's address, the
    /// object's `klass_` word), the method's index.
    ByClass(Vec<(u32, usize)>),
}

/// One invoke of a method.
#[derive(Clone, Debug)]
pub struct NativeInvoke {
    /// Offset of the call's return address in the caller's code.
    pub ret: u32,
    pub method_idx: u32,
    /// `InvokeKind` as a number: the trampoline the code must have called (0 static, 1 direct,
    /// 2 virtual, 3 super, 4 interface).
    pub kind: u32,
    pub target: Target,
}

/// One instance field a method's iget/iput names: its slot per receiver class.
#[derive(Clone, Debug)]
pub struct NativeField {
    pub field_idx: u32,
    /// The field's type descriptor's first character (how a read widens it).
    pub ty: u8,
    pub slots: Vec<(u32, u32)>,
}

/// A method in the child's code region.
#[derive(Clone, Debug)]
pub struct NativeCode {
    pub code: Vec<u8>,
    pub art_method: u64,
    pub invokes: Vec<NativeInvoke>,
    pub fields: Vec<NativeField>,
}

/// Every method a call can reach through static invokes; `methods[0]` is the one called.
#[derive(Clone, Debug)]
pub struct NativeDispatch {
    pub methods: Vec<NativeCode>,
    /// Thread offsets of the entrypoints the child provides: the invoke trampolines (by kind)
    /// and the instance field entrypoints (by `entrypoints::FIELD_ENTRYPOINTS` index).
    pub invoke_slots: Vec<(u32, u64)>,
    pub field_slots: Vec<(usize, u64)>,
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
pub const EXIT_NULL: i32 = 26;
pub const EXIT_NO_TARGET: i32 = 27;
pub const EXIT_WRONG_KIND: i32 = 28;
pub const EXIT_THROWS: i32 = 29;
/// A `Target::ByClass` entry for a class on which the call throws (an abstract method, a
/// missing interface method): the child ends, as it cannot deliver the exception.
pub const THROWS: usize = usize::MAX;

/// Why a child exited with `status`, if it is one of the dispatcher's.
pub fn exit_reason(status: i32) -> Option<&'static str> {
    Some(match status {
        EXIT_NO_CALLER => "a return address outside every loaded method",
        EXIT_NO_INVOKE => "no invoke's stack map at the return address (ToDexPc's LOG(FATAL))",
        EXIT_WRONG_INDEX => "the code passed another method index than its invoke names",
        EXIT_WRONG_FRAME => "the caller's frame does not hold the caller's ArtMethod*",
        EXIT_OVERFLOW => "more dispatches or nesting than the log holds",
        EXIT_NULL => {
            "a call or field access on null (its NullPointerException needs exception delivery, \
             which the native child does not provide)"
        }
        EXIT_NO_TARGET => "the receiver's class has no method or field for the call site",
        EXIT_WRONG_KIND => "the code called another invoke trampoline than its invoke's kind",
        EXIT_THROWS => {
            "a call that throws on the receiver's class (its error needs exception delivery, \
             which the native child does not provide)"
        }
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
        fn hubble_native_invoke_direct();
        fn hubble_native_invoke_virtual();
        fn hubble_native_invoke_super();
        fn hubble_native_invoke_interface();
        fn hubble_native_return();
        fn hubble_native_field_0();
        fn hubble_native_field_1();
        fn hubble_native_field_2();
        fn hubble_native_field_3();
        fn hubble_native_field_4();
        fn hubble_native_field_5();
        fn hubble_native_field_6();
        fn hubble_native_field_7();
        fn hubble_native_field_8();
        fn hubble_native_field_9();
        fn hubble_native_field_10();
        fn hubble_native_field_11();
    }

    /// The invoke trampolines, by `NativeInvoke::kind`.
    fn trampoline(kind: u32) -> u64 {
        (match kind {
            0 => hubble_native_invoke_static,
            1 => hubble_native_invoke_direct,
            2 => hubble_native_invoke_virtual,
            3 => hubble_native_invoke_super,
            _ => hubble_native_invoke_interface,
        }) as *const () as u64
    }

    /// The field entrypoint stubs, by `entrypoints::FIELD_ENTRYPOINTS` index.
    const FIELD_STUBS: [unsafe extern "C" fn(); 12] = [
        hubble_native_field_0,
        hubble_native_field_1,
        hubble_native_field_2,
        hubble_native_field_3,
        hubble_native_field_4,
        hubble_native_field_5,
        hubble_native_field_6,
        hubble_native_field_7,
        hubble_native_field_8,
        hubble_native_field_9,
        hubble_native_field_10,
        hubble_native_field_11,
    ];

    // A field entrypoint (a runtime call: the C ABI, caller-saves dead across it): the field
    // index in rdi, the object in rsi, a new value in rdx (FieldAccessCallingConventionX86_64);
    // the stub adds the return address (the referrer's code) and its own index, and tail-calls
    // the Rust double, which returns to the compiled code with the value in rax.
    macro_rules! field_stub {
        ($($k:literal),*) => {
            std::arch::global_asm!(
                $(
                    concat!(".globl hubble_native_field_", $k),
                    concat!("hubble_native_field_", $k, ":"),
                    "mov rcx, [rsp]",
                    concat!("mov r8d, ", $k),
                    "jmp {field}",
                )*
                field = sym hubble_native_field,
            );
        };
    }
    field_stub!(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);

    std::arch::global_asm!(
        ".globl hubble_native_invoke_static",
        "hubble_native_invoke_static:",
        "mov eax, 0",
        "jmp 2f",
        ".globl hubble_native_invoke_direct",
        "hubble_native_invoke_direct:",
        "mov eax, 1",
        "jmp 2f",
        ".globl hubble_native_invoke_virtual",
        "hubble_native_invoke_virtual:",
        "mov eax, 2",
        "jmp 2f",
        ".globl hubble_native_invoke_super",
        "hubble_native_invoke_super:",
        "mov eax, 3",
        "jmp 2f",
        ".globl hubble_native_invoke_interface",
        "hubble_native_invoke_interface:",
        "mov eax, 4",
        "2:",
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
        // hubble_native_resolve(method_idx, &return address slot, this (the saved rsi), kind):
        // rax = ArtMethod*, rdx = code.
        "lea rsi, [rsp + 168]",
        "mov rdx, [rsp + 160]",
        "mov ecx, eax",
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

    /// The method whose code a return address `ret` is in (GetOatQuickMethodHeader); the
    /// child ends if none.
    ///
    /// # Safety
    /// In the child, after `install`.
    unsafe fn caller_of(d: &NativeDispatch, ret: u64) -> usize {
        // SAFETY: the caller's contract: STARTS holds the installed methods' addresses.
        unsafe {
            match (0..d.methods.len()).find(|&k| {
                let start = STARTS[k];
                ret > start && ret <= start + d.methods[k].code.len() as u64
            }) {
                Some(k) => k,
                None => libc::_exit(EXIT_NO_CALLER),
            }
        }
    }

    #[repr(C)]
    struct Pair {
        method: u64,
        code: u64,
    }

    /// artInvokeStaticTrampolineWithAccessCheck for the child (see the module doc); exits the
    /// child where the runtime would abort.
    extern "C" fn hubble_native_resolve(
        method_idx: u64,
        ret_slot: *mut u64,
        this: u64,
        kind: u64,
    ) -> Pair {
        // SAFETY: in the child only (the trampoline is reachable only from code the child
        // runs), which is single-threaded: DISPATCH and STARTS were set by `install` before
        // the call; ret_slot points at the return address the `call` pushed, and the caller's
        // sp (one slot above) at its frame's ArtMethod* (ART's x86_64 frame entry stores RDI
        // at [rsp]).
        unsafe {
            let d = &*DISPATCH;
            let ret = *ret_slot;
            let k = caller_of(d, ret);
            let caller = &d.methods[k];
            if *ret_slot.add(1) != caller.art_method {
                libc::_exit(EXIT_WRONG_FRAME);
            }
            let offset = (ret - STARTS[k]) as u32;
            let Some(site) = caller.invokes.iter().find(|i| i.ret == offset) else {
                libc::_exit(EXIT_NO_INVOKE)
            };
            if site.method_idx != method_idx as u32 {
                libc::_exit(EXIT_WRONG_INDEX);
            }
            if site.kind != kind as u32 {
                libc::_exit(EXIT_WRONG_KIND);
            }
            // FindMethodToCall: a call on an object needs one (this is a 32-bit reference).
            let this = this & 0xffff_ffff;
            if site.kind != 0 && this == 0 {
                libc::_exit(EXIT_NULL);
            }
            let target = match &site.target {
                Target::Fixed(t) => *t,
                Target::ByClass(by) => {
                    let klass = (this as *const u32).read_unaligned();
                    match by.iter().find(|(c, _)| *c == klass) {
                        Some(&(_, THROWS)) => libc::_exit(EXIT_THROWS),
                        Some(&(_, t)) => t,
                        None => libc::_exit(EXIT_NO_TARGET),
                    }
                }
            };
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

    /// art{Get,Set}<Kind>InstanceFromCompiledCode for the child (`crate::dispatch`'s
    /// `Dispatcher::field` natively): the referrer by the return address, the field by its
    /// index there, the slot by the object's class; a null object ends the child (its
    /// NullPointerException needs exception delivery).
    extern "C" fn hubble_native_field(
        field_idx: u64,
        obj: u64,
        value: u64,
        ret: u64,
        which: u64,
    ) -> u64 {
        // SAFETY: in the child only (see hubble_native_resolve); obj is a heap reference the
        // compiled code passed, its slots inside the heap mapping (`heap::slot_address`).
        unsafe {
            let d = &*DISPATCH;
            let (_, get, width) = crate::entrypoints::FIELD_ENTRYPOINTS[which as usize];
            let k = caller_of(d, ret);
            let Some(field) = d.methods[k]
                .fields
                .iter()
                .find(|f| f.field_idx == field_idx as u32)
            else {
                libc::_exit(EXIT_NO_INVOKE)
            };
            let obj = obj & 0xffff_ffff;
            if obj == 0 {
                libc::_exit(EXIT_NULL);
            }
            let klass = (obj as *const u32).read_unaligned();
            let Some(&(_, slot)) = field.slots.iter().find(|(c, _)| *c == klass) else {
                libc::_exit(EXIT_NO_TARGET)
            };
            let at = crate::heap::slot_address(obj, slot as usize) as *mut u64;
            if get {
                crate::heap::canonical_field(
                    field.ty,
                    crate::heap::field_bits(width, at.read_unaligned()),
                )
            } else {
                at.write_unaligned(crate::heap::field_bits(width, value));
                0
            }
        }
    }

    /// In the child: copies every method's code into `region` (the layout's size, writable),
    /// points the Thread's invoke slot at the trampoline; returns the called method's code.
    ///
    /// # Safety
    /// In the forked child only, before the code runs; `region` is a fresh mapping of
    /// `d.layout().1` bytes, `thread` the Thread image (the slot offset lies inside it).
    pub unsafe fn install(
        d: &NativeDispatch,
        heap_image: &[u8],
        region: *mut u8,
        thread: *mut u8,
    ) -> u64 {
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
            let put =
                |slot: u64, f: u64| thread.add(slot as usize).cast::<u64>().write_unaligned(f);
            for &slot in &d.other_slots {
                put(slot, hubble_native_unprovided as *const () as u64);
            }
            for &(kind, slot) in &d.invoke_slots {
                put(slot, trampoline(kind));
            }
            for &(k, slot) in &d.field_slots {
                put(slot, FIELD_STUBS[k] as *const () as u64);
            }
            if !heap_image.is_empty() {
                let heap = libc::mmap(
                    crate::heap::HEAP_BASE as *mut libc::c_void,
                    crate::heap::HEAP_SIZE as usize,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                    -1,
                    0,
                );
                if heap as u64 != crate::heap::HEAP_BASE
                    || heap_image.len() > crate::heap::HEAP_SIZE as usize
                {
                    libc::_exit(EXIT_OVERFLOW);
                }
                std::ptr::copy_nonoverlapping(
                    heap_image.as_ptr(),
                    heap.cast::<u8>(),
                    heap_image.len(),
                );
            }
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

    /// The heap's bytes after the call (as many as were laid out).
    ///
    /// # Safety
    /// In the child, after the calls, with `install` having mapped the heap.
    pub unsafe fn heap(len: usize) -> &'static [u8] {
        // SAFETY: the heap mapping is HEAP_SIZE bytes at HEAP_BASE, `len` (the image's) no
        // more.
        unsafe { std::slice::from_raw_parts(crate::heap::HEAP_BASE as *const u8, len) }
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) use child::{heap, install, log};
