//! The slot-for-slot proof of every flushed file, and the check that the jank file shows the
//! long frame its trigger saw.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, ensure, Context as _, Result};
use hubble_format::ring::{walk_back, RingView};
use hubble_format::{EventKind, Mode, RingWriter, TraceFile};

use crate::art_double::StopEvent;
use crate::workload::{op_kind, OpKind, Workload};

/// The outcome of one flushed file, checked.
#[derive(Clone, Debug)]
pub struct FileCheck {
    /// The file.
    pub path: PathBuf,
    /// Trigger reason in the header.
    pub reason: String,
    /// How the UI thread was stopped.
    pub forced: bool,
    /// First op not recorded (its trace point published the end, or the next op when forced).
    pub stop_op: usize,
    /// End position (byte offset in the ring).
    pub write_pos: u64,
    /// Window slots (all compared).
    pub slots: usize,
    /// Records in the window.
    pub records: usize,
    /// Pad slots in the window.
    pub pads: usize,
    /// Whether the window starts at its start record (else: the ring wrapped over it).
    pub has_start: bool,
    /// The first op the window holds.
    pub first_op: usize,
    /// Distinct methods and their symbols (all checked against the class table).
    pub symbols: usize,
    /// Op at which tracing resumed after this stop (first counter read after it), if it did.
    pub restart_op: Option<usize>,
}

/// What the proof compares the files with (kept so tests can re-check tampered files).
pub struct Evidence {
    /// The trace directory.
    pub dir: PathBuf,
    /// Ring address.
    pub ring_begin: u64,
    /// Stops observed.
    pub stops: Vec<StopEvent>,
    /// Restarts observed.
    pub restarts: Vec<usize>,
    /// Counter reads executed.
    pub counter_reads: u64,
    /// The stream.
    pub workload: Workload,
}

impl Evidence {
    /// Runs the slot-for-slot proof over the files in `dir` again.
    pub fn check(&self, ring_bytes: usize) -> Result<Vec<FileCheck>> {
        check_files(
            &self.dir,
            &self.workload,
            self.ring_begin,
            ring_bytes,
            &self.stops,
            &self.restarts,
            self.counter_reads,
        )
    }
}

/// The frame method the jank trigger watches (what `PrettyMethod` prints without the signature;
/// the workload's frames call it).
pub const FRAME_METHOD: &str = "android.view.Choreographer.doFrame";

/// The longest call of [`FRAME_METHOD`] in a trace file, from the file's own events (a call
/// still open at the end of the window counts until the file's reference counter): the file
/// must show the jank that the trigger saw. Fails if it is not above `threshold_ms`.
pub(crate) fn longest_frame_ms(path: &Path, w: &Workload, threshold_ms: u64) -> Result<u64> {
    let file = TraceFile::read(path)?;
    let decoded = file
        .decode_events()
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let is_frame = |m: u64| {
        w.table
            .name(m)
            .is_some_and(|n| n.contains(&format!(" {FRAME_METHOD}(")))
    };
    let mut stack: Vec<(bool, u64)> = Vec::new();
    let mut longest = 0u64;
    for e in &decoded.events {
        match e.kind {
            EventKind::Entry { method } => stack.push((is_frame(method), e.counter)),
            EventKind::Exit => {
                if let Some((true, t)) = stack.pop() {
                    longest = longest.max(e.counter - t);
                }
            }
            EventKind::Start => stack.clear(),
            EventKind::Task { .. } => {}
        }
    }
    for (frame, t) in stack {
        if frame {
            longest = longest.max(file.header.reference_counter.saturating_sub(t));
        }
    }
    let ms = longest * 1000 / file.header.timer_hz.max(1);
    ensure!(
        ms > threshold_ms,
        "{}: the longest {FRAME_METHOD} in the file ran {ms} ms, not above the trigger's {threshold_ms} ms",
        path.display()
    );
    Ok(ms)
}

