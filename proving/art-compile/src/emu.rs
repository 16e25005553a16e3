//! Runs ART-compiled arm64 and thumb2 code in unicorn, as ART calls a compiled method: the
//! `ArtMethod*` in x0/r0, arguments in the managed ABI's registers, the thread register
//! (x19/r9) pointing at a `Thread` image with the Hubble block and a ring, the marking
//! register (x20) zero. The return address is a sentinel page; reaching it is the return.
//!
//! What the harness observes itself (never what the trace writer computed): the call (an
//! entry of the method it dispatched) and the return (an exit), and, when the code invokes
//! another method through the invoke trampoline, each dispatch the harness performs (an entry
//! of the callee's `ArtMethod*`, `crate::dispatch`) and each return it sees (the caller's
//! return address reached with the sp of the call: an exit). Around every trace point the code
//! generator reported, of every method loaded, it snapshots the registers and the stack and
//! checks that only the declared clobbers changed.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use hubble_format::{Mode, Record};
use unicorn_engine::{Arch, ArmCpuModel, Prot, RegisterARM, RegisterARM64, RegisterX86, Unicorn};

use crate::abi::{self, Arg};
use crate::cpu::{fpr, gpr, read_u32, sp_register, uc, xmm_read, xmm_write, Frame};
pub use crate::cpu::{EmuError, Isa};
use crate::entrypoints::InvokeKind;
use crate::heap::{self, Classes, ObjectSpec};
use crate::output::IsaCode;
pub use crate::pool::PoolMode;
use crate::pool::{pool_records, POOL_TAKE_AT};
use crate::thread;

/// How one call went.
#[derive(Clone, Debug)]
pub struct Run {
    /// The raw return register(s): x0 / r0 (r1:r0 for longs), or d0/s0 bits for floats.
    pub result: u64,
    /// Instructions executed in the method's code.
    pub executed: u64,
    /// Trace points whose inline part started executing.
    pub trace_points_run: usize,
    /// The ring, decoded by hubble-format (records after the START record).
    pub records: Vec<Record>,
    /// Registers or stack slots a trace point changed outside its declared clobbers.
    pub violations: Vec<String>,
    /// The Java exception a throw entrypoint raised (the run stops there), if any.
    pub exception: Option<String>,
    /// Quick entrypoints the code called, in order.
    pub entrypoints_called: Vec<String>,
    /// What the harness itself did and saw, in order: `(true, ArtMethod*)` for the call it made
    /// and every invoke it dispatched, `(false, 0)` for every return it saw.
    pub calls: Vec<(bool, u64)>,
    /// Out-of-line halves of trace points that started executing.
    pub out_of_line_run: usize,
    /// Exceptions a compiled catch handler caught during the call, by class.
    pub caught: Vec<String>,
    /// Many-thread mode ([`Machine::set_pool`]): the blocks the thread's stream spans.
    pub pool_blocks: usize,
    /// The fields of the objects laid out for the call ([`Machine::set_objects`]), after it:
    /// per object, (name, canonical bits).
    pub objects: Vec<Vec<(String, u64)>>,
}

pub(crate) struct Layout {
    pub(crate) code: u64,
    ret: u64,
    pub(crate) stack_lo: u64,
    pub(crate) stack_size: u64,
    pub(crate) thread: u64,
    pub(crate) ring: u64,
    pub(crate) method_page: u64,
    /// Every quick entrypoint slot of the Thread image points into this page (4 bytes each).
    pub(crate) traps: u64,
    /// Where the code of the methods the code invokes is loaded (`crate::dispatch`).
    pub(crate) arena: u64,
    pub(crate) arena_size: u64,
}

/// Bytes mapped for `ArtMethod*` values (the method's and its callees').
const METHOD_PAGE: u64 = 0x1_0000;

const RING_SLOTS: usize = 1 << 14;
/// Instructions one call may execute before the harness calls it a hang (HUBBLE_MAX_INSNS).
fn max_insns() -> u64 {
    std::env::var("HUBBLE_MAX_INSNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50_000_000)
}

pub(crate) fn layout(isa: Isa) -> Layout {
    match isa {
        // Above 4 GiB where ART's arm64 pointers can be (the ArtMethod* too: wide entries).
        Isa::Arm64 => Layout {
            code: 0x10_0000,
            ret: 0x8_0000,
            stack_lo: 0x4000_0000,
            stack_size: 1 << 20,
            thread: 0x5_0000_0000,
            ring: 0x7_0000_0000,
            method_page: 0x6_0000_0000,
            traps: 0x9_0000,
            arena: 0x1000_0000,
            arena_size: 16 << 20,
        },
        // A 32-bit address space: everything below 4 GiB (x86 the same as thumb2).
        Isa::Thumb2 | Isa::X86 => Layout {
            code: 0x10_0000,
            ret: 0x8_0000,
            stack_lo: 0x40_0000,
            stack_size: 1 << 20,
            thread: 0x4_0000,
            ring: 0x20_0000,
            method_page: 0x3_0000,
            traps: 0x9_0000,
            arena: 0x100_0000,
            arena_size: 16 << 20,
        },
    }
}

/// Where the x86 GDT lives (one page, below the trap page).
const X86_GDT: u64 = 0x7_0000;
/// The GDT entry `%fs` selects: ART lets the kernel choose (thread_x86.cc:99-118,
/// `set_thread_area` with `entry_number = -1`); an x86_64 kernel hands a 32-bit process 12-14
/// (GDT_ENTRY_TLS_MIN), as hotpath-x86's static i386 process gets.
const X86_FS_ENTRY: u64 = 12;
/// Flat 4 GiB code and data segments for CS and SS/DS/ES (entries 1 and 2).
const X86_CODE_ENTRY: u64 = 1;
const X86_DATA_ENTRY: u64 = 2;

/// A GDT segment descriptor: `access` (P, DPL, S, type), limit in 4 KiB pages (G = 1), 32-bit
/// (D/B = 1).
fn x86_descriptor(base: u32, limit_pages: u32, access: u8) -> u64 {
    (u64::from(limit_pages) & 0xffff)
        | ((u64::from(base) & 0xff_ffff) << 16)
        | (u64::from(access) << 40)
        | ((u64::from(limit_pages) >> 16 & 0xf) << 48)
        | (0xcu64 << 52)
        | ((u64::from(base) >> 24) << 56)
}

/// `%fs` → the Thread image, as `Thread::InitCpu` (runtime/arch/x86/thread_x86.cc:44-133, ART
/// 14) makes it on Linux: a GDT data descriptor (`set_thread_area`, :106-114: base = the
/// Thread, limit = sizeof(Thread) with limit_in_pages, 32-bit, writable, present, DPL 3) and
/// `movw selector, %fs` with `selector = (entry_number << 3) | 0 (GDT) | 3 (RPL)` (:124-133).
///
/// unicorn 2.1 in `MODE_32` cannot be given an FS base directly: its reg_write has the
/// `FS_BASE` case commented out ("Don't think base registers are a thing on x86"), so the
/// write is a no-op with a deprecation warning (`x86_tests::fs_base_cannot_be_written_in_
/// mode_32`); the descriptor is the only way, and it is ART's own. unicorn starts `MODE_32` with zeroed segment caches and the
/// 32-bit code/stack flags set in `hflags` only (qemu/target/i386/unicorn.c, reset); loading
/// any segment register recomputes those flags from the CS and SS caches, which would turn the
/// CPU to 16-bit code and stack. So CS and SS (and DS, ES) get flat 32-bit descriptors first,
/// as a Linux process has (`__USER_CS`/`__USER_DS`), at unicorn's CPL 0 where the process runs
/// at 3 (nothing here depends on the privilege level).
pub(crate) fn x86_fs(
    u: &mut Unicorn<'_, ()>,
    thread: u64,
    thread_size: u64,
) -> Result<(), EmuError> {
    let entries = [
        // code: P, DPL 0, S, execute/read, accessed
        (X86_CODE_ENTRY, x86_descriptor(0, 0xf_ffff, 0x9b)),
        // data: P, DPL 0, S, read/write, accessed
        (X86_DATA_ENTRY, x86_descriptor(0, 0xf_ffff, 0x93)),
        // the Thread: P, DPL 3, S, read/write, accessed (InitCpu: contents DATA, not
        // read_exec_only, limit = sizeof(Thread) counted in pages as ART passes it, seg_32bit)
        (
            X86_FS_ENTRY,
            x86_descriptor(thread as u32, thread_size as u32, 0xf3),
        ),
    ];
    for (entry, d) in entries {
        uc(u.mem_write(X86_GDT + 8 * entry, &d.to_le_bytes()))?;
    }
    uc(u.reg_write_long(
        RegisterX86::GDTR,
        &x86_mmr(X86_GDT, (8 * (X86_FS_ENTRY + 1) - 1) as u32),
    ))?;
    uc(u.reg_write(RegisterX86::CS, X86_CODE_ENTRY << 3))?;
    for seg in [RegisterX86::SS, RegisterX86::DS, RegisterX86::ES] {
        uc(u.reg_write(seg, X86_DATA_ENTRY << 3))?;
    }
    uc(u.reg_write(RegisterX86::FS, (X86_FS_ENTRY << 3) | 3))
}

/// unicorn's `uc_x86_mmr` (include/unicorn/x86.h): selector u16, base u64, limit u32, flags
/// u32, as C lays it out (padding after the selector).
fn x86_mmr(base: u64, limit: u32) -> [u8; 24] {
    let mut m = [0u8; 24];
    m[8..16].copy_from_slice(&base.to_le_bytes());
    m[16..20].copy_from_slice(&limit.to_le_bytes());
    m
}

/// Registers a trace point may change on this ISA besides its temps: arm64 IP0/IP1 (x16/x17:
/// ART's register allocator never hands them out, code_generator_arm64.h blocks them), thumb2
/// IP (r12, blocked in code_generator_arm_vixl.cc SetupBlockedRegisters). Flags always.
fn reserved_scratch(isa: Isa) -> &'static [u8] {
    match isa {
        Isa::Arm64 => &[16, 17],
        Isa::Thumb2 => &[12],
        // The x86 sequence writes only its temps (the cursor, EAX and EDX for RDTSC: fixed
        // temps, patch 0015 HubbleTraceLocationsX86) and the flags.
        Isa::X86 => &[],
    }
}

