//! Trace file version 4: a whole process in one file, one section per thread, each thread's
//! records as the runs [`crate::pool::thread_streams`] cuts from a many-thread pool
//! (`docs/many-threads.md`). All integers are little-endian; `docs/trace-format.md` §5 draws
//! the layout:
//!
//! ```text
//!  0  magic "HUBBLTRC"     8 u16 version = 4   10 u8 mode (32|64)   11 u8 metadata count M
//! 12  u32 thread count T  16 u64 timer Hz     24 u64 reference counter
//! 32  u64 wall clock (Unix ns)                40 u32 pid            44 u32 symbol count S
//! 48  process name, trigger reason: u16 length + UTF-8 each
//!     S × (u64 pointer, u16 length, UTF-8 name), pointers strictly increasing (all threads')
//!     M × (u16 length + key, u16 length + value), keys strictly increasing
//!     T × section, tids strictly increasing:
//!         u32 tid, u32 run count R (≥ 1), u32 anchor count A, thread name (u16 + UTF-8)
//!         A × (u64 slots after, u64 bound): positions counted back from the end of the
//!             section's runs laid end to end, oldest run first (as a v3 window's)
//!         R × run, oldest first (first tickets strictly increasing):
//!             u32 first seq, u32 block count (≥ 1), u64 first ticket,
//!             u64 counter when its first block was taken, u64 slot count N, N × u64 slots
//!     u32 CRC-32 (IEEE) of every byte before it
//! ```
//!
//! A run is a thread's blocks of consecutive `seq` (its slots decode as one linear window);
//! between two runs of a thread the pool lost blocks (overwritten, or a record dropped when no
//! block was free), which the reader sees as the `seq` that does not follow on. Consecutive runs
//! of one thread must therefore not be consecutive in `seq`: they would be one run.
//!
//! Why the counter of the first block is kept (the issue's sketch has seq, ticket and block
//! count only): a run that is not a thread's newest has no flush-time reference of its own. The
//! next run's first block was taken after every record of this run was written, so its counter
//! is an upper bound of them all, as the reference is for the newest run; timestamps of an older
//! run are then exact whenever its newest record is less than 2^32 ticks before that take, not
//! before the flush, which a thread that lost blocks an hour ago could not otherwise meet.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::file::{check_anchors, check_metadata, invalid, FileError, Reader, MAGIC, MAX_STRING};
use crate::pool::ThreadStream;
use crate::slot::Mode;
use crate::time::TimeAnchor;

/// The version number of a many-thread file.
pub const VERSION: u16 = 4;
/// Size of the fixed part of the header.
pub const FIXED_HEADER: usize = 48;
/// Bytes of a run's fixed part (seq, block count, ticket, counter, slot count).
const RUN_FIXED: usize = 4 + 4 + 8 + 8 + 8;
/// Bytes of a section's fixed part (tid, run count, anchor count, name length) plus one run's.
const SECTION_MIN: usize = 4 + 4 + 4 + 2 + RUN_FIXED;
/// Bytes of a symbol with an empty name.
const SYMBOL_MIN: usize = 8 + 2;

/// What a many-thread file says about the whole process (a v3 header without the thread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessHeader {
    /// Execution mode of the traced process.
    pub mode: Mode,
    /// Timer frequency in Hz.
    pub timer_hz: u64,
    /// Full 64-bit timer value read at flush.
    pub reference_counter: u64,
    /// Wall-clock time (Unix epoch, ns) read together with `reference_counter`.
    pub wall_clock_ns: u64,
    /// Process id.
    pub pid: u32,
    /// Process (package) name.
    pub process_name: String,
    /// Why the trace was flushed.
    pub reason: String,
    /// Device and build metadata (`docs/trace-format.md`, version 3).
    pub metadata: BTreeMap<String, String>,
}

/// One run: blocks of one thread with consecutive `seq`, their data slots laid end to end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    /// `seq` of the run's first block.
    pub first_seq: u32,
    /// Blocks in the run (≥ 1): their `seq` are `first_seq ..= first_seq + blocks − 1`.
    pub blocks: u32,
    /// Pool ticket of the run's first block (orders runs across threads).
    pub first_ticket: u64,
    /// Full timer counter when the run's first block was taken.
    pub first_counter: u64,
    /// The run's data slots, oldest first (decode with `RingView::linear`).
    pub slots: Vec<u64>,
}

impl Run {
    /// `seq` of the run's last block.
    pub fn last_seq(&self) -> u32 {
        self.first_seq.wrapping_add(self.blocks.saturating_sub(1))
    }
}

