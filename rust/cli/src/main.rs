//! `hubble`: inspect, decode, export and analyse Hubble method traces.
#![deny(unsafe_op_in_unsafe_fn)]

mod analyze;
mod decode;
#[cfg(feature = "deobf")]
mod deobf;
#[cfg(not(feature = "deobf"))]
#[path = "deobf_absent.rs"]
mod deobf;
mod export;
mod fleet;
mod info;
mod input;
mod output;
#[cfg(feature = "parquet")]
mod parquet;
#[cfg(not(feature = "parquet"))]
#[path = "parquet_absent.rs"]
mod parquet;
mod peers_input;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "hubble",
    version,
    about = "Inspect, decode, export and analyse Hubble method traces"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// ProGuard/R8 mapping file: every method name printed or written is deobfuscated
    /// (docs/deobfuscation.md). `VERSION=FILE` applies to the traces whose `app.version` is
    /// VERSION (repeat it for several versions); a plain FILE to every other trace.
    #[arg(long, global = true, value_name = "[VERSION=]FILE")]
    mapping: Vec<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Print a trace file's metadata and window statistics.
    Info(info::Args),
    /// Decode a trace file (or a raw ring dump) into events.
    Decode(decode::Args),
    /// Export trace files (threads merged on the wall clock) for Perfetto, Android Studio
    /// (.trace), Chrome, flame graphs or Nanoscope.
    Export(export::Args),
    /// Methods by self and inclusive time, with call counts.
    Top(analyze::TopArgs),
    /// The heaviest call chains in the last N ms before the flush.
    Chains(analyze::ChainsArgs),
    /// Match signature files (method and call-chain patterns) against traces.
    Match(analyze::MatchArgs),
    /// The privacy-preserving summary meant to leave the device.
    Summary(analyze::SummaryArgs),
    /// Asynchronous tasks (DiagDroid style): executions per thread and task, scheduling calls,
    /// and from task records queuing time, pool capacity and queue length per submitting site.
    Tasks(analyze::TasksArgs),
    /// Fleet questions over Parquet tables (`export --format parquet`) on an embedded engine
    /// (runs the `hubble-fleet` binary next to this one; `hubble fleet --help`).
    #[command(disable_help_flag = true)]
    Fleet {
        /// Arguments for `hubble-fleet`.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = run(cli);
    for line in deobf::messages() {
        eprintln!("{line}");
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hubble: error: {error:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    if !cli.mapping.is_empty() && matches!(cli.command, Command::Fleet { .. }) {
        anyhow::bail!(
            "--mapping: fleet tables hold the names `export --format parquet` and `summary \
             --parquet` wrote; give --mapping to those (docs/deobfuscation.md)"
        );
    }
    deobf::init(&cli.mapping)?;
    match cli.command {
        Command::Info(args) => info::run(args),
        Command::Decode(args) => decode::run(args),
        Command::Export(args) => export::run(args),
        Command::Top(args) => analyze::run_top(args),
        Command::Chains(args) => analyze::run_chains(args),
        Command::Match(args) => analyze::run_match(args),
        Command::Summary(args) => analyze::run_summary(args),
        Command::Tasks(args) => analyze::run_tasks(args),
        Command::Fleet { args } => fleet::run(&args),
    }
}
