//! Many-thread mode on x86_64 and x86 (`docs/many-threads.md`): the harness built with the
//! runtime's block-end function (`runtime/hubble/pool_x86_64.S` through `cpp/pool_x86_64.S`;
//! `pool_x86.S` through `cpp/pool_x86.S` in the static 32-bit harness), driven one command at a
//! time, because the pool's header holds addresses only the harness knows (where it mapped the
//! pool, where the function is).
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::{Blobs, Isa, Report};

/// Builds `cpp/x86_harness.c` with `-DHUBBLE_POOL` and the block-end function of `isa` into
/// `dir`: x86_64 with `cc` and `cpp/pool_x86_64.S`, x86 as a static i386 binary with
/// `cpp/pool_x86.S`. The function's `THREAD_*_OFFSET`s are the real `Thread`'s, from the blob
/// file (`offsets 8` and `tid 8`, or `offsets 4` and `tid 4`), so the function and the emitted
/// trace points read the same words.
pub fn build_pool_harness(blobs: &Blobs, dir: &Path, isa: Isa) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = root.join("../../art-patches/files");
    let (pointer, tid, compiler, flags, function, name): (u32, _, _, &[&str], _, _) = match isa {
        Isa::X86_64 => (
            8,
            blobs.tid,
            "cc",
            &[],
            "cpp/pool_x86_64.S",
            "x86-harness-64-pool",
        ),
        Isa::X86 => (
            4,
            blobs.tid32,
            "i686-linux-gnu-gcc",
            &["-static", "-no-pie", "-DHUBBLE_X86"],
            "cpp/pool_x86.S",
            "x86-harness-32-pool",
        ),
    };
    let o = blobs.offsets[&pointer];
    let tid = tid.unwrap_or_else(|| {
        panic!(
            "{}: no `tid {pointer}` line (a blob file from before the pool tests: rerun scripts/hotpath-x86-gen)",
            blobs.path.display()
        )
    });
    let fields = [
        ("CURSOR", o[0]),
        ("LIMIT", o[1]),
        ("STOP", o[2]),
        ("BEGIN", o[3]),
        ("END", o[4]),
    ];
    let defines = fields
        .iter()
        .map(|(name, v)| format!("-DTHREAD_HUBBLE_{name}_OFFSET={v}"))
        .chain([format!("-DTHREAD_TID_OFFSET={tid}")]);
    let exe = dir.join(name);
    let status = Command::new(compiler)
        .args(["-O1", "-Wall", "-Wextra", "-Werror", "-DHUBBLE_POOL"])
        .args(flags)
        .args(defines)
        .arg("-I")
        .arg(&files)
        .arg(root.join("cpp/x86_harness.c"))
        .arg(root.join(function))
        .arg("-o")
        .arg(&exe)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(status.success(), "building the {isa:?} pool harness failed");
    exe
}

/// A running pool harness.
pub struct PoolHarness {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    /// Where the pool is mapped.
    pub pool: u64,
    /// `hubble_pool_take`'s address (the header's `P_TAKE`).
    pub take: u64,
    /// The address after the function's last byte.
    pub take_end: u64,
    /// The first Thread image; image `i` is a page further on.
    pub threads: u64,
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s, 16).unwrap_or_else(|e| panic!("harness output {s:?}: {e}"))
}

impl PoolHarness {
    /// Starts `exe` (from [`build_pool_harness`]) with a pool of `slots` words and `threads`
    /// Thread images; `setup` (`init`, `blob`, `regs`, `step` commands) is sent first.
    pub fn start(exe: &Path, setup: &str, slots: usize, threads: usize) -> PoolHarness {
        let mut child = Command::new(exe)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", exe.display()));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut h = PoolHarness {
            child,
            stdin,
            stdout,
            pool: 0,
            take: 0,
            take_end: 0,
            threads: 0,
        };
        h.send(setup);
        h.send(&format!("pool {slots}\n"));
        let f = h.line();
        let f: Vec<&str> = f.split_whitespace().collect();
        assert_eq!(f.first(), Some(&"pool"), "harness output: {f:?}");
        (h.pool, h.take, h.take_end) = (hex(f[1]), hex(f[2]), hex(f[3]));
        h.send(&format!("threads {threads}\n"));
        let f = h.line();
        h.threads = hex(f.strip_prefix("threads ").expect("threads reply"));
        h
    }

    /// Sends commands that have no reply (`blob`, `regs`, `step`, `poke`...).
    pub fn send(&mut self, text: &str) {
        self.stdin.write_all(text.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn line(&mut self) -> String {
        let mut line = String::new();
        let n = self.stdout.read_line(&mut line).unwrap();
        if n == 0 {
            let status = self.child.wait().unwrap();
            panic!("the harness ended ({status}) where a reply was due");
        }
        line.trim_end().to_string()
    }

    /// Thread image `i`'s address.
    pub fn thread(&self, i: usize) -> u64 {
        self.threads + 0x1000 * i as u64
    }

    /// Writes 8 bytes.
    pub fn poke(&mut self, addr: u64, value: u64) {
        self.send(&format!("poke {addr:x} {value:x}\n"));
    }

    /// Writes 4 bytes.
    pub fn poke4(&mut self, addr: u64, value: u32) {
        self.send(&format!("poke4 {addr:x} {value:x}\n"));
    }

    /// Reads `n` words.
    pub fn dump(&mut self, addr: u64, n: usize) -> Vec<u64> {
        self.send(&format!("dump {addr:x} {n}\n"));
        let line = self.line();
        let words: Vec<u64> = line.split_whitespace().skip(1).map(hex).collect();
        assert_eq!(words.len(), n, "dump reply: {line}");
        words
    }

    /// Overwrites code bytes at `addr` (the harness makes the page writable).
    pub fn patch(&mut self, addr: u64, bytes: &[u8]) {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        self.send(&format!("patch {addr:x} {hex}\n"));
    }

    /// Makes image `i` the traced thread (its `%gs` base; x86: `%fs`).
    pub fn select(&mut self, i: usize) {
        let at = self.thread(i);
        self.send(&format!("thread {at:x}\n"));
    }

    /// One trace point (`entry`, `narrow` or `exit` command text) and its report.
    pub fn trace(&mut self, command: &str) -> Report {
        self.send(command);
        let r = self.line();
        let ring = self.line();
        Report::parse(&r, &ring)
    }
}

impl Drop for PoolHarness {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