/// General registers (incl. sp, lr, the thread register) and FP registers compared around a
/// trace point.
fn checked(isa: Isa) -> (Vec<u8>, u8) {
    match isa {
        Isa::Arm64 => ((0..=31).collect(), 32),
        Isa::Thumb2 => ((0..=14).collect(), 32),
        // EAX..EDI (ESP included); XMM0-7, each as two 64-bit halves (16 values).
        Isa::X86 => ((0..=7).collect(), 8),
    }
}

/// Registers, FP registers, sp and the stack bytes above it, at a trace point's start.
struct Snapshot {
    index: usize,
    gprs: Vec<u64>,
    fprs: Vec<u64>,
    sp: u64,
    stack: Vec<u8>,
}

/// The trace points of every loaded method, by absolute address (the hooks read it; the
/// dispatcher adds a callee's when it loads its code).
#[derive(Default)]
pub(crate) struct CodeMap {
    /// Inline start → trace point index (global over the loaded methods).
    starts: HashMap<u64, usize>,
    /// Inline end → trace point indices.
    ends: HashMap<u64, Vec<usize>>,
    /// Out-of-line start → trace point index.
    out_of_line: HashMap<u64, usize>,
    /// Per trace point: the registers it may change.
    clobbers: Vec<Vec<u8>>,
    /// Every loaded method, for exception delivery (`crate::catch`).
    pub(crate) methods: Vec<crate::catch::FrameCode>,
    /// x86: where the code has an `FPREM` (see `x87_fprem`).
    fprem: std::collections::HashSet<u64>,
}

impl CodeMap {
    /// Registers the trace points of `code` loaded at `base`.
    pub(crate) fn add(&mut self, isa: Isa, code: &IsaCode, base: u64) {
        self.methods.push(crate::catch::FrameCode {
            start: base,
            len: code.code.len() as u64,
            pc_map: code.pc_map.clone(),
            dex_regs: code.dex_regs.clone(),
            tries: code.tries.clone(),
            move_exceptions: code.move_exceptions.clone(),
        });
        for tp in &code.trace_points {
            let i = self.clobbers.len();
            self.starts.insert(base + tp.inline.0 as u64, i);
            self.ends
                .entry(base + tp.inline.1 as u64)
                .or_default()
                .push(i);
            if tp.out_of_line.1 > tp.out_of_line.0 {
                self.out_of_line.insert(base + tp.out_of_line.0 as u64, i);
            }
            let mut c = reserved_scratch(isa).to_vec();
            c.extend(&tp.temps);
            self.clobbers.push(c);
        }
        if isa == Isa::X86 {
            self.fprem
                .extend(crate::disasm::x86_fprem_offsets(&code.code).map(|o| base + o));
        }
    }
}

/// `FPREM` done as the hardware does it, where unicorn does not: ART's x86 code computes float
/// and double remainders with an `FPREM` loop (code_generator_x86.cc GenerateRemFP: `fprem;
/// fstsw ax; test ah, 4 (C2); jnz loop`), whose hardware result is the exact partial
/// remainder, so the loop ends with C's `fmod` (Java's `%`). unicorn 2.1's `helper_fprem`
/// (qemu/target/i386/fpu_helper.c) computes it in `double` arithmetic
/// (`st0 - st1 * trunc(st0 / st1)`), which is wrong when the quotient needs more than 53 bits
/// (corpus (a)'s `remD` found it: -1e-56 % 1e-170 gave 0). Here the instruction ends the loop in
/// one step: ST0 = fmod(ST0, ST1) (exact, and exactly a double since both operands were loaded
/// from doubles or floats), C3 C2 C1 C0 = 0 (the code reads C2 only), and execution continues
/// after it.
fn x87_fprem(u: &mut Unicorn<'_, ()>, addr: u64) {
    let st0 = x87_to_f64(&u.reg_read_long(RegisterX86::ST0).unwrap_or_default());
    let st1 = x87_to_f64(&u.reg_read_long(RegisterX86::ST1).unwrap_or_default());
    let _ = u.reg_write_long(RegisterX86::ST0, &f64_to_x87(st0 % st1));
    let fpsw = u.reg_read(RegisterX86::FPSW).unwrap_or(0);
    let _ = u.reg_write(RegisterX86::FPSW, fpsw & !0x4700);
    let _ = u.reg_write(RegisterX86::EIP, addr + 2);
}

