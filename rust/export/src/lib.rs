//! hubble-export: writers for the tools Hubble traces are read in.
//!
//! Every writer takes one or more decoded-on-the-fly inputs ([`Input`]: a trace file and the
//! name to use in messages), merges the threads in wall-clock order (each file's timer values
//! are placed on the wall clock through its own reference pair) and streams the result: no
//! writer materializes the events of a window; memory is the raw windows plus per-method tables.
//!
//! * [`perfetto`]: Perfetto `TracePacket` protobuf (track descriptors, interned slice names),
//!   alone or beside a system trace ([`system_trace`]);
//! * [`android_trace`]: Android's method-trace format (`.trace`, version 3, `clock=wall`);
//! * [`chrome`]: Chrome trace-event JSON (`B`/`E`);
//! * [`folded`]: folded stacks and an inferno flame-graph SVG;
//! * [`nanoscope`]: Nanoscope's text format (one thread).
//!
//! Each writer's `write` takes one thread per input; `write_threads` takes which thread each
//! input belongs to ([`one_thread_per_input`] is what `write` passes), so the runs of one
//! thread in a version 4 file (`hubble_format::ThreadsFile::into_run_files`: one input per run,
//! runs of a thread never overlapping in time) share one Perfetto track, one `.trace` thread,
//! one Chrome thread and one flame-graph root.
//!
//! Frames whose entry was overwritten before the flush (the ring wrapped) begin at the window
//! start under the name [`BEFORE_WINDOW`]; frames still running at the flush end at the flush.

pub mod android_trace;
pub mod chrome;
pub mod folded;
pub mod nanoscope;
pub mod perfetto;
pub mod system_trace;

/// The generated Perfetto protobuf types (a trimmed subset, see `protos/perfetto_trace.proto`).
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/perfetto.protos.rs"));
}

pub use hubble_format::stream::{Input, Step};

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// An input could not be decoded.
    #[error(transparent)]
    Input(#[from] hubble_format::stream::InputError),
    /// The format cannot hold this input.
    #[error("{0}")]
    Unsupported(String),
    /// The system trace the export is written beside cannot be read.
    #[error(transparent)]
    System(#[from] system_trace::SystemTraceError),
    /// Writing the output failed.
    #[error("write failed: {0}")]
    Io(#[from] std::io::Error),
}

/// Result of the writers.
pub type Result<T> = std::result::Result<T, ExportError>;

/// Each input its own thread: what the writers' `write` functions assume.
pub fn one_thread_per_input(inputs: usize) -> Vec<usize> {
    (0..inputs).collect()
}

/// Checks a `threads` argument: one entry per input.
fn check_threads(inputs: &[Input<'_>], threads: &[usize]) -> Result<()> {
    if threads.len() != inputs.len() {
        return Err(ExportError::Unsupported(format!(
            "{} thread numbers for {} inputs",
            threads.len(),
            inputs.len()
        )));
    }
    Ok(())
}

/// Whether input `i` is the first of its thread (the one that names the thread).
fn first_of_thread(threads: &[usize], i: usize) -> bool {
    !threads[..i].contains(&threads[i])
}
