//! Invoke dispatch: compiled code that calls another method of its dex runs on into that
//! method's compiled code, as on a device, so whole call trees run compiled and trace into one
//! ring.
//!
//! What the patched compiler emits for `invoke-static` here: the harness has no `Runtime` and no
//! class linker, so its one stand-in inside the compiler
//! (`cpp/resolve-method-stand-in.patch`: `ResolveMethod` in instruction_builder.cc resolves
//! nothing) makes `HInstructionBuilder::BuildInvoke` build an `HInvokeUnresolved`, which the
//! inliner never inlines (inliner.cc `TryInline`) and the code generators emit through
//! `CodeGenerator::GenerateInvokeUnresolvedRuntimeCall` (code_generator.cc): the dex method
//! index in the first argument register (w0 / r0, `MoveConstant(GetTemp(0), index)`), the
//! arguments where the managed calling convention puts them, and `InvokeRuntime(
//! kQuickInvokeStaticTrampolineWithAccessCheck)`: `ldr lr, [tr, #offset]; blr lr` (arm64),
//! `ldr lr, [r9, #offset]; blx lr` (thumb2), a stack map at the return address with the
//! invoke's dex pc. On a device that entrypoint is `art_quick_invoke_static_trampoline_with_
//! access_check` (runtime/arch/{arm64,arm}/quick_entrypoints_*.S, `INVOKE_TRAMPOLINE_BODY`),
//! which calls `artInvokeStaticTrampolineWithAccessCheck` (runtime/entrypoints/quick/
//! quick_trampoline_entrypoints.cc) and tail-calls the method it returns. `Dispatcher::
//! invoke_static` is that trampoline and that function, step by step (each step cites its
//! source); `Linker` is the class linker's part (`ClassLinker::ResolveMethod`) and the compiler's
//! (the callee's code, compiled once per method by the same patched compiler).
//!
//! Calls on objects (`invoke-direct`, `-virtual`, `-super`, `-interface`) are built unresolved
//! the same way and reach the other four trampolines (`GenerateInvokeUnresolvedRuntimeCall`'s
//! switch on the invoke type), with the receiver in the second argument register; the method
//! they continue in is chosen as `FindMethodToCall<type>` chooses it (entrypoint_utils-inl.h),
//! from the receiver's class in the harness's class linker (`crate::heap`). Instance field
//! accesses, built unresolved too, reach the field entrypoints, done here against the same
//! class linker and heap (`Dispatcher::field`).
//!
//! What differs from a device: see docs/compiler-harness.md ("Invoke dispatch").

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use unicorn_engine::{RegisterARM, RegisterARM64, RegisterX86, Unicorn};

use crate::cpu::{self, EmuError, Frame, Isa};
use crate::emu::{self, CodeMap, Layout, Seen};
use crate::entrypoints::field_entrypoint;
pub use crate::entrypoints::{InvokeKind, FIELD_ENTRYPOINTS};
use crate::heap::{self, Classes, LookupError};
use crate::output::{Compiled, FieldRef, Invoke, IsaCode, PcMap};
use crate::{Harness, HarnessError};

/// Why a method could not be resolved or compiled.
#[derive(Clone, Debug, thiserror::Error)]
pub enum LinkError {
    /// The dex defines no such method (`ClassLinker::ResolveMethod` throws NoSuchMethodError).
    #[error("{0}: no such method in the dex")]
    NoSuchMethod(String),
    /// The harness could not compile it (most often: it needs the class linker or a heap).
    #[error("a callee could not be compiled ({method}: {why})")]
    Compile { method: String, why: String },
}

/// The class linker and compiler of the harness's "runtime": resolves a descriptor to the
/// method the dex defines and its compiled code (arm64, thumb2, x86), compiled once per method.
pub struct Linker {
    harness: Harness,
    dex: PathBuf,
    traced: bool,
    dir: PathBuf,
    methods: RefCell<HashMap<String, Result<Rc<Compiled>, LinkError>>>,
    compiles: Cell<usize>,
    classes: RefCell<Option<Result<Rc<Classes>, String>>>,
}

impl Linker {
    /// Resolves against `dex`, compiling callees traced or not (as their caller), with scratch
    /// files in `dir`.
    pub fn new(harness: &Harness, dex: &Path, traced: bool, dir: &Path) -> Linker {
        Linker {
            harness: harness.clone(),
            dex: dex.to_path_buf(),
            traced,
            dir: dir.to_path_buf(),
            methods: RefCell::new(HashMap::new()),
            compiles: Cell::new(0),
            classes: RefCell::new(None),
        }
    }

    /// The dex's classes (`hubble-compile-method --classes`, read once).
    pub fn classes(&self) -> Result<Rc<Classes>, String> {
        if let Some(r) = self.classes.borrow().as_ref() {
            return r.clone();
        }
        let r = std::fs::create_dir_all(&self.dir)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                self.harness
                    .classes(&self.dex, &self.dir.join("classes.txt"))
                    .map(Rc::new)
                    .map_err(|e| e.to_string())
            });
        *self.classes.borrow_mut() = Some(r.clone());
        r
    }

    pub fn traced(&self) -> bool {
        self.traced
    }

    /// Methods compiled so far (each once).
    pub fn compiles(&self) -> usize {
        self.compiles.get()
    }

    /// The method `descriptor` names, compiled for arm64, thumb2 and x86.
    pub fn resolve(&self, descriptor: &str) -> Result<Rc<Compiled>, LinkError> {
        if let Some(r) = self.methods.borrow().get(descriptor) {
            return r.clone();
        }
        let n = self.compiles.get() + 1;
        self.compiles.set(n);
        std::fs::create_dir_all(&self.dir).map_err(|e| LinkError::Compile {
            method: descriptor.to_string(),
            why: e.to_string(),
        })?;
        let out = self.dir.join(format!(
            "callee-{n}-{}.txt",
            if self.traced { "t" } else { "u" }
        ));
        let r = match self.harness.compile(
            &self.dex,
            descriptor,
            "arm64,thumb2,x86,x86_64",
            self.traced,
            &out,
        ) {
            Ok(c) => Ok(Rc::new(c)),
            Err(HarnessError::Compile { stderr, .. }) if stderr.contains(": no method ") => {
                Err(LinkError::NoSuchMethod(descriptor.to_string()))
            }
            Err(e) => Err(LinkError::Compile {
                method: descriptor.to_string(),
                why: e.to_string(),
            }),
        };
        let _ = std::fs::remove_file(&out);
        self.methods
            .borrow_mut()
            .insert(descriptor.to_string(), r.clone());
        r
    }
}

