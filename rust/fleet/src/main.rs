//! `hubble-fleet` (run as `hubble fleet`): the standard fleet questions, or any SQL, over the
//! Parquet tables that `hubble export --format parquet` and `hubble summary --parquet` write,
//! on the embedded engine (Apache DataFusion). The same SQL runs unchanged on Spark, DuckDB,
//! BigQuery or Trino over the same files (`docs/fleet.md`).
//!
//! A binary of its own so that `hubble` does not carry a query engine: `hubble fleet …` runs
//! this one from the same directory.
#![deny(unsafe_op_in_unsafe_fn)]

use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use hubble_fleet::engine::{query, Rows, Value};
use hubble_fleet::queries;

/// Fleet questions over Hubble's Parquet tables, on an embedded engine (Apache DataFusion).
#[derive(Parser)]
#[command(name = "hubble fleet", version)]
struct Args {
    #[command(subcommand)]
    question: Question,
}

fn main() -> ExitCode {
    match run(Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hubble fleet: error: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// Writes to `path` (all or nothing: a temporary name renamed when complete) or stdout.
fn with_output(
    path: Option<&std::path::Path>,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    match path {
        None => {
            let stdout = std::io::stdout();
            let mut out = BufWriter::new(stdout.lock());
            write(&mut out)?;
            out.flush()?;
            Ok(())
        }
        Some(p) => {
            let name = p
                .file_name()
                .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
            let tmp = p.with_file_name(format!(".{name}.tmp"));
            let result = (|| -> Result<()> {
                let mut out = BufWriter::new(std::fs::File::create(&tmp)?);
                write(&mut out)?;
                out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
                std::fs::rename(&tmp, p)?;
                Ok(())
            })();
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result.with_context(|| format!("{}", p.display()))
        }
    }
}

#[derive(clap::Args)]
struct Common {
    /// The fleet directory (`traces/`, `calls/`, `summaries/` ... of Parquet parts).
    root: PathBuf,
    /// Print JSON (`{"columns": [...], "rows": [[...]]}`) instead of a table.
    #[arg(long)]
    json: bool,
    /// Worker threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Write here instead of stdout.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(clap::Subcommand)]
enum Question {
    /// Top methods by self time, per app version and anomaly reason.
    Top(Common),
    /// Methods whose share of jank self time grew most from one app version to another.
    Growth {
        #[command(flatten)]
        common: Common,
        /// The version before.
        #[arg(long)]
        base: String,
        /// The version after.
        #[arg(long)]
        head: String,
    },
    /// Anomalies (flushed traces) by device model and reason.
    Anomalies(Common),
    /// Matched signatures by device model, from uploaded summaries.
    Signatures(Common),
    /// Any SQL over the tables (traces, calls, summaries, summary_top, summary_signatures).
    Sql {
        #[command(flatten)]
        common: Common,
        /// The query.
        sql: String,
    },
}

fn run(args: Args) -> Result<()> {
    let (common, sql) = match &args.question {
        Question::Top(c) => (c, render("top", &[])?),
        Question::Growth { common, base, head } => (
            common,
            render(
                "growth",
                &[("base", base.as_str()), ("head", head.as_str())],
            )?,
        ),
        Question::Anomalies(c) => (c, render("anomalies", &[])?),
        Question::Signatures(c) => (c, render("signatures", &[])?),
        Question::Sql { common, sql } => (common, sql.clone()),
    };
    let threads = common.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    let rows =
        query(&common.root, &sql, threads).with_context(|| format!("{}", common.root.display()))?;
    with_output(common.output.as_deref(), |out| {
        if common.json {
            write_json(out, &rows)
        } else {
            write_table(out, &rows)
        }
    })
}

fn render(name: &str, params: &[(&str, &str)]) -> Result<String> {
    let q = queries::find(name).expect("a standard query");
    Ok(queries::render(&q, params)?)
}

fn write_json(out: &mut dyn Write, rows: &Rows) -> Result<()> {
    let value = |v: &Value| match v {
        Value::Null => serde_json::Value::Null,
        Value::Int(i) => serde_json::Value::from(*i),
        // serde_json writes the shortest text that reads back to the same f64.
        Value::Float(f) => serde_json::Value::from(*f),
        Value::Text(s) => serde_json::Value::from(s.as_str()),
    };
    let doc = serde_json::json!({
        "columns": rows.columns,
        "rows": rows.rows.iter().map(|r| r.iter().map(value).collect::<Vec<_>>()).collect::<Vec<_>>(),
    });
    serde_json::to_writer(&mut *out, &doc)?;
    writeln!(out)?;
    Ok(())
}

fn write_table(out: &mut dyn Write, rows: &Rows) -> Result<()> {
    let cell = |v: &Value| match v {
        Value::Null => "NULL".to_owned(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => format!("{f:.6}"),
        Value::Text(s) => s.clone(),
    };
    let cells: Vec<Vec<String>> = rows
        .rows
        .iter()
        .map(|r| r.iter().map(cell).collect())
        .collect();
    let mut widths: Vec<usize> = rows.columns.iter().map(|c| c.chars().count()).collect();
    for r in &cells {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    // The last column (usually a method name) is not padded.
    let line = |out: &mut dyn Write, items: &[String]| -> Result<()> {
        let n = items.len();
        for (i, (item, w)) in items.iter().zip(&widths).enumerate() {
            if i + 1 == n {
                write!(out, "{item}")?;
            } else {
                write!(out, "{item:<w$}  ")?;
            }
        }
        writeln!(out)?;
        Ok(())
    };
    line(out, &rows.columns)?;
    for r in &cells {
        line(out, r)?;
    }
    writeln!(out, "({} rows)", cells.len())?;
    Ok(())
}
