//! The compiler harness: ART's patched optimizing compiler compiles methods of real
//! .dex files (`hubble-compile-method`, cpp/compile_method.cc, built by `scripts/art-build
//! --compiler` in the trixie build root), and this crate executes what it emits: arm64, thumb2
//! and x86 in unicorn against a `Thread` image and a ring, x86_64 natively. See
//! docs/compiler-harness.md.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod abi;
mod catch;
mod cpu;
pub mod disasm;
pub mod dispatch;
pub mod emu;
mod entrypoints;
pub mod heap;
pub mod jni;
pub mod link;
pub mod native;
pub mod native_dispatch;
pub mod output;
pub mod pool;
pub mod runtime;
pub mod thread;
mod unwind;

use std::path::{Path, PathBuf};
use std::process::Command;

use hubble_format::{decode, Mode, Record, RingView};

pub use abi::{parse_args, Arg};
pub use output::{Compiled, IsaCode};

/// The `ArtMethod*` the harness passes: above 4 GiB on arm64 (two-slot entries, as AOT code of a
/// 64-bit process must handle), a 32-bit value on thumb2 and x86.
pub fn method_value(isa: &str) -> u64 {
    match isa {
        "arm64" => 0x6_0000_0120,
        "thumb2" | "x86" => 0x3_0120,
        _ => 0x6_0000_0120,
    }
}

/// The corpus (a) calls whose figures docs/compiler-harness.md and docs/performance.md report
/// (examples/figures.rs: code size and emulated instructions; benches/x86_64_overhead.rs:
/// native time per call): one per shape (loop, branches, each return type, switches, a
/// Collatz loop, 30 live values), with arguments that keep each call short, as most are.
pub const FIGURE_CALLS: &[(&str, &str)] = &[
    ("LArith;->sumLoop(II)I", "10,3"),
    ("LArith;->classify(I)I", "1234"),
    ("LArith;->retJ(JJ)J", "123456789,-77"),
    ("LArith;->retD(DD)D", "1.5,2.5"),
    ("LArith;->retV(I)V", "1"),
    ("LArith;->packed(I)I", "2"),
    ("LArith;->sparse(I)I", "7"),
    ("LArith;->steps(I)I", "27"),
    ("LPressure;->live30(II)I", "3,4"),
];