/// A method whose code is loaded in the machine.
struct Loaded {
    descriptor: String,
    /// Code start (thumb bit clear) and length.
    start: u64,
    len: u64,
    pc_map: Vec<PcMap>,
    invokes: Vec<Invoke>,
    fields: Vec<FieldRef>,
}

/// Distance between the `ArtMethod*` values the harness gives the loaded methods.
const ART_METHOD_STRIDE: u64 = 0x40;

/// `StackMap::Kind` values (runtime/stack_map.h).
const KIND_DEFAULT: i32 = -1;
const KIND_CATCH: i32 = 0;
const KIND_OSR: i32 = 1;

/// How a dispatch failed.
#[derive(Debug)]
enum Failure {
    /// A Java exception (DELIVER_PENDING_EXCEPTION: the run stops there).
    Threw(String),
    /// Something the runtime would abort on, or the harness cannot do.
    Error(String),
}

/// One machine's dispatcher: the methods loaded into its code arena, by `ArtMethod*`.
pub(crate) struct Dispatcher {
    isa: Isa,
    linker: Rc<Linker>,
    methods: Vec<Loaded>,
    by_descriptor: HashMap<String, usize>,
    arena_next: u64,
    arena_end: u64,
    map: Option<Rc<RefCell<CodeMap>>>,
    /// The `ArtMethod*` of the method the harness calls (methods[0]); callee k gets
    /// `entry_method + k * ART_METHOD_STRIDE`.
    entry_method: u64,
}

impl Dispatcher {
    pub(crate) fn new(
        isa: Isa,
        c: &Compiled,
        code: &IsaCode,
        linker: Rc<Linker>,
        l: Layout,
    ) -> Dispatcher {
        let mut by_descriptor = HashMap::new();
        by_descriptor.insert(c.method.clone(), 0);
        Dispatcher {
            isa,
            linker,
            methods: vec![Loaded {
                descriptor: c.method.clone(),
                start: l.code,
                len: code.code.len() as u64,
                pc_map: code.pc_map.clone(),
                invokes: c.invokes.clone(),
                fields: c.fields.clone(),
            }],
            by_descriptor,
            arena_next: l.arena,
            arena_end: l.arena + l.arena_size,
            map: None,
            entry_method: crate::method_value(&code.isa),
        }
    }

    fn art_method(&self, k: usize) -> u64 {
        self.entry_method + k as u64 * ART_METHOD_STRIDE
    }

    /// `ArtMethod::GetEntryPointFromQuickCompiledCode` of loaded method k: its code, with the
    /// thumb bit on arm (the entry point of Thumb-2 code is odd).
    fn entry_point(&self, k: usize) -> u64 {
        self.methods[k].start | u64::from(self.isa == Isa::Thumb2)
    }

    /// INVOKE_TRAMPOLINE_BODY (ART 14: runtime/arch/arm64/quick_entrypoints_arm64.S:365-381,
    /// runtime/arch/arm/quick_entrypoints_arm.S:352-365), line by line; returns the frame it entered and the callee's `ArtMethod*`.
    fn trampoline(
        &mut self,
        u: &mut Unicorn<'_, ()>,
        kind: InvokeKind,
    ) -> Result<(Frame, u64), Failure> {
        let isa = self.isa;
        let reg = |u: &Unicorn<'_, ()>, r: i32| u.reg_read(r).unwrap_or(0);
        if isa == Isa::X86 {
            return self.trampoline_x86(u, kind);
        }
        let (r0, r1, sp_reg, lr_reg) = match isa {
            Isa::Arm64 => (
                RegisterARM64::X0 as i32,
                RegisterARM64::X1 as i32,
                RegisterARM64::SP as i32,
                RegisterARM64::X30 as i32,
            ),
            Isa::Thumb2 | Isa::X86 /* x86 returned above */ => (
                RegisterARM::R0 as i32,
                RegisterARM::R1 as i32,
                RegisterARM::SP as i32,
                RegisterARM::LR as i32,
            ),
        };
        // SETUP_SAVE_REFS_AND_ARGS_FRAME: saves the argument registers (arm64 x1-x7, d0-d7;
        // arm r1-r3, s0-s15), the callee saves and lr; `mov x2, xSELF` / `mov r2, rSELF`;
        // `mov x3, sp` / `mov r3, sp`; `bl art<Kind>TrampolineWithAccessCheck` (method_idx =
        // w0/r0, this = w1/r1, a 32-bit heap reference; artInvokeCommon<kStatic> ignores it).
        let method_idx = reg(u, r0) as u32;
        let this = reg(u, r1) & 0xffff_ffff;
        let caller_sp = reg(u, sp_reg);
        let caller_pc = reg(u, lr_reg);
        let (method, code) =
            self.art_invoke_common(u, kind, method_idx, this, caller_sp, caller_pc)?;
        // `mov xIP0, x1` / `mov r12, r1`: the code; RESTORE_SAVE_REFS_AND_ARGS_FRAME restores
        // the arguments, callee saves and lr (unchanged here: the double pushed nothing);
        // what the C++ call may have changed and the frame does not restore is overwritten
        // with junk, so compiled code relying on it fails (arm64: x8-x15, x17 (IP1), d16-d31;
        // arm: d16-d31); REFRESH_MARKING_REGISTER (x20 = Thread::is_gc_marking: 0, untouched);
        // `cbz x0, 1f` (x0 non-null: dispatched); `br xIP0` / `bx r12`, with x0/r0 = the
        // callee's ArtMethod* (the trampoline's return value's low word).
        match isa {
            Isa::Arm64 => {
                for n in (8..=15).chain([17]) {
                    let _ = u.reg_write(cpu::gpr(isa, n), 0x0bad_ca11_0000 + u64::from(n));
                }
                for n in 16..32 {
                    let _ = u.reg_write(RegisterARM64::D0 as i32 + n, 0x7ff4_dead_0000_0000);
                }
                let _ = u.reg_write(RegisterARM64::X16, code);
                let _ = u.reg_write(RegisterARM64::X0, method);
                let _ = u.reg_write(RegisterARM64::PC, code);
            }
            Isa::Thumb2 | Isa::X86 /* x86 returned above */ => {
                for n in 16..32 {
                    let _ = u.reg_write(RegisterARM::D0 as i32 + n, 0x7ff4_dead_0000_0000);
                }
                let _ = u.reg_write(RegisterARM::R12, code);
                let _ = u.reg_write(RegisterARM::R0, method);
                let _ = u.reg_write(RegisterARM::PC, code);
            }
        }
        Ok((
            Frame {
                ret: caller_pc & !1,
                sp: caller_sp,
            },
            method,
        ))
    }

