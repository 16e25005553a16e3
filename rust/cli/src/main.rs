//! `hubble`: inspect, decode, export and analyse Hubble method traces.
#![deny(unsafe_op_in_unsafe_fn)]

mod decode;
mod info;
mod input;
mod output;

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
}

#[derive(Subcommand)]
enum Command {
    /// Print a trace file's metadata and window statistics.
    Info(info::Args),
    /// Decode a trace file (or a raw ring dump) into events.
    Decode(decode::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => info::run(args),
        Command::Decode(args) => decode::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("hubble: error: {error:#}");
            ExitCode::from(2)
        }
    }
}
