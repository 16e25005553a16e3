//! Any trace file, whatever its version, as per-thread sections of runs.
//!
//! [`Trace::parse`] reads versions 1 to 4. A file of versions 1–3 is one thread's one window
//! and reads as one section with one run, so a reader written against [`Trace::sections`]
//! handles both; [`TraceFile`] stays what it was (one window, the type every existing reader and
//! writer is built on), and [`TraceFile::parse`] refuses a version 4 file as a version it does
//! not read (`UnsupportedVersion(4)`: it reads 1 to 3), never misreading it.
//!
//! Readers built on [`TraceFile`] (the exporters, the analyses) read a version 4 file through
//! [`ThreadsFile::into_run_files`]: one `TraceFile` per run, each what a version 3 file of that
//! run would hold, with the run's own time base (see [`RunRef`]).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

use crate::file::{FileError, TraceFile, TraceHeader};
use crate::ring::{self, RingView};
use crate::slot::{self, Mode, Record};
use crate::threads::{ThreadsFile, VERSION as THREADS_VERSION};
use crate::time::{BackwardClock, TimeAnchor, TimeBase};

/// A parsed trace file of any version.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trace {
    /// Versions 1–3: one thread's window.
    Single(TraceFile),
    /// Version 4: every thread of a process.
    Threads(ThreadsFile),
}

/// The `seq` span of a version 4 run (versions 1–3 have none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunSeq {
    /// `seq` of the run's first block.
    pub first: u32,
    /// `seq` of its last block.
    pub last: u32,
    /// Blocks missing before the run: `seq` values skipped since the thread's previous run
    /// (or since 0 for its first), each a block the pool overwrote or a record it dropped.
    pub lost_before: u32,
}

/// One run of a thread, ready to decode: slots and the time base they are recovered from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunRef<'a> {
    /// The run's slots, oldest first.
    pub slots: &'a [u64],
    /// An upper bound of every record of the run: the flush's reference counter for a thread's
    /// newest run (and for a version 1–3 window), the counter when the thread's next run began
    /// for an older one.
    pub reference: u64,
    /// The thread's anchors that fall inside this run, counted back from the run's end.
    pub anchors: Vec<TimeAnchor>,
    /// Where the run lies in the thread's `seq` (None for versions 1–3).
    pub seq: Option<RunSeq>,
}

impl RunRef<'_> {
    /// What the run's timestamps are recovered from.
    pub fn time_base(&self) -> TimeBase<'_> {
        TimeBase {
            reference: self.reference,
            anchors: &self.anchors,
        }
    }

    /// Decodes the run with its timestamps.
    pub fn decode_events(&self, mode: Mode) -> Result<crate::DecodedTrace, crate::EventsError> {
        crate::decode_events(&RingView::linear(self.slots), mode, self.time_base())
    }
}

/// One thread of a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section<'a> {
    /// Thread id.
    pub tid: u32,
    /// Thread name.
    pub thread_name: &'a str,
    /// The thread's runs, oldest first (one for versions 1–3).
    pub runs: Vec<RunRef<'a>>,
}

/// What every section shares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Common<'a> {
    /// Execution mode.
    pub mode: Mode,
    /// Timer frequency, Hz.
    pub timer_hz: u64,
    /// Full counter read at flush.
    pub reference_counter: u64,
    /// Wall clock (Unix ns) read together with it.
    pub wall_clock_ns: u64,
    /// Process id.
    pub pid: u32,
    /// Process name.
    pub process_name: &'a str,
    /// Why the trace was flushed.
    pub reason: &'a str,
    /// Device and build metadata.
    pub metadata: &'a BTreeMap<String, String>,
    /// Method names of every thread.
    pub symbols: &'a BTreeMap<u64, String>,
}

impl Trace {
    /// Parses and verifies a file of any version.
    pub fn parse(bytes: &[u8]) -> Result<Trace, FileError> {
        if is_threads_file(bytes) {
            ThreadsFile::parse(bytes).map(Trace::Threads)
        } else {
            TraceFile::parse(bytes).map(Trace::Single)
        }
    }

    /// Reads and verifies a file of any version (a version 1–3 file with
    /// [`TraceFile::read`], which reads the window straight into its slots).
    #[cfg(feature = "std")]
    pub fn read(path: &std::path::Path) -> Result<Trace, FileError> {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(FileError::Io)?;
        let mut head = [0u8; 10];
        let n = (&mut file)
            .take(10)
            .read(&mut head)
            .map_err(FileError::Io)?;
        if is_threads_file(&head[..n]) {
            let bytes = std::fs::read(path).map_err(FileError::Io)?;
            ThreadsFile::parse(&bytes).map(Trace::Threads)
        } else {
            TraceFile::read(path).map(Trace::Single)
        }
    }

