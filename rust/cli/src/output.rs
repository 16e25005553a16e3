//! Output sinks: stdout, or a file that appears only when complete.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Runs `write` against stdout (`None` or `-`) or against a temporary file renamed to `path`
/// on success, so a failed run never leaves a partial output file.
pub fn with_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    match path {
        None => write_stdout(write),
        Some(p) if p.as_os_str() == "-" => write_stdout(write),
        Some(p) => {
            let tmp = temp_name(p);
            let result = (|| {
                let file = std::fs::File::create(&tmp)
                    .with_context(|| format!("{}: cannot create", tmp.display()))?;
                let mut out = BufWriter::new(file);
                write(&mut out)?;
                let file = out.into_inner().map_err(|e| e.into_error())?;
                file.sync_all()?;
                std::fs::rename(&tmp, p).with_context(|| format!("{}: cannot rename", p.display()))
            })();
            if result.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            result.with_context(|| format!("{}", p.display()))
        }
    }
}

fn write_stdout(write: impl FnOnce(&mut dyn Write) -> Result<()>) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    match write(&mut out).and_then(|()| out.flush().map_err(Into::into)) {
        Err(e) if is_broken_pipe(&e) => Ok(()),
        other => other,
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

fn temp_name(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".{}.tmp", std::process::id()));
    path.with_file_name(name)
}
