//! `--mapping [VERSION=]FILE`: ProGuard/R8 deobfuscation of every method name the tool prints
//! or writes (docs/deobfuscation.md).
//!
//! The names live in each trace's symbol table, and every command reads traces through one of
//! a few loaders (`input`, `peers_input`, `parquet`); each loader hands the trace to [`apply`]
//! before anything reads a name, so every command and output format gets deobfuscated names
//! without knowing about mappings. The mappings are process-wide state, set once by `main`
//! from the global option (like the option itself) rather than threaded through every
//! command's signature, and so are the counts that `main` prints as one warning line at the
//! end.
//!
//! Cost (docs/deobfuscation.md, "Cost"): the mapping files are read on a thread of their own
//! while the first trace is read, which then parses classes ahead until the trace is read; a
//! trace's names are resolved on every core; counting them for the warnings is left to a
//! thread of its own while the command goes on.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

use anyhow::{bail, Result};
use hubble_deobf::{FxBuild, Kind, Mapping, MappingError, Report, Resolution};
use hubble_format::Trace;

/// The metadata key that selects a versioned mapping (docs/trace-format.md: an ingest step
/// adds it, or `--meta app.version=…`).
const VERSION_KEY: &str = "app.version";

/// A mapping that cannot be used: unlike a trace's own problems, it spoils every trace, so a
/// fleet batch stops instead of skipping the file ([`is_bad_mapping`]).
#[derive(Debug)]
pub struct BadMapping(String);

impl std::fmt::Display for BadMapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadMapping {}

/// Whether `e` is a [`BadMapping`].
pub fn is_bad_mapping(e: &anyhow::Error) -> bool {
    e.downcast_ref::<BadMapping>().is_some()
}

struct Loaded {
    path: PathBuf,
    mapping: Mapping,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// The names counted, as recorded: a name met in many files counts once (hashed as the
    /// mapping's own names are: the std hasher costs several times more on such keys).
    seen: HashSet<String, FxBuild>,
    report: Report,
}

struct Mappings {
    default: Option<Loaded>,
    versions: BTreeMap<String, Loaded>,
    /// Traces left as they are for want of a mapping for their version ("" = no version).
    unmapped: Mutex<BTreeMap<String, usize>>,
}

/// The counting of the last trace's names, still under way (see [`apply_symbols`]).
static COUNTING: Mutex<Option<JoinHandle<()>>> = Mutex::new(None);

/// The mappings once read, or why they could not be (for every trace that asks).
static MAPPINGS: OnceLock<std::result::Result<Mappings, String>> = OnceLock::new();
/// Until the first trace needs them: the thread reading them says when [`MAPPINGS`] is set
/// (then goes on parsing classes ahead until [`PREFETCH_STOP`]).
static LOADER: Mutex<Option<Receiver<()>>> = Mutex::new(None);
/// Set when the first trace needs the mappings: the classes it names are parsed by the
/// threads resolving its names from then on.
static PREFETCH_STOP: AtomicBool = AtomicBool::new(false);

/// Starts reading the mappings of the `--mapping` options: `FILE` (every trace) or
/// `VERSION=FILE` (traces whose `app.version` is VERSION), repeatable. A value that names an
/// existing file is a file even if it holds a `=`. The options are checked now; the files are
/// read on another thread, and their errors reported by the first [`apply`].
pub fn init(specs: &[String]) -> Result<()> {
    if specs.is_empty() {
        return Ok(());
    }
    let mut default: Option<PathBuf> = None;
    let mut versions: BTreeMap<String, PathBuf> = BTreeMap::new();
    for spec in specs {
        match spec.split_once('=') {
            Some((v, f)) if !Path::new(spec).exists() => {
                if v.is_empty() || f.is_empty() {
                    bail!("--mapping {spec:?}: want FILE or VERSION=FILE");
                }
                if versions.insert(v.to_owned(), PathBuf::from(f)).is_some() {
                    bail!("--mapping: two mappings for app.version {v}");
                }
            }
            _ => {
                if let Some(first) = &default {
                    bail!(
                        "--mapping {} and {spec}: one mapping for every trace at most; give the \
                         others as VERSION=FILE",
                        first.display()
                    );
                }
                default = Some(PathBuf::from(spec));
            }
        }
    }
    let read = |path: PathBuf| -> std::result::Result<Loaded, String> {
        let mapping =
            Mapping::read(&path).map_err(|e| format!("--mapping {}: {e}", path.display()))?;
        Ok(Loaded {
            path,
            mapping,
            state: Mutex::default(),
        })
    };
    let (read_tx, read_rx) = std::sync::mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let load = || {
            Ok(Mappings {
                default: default.map(read).transpose()?,
                versions: versions
                    .into_iter()
                    .map(|(v, p)| Ok((v, read(p)?)))
                    .collect::<std::result::Result<_, String>>()?,
                unmapped: Mutex::default(),
            })
        };
        let _ = MAPPINGS.set(load());
        let _ = read_tx.send(());
        // While the first trace is read, a second core would idle: the classes are parsed
        // ahead, in file order, until that trace's names are resolved (one core: nothing to
        // gain). At most 8 MB of them: all of a mapping of the size of the traced classes'
        // (2 MB for 50 000 methods), while in a large app's most would be classes no trace
        // names.
        const PREFETCH_BYTES: u64 = 8 << 20;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if let (Some(Ok(all)), true) = (MAPPINGS.get(), cores > 1) {
            for m in all.default.iter().chain(all.versions.values()) {
                m.mapping.prefetch(&PREFETCH_STOP, PREFETCH_BYTES);
            }
        }
    });
    *LOADER.lock().expect("unpoisoned") = Some(read_rx);
    Ok(())
}