    /// INVOKE_TRAMPOLINE_BODY on x86 (ART 14: runtime/arch/x86/quick_entrypoints_x86.S:333-373),
    /// line by line; returns the frame it entered and the callee's `ArtMethod*`.
    fn trampoline_x86(
        &mut self,
        u: &mut Unicorn<'_, ()>,
        kind: InvokeKind,
    ) -> Result<(Frame, u64), Failure> {
        // `call fs:[offset]` (CodeGeneratorX86::GenerateInvokeRuntime) pushed the return
        // address: [esp] is the caller's pc, esp + 4 its sp at the call.
        let esp = u.reg_read(RegisterX86::ESP).unwrap_or(0);
        let caller_pc = u64::from(cpu::read_u32(u, esp).ok_or_else(|| {
            Failure::Error(format!("the return address at esp {esp:#x} is unreadable"))
        })?);
        let caller_sp = esp + 4;
        // SETUP_SAVE_REFS_AND_ARGS_FRAME ebx (:58-67: pushes EDI ESI EBP EBX EDX ECX, XMM0-3
        // and the runtime method, FRAME_SIZE_SAVE_REFS_AND_ARGS = 64 with the return
        // address); `PUSH edx` (sp), `pushl %fs:THREAD_SELF_OFFSET`, `PUSH ecx` (this, ignored
        // for static), `PUSH eax` (method_idx); `call art<Kind>TrampolineWithAccessCheck`.
        let method_idx = u.reg_read(RegisterX86::EAX).unwrap_or(0) as u32;
        let this = u.reg_read(RegisterX86::ECX).unwrap_or(0) & 0xffff_ffff;
        let (method, code) =
            self.art_invoke_common(u, kind, method_idx, this, caller_sp, caller_pc)?;
        // The C++ call returns the method in EAX and the code in EDX (`movl %edx, %edi`); the
        // frame's pops restore XMM0-3 (:349-352), ECX EDX EBX (arguments), EBP ESI and EDI
        // (callee saves): all unchanged here, as the double pushed nothing. What the C call
        // may clobber (cdecl: XMM4-7 are caller-saved) and the frame does not restore is
        // overwritten with junk, so compiled code that kept a value there would fail.
        for n in 4..8 {
            let _ = cpu::xmm_write(u, n, 0x7ff4_dead_0000_0000 + u64::from(n), 0x0bad_ca11);
        }
        // `xchgl %edi, (%esp)` puts the code where EDI was saved, `testl %eax, %eax` (non-null:
        // dispatched), `ret`: a tail call with the caller's return address again at [esp],
        // EAX = the callee's ArtMethod*.
        let _ = u.reg_write(RegisterX86::EAX, method);
        let _ = u.reg_write(RegisterX86::ESP, esp);
        let _ = u.reg_write(RegisterX86::EIP, code);
        Ok((
            Frame {
                ret: caller_pc,
                sp: caller_sp,
            },
            method,
        ))
    }