/// An x87 80-bit register (64-bit significand with its integer bit, then sign and exponent) as
/// the double it holds (values loaded from doubles or floats are exact).
pub(crate) fn x87_to_f64(b: &[u8]) -> f64 {
    if b.len() < 10 {
        return f64::NAN;
    }
    let mant = u64::from_le_bytes(b[..8].try_into().unwrap());
    let se = u16::from_le_bytes([b[8], b[9]]);
    let sign = if se & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from(se & 0x7fff);
    if exp == 0x7fff {
        return if mant << 1 == 0 {
            sign * f64::INFINITY
        } else {
            f64::NAN
        };
    }
    if mant == 0 {
        return sign * 0.0;
    }
    // mant * 2^(exp - 16383 - 63), in power-of-two steps that stay exact.
    let mut x = mant as f64;
    let mut e = exp - 16383 - 63;
    while e != 0 {
        let step = e.clamp(-900, 900);
        x *= 2f64.powi(step);
        e -= step;
    }
    sign * x
}

/// A double as an x87 80-bit register.
pub(crate) fn f64_to_x87(v: f64) -> [u8; 10] {
    let bits = v.to_bits();
    let sign = ((bits >> 63) as u16) << 15;
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    let (e80, mant): (u16, u64) = match exp {
        0 if frac == 0 => (0, 0),
        0 => {
            // Subnormal: normalize (the 80-bit exponent range holds it).
            let shift = frac.leading_zeros() as i32; // ≥ 12
            ((16383 - 1022 - (shift - 11)) as u16, frac << shift)
        }
        0x7ff if frac == 0 => (0x7fff, 1 << 63),
        0x7ff => (0x7fff, (3 << 62) | (frac << 11)),
        _ => ((exp - 1023 + 16383) as u16, (1 << 63) | (frac << 11)),
    };
    let mut out = [0u8; 10];
    out[..8].copy_from_slice(&mant.to_le_bytes());
    out[8..].copy_from_slice(&(sign | e80).to_le_bytes());
    out
}

#[derive(Default)]
pub(crate) struct Seen {
    executed: u64,
    trace_points_run: usize,
    out_of_line_run: usize,
    /// Calls made and returns seen (see `Run::calls`).
    pub(crate) calls: Vec<(bool, u64)>,
    /// Dispatched frames not yet returned from, innermost last.
    pub(crate) frames: Vec<Frame>,
    /// Why a dispatch failed (the run stops).
    pub(crate) dispatch_error: Option<String>,
    /// Trace points started and not yet ended.
    open: Vec<Snapshot>,
    violations: Vec<String>,
    pub(crate) exception: Option<String>,
    caught: Vec<String>,
    /// The object of the exception being delivered (`Thread::exception_`), once made.
    exception_object: Option<u64>,
    /// Exception objects the runtime made during the call.
    exceptions_made: usize,
    entrypoints_called: Vec<String>,
    /// Why the run stopped inside an entrypoint the harness does not provide.
    unsupported: Option<String>,
}

/// What a machine made with a linker (`Machine::linked`) calls for the entrypoints that need
/// other methods' code or the dex's classes: `crate::dispatch::Dispatcher`. A trait so that
/// the machine does not depend on the dispatcher, which makes machines.
pub(crate) trait Dispatch {
    /// The trace points of the loaded methods: each callee loaded adds its own.
    fn set_code_map(&mut self, map: Rc<RefCell<CodeMap>>);
    /// The `ArtMethod*` of the call the harness makes (the callees' follow from it).
    fn set_entry_method(&mut self, method: u64);
    /// The dex's classes.
    fn classes(&self) -> Result<Rc<Classes>, String>;
    /// The methods whose code is loaded, in load order.
    fn loaded(&self) -> Vec<String>;
    /// The code called the invoke trampoline of `kind`: it continues in the callee, the call
    /// and its frame recorded in `s`, or `s` has the exception to deliver or the error.
    fn invoke(&mut self, u: &mut Unicorn<'_, ()>, s: &mut Seen, kind: InvokeKind);
    /// The code called entrypoint `name`: what it did, if it is an instance field entrypoint.
    fn field(
        &self,
        u: &mut Unicorn<'_, ()>,
        name: &str,
    ) -> Option<Result<crate::runtime::Outcome, String>>;
}

/// One method's code loaded into unicorn once, called many times (a fresh unicorn per call
/// costs more than the call).
pub struct Machine {
    u: Unicorn<'static, ()>,
    isa: Isa,
    l: Layout,
    seen: Rc<RefCell<Seen>>,
    shorty: String,
    ring_bytes: u64,
    /// The invoke dispatcher, when the machine was made with a linker.
    dispatcher: Option<Rc<RefCell<dyn Dispatch>>>,
    /// Where the START record goes (slot index); None: slot 0. See `Machine::set_ring_start`.
    ring_start: Option<usize>,
    /// Many-thread mode: the ring's mapping holds the pool instead.
    pool: Option<PoolMode>,
    /// Objects laid out in the heap before each call (`heap::object_address(k)`).
    objects: Vec<ObjectSpec>,
    /// `Thread::exception_` (address, size): no exception is pending when a call starts.
    exception_slot: Option<(u64, usize)>,
}

impl Machine {
    /// Loads `code` (the method's shorty and staticness decide the calling convention).
    pub fn new(code: &IsaCode, shorty: &str, is_static: bool) -> Result<Machine, EmuError> {
        Machine::build(code, shorty, is_static, None)
    }

    /// Puts the START record at `slot` (None: slot 0) for the following calls, the cursor after
    /// it: `Some(last slot)` makes the first record wrap, through the trace point's
    /// out-of-line half (thumb2: cursor == limit == end; arm64: cursor > limit = end - 8).
    pub fn set_ring_start(&mut self, slot: Option<usize>) {
        self.ring_start = slot;
    }

    /// Runs the following calls in many-thread mode: the thread as `pool::start` leaves it (no
    /// block, `begin` = the pool | 1, its tid), the pool in the ring's mapping with the header
    /// the runtime writes, `pool.take` (the ISA's block-end function) mapped where `P_TAKE` says
    /// (with bit 0 set for thumb2: a T32 function); the records of a run are its thread's
    /// stream, read back as a flush reads the pool.
    pub fn set_pool(&mut self, pool: PoolMode) -> Result<(), EmuError> {
        if pool.geometry.total_slots() > RING_SLOTS || pool.take.len() > 0x1000 {
            return Err(EmuError::Args(
                "the pool or its function is too large".into(),
            ));
        }
        if self.pool.is_none() {
            uc(self
                .u
                .mem_map(POOL_TAKE_AT, 0x1000, Prot::READ | Prot::EXEC))?;
        }
        uc(self.u.mem_write(POOL_TAKE_AT, &pool.take))?;
        self.pool = Some(pool);
        Ok(())
    }

    /// Slots in the ring.
    pub fn ring_slots() -> usize {
        RING_SLOTS
    }

    /// The methods whose code is loaded: the one called first, then each callee in the order
    /// the dispatcher first resolved it.
    pub fn loaded_methods(&self) -> Vec<String> {
        self.dispatcher
            .as_ref()
            .map(|d| d.borrow().loaded())
            .unwrap_or_default()
    }