/// The mappings, read (waiting for the reading thread the first time); `None` without
/// `--mapping`.
fn mappings() -> Result<Option<&'static Mappings>> {
    if MAPPINGS.get().is_none() {
        // Held while waiting: another thread asking meanwhile waits too.
        let mut loader = LOADER.lock().expect("unpoisoned");
        if let Some(read) = loader.take() {
            if read.recv().is_err() {
                let _ = MAPPINGS.set(Err("--mapping: the thread reading it failed".into()));
            }
        }
    }
    PREFETCH_STOP.store(true, Ordering::Relaxed);
    match MAPPINGS.get() {
        Some(Ok(m)) => Ok(Some(m)),
        Some(Err(e)) => Err(BadMapping(e.clone()).into()),
        None => Ok(None),
    }
}

/// Waits for the mappings: an error if one cannot be read. For commands that must know
/// before their first trace (a fleet batch, which would otherwise skip every file).
pub fn ready() -> Result<()> {
    mappings().map(|_| ())
}

/// Deobfuscates a trace's names in place (every thread of a version 4 file at once), with
/// the mapping of its `app.version` (`version` overrides the file's own, as `--meta` does).
/// `name` names the trace in errors. An error when the mapping is plainly not this app's.
pub fn apply(trace: &mut Trace, version: Option<&str>, name: &str) -> Result<()> {
    let (metadata, symbols) = match trace {
        Trace::Single(f) => (&f.header.metadata, &mut f.symbols),
        Trace::Threads(f) => (&f.header.metadata, &mut f.symbols),
    };
    let version = version.or(metadata.get(VERSION_KEY).map(String::as_str));
    apply_symbols(symbols, version, name)
}

/// [`apply`] for a bare symbol table (a raw ring import's).
pub fn apply_symbols(
    symbols: &mut BTreeMap<u64, String>,
    version: Option<&str>,
    name: &str,
) -> Result<()> {
    let Some(all) = mappings()? else {
        return Ok(());
    };
    let chosen = version
        .and_then(|v| all.versions.get(v))
        .or(all.default.as_ref());
    let Some(m) = chosen else {
        *all.unmapped
            .lock()
            .expect("unpoisoned")
            .entry(version.unwrap_or_default().to_owned())
            .or_default() += 1;
        return Ok(());
    };
    // Resolve first, commit after the check: a trace refused here (a batch goes on without
    // it) leaves neither its names nor its counts behind.
    let names: Vec<&str> = symbols.values().map(String::as_str).collect();
    let resolved = resolve(&m.mapping, &names)
        .map_err(|e| BadMapping(format!("--mapping {}: {e}", m.path.display())))?;
    let mut this = Report::default();
    for (v, r) in names.iter().zip(&resolved) {
        this.add(v, r);
    }
    if this.class_found() == 0 && this.count(Kind::ClassUnknown) > 0 {
        bail!(
            "{name}: none of its classes is in the mapping {} and {} look obfuscated (e.g. \
             `{}`): a mapping of another build? (docs/deobfuscation.md)",
            m.path.display(),
            this.count(Kind::ClassUnknown),
            this.example(Kind::ClassUnknown).unwrap_or_default()
        );
    }
    // The new names go in, the names as recorded come out (to be counted).
    let mut counted = resolved;
    for (value, r) in symbols.values_mut().zip(&mut counted) {
        std::mem::swap(value, &mut r.name);
    }
    // Counting the names once across traces (hashing each) is off the export's path: on a
    // thread of its own, after the previous trace's, done before `messages` reads the counts.
    let mut counting = COUNTING.lock().expect("unpoisoned");
    let previous = counting.take();
    *counting = Some(std::thread::spawn(move || {
        if let Some(Err(panic)) = previous.map(JoinHandle::join) {
            std::panic::resume_unwind(panic);
        }
        let mut state = m.state.lock().expect("unpoisoned");
        let State { seen, report } = &mut *state;
        for mut r in counted {
            let name = std::mem::take(&mut r.name);
            if !seen.contains(&name) {
                report.add(&name, &r);
                seen.insert(name);
            }
        }
    }));
    Ok(())
}