    /// art<Kind>TrampolineWithAccessCheck → artInvokeCommon<type>
    /// (ART 14: runtime/entrypoints/quick/quick_trampoline_entrypoints.cc:2164-2196 → 2094):
    /// returns (method, code), as GetTwoWordSuccessValue.
    fn art_invoke_common(
        &mut self,
        u: &mut Unicorn<'_, ()>,
        kind: InvokeKind,
        method_idx: u32,
        this: u64,
        caller_sp: u64,
        caller_pc: u64,
    ) -> Result<(u64, u64), Failure> {
        // QuickArgumentVisitor::GetCallingMethodAndDexPc(sp, &dex_pc)
        //   → GetCalleeSaveMethodCallerAndDexPc (entrypoint_utils.cc):
        // DoGetCalleeSaveMethodOuterCallerAndPc: caller_sp = sp + callee_frame_size
        // (FRAME_SIZE_SAVE_REFS_AND_ARGS, 224 on arm64, 112 on arm: the double pushed no frame,
        // so that is sp at the call; 64 on x86, return address included: sp after the call's
        // return); caller_pc = the return pc the frame saved (lr at the call; on x86 the
        // pushed return address); outer_method = *caller_sp.
        let ptr = self.isa.pointer_size() as usize;
        let mut buf = [0u8; 8];
        u.mem_read(caller_sp, &mut buf[..ptr]).map_err(|e| {
            Failure::Error(format!(
                "the caller's frame at sp {caller_sp:#x} is unreadable: {e:?}"
            ))
        })?;
        let outer_method = u64::from_le_bytes(buf);
        // DoGetCalleeSaveMethodCallerAndDexPc: current_code =
        // outer_method->GetOatQuickMethodHeader(caller_pc), which must hold caller_pc.
        let caller = (0..self.methods.len())
            .find(|&k| self.art_method(k) == outer_method)
            .ok_or_else(|| {
                Failure::Error(format!(
                    "the caller's frame holds {outer_method:#x} at [sp], not the ArtMethod* \
                     of a method the harness called or dispatched"
                ))
            })?;
        let m = &self.methods[caller];
        let pc = caller_pc & !1;
        if pc < m.start || pc > m.start + m.len {
            return Err(Failure::Error(format!(
                "return pc {caller_pc:#x} is outside {}'s code ({:#x}+{:#x}): \
                 GetOatQuickMethodHeader finds no code for it",
                m.descriptor, m.start, m.len
            )));
        }
        // current_code->IsOptimized() and no inline info (unresolved invokes are never
        // inlined, and nothing else is here): `*dex_pc = current_code->ToDexPc(caller_sp,
        // caller_pc)` (oat_quick_method_header.cc): sought_offset = pc - GetEntryPoint()
        // (both with the thumb bit on arm), then CodeInfo::GetStackMapForNativePcOffset.
        let sought_offset = caller_pc - self.entry_point(caller);
        let dex_pc =
            stack_map_for_native_pc_offset(&m.pc_map, sought_offset as u32).ok_or_else(|| {
                Failure::Error(format!(
                    "Failed to find Dex offset for PC offset {sought_offset:#x} in {} \
                     (ToDexPc's LOG(FATAL))",
                    m.descriptor
                ))
            })?;
        // CodeItemInstructionAccessor accessor(caller_method->DexInstructions());
        // const Instruction& instr = accessor.InstructionAt(dex_pc);
        let instr = m
            .invokes
            .iter()
            .find(|i| i.dex_pc == dex_pc)
            .ok_or_else(|| {
                Failure::Error(format!(
                    "dex pc {dex_pc} of {} is not an invoke instruction",
                    m.descriptor
                ))
            })?
            .clone();
        if InvokeKind::of_opcode(&instr.opcode) != Some(kind) {
            return Err(Failure::Error(format!(
                "the {} trampoline was called for {} at dex pc {dex_pc}",
                kind.opcode(),
                instr.opcode
            )));
        }
        // The method_idx argument only gives the shorty for RememberForGcArgumentVisitor; the
        // code generator passes the instruction's own index (GenerateInvokeUnresolvedRuntimeCall:
        // invoke->GetMethodReference().index), so the two must agree.
        if method_idx != instr.method_idx {
            return Err(Failure::Error(format!(
                "the code passed method index {method_idx}, the invoke at dex pc {dex_pc} names \
                 {}",
                instr.method_idx
            )));
        }
        // FindMethodToCall<type>(self, caller_method, &this_object, instr, ...)
        // (entrypoint_utils-inl.h:516-604): the thread's interpreter cache is empty here, so
        // NterpGetMethod → ClassLinker::ResolveMethod<kCheckICCEAndIAE>(inst.VRegB(), caller,
        // type); for calls on objects, the method the receiver's class gives (`select`); a
        // failure is a pending exception (GetTwoWordFailureValue, then DELIVER_PENDING_EXCEPTION).
        let target = if kind == InvokeKind::Static {
            instr.callee.clone()
        } else {
            let caller_class = heap::class_of_descriptor(&m.descriptor).to_string();
            self.select(u, kind, &instr.callee, &caller_class, this)?
        };
        let callee = match self.linker.resolve(&target) {
            Ok(c) => c,
            Err(LinkError::NoSuchMethod(_)) => {
                return Err(Failure::Threw("java.lang.NoSuchMethodError".into()))
            }
            Err(e) => return Err(Failure::Error(e.to_string())),
        };
        // A native callee compiles to a JNI stub, which needs the JNIEnv and native code the
        // dispatcher does not lay out (crate::jni runs stubs on their own).
        if callee.jni.is_some() {
            return Err(Failure::Error(format!(
                "{} is native: its JNI stub runs only with the native images of crate::jni",
                callee.method
            )));
        }
        // CheckIncompatibleClassChange(type): a static invoke of an instance method, or a call
        // on an object of a static method.
        if callee.is_static != (kind == InvokeKind::Static) {
            return Err(Failure::Threw(
                "java.lang.IncompatibleClassChangeError".into(),
            ));
        }
        let k = self.load(u, &callee)?;
        // const void* code = method->GetEntryPointFromQuickCompiledCode();
        // return GetTwoWordSuccessValue(code, method);
        Ok((self.art_method(k), self.entry_point(k)))
    }

    /// The method a call on `this` runs, as FindMethodToCall<type> (entrypoint_utils-inl.h,
    /// ART 14) picks it after NterpGetMethod resolved the named one: a null receiver throws
    /// NullPointerException (after resolution, :541-555); kDirect runs the resolved method;
    /// kVirtual the receiver class's vtable entry (:593-595); kSuper the entry of the calling
    /// class's superclass (NterpGetMethod, nterp.cc:261-264 → FindSuperMethodToCall, :607-663,
    /// for a class: no such entry throws NoSuchMethodError); kInterface the receiver class's
    /// implementation (FindVirtualMethodForInterface, :573-592, or
    /// IncompatibleClassChangeError); an abstract method throws AbstractMethodError
    /// (IsInvokable, :598-601). The checks of ClassLinker::ResolveMethod<kCheckICCEAndIAE>
    /// that a call on an interface method goes through invoke-interface, and on a class method
    /// not, throw IncompatibleClassChangeError.
    fn select(
        &self,
        u: &Unicorn<'_, ()>,
        kind: InvokeKind,
        callee: &str,
        caller_class: &str,
        this: u64,
    ) -> Result<String, Failure> {
        let classes = self.linker.classes().map_err(Failure::Error)?;
        // Resolution (and its errors) comes before the null check (:541-555).
        choose(&classes, kind, callee, caller_class, None)?;
        if this == 0 {
            return Err(Failure::Threw("java.lang.NullPointerException".into()));
        }
        let class = heap::class_of(u, &classes, this).map_err(Failure::Error)?;
        choose(
            &classes,
            kind,
            callee,
            caller_class,
            Some(&class.descriptor),
        )
    }