/// The slot-for-slot proof: replays the stream through hubble-format's reference writer with
/// the tracing windows the hooks observed (on from a start record until a stop op, off until
/// the restart op), and compares every flushed file with the writer's window at that stop.
pub(crate) fn check_files(
    dir: &Path,
    w: &Workload,
    ring_begin: u64,
    ring_bytes: usize,
    stops: &[StopEvent],
    restarts: &[usize],
    counter_reads: u64,
) -> Result<Vec<FileCheck>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("no trace directory {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "hubble"));
    paths.sort();
    ensure!(!paths.is_empty(), "no trace file was written");
    let files: Vec<TraceFile> = paths
        .iter()
        .map(|p| TraceFile::read(p).with_context(|| format!("reading {}", p.display())))
        .collect::<Result<_>>()?;
    ensure!(
        files.len() == stops.len(),
        "{} files but {} stops observed",
        files.len(),
        stops.len()
    );
    let slots = ring_bytes / 8;
    let mut rw = RingWriter::new(Mode::Bits64, slots);
    rw.start(0);
    let mut recorded: Vec<usize> = Vec::new(); // ops recorded since the last start
    let mut records_before_last_window = 0u64;
    let mut op = 0;
    let mut out = Vec::new();
    for (k, (file, stop)) in files.iter().zip(stops).enumerate() {
        let path = &paths[k];
        // Tracing is on from `op` up to the stop op.
        ensure!(
            stop.op >= op,
            "stop {k} at op {} before tracing resumed at {op}",
            stop.op
        );
        for i in op..stop.op {
            match op_kind(w.ops[i]) {
                OpKind::Entry(m) => {
                    rw.entry(m, 0).map_err(|e| anyhow!("{e}"))?;
                    recorded.push(i);
                }
                OpKind::Exit => {
                    rw.exit(0);
                    recorded.push(i);
                }
                OpKind::Work(_) => {}
            }
        }
        // The published end position is where the reference writer is.
        ensure!(
            stop.end == ring_begin + rw.write_pos_bytes(),
            "{}: stop published end {:#x}, the reference writer is at {:#x}",
            path.display(),
            stop.end,
            ring_begin + rw.write_pos_bytes()
        );
        ensure!(
            file.header.write_pos == rw.write_pos_bytes(),
            "{}: header write_pos {} != {}",
            path.display(),
            file.header.write_pos,
            rw.write_pos_bytes()
        );
        // The reference window: what the decoder keeps of the reference ring.
        let view = rw.view();
        let summary = walk_back(&view, Mode::Bits64, |_| {}).map_err(|e| anyhow!("{e}"))?;
        let keep = summary.slots_used - usize::from(summary.dropped_half_record);
        let wpos = (rw.write_pos_bytes() / 8) as usize;
        let expected: Vec<u64> = (0..keep)
            .map(|j| rw.slots()[(wpos + slots * 2 - keep + j) % slots])
            .collect();
        ensure!(
            file.window.len() == expected.len(),
            "{}: window has {} slots, the ring could hold {} of the stream",
            path.display(),
            file.window.len(),
            expected.len()
        );
        for (j, (got, want)) in file.window.iter().zip(&expected).enumerate() {
            // Slots with a timestamp compare their low half (the writer used ts 0); pointer
            // slots of two-slot entries (high half non-zero) compare all 64 bits.
            let same = if want >> 32 != 0 {
                got == want
            } else {
                *got as u32 == *want as u32
            };
            ensure!(
                same,
                "{}: slot {j} of {} is {got:#018x}, the stream says {want:#018x}",
                path.display(),
                expected.len()
            );
        }
        // Records in the window and which ops they are.
        let rv = RingView::linear(&file.window);
        let mut n_records = 0usize;
        let mut has_start = false;
        let fs = walk_back(&rv, Mode::Bits64, |r| {
            if matches!(r, hubble_format::Record::Start { .. }) {
                has_start = true;
            } else {
                n_records += 1;
            }
        })
        .map_err(|e| anyhow!("{e}"))?;
        ensure!(
            n_records <= recorded.len(),
            "window longer than the recorded stream"
        );
        let first_op = if n_records == 0 {
            stop.op
        } else {
            recorded[recorded.len() - n_records]
        };
        // Symbols: every pointer named as the class table names it.
        let decoded = file
            .decode_events()
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let mut distinct = std::collections::BTreeSet::new();
        let mut last = 0u64;
        for e in &decoded.events {
            ensure!(
                e.counter >= last,
                "{}: timestamps go backwards",
                path.display()
            );
            last = e.counter;
            if let EventKind::Entry { method } = e.kind {
                distinct.insert(method);
                let want = w
                    .table
                    .name(method)
                    .context("pointer not in the class table")?;
                let got = file.symbols.get(&method).map(String::as_str);
                ensure!(
                    got == Some(want),
                    "{}: symbol of {method:#x} is {got:?}, want {want}",
                    path.display()
                );
            }
        }
        // The counter the emulated CPU read and the control plane's reference are one clock.
        let reference = file.header.reference_counter;
        ensure!(
            last <= reference && reference - last < 60 * file.header.timer_hz,
            "{}: last event at {last}, reference {reference}: not one clock",
            path.display()
        );
        let restart_op = restarts.get(k).copied();
        out.push(FileCheck {
            path: path.clone(),
            reason: file.header.reason.clone(),
            forced: stop.forced,
            stop_op: stop.op,
            write_pos: file.header.write_pos,
            slots: file.window.len(),
            records: n_records,
            pads: fs.pad_slots,
            has_start,
            first_op,
            symbols: distinct.len(),
            restart_op,
        });
        // Off until the restart, which writes a start record at the end position.
        match restart_op {
            Some(r) => {
                ensure!(r >= stop.op, "restart before the stop");
                rw.start(0);
                records_before_last_window += recorded.len() as u64;
                recorded.clear();
                op = r;
            }
            None => op = w.ops.len(),
        }
    }
    // After the last file: tracing stayed on to the end of the stream (the last restart).
    let mut total = records_before_last_window + recorded.len() as u64;
    for i in op..w.ops.len() {
        if !matches!(op_kind(w.ops[i]), OpKind::Work(_)) {
            total += 1;
        }
    }
    ensure!(
        total == counter_reads,
        "the emitted code completed {counter_reads} records, the stream says {total} records were written"
    );
    Ok(out)
}
