//! Compiled JNI stubs, executed, so that their tracing is proven by running them, not by review.
//! ART's JNI compiler (`ArtQuickJniCompileMethod`, jni_compiler.cc, with patch
//! 0025's trace points) makes the stub of a native method of a real dex file; the stub runs
//! against a `Thread` image, a `JNIEnvExt` image and an `ArtMethod` whose entry point from
//! JNI is a real native function: `tests/compiler-corpus/jni/natives.c`, compiled by clang for
//! the ISA's native ABI (AAPCS64; AAPCS with soft-float arguments, as armeabi-v7a; SysV x86_64).
//!
//! What the stub's fast paths read is laid out with the offsets ART's own accessors give
//! (`IsaCode::jni_layout`): the thread is Runnable with no flags (so the transitions to Native
//! and back take their inline CAS paths, as on a device when no GC or checkpoint is pending),
//! `held_mutexes[kMutatorLock]` holds the mutator lock, the JNIEnv has its local reference
//! cookie and segment state. After the call the harness checks what the stub must have left:
//! Runnable again, the mutator lock held, the local reference frame popped, the top quick frame
//! at the stub's frame, the managed callee-saves restored.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::rc::Rc;

use unicorn_engine::{RegisterARM, RegisterARM64, RegisterX86};

use crate::abi::Arg;
use crate::cpu::{uc, EmuError, Isa};
use crate::emu::{Machine, Run};
use crate::native::StubLeft;
use crate::output::{Compiled, IsaCode};

#[derive(Debug, thiserror::Error)]
pub enum JniError {
    #[error("{path}: {what}")]
    Native { path: String, what: String },
    #[error("{0}")]
    Layout(String),
    #[error(transparent)]
    Emu(#[from] EmuError),
}

/// A native library's code: the `.text` of one relocatable object and its function symbols.
#[derive(Clone, Debug)]
pub struct NativeCode {
    pub text: Vec<u8>,
    /// Function name → offset in `text` (thumb functions with bit 0 set, as ELF gives them).
    pub symbols: HashMap<String, u64>,
}

/// clang's target flags for the native ABI a JNI stub of `isa` calls.
fn clang_target(isa: &str) -> Option<&'static [&'static str]> {
    Some(match isa {
        "arm64" => &["--target=aarch64-linux-gnu"],
        // Android's armeabi-v7a: Thumb-2, floating point arguments in core registers (the
        // stub converts from ART's hard-float managed convention, jni_compiler.cc 4.6).
        "thumb2" => &[
            "--target=armv7a-linux-gnueabi",
            "-mthumb",
            "-mfloat-abi=softfp",
            "-mfpu=vfpv3-d16",
        ],
        "x86_64" => &["--target=x86_64-linux-gnu"],
        "x86" => &["--target=i686-linux-gnu"],
        _ => return None,
    })
}