    /// Loads `code`, with `dispatcher` if given (`Machine::linked`).
    pub(crate) fn build(
        code: &IsaCode,
        shorty: &str,
        is_static: bool,
        dispatcher: Option<Rc<RefCell<dyn Dispatch>>>,
    ) -> Result<Machine, EmuError> {
        let isa = Isa::from_name(&code.isa)
            .ok_or_else(|| EmuError::Args(format!("{} is not emulated", code.isa)))?;
        if !is_static && dispatcher.is_none() {
            return Err(EmuError::Args(
                "an instance method needs objects: run it with a linker (Runner::linked)".into(),
            ));
        }
        let l = layout(isa);
        let mut u = match isa {
            Isa::Arm64 => uc(Unicorn::new(Arch::ARM64, unicorn_engine::Mode::ARM))?,
            Isa::Thumb2 => {
                let mut u = uc(Unicorn::new(Arch::ARM, unicorn_engine::Mode::THUMB))?;
                uc(u.ctl_set_cpu_model(ArmCpuModel::CORTEX_A15 as i32))?;
                u
            }
            Isa::X86 => uc(Unicorn::new(Arch::X86, unicorn_engine::Mode::MODE_32))?,
        };
        let linked = crate::link::link(isa, code).map_err(EmuError::Args)?;
        let code_size = (linked.len() as u64 + 0xfff) & !0xfff;
        uc(u.mem_map(l.code, code_size, Prot::READ | Prot::EXEC))?;
        uc(u.mem_write(l.code, &linked))?;
        uc(u.mem_map(l.ret, 0x1000, Prot::READ | Prot::EXEC))?;
        uc(u.mem_map(l.stack_lo, l.stack_size, Prot::READ | Prot::WRITE))?;
        uc(u.mem_map(l.thread, 0x2000, Prot::READ | Prot::WRITE))?;
        uc(u.mem_map(l.traps, 0x1000, Prot::READ | Prot::EXEC))?;
        let ring_bytes = (RING_SLOTS * 8) as u64;
        uc(u.mem_map(l.ring, ring_bytes, Prot::READ | Prot::WRITE))?;
        uc(u.mem_map(l.method_page, METHOD_PAGE, Prot::READ | Prot::WRITE))?;
        if dispatcher.is_some() {
            uc(u.mem_map(l.arena, l.arena_size, Prot::READ | Prot::EXEC))?;
        }
        // The heap: objects laid out for a call, and the exception objects the runtime makes
        // (a catch handler's move-exception loads one).
        uc(u.mem_map(heap::HEAP_BASE, heap::HEAP_SIZE, Prot::READ | Prot::WRITE))?;
        uc(u.mem_map(heap::CLASS_BASE, heap::CLASS_SIZE, Prot::READ))?;
        if isa == Isa::X86 {
            uc(u.mem_map(X86_GDT, 0x1000, Prot::READ | Prot::WRITE))?;
            x86_fs(&mut u, l.thread, 0x2000)?;
        }

        let ptr = isa.pointer_size();
        let mut map = CodeMap::default();
        map.add(isa, code, l.code);
        let map = Rc::new(RefCell::new(map));
        let seen = Rc::new(RefCell::new(Seen::default()));
        let hook = code_hook(isa, &l, Rc::clone(&map), Rc::clone(&seen));
        uc(u.add_code_hook(l.code, l.code + code_size - 1, hook))?;
        if let Some(d) = &dispatcher {
            d.borrow_mut().set_code_map(Rc::clone(&map));
            let hook = code_hook(isa, &l, Rc::clone(&map), Rc::clone(&seen));
            uc(u.add_code_hook(l.arena, l.arena + l.arena_size - 1, hook))?;
        }

        // Quick entrypoints: each slot holds its own address in the trap page; a call lands there
        // and the hook does what the runtime function would, then returns to lr.
        let names: Vec<String> = code.entrypoints.iter().map(|e| e.0.clone()).collect();
        for (k, (_, off)) in code.entrypoints.iter().enumerate() {
            let target = l.traps + 4 * k as u64 + u64::from(isa == Isa::Thumb2);
            uc(u.mem_write(
                l.thread + u64::from(*off),
                &target.to_le_bytes()[..ptr as usize],
            ))?;
        }
        let trap_seen = Rc::clone(&seen);
        let trap_dispatcher = dispatcher.clone();
        let unwinder = Unwinder {
            isa,
            map: Rc::clone(&map),
            thread: l.thread,
            ring: l.ring,
            ring_bytes: (RING_SLOTS * 8) as u64,
            // TraceUnwoundQuickFrame writes exits only for frames that wrote their entry: a
            // compiled frame with trace points (a JNI stub's native frame wrote its exit on the
            // stub's own path, patch 0025, and has no HTraceEntry/HTraceExit nodes).
            traced: !code.trace_points.is_empty(),
            exception_slot: code
                .exception_offset
                .map(|o| (l.thread + u64::from(o), ptr as usize)),
        };
        let managed = code.jni_layout.is_empty();
        let exception_slot = unwinder.exception_slot;
        uc(
            u.add_code_hook(l.traps, l.traps + 0xfff, move |u, addr, _| {
                let k = ((addr - l.traps) / 4) as usize;
                let name = names.get(k).cloned().unwrap_or_else(|| format!("#{k}"));
                let mut s = trap_seen.borrow_mut();
                s.entrypoints_called.push(name.clone());
                // The invoke trampolines continue in the callee (or throw, or fail).
                if let (Some(kind), Some(d)) = (InvokeKind::of_entrypoint(&name), &trap_dispatcher)
                {
                    d.borrow_mut().invoke(u, &mut s, kind);
                    // The trampoline delivered a pending exception from the caller.
                    if s.exception.is_some() && !unwinder.deliver(u, &mut s) {
                        let _ = u.emu_stop();
                    }
                    return;
                }
                // `throw`: art_quick_deliver_exception → artDeliverExceptionFromCode
                // (quick_throw_entrypoints.cc:46-62): a null exception throws
                // NullPointerException, any other is set pending and delivered.
                // (A JNI stub's pending exception goes to `runtime::call`: its test leaves a
                // marker there, not an object, and delivery from a stub is not modelled.)
                if name == "DeliverException" && managed {
                    let arg = match isa {
                        Isa::Arm64 => u.reg_read(RegisterARM64::X0),
                        Isa::Thumb2 => u.reg_read(RegisterARM::R0),
                        Isa::X86 => u.reg_read(RegisterX86::EAX),
                    }
                    .unwrap_or(0)
                        & 0xffff_ffff;
                    if arg == 0 {
                        s.exception = Some("java.lang.NullPointerException".into());
                        s.exception_object = None;
                    } else {
                        let classes = trap_dispatcher
                            .as_ref()
                            .and_then(|d| d.borrow().classes().ok());
                        match heap::exception_name(u, classes.as_deref(), arg) {
                            Ok(e) => {
                                s.exception = Some(e);
                                s.exception_object = Some(arg);
                            }
                            Err(why) => {
                                s.dispatch_error = Some(format!("pDeliverException: {why}"));
                                let _ = u.emu_stop();
                                return;
                            }
                        }
                    }
                    if !unwinder.deliver(u, &mut s) {
                        let _ = u.emu_stop();
                    }
                    return;
                }
                // Instance fields go through the dispatcher's class linker and heap.
                let outcome = match trap_dispatcher
                    .as_ref()
                    .and_then(|d| d.borrow().field(u, &name))
                {
                    Some(Ok(o)) => o,
                    Some(Err(why)) => {
                        s.dispatch_error = Some(why);
                        let _ = u.emu_stop();
                        return;
                    }
                    None => crate::runtime::call(isa, &name, u),
                };
                match outcome {
                    crate::runtime::Outcome::Returned => match isa {
                        Isa::Arm64 => {
                            let lr = u.reg_read(RegisterARM64::X30).unwrap_or(0);
                            let _ = u.reg_write(RegisterARM64::PC, lr);
                        }
                        Isa::Thumb2 => {
                            let lr = u.reg_read(RegisterARM::LR).unwrap_or(0);
                            let _ = u.reg_write(RegisterARM::PC, lr);
                        }
                        // `call fs:[offset]` pushed the return address: the entrypoint's `ret`.
                        Isa::X86 => {
                            let esp = u.reg_read(RegisterX86::ESP).unwrap_or(0);
                            let ret = read_u32(u, esp).unwrap_or(0);
                            let _ = u.reg_write(RegisterX86::ESP, esp + 4);
                            let _ = u.reg_write(RegisterX86::EIP, u64::from(ret));
                        }
                    },
                    crate::runtime::Outcome::Threw(exception) => {
                        s.exception = Some(exception);
                        if !unwinder.deliver(u, &mut s) {
                            let _ = u.emu_stop();
                        }
                    }
                    crate::runtime::Outcome::Unsupported => {
                        s.unsupported = Some(name);
                        let _ = u.emu_stop();
                    }
                }
            }),
        )?;
        Ok(Machine {
            u,
            isa,
            l,
            seen,
            shorty: shorty.to_string(),
            ring_bytes,
            dispatcher,
            ring_start: None,
            pool: None,
            objects: Vec::new(),
            exception_slot,
        })
    }