    fn field_access(
        &self,
        u: &mut Unicorn<'_, ()>,
        get: bool,
        width: u32,
    ) -> Result<crate::runtime::Outcome, String> {
        use crate::runtime::Outcome;
        let r = |u: &Unicorn<'_, ()>, reg: i32| u.reg_read(reg).unwrap_or(0);
        let (field_idx, obj, value, ret_pc) = match self.isa {
            Isa::Arm64 => (
                r(u, RegisterARM64::X0 as i32),
                r(u, RegisterARM64::X1 as i32),
                r(u, RegisterARM64::X2 as i32),
                r(u, RegisterARM64::X30 as i32),
            ),
            Isa::Thumb2 => (
                r(u, RegisterARM::R0 as i32),
                r(u, RegisterARM::R1 as i32),
                (r(u, RegisterARM::R2 as i32) & 0xffff_ffff) | (r(u, RegisterARM::R3 as i32) << 32),
                r(u, RegisterARM::LR as i32),
            ),
            Isa::X86 => {
                let esp = r(u, RegisterX86::ESP as i32);
                (
                    r(u, RegisterX86::EAX as i32),
                    r(u, RegisterX86::ECX as i32),
                    (r(u, RegisterX86::EDX as i32) & 0xffff_ffff)
                        | (r(u, RegisterX86::EBX as i32) << 32),
                    u64::from(cpu::read_u32(u, esp).unwrap_or(0)),
                )
            }
        };
        let field_idx = field_idx as u32;
        let obj = obj & 0xffff_ffff;
        // GetReferrer(self): the compiled method that called the entrypoint.
        let pc = ret_pc & !1;
        let caller = self
            .methods
            .iter()
            .find(|m| pc >= m.start && pc <= m.start + m.len)
            .ok_or_else(|| format!("a field entrypoint returns to {ret_pc:#x}, in no method"))?;
        let field = caller
            .fields
            .iter()
            .find(|f| f.field_idx == field_idx)
            .ok_or_else(|| {
                format!(
                    "{} passed field index {field_idx}, which none of its iget/iput names",
                    caller.descriptor
                )
            })?;
        // FindInstanceField (quick_field_entrypoints.cc:75-90): the field is resolved first
        // (its NoSuchFieldError comes before a null object's NullPointerException).
        let classes = self.linker.classes()?;
        match classes.resolve_field(&field.class, &field.name, &field.ty) {
            Ok(_) => {}
            Err(LookupError::Throw(t)) => return Ok(Outcome::Threw(t)),
            Err(LookupError::Unmodelled(why)) => return Err(why),
        }
        if obj == 0 {
            return Ok(Outcome::Threw("java.lang.NullPointerException".into()));
        }
        let class = heap::class_of(u, &classes, obj)?;
        let slot = match classes.field_slot(&class.descriptor, &field.class, &field.name, &field.ty)
        {
            Ok(k) => k,
            Err(LookupError::Throw(t)) => return Ok(Outcome::Threw(t)),
            Err(LookupError::Unmodelled(why)) => return Err(why),
        };
        let at = heap::slot_address(obj, slot);
        if get {
            let mut b = [0u8; 8];
            u.mem_read(at, &mut b).map_err(|e| format!("{e:?}"))?;
            // ArtField::Get<Kind> (the field's own type), widened as the C++ return type does:
            // sub-word ints sign- or zero-extended (ssize_t / size_t).
            let v = heap::canonical_field(
                heap::type_char(&field.ty),
                heap::field_bits(width, u64::from_le_bytes(b)),
            );
            match self.isa {
                Isa::Arm64 => {
                    let _ = u.reg_write(RegisterARM64::X0, v);
                }
                Isa::Thumb2 => {
                    let _ = u.reg_write(RegisterARM::R0, v & 0xffff_ffff);
                    if width == 64 {
                        let _ = u.reg_write(RegisterARM::R1, v >> 32);
                    }
                }
                Isa::X86 => {
                    let _ = u.reg_write(RegisterX86::EAX, v & 0xffff_ffff);
                    if width == 64 {
                        let _ = u.reg_write(RegisterX86::EDX, v >> 32);
                    }
                }
            }
        } else {
            u.mem_write(at, &heap::field_bits(width, value).to_le_bytes())
                .map_err(|e| format!("{e:?}"))?;
            // RETURN_IF_W0_IS_ZERO_OR_DELIVER: the setter returned 0.
            let _ = match self.isa {
                Isa::Arm64 => u.reg_write(RegisterARM64::X0, 0),
                Isa::Thumb2 => u.reg_write(RegisterARM::R0, 0),
                Isa::X86 => u.reg_write(RegisterX86::EAX, 0),
            };
        }
        Ok(Outcome::Returned)
    }