/// One thread: its name, its idle-gap anchors and its runs, oldest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadSection {
    /// Thread id.
    pub tid: u32,
    /// Thread name.
    pub thread_name: String,
    /// Bounds at the thread's idle gaps ([`TimeAnchor`]), positions counted back from the end
    /// of its runs laid end to end, newest first.
    pub anchors: Vec<TimeAnchor>,
    /// The runs, oldest first.
    pub runs: Vec<Run>,
}

impl ThreadSection {
    /// Slots of every run.
    pub fn total_slots(&self) -> usize {
        self.runs.iter().map(|r| r.slots.len()).sum()
    }
}

/// A version 4 file: one process, every traced thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadsFile {
    /// The process.
    pub header: ProcessHeader,
    /// `ArtMethod*` → pretty name, for every thread.
    pub symbols: BTreeMap<u64, String>,
    /// The threads, by tid.
    pub threads: Vec<ThreadSection>,
}

impl ThreadsFile {
    /// The file of a stopped pool: `streams` as [`crate::pool::thread_streams`] returns them
    /// (by tid, then age), each thread named from `names` (empty if absent) with its anchors
    /// from `anchors` (none if absent).
    pub fn from_streams(
        header: ProcessHeader,
        streams: Vec<ThreadStream>,
        names: &BTreeMap<u32, String>,
        anchors: &BTreeMap<u32, Vec<TimeAnchor>>,
        symbols: BTreeMap<u64, String>,
    ) -> ThreadsFile {
        let mut by_tid: BTreeMap<u32, Vec<Run>> = BTreeMap::new();
        for s in streams {
            let Some(first) = s.blocks.first() else {
                continue;
            };
            by_tid.entry(s.tid).or_default().push(Run {
                first_seq: first.seq,
                blocks: s.blocks.len() as u32,
                first_ticket: first.ticket,
                first_counter: first.time,
                slots: s.slots,
            });
        }
        let threads = by_tid
            .into_iter()
            .map(|(tid, mut runs)| {
                // `thread_streams` already orders them; a caller's own list may not.
                runs.sort_by_key(|r| r.first_ticket);
                ThreadSection {
                    tid,
                    thread_name: names.get(&tid).cloned().unwrap_or_default(),
                    anchors: anchors.get(&tid).cloned().unwrap_or_default(),
                    runs,
                }
            })
            .collect();
        ThreadsFile {
            header,
            symbols,
            threads,
        }
    }

    /// Checks what a reader relies on (the same checks [`ThreadsFile::parse`] makes).
    pub fn validate(&self) -> Result<(), FileError> {
        let h = &self.header;
        if h.timer_hz == 0 {
            return Err(invalid("timer frequency", "0 Hz"));
        }
        for (what, s) in [
            ("process name", &h.process_name),
            ("trigger reason", &h.reason),
        ] {
            check_string(what, s)?;
        }
        check_metadata(&h.metadata)?;
        u32::try_from(self.threads.len())
            .map_err(|_| invalid("thread count", "more than 2^32 threads"))?;
        for (i, t) in self.threads.iter().enumerate() {
            check_string("thread name", &t.thread_name)?;
            if i > 0 && self.threads[i - 1].tid >= t.tid {
                return Err(invalid(
                    "thread sections",
                    alloc::format!(
                        "tid {} after tid {}: tids must be strictly increasing",
                        t.tid,
                        self.threads[i - 1].tid
                    ),
                ));
            }
            check_runs(t)?;
            check_anchors(&t.anchors, t.total_slots())?;
        }
        Ok(())
    }

