//! The tables and their versioned schema.
//!
//! Every file carries `hubble.table` (which table) and `hubble.schema` (the version) in its
//! Parquet key-value metadata, so a reader refuses a file of another version instead of
//! misreading it. Integers are signed 64-bit (Spark, BigQuery and Trino have no unsigned
//! types); times are nanoseconds; text is UTF-8.

use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef};

/// Version of every table's schema. A change that drops, renames or retypes a column bumps it;
/// readers accept only the version they know.
pub const SCHEMA_VERSION: u32 = 1;
/// Parquet key-value metadata key naming the table.
pub const TABLE_KEY: &str = "hubble.table";
/// Parquet key-value metadata key holding [`SCHEMA_VERSION`].
pub const VERSION_KEY: &str = "hubble.schema";

/// A table of the fleet layout: files under `<root>/<name>/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// One row per trace file: the header's metadata.
    Traces,
    /// One row per completed call.
    Calls,
    /// One row per summary: what it was computed with and the device class it came from.
    Summaries,
    /// One row per method of a summary's top list.
    SummaryTop,
    /// One row per signature a summary matched.
    SummarySignatures,
}

/// Every table, in the order `docs/fleet.md` lists them.
pub const TABLES: [Table; 5] = [
    Table::Traces,
    Table::Calls,
    Table::Summaries,
    Table::SummaryTop,
    Table::SummarySignatures,
];

/// Metadata keys of the trace format (version 3) that become columns, with their column names.
/// Other keys are not exported: a column set that changes with the input would break the
/// queries' portability.
pub const METADATA_COLUMNS: [(&str, &str); 6] = [
    ("app.version", "app_version"),
    ("device.manufacturer", "device_manufacturer"),
    ("device.model", "device_model"),
    ("build.fingerprint", "build_fingerprint"),
    ("android.sdk", "android_sdk"),
    ("cpu.abi", "cpu_abi"),
];

impl Table {
    /// The directory (and SQL table) name.
    pub fn name(self) -> &'static str {
        match self {
            Table::Traces => "traces",
            Table::Calls => "calls",
            Table::Summaries => "summaries",
            Table::SummaryTop => "summary_top",
            Table::SummarySignatures => "summary_signatures",
        }
    }

    /// The table of a directory name.
    pub fn from_name(name: &str) -> Option<Table> {
        TABLES.into_iter().find(|t| t.name() == name)
    }

    /// The Arrow schema.
    pub fn schema(self) -> SchemaRef {
        let text = |name: &str| Field::new(name, DataType::Utf8, false);
        let opt_text = |name: &str| Field::new(name, DataType::Utf8, true);
        let int = |name: &str| Field::new(name, DataType::Int64, false);
        let meta = || METADATA_COLUMNS.iter().map(|(_, c)| opt_text(c));
        let fields: Vec<Field> = match self {
            Table::Traces => [text("trace_id"), text("file"), text("app"), text("reason")]
                .into_iter()
                .chain(meta())
                .chain([
                    int("pid"),
                    int("tid"),
                    text("thread"),
                    int("isa_bits"),
                    int("timer_hz"),
                    int("flush_wall_ns"),
                    int("window_start_ns"),
                    int("window_end_ns"),
                    int("ring_bytes"),
                    int("window_slots"),
                    int("symbols"),
                    int("calls"),
                ])
                .collect(),
            Table::Calls => vec![
                text("trace_id"),
                int("tid"),
                text("method"),
                Field::new("depth", DataType::Int32, false),
                int("start_ns"),
                int("duration_ns"),
                int("self_ns"),
                opt_text("parent"),
            ],
            // No file name: a runtime's names carry the pid, tid and reason, which a summary
            // deliberately leaves out (docs/fleet.md, "Privacy").
            Table::Summaries => [text("summary_id")]
                .into_iter()
                .chain(meta())
                .chain([int("summary_schema"), int("chain_window_ns")])
                .collect(),
            Table::SummaryTop => vec![
                text("summary_id"),
                Field::new("rank", DataType::Int32, false),
                text("method"),
                int("calls"),
                int("self_ns"),
                int("inclusive_ns"),
            ],
            Table::SummarySignatures => vec![
                text("summary_id"),
                text("signature"),
                int("matches"),
                int("total_ns"),
                int("max_ns"),
            ],
        };
        Arc::new(Schema::new(fields))
    }
}