#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    #[error("{0}")]
    NotBuilt(String),
    #[error("hubble-compile-method failed ({status}): {stderr}")]
    Compile { status: String, stderr: String },
    #[error(transparent)]
    Output(#[from] output::OutputError),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Where `scripts/art-build --compiler` left the harness program, and how to run it on this
/// host: through the build root's dynamic loader and libraries (no chroot needed).
#[derive(Clone, Debug)]
pub struct Harness {
    pub program: PathBuf,
    pub buildroot: PathBuf,
    pub libdir: PathBuf,
}

impl Harness {
    /// From $HUBBLE_CACHE (default ~/.cache/hubble-aosp) and $HUBBLE_ART_BUILDROOT.
    pub fn locate() -> Result<Harness, HarnessError> {
        let cache = std::env::var_os("HUBBLE_CACHE")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/hubble-aosp")))
            .ok_or_else(|| HarnessError::NotBuilt("HUBBLE_CACHE and HOME are unset".into()))?;
        let buildroot = std::env::var_os("HUBBLE_ART_BUILDROOT")
            .map(PathBuf::from)
            .unwrap_or_else(|| cache.join("buildroot/trixie"));
        let libdir = cache.join("art/full/debian/out");
        let program = libdir.join("hubble-compile-method");
        if !program.is_file() {
            return Err(HarnessError::NotBuilt(format!(
                "{} does not exist: run scripts/art-build --full and --compiler",
                program.display()
            )));
        }
        if !buildroot.join("lib64/ld-linux-x86-64.so.2").exists() {
            return Err(HarnessError::NotBuilt(format!(
                "no build root at {} (scripts/art-build --root)",
                buildroot.display()
            )));
        }
        Ok(Harness {
            program,
            buildroot,
            libdir,
        })
    }

    /// The same harness built with a mutant arm64 emitter (`clobber` or `noexit`, see
    /// cpp/mutate.sh), for the tests that show the checks fail on a broken trace point.
    pub fn mutant(&self, kind: &str) -> Result<Harness, HarnessError> {
        let program = self
            .libdir
            .join(format!("hubble-compile-method-mutant-{kind}"));
        if !program.is_file() {
            return Err(HarnessError::NotBuilt(format!(
                "{} does not exist: run scripts/art-build --compiler",
                program.display()
            )));
        }
        Ok(Harness {
            program,
            ..self.clone()
        })
    }

    /// Compiles every method of `dex` it can into `out_dir` (`--all`): per method, the
    /// traced and untraced outputs, or the reason it was skipped.
    pub fn compile_all(&self, dex: &Path, out_dir: &Path) -> Result<Vec<AllEntry>, HarnessError> {
        std::fs::create_dir_all(out_dir)?;
        let res = self.command().arg(dex).arg("--all").arg(out_dir).output()?;
        if !res.status.success() {
            return Err(HarnessError::Compile {
                status: res.status.to_string(),
                stderr: String::from_utf8_lossy(&res.stderr).trim().to_string(),
            });
        }
        let index = std::fs::read_to_string(out_dir.join("index.txt"))?;
        let mut entries = Vec::new();
        for line in index.lines() {
            if let Some(rest) = line.strip_prefix("compiled ") {
                let (n, desc) = rest.split_once(' ').unwrap_or((rest, ""));
                entries.push(AllEntry::Compiled {
                    method: desc.to_string(),
                    traced: Box::new(output::read(&out_dir.join(format!("{n}.txt")))?),
                    untraced: Box::new(output::read(&out_dir.join(format!("{n}-u.txt")))?),
                });
            } else if let Some(rest) = line.strip_prefix("skipped ") {
                let (reason, desc) = rest.rsplit_once(": ").unwrap_or((rest, ""));
                entries.push(AllEntry::Skipped {
                    method: desc.to_string(),
                    reason: reason.to_string(),
                });
            }
        }
        Ok(entries)
    }

    fn command(&self) -> Command {
        let root = &self.buildroot;
        let lib = root.join("usr/lib/x86_64-linux-gnu");
        // libbacktrace (which libart needs) finds 7-zip's 7z.so through its RUNPATH, which
        // names the build root's /usr/lib/7zip as seen from inside it.
        let library_path = format!(
            "{}:{}:{}:{}:{}",
            self.libdir.display(),
            lib.display(),
            lib.join("android").display(),
            root.join("lib/x86_64-linux-gnu").display(),
            root.join("usr/lib/7zip").display()
        );
        let mut cmd = Command::new(root.join("lib64/ld-linux-x86-64.so.2"));
        cmd.arg("--library-path")
            .arg(library_path)
            .arg(&self.program);
        cmd
    }

    /// The classes `dex` defines (`--classes`), for the executor's class linker (`heap`).
    pub fn classes(&self, dex: &Path, out: &Path) -> Result<heap::Classes, HarnessError> {
        let res = self.command().arg(dex).arg("--classes").arg(out).output()?;
        if !res.status.success() {
            return Err(HarnessError::Compile {
                status: res.status.to_string(),
                stderr: String::from_utf8_lossy(&res.stderr).trim().to_string(),
            });
        }
        let text = std::fs::read_to_string(out)?;
        let _ = std::fs::remove_file(out);
        heap::Classes::parse(&text).map_err(|what| HarnessError::Compile {
            status: "exit 0".into(),
            stderr: format!("{}: {what}", out.display()),
        })
    }

    /// Compiles `method` of `dex` for `isas` (comma-separated); `traced = false` removes the
    /// trace nodes right after graph building (the untraced control).
    pub fn compile(
        &self,
        dex: &Path,
        method: &str,
        isas: &str,
        traced: bool,
        out: &Path,
    ) -> Result<Compiled, HarnessError> {
        let mut cmd = self.command();
        cmd.arg(dex).arg(method).arg(out).arg("--isa").arg(isas);
        if !traced {
            cmd.arg("--no-trace");
        }
        let res = cmd.output()?;
        if !res.status.success() {
            return Err(HarnessError::Compile {
                status: res.status.to_string(),
                stderr: String::from_utf8_lossy(&res.stderr).trim().to_string(),
            });
        }
        Ok(output::read(out)?)
    }
}

/// One method of `Harness::compile_all`.
#[derive(Clone, Debug)]
pub enum AllEntry {
    Compiled {
        method: String,
        traced: Box<Compiled>,
        untraced: Box<Compiled>,
    },
    Skipped {
        method: String,
        reason: String,
    },
}

/// The outcome of one call on one ISA.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub isa: String,
    /// The return value's bits, narrowed to the return type.
    pub result: u64,
    /// Instructions executed (emulated ISAs only).
    pub executed: Option<u64>,
    pub records: Vec<Record>,
    /// Trace points whose inline part started (emulated ISAs; 0 when run natively).
    pub trace_points_run: usize,
    pub violations: Vec<String>,
    /// The Java exception the code threw through a throw entrypoint, if any.
    pub exception: Option<String>,
    /// Quick entrypoints called (emulated ISAs).
    pub entrypoints_called: Vec<String>,
    /// What the harness itself did and saw (emulated ISAs): `(true, ArtMethod*)` for the call
    /// it made and each invoke it dispatched, `(false, 0)` for each return it saw, in order.
    /// Empty: one call of `method_value(isa)` (see `expected_call_tree`).
    pub calls: Vec<(bool, u64)>,
    /// Exceptions a compiled catch handler caught (emulated ISAs).
    pub caught: Vec<String>,
    /// Many-thread mode (an arm64 machine after `Machine::set_pool`): blocks the stream spans.
    pub pool_blocks: usize,
    /// The objects laid out for the call, after it (`Runner::set_objects`): per object, its
    /// fields' (name, canonical bits).
    pub objects: Vec<Vec<(String, u64)>>,
}