/// Compiles `source` for `isa`'s native ABI into `out_dir` and reads its code.
pub fn compile_natives(source: &Path, isa: &str, out_dir: &Path) -> Result<NativeCode, JniError> {
    let bad = |what: String| JniError::Native {
        path: source.display().to_string(),
        what,
    };
    let target = clang_target(isa).ok_or_else(|| bad(format!("no native ABI for ISA {isa}")))?;
    let object = out_dir.join(format!("natives-{isa}.o"));
    let out = Command::new("clang")
        .args(target)
        .args([
            "-O2",
            "-ffreestanding",
            "-fno-pic",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-fno-unwind-tables",
            "-nostdlib",
            "-c",
        ])
        .arg(source)
        .arg("-o")
        .arg(&object)
        .output()
        .map_err(|e| bad(format!("cannot run clang (scripts/deps/rust.apt): {e}")))?;
    if !out.status.success() {
        return Err(bad(format!(
            "clang failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    let bytes = std::fs::read(&object).map_err(|e| bad(format!("{}: {e}", object.display())))?;
    read_object(&bytes).map_err(|what| JniError::Native {
        path: object.display().to_string(),
        what,
    })
}

fn le(b: &[u8], at: usize, n: usize) -> Result<u64, String> {
    let s = b
        .get(at..at + n)
        .ok_or_else(|| format!("truncated ELF (offset {at})"))?;
    let mut v = [0u8; 8];
    v[..n].copy_from_slice(s);
    Ok(u64::from_le_bytes(v))
}

/// The `.text` and its function symbols of a little-endian ELF relocatable object; refuses an
/// object whose `.text` has relocations (the harness copies the bytes as they are).
pub fn read_object(b: &[u8]) -> Result<NativeCode, String> {
    if b.get(..4) != Some(b"\x7fELF") || b.get(5) != Some(&1) {
        return Err("not a little-endian ELF object".into());
    }
    let wide = match b[4] {
        1 => false,
        2 => true,
        c => return Err(format!("unknown ELF class {c}")),
    };
    let w = if wide { 8 } else { 4 };
    let (shoff, shentsize, shnum) = if wide {
        (le(b, 0x28, 8)?, le(b, 0x3a, 2)?, le(b, 0x3c, 2)?)
    } else {
        (le(b, 0x20, 4)?, le(b, 0x2e, 2)?, le(b, 0x30, 2)?)
    };
    let shstrndx = le(b, if wide { 0x3e } else { 0x32 }, 2)?;
    // Section header: name, type, flags, addr, offset, size, link, info (ELF32/64 widths).
    let section = |i: u64| -> Result<(u64, u64, u64, u64, u64, u64), String> {
        let at = (shoff + i * shentsize) as usize;
        let name = le(b, at, 4)?;
        let ty = le(b, at + 4, 4)?;
        let off = le(b, at + 8 + 2 * w, w)?;
        let size = le(b, at + 8 + 3 * w, w)?;
        let link = le(b, at + 8 + 4 * w, 4)?;
        let info = le(b, at + 12 + 4 * w, 4)?;
        Ok((name, ty, off, size, link, info))
    };
    let (_, _, stroff, _, _, _) = section(shstrndx)?;
    let name_at = |off: u64| -> String {
        let s = &b[(off as usize).min(b.len())..];
        let end = s.iter().position(|&c| c == 0).unwrap_or(0);
        String::from_utf8_lossy(&s[..end]).into_owned()
    };
    let mut text = None;
    let mut symtab = None;
    for i in 0..shnum {
        let (name, ty, off, size, link, _) = section(i)?;
        match (name_at(stroff + name).as_str(), ty) {
            (".text", 1) => text = Some((i, off, size)),
            (_, 2) => symtab = Some((off, size, link)),
            _ => {}
        }
    }
    let (text_index, text_off, text_size) = text.ok_or("no .text section")?;
    for i in 0..shnum {
        let (name, ty, _, _, _, info) = section(i)?;
        if (ty == 4 || ty == 9) && info == text_index {
            return Err(format!(
                "{} relocates .text: the native code must be self-contained",
                name_at(stroff + name)
            ));
        }
    }
    let (sym_off, sym_size, strtab) = symtab.ok_or("no symbol table")?;
    let (_, _, str_off, _, _, _) = section(strtab)?;
    let entsize = if wide { 24 } else { 16 };
    let mut symbols = HashMap::new();
    for k in 0..sym_size / entsize {
        let at = (sym_off + k * entsize) as usize;
        let name = le(b, at, 4)?;
        let (value, info, shndx) = if wide {
            (le(b, at + 8, 8)?, le(b, at + 4, 1)?, le(b, at + 6, 2)?)
        } else {
            (le(b, at + 4, 4)?, le(b, at + 12, 1)?, le(b, at + 14, 2)?)
        };
        // STT_FUNC in .text.
        if info & 0xf == 2 && shndx == text_index {
            symbols.insert(name_at(str_off + name), value);
        }
    }
    let text = b
        .get(text_off as usize..(text_off + text_size) as usize)
        .ok_or("truncated .text")?
        .to_vec();
    Ok(NativeCode { text, symbols })
}

/// The offsets and values a stub reads (cpp/compile_method.cc `PrintJniLayout`).
#[derive(Clone, Debug)]
pub struct JniLayout(HashMap<String, u64>);

impl JniLayout {
    pub fn of(code: &IsaCode) -> Result<JniLayout, JniError> {
        if code.jni_layout.is_empty() {
            return Err(JniError::Layout(format!(
                "the {} section is not a JNI stub's (no jni_layout lines)",
                code.isa
            )));
        }
        Ok(JniLayout(code.jni_layout.iter().cloned().collect()))
    }

    pub fn get(&self, name: &str) -> Result<u64, JniError> {
        self.0
            .get(name)
            .copied()
            .ok_or_else(|| JniError::Layout(format!("no jni_layout {name}")))
    }
}

/// What the stub left behind, read after the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct After {
    pub left: StubLeft,
    /// Managed callee-save registers (and sp) that differ from their value at the call.
    pub callee_saves_changed: Vec<String>,
}

/// One call of a JNI stub.
#[derive(Debug)]
pub struct JniRun {
    pub run: Run,
    pub after: After,
    /// Where the stub's frame must be: sp at the call minus the managed frame size (the top
    /// quick frame the stub publishes, jni_compiler.cc 1.4).
    pub expected_top_quick_frame: u64,
    /// `JniLockObject` / `JniUnlockObject` calls with the object (the locking register).
    pub locks: Vec<(String, u64)>,
    /// Times the native function was entered (None: not observable, natively).
    pub native_calls: Option<u32>,
    /// The JNIEnv* the native function got.
    pub env: u64,
}

/// Values the harness puts in the images (recognizable, below 4 GiB where they are references).
pub const CLASS_REF: u64 = 0x0070_c1a0;
pub const MUTATOR_LOCK: u64 = 0x6d75_7478;
pub const COOKIE: u64 = 0x0000_c00c;
pub const SEGMENT_STATE: u64 = 0x0000_5e65;

/// Where the images go, per ISA (clear of `crate::emu`'s layout).
fn places(isa: Isa) -> (u64, u64) {
    match isa {
        // (JNIEnvExt page, native code)
        Isa::Arm64 => (0x5_0001_0000, 0x2000_0000),
        Isa::Thumb2 | Isa::X86 => (0x5_0000, 0x300_0000),
    }
}

/// A JNI stub loaded into unicorn with its native function.
pub struct JniMachine {
    m: Machine,
    isa: Isa,
    layout: JniLayout,
    env: u64,
    method: u64,
    frame_size: u64,
    locks: Rc<RefCell<Vec<(String, u64)>>>,
    native_calls: Rc<RefCell<u32>>,
}

impl JniMachine {
    /// Loads `code` (a stub of `c`) and `natives`, whose `symbol` becomes the method's entry
    /// point from JNI.
    pub fn new(
        c: &Compiled,
        code: &IsaCode,
        natives: &NativeCode,
        symbol: &str,
    ) -> Result<JniMachine, JniError> {
        if c.jni.is_none() {
            return Err(JniError::Layout(format!(
                "{} is not a native method",
                c.method
            )));
        }
        let layout = JniLayout::of(code)?;
        // `this` is the first reference argument of the managed convention.
        let shorty = if c.is_static {
            c.shorty.clone()
        } else {
            format!("{}L{}", &c.shorty[..1], &c.shorty[1..])
        };
        let mut m = Machine::new(code, &shorty, true)?;
        let isa = m.isa();
        let (env, native_base) = places(isa);
        let ptr = if isa == Isa::Arm64 { 8 } else { 4 };
        let entry_off = *natives
            .symbols
            .get(symbol)
            .ok_or_else(|| JniError::Layout(format!("no native function {symbol}")))?;
        let method = crate::method_value(&code.isa);
        let (thread, traps) = (m.layout().thread, m.layout().traps);
        let u = m.unicorn();
        let size = (natives.text.len() as u64 + 0xfff) & !0xfff;
        uc(u.mem_map(
            native_base,
            size,
            unicorn_engine::Prot::READ | unicorn_engine::Prot::EXEC,
        ))?;
        uc(u.mem_write(native_base, &natives.text))?;
        uc(u.mem_map(
            env,
            0x1000,
            unicorn_engine::Prot::READ | unicorn_engine::Prot::WRITE,
        ))?;
        let entry = native_base + (entry_off & !1) + u64::from(isa == Isa::Thumb2);
        // The ArtMethod: declaring_class_ (a compressed reference) at 0, the entry point from
        // JNI (ArtMethod::data_) where EntryPointFromJniOffset says.
        uc(u.mem_write(method, &(CLASS_REF as u32).to_le_bytes()))?;
        uc(u.mem_write(
            method + layout.get("method_jni_entrypoint")?,
            &entry.to_le_bytes()[..ptr],
        ))?;
        uc(u.mem_write(env + layout.get("env_self")?, &thread.to_le_bytes()[..ptr]))?;
        uc(u.mem_write(thread + layout.get("jni_env")?, &env.to_le_bytes()[..ptr]))?;
        uc(u.mem_write(
            thread + layout.get("mutator_lock")?,
            &MUTATOR_LOCK.to_le_bytes()[..ptr],
        ))?;

        // The native function's entries, and the lock entrypoints' objects (jni_compiler.cc
        // 2.1/7.2: the object in the locking argument register, x15 / r4 / rbx).
        let native_calls = Rc::new(RefCell::new(0u32));
        let calls = Rc::clone(&native_calls);
        let entry_addr = entry & !1;
        uc(u.add_code_hook(entry_addr, entry_addr, move |_, _, _| {
            *calls.borrow_mut() += 1;
        }))?;
        let locks = Rc::new(RefCell::new(Vec::new()));
        for (k, (name, _)) in code.entrypoints.iter().enumerate() {
            if name != "JniLockObject" && name != "JniUnlockObject" {
                continue;
            }
            let at = traps + 4 * k as u64;
            let (name, locks) = (name.clone(), Rc::clone(&locks));
            uc(u.add_code_hook(at, at, move |u, _, _| {
                let reg = match isa {
                    Isa::Arm64 => RegisterARM64::X15 as i32,
                    Isa::Thumb2 => RegisterARM::R4 as i32,
                    // X86JniCallingConvention::LockingArgumentRegister: EBP.
                    Isa::X86 => RegisterX86::EBP as i32,
                };
                let object = u.reg_read(reg).unwrap_or(0);
                locks.borrow_mut().push((name.clone(), object));
            }))?;
        }
        Ok(JniMachine {
            m,
            isa,
            layout,
            env,
            method,
            frame_size: u64::from(code.frame_size),
            locks,
            native_calls,
        })
    }

    /// The `ArtMethod*` the stub is called with (its `jclass` for a static method).
    pub fn method(&self) -> u64 {
        self.method
    }

    /// The JNIEnv* the native function gets.
    pub fn env(&self) -> u64 {
        self.env
    }

    /// Calls the stub once (for an instance method `args[0]` is `this`).
    pub fn call(&mut self, args: &[Arg]) -> Result<JniRun, JniError> {
        let (isa, l) = (self.isa, &self.layout);
        let ptr = if isa == Isa::Arm64 { 8usize } else { 4 };
        let thread = self.m.layout().thread;
        let env = self.env;
        let (held, exc, tqf) = (
            l.get("held_mutator_lock")?,
            l.get("exception")?,
            l.get("top_quick_frame")?,
        );
        let (cookie, segment) = (l.get("env_cookie")?, l.get("env_segment_state")?);
        let callee_saves = callee_saves(isa);
        let u = self.m.unicorn();
        // Runnable, no flags, the mutator lock held, nothing pending, no managed frame yet.
        uc(u.mem_write(thread, &0u32.to_le_bytes()))?;
        uc(u.mem_write(thread + held, &MUTATOR_LOCK.to_le_bytes()[..ptr]))?;
        uc(u.mem_write(thread + exc, &[0u8; 8][..ptr]))?;
        uc(u.mem_write(thread + tqf, &[0u8; 8][..ptr]))?;
        uc(u.mem_write(env + cookie, &(COOKIE as u32).to_le_bytes()))?;
        uc(u.mem_write(env + segment, &(SEGMENT_STATE as u32).to_le_bytes()))?;
        // Recognizable FP callee-saves (Machine::call sets the core registers).
        for (k, &d) in callee_saves.1.iter().enumerate() {
            uc(u.reg_write(d, 0x0f0f_0000_0000_0000 + k as u64))?;
        }
        self.locks.borrow_mut().clear();
        *self.native_calls.borrow_mut() = 0;
        let before: Vec<u64> = {
            let u = self.m.unicorn();
            callee_saves
                .1
                .iter()
                .map(|&r| u.reg_read(r).unwrap_or(0))
                .collect()
        };
        let run = self.m.call(args, self.method)?;
        let sp_at_call = self.m.stack_top();
        let u = self.m.unicorn();
        let read = |u: &mut unicorn_engine::Unicorn<'static, ()>, at: u64, n: usize| {
            uc(u.mem_read_as_vec(at, n)).map(|v| {
                let mut b = [0u8; 8];
                b[..n].copy_from_slice(&v);
                u64::from_le_bytes(b)
            })
        };
        let mut changed = Vec::new();
        // Machine::call gave every core register 0x0bad_0000 + its number.
        for &(name, reg, number) in callee_saves.0 {
            let v = u.reg_read(reg).unwrap_or(0);
            let expected = if number == u8::MAX {
                sp_at_call
            } else if number == 19 && isa == Isa::Arm64 || number == 9 && isa == Isa::Thumb2 {
                thread
            } else if number == 20 && isa == Isa::Arm64 || number == 8 && isa == Isa::Thumb2 {
                0 // The marking register, which Machine::call clears (no GC marking).
            } else {
                0x0bad_0000 + u64::from(number)
            };
            if v != expected {
                changed.push(format!("{name} {expected:#x} -> {v:#x}"));
            }
        }
        for (k, &d) in callee_saves.1.iter().enumerate() {
            let v = u.reg_read(d).unwrap_or(0);
            if v != before[k] {
                changed.push(format!("fp callee-save #{k} {:#x} -> {v:#x}", before[k]));
            }
        }
        let after = After {
            left: StubLeft {
                state: read(u, thread, 4)?,
                held_mutator_lock: read(u, thread + held, ptr)?,
                top_quick_frame: read(u, thread + tqf, ptr)?,
                exception: read(u, thread + exc, ptr)?,
                cookie: read(u, env + cookie, 4)?,
                segment_state: read(u, env + segment, 4)?,
            },
            callee_saves_changed: changed,
        };
        Ok(JniRun {
            run,
            after,
            expected_top_quick_frame: sp_at_call - self.frame_size,
            locks: self.locks.borrow().clone(),
            native_calls: Some(*self.native_calls.borrow()),
            env: self.env,
        })
    }
}

/// Calls the x86_64 stub `code` of `c` once, natively (`crate::native::jni_call`), around
/// `natives`' `symbol`; the same checks as the emulated ISAs' except the instruction-level
/// ones (the trace points' registers: proving/hotpath-x86 checks those with the stubs'
/// register assignments).
pub fn run_x86_64(
    c: &Compiled,
    code: &IsaCode,
    natives: &NativeCode,
    symbol: &str,
    args: &[Arg],
) -> Result<JniRun, JniError> {
    let l = JniLayout::of(code)?;
    let entry = *natives
        .symbols
        .get(symbol)
        .ok_or_else(|| JniError::Layout(format!("no native function {symbol}")))?;
    let entrypoint = |name: &str| {
        code.entrypoints
            .iter()
            .find(|e| e.0 == name)
            .map(|e| u64::from(e.1))
            .ok_or_else(|| JniError::Layout(format!("no entrypoint p{name}")))
    };
    let image = crate::native::JniImage {
        natives: &natives.text,
        entry,
        method_jni_entrypoint: l.get("method_jni_entrypoint")?,
        env_self: l.get("env_self")?,
        env_cookie: l.get("env_cookie")?,
        env_segment_state: l.get("env_segment_state")?,
        jni_env: l.get("jni_env")?,
        mutator_lock: l.get("mutator_lock")?,
        held_mutator_lock: l.get("held_mutator_lock")?,
        exception: l.get("exception")?,
        top_quick_frame: l.get("top_quick_frame")?,
        class_ref: CLASS_REF as u32,
        mutator_lock_value: MUTATOR_LOCK,
        cookie_value: COOKIE as u32,
        segment_state_value: SEGMENT_STATE as u32,
        lock_entrypoint: entrypoint("JniLockObject")?,
        unlock_entrypoint: entrypoint("JniUnlockObject")?,
    };
    let method = crate::method_value("x86_64");
    let mut placed = args.to_vec();
    if !c.is_static && !placed.first().is_some_and(|a| a.ty == b'L') {
        return Err(JniError::Layout(
            "an instance native takes `this` first".into(),
        ));
    }
    for a in &mut placed {
        if a.ty == b'L' {
            // A compressed reference: 32 bits, as the managed convention passes it.
            a.bits &= 0xffff_ffff;
        }
    }
    let r = crate::native::jni_call(&code.code, &placed, method, &image)
        .map_err(|e| JniError::Layout(format!("x86_64: {e}")))?;
    let j = r.jni.expect("jni_call reports the stub's images");
    let result = r.result(&c.shorty);
    let records = crate::decode_ring(&r.ring, r.cursor, hubble_format::Mode::Bits64)
        .map_err(|e| JniError::Layout(format!("x86_64 ring: {e}")))?;
    let changed = (0..4)
        .filter(|k| r.callee_saves_changed & (1 << k) != 0)
        .map(|k| format!("r{}", 12 + k))
        .collect();
    let mut locks = Vec::new();
    for _ in 0..j.lock_calls {
        locks.push(("JniLockObject".to_string(), j.locked));
    }
    for _ in 0..j.unlock_calls {
        locks.push(("JniUnlockObject".to_string(), j.unlocked));
    }
    Ok(JniRun {
        run: Run {
            result,
            executed: 0,
            trace_points_run: 0,
            records,
            violations: Vec::new(),
            exception: None,
            entrypoints_called: Vec::new(),
            calls: vec![(true, method), (false, 0)],
            out_of_line_run: 0,
            caught: Vec::new(),
            pool_blocks: 0,
            objects: Vec::new(),
        },
        after: After {
            left: j.left,
            callee_saves_changed: changed,
        },
        expected_top_quick_frame: r.rsp_at_call - u64::from(code.frame_size),
        locks,
        // Natively the harness cannot count entries (the result still folds in the thread
        // state the native saw).
        native_calls: None,
        env: j.env,
    })
}

/// The managed convention's callee-saves (what a stub must give back as it got them), with
/// their number in `Machine::call`'s junk pattern (u8::MAX: sp), and the FP ones (recognizable
/// values written before the call): arm64 x19
/// (the thread register), x20-x29, d8-d15 (arch/arm64/callee_save_frame_arm64.h); thumb2 r5-r8,
/// r9 (the thread register), r10, r11, s16-s31 = d8-d15 (arch/arm/callee_save_frame_arm.h).
#[allow(clippy::type_complexity)]
fn callee_saves(isa: Isa) -> (&'static [(&'static str, i32, u8)], Vec<i32>) {
    use RegisterARM as A;
    use RegisterARM64 as X;
    match isa {
        Isa::Arm64 => (
            &[
                ("x19", X::X19 as i32, 19),
                ("x20", X::X20 as i32, 20),
                ("x21", X::X21 as i32, 21),
                ("x22", X::X22 as i32, 22),
                ("x23", X::X23 as i32, 23),
                ("x24", X::X24 as i32, 24),
                ("x25", X::X25 as i32, 25),
                ("x26", X::X26 as i32, 26),
                ("x27", X::X27 as i32, 27),
                ("x28", X::X28 as i32, 28),
                ("x29", X::X29 as i32, 29),
                ("sp", X::SP as i32, u8::MAX),
            ],
            (8..16).map(|d| X::D0 as i32 + d).collect(),
        ),
        // x86: EBP, ESI, EDI (arch/x86/callee_save_frame_x86.h); no FP callee-saves.
        Isa::X86 => (
            &[
                ("ebp", RegisterX86::EBP as i32, 5),
                ("esi", RegisterX86::ESI as i32, 6),
                ("edi", RegisterX86::EDI as i32, 7),
                ("esp", RegisterX86::ESP as i32, u8::MAX),
            ],
            Vec::new(),
        ),
        Isa::Thumb2 => (
            &[
                ("r5", A::R5 as i32, 5),
                ("r6", A::R6 as i32, 6),
                ("r7", A::R7 as i32, 7),
                ("r8", A::R8 as i32, 8),
                ("r9", A::R9 as i32, 9),
                ("r10", A::R10 as i32, 10),
                ("r11", A::R11 as i32, 11),
                ("sp", A::SP as i32, u8::MAX),
            ],
            (8..16).map(|d| A::D0 as i32 + d).collect(),
        ),
    }
}