    /// Lays out `objects` at `heap::object_address(0..)` before each following call (a machine
    /// with a linker only: the classes are the dex's); their fields are read back after it
    /// (`Run::objects`).
    pub fn set_objects(&mut self, objects: &[ObjectSpec]) -> Result<(), EmuError> {
        if self.dispatcher.is_none() && !objects.is_empty() {
            return Err(EmuError::Args(
                "objects need the dex's classes: make the machine with a linker".into(),
            ));
        }
        self.objects = objects.to_vec();
        Ok(())
    }

    /// The emulator, for the parts of the harness that lay out more than managed code reads
    /// (`crate::jni`: the JNIEnv, the native code, the ArtMethod's fields).
    pub(crate) fn unicorn(&mut self) -> &mut Unicorn<'static, ()> {
        &mut self.u
    }

    pub(crate) fn isa(&self) -> Isa {
        self.isa
    }

    pub(crate) fn layout(&self) -> &Layout {
        &self.l
    }

    /// sp at the call (the caller's in-args area starts one pointer above it).
    pub(crate) fn stack_top(&self) -> u64 {
        self.l.stack_lo + self.l.stack_size - 0x100
    }

    /// Calls the method once with `args`; `method` is the `ArtMethod*` passed in x0/r0.
    pub fn call(&mut self, args: &[Arg], method: u64) -> Result<Run, EmuError> {
        let (isa, l, ring_bytes) = (self.isa, &self.l, self.ring_bytes);
        let shorty = self.shorty.as_str();
        let u = &mut self.u;
        *self.seen.borrow_mut() = Seen::default();
        self.seen.borrow_mut().calls.push((true, method));
        if let Some(d) = &self.dispatcher {
            d.borrow_mut().set_entry_method(method);
        }
        let seen = &self.seen;
        // A clean ring for every call, and no exception pending.
        uc(u.mem_write(l.ring, &vec![0u8; ring_bytes as usize]))?;
        if let Some((at, size)) = self.exception_slot {
            uc(u.mem_write(at, &vec![0u8; size]))?;
        }
        // The Hubble block as the control thread's start() leaves it (docs/architecture.md): stop
        // 0, limit, begin, end, a START record in slot 0, cursor after it.
        let ptr = isa.pointer_size();
        let offs = thread::hubble_offsets(ptr);
        let end = l.ring + ring_bytes;
        // 32-bit mode: every record is one slot, limit = end (hubble_trace_point_x86.cc, "Wrap").
        let limit = match isa {
            Isa::Arm64 => end - 8,
            Isa::Thumb2 | Isa::X86 => end,
        };
        let field = |u: &mut Unicorn<'_, ()>, f: usize, v: u64| {
            uc(u.mem_write(l.thread + offs[f], &v.to_le_bytes()[..ptr as usize]))
        };
        if let Some(p) = &self.pool {
            let (mode, take) = match isa {
                Isa::Arm64 => (Mode::Bits64, POOL_TAKE_AT),
                Isa::Thumb2 => (Mode::Bits32, POOL_TAKE_AT | 1),
                Isa::X86 => (Mode::Bits32, POOL_TAKE_AT),
            };
            let mut w = hubble_format::pool::PoolWriter::new(mode, p.geometry, l.ring);
            w.set_take_entry(take);
            let header: Vec<u8> = w.slots()[..hubble_format::pool::POOL_HEADER_SLOTS]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            uc(u.mem_write(l.ring, &header))?;
            uc(u.mem_write(l.thread + thread::tid_offset(ptr), &p.tid.to_le_bytes()))?;
            field(u, thread::STOP, 0)?;
            field(u, thread::LIMIT, 0)?;
            field(u, thread::BEGIN, l.ring | 1)?;
            field(u, thread::END, 0)?;
            field(u, thread::CURSOR, hubble_format::pool::SEALED)?;
        } else {
            field(u, thread::STOP, 0)?;
            field(u, thread::LIMIT, limit)?;
            field(u, thread::BEGIN, l.ring)?;
            field(u, thread::END, end)?;
            let start_at = l.ring + 8 * self.ring_start.unwrap_or(0).min(RING_SLOTS - 1) as u64;
            uc(u.mem_write(
                start_at,
                &hubble_format::slot::encode_start(0).to_le_bytes(),
            ))?;
            field(u, thread::CURSOR, start_at + 8)?;
        }