impl Outcome {
    /// What an emulated run of `isa` observed.
    pub fn emulated(isa: &str, r: emu::Run) -> Outcome {
        Outcome {
            isa: isa.to_string(),
            result: r.result,
            executed: Some(r.executed),
            records: r.records,
            trace_points_run: r.trace_points_run,
            violations: r.violations,
            exception: r.exception,
            entrypoints_called: r.entrypoints_called,
            calls: r.calls,
            caught: r.caught,
            pool_blocks: r.pool_blocks,
            objects: r.objects,
        }
    }
}

/// Runs one ISA's code with `args`.
pub fn execute(c: &Compiled, code: &IsaCode, args: &[Arg]) -> Result<Outcome, String> {
    execute_with(c, code, args, None)
}

/// Runs a compiled method's code many times, each emulated ISA loaded once.
pub struct Runner {
    machines: Vec<Option<emu::Machine>>,
    /// A linked runner's linker: x86_64 code that invokes runs natively through it
    /// (`dispatch::native_program`, built once per method and traced-ness).
    linker: Option<std::rc::Rc<dispatch::Linker>>,
    native: std::collections::HashMap<(String, bool), std::rc::Rc<native::NativeDispatch>>,
    /// The objects laid out before each call (`set_objects`), for the native child too.
    objects: Vec<heap::ObjectSpec>,
}

impl Runner {
    pub fn new(c: &Compiled) -> Result<Runner, String> {
        Runner::with_machines(c, |code| emu::Machine::new(code, &c.shorty, c.is_static))
    }

    /// A machine from `make` for each emulated ISA of `c`; none for the native ones.
    pub(crate) fn with_machines(
        c: &Compiled,
        make: impl Fn(&IsaCode) -> Result<emu::Machine, emu::EmuError>,
    ) -> Result<Runner, String> {
        let mut machines = Vec::new();
        for code in &c.isas {
            machines.push(match code.isa.as_str() {
                "arm64" | "thumb2" | "x86" => Some(make(code).map_err(|e| e.to_string())?),
                _ => None,
            });
        }
        Ok(Runner {
            machines,
            linker: None,
            native: std::collections::HashMap::new(),
            objects: Vec::new(),
        })
    }

