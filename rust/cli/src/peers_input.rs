//! Inputs of `export` and the analyses: trace files read and verified (not decoded: the
//! writers decode on the fly), named by their paths in every error.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use hubble_export::Input;
use hubble_format::TraceFile;
use indicatif::{ProgressBar, ProgressStyle};

/// A verified trace file and its path.
pub struct Loaded {
    pub name: String,
    pub file: TraceFile,
}

/// Whether progress bars may be drawn (stderr is a terminal).
fn interactive() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal()
}

/// A spinner while `what` runs over `loaded`, on a terminal only.
pub fn progress(loaded: &[Loaded], what: &str) -> Option<ProgressBar> {
    if !interactive() {
        return None;
    }
    let slots: usize = loaded.iter().map(|l| l.file.window.len()).sum();
    let bar = ProgressBar::new_spinner();
    bar.set_style(ProgressStyle::with_template("{spinner} {msg} [{elapsed}]").expect("template"));
    bar.set_message(format!(
        "{what} {} file(s), {} MiB of ring",
        loaded.len(),
        (slots * 8) >> 20
    ));
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

/// Reads and verifies every file, with a bar over bytes on a terminal.
pub fn load_all(paths: &[PathBuf]) -> Result<Vec<Loaded>> {
    let bar = if interactive() {
        let total: u64 = paths
            .iter()
            .map(|p| std::fs::metadata(p).map_or(0, |m| m.len()))
            .sum();
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("reading {bar:30} {bytes}/{total_bytes} {msg}")
                .expect("template"),
        );
        Some(bar)
    } else {
        None
    };
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        if let Some(bar) = &bar {
            bar.set_message(path.display().to_string());
        }
        out.push(load(path)?);
        if let Some(bar) = &bar {
            bar.inc(std::fs::metadata(path).map_or(0, |m| m.len()));
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(out)
}

/// Reads and verifies one file.
pub fn load(path: &Path) -> Result<Loaded> {
    let file = TraceFile::read(path).with_context(|| format!("{}", path.display()))?;
    Ok(Loaded {
        name: path.display().to_string(),
        file,
    })
}

/// The writers' view of the loaded files.
pub fn inputs(loaded: &[Loaded]) -> Vec<Input<'_>> {
    loaded
        .iter()
        .map(|l| Input {
            file: &l.file,
            name: &l.name,
        })
        .collect()
}
