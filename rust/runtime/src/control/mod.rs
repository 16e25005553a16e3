//! The control plane of one process: [`Control`], its commands, its flushes and the control
//! thread's tick. Everything here runs off the traced threads' paths: they only ever see their
//! five words change. The protocol, the flush and the lock order: `docs/protocol.md`.
//!
//! Lock order (outermost first): `flush_lock` → `window` → `registry`, and the triggers' state →
//! `registry`; then the leaves (`pending`, `symbols`, `last_ctl`, the ANR policy), none held
//! across a call into ART or a wait.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use log::{error, info, warn};

use crate::art::{Art, ThreadHandle};
use crate::flush::{self, Storage};
use crate::pool::Pool;
use crate::props::{self, Command, PropertySource};
use crate::symbols::Symbols;
use crate::triggers::Triggers;

mod anr;
mod config;
mod pool_flush;
mod rebalance;
mod registry;
mod ring_flush;
mod source;
mod stop;
mod symbolize;
mod tick;

pub use anr::{Anr, ANR_REASON};
pub use config::Config;
pub use registry::ATTACH_WAIT;

use anr::AnrState;
use registry::{Registry, Report};

/// The window goes to the file in pieces of this size. On the benchmark's VM one 32 MiB
/// `pwrite` took 55–150 ms where 256 KiB pieces took ~10 ms (alone) to ~37 ms (beside the
/// symbolization); a piece size costs nothing where the kernel does not care.
const WRITE_CHUNK: usize = 256 << 10;