        // Registers: a recognizable junk pattern everywhere, then the ABI's.
        let (gprs, _) = checked(isa);
        for &r in &gprs {
            uc(u.reg_write(gpr(isa, r), 0x0bad_0000 + u64::from(r)))?;
        }
        let stack_top = self.stack_top();
        let u = &mut self.u;
        match isa {
            Isa::Arm64 => {
                uc(u.reg_write(RegisterARM64::X19, l.thread))?;
                uc(u.reg_write(RegisterARM64::X20, 0))?;
                uc(u.reg_write(RegisterARM64::X30, l.ret))?;
                uc(u.reg_write(RegisterARM64::SP, stack_top))?;
                uc(u.reg_write(RegisterARM64::X0, method))?;
                // FP/SIMD access enabled (CPACR_EL1.FPEN).
                uc(u.reg_write(RegisterARM64::CPACR_EL1, 3 << 20))?;
            }
            Isa::Thumb2 => {
                uc(u.reg_write(RegisterARM::R9, l.thread))?;
                // The marking register (MR = r8, runtime/arch/arm/registers_arm.h:43, which
                // Baker read barriers test): no GC is marking, as Thread::is_gc_marking (0) says.
                uc(u.reg_write(RegisterARM::R8, 0))?;
                uc(u.reg_write(RegisterARM::LR, l.ret | 1))?;
                uc(u.reg_write(RegisterARM::SP, stack_top))?;
                uc(u.reg_write(RegisterARM::R0, method))?;
                uc(u.reg_write(RegisterARM::FPEXC, 0x4000_0000))?;
            }
            Isa::X86 => {
                // art_quick_invoke_stub (quick_entrypoints_x86.S:482-517, ART 14): a null
                // ArtMethod* slot at the caller's sp, the whole argument array after it, the
                // method in EAX, `call` pushes the return address.
                uc(u.reg_write(RegisterX86::ESP, stack_top - 4))?;
                uc(u.mem_write(stack_top - 4, &(l.ret as u32).to_le_bytes()))?;
                uc(u.mem_write(stack_top, &[0u8; 4]))?;
                uc(u.reg_write(RegisterX86::EAX, method))?;
                for n in 0..8 {
                    xmm_write(u, n, 0x0bad_f000 + u64::from(n), 0x0bad_f100 + u64::from(n))?;
                }
            }
        }
        let placed = match isa {
            Isa::Arm64 => abi::place_arm64(shorty, args),
            Isa::Thumb2 => abi::place_arm(shorty, args),
            Isa::X86 => abi::place_x86(shorty, args),
        }
        .map_err(EmuError::Args)?;
        for (reg, value) in &placed.core {
            uc(u.reg_write(gpr(isa, *reg), *value))?;
        }
        for (reg, value) in &placed.fp {
            match (isa, reg) {
                (Isa::Arm64, _) => uc(u.reg_write(fpr(isa, *reg), *value))?,
                (Isa::X86, r) => xmm_write(u, *r, *value, 0)?,
                // s2n and s2n+1 are d<n>'s halves.
                (Isa::Thumb2, r) if r % 2 == 0 => uc(u.reg_write(fpr(isa, r / 2), *value))?,
                (Isa::Thumb2, r) => {
                    let d = u.reg_read(fpr(isa, r / 2)).unwrap_or(0);
                    uc(u.reg_write(fpr(isa, r / 2), (d & 0xffff_ffff) | (*value << 32)))?
                }
            }
        }
        for &(index, bits, wide) in &placed.stack {
            let at = stack_top + u64::from(ptr) + 4 * u64::from(index);
            let n = if wide { 8 } else { 4 };
            uc(u.mem_write(at, &bits.to_le_bytes()[..n]))?;
        }

        let classes = match &self.dispatcher {
            Some(d) if !self.objects.is_empty() => {
                Some(d.borrow().classes().map_err(EmuError::Dispatch)?)
            }
            _ => None,
        };
        if let Some(classes) = &classes {
            heap::write_objects(u, classes, &self.objects).map_err(EmuError::Args)?;
        }

        let begin = match isa {
            Isa::Arm64 | Isa::X86 => l.code,
            Isa::Thumb2 => l.code | 1,
        };
        let started = u.emu_start(begin, l.ret, 0, 0);
        let pc = match isa {
            Isa::Arm64 => u.reg_read(RegisterARM64::PC),
            Isa::Thumb2 => u.reg_read(RegisterARM::PC),
            Isa::X86 => u.reg_read(RegisterX86::EIP),
        }
        .unwrap_or(0);
        let executed = seen.borrow().executed;
        if let Some(why) = seen.borrow().dispatch_error.clone() {
            return Err(EmuError::Dispatch(why));
        }
        if let Some(name) = seen.borrow().unsupported.clone() {
            return Err(EmuError::Args(format!(
                "the code called the quick entrypoint p{name}, which the harness does not provide"
            )));
        }
        let exception = seen.borrow().exception.clone();
        if exception.is_none() && (started.is_err() || (pc & !1) != l.ret) {
            return Err(EmuError::NoReturn {
                pc,
                executed,
                why: match started {
                    Err(e) => format!("{e:?}"),
                    Ok(()) if executed > max_insns() => "instruction limit".into(),
                    Ok(()) => "stopped early".into(),
                },
            });
        }
        let ret_fp = shorty.starts_with('F') || shorty.starts_with('D');
        let result = match (isa, ret_fp, shorty.as_bytes()[0]) {
            (Isa::Arm64, true, _) => uc(u.reg_read(fpr(isa, 0)))?,
            (Isa::Arm64, false, _) => uc(u.reg_read(RegisterARM64::X0))?,
            (Isa::Thumb2, true, _) => uc(u.reg_read(fpr(isa, 0)))?,
            (Isa::Thumb2, false, b'J') => {
                uc(u.reg_read(RegisterARM::R0))? | (uc(u.reg_read(RegisterARM::R1))? << 32)
            }
            (Isa::Thumb2, false, _) => uc(u.reg_read(RegisterARM::R0))?,
            // The managed ABI's return registers (code_generator_x86.cc
            // InvokeDexCallingConventionVisitorX86::GetReturnLocation): XMM0, EDX:EAX, EAX.
            (Isa::X86, true, _) => xmm_read(u, 0).0,
            (Isa::X86, false, b'J') => {
                (uc(u.reg_read(RegisterX86::EAX))? & 0xffff_ffff)
                    | (uc(u.reg_read(RegisterX86::EDX))? << 32)
            }
            (Isa::X86, false, _) => uc(u.reg_read(RegisterX86::EAX))?,
        };

        if exception.is_none() {
            // Reaching the sentinel is the return of the call the harness made.
            seen.borrow_mut().calls.push((false, 0));
        }

        // The ring, decoded as the tools decode it.
        let cursor_bytes = uc(u.mem_read_as_vec(l.thread + offs[thread::CURSOR], ptr as usize))?;
        let mut buf = [0u8; 8];
        buf[..cursor_bytes.len()].copy_from_slice(&cursor_bytes);
        let cursor = u64::from_le_bytes(buf);
        let ring: Vec<u64> = uc(u.mem_read_as_vec(l.ring, ring_bytes as usize))?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let mode = match isa {
            Isa::Arm64 => Mode::Bits64,
            Isa::Thumb2 | Isa::X86 => Mode::Bits32,
        };
        let (records, pool_blocks) = match &self.pool {
            Some(p) => {
                let end = uc(u.mem_read_as_vec(l.thread + offs[thread::END], ptr as usize))?;
                let mut buf = [0u8; 8];
                buf[..end.len()].copy_from_slice(&end);
                let end = u64::from_le_bytes(buf);
                pool_records(&ring, mode, p.geometry, p.tid, l.ring, cursor, end)
                    .map_err(EmuError::Ring)?
            }
            None => {
                // 0: tracing was turned off (decode_ring says so) rather than an offset below
                // the ring.
                let offset = if cursor == 0 { 0 } else { cursor - l.ring };
                (
                    crate::decode_ring(&ring, offset, mode).map_err(EmuError::Ring)?,
                    0,
                )
            }
        };
        let s = seen.borrow();
        let mut violations = s.violations.clone();
        for o in &s.open {
            violations.push(format!(
                "trace point {} started but never reached its end",
                o.index
            ));
        }
        let entrypoints_called = s.entrypoints_called.clone();
        let objects = match &classes {
            Some(classes) => {
                heap::read_objects(u, classes, &self.objects).map_err(EmuError::Args)?
            }
            None => Vec::new(),
        };
        Ok(Run {
            result: result_bits(shorty, result),
            executed,
            trace_points_run: s.trace_points_run,
            records,
            violations,
            exception,
            entrypoints_called,
            calls: s.calls.clone(),
            out_of_line_run: s.out_of_line_run,
            caught: s.caught.clone(),
            pool_blocks,
            objects,
        })
    }
}

