//! Host proof of the x86_64 and x86 trace points.
//!
//! The bytes come from ART's own assemblers (`scripts/hotpath-x86-gen` runs
//! `cpp/gen_blobs.cc` in the trixie build root; the test reads its output from
//! `$HUBBLE_X86_BLOBS`). `cpp/x86_harness.c`, compiled here for x86_64 (`cc`) and as a static
//! i386 binary (`i686-linux-gnu-gcc`), calls them with `%gs` / `%fs` at a `Thread` image and
//! reports the ring and the block after every trace point.
#![deny(unsafe_op_in_unsafe_fn)]

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub mod pool;

/// Which trace point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Entry, any pointer width.
    Entry,
    /// Entry, every entering pointer below 4 GiB (x86_64 JIT code).
    EntryNarrow,
    /// Exit.
    Exit,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Entry => "entry",
            Kind::EntryNarrow => "entry-narrow",
            Kind::Exit => "exit",
        }
    }
}

/// The instruction set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Isa {
    /// 64-bit, `%gs`.
    X86_64,
    /// 32-bit, `%fs`.
    X86,
}

impl Isa {
    /// Name in the blob file.
    pub fn name(self) -> &'static str {
        match self {
            Isa::X86_64 => "x86_64",
            Isa::X86 => "x86",
        }
    }
    /// General register names in encoding order.
    pub fn regs(self) -> &'static [&'static str] {
        match self {
            Isa::X86_64 => &[
                "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11",
                "r12", "r13", "r14", "r15",
            ],
            Isa::X86 => &["eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"],
        }
    }
    /// Index of a register name.
    pub fn reg(self, name: &str) -> usize {
        self.regs()
            .iter()
            .position(|r| *r == name)
            .unwrap_or_else(|| panic!("no register {name} on {self:?}"))
    }
}

/// How the counter is read (`art::hubble::X86Counter`).
pub const COUNTERS: [&str; 3] = ["rdtsc", "lfence-rdtsc", "rdtscp"];

/// One emitted trace point: `[inline half][RET][out-of-line half]`.
#[derive(Clone, Debug)]
pub struct Blob {
    /// The bytes.
    pub bytes: Vec<u8>,
    /// Offset of the RET (= size of the inline half).
    pub terminator: usize,
    /// Offset of the out-of-line half.
    pub out_of_line: usize,
}

/// Key of a blob: isa, kind, counter, cursor register, method register.
pub type Key = (Isa, Kind, String, String, String);

/// Everything the generator printed.
#[derive(Debug)]
pub struct Blobs {
    /// Offsets of cursor, limit, stop, begin, end for pointer size 8 and 4.
    pub offsets: HashMap<u32, [i32; 5]>,
    /// `Thread::TidOffset` for pointer size 8 (the pool's block-end function reads it).
    pub tid: Option<i32>,
    /// The same for pointer size 4 (x86's block-end function).
    pub tid32: Option<i32>,
    /// The trace points.
    pub blobs: HashMap<Key, Blob>,
    /// Benchmark methods by counter.
    pub methods: HashMap<String, Vec<u8>>,
    /// The file read.
    pub path: PathBuf,
}

fn hex(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd hex string");
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex"))
        .collect()
}

impl Blobs {
    /// Reads `$HUBBLE_X86_BLOBS` (the path `scripts/hotpath-x86-gen` prints).
    pub fn load() -> Blobs {
        let path = std::env::var_os("HUBBLE_X86_BLOBS").map(PathBuf::from).expect(
            "HUBBLE_X86_BLOBS is not set: run HUBBLE_X86_BLOBS=\"$(scripts/hotpath-x86-gen)\" cargo test",
        );
        Blobs::read(&path)
    }