/// Errors of the control plane (each is logged; none stops tracing for good).
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The thread is not known (never attached, or detached).
    #[error("thread {0:#x} is not registered")]
    UnknownThread(ThreadHandle),
    /// The thread is not being traced.
    #[error("thread {0:#x} is not traced")]
    NotTraced(ThreadHandle),
    /// The thread did not reach a trace point in time and is runnable (a long loop without
    /// calls); the stop stays requested.
    #[error("thread {0:#x} did not stop within {1:?}")]
    StopTimeout(ThreadHandle, Duration),
    /// The ring could not be decoded (a bug in a writer).
    #[error("ring decode failed: {0}")]
    Decode(#[from] hubble_format::DecodeError),
    /// The trace file could not be built.
    #[error("trace file: {0}")]
    File(#[from] hubble_format::FileError),
    /// Writing the file failed (disk full, read-only, missing directory...).
    #[error("writing {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A ring could not be mapped.
    #[error("mapping a ring: {0}")]
    Map(std::io::Error),
    /// The pool's snapshot could not be read (a bug in a writer).
    #[error("pool: {0}")]
    Pool(#[from] hubble_format::pool::PoolError),
}

/// The counters go to the log every this many files (how stops went, without a debugger).
const STATS_EVERY: u64 = 1000;

/// Counters for tests, benchmarks and logs.
#[derive(Debug, Default)]
pub struct Stats {
    /// Files written.
    pub flushes: AtomicU64,
    /// Ticks run (`control_loop` runs one every [`crate::TICK`]).
    pub ticks: AtomicU64,
    /// Flushes that failed (and were logged).
    pub failed_flushes: AtomicU64,
    /// Stops answered by the traced thread.
    pub cooperative_stops: AtomicU64,
    /// Stops forced while the thread was not runnable.
    pub forced_stops: AtomicU64,
    /// Force-stop attempts that found the thread runnable after taking the lock (the race).
    pub recheck_saves: AtomicU64,
    /// Checkpoints asked of runnable threads that had not answered a stop by the end of the
    /// poll's spinning (a loop without calls, or simply a long one).
    pub stop_checkpoints: AtomicU64,
    /// SIGQUIT requests received ([`Control::request_anr`]).
    pub anr_requests: AtomicU64,
    /// Requests merged into one not handled yet.
    pub anr_coalesced: AtomicU64,
    /// ANR flushes run (each flushes every traced thread).
    pub anr_flushes: AtomicU64,
    /// Requests dropped by the rate limit ([`crate::props::ANR_INTERVAL`]).
    pub anr_suppressed: AtomicU64,
    /// Names of dying class loaders' methods kept for later flushes
    /// ([`Control::class_loader_unloading`]).
    pub unloaded_names: AtomicU64,
    /// Many-thread mode: lagging blocks the tick closed (threads in native code that had held
    /// their block while the pool went N − A tickets round).
    pub lagging_closed: AtomicU64,
}

impl Stats {
    /// One line of the counters a platform engineer asks about first.
    pub fn summary(&self) -> String {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        format!(
            "{} files written, {} failed; stops: {} answered ({} at a checkpoint asked), {} \
             forced, {} forced attempts saved by the re-check; {} ANR flushes",
            get(&self.flushes),
            get(&self.failed_flushes),
            get(&self.cooperative_stops),
            get(&self.stop_checkpoints),
            get(&self.forced_stops),
            get(&self.recheck_saves),
            get(&self.anr_flushes),
        )
    }
}

/// What a flush produced.
#[derive(Debug)]
pub struct Flushed {
    /// The file written, if consent was given.
    pub path: Option<PathBuf>,
    /// Window slots.
    pub slots: usize,
    /// Distinct methods symbolized.
    pub symbols: usize,
    /// Time spent: stop + copy-out + restart; symbolization (this thread) and, at the same
    /// time on a helper thread, writing and checksumming the window; then the finish (header and
    /// symbols encoded and written, fsync, rename, directory fsync).
    pub phases: [Duration; 4],
}

/// The control plane of one process.
pub struct Control<A: Art> {
    art: A,
    config: Config,
    threads_n: AtomicUsize,
    props: Arc<dyn PropertySource>,
    storage: Box<dyn Storage>,
    registry: Mutex<Registry>,
    pending: Mutex<Vec<Report>>,
    /// A leaf lock: never held across a call into ART or a wait, so the ClassLoader hook (on
    /// the GC thread, under the mutator lock) can always take it.
    symbols: Mutex<Symbols>,
    /// One flush at a time, ring or pool, and none beside [`Control::prune_dead_names`]' scan:
    /// from a flush's copy (a ring's window, the pool's snapshot) to the end of its
    /// symbolization, no scan may forget a dead-loader name that copy holds (the scan reads the
    /// rings and the pool, never the copies); and the pool's flushes take and replace its book
    /// ([`registry::PoolBook`]) in turn. Taken before every other lock of ours.
    flush_lock: Mutex<()>,
    /// The ring flush's copy of a window, kept between flushes (a full ring is 32 MiB): taken
    /// only under `flush_lock`, so never waited for.
    window: Mutex<Vec<u64>>,
    last_ctl: Mutex<Option<String>>,
    /// The duration triggers' state ([`crate::triggers`]).
    triggers: Triggers,
    /// The ANR flush's request flag and rate limit.
    anr: AnrState,
    /// Many-thread mode's pool (`Config::pool`); None in ring mode.
    pool: Option<Pool>,
    /// The kernel tid of the control thread (0 until it runs): ART reports its attach like any
    /// other thread's, but it must never trace, nor be asked to stop by itself.
    control_tid: std::sync::atomic::AtomicU32,
    /// Counters.
    pub stats: Stats,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panic elsewhere must not take tracing control down with it: the data is still sane
    // (every critical section leaves it consistent before anything that can panic).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<A: Art> Control<A> {
    /// A control plane; nothing is traced until [`Control::start_tracing`].
    pub fn new(
        art: A,
        mut config: Config,
        props: Arc<dyn PropertySource>,
        storage: Box<dyn Storage>,
    ) -> Control<A> {
        if config.pool.is_some() && !art.has_pool_path() {
            config.pool = None;
            log::error!(
                "hubble: debug.hubble.threads = all: the trace points of this ART build have no \
                 block-end path for the pool yet (docs/many-threads.md); tracing keeps {}",
                config.describe_mode()
            );
        }
        let pool = match config.pool.map(|g| (g, Pool::new(config.mode, g))) {
            Some((_, Ok(pool))) => {
                pool.set_take_entry(art.pool_take_entry());
                Some(pool)
            }
            Some((g, Err(e))) => {
                config.pool = None;
                log::error!(
                    "hubble: debug.hubble.threads = all: cannot map a pool of {} MiB ({e}); \
                     tracing keeps {}",
                    (g.total_slots() * 8) >> 20,
                    config.describe_mode()
                );
                None
            }
            None => None,
        };
        Control {
            art,
            threads_n: AtomicUsize::new(config.threads.max(1)),
            pool,
            config,
            props,
            storage,
            registry: Mutex::new(Registry::default()),
            pending: Mutex::new(Vec::new()),
            symbols: Mutex::new(Symbols::default()),
            flush_lock: Mutex::new(()),
            window: Mutex::new(Vec::new()),
            last_ctl: Mutex::new(None),
            triggers: Default::default(),
            anr: AnrState::default(),
            control_tid: std::sync::atomic::AtomicU32::new(0),
            stats: Stats::default(),
        }
    }

    /// Names the calling thread, by kernel tid, as the control thread, before it attaches to
    /// the runtime: its registry row is never traced ([`crate::control_thread`] calls it).
    pub fn set_control_tid(&self, tid: u32) {
        self.control_tid.store(tid, Ordering::Relaxed);
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The runtime interface.
    pub fn art(&self) -> &A {
        &self.art
    }

    /// Many-thread mode's pool (None: per-thread rings).
    pub fn pool(&self) -> Option<&Pool> {
        self.pool.as_ref()
    }

    /// Handles from `thread` (or the property, `None`) a command.
    pub fn command(
        &self,
        thread: Option<ThreadHandle>,
        command: Command,
    ) -> Result<(), RuntimeError> {
        match (command, thread) {
            (Command::Start, Some(t)) => self.set_thread_enabled(t, true),
            (Command::Stop, Some(t)) => self.set_thread_enabled(t, false),
            (Command::Start, None) => self.start_tracing(),
            (Command::Stop, None) => self.stop_tracing(),
            (Command::Flush(reason), Some(t)) => self.flush(t, &reason).map(|_| ()),
            (Command::Flush(reason), None) => self.flush_all(&reason),
            (Command::Threads(n), _) => self.set_thread_count(n),
        }
    }

    /// Reads `debug.hubble.ctl` and acts on it if it changed since the last call.
    pub fn poll_properties(&self) -> Option<Result<(), RuntimeError>> {
        let value = self.props.get(props::CTL);
        {
            let mut last = lock(&self.last_ctl);
            if *last == value {
                return None;
            }
            last.clone_from(&value);
        }
        let command = props::parse_ctl(value.as_deref()?, &self.config.package)?;
        info!("hubble: property command {command:?}");
        Some(self.command(None, command))
    }

    /// Whether tracing was enabled by policy (`persist.hubble.consent`).
    pub fn consent(&self) -> bool {
        self.props.get(props::CONSENT).as_deref() == Some("1")
    }

    /// Flushes every traced thread (many-thread mode: one file of every thread).
    pub fn flush_all(&self, reason: &str) -> Result<(), RuntimeError> {
        if self.pool.is_some() {
            return self.flush(0, reason).map(|_| ());
        }
        let mut result = Ok(());
        for h in self.traced_threads() {
            if let Err(e) = self.flush(h, reason) {
                result = Err(e);
            }
        }
        result
    }

    /// Stop → copy the window → restart → symbolize → write the file → retention.
    /// Errors are logged and counted; tracing always resumes.
    ///
    /// Many-thread mode: every thread, whichever `thread` is, in one version 4 file
    /// ([`Control::flush_pool`]).
    pub fn flush(&self, thread: ThreadHandle, reason: &str) -> Result<Flushed, RuntimeError> {
        let r = match &self.pool {
            Some(p) => self.flush_pool(p, reason),
            None => self.flush_ring(thread, reason),
        };
        self.record_outcome(r, reason)
    }

    /// Counts a flush's outcome, and logs a failure.
    fn record_outcome(
        &self,
        r: Result<Flushed, RuntimeError>,
        reason: &str,
    ) -> Result<Flushed, RuntimeError> {
        match &r {
            Ok(f) => {
                if f.path.is_some() {
                    let n = self.stats.flushes.fetch_add(1, Ordering::Relaxed) + 1;
                    if n % STATS_EVERY == 0 {
                        info!("hubble: {}", self.stats.summary());
                    }
                }
            }
            Err(e) => {
                self.stats.failed_flushes.fetch_add(1, Ordering::Relaxed);
                error!("hubble: flush ({reason}) failed: {e}; tracing resumes");
            }
        }
        r
    }

    /// Applies the retention limits to `dir` after a file landed there; a failure is logged,
    /// not the flush's (the file is written).
    fn retain(&self, dir: &Path) {
        if let Err(e) = flush::apply_retention(
            &*self.storage,
            dir,
            self.config.max_files,
            self.config.max_bytes,
        ) {
            warn!("hubble: retention in {}: {e}", dir.display());
        }
    }

    /// The duration triggers in force and what they fired.
    pub fn triggers(&self) -> &Triggers {
        &self.triggers
    }
}