    /// What every section shares.
    pub fn common(&self) -> Common<'_> {
        // The two headers are different types with the same process-wide fields.
        macro_rules! common {
            ($h:expr, $symbols:expr) => {
                Common {
                    mode: $h.mode,
                    timer_hz: $h.timer_hz,
                    reference_counter: $h.reference_counter,
                    wall_clock_ns: $h.wall_clock_ns,
                    pid: $h.pid,
                    process_name: &$h.process_name,
                    reason: &$h.reason,
                    metadata: &$h.metadata,
                    symbols: $symbols,
                }
            };
        }
        match self {
            Trace::Single(f) => common!(f.header, &f.symbols),
            Trace::Threads(f) => common!(f.header, &f.symbols),
        }
    }

    /// The threads, each with its runs (a version 1–3 file: one thread, one run).
    pub fn sections(&self) -> Vec<Section<'_>> {
        match self {
            Trace::Single(f) => alloc::vec![Section {
                tid: f.header.tid,
                thread_name: &f.header.thread_name,
                runs: alloc::vec![RunRef {
                    slots: &f.window,
                    reference: f.header.reference_counter,
                    anchors: f.header.anchors.clone(),
                    seq: None,
                }],
            }],
            Trace::Threads(f) => f.sections(),
        }
    }
}

/// Whether `bytes` start like a version 4 file (the magic, then version 4).
fn is_threads_file(bytes: &[u8]) -> bool {
    bytes.len() >= 10
        && bytes[..8] == crate::file::MAGIC
        && u16::from_le_bytes([bytes[8], bytes[9]]) == THREADS_VERSION
}

/// A run of a version 4 file as a version 3 window ([`ThreadsFile::into_run_files`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFile {
    /// Index of the run's thread in [`ThreadsFile::threads`].
    pub section: usize,
    /// Index of the run in its thread.
    pub run: usize,
    /// Runs of the thread.
    pub runs: usize,
    /// The run's `seq` span.
    pub seq: RunSeq,
    /// The run as one thread's window.
    pub file: TraceFile,
}

impl ThreadsFile {
    /// Every thread's runs with their time bases ([`Trace::sections`]).
    pub fn sections(&self) -> Vec<Section<'_>> {
        self.threads
            .iter()
            .map(|t| {
                let total = t.total_slots() as u64;
                let mut start = 0u64;
                let mut previous_end: Option<u32> = None;
                let runs = t
                    .runs
                    .iter()
                    .enumerate()
                    .map(|(k, run)| {
                        let end = start + run.slots.len() as u64;
                        let reference = match t.runs.get(k + 1) {
                            // The next run's first block was taken after this run's last record.
                            Some(next) => next.first_counter.min(self.header.reference_counter),
                            None => self.header.reference_counter,
                        };
                        let anchors = anchors_in(&t.anchors, total, start, end, k == 0);
                        let expected = previous_end.map_or(0, |s| s.wrapping_add(1));
                        previous_end = Some(run.last_seq());
                        start = end;
                        RunRef {
                            slots: &run.slots,
                            reference,
                            anchors,
                            seq: Some(RunSeq {
                                first: run.first_seq,
                                last: run.last_seq(),
                                lost_before: run.first_seq.wrapping_sub(expected),
                            }),
                        }
                    })
                    .collect();
                Section {
                    tid: t.tid,
                    thread_name: &t.thread_name,
                    runs,
                }
            })
            .collect()
    }

    /// One version-3-like [`TraceFile`] per run, threads by tid, runs oldest first: what the
    /// exporters and analyses, which read one window at a time, are given. Each keeps the
    /// process's header with the run's thread, the symbols its entries name (not the whole
    /// table: a process's symbols times its runs would not fit in memory), and its own clock:
    /// * the newest run of a thread keeps the flush's reference pair, so frames still open end
    ///   at the flush as in a version 3 file;
    /// * an older run's reference is the full counter of its newest record (recovered from the
    ///   next run's first counter and the anchors, which gives every record the same value),
    ///   with the wall clock the flush's pair gives that counter: its open frames end where the
    ///   run ends, before the thread's next run begins, so one track per thread never overlaps.
    pub fn into_run_files(self) -> Vec<RunFile> {
        let mode = self.header.mode;
        // Everything but the slots, from the borrowed view; then the slots are moved, not
        // copied (a flush's file holds the whole pool).
        struct Plan {
            tid: u32,
            thread_name: String,
            seq: RunSeq,
            anchors: Vec<TimeAnchor>,
            reference: u64,
            wall: u64,
            symbols: BTreeMap<u64, String>,
        }
        let mut plans = Vec::new();
        for (s, section) in self.sections().iter().enumerate() {
            let n = section.runs.len();
            for (k, run) in section.runs.iter().enumerate() {
                let (reference, wall) = if k + 1 == n {
                    (self.header.reference_counter, self.header.wall_clock_ns)
                } else {
                    let last = newest_counter(run).unwrap_or(run.reference);
                    (last, wall_at(&self.header, last))
                };
                plans.push((
                    s,
                    k,
                    n,
                    Plan {
                        tid: section.tid,
                        thread_name: String::from(section.thread_name),
                        seq: run.seq.expect("version 4 runs have a seq span"),
                        anchors: run.anchors.clone(),
                        reference,
                        wall,
                        symbols: named_in(run.slots, mode, &self.symbols),
                    },
                ));
            }
        }
        let slots = self
            .threads
            .into_iter()
            .flat_map(|t| t.runs.into_iter().map(|r| r.slots));
        plans
            .into_iter()
            .zip(slots)
            .map(|((section, run, runs, plan), window)| {
                let bytes = (window.len() * 8) as u64;
                RunFile {
                    section,
                    run,
                    runs,
                    seq: plan.seq,
                    file: TraceFile {
                        header: TraceHeader {
                            mode,
                            timer_hz: self.header.timer_hz,
                            reference_counter: plan.reference,
                            wall_clock_ns: plan.wall,
                            ring_bytes: bytes,
                            write_pos: bytes,
                            pid: self.header.pid,
                            tid: plan.tid,
                            thread_name: plan.thread_name,
                            process_name: self.header.process_name.clone(),
                            reason: self.header.reason.clone(),
                            anchors: plan.anchors,
                            metadata: self.header.metadata.clone(),
                        },
                        window,
                        symbols: plan.symbols,
                    },
                }
            })
            .collect()
    }
}