    /// The callee's compiled code in the arena (once per machine), its trace points registered.
    fn load(&mut self, u: &mut Unicorn<'_, ()>, c: &Compiled) -> Result<usize, Failure> {
        if let Some(&k) = self.by_descriptor.get(&c.method) {
            return Ok(k);
        }
        let isa_name = self.isa.name();
        let code = c.isa(isa_name).ok_or_else(|| {
            Failure::Error(format!("{} was not compiled for {isa_name}", c.method))
        })?;
        let linked = crate::link::link(self.isa, code)
            .map_err(|e| Failure::Error(format!("linking {}: {e}", c.method)))?;
        let k = self.methods.len();
        if (k as u64 + 1) * ART_METHOD_STRIDE + (self.entry_method & 0xffff) > 0x1_0000 {
            return Err(Failure::Error(
                "too many methods for the ArtMethod page".into(),
            ));
        }
        // ART aligns method code to 16 bytes (arm64, x86) and 8 (thumb2); 64 is all.
        let start = (self.arena_next + 63) & !63;
        let len = code.code.len() as u64;
        if start + linked.len() as u64 > self.arena_end {
            return Err(Failure::Error("the code arena is full".into()));
        }
        u.mem_write(start, &linked)
            .map_err(|e| Failure::Error(format!("loading {}: {e:?}", c.method)))?;
        self.arena_next = start + linked.len() as u64;
        self.methods.push(Loaded {
            descriptor: c.method.clone(),
            start,
            len,
            pc_map: code.pc_map.clone(),
            invokes: c.invokes.clone(),
            fields: c.fields.clone(),
        });
        self.by_descriptor.insert(c.method.clone(), k);
        if let Some(map) = &self.map {
            map.borrow_mut().add(self.isa, code, start);
        }
        Ok(k)
    }
}

impl emu::Dispatch for Dispatcher {
    fn set_code_map(&mut self, map: Rc<RefCell<CodeMap>>) {
        self.map = Some(map);
    }

    fn set_entry_method(&mut self, method: u64) {
        self.entry_method = method;
    }

    /// The dex's classes (the linker's).
    fn classes(&self) -> Result<Rc<Classes>, String> {
        self.linker.classes()
    }

    /// Descriptors of the loaded methods, in load order (the method called first).
    fn loaded(&self) -> Vec<String> {
        self.methods.iter().map(|m| m.descriptor.clone()).collect()
    }

    /// The compiled code called `p<Kind>TrampolineWithAccessCheck`: do what
    /// `art_quick_invoke_<kind>_trampoline_with_access_check` does, and record the dispatch.
    fn invoke(&mut self, u: &mut Unicorn<'_, ()>, s: &mut Seen, kind: InvokeKind) {
        match self.trampoline(u, kind) {
            Ok(frame) => {
                s.calls.push((true, frame.1));
                s.frames.push(frame.0);
            }
            Err(Failure::Threw(e)) => {
                // Delivered by the trap hook (a compiled handler may catch it).
                s.exception = Some(e);
            }
            Err(Failure::Error(why)) => {
                s.dispatch_error = Some(why);
                let _ = u.emu_stop();
            }
        }
    }

    /// The code called an instance field entrypoint (`p{Get,Set}<Kind>Instance`): do what
    /// art_quick_{get,set}*_instance and art{Get,Set}<Kind>InstanceFromCompiledCode do
    /// (quick_entrypoints_{arm64,arm,x86}.S: TWO_/THREE_ARG_REF_DOWNCALL;
    /// quick_field_entrypoints.cc:109-260, ART 14): the field by its dex index from the
    /// calling method (GetReferrer), the object's slot (FindInstanceField, :75-90: the field
    /// resolved, then a null object throws NullPointerException), the value read or written, the result in the return register(s)
    /// (the code moves a float field's value out of them itself:
    /// CodeGenerator::GenerateUnresolvedFieldAccess). Arguments: field index in w0/r0/EAX, the
    /// object in x1/r1/ECX, a new value in x2 / r2 (r2:r3) / EDX (EDX:EBX)
    /// (FieldAccessCallingConvention{ARM64,ARMVIXL,X86}). None: not a field entrypoint.
    fn field(
        &self,
        u: &mut Unicorn<'_, ()>,
        name: &str,
    ) -> Option<Result<crate::runtime::Outcome, String>> {
        let (get, width) = field_entrypoint(name)?;
        Some(self.field_access(u, get, width))
    }
}

