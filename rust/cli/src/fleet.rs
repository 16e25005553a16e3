//! `hubble fleet …`: runs `hubble-fleet …` (crate hubble-fleet, feature `engine`), so that the
//! `hubble` tool itself does not carry a query engine.

use std::ffi::OsString;
use std::path::PathBuf;

use anyhow::{Context, Result};

/// `hubble-fleet` next to this executable, else on `PATH`.
fn binary() -> PathBuf {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("hubble-fleet")));
    match beside {
        Some(path) if path.is_file() => path,
        _ => PathBuf::from("hubble-fleet"),
    }
}

pub fn run(args: &[OsString]) -> Result<()> {
    let bin = binary();
    let status = std::process::Command::new(&bin)
        .args(args)
        .status()
        .with_context(|| {
            format!(
                "cannot run {} (build it: cargo build --release -p hubble-fleet --features engine)",
                bin.display()
            )
        })?;
    if !status.success() {
        // hubble-fleet said what went wrong; keep its status.
        std::process::exit(status.code().unwrap_or(2));
    }
    Ok(())
}
