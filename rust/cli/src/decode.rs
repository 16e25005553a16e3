//! `hubble decode`: events of a trace file or a raw ring dump.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::ValueEnum;
use hubble_format::{counter_to_ns, EventKind, Mode};

use crate::input::{self, Loaded, RawRing};
use crate::output::with_output;

#[derive(Clone, Copy, ValueEnum)]
pub enum Format {
    /// `<ns>:<method>` per entry, `<ns>:POP` per exit, oldest first (Nanoscope's text format).
    Nanoscope,
    /// An indented call tree with durations in microseconds.
    Tree,
    /// The Nanoscope text with the full timer value in place of ns: `<counter>:<method>`,
    /// `<counter>:POP`. Exact for clocks faster than 1 GHz (the x86 time-stamp counter), where
    /// ns lose ticks.
    Ticks,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum RawMode {
    #[value(name = "64")]
    Bits64,
    #[value(name = "32")]
    Bits32,
}

#[derive(clap::Args)]
pub struct Args {
    /// A trace file written by the runtime.
    #[arg(required_unless_present = "raw", conflicts_with = "raw")]
    file: Option<PathBuf>,
    /// A raw ring dump (little-endian u64 slots), e.g. from a debugger or core file.
    #[arg(long, value_name = "RING.bin", requires_all = ["mode", "write_pos", "ref_counter", "timer_hz"])]
    raw: Option<PathBuf>,
    /// Raw import: execution mode of the traced process.
    #[arg(long, requires = "raw")]
    mode: Option<RawMode>,
    /// Raw import: byte offset of the next slot to be written.
    #[arg(long, value_name = "BYTES", requires = "raw")]
    write_pos: Option<u64>,
    /// Raw import: bytes before the write position (wrapping) that hold data [default: the whole ring].
    #[arg(long, value_name = "BYTES", requires = "raw")]
    valid: Option<u64>,
    /// Raw import: the full 64-bit timer value read when the ring was dumped.
    #[arg(long, value_name = "N", requires = "raw")]
    ref_counter: Option<u64>,
    /// Raw import: timer frequency in Hz.
    #[arg(long, value_name = "N", requires = "raw")]
    timer_hz: Option<u64>,
    /// Raw import: symbols, lines of `<pointer in hex>\t<pretty name>`.
    #[arg(long, value_name = "TSV", requires = "raw")]
    symbols: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "nanoscope")]
    format: Format,
    /// Write here instead of stdout (`-` = stdout); the file appears only when complete.
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<()> {
    let loaded = match (&args.file, &args.raw) {
        (Some(path), None) => match input::load_any(path)? {
            input::Any::Single(loaded) => *loaded,
            input::Any::Threads(runs) => {
                return with_output(args.output.as_deref(), |out| {
                    write_threads(&runs, args.format, out)
                })
            }
        },
        (None, Some(path)) => input::load_raw(&RawRing {
            path,
            mode: match args.mode {
                Some(RawMode::Bits32) => Mode::Bits32,
                _ => Mode::Bits64,
            },
            write_pos: args.write_pos.unwrap_or_default(),
            valid: args.valid,
            reference: args.ref_counter.unwrap_or_default(),
            timer_hz: args.timer_hz.unwrap_or_default(),
            symbols: args.symbols.as_deref(),
        })?,
        _ => bail!("give either a trace file or --raw RING.bin"),
    };
    with_output(args.output.as_deref(), |out| match args.format {
        Format::Nanoscope => write_nanoscope(&loaded, out),
        Format::Ticks => write_events(&loaded, out, |counter| counter),
        Format::Tree => write_tree(&loaded, out),
    })
}

/// Nanoscope's text format: entries and exits, oldest first; a start record prints nothing.
pub fn write_nanoscope(loaded: &Loaded, out: &mut dyn Write) -> Result<()> {
    let hz = loaded.file.header.timer_hz;
    write_events(loaded, out, |counter| counter_to_ns(counter, hz))
}

/// Entries and exits, oldest first, each time printed as `time(counter)`; task records are left
/// out.
fn write_events(loaded: &Loaded, out: &mut dyn Write, time: impl Fn(u64) -> u64) -> Result<()> {
    for event in &loaded.decoded.events {
        let ns = time(event.counter);
        match event.kind {
            EventKind::Entry { method } => writeln!(
                out,
                "{ns}:{}",
                input::method_name(&loaded.file.symbols, method)
            )?,
            EventKind::Exit => writeln!(out, "{ns}:POP")?,
            // Task records are not method events (Nanoscope's format has no line for them):
            // `hubble tasks` reads them.
            EventKind::Start | EventKind::Task { .. } => {}
        }
    }
    Ok(())
}

/// A version 4 file: each thread's runs in order, each under a line naming the thread, the run
/// and its blocks' `seq` span, with a line before a run that follows lost records (blocks the
/// pool overwrote or records it dropped: `seq` values missing).
fn write_threads(runs: &[input::LoadedRun], format: Format, out: &mut dyn Write) -> Result<()> {
    for r in runs {
        let h = &r.loaded.file.header;
        writeln!(
            out,
            "thread {} {}, run {} of {}, seq {}..{}",
            h.tid,
            h.thread_name,
            r.run + 1,
            r.runs,
            r.seq.first,
            r.seq.last
        )?;
        if r.seq.lost_before > 0 {
            writeln!(
                out,
                "records lost before this run ({} seq missing: blocks overwritten or records \
                 dropped)",
                r.seq.lost_before
            )?;
        }
        match format {
            Format::Nanoscope => write_nanoscope(&r.loaded, out)?,
            Format::Ticks => write_events(&r.loaded, out, |counter| counter)?,
            Format::Tree => write_tree_ending(
                &r.loaded,
                out,
                if r.run + 1 == r.runs {
                    " (running at flush)"
                } else {
                    " (open at the run's end)"
                },
            )?,
        }
    }
    Ok(())
}

fn write_tree(loaded: &Loaded, out: &mut dyn Write) -> Result<()> {
    write_tree_ending(loaded, out, " (running at flush)")
}

/// The call tree; frames still open at the window's end are marked with `open_mark`.
fn write_tree_ending(loaded: &Loaded, out: &mut dyn Write, open_mark: &str) -> Result<()> {
    let hz = loaded.file.header.timer_hz;
    let tree = hubble_format::build_tree(
        &loaded.decoded.events,
        loaded.file.header.reference_counter,
        Default::default(),
    );
    for frame in &tree.frames {
        let name = match frame.method {
            Some(m) => input::method_name(&loaded.file.symbols, m).into_owned(),
            None => String::from("<entered before the window>"),
        };
        let us = counter_to_ns(frame.duration(), hz) as f64 / 1000.0;
        let open = if frame.open_at_end { open_mark } else { "" };
        writeln!(
            out,
            "{:indent$}{name}  {us:.3} us{open}",
            "",
            indent = 2 * frame.depth as usize
        )?;
    }
    Ok(())
}