/// What the native x86_64 child needs to run `c` with its invokes dispatched and its instance
/// fields served (`crate::native_dispatch`): `c` and every method it can reach, each compiled
/// once by `linker` (as traced as `c`), their `ArtMethod*` values (`method_value` + 0x40 per
/// callee, as in unicorn), per invoke the offset of the call's return address (the Default
/// stack map of its dex pc, what `ToDexPc` maps back) and where it continues — one method, or
/// per receiver class of the dex the method `choose` gives for it (as `Dispatcher::select`
/// does in unicorn, decided here for every class because the child cannot look anything up) —
/// and per iget/iput field its slot in each class that has it. Anything the child could only
/// answer with an exception (a callee the dex does not define, an abstract method) is an error
/// with its reason: there is no native exception delivery.
pub fn native_program(
    c: &Compiled,
    linker: &Linker,
) -> Result<crate::native_dispatch::NativeDispatch, String> {
    use crate::native_dispatch::{NativeCode, NativeDispatch, NativeField, NativeInvoke, Target};
    let failure = |f: Failure| match f {
        Failure::Threw(e) => format!("it would throw {e}"),
        Failure::Error(e) => e,
    };
    let entry = Rc::new(c.clone());
    let first = entry
        .isa("x86_64")
        .ok_or_else(|| format!("{} was not compiled for x86_64", c.method))?;
    let slot = |name: &str| {
        first
            .entrypoints
            .iter()
            .find(|e| e.0 == name)
            .map(|e| u64::from(e.1))
    };
    let mut invoke_slots = Vec::new();
    for kind in InvokeKind::ALL {
        let name = kind.entrypoint();
        invoke_slots.push((
            kind as u32,
            slot(name).ok_or(format!("no {name} entrypoint"))?,
        ));
    }
    let field_slots: Vec<(usize, u64)> = FIELD_ENTRYPOINTS
        .iter()
        .enumerate()
        .filter_map(|(k, (name, _, _))| slot(name).map(|s| (k, s)))
        .collect();
    let provided: Vec<u64> = invoke_slots
        .iter()
        .map(|s| s.1)
        .chain(field_slots.iter().map(|s| s.1))
        .collect();
    let other_slots = first
        .entrypoints
        .iter()
        .map(|e| u64::from(e.1))
        .filter(|s| !provided.contains(s))
        .collect();
    let base = crate::method_value("x86_64");
    let mut order: Vec<Rc<Compiled>> = vec![entry];
    let mut index: HashMap<String, usize> = HashMap::from([(c.method.clone(), 0)]);
    let mut methods = Vec::new();
    let mut k = 0;
    // The index of `descriptor` in `order`, compiled on first use.
    let mut target_of = |descriptor: &str,
                         order: &mut Vec<Rc<Compiled>>,
                         want_static: bool|
     -> Result<usize, String> {
        if let Some(&t) = index.get(descriptor) {
            return Ok(t);
        }
        let callee = linker.resolve(descriptor).map_err(|e| e.to_string())?;
        if callee.jni.is_some() {
            return Err(format!(
                "{}: a native callee does not run natively",
                callee.method
            ));
        }
        if callee.is_static != want_static {
            return Err(format!(
                "{}: it would throw IncompatibleClassChangeError",
                callee.method
            ));
        }
        order.push(callee);
        index.insert(descriptor.to_string(), order.len() - 1);
        Ok(order.len() - 1)
    };
    while k < order.len() {
        let m = Rc::clone(&order[k]);
        let code = m
            .isa("x86_64")
            .ok_or_else(|| format!("{} was not compiled for x86_64", m.method))?;
        let caller_class = heap::class_of_descriptor(&m.method).to_string();
        let mut invokes = Vec::new();
        for inv in &m.invokes {
            let kind = InvokeKind::of_opcode(&inv.opcode)
                .ok_or_else(|| format!("{}: {} is not dispatched", m.method, inv.opcode))?;
            let target = if kind == InvokeKind::Static {
                Target::Fixed(target_of(&inv.callee, &mut order, true)?)
            } else {
                // The linker reads the dex's classes once.
                let classes = &*linker.classes()?;
                // Direct, super and private calls: the method resolution (and for super the
                // superclass's vtable) gives, whatever the receiver.
                let resolved =
                    choose(classes, kind, &inv.callee, &caller_class, None).map_err(failure)?;
                if matches!(kind, InvokeKind::Direct | InvokeKind::Super)
                    || resolved_is_private(classes, &resolved)
                {
                    Target::Fixed(target_of(&resolved, &mut order, false)?)
                } else {
                    let mut by = Vec::new();
                    for class in classes.all() {
                        let Some(addr) = classes.class_address(&class.descriptor) else {
                            continue;
                        };
                        // A class on which the call throws (an abstract method, no
                        // implementation) is marked so; one the call cannot be made on at all
                        // (no such method in its chain) is no receiver of it.
                        match choose(
                            classes,
                            kind,
                            &inv.callee,
                            &caller_class,
                            Some(&class.descriptor),
                        ) {
                            Ok(chosen) => {
                                by.push((addr as u32, target_of(&chosen, &mut order, false)?))
                            }
                            Err(Failure::Threw(_)) => {
                                by.push((addr as u32, crate::native_dispatch::THROWS))
                            }
                            Err(Failure::Error(_)) => {}
                        }
                    }
                    Target::ByClass(by)
                }
            };
            let returns: Vec<u32> = code
                .pc_map
                .iter()
                .filter(|p| p.dex_pc == inv.dex_pc && p.kind == KIND_DEFAULT)
                .map(|p| p.native_pc)
                .collect();
            if returns.is_empty() {
                return Err(format!(
                    "{}: no stack map for the invoke at dex pc {}",
                    m.method, inv.dex_pc
                ));
            }
            invokes.extend(returns.into_iter().map(|ret| NativeInvoke {
                ret,
                method_idx: inv.method_idx,
                kind: kind as u32,
                target: target.clone(),
            }));
        }
        let mut fields = Vec::new();
        for f in &m.fields {
            let classes = &*linker.classes()?;
            let slots = classes
                .all()
                .filter_map(|class| {
                    let addr = classes.class_address(&class.descriptor)?;
                    let slot = classes
                        .field_slot(&class.descriptor, &f.class, &f.name, &f.ty)
                        .ok()?;
                    Some((addr as u32, slot as u32))
                })
                .collect();
            fields.push(NativeField {
                field_idx: f.field_idx,
                ty: heap::type_char(&f.ty),
                slots,
            });
        }
        methods.push(NativeCode {
            code: code.code.clone(),
            art_method: base + k as u64 * ART_METHOD_STRIDE,
            invokes,
            fields,
        });
        k += 1;
    }
    Ok(NativeDispatch {
        methods,
        invoke_slots,
        field_slots,
        other_slots,
    })
}

fn resolved_is_private(classes: &Classes, descriptor: &str) -> bool {
    classes
        .get(heap::class_of_descriptor(descriptor))
        .and_then(|c| c.methods.iter().find(|m| m.descriptor == descriptor))
        .is_some_and(|m| m.access & heap::ACC_PRIVATE != 0)
}