    /// Runs `c.isas[i]` with `args`.
    pub fn run(&mut self, c: &Compiled, i: usize, args: &[Arg]) -> Result<Outcome, String> {
        let objects = !c.is_static || !c.fields.is_empty();
        if self.machines[i].is_none() && (!c.invokes.is_empty() || objects) {
            let Some(linker) = &self.linker else {
                return Err(format!(
                    "{}: {} invokes other methods: run it with a linker (Runner::linked)",
                    c.method, c.isas[i].isa
                ));
            };
            let key = (c.method.clone(), c.traced);
            let program = match self.native.get(&key) {
                Some(p) => std::rc::Rc::clone(p),
                None => {
                    let p = std::rc::Rc::new(
                        dispatch::native_program(c, linker)
                            .map_err(|e| format!("x86_64 invoke dispatch: {e}"))?,
                    );
                    self.native.insert(key, std::rc::Rc::clone(&p));
                    p
                }
            };
            let classes = if self.objects.is_empty() {
                None
            } else {
                Some(linker.classes()?)
            };
            let image = match &classes {
                Some(classes) => heap::image(classes, &self.objects)?,
                None => Vec::new(),
            };
            let r = native::run_dispatch(&program, &image, args).map_err(|e| e.to_string())?;
            let mut o = native_outcome(c, &c.isas[i], &r)?;
            if let Some(classes) = &classes {
                o.objects = heap::read_image(classes, &self.objects, &r.heap)?;
            }
            // The call the harness made, every dispatch and return the child observed, and the
            // return of the call.
            o.calls = std::iter::once((true, program.methods[0].art_method))
                .chain(r.dispatch_log.iter().map(|&m| (m != 0, m)))
                .chain(std::iter::once((false, 0)))
                .collect();
            return Ok(o);
        }
        execute_with(c, &c.isas[i], args, self.machines[i].as_mut())
    }
}

fn execute_with(
    c: &Compiled,
    code: &IsaCode,
    args: &[Arg],
    machine: Option<&mut emu::Machine>,
) -> Result<Outcome, String> {
    let method = method_value(&code.isa);
    match code.isa.as_str() {
        "arm64" | "thumb2" | "x86" => {
            let r = match machine {
                Some(m) => m.call(args, method),
                None => emu::run(code, &c.shorty, c.is_static, args, method),
            }
            .map_err(|e| e.to_string())?;
            Ok(Outcome::emulated(&code.isa, r))
        }
        "x86_64" => {
            if !c.is_static {
                return Err(
                    "x86_64 runs instance methods through a linked runner (Runner::linked), \
                     whose child lays out the heap"
                        .into(),
                );
            }
            let r = native::run(&code.code, args, method).map_err(|e| e.to_string())?;
            let mut o = native_outcome(c, code, &r)?;
            // The call the harness made and its return (the child dispatched nothing).
            o.calls = vec![(true, method), (false, 0)];
            Ok(o)
        }
        other => Err(format!("no executor for {other}")),
    }
}

/// What a native x86_64 run observed.
fn native_outcome(c: &Compiled, code: &IsaCode, r: &native::NativeRun) -> Result<Outcome, String> {
    Ok(Outcome {
        isa: code.isa.clone(),
        result: r.result(&c.shorty),
        executed: None,
        records: decode_ring(&r.ring, r.cursor, Mode::Bits64).map_err(|e| format!("ring: {e}"))?,
        trace_points_run: 0,
        // ART's managed callee-saves the child can check (r12-r15).
        violations: (0..4)
            .filter(|k| r.callee_saves_changed & (1 << k) != 0)
            .map(|k| format!("x86_64: r{} not preserved across the call", 12 + k))
            .collect(),
        exception: None,
        entrypoints_called: Vec::new(),
        calls: Vec::new(),
        caught: Vec::new(),
        pool_blocks: 0,
        objects: Vec::new(),
    })
}

