//! `hubble export --format parquet`: a batch of trace files into the fleet tables
//! (`<OUT>/traces/`, `<OUT>/calls/`), for Spark, BigQuery, Trino, DuckDB or `hubble fleet`.
//!
//! A batch from a fleet holds bad files (cut short by an upload, flipped bits): each is named
//! on stderr and skipped, the rest are exported, and the exit status says some failed.
//!
//! A version 4 file (every thread of a process) is one trace per thread's run, each with its
//! own id (`hubble_fleet::tables::run_trace_id`), its tid and thread name; its summary is one
//! summary of all its threads, as `hubble summary` gives.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use hubble_analysis::signatures::Signature;
use hubble_analysis::summary;
use hubble_fleet::schema::Table;
use hubble_fleet::tables::{run_trace_id, trace_id, SummaryTables, TraceTables};
use hubble_fleet::write::write_part;
use hubble_format::stream::Input;
use hubble_format::{Trace, TraceFile};

/// `KEY=VALUE` metadata given on the command line, checked as the trace format checks it.
fn parse_meta(pairs: &[String]) -> Result<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("--meta {pair:?}: want KEY=VALUE, e.g. app.version=4.2.0");
        };
        hubble_format::file::check_metadata_key(key).with_context(|| format!("--meta {pair:?}"))?;
        if value.len() > hubble_format::file::MAX_METADATA_VALUE {
            bail!(
                "--meta {key}: the value is {} bytes (at most {})",
                value.len(),
                hubble_format::file::MAX_METADATA_VALUE
            );
        }
        out.insert(key.to_owned(), value.to_owned());
    }
    Ok(out)
}

/// Call rows per part: a batch of any size is written in parts of about this many rows, so
/// memory stays bounded (a few hundred MB) and engines get files they can split.
const ROWS_PER_PART: usize = 1 << 20;

