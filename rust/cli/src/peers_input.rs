//! Inputs of `export` and the analyses: trace files read and verified (not decoded: the
//! writers decode on the fly), named by their paths in every error. A version 4 file (every
//! thread of a process) becomes one input per run of each thread
//! (`ThreadsFile::into_run_files`), the runs of a thread sharing one thread number, so the
//! writers give the thread one track and the analyses one report.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use hubble_format::stream::Input;
use hubble_format::{Trace, TraceFile};
use indicatif::{ProgressBar, ProgressStyle};

/// A verified trace file (or one run of a version 4 file) and its name.
pub struct Loaded {
    pub name: String,
    pub file: TraceFile,
    /// The thread it belongs to: one number per file of versions 1–3, one per thread section of
    /// a version 4 file, distinct across files.
    pub thread: usize,
    /// The flush's reference counter (a version 4 run that is not its thread's newest ends
    /// before it).
    pub flush: u64,
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
    let mut threads = 0;
    for path in paths {
        if let Some(bar) = &bar {
            bar.set_message(path.display().to_string());
        }
        let mut loaded = load(path, None)?;
        let first = threads;
        for l in &mut loaded {
            l.thread += first;
            threads = threads.max(l.thread + 1);
        }
        out.extend(loaded);
        if let Some(bar) = &bar {
            bar.inc(std::fs::metadata(path).map_or(0, |m| m.len()));
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(out)
}

/// Reads and verifies one file: one input, or one per run of a version 4 file, with thread
/// numbers from 0; its names deobfuscated (`--mapping`) with the mapping of `version` if
/// given, else of the file's own `app.version`.
pub fn load(path: &Path, version: Option<&str>) -> Result<Vec<Loaded>> {
    let mut trace = Trace::read(path).with_context(|| format!("{}", path.display()))?;
    crate::deobf::apply(&mut trace, version, &path.display().to_string())?;
    Ok(match trace {
        Trace::Single(file) => vec![Loaded {
            name: path.display().to_string(),
            flush: file.header.reference_counter,
            file,
            thread: 0,
        }],
        Trace::Threads(file) => {
            let flush = file.header.reference_counter;
            file.into_run_files()
                .into_iter()
                .map(|r| Loaded {
                    name: format!(
                        "{} (tid {}, run {} of {})",
                        path.display(),
                        r.file.header.tid,
                        r.run + 1,
                        r.runs
                    ),
                    file: r.file,
                    thread: r.section,
                    flush,
                })
                .collect()
        }
    })
}

/// The thread number of every input ([`inputs`]' order).
pub fn threads(loaded: &[Loaded]) -> Vec<usize> {
    loaded.iter().map(|l| l.thread).collect()
}

/// The flush counter of every input ([`inputs`]' order).
pub fn flushes(loaded: &[Loaded]) -> Vec<u64> {
    loaded.iter().map(|l| l.flush).collect()
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
