//! hubble-fleet: traces and summaries as Parquet, the columnar files that fleet engines
//! (Spark, BigQuery, Trino, DuckDB, DataFusion) ingest, and the standard fleet questions as SQL.
//!
//! * [`schema`]: the tables, their columns and the schema version (`docs/fleet.md`);
//! * [`tables`]: trace files and summaries into Arrow record batches;
//! * [`write`]: record batches into Parquet files that appear only when complete;
//! * [`queries`]: the standard questions, one SQL text each, the same text for every engine;
//! * [`engine`] (feature `engine`): those questions, and any SQL, on Apache DataFusion.
#![deny(unsafe_op_in_unsafe_fn)]

#[cfg(feature = "engine")]
pub mod engine;
pub mod queries;
pub mod schema;
pub mod tables;
pub mod write;

/// Why a fleet operation failed.
#[derive(Debug, thiserror::Error)]
pub enum FleetError {
    /// A trace could not be decoded or walked.
    #[error(transparent)]
    Analysis(#[from] hubble_analysis::AnalysisError),
    /// Arrow refused a batch (a column of the wrong length or type: a bug here).
    #[error("building a table: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// Writing or reading Parquet failed.
    #[error("{path}: {source}")]
    Parquet {
        /// The file.
        path: String,
        /// What went wrong.
        source: parquet::errors::ParquetError,
    },
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// A Parquet file that is not one of ours, or of another schema version.
    #[error("{path}: {problem}")]
    Schema {
        /// The file.
        path: String,
        /// What is wrong.
        problem: String,
    },
    /// A query parameter that cannot be used.
    #[error("{0}")]
    Parameter(String),
}

/// Result of fleet operations.
pub type Result<T> = std::result::Result<T, FleetError>;
