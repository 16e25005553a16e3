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
use unicorn_engine::{Arch, ArmCpuModel, Prot, RegisterARM, RegisterARM64, Unicorn};

use crate::abi::{self, Arg};
use crate::dispatch::{Dispatcher, Linker};
use crate::output::{Compiled, IsaCode};
use crate::thread;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    Arm64,
    Thumb2,
}

impl Isa {
    pub fn from_name(name: &str) -> Option<Isa> {
        match name {
            "arm64" => Some(Isa::Arm64),
            "thumb2" => Some(Isa::Thumb2),
            _ => None,
        }
    }
}

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
}

#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    #[error("unicorn: {0}")]
    Unicorn(String),
    #[error("the code did not return (stopped at {pc:#x} after {executed} instructions): {why}")]
    NoReturn { pc: u64, executed: u64, why: String },
    #[error("arguments: {0}")]
    Args(String),
    #[error("ring: {0}")]
    Ring(String),
    #[error("invoke dispatch: {0}")]
    Dispatch(String),
}

pub(crate) fn uc<T>(r: Result<T, unicorn_engine::uc_error>) -> Result<T, EmuError> {
    r.map_err(|e| EmuError::Unicorn(format!("{e:?}")))
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

fn layout(isa: Isa) -> Layout {
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
        Isa::Thumb2 => Layout {
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

/// Registers a trace point may change on this ISA besides its temps: arm64 IP0/IP1 (x16/x17:
/// ART's register allocator never hands them out, code_generator_arm64.h blocks them), thumb2
/// IP (r12, blocked in code_generator_arm_vixl.cc SetupBlockedRegisters). Flags always.
fn reserved_scratch(isa: Isa) -> &'static [u8] {
    match isa {
        Isa::Arm64 => &[16, 17],
        Isa::Thumb2 => &[12],
    }
}

pub(crate) fn gpr(isa: Isa, n: u8) -> i32 {
    match isa {
        Isa::Arm64 => match n {
            0..=28 => RegisterARM64::X0 as i32 + i32::from(n),
            29 => RegisterARM64::X29 as i32,
            30 => RegisterARM64::X30 as i32,
            _ => RegisterARM64::SP as i32,
        },
        Isa::Thumb2 => match n {
            0..=12 => RegisterARM::R0 as i32 + i32::from(n),
            13 => RegisterARM::SP as i32,
            _ => RegisterARM::LR as i32,
        },
    }
}

fn fpr(isa: Isa, n: u8) -> i32 {
    match isa {
        Isa::Arm64 => RegisterARM64::D0 as i32 + i32::from(n),
        Isa::Thumb2 => RegisterARM::D0 as i32 + i32::from(n),
    }
}

/// General registers (incl. sp, lr, the thread register) and FP registers compared around a
/// trace point.
fn checked(isa: Isa) -> (Vec<u8>, u8) {
    match isa {
        Isa::Arm64 => ((0..=31).collect(), 32),
        Isa::Thumb2 => ((0..=14).collect(), 32),
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
    }
}

/// A frame the harness dispatched and has not seen return yet.
pub(crate) struct Frame {
    /// The caller's return address (thumb bit cleared).
    pub(crate) ret: u64,
    /// sp at the call: the callee returns with it restored.
    pub(crate) sp: u64,
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
    entrypoints_called: Vec<String>,
    /// Why the run stopped inside an entrypoint the harness does not provide.
    unsupported: Option<String>,
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
    dispatcher: Option<Rc<RefCell<Dispatcher>>>,
    /// Where the START record goes (slot index); None: slot 0. See `Machine::set_ring_start`.
    ring_start: Option<usize>,
}

impl Machine {
    /// Loads `code` (the method's shorty and staticness decide the calling convention).
    pub fn new(code: &IsaCode, shorty: &str, is_static: bool) -> Result<Machine, EmuError> {
        Machine::build(code, shorty, is_static, None)
    }

    /// Loads `c`'s `code` with an invoke dispatcher: the code's calls through the invoke
    /// trampoline are resolved through `linker` and continue in the callee's compiled code
    /// (`crate::dispatch`).
    pub fn linked(c: &Compiled, code: &IsaCode, linker: Rc<Linker>) -> Result<Machine, EmuError> {
        let isa = Isa::from_name(&code.isa)
            .ok_or_else(|| EmuError::Args(format!("{} is not emulated", code.isa)))?;
        let d = Dispatcher::new(isa, c, code, linker, layout(isa));
        Machine::build(code, &c.shorty, c.is_static, Some(Rc::new(RefCell::new(d))))
    }

    /// Puts the START record at `slot` (None: slot 0) for the following calls, the cursor after
    /// it: `Some(last slot)` makes the first record wrap, through the trace point's
    /// out-of-line half (thumb2: cursor == limit == end; arm64: cursor > limit = end - 8).
    pub fn set_ring_start(&mut self, slot: Option<usize>) {
        self.ring_start = slot;
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

    fn build(
        code: &IsaCode,
        shorty: &str,
        is_static: bool,
        dispatcher: Option<Rc<RefCell<Dispatcher>>>,
    ) -> Result<Machine, EmuError> {
        let isa = Isa::from_name(&code.isa)
            .ok_or_else(|| EmuError::Args(format!("{} is not emulated", code.isa)))?;
        if !is_static {
            return Err(EmuError::Args(
                "instance methods need an object; not supported yet".into(),
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

        let ptr = match isa {
            Isa::Arm64 => 8u32,
            Isa::Thumb2 => 4,
        };
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
        };
        uc(
            u.add_code_hook(l.traps, l.traps + 0xfff, move |u, addr, _| {
                let k = ((addr - l.traps) / 4) as usize;
                let name = names.get(k).cloned().unwrap_or_else(|| format!("#{k}"));
                let mut s = trap_seen.borrow_mut();
                s.entrypoints_called.push(name.clone());
                // The invoke trampoline continues in the callee (or throws, or fails).
                if name == "InvokeStaticTrampolineWithAccessCheck" {
                    if let Some(d) = &trap_dispatcher {
                        d.borrow_mut().invoke_static(u, &mut s);
                        // The trampoline delivered a pending exception from the caller.
                        if s.exception.is_some() && !unwinder.deliver(u, &mut s) {
                            let _ = u.emu_stop();
                        }
                        return;
                    }
                }
                match crate::runtime::call(isa, &name, u) {
                    crate::runtime::Outcome::Returned => {
                        let lr = match isa {
                            Isa::Arm64 => u.reg_read(RegisterARM64::X30),
                            Isa::Thumb2 => u.reg_read(RegisterARM::LR),
                        }
                        .unwrap_or(0);
                        let pc = match isa {
                            Isa::Arm64 => RegisterARM64::PC as i32,
                            Isa::Thumb2 => RegisterARM::PC as i32,
                        };
                        let _ = u.reg_write(pc, lr);
                    }
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
        })
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
        // A clean ring for every call.
        uc(u.mem_write(l.ring, &vec![0u8; ring_bytes as usize]))?;
        // The Hubble block as the control thread's start() leaves it (docs/architecture.md): stop
        // 0, limit, begin, end, a START record in slot 0, cursor after it.
        let ptr = match isa {
            Isa::Arm64 => 8u32,
            Isa::Thumb2 => 4,
        };
        let offs = thread::hubble_offsets(ptr);
        let end = l.ring + ring_bytes;
        let limit = match isa {
            Isa::Arm64 => end - 8,
            Isa::Thumb2 => end,
        };
        let field = |u: &mut Unicorn<'_, ()>, f: usize, v: u64| {
            uc(u.mem_write(l.thread + offs[f], &v.to_le_bytes()[..ptr as usize]))
        };
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
        }
        let placed = match isa {
            Isa::Arm64 => abi::place_arm64(shorty, args),
            Isa::Thumb2 => abi::place_arm(shorty, args),
        }
        .map_err(EmuError::Args)?;
        for (reg, value) in &placed.core {
            uc(u.reg_write(gpr(isa, *reg), *value))?;
        }
        for (reg, value) in &placed.fp {
            match (isa, reg) {
                (Isa::Arm64, _) => uc(u.reg_write(fpr(isa, *reg), *value))?,
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

        let begin = match isa {
            Isa::Arm64 => l.code,
            Isa::Thumb2 => l.code | 1,
        };
        let started = u.emu_start(begin, l.ret, 0, 0);
        let pc = match isa {
            Isa::Arm64 => u.reg_read(RegisterARM64::PC),
            Isa::Thumb2 => u.reg_read(RegisterARM::PC),
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
            Isa::Thumb2 => Mode::Bits32,
        };
        // 0: tracing was turned off (decode_ring says so) rather than an offset below the ring.
        let offset = if cursor == 0 { 0 } else { cursor - l.ring };
        let records = crate::decode_ring(&ring, offset, mode).map_err(EmuError::Ring)?;
        let s = seen.borrow();
        let mut violations = s.violations.clone();
        for o in &s.open {
            violations.push(format!(
                "trace point {} started but never reached its end",
                o.index
            ));
        }
        let entrypoints_called = s.entrypoints_called.clone();
        Ok(Run {
            result: result_bits(isa, shorty, result),
            executed,
            trace_points_run: s.trace_points_run,
            records,
            violations,
            exception,
            entrypoints_called,
            calls: s.calls.clone(),
            out_of_line_run: s.out_of_line_run,
            caught: s.caught.clone(),
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
}

impl Unwinder {
    /// Delivers `s.exception`; true when a compiled handler caught it (execution continues
    /// there), false when the run ends with it.
    fn deliver(&self, u: &mut Unicorn<'_, ()>, s: &mut Seen) -> bool {
        let exception = s.exception.clone().unwrap_or_default();
        let (sp_reg, lr_reg, pc_reg) = match self.isa {
            Isa::Arm64 => (
                RegisterARM64::SP as i32,
                RegisterARM64::X30 as i32,
                RegisterARM64::PC as i32,
            ),
            Isa::Thumb2 => (
                RegisterARM::SP as i32,
                RegisterARM::LR as i32,
                RegisterARM::PC as i32,
            ),
        };
        let (sp, lr) = (
            u.reg_read(sp_reg).unwrap_or(0),
            u.reg_read(lr_reg).unwrap_or(0),
        );
        let methods = self.map.borrow().methods.clone();
        match crate::catch::deliver(u, self.isa, &methods, sp, lr, &s.frames, &exception) {
            Ok(crate::catch::Delivery::Caught { depth, sp, pc }) => {
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
    let sp_reg = gpr(isa, if isa == Isa::Arm64 { 31 } else { 13 });
    let snapshot = move |u: &Unicorn<'_, ()>| -> (Vec<u64>, Vec<u64>, u64, Vec<u8>) {
        let g = gprs
            .iter()
            .map(|&r| u.reg_read(gpr(isa, r)).unwrap_or(0))
            .collect();
        let f = (0..nfp)
            .map(|r| u.reg_read(fpr(isa, r)).unwrap_or(0))
            .collect();
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
                        s.violations.push(format!("trace point {i}: d{k} changed"));
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
    }
}

/// Narrows the raw register to the return type's width (ART leaves the upper bits undefined).
fn result_bits(isa: Isa, shorty: &str, raw: u64) -> u64 {
    match shorty.as_bytes()[0] {
        b'J' | b'D' => raw,
        b'V' => 0,
        _ if isa == Isa::Arm64 || isa == Isa::Thumb2 => raw & 0xffff_ffff,
        _ => raw,
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
