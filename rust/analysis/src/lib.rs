//! hubble-analysis: the analyses Hubble runs on the device (§7), so that a summary — not the
//! trace — is what leaves it.
//!
//! * [`top`]: methods by self and inclusive time, with call counts;
//! * [`chains`]: the heaviest call chains in a time window (default: the last N ms before the
//!   flush, the anomaly's neighbourhood);
//! * [`signatures`]: "performance bug models" — method-name and call-chain patterns — matched
//!   against the frames;
//! * [`summary`]: the privacy-preserving report: top-N, matched signatures and chain shapes,
//!   method names and durations only;
//! * [`tasks`]: asynchronous task executions per thread; [`queuing`]: their queuing time, pool
//!   capacity and queue length from the runtime's task records (DiagDroid).
//!
//! Every analysis streams each input's events once through [`walk::walk`] (a stack machine
//! over the decoder's iterator) and keeps per-method or per-path tables, never the events.

pub mod chains;
pub mod queuing;
pub mod signatures;
pub mod summary;
pub mod tasks;
pub mod top;
pub mod walk;

pub use hubble_format::stream::Input;

/// Why an analysis failed.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// An input could not be decoded.
    #[error(transparent)]
    Input(#[from] hubble_format::stream::InputError),
    /// The analysis cannot be made of these inputs.
    #[error("{0}")]
    Unsupported(String),
    /// A signature file is malformed.
    #[error("{file}:{line}: {problem}")]
    Signature {
        /// The file's name.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        problem: String,
    },
}

/// Result of the analyses.
pub type Result<T> = std::result::Result<T, AnalysisError>;

/// Formats nanoseconds as milliseconds with three decimals.
pub fn ms(ns: u64) -> String {
    format!("{}.{:03}", ns / 1_000_000, (ns / 1000) % 1000)
}
