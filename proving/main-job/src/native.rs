//! The UI thread on x86_64, natively (`main-job run --isa x86_64`): a Rust loop over the op
//! array that calls the x86_64 trace points ART's own assembler emits (the `blob x86_64 …` lines
//! of `scripts/hotpath-x86-gen`'s output) on this CPU, with the thread's `%gs` base at the
//! `Thread` image, as ART's x86_64 code finds its `Thread`.
//!
//! What it observes without the control plane, per call (the unicorn hooks' job on A64): the
//! trace point leaves its cursor register (RCX) holding the new cursor when it wrote a record,
//! 0 when tracing was off, and the published end position when it took the stop path, where the
//! cursor word is 0 (tracing off first) instead of RCX. Nothing else writes the cursor while the
//! thread is runnable (§6: the control thread restarts only after it has seen the publication, or
//! while the thread is native), so "RCX ≠ 0 and cursor ≠ RCX" is exactly the stop path.

use std::path::Path;
use std::sync::atomic::Ordering;

use anyhow::{bail, ensure, Context as _, Result};
use hubble_runtime::block::ThreadBlock;

use crate::art_double::{Events, StopEvent};
use crate::emu::HostMap;
use crate::workload::{op_kind, Op, OpKind};

/// Where the entry and exit trace points sit in the code mapping.
const ENTRY_AT: usize = 0;
const EXIT_AT: usize = 0x800;

/// The emitted x86_64 trace points (cursor RCX, `ArtMethod*` in RDI, RDTSC).
pub struct Code {
    map: HostMap,
    /// Thread offsets of cursor, limit, stop, begin, end the generator's ART used.
    pub offsets: [i64; 5],
    /// `Thread::TidOffset` of that ART (the `tid 8` line; what the block-end function reads).
    pub tid_offset: Option<i64>,
}

fn hex(s: &str) -> Result<Vec<u8>> {
    ensure!(s.len() % 2 == 0, "odd hex string");
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).context("hex"))
        .collect()
}

impl Code {
    /// Reads the blob file and maps the two trace points executable.
    pub fn load(path: &Path) -> Result<Code> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read the x86 blob file", path.display()))?;
        let mut entry = None;
        let mut exit = None;
        let mut offsets = None;
        let mut tid_offset = None;
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            match f.as_slice() {
                ["offsets", "8", rest @ ..] if rest.len() == 5 => {
                    let v: Vec<i64> = rest.iter().map(|x| x.parse()).collect::<Result<_, _>>()?;
                    offsets = Some([v[0], v[1], v[2], v[3], v[4]]);
                }
                ["tid", "8", v] => tid_offset = Some(v.parse()?),
                ["blob", "x86_64", kind, "rdtsc", "rcx", "rdi", _, _, bytes] => match *kind {
                    "entry" => entry = Some(hex(bytes)?),
                    "exit" => exit = Some(hex(bytes)?),
                    _ => {}
                },
                _ => {}
            }
        }
        let (Some(entry), Some(exit), Some(offsets)) = (entry, exit, offsets) else {
            bail!(
                "{}: no x86_64 entry/exit (rdtsc, rcx, rdi) or no offsets: not a scripts/hotpath-x86-gen output",
                path.display()
            );
        };
        ensure!(
            entry.len() < EXIT_AT && exit.len() < 0x800,
            "blobs too large"
        );
        let mut map = HostMap::new(0x1000)?;
        map.bytes_mut()[ENTRY_AT..ENTRY_AT + entry.len()].copy_from_slice(&entry);
        map.bytes_mut()[EXIT_AT..EXIT_AT + exit.len()].copy_from_slice(&exit);
        // SAFETY: the mapping is exactly `map`'s, page aligned.
        let rc = unsafe {
            libc::mprotect(
                map.addr() as *mut libc::c_void,
                map.len(),
                libc::PROT_READ | libc::PROT_EXEC,
            )
        };
        ensure!(rc == 0, "mprotect: {}", std::io::Error::last_os_error());
        Ok(Code {
            map,
            offsets,
            tid_offset,
        })
    }

    /// The entry trace point's address.
    pub(crate) fn entry(&self) -> u64 {
        self.map.addr() + ENTRY_AT as u64
    }

    /// The exit trace point's address.
    pub(crate) fn exit(&self) -> u64 {
        self.map.addr() + EXIT_AT as u64
    }
}