/// Exports `files` into the fleet layout under `out`, in parts of about [`ROWS_PER_PART`]
/// calls, each trace row with the `--meta` pairs `meta` (checked before any input is read).
/// Returns an error (after exporting what could be) if any input failed.
pub fn export(files: &[PathBuf], out: &Path, meta: &[String]) -> Result<()> {
    let meta = &parse_meta(meta)?;
    // A mapping that cannot be read would fail every file: an error before any.
    crate::deobf::ready()?;
    let mut tables = TraceTables::new();
    let mut ids = Vec::new();
    let (mut exported, mut failed) = (0usize, 0usize);
    for path in files {
        let added = (|| -> Result<()> {
            let bytes =
                std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
            let mut trace = Trace::parse(&bytes).with_context(|| format!("{}", path.display()))?;
            let name = path.display().to_string();
            // Names are deobfuscated here, at export, so the tables hold source names for
            // every engine that reads them (docs/deobfuscation.md).
            crate::deobf::apply(
                &mut trace,
                meta.get("app.version").map(String::as_str),
                &name,
            )?;
            let id = trace_id(&bytes);
            let windows: Vec<(TraceFile, String)> = match trace {
                Trace::Single(file) => vec![(file, id.clone())],
                Trace::Threads(file) => file
                    .into_run_files()
                    .into_iter()
                    .map(|r| {
                        let run_id = run_trace_id(&id, r.file.header.tid, r.run);
                        (r.file, run_id)
                    })
                    .collect(),
            };
            let inputs: Vec<(Input<'_>, String)> = windows
                .iter()
                .map(|(file, id)| {
                    let input = Input { file, name: &name };
                    (input, id.clone())
                })
                .collect();
            tables
                .add_all(&inputs, meta)
                .with_context(|| format!("{}", path.display()))?;
            ids.push(id);
            Ok(())
        })();
        skip_if_bad(added, &mut failed)?;
        if tables.calls() >= ROWS_PER_PART {
            exported += write_parts(out, std::mem::take(&mut tables), &mut ids)?;
        }
    }
    if !ids.is_empty() {
        exported += write_parts(out, tables, &mut ids)?;
    }
    if exported == 0 {
        bail!("none of the {} input(s) could be exported", files.len());
    }
    if failed > 0 {
        bail!(
            "{failed} of {} input(s) failed (named above); the other {exported} were exported",
            files.len()
        );
    }
    Ok(())
}

/// What became of one input of a batch: a bad input is named on stderr and counted in `failed`,
/// and the batch goes on; a mapping that cannot be read would fail every input, so it ends it.
fn skip_if_bad(added: Result<()>, failed: &mut usize) -> Result<()> {
    if let Err(e) = added {
        if crate::deobf::is_bad_mapping(&e) {
            return Err(e);
        }
        eprintln!("hubble: skipped: {e:#}");
        *failed += 1;
    }
    Ok(())
}

/// The name of the part holding the traces (or inputs) `ids`, sorted here. It comes from them,
/// so exporting the same batch again replaces the part instead of adding a copy that every
/// query would count twice.
fn part_name(ids: &mut [String]) -> String {
    ids.sort();
    format!("part-{}", trace_id(ids.join(",").as_bytes()))
}

/// Writes one part of `tables` (whose traces are `ids`, emptied); returns the traces written.
fn write_parts(out: &Path, tables: TraceTables, ids: &mut Vec<String>) -> Result<usize> {
    let part = part_name(ids);
    ids.clear();
    let (traces, calls) = tables.finish()?;
    let calls_path = write_part(out, Table::Calls, &part, &calls)?;
    // The traces part last: a reader joining calls to traces sees a trace only once its calls
    // are there.
    let traces_path = write_part(out, Table::Traces, &part, &traces)?;
    eprintln!(
        "hubble: {} trace(s), {} call(s) → {}, {}",
        traces.num_rows(),
        calls.num_rows(),
        traces_path.display(),
        calls_path.display()
    );
    Ok(traces.num_rows())
}

/// Device-class metadata a summary row may carry: the format's keys, none of which names a
/// process, thread, user or device (docs/fleet.md, "Privacy").
fn device_class(file: &TraceFile, meta: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = file
        .header
        .metadata
        .iter()
        .filter(|(k, _)| {
            hubble_fleet::schema::METADATA_COLUMNS
                .iter()
                .any(|(key, _)| key == k)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    out.extend(meta.iter().map(|(k, v)| (k.clone(), v.clone())));
    out
}

/// One summary per input file into the summary tables under `out`. Bad files are named and
/// skipped as in [`export`].
pub fn summaries(
    files: &[PathBuf],
    out: &Path,
    signatures: &[Signature],
    options: summary::Options,
    meta: &[String],
) -> Result<()> {
    let meta = &parse_meta(meta)?;
    crate::deobf::ready()?;
    let mut tables = SummaryTables::new();
    let mut names = Vec::new();
    let mut failed = 0usize;
    for path in files {
        let added = (|| -> Result<()> {
            // Every run of a version 4 file: one summary of the process's threads.
            let loaded =
                crate::peers_input::load(path, meta.get("app.version").map(String::as_str))?;
            let name = path.display().to_string();
            // The chains' window ends at the flush for every run, as `hubble summary` has it.
            let report = summary::summarize_before(
                &crate::peers_input::inputs(&loaded),
                &crate::peers_input::flushes(&loaded),
                signatures,
                options,
            )
            .with_context(|| format!("{}", path.display()))?;
            let first = &loaded.first().context("no window")?.file;
            tables.add(&report, &device_class(first, meta))?;
            names.push(name);
            Ok(())
        })();
        skip_if_bad(added, &mut failed)?;
    }
    if names.is_empty() {
        bail!("none of the {} input(s) could be summarized", files.len());
    }
    let part = part_name(&mut names);
    let [summaries, top, signatures] = tables.finish()?;
    write_part(out, Table::SummaryTop, &part, &top)?;
    write_part(out, Table::SummarySignatures, &part, &signatures)?;
    let path = write_part(out, Table::Summaries, &part, &summaries)?;
    eprintln!(
        "hubble: {} summaries ({} top rows, {} signature rows) → {}",
        summaries.num_rows(),
        top.num_rows(),
        signatures.num_rows(),
        path.display()
    );
    if failed > 0 {
        bail!(
            "{failed} of {} input(s) failed (named above); the other {} were summarized",
            files.len(),
            names.len()
        );
    }
    Ok(())
}
