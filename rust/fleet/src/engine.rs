//! The embedded engine behind `hubble fleet`: Apache DataFusion over the fleet layout.
//!
//! Every part is checked ([`crate::write::check_part`]) before a query runs, so a file of
//! another schema version is named with a clear error instead of being misread or silently
//! dropped by the engine's schema merging.

use std::path::Path;
use std::sync::Arc;

use arrow_array::{Array, RecordBatch};
use arrow_schema::DataType;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};

use crate::schema::TABLES;
use crate::write::check_part;
use crate::{FleetError, Result};

/// A query's result, engine-independent.
#[derive(Clone, Debug, PartialEq)]
pub struct Rows {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows of values.
    pub rows: Vec<Vec<Value>>,
}

/// One value of a result.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// Any integer column.
    Int(i64),
    /// Any floating-point column.
    Float(f64),
    /// Text, and any other type as the engine displays it.
    Text(String),
}

fn engine_error(e: impl std::fmt::Display) -> FleetError {
    FleetError::Parameter(format!("query failed: {e}"))
}

/// The tables present under `root`, their parts checked: `(table name, directory)`.
pub fn tables(root: &Path) -> Result<Vec<(&'static str, std::path::PathBuf)>> {
    let mut out = Vec::new();
    for table in TABLES {
        let dir = root.join(table.name());
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut parts = 0usize;
        for entry in entries {
            let path = entry
                .map_err(|source| FleetError::Io {
                    path: dir.display().to_string(),
                    source,
                })?
                .path();
            if path.extension().is_some_and(|e| e == "parquet")
                && !path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                let found = check_part(&path)?;
                if found != table {
                    return Err(FleetError::Schema {
                        path: path.display().to_string(),
                        problem: format!(
                            "a `{}` table in the `{}` directory",
                            found.name(),
                            table.name()
                        ),
                    });
                }
                parts += 1;
            }
        }
        if parts > 0 {
            out.push((table.name(), dir));
        }
    }
    if out.is_empty() {
        return Err(FleetError::Schema {
            path: root.display().to_string(),
            problem: "no fleet tables here (want traces/, calls/, summaries/ ... of Parquet \
                      parts, as `hubble export --format parquet -o DIR` writes them)"
                .into(),
        });
    }
    Ok(out)
}

/// Runs `sql` over the tables under `root` on `threads` worker threads.
pub fn query(root: &Path, sql: &str, threads: usize) -> Result<Rows> {
    let tables = tables(root)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads.max(1))
        .build()
        .map_err(|source| FleetError::Io {
            path: "tokio runtime".into(),
            source,
        })?;
    runtime.block_on(async {
        let config = SessionConfig::new().with_target_partitions(threads.max(1));
        let ctx = SessionContext::new_with_config(config);
        for (name, dir) in &tables {
            let dir = format!("{}/", dir.display());
            ctx.register_parquet(*name, &dir, ParquetReadOptions::default())
                .await
                .map_err(engine_error)?;
        }
        let frame = ctx.sql(sql).await.map_err(engine_error)?;
        let schema = Arc::clone(frame.schema().inner());
        let batches = frame.collect().await.map_err(engine_error)?;
        let columns = schema.fields().iter().map(|f| f.name().clone()).collect();
        let mut rows = Vec::new();
        for batch in &batches {
            append_rows(batch, &mut rows)?;
        }
        Ok(Rows { columns, rows })
    })
}

fn append_rows(batch: &RecordBatch, rows: &mut Vec<Vec<Value>>) -> Result<()> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Float64Type, Int32Type, Int64Type, UInt64Type};
    let formatters: Vec<_> = batch
        .columns()
        .iter()
        .map(|c| {
            arrow_cast::display::ArrayFormatter::try_new(c.as_ref(), &Default::default())
                .map_err(FleetError::Arrow)
        })
        .collect::<Result<_>>()?;
    for r in 0..batch.num_rows() {
        let mut row = Vec::with_capacity(batch.num_columns());
        for (c, column) in batch.columns().iter().enumerate() {
            if column.is_null(r) {
                row.push(Value::Null);
                continue;
            }
            row.push(match column.data_type() {
                DataType::Int64 => Value::Int(column.as_primitive::<Int64Type>().value(r)),
                DataType::Int32 => {
                    Value::Int(i64::from(column.as_primitive::<Int32Type>().value(r)))
                }
                DataType::UInt64 => Value::Int(
                    i64::try_from(column.as_primitive::<UInt64Type>().value(r)).unwrap_or(i64::MAX),
                ),
                DataType::Float64 => Value::Float(column.as_primitive::<Float64Type>().value(r)),
                DataType::Float32 => {
                    Value::Float(f64::from(column.as_primitive::<Float32Type>().value(r)))
                }
                DataType::Utf8 => Value::Text(column.as_string::<i32>().value(r).to_owned()),
                DataType::LargeUtf8 => Value::Text(column.as_string::<i64>().value(r).to_owned()),
                DataType::Utf8View => Value::Text(column.as_string_view().value(r).to_owned()),
                _ => Value::Text(formatters[c].value(r).to_string()),
            });
        }
        rows.push(row);
    }
    Ok(())
}