/// A ring as the tools decode it, without the START record the harness wrote in slot 0.
/// `cursor` is in bytes from the ring's start; 0 means tracing was turned off.
pub fn decode_ring(ring: &[u64], cursor: u64, mode: Mode) -> Result<Vec<Record>, String> {
    if cursor == 0 {
        return Err("the trace point turned tracing off (cursor 0) with no stop requested".into());
    }
    let view = RingView::new(ring, cursor, None).map_err(|e| format!("{e:?}"))?;
    let window = decode(&view, mode).map_err(|e| format!("{e:?}"))?;
    Ok(window
        .records
        .into_iter()
        .filter(|r| !matches!(r, Record::Start { .. }))
        .collect())
}

/// What the harness itself saw: one call of `method`, an entry then an exit, whether it
/// returned or threw (the exit of a frame an exception leaves is written by the runtime's
/// unwinder, patch 0021: `crate::unwind`).
pub fn expected_records(method: u64) -> Vec<(bool, u64)> {
    vec![(true, method), (false, 0)]
}

/// The decoded ring as (is_entry, method) pairs (timestamps are checked for order only).
pub fn ring_events(records: &[Record]) -> Vec<(bool, u64)> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Entry { method, .. } => Some((true, *method)),
            Record::Exit { .. } => Some((false, 0)),
            Record::Start { .. } => None,
            // No trace point of compiled code writes one: as an entry of method 0 (never a
            // method) it fails the comparison with the observed call tree at its place.
            Record::Task { .. } => Some((true, 0)),
        })
        .collect()
}

/// The ring events the call tree the harness itself observed must have produced: each call it
/// made or invoke it dispatched is an entry of that method's `ArtMethod*`, each return it saw
/// an exit, and each frame an exception popped an exit too, in order. A run
/// that recorded no calls is one call of `method_value(isa)`.
pub fn expected_call_tree(o: &Outcome) -> Vec<(bool, u64)> {
    if o.calls.is_empty() {
        expected_records(method_value(&o.isa))
    } else {
        o.calls.clone()
    }
}

/// Checks one traced run: the ring equals the call tree the harness observed, slot
/// for slot; no trace point changed what it must not. Returns the problems found.
pub fn check_traced(o: &Outcome) -> Vec<String> {
    let mut problems = o.violations.clone();
    let want = expected_call_tree(o);
    let got = ring_events(&o.records);
    if got != want {
        let (calls, returns) = (
            want.iter().filter(|e| e.0).count(),
            want.iter().filter(|e| !e.0).count(),
        );
        problems.push(format!(
            "{}: ring {:x?} but the harness made or dispatched {calls} call(s) and saw {returns} \
             return(s) (entry per call, exit per return, unless it threw): {:x?}",
            o.isa, got, want
        ));
    }
    problems
}

/// Formats a return value's bits as the shorty's type.
pub fn format_value(ty: u8, bits: u64) -> String {
    match ty {
        b'Z' => (bits & 1 == 1).to_string(),
        b'B' => (bits as i8).to_string(),
        b'S' => (bits as i16).to_string(),
        b'C' => (bits as u16).to_string(),
        b'I' => (bits as i32).to_string(),
        b'J' => (bits as i64).to_string(),
        b'F' => f32::from_bits(bits as u32).to_string(),
        b'D' => f64::from_bits(bits).to_string(),
        b'V' => "void".into(),
        _ => format!("{bits:#x}"),
    }
}

/// Normalizes a raw return to the type's canonical bits (sub-word ints sign/zero-extended).
pub fn canonical(ty: u8, bits: u64) -> u64 {
    match ty {
        b'Z' => bits & 1,
        b'B' => bits as i8 as i64 as u64,
        b'S' => bits as i16 as i64 as u64,
        b'C' => bits & 0xffff,
        b'I' => bits as i32 as i64 as u64,
        b'F' => bits & 0xffff_ffff,
        _ => bits,
    }
}