/// The harness's double of exception delivery (QuickExceptionHandler::FindCatch and the long
/// jump, quick_exception_handler.cc): the compiled frames are searched for a catch handler
/// (`crate::catch`); the frames inside the catching one, or all of them, are unwound innermost
/// first, each with the exit patch 0021 writes (`crate::unwind`).
struct Unwinder {
    isa: Isa,
    map: Rc<RefCell<CodeMap>>,
    thread: u64,
    ring: u64,
    ring_bytes: u64,
    traced: bool,
    /// `Thread::exception_`'s address and size (a pointer): where a handler's move-exception
    /// loads the exception.
    exception_slot: Option<(u64, usize)>,
}

impl Unwinder {
    /// Delivers `s.exception`; true when a compiled handler caught it (execution continues
    /// there), false when the run ends with it.
    fn deliver(&self, u: &mut Unicorn<'_, ()>, s: &mut Seen) -> bool {
        let exception = s.exception.clone().unwrap_or_default();
        // Thread::ThrowNewException: an exception the runtime throws is a new object (managed
        // code only: a JNI stub's section has no `Thread::exception_` offset, and its pending
        // exception is the test's marker, not an object).
        let object = match s.exception_object {
            Some(o) => o,
            None if self.exception_slot.is_none() => 0,
            None => match heap::new_exception(u, &exception, s.exceptions_made) {
                Ok(o) => {
                    s.exceptions_made += 1;
                    s.exception_object = Some(o);
                    o
                }
                Err(why) => {
                    s.dispatch_error = Some(format!("exception delivery: {why}"));
                    return false;
                }
            },
        };
        // The thrower's sp and the return address of its call into the runtime: arm's lr; on
        // x86 `call fs:[offset]` pushed it (the frame's sp is above it).
        let (sp_reg, pc_reg) = match self.isa {
            Isa::Arm64 => (RegisterARM64::SP as i32, RegisterARM64::PC as i32),
            Isa::Thumb2 => (RegisterARM::SP as i32, RegisterARM::PC as i32),
            Isa::X86 => (RegisterX86::ESP as i32, RegisterX86::EIP as i32),
        };
        let sp_now = u.reg_read(sp_reg).unwrap_or(0);
        let (sp, lr) = match self.isa {
            Isa::Arm64 => (sp_now, u.reg_read(RegisterARM64::X30).unwrap_or(0)),
            Isa::Thumb2 => (sp_now, u.reg_read(RegisterARM::LR).unwrap_or(0)),
            Isa::X86 => (sp_now + 4, u64::from(read_u32(u, sp_now).unwrap_or(0))),
        };
        // The dispatcher adds to the map only while dispatching, never during delivery.
        let found = {
            let map = self.map.borrow();
            crate::catch::deliver(u, self.isa, &map.methods, sp, lr, &s.frames, &exception)
        };
        match found {
            Ok(crate::catch::Delivery::Caught {
                depth,
                sp,
                pc,
                keep,
            }) => {
                // Pending for a handler that begins with move-exception, cleared otherwise.
                if let Some((at, size)) = self.exception_slot {
                    let value = if keep { object } else { 0 };
                    let _ = u.mem_write(at, &value.to_le_bytes()[..size]);
                }
                // Cleared, a new exception the code never loaded is garbage: its slot is the
                // next one's (a loop that throws and catches does not fill the heap).
                if !keep
                    && s.exceptions_made > 0
                    && heap::exception_address(s.exceptions_made - 1) == object
                {
                    s.exceptions_made -= 1;
                }
                s.exception_object = None;
                self.pop(u, s, depth as u32);
                let keep = s.frames.len() - depth;
                s.frames.truncate(keep);
                let _ = u.reg_write(sp_reg, sp);
                let _ = u.reg_write(pc_reg, pc);
                s.caught.push(exception);
                s.exception = None;
                true
            }
            Ok(crate::catch::Delivery::Uncaught) => {
                self.unwind(u, s);
                false
            }
            Err(why) => {
                s.dispatch_error = Some(format!("exception delivery: {why}"));
                false
            }
        }
    }

    /// Pops `frames` frames, innermost first, each with its exit if traced.
    fn pop(&self, u: &mut Unicorn<'_, ()>, s: &mut Seen, frames: u32) {
        if self.traced {
            if let Err(e) = crate::unwind::write_exits(
                u,
                self.isa,
                self.thread,
                self.ring,
                self.ring_bytes,
                frames,
            ) {
                s.dispatch_error = Some(format!("unwinder: {e}"));
            }
        }
        for _ in 0..frames {
            s.calls.push((false, 0));
        }
    }

    fn unwind(&self, u: &mut Unicorn<'_, ()>, s: &mut Seen) {
        // The thrower (the harness's call or the innermost dispatched frame) and every
        // dispatched frame below it.
        let frames = 1 + s.frames.len() as u32;
        self.pop(u, s, frames);
        s.frames.clear();
    }
}