    /// Serializes the file (after [`ThreadsFile::validate`]).
    pub fn to_bytes(&self) -> Result<Vec<u8>, FileError> {
        self.validate()?;
        let h = &self.header;
        let slots: usize = self.threads.iter().map(ThreadSection::total_slots).sum();
        let mut out = Vec::with_capacity(FIXED_HEADER + 64 + slots * 8);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.push(h.mode.code());
        // At most MAX_METADATA (checked above).
        out.push(h.metadata.len() as u8);
        out.extend_from_slice(&(self.threads.len() as u32).to_le_bytes());
        for v in [h.timer_hz, h.reference_counter, h.wall_clock_ns] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&h.pid.to_le_bytes());
        let count = u32::try_from(self.symbols.len())
            .map_err(|_| invalid("symbol count", "more than 2^32 symbols"))?;
        out.extend_from_slice(&count.to_le_bytes());
        // Lengths checked by validate: the casts cannot truncate.
        put_string(&mut out, &h.process_name);
        put_string(&mut out, &h.reason);
        for (pointer, name) in &self.symbols {
            let len = u16::try_from(name.len())
                .map_err(|_| invalid("symbol name", alloc::format!("{pointer:#x} is too long")))?;
            out.extend_from_slice(&pointer.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
            out.extend_from_slice(name.as_bytes());
        }
        for (key, value) in &h.metadata {
            put_string(&mut out, key);
            put_string(&mut out, value);
        }
        for t in &self.threads {
            out.extend_from_slice(&t.tid.to_le_bytes());
            out.extend_from_slice(&(t.runs.len() as u32).to_le_bytes());
            // At most one anchor a slot plus one (checked): fits when the slots do.
            let anchors = u32::try_from(t.anchors.len())
                .map_err(|_| invalid("anchor count", "more than 2^32 anchors"))?;
            out.extend_from_slice(&anchors.to_le_bytes());
            put_string(&mut out, &t.thread_name);
            for a in &t.anchors {
                out.extend_from_slice(&a.slots_after.to_le_bytes());
                out.extend_from_slice(&a.bound.to_le_bytes());
            }
            for r in &t.runs {
                out.extend_from_slice(&r.first_seq.to_le_bytes());
                out.extend_from_slice(&r.blocks.to_le_bytes());
                out.extend_from_slice(&r.first_ticket.to_le_bytes());
                out.extend_from_slice(&r.first_counter.to_le_bytes());
                out.extend_from_slice(&(r.slots.len() as u64).to_le_bytes());
                for s in &r.slots {
                    out.extend_from_slice(&s.to_le_bytes());
                }
            }
        }
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        Ok(out)
    }

    /// Writes the file atomically (temporary name, 0600, fsync, rename, directory fsync), as
    /// [`crate::TraceFile::write_atomic`] does.
    #[cfg(feature = "std")]
    pub fn write_atomic(&self, path: &std::path::Path) -> Result<(), FileError> {
        crate::file::write_atomic_parts(path, &[&self.to_bytes()?]).map_err(FileError::Io)
    }

    /// Parses and verifies a version 4 file. Structure first, so a file cut short says
    /// "truncated" and where; then the checksum; then the meaning (order of tids, tickets,
    /// anchors), so a flipped bit anywhere says "corrupt". Every count is bounded by the bytes
    /// left before it drives a loop or an allocation.
    pub fn parse(bytes: &[u8]) -> Result<ThreadsFile, FileError> {
        let (mut r, _, mode) = crate::file::parse_opening(bytes, VERSION..=VERSION)?;
        let metadata_count = usize::from(r.take(1, "the header")?[0]);
        if metadata_count > crate::file::MAX_METADATA {
            return Err(invalid(
                "metadata count",
                alloc::format!("{metadata_count} (at most {})", crate::file::MAX_METADATA),
            ));
        }
        let thread_count = r.u32("the header")? as usize;
        let timer_hz = r.u64("the header")?;
        let reference_counter = r.u64("the header")?;
        let wall_clock_ns = r.u64("the header")?;
        let pid = r.u32("the header")?;
        let symbol_count = r.u32("the header")? as usize;
        let process_name = r.string("the process name")?;
        let reason = r.string("the trigger reason")?;
        // A count the rest of the file cannot hold is a cut file (or a corrupt count): either
        // way no loop or allocation may follow it. Such a file is reported at the count ("the
        // symbol table"), one whose count fits where it ends ("a symbol").
        if symbol_count > left(&r) / SYMBOL_MIN {
            return Err(FileError::Truncated {
                what: "the symbol table",
            });
        }
        let mut symbols = Vec::with_capacity(symbol_count);
        for _ in 0..symbol_count {
            let pointer = r.u64("a symbol")?;
            let len = usize::from(r.u16("a symbol")?);
            let name = r.take(len, "a symbol")?;
            symbols.push((pointer, name));
        }
        let raw_metadata = crate::file::raw_metadata(&mut r, metadata_count)?;
        if thread_count > left(&r) / SECTION_MIN {
            return Err(FileError::Truncated {
                what: "the thread sections",
            });
        }
        let mut threads = Vec::with_capacity(thread_count);
        for _ in 0..thread_count {
            threads.push(parse_section(&mut r)?);
        }
        let end = r.pos;
        let stored = u32::from_le_bytes(r.take(4, "the checksum")?.try_into().expect("4 bytes"));
        let computed = crc32fast::hash(&bytes[..end]);
        if stored != computed {
            return Err(FileError::ChecksumMismatch { stored, computed });
        }
        if r.pos < bytes.len() {
            return Err(FileError::TrailingBytes(bytes.len() - r.pos));
        }
        // Meaning, after the checksum.
        let mut table = BTreeMap::new();
        let mut previous = None;
        for (pointer, name) in symbols {
            crate::file::symbol_in_order(&mut previous, pointer)?;
            let name = core::str::from_utf8(name)
                .map_err(|_| invalid("symbol name", alloc::format!("{pointer:#x} is not UTF-8")))?;
            table.insert(pointer, String::from(name));
        }
        let metadata = crate::file::metadata_from(raw_metadata)?;
        let file = ThreadsFile {
            header: ProcessHeader {
                mode,
                timer_hz,
                reference_counter,
                wall_clock_ns,
                pid,
                process_name,
                reason,
                metadata,
            },
            symbols: table,
            threads,
        };
        file.validate()?;
        Ok(file)
    }
}

