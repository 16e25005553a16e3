//! `hubble export`: one or more trace files into a peer tool's format.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::ValueEnum;
use hubble_export::system_trace::SystemTrace;
use hubble_export::Input;

use crate::output::with_output;
use crate::peers_input::{inputs, load_all, threads};

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// Perfetto TracePacket protobuf (ui.perfetto.dev, trace_processor).
    Perfetto,
    /// Android method trace, version 3 (Android Studio, dmtracedump).
    Trace,
    /// Chrome trace-event JSON (B/E events).
    ChromeJson,
    /// Folded stacks (self time in ns), for flamegraph.pl / inferno.
    Folded,
    /// Flame-graph SVG of self time (inferno).
    Svg,
    /// Nanoscope text (one thread).
    Nanoscope,
    /// Parquet tables for fleet engines (Spark, BigQuery, Trino, DuckDB, `hubble fleet`): OUT
    /// is a directory; `traces/` and `calls/` parts are added under it (docs/fleet.md).
    Parquet,
}

#[derive(clap::Args)]
pub struct Args {
    /// Trace files (one per thread); several are merged on the wall clock.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum)]
    format: Format,
    /// Output file (`-` = stdout); it appears only when complete. For `parquet`, a directory.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Metadata to record with every trace, overriding the file's own (`parquet` only), e.g.
    /// `app.version=4.2.0`: ART does not know the app's version, the ingest step does.
    #[arg(long, value_name = "KEY=VALUE")]
    meta: Vec<String>,
    /// A Perfetto system trace of the same device (`perfetto` only): the output is its packets,
    /// unchanged, then Hubble's slices on its timeline (through its clock snapshots) and on its
    /// threads (same pid and tid).
    #[arg(long = "with", value_name = "SYSTEM.perfetto-trace")]
    with: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    if let Format::Parquet = args.format {
        return crate::parquet::export(&args.files, &args.output, &args.meta);
    }
    anyhow::ensure!(
        args.meta.is_empty(),
        "--meta is for --format parquet (the other formats have no place for it)"
    );
    anyhow::ensure!(
        args.with.is_none() || matches!(args.format, Format::Perfetto),
        "--with is for --format perfetto (a system trace is a Perfetto trace)"
    );
    let loaded = load_all(&args.files)?;
    let mut system = match &args.with {
        Some(path) => {
            let name = path.display().to_string();
            let file = std::fs::File::open(path).with_context(|| name.clone())?;
            Some(SystemTrace::scan(name, file)?)
        }
        None => None,
    };
    let inputs: Vec<Input<'_>> = inputs(&loaded);
    // Which thread each input is: runs of one thread in a version 4 file share it.
    let threads = threads(&loaded);
    let bar = crate::peers_input::progress(&loaded, "exporting");
    let result = with_output(Some(&args.output), |out| {
        use hubble_export::{android_trace, chrome, folded, nanoscope, perfetto};
        match args.format {
            Format::Perfetto => match &mut system {
                Some(system) => perfetto::write_threads_beside(&inputs, &threads, system, out)?,
                None => perfetto::write_threads(&inputs, &threads, out)?,
            },
            Format::Trace => android_trace::write_threads(&inputs, &threads, out)?,
            Format::ChromeJson => chrome::write_threads(&inputs, &threads, out)?,
            Format::Folded => folded::write_folded_threads(&inputs, &threads, out)?,
            Format::Svg => {
                folded::write_svg_threads(&inputs, &threads, "Hubble method trace", out)?
            }
            Format::Nanoscope => nanoscope::write_threads(&inputs, &threads, out)?,
            Format::Parquet => unreachable!("handled above"),
        }
        Ok(())
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result
}