/// The hook over a code region: counts instructions (the limit stops a hang), sees the returns of
/// dispatched frames, and checks every trace point of `map` that starts and ends.
fn code_hook(
    isa: Isa,
    l: &Layout,
    map: Rc<RefCell<CodeMap>>,
    seen: Rc<RefCell<Seen>>,
) -> impl FnMut(&mut Unicorn<'_, ()>, u64, u32) + 'static {
    let (gprs, nfp) = checked(isa);
    let limit_insns = max_insns();
    let (stack_lo, stack_end) = (l.stack_lo, l.stack_lo + l.stack_size);
    let sp_reg = sp_register(isa);
    let snapshot = move |u: &Unicorn<'_, ()>| -> (Vec<u64>, Vec<u64>, u64, Vec<u8>) {
        let g = gprs
            .iter()
            .map(|&r| u.reg_read(gpr(isa, r)).unwrap_or(0))
            .collect();
        let f = match isa {
            Isa::X86 => (0..nfp)
                .flat_map(|r| {
                    let (lo, hi) = xmm_read(u, r);
                    [lo, hi]
                })
                .collect(),
            _ => (0..nfp)
                .map(|r| u.reg_read(fpr(isa, r)).unwrap_or(0))
                .collect(),
        };
        let sp = u.reg_read(sp_reg).unwrap_or(0);
        let stack = if sp >= stack_lo && sp < stack_end {
            u.mem_read_as_vec(sp, (stack_end - sp) as usize)
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        (g, f, sp, stack)
    };
    let (gprs2, _) = checked(isa);
    move |u, addr, _size| {
        let mut s = seen.borrow_mut();
        s.executed += 1;
        if s.executed > limit_insns {
            let _ = u.emu_stop();
            return;
        }
        // A dispatched frame returned: its caller's return address, reached with the sp of
        // the call (recursion reuses the address, never the sp).
        if s.frames.last().is_some_and(|f| f.ret == addr)
            && s.frames.last().map(|f| f.sp) == u.reg_read(sp_reg).ok()
        {
            s.frames.pop();
            s.calls.push((false, 0));
        }
        let m = map.borrow();
        if let Some(ids) = m.ends.get(&addr) {
            if let Some(pos) = s.open.iter().position(|o| ids.contains(&o.index)) {
                let Snapshot {
                    index: i,
                    gprs: g0,
                    fprs: f0,
                    sp: sp0,
                    stack: st0,
                } = s.open.remove(pos);
                let (g1, f1, sp1, st1) = snapshot(u);
                for (k, &r) in gprs2.iter().enumerate() {
                    if g0[k] != g1[k] && !m.clobbers[i].contains(&r) {
                        s.violations.push(format!(
                            "trace point {i}: register {r} changed {:#x} -> {:#x} (clobbers {:?})",
                            g0[k], g1[k], m.clobbers[i]
                        ));
                    }
                }
                for k in 0..f0.len() {
                    if f0[k] != f1[k] {
                        let name = match isa {
                            Isa::X86 => format!("xmm{} ({} half)", k / 2, ["low", "high"][k % 2]),
                            _ => format!("d{k}"),
                        };
                        s.violations
                            .push(format!("trace point {i}: {name} changed"));
                    }
                }
                if sp0 != sp1 || st0 != st1 {
                    s.violations.push(format!("trace point {i}: stack changed"));
                }
            }
        }
        if let Some(&i) = m.starts.get(&addr) {
            s.trace_points_run += 1;
            let (gprs, fprs, sp, stack) = snapshot(u);
            s.open.push(Snapshot {
                index: i,
                gprs,
                fprs,
                sp,
                stack,
            });
        }
        if m.out_of_line.contains_key(&addr) {
            s.out_of_line_run += 1;
        }
        if m.fprem.contains(&addr) {
            x87_fprem(u, addr);
        }
    }
}

/// Narrows the raw register to the return type's width (ART leaves the upper bits undefined).
fn result_bits(shorty: &str, raw: u64) -> u64 {
    match shorty.as_bytes()[0] {
        b'J' | b'D' => raw,
        b'V' => 0,
        _ => raw & 0xffff_ffff,
    }
}

/// Runs the method once (a Machine for a single call).
pub fn run(
    code: &IsaCode,
    shorty: &str,
    is_static: bool,
    args: &[Arg],
    method: u64,
) -> Result<Run, EmuError> {
    Machine::new(code, shorty, is_static)?.call(args, method)
}

#[cfg(test)]
mod x86_tests {
    use super::*;

    /// A bare MODE_32 unicorn with the harness's code page, stack, Thread image and GDT.
    fn bare(code: &[u8], fs: bool) -> (Unicorn<'static, ()>, Layout) {
        let l = layout(Isa::X86);
        let mut u = Unicorn::new(Arch::X86, unicorn_engine::Mode::MODE_32).unwrap();
        u.mem_map(l.code, 0x1000, Prot::ALL).unwrap();
        u.mem_write(l.code, code).unwrap();
        u.mem_map(l.stack_lo, l.stack_size, Prot::READ | Prot::WRITE)
            .unwrap();
        u.mem_map(l.thread, 0x2000, Prot::READ | Prot::WRITE)
            .unwrap();
        u.mem_map(X86_GDT, 0x1000, Prot::READ | Prot::WRITE)
            .unwrap();
        u.mem_write(l.thread + 0x10, &0x1234_5678u32.to_le_bytes())
            .unwrap();
        if fs {
            x86_fs(&mut u, l.thread, 0x2000).unwrap();
        }
        u.reg_write(RegisterX86::ESP, l.stack_lo + l.stack_size - 0x100)
            .unwrap();
        (u, l)
    }

    // push esi; pop esi; mov eax, fs:[0x10]
    const PUSH_POP_FS_LOAD: [u8; 8] = [0x56, 0x5e, 0x64, 0xa1, 0x10, 0, 0, 0];

    #[test]
    fn fs_reads_the_thread_image_and_the_stack_stays_32_bit() {
        let (mut u, l) = bare(&PUSH_POP_FS_LOAD, true);
        u.emu_start(l.code, l.code + 8, 0, 0).unwrap();
        assert_eq!(u.reg_read(RegisterX86::EAX).unwrap(), 0x1234_5678);
        assert_eq!(
            u.reg_read(RegisterX86::ESP).unwrap(),
            l.stack_lo + l.stack_size - 0x100
        );
        assert_eq!(
            u.reg_read(RegisterX86::FS).unwrap(),
            (X86_FS_ENTRY << 3) | 3
        );
    }

    #[test]
    fn without_the_descriptor_fs_is_not_the_thread() {
        // fs base 0: the load faults (0x10 is unmapped), so the check above can fail.
        let (mut u, l) = bare(&PUSH_POP_FS_LOAD, false);
        assert!(u.emu_start(l.code, l.code + 8, 0, 0).is_err());
    }

    #[test]
    fn fs_base_cannot_be_written_in_mode_32() {
        // Why `x86_fs` builds a descriptor: unicorn 2.1's MODE_32 has no FS_BASE register.
        let (mut u, l) = bare(&PUSH_POP_FS_LOAD, false);
        let written = u.reg_write(RegisterX86::FS_BASE, l.thread);
        let ran = u.emu_start(l.code, l.code + 8, 0, 0);
        assert!(
            written.is_err() || ran.is_err(),
            "unicorn now honours FS_BASE in MODE_32 ({written:?}, {ran:?}): x86_fs could use it"
        );
    }

    #[test]
    fn x87_conversions_round_trip() {
        for v in [
            0.0,
            -0.0,
            1.5,
            -7.25e-300,
            f64::MIN_POSITIVE / 8.0,
            -5e-324,
            f64::MAX,
            f64::INFINITY,
            -1e-56,
            1e-170,
        ] {
            let back = x87_to_f64(&f64_to_x87(v));
            assert_eq!(back.to_bits(), v.to_bits(), "{v:e}");
        }
        assert!(x87_to_f64(&f64_to_x87(f64::NAN)).is_nan());
        // 1.0 is 0x3fff, significand 0x8000000000000000.
        let one = f64_to_x87(1.0);
        assert_eq!(one, [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f]);
    }

    #[test]
    fn rdtsc_returns_the_host_counter() {
        // rdtsc; mov ebx, eax; mov ecx, edx; rdtsc. unicorn's helper_rdtsc returns
        // cpu_get_host_ticks() (qemu/softmmu/cpus.c cpu_get_ticks): the host's own TSC, so
        // two reads increase.
        let code = [0x0f, 0x31, 0x89, 0xc3, 0x89, 0xd1, 0x0f, 0x31];
        let (mut u, l) = bare(&code, true);
        u.emu_start(l.code, l.code + code.len() as u64, 0, 0)
            .unwrap();
        let r = |reg| u.reg_read(reg).unwrap();
        let first = (r(RegisterX86::ECX) << 32) | r(RegisterX86::EBX);
        let second = (r(RegisterX86::EDX) << 32) | r(RegisterX86::EAX);
        assert!(first != 0 && second > first, "{first:#x} then {second:#x}");
    }
}
