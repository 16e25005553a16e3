//! Loading inputs: trace files, raw ring dumps, symbol tables. Every error names the file;
//! names are deobfuscated here (`--mapping`, [`crate::deobf`]) before anything reads them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use hubble_format::{DecodedTrace, Mode, RingView, Trace, TraceFile};

/// A decoded input: events plus what is needed to name and place them.
pub struct Loaded {
    pub path: PathBuf,
    pub file: TraceFile,
    pub decoded: DecodedTrace,
}

/// A trace file of any version, decoded.
pub enum Any {
    /// Versions 1–3: one thread's window.
    Single(Box<Loaded>),
    /// Version 4: every run of every thread, threads by tid, runs oldest first.
    Threads(Vec<LoadedRun>),
}

/// One run of a version 4 file, decoded as a window of its own (`ThreadsFile::into_run_files`).
pub struct LoadedRun {
    pub loaded: Loaded,
    /// Index of the run in its thread, and the thread's run count.
    pub run: usize,
    pub runs: usize,
    pub seq: hubble_format::RunSeq,
}

/// Reads, verifies and decodes a trace file of any version.
pub fn load_any(path: &Path) -> Result<Any> {
    let name = || format!("{}", path.display());
    let mut trace = Trace::read(path).with_context(name)?;
    crate::deobf::apply(&mut trace, None, &name())?;
    match trace {
        Trace::Single(file) => {
            let decoded = file.decode_events().with_context(name)?;
            Ok(Any::Single(Box::new(Loaded {
                path: path.to_owned(),
                file,
                decoded,
            })))
        }
        Trace::Threads(file) => {
            let mut out = Vec::new();
            for r in file.into_run_files() {
                let decoded = r.file.decode_events().with_context(|| {
                    format!(
                        "{} (tid {}, run {} of {})",
                        path.display(),
                        r.file.header.tid,
                        r.run + 1,
                        r.runs
                    )
                })?;
                out.push(LoadedRun {
                    loaded: Loaded {
                        path: path.to_owned(),
                        file: r.file,
                        decoded,
                    },
                    run: r.run,
                    runs: r.runs,
                    seq: r.seq,
                });
            }
            Ok(Any::Threads(out))
        }
    }
}

/// The parameters of a raw ring dump.
pub struct RawRing<'a> {
    pub path: &'a Path,
    pub mode: Mode,
    pub write_pos: u64,
    pub valid: Option<u64>,
    pub reference: u64,
    pub timer_hz: u64,
    pub symbols: Option<&'a Path>,
}

/// Imports a raw ring dump (little-endian u64 slots) as a trace.
pub fn load_raw(raw: &RawRing<'_>) -> Result<Loaded> {
    let name = raw.path.display();
    let bytes = std::fs::read(raw.path).with_context(|| format!("{name}"))?;
    if bytes.is_empty() || bytes.len() % 8 != 0 {
        bail!(
            "{name}: ring size {} bytes is not a positive multiple of 8",
            bytes.len()
        );
    }
    if raw.timer_hz == 0 {
        bail!("--timer-hz must be positive");
    }
    let slots: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let view =
        RingView::new(&slots, raw.write_pos, raw.valid).with_context(|| format!("{name}"))?;
    let decoded = hubble_format::decode_events(&view, raw.mode, raw.reference)
        .with_context(|| format!("{name}"))?;
    let symbols = match raw.symbols {
        Some(path) => {
            let mut symbols = read_symbols_tsv(path)?;
            crate::deobf::apply_symbols(&mut symbols, None, &path.display().to_string())?;
            symbols
        }
        None => BTreeMap::new(),
    };
    let (older, newer) = view.pieces();
    let window = [older, newer].concat();
    let file = TraceFile {
        header: hubble_format::TraceHeader {
            mode: raw.mode,
            timer_hz: raw.timer_hz,
            reference_counter: raw.reference,
            wall_clock_ns: 0,
            ring_bytes: bytes.len() as u64,
            write_pos: raw.write_pos,
            pid: 0,
            tid: 0,
            thread_name: String::new(),
            process_name: String::new(),
            reason: String::from("raw ring import"),
            anchors: Vec::new(),
            metadata: Default::default(),
        },
        window,
        symbols,
    };
    Ok(Loaded {
        path: raw.path.to_owned(),
        file,
        decoded,
    })
}

/// Reads `<pointer in hex>\t<pretty name>` lines.
pub fn read_symbols_tsv(path: &Path) -> Result<BTreeMap<u64, String>> {
    let name = path.display();
    let text = std::fs::read_to_string(path).with_context(|| format!("{name}"))?;
    let mut symbols = BTreeMap::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Some((pointer, method)) = line.split_once('\t') else {
            bail!(
                "{name}:{}: expected '<pointer in hex><TAB><method name>'",
                number + 1
            );
        };
        let digits = pointer
            .trim()
            .trim_start_matches("0x")
            .trim_start_matches("0X");
        let pointer = u64::from_str_radix(digits, 16).map_err(|_| {
            anyhow::anyhow!(
                "{name}:{}: '{}' is not a hexadecimal pointer",
                number + 1,
                pointer
            )
        })?;
        symbols.insert(pointer, method.to_owned());
    }
    Ok(symbols)
}

/// The pretty name of a method, or its pointer in lowercase hex.
pub fn method_name(symbols: &BTreeMap<u64, String>, method: u64) -> std::borrow::Cow<'_, str> {
    match symbols.get(&method) {
        Some(name) => std::borrow::Cow::Borrowed(name),
        None => std::borrow::Cow::Owned(format!("{method:#x}")),
    }
}