#[repr(C)]
struct CallResult {
    rcx: u64,
    method_changed: u64,
}

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".globl hubble_main_job_call",
    "hubble_main_job_call:",
    // rdi = code, rsi = ArtMethod*; the trace point clobbers rax, rcx, rdx (all caller-saved).
    "  mov rax, rdi",
    "  mov rdi, rsi",
    "  call rax",
    "  mov rax, rcx",
    "  xor edx, edx",
    "  cmp rdi, rsi",
    "  setne dl",
    "  ret",
);

extern "C" {
    fn hubble_main_job_call(code: u64, method: u64) -> CallResult;
}

/// Calls the trace point at `code` with `arg` in RDI on this thread (whose `%gs` base is a
/// `Thread` image: [`set_thread_register`]). Returns RCX (the trace point's cursor register) and
/// whether RDI came back changed.
///
/// # Safety
/// `code` is one of [`Code`]'s trace points, and this thread's `%gs` base points at a `Thread`
/// image whose block words are the control plane's (a ring or pool it keeps alive).
pub(crate) unsafe fn call(code: u64, arg: u64) -> (u64, bool) {
    // SAFETY: the caller's contract; the trace point clobbers only rax, rcx, rdx and the flags,
    // which the wrapper declares (it is an ordinary C function to Rust).
    let r = unsafe { hubble_main_job_call(code, arg) };
    (r.rcx, r.method_changed != 0)
}

/// Points this thread's `%gs` base at `thread` (`Thread::InitCpu`, x86_64).
pub fn set_thread_register(thread: u64) -> Result<()> {
    const ARCH_SET_GS: libc::c_long = 0x1001;
    // SAFETY: sets this thread's GS base only; nothing in Rust or glibc on x86_64 uses %gs.
    let rc = unsafe { libc::syscall(libc::SYS_arch_prctl, ARCH_SET_GS, thread) };
    ensure!(
        rc == 0,
        "arch_prctl(ARCH_SET_GS): {}",
        std::io::Error::last_os_error()
    );
    Ok(())
}

/// Work-loop iterations per µs on this CPU: the fastest of several short runs, so that a loaded
/// machine makes the methods' work last longer than planned, never shorter (the jank frame must
/// outlast the trigger's threshold).
pub fn calibrate() -> u64 {
    let n = 2_000_000u64;
    (0..9)
        .map(|_| {
            let t0 = std::time::Instant::now();
            spin(n);
            n / (t0.elapsed().as_micros().max(1) as u64)
        })
        .max()
        .unwrap_or(1)
        .max(1)
}

pub(crate) fn spin(n: u64) {
    let mut i = n;
    while std::hint::black_box(i) > 1 {
        i -= 1;
    }
}

/// The driver: runs ops `from..to`, records what it observes in `events`.
pub struct Driver<'a> {
    /// The code.
    pub code: &'a Code,
    /// The op array.
    pub ops: &'a HostMap,
    /// The progress word (address of the next op, for the `Art` double).
    pub progress: &'a HostMap,
    /// The per-thread block.
    pub block: &'a ThreadBlock,
    /// Observations.
    pub events: &'a Events,
}

impl Driver<'_> {
    /// Runs ops `from..to` natively.
    pub fn run(&self, from: usize, to: usize) -> Result<()> {
        for i in from..to {
            let op: Op = self.ops.word(i * 8).load(Ordering::Relaxed);
            self.progress
                .word(0)
                .store(self.ops.addr() + (i as u64 + 1) * 8, Ordering::Release);
            let (code, arg) = match op_kind(op) {
                OpKind::Work(n) => {
                    spin(n);
                    continue;
                }
                OpKind::Entry(m) => (self.code.entry(), m),
                OpKind::Exit => (self.code.exit(), self.ops.addr() + i as u64 * 8),
            };
            // SAFETY: `code` is an emitted trace point, and this thread's %gs is the Thread
            // image (set_thread_register) whose ring the control plane keeps.
            let (rcx, changed) = unsafe { call(code, arg) };
            ensure!(!changed, "op {i}: the trace point changed RDI");
            if rcx == 0 {
                continue; // tracing off
            }
            if self.block.cursor.load(Ordering::Relaxed) as u64 == rcx {
                self.events.record_written(|| i);
            } else {
                self.events.stopped(StopEvent {
                    op: i,
                    end: rcx,
                    forced: false,
                });
            }
        }
        Ok(())
    }
}