/// Deobfuscates `names`, in order, on every core (the classes they name are parsed on first
/// use, each by one thread).
fn resolve(
    mapping: &Mapping,
    names: &[&str],
) -> std::result::Result<Vec<Resolution>, MappingError> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    mapping.deobfuscate_all(names, cores)
}

/// What `main` prints on stderr once the command is done: one warning line per mapping with
/// names kept obfuscated, a note for ambiguous names, and the traces no mapping applied to.
pub fn messages() -> Vec<String> {
    let Some(Ok(all)) = MAPPINGS.get() else {
        return Vec::new();
    };
    if let Some(counting) = COUNTING.lock().expect("unpoisoned").take() {
        if let Err(panic) = counting.join() {
            std::panic::resume_unwind(panic);
        }
    }
    let mut out = Vec::new();
    for m in all.default.iter().chain(all.versions.values()) {
        let path = m.path.display();
        let info = m.mapping.info();
        if let Some(v) = &info.newer_version {
            out.push(format!(
                "hubble: warning: {path}: mapping version {v} is newer than this hubble knows \
                 ({}); metadata it added is ignored",
                hubble_deobf::KNOWN_VERSION
            ));
        }
        let state = m.state.lock().expect("unpoisoned");
        let r = &state.report;
        if r.names() == 0 {
            continue;
        }
        if r.class_found() == 0 {
            out.push(format!(
                "hubble: warning: {path}: no class of these traces is in the mapping; nothing \
                 was deobfuscated"
            ));
        }
        if r.warnings() > 0 {
            let mut parts = Vec::new();
            for (kind, what) in [
                (
                    Kind::ClassUnknown,
                    "in classes that look obfuscated but are not in the mapping",
                ),
                (Kind::MemberUnknown, "not in their class's mapping"),
                (Kind::SignatureMismatch, "whose signature fits no candidate"),
            ] {
                if r.count(kind) > 0 {
                    parts.push(format!(
                        "{} {what} (e.g. `{}`)",
                        r.count(kind),
                        r.example(kind).unwrap_or_default()
                    ));
                }
            }
            out.push(format!(
                "hubble: warning: {path}: {} of {} method names kept as the trace has them: {} \
                 (docs/deobfuscation.md)",
                r.warnings(),
                r.names(),
                parts.join(", ")
            ));
        }
        let ambiguous = r.count(Kind::Ambiguous);
        if ambiguous > 0 {
            out.push(format!(
                "hubble: note: {path}: {ambiguous} method name(s) fit several original methods; \
                 each lists every candidate, `A | B` (e.g. `{}`)",
                r.example(Kind::Ambiguous).unwrap_or_default()
            ));
        }
        let invalid = info.invalid_residual;
        let unknown: usize = info.unknown_ids.values().sum();
        if invalid + unknown > 0 {
            let ids: Vec<&str> = info.unknown_ids.keys().map(String::as_str).collect();
            out.push(format!(
                "hubble: note: {path}: ignored {invalid} invalid residual signature(s) and \
                 {unknown} metadata comment(s) of unknown ids [{}]",
                ids.join(", ")
            ));
        }
    }
    let unmapped = all.unmapped.lock().expect("unpoisoned");
    if !unmapped.is_empty() {
        let list: Vec<String> = unmapped
            .iter()
            .map(|(v, n)| {
                if v.is_empty() {
                    format!("{n} without app.version")
                } else {
                    format!("{n} of app.version {v}")
                }
            })
            .collect();
        out.push(format!(
            "hubble: warning: no --mapping for {} trace(s) ({}): their names are as recorded",
            unmapped.values().sum::<usize>(),
            list.join(", ")
        ));
    }
    out
}