/// The anchors of a thread (counted back from the end of `total` slots) that bound a record of
/// the run at `[start, end)`, counted back from the run's end. An anchor at position p bounds
/// the record before p, so it belongs to the run with start < p ≤ end; one at position 0 bounds
/// nothing and is kept with the first run, where a version 3 window would keep it.
fn anchors_in(
    anchors: &[TimeAnchor],
    total: u64,
    start: u64,
    end: u64,
    first: bool,
) -> Vec<TimeAnchor> {
    anchors
        .iter()
        .filter_map(|a| {
            let p = total.checked_sub(a.slots_after)?;
            let inside = (start < p || (first && p == 0)) && p <= end;
            inside.then(|| TimeAnchor {
                slots_after: end - p,
                bound: a.bound,
            })
        })
        .collect()
}

/// The full counter of the run's newest record, as the backward walk recovers it.
fn newest_counter(run: &RunRef<'_>) -> Option<u64> {
    let last = *run.slots.last()?;
    let (hi, lo) = slot::unpack(last);
    if lo == slot::PAD {
        return None;
    }
    let mut clock = BackwardClock::new(run.reference);
    if let Some(a) = run.anchors.first().filter(|a| a.slots_after == 0) {
        clock.clamp(a.bound);
    }
    clock.step(hi)
}

/// The flush pair's wall clock at `counter` (⌊ticks · 10⁹ / hz⌋ back from the reference, as
/// the exporters' clock computes it), clamped at 0. An older run's newest counter is never after
/// the flush's reference (it is bounded by the next run's first counter, itself bounded by it).
fn wall_at(h: &crate::threads::ProcessHeader, counter: u64) -> u64 {
    let hz = u128::from(h.timer_hz.max(1));
    let back = u128::from(h.reference_counter.saturating_sub(counter)) * 1_000_000_000 / hz;
    u64::try_from(u128::from(h.wall_clock_ns).saturating_sub(back)).unwrap_or(0)
}

/// The entries of `symbols` that the run's entries name. A run that does not decode keeps what
/// the walk found before the error (the error surfaces when the run is decoded).
fn named_in(slots: &[u64], mode: Mode, symbols: &BTreeMap<u64, String>) -> BTreeMap<u64, String> {
    // A run enters a few thousand methods millions of times: a direct-mapped filter of the
    // methods last seen (64 Ki entries, so few methods share one) keeps the list near the
    // distinct ones and the sort below short. With every entry listed, `into_run_files` of a
    // 64 MiB pool took 221 ms, with 4 Ki entries 140 ms, with 64 Ki 79 ms: less than decoding
    // the runs (`examples/threads_cost.rs`, docs/trace-format.md §5).
    let mut recent = alloc::vec![0u64; 1 << 16];
    let mut methods = Vec::new();
    let _ = ring::walk_back(&RingView::linear(slots), mode, |record| {
        if let Record::Entry { method, .. } = record {
            let at = (method.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as usize;
            if recent[at] != method {
                recent[at] = method;
                methods.push(method);
            }
        }
    });
    methods.sort_unstable();
    methods.dedup();
    methods
        .into_iter()
        .filter_map(|m| symbols.get(&m).map(|name| (m, name.clone())))
        .collect()
}
