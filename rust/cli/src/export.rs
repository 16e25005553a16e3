//! `hubble export`: one or more trace files into a peer tool's format.

use std::path::PathBuf;

use anyhow::Result;
use clap::ValueEnum;
use hubble_export::Input;

use crate::output::with_output;
use crate::peers_input::{inputs, load_all};

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
}

#[derive(clap::Args)]
pub struct Args {
    /// Trace files (one per thread); several are merged on the wall clock.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum)]
    format: Format,
    /// Output file (`-` = stdout); it appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let loaded = load_all(&args.files)?;
    let inputs: Vec<Input<'_>> = inputs(&loaded);
    let bar = crate::peers_input::progress(&loaded, "exporting");
    let result = with_output(Some(&args.output), |out| {
        match args.format {
            Format::Perfetto => hubble_export::perfetto::write(&inputs, out)?,
            Format::Trace => hubble_export::android_trace::write(&inputs, out)?,
            Format::ChromeJson => hubble_export::chrome::write(&inputs, out)?,
            Format::Folded => hubble_export::folded::write_folded(&inputs, out)?,
            Format::Svg => hubble_export::folded::write_svg(&inputs, "Hubble method trace", out)?,
            Format::Nanoscope => hubble_export::nanoscope::write(&inputs, out)?,
        }
        Ok(())
    });
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    result
}