fn left(r: &Reader<'_>) -> usize {
    r.bytes.len() - r.pos
}

fn parse_section(r: &mut Reader<'_>) -> Result<ThreadSection, FileError> {
    let tid = r.u32("a thread section")?;
    let run_count = r.u32("a thread section")? as usize;
    let anchor_count = r.u32("a thread section")? as usize;
    let thread_name = r.string("a thread name")?;
    if anchor_count > left(r) / 16 {
        return Err(FileError::Truncated {
            what: "a thread's anchors",
        });
    }
    let mut anchors = Vec::with_capacity(anchor_count);
    for _ in 0..anchor_count {
        anchors.push(TimeAnchor {
            slots_after: r.u64("an anchor")?,
            bound: r.u64("an anchor")?,
        });
    }
    if run_count > left(r) / RUN_FIXED {
        return Err(FileError::Truncated {
            what: "a thread's runs",
        });
    }
    let mut runs = Vec::with_capacity(run_count);
    for _ in 0..run_count {
        let first_seq = r.u32("a run")?;
        let blocks = r.u32("a run")?;
        let first_ticket = r.u64("a run")?;
        let first_counter = r.u64("a run")?;
        let slot_count = r.u64("a run")?;
        // `take` bounds the slots by the bytes left; a count whose byte length does not even
        // fit a usize is a cut (or corrupt) file as well.
        let len = usize::try_from(slot_count)
            .ok()
            .and_then(|n| n.checked_mul(8))
            .ok_or(FileError::Truncated {
                what: "a run's slots",
            })?;
        let bytes = r.take(len, "a run's slots")?;
        let slots = bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        runs.push(Run {
            first_seq,
            blocks,
            first_ticket,
            first_counter,
            slots,
        });
    }
    Ok(ThreadSection {
        tid,
        thread_name,
        anchors,
        runs,
    })
}

/// A thread's runs as `thread_streams` makes them: at least one, each of at least one block,
/// oldest first by ticket, and never two consecutive in `seq` (they would be one run).
fn check_runs(t: &ThreadSection) -> Result<(), FileError> {
    if t.runs.is_empty() {
        return Err(invalid(
            "thread section",
            alloc::format!("tid {} has no runs", t.tid),
        ));
    }
    for (k, run) in t.runs.iter().enumerate() {
        if run.blocks == 0 {
            return Err(invalid(
                "run",
                alloc::format!("tid {} run {k} has no blocks", t.tid),
            ));
        }
        let Some(prev) = k.checked_sub(1).map(|j| &t.runs[j]) else {
            continue;
        };
        if prev.first_ticket >= run.first_ticket {
            return Err(invalid(
                "run",
                alloc::format!(
                    "tid {} run {k} (ticket {}) is not newer than run {} (ticket {})",
                    t.tid,
                    run.first_ticket,
                    k - 1,
                    prev.first_ticket
                ),
            ));
        }
        if prev.last_seq().wrapping_add(1) == run.first_seq {
            return Err(invalid(
                "run",
                alloc::format!(
                    "tid {} run {k} (seq {}) continues run {} without a gap: one run",
                    t.tid,
                    run.first_seq,
                    k - 1
                ),
            ));
        }
    }
    Ok(())
}

fn check_string(what: &'static str, s: &str) -> Result<(), FileError> {
    if s.len() > MAX_STRING {
        return Err(invalid(
            what,
            alloc::format!("{} bytes long (at most {MAX_STRING})", s.len()),
        ));
    }
    Ok(())
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u16).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}