/// The method a call of `kind` naming `callee`, made by a method of `caller_class`, runs on a
/// receiver of class `receiver` (`Dispatcher::select` says whose lines it follows); with no
/// receiver, only resolution and the checks that need none (a virtual or interface call then
/// chooses nothing: `Ok` of the resolved method).
fn choose(
    classes: &Classes,
    kind: InvokeKind,
    callee: &str,
    caller_class: &str,
    receiver: Option<&str>,
) -> Result<String, Failure> {
    let lookup = |e: LookupError| match e {
        LookupError::Throw(t) => Failure::Threw(t),
        LookupError::Unmodelled(why) => Failure::Error(why),
    };
    let (owner, resolved) = classes.resolve_method(callee).map_err(lookup)?;
    let is_interface = owner.access & heap::ACC_INTERFACE != 0;
    if (kind == InvokeKind::Interface) != is_interface && kind != InvokeKind::Super {
        return Err(Failure::Threw(
            "java.lang.IncompatibleClassChangeError".into(),
        ));
    }
    let sig = resolved.name_sig().to_string();
    let chosen = match (kind, receiver) {
        (InvokeKind::Static | InvokeKind::Direct, _) => Some(resolved),
        _ if resolved.access & heap::ACC_PRIVATE != 0 => Some(resolved),
        (InvokeKind::Virtual | InvokeKind::Interface, None) => Some(resolved),
        (InvokeKind::Virtual, Some(class)) => classes.vtable_entry(class, &sig).map(|f| f.1),
        (InvokeKind::Super, _) => {
            if is_interface {
                return Err(Failure::Error(format!(
                    "{callee}: invoke-super of an interface method is not modelled"
                )));
            }
            let superclass = classes
                .get(caller_class)
                .and_then(|c| c.superclass.clone())
                .ok_or_else(|| {
                    Failure::Error(format!("{caller_class} has no superclass in the dex"))
                })?;
            match classes.vtable_entry(&superclass, &sig) {
                Some(f) => Some(f.1),
                None => return Err(Failure::Threw("java.lang.NoSuchMethodError".into())),
            }
        }
        (InvokeKind::Interface, Some(class)) => match classes.interface_target(class, &sig) {
            Some(f) => Some(f.1),
            None => {
                return Err(Failure::Threw(
                    "java.lang.IncompatibleClassChangeError".into(),
                ))
            }
        },
    };
    let chosen = chosen.ok_or_else(|| {
        Failure::Error(format!(
            "{callee}: the receiver's class has no vtable entry for it"
        ))
    })?;
    if receiver.is_some() && chosen.access & heap::ACC_ABSTRACT != 0 {
        return Err(Failure::Threw("java.lang.AbstractMethodError".into()));
    }
    Ok(chosen.descriptor.clone())
}

/// CodeInfo::GetStackMapForNativePcOffset (runtime/stack_map.cc): the first Default or OSR
/// stack map at `pc` (catch stack maps are stored at the end and never match a call's pc);
/// its dex pc.
fn stack_map_for_native_pc_offset(maps: &[PcMap], pc: u32) -> Option<u32> {
    // std::partition_point over the maps whose pc is below and that are not catch maps.
    let start = maps.partition_point(|m| m.native_pc < pc && m.kind != KIND_CATCH);
    maps[start..]
        .iter()
        .take_while(|m| m.native_pc == pc)
        .find(|m| m.kind == KIND_DEFAULT || m.kind == KIND_OSR)
        .map(|m| m.dex_pc)
}

impl emu::Machine {
    /// Loads `c`'s `code` with an invoke dispatcher: the code's calls through the invoke
    /// trampoline are resolved through `linker` and continue in the callee's compiled code
    /// (`Dispatcher`).
    pub fn linked(
        c: &Compiled,
        code: &IsaCode,
        linker: Rc<Linker>,
    ) -> Result<emu::Machine, EmuError> {
        let isa = Isa::from_name(&code.isa)
            .ok_or_else(|| EmuError::Args(format!("{} is not emulated", code.isa)))?;
        let d = Dispatcher::new(isa, c, code, linker, emu::layout(isa));
        emu::Machine::build(code, &c.shorty, c.is_static, Some(Rc::new(RefCell::new(d))))
    }
}

impl crate::Runner {
    /// A runner whose arm64 and thumb2 machines dispatch the code's invokes through `linker`
    /// (which must compile traced code iff `c` is traced). x86_64 code that invokes is not run
    /// (no native dispatch yet): `run` says so.
    pub fn linked(c: &Compiled, linker: &Rc<Linker>) -> Result<crate::Runner, String> {
        if linker.traced() != c.traced {
            return Err(format!(
                "{}: the linker compiles {} callees for {} code",
                c.method,
                if linker.traced() {
                    "traced"
                } else {
                    "untraced"
                },
                if c.traced { "traced" } else { "untraced" }
            ));
        }
        let mut r = crate::Runner::with_machines(c, |code| {
            emu::Machine::linked(c, code, Rc::clone(linker))
        })?;
        r.linker = Some(Rc::clone(linker));
        Ok(r)
    }

    /// Lays out `objects` in every emulated machine's heap before each following call (the
    /// runner must be `linked`): object k is at `heap::object_address(k)`, the receiver an
    /// instance method's caller passes as its first argument (`Arg { ty: b'L', .. }`).
    pub fn set_objects(&mut self, objects: &[heap::ObjectSpec]) -> Result<(), String> {
        for m in self.machines.iter_mut().flatten() {
            m.set_objects(objects).map_err(|e| e.to_string())?;
        }
        self.objects = objects.to_vec();
        Ok(())
    }

    /// The emulated machine of `c.isas[i]`, if any (to set its ring up, or read what it loaded).
    pub fn machine(&mut self, i: usize) -> Option<&mut emu::Machine> {
        self.machines[i].as_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(native_pc: u32, dex_pc: u32, kind: i32) -> PcMap {
        PcMap {
            native_pc,
            dex_pc,
            kind,
        }
    }

    #[test]
    fn stack_map_lookup_follows_code_info() {
        // The frame entry's stack overflow check (dex pc 0), two calls, a catch map at the end
        // with a pc a call shares (skipped), a debug map at a call's pc (skipped).
        let maps = [
            map(4, 0, KIND_DEFAULT),
            map(40, 3, KIND_DEBUG),
            map(40, 3, KIND_DEFAULT),
            map(88, 9, KIND_DEFAULT),
            map(40, 12, KIND_CATCH),
        ];
        assert_eq!(stack_map_for_native_pc_offset(&maps, 40), Some(3));
        assert_eq!(stack_map_for_native_pc_offset(&maps, 88), Some(9));
        assert_eq!(stack_map_for_native_pc_offset(&maps, 4), Some(0));
        assert_eq!(stack_map_for_native_pc_offset(&maps, 44), None);
        assert_eq!(
            stack_map_for_native_pc_offset(&[map(8, 1, KIND_CATCH)], 8),
            None
        );
    }

    const KIND_DEBUG: i32 = 2;
}