    /// Parses a blob file.
    pub fn read(path: &Path) -> Blobs {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut out = Blobs {
            offsets: HashMap::new(),
            tid: None,
            tid32: None,
            blobs: HashMap::new(),
            methods: HashMap::new(),
            path: path.to_path_buf(),
        };
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f.first() {
                Some(&"offsets") => {
                    let v: Vec<i32> = f[2..7].iter().map(|x| x.parse().unwrap()).collect();
                    out.offsets
                        .insert(f[1].parse().unwrap(), [v[0], v[1], v[2], v[3], v[4]]);
                }
                Some(&"tid") if f.len() == 3 && f[1] == "8" => {
                    out.tid = Some(f[2].parse().unwrap());
                }
                Some(&"tid") if f.len() == 3 && f[1] == "4" => {
                    out.tid32 = Some(f[2].parse().unwrap());
                }
                Some(&"blob") => {
                    let isa = match f[1] {
                        "x86_64" => Isa::X86_64,
                        "x86" => Isa::X86,
                        other => panic!("{}: bad isa {other}", path.display()),
                    };
                    let kind = match f[2] {
                        "entry" => Kind::Entry,
                        "entry-narrow" => Kind::EntryNarrow,
                        "exit" => Kind::Exit,
                        other => panic!("{}: bad kind {other}", path.display()),
                    };
                    out.blobs.insert(
                        (isa, kind, f[3].into(), f[4].into(), f[5].into()),
                        Blob {
                            terminator: f[6].parse().unwrap(),
                            out_of_line: f[7].parse().unwrap(),
                            bytes: hex(f[8]),
                        },
                    );
                }
                Some(&"method") => {
                    out.methods.insert(f[2].to_string(), hex(f[3]));
                }
                _ => panic!("{}: unexpected line {line:?}", path.display()),
            }
        }
        assert!(!out.blobs.is_empty(), "{}: no blobs", path.display());
        out
    }

    /// One blob.
    pub fn get(&self, isa: Isa, kind: Kind, counter: &str, cursor: &str, method: &str) -> &Blob {
        self.blobs
            .get(&(isa, kind, counter.into(), cursor.into(), method.into()))
            .unwrap_or_else(|| {
                panic!(
                    "{}: no blob {} {} {counter} {cursor} {method}",
                    self.path.display(),
                    isa.name(),
                    kind.name()
                )
            })
    }
}

/// Builds `cpp/x86_harness.c` for `isa` into `dir` (once per call site; cheap).
pub fn build_harness(isa: Isa, dir: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("cpp/x86_harness.c");
    let (cc, flags, name): (&str, &[&str], &str) = match isa {
        Isa::X86_64 => ("cc", &[], "x86-harness-64"),
        Isa::X86 => (
            "i686-linux-gnu-gcc",
            &["-static", "-no-pie", "-DHUBBLE_X86"],
            "x86-harness-32",
        ),
    };
    let exe = dir.join(name);
    let status = Command::new(cc)
        .args(["-O1", "-Wall", "-Wextra", "-Werror"])
        .args(flags)
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cc} (scripts/deps/hotpath-x86.apt): {e}"));
    assert!(
        status.success(),
        "building {} with {cc} failed",
        src.display()
    );
    exe
}

/// What the harness reported after one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    /// Instructions executed in the blob (RET included; 0 when not single-stepped).
    pub executed: u64,
    /// Counter reads (single-stepped only).
    pub reads: u64,
    /// Mask of general registers that changed (rsp/esp excluded).
    pub changed: u32,
    /// Whether the out-of-line half ran (single-stepped only).
    pub out_of_line: bool,
    /// Cursor, limit, stop as offsets from the ring (`None` = 0; stop 1 = requested).
    pub cursor: Option<u64>,
    /// Limit.
    pub limit: Option<u64>,
    /// Stop word (0, 1, or the published end as an offset).
    pub stop: i64,
    /// LFENCE;RDTSC;LFENCE before and after the call.
    pub clock: (u64, u64),
    /// The ring's slots.
    pub ring: Vec<u64>,
}

/// Runs `script` through the harness and parses one report per reporting command.
pub fn run(exe: &Path, script: &str) -> Vec<Report> {
    let mut child = Command::new(exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{} failed ({}): {}",
        exe.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let mut reports = Vec::new();
    while let Some(r) = lines.next() {
        reports.push(Report::parse(r, lines.next().expect("ring line")));
    }
    reports
}

impl Report {
    /// One report: its `r` line and its `ring` line.
    pub fn parse(r: &str, ring_line: &str) -> Report {
        let opt = |v: i64| if v < 0 { None } else { Some(v as u64) };
        let f: Vec<&str> = r.split_whitespace().collect();
        assert_eq!(f.first(), Some(&"r"), "harness output: {r}");
        let ring: Vec<u64> = ring_line
            .split_whitespace()
            .skip(1)
            .map(|s| u64::from_str_radix(s, 16).unwrap())
            .collect();
        Report {
            executed: f[1].parse().unwrap(),
            reads: f[2].parse().unwrap(),
            changed: f[3].parse().unwrap(),
            out_of_line: f[4] == "1",
            cursor: opt(f[5].parse().unwrap()),
            limit: opt(f[6].parse().unwrap()),
            stop: f[7].parse().unwrap(),
            clock: (f[8].parse().unwrap(), f[9].parse().unwrap()),
            ring,
        }
    }
}

/// `blob` command text.
pub fn blob_command(which: &str, blob: &Blob) -> String {
    let hex: String = blob.bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("blob {which} {} {hex}\n", blob.out_of_line)
}

pub use hubble_testkit::Rng;
