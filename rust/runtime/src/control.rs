//! The control plane: which threads are traced, stopping them (§6), flushing, restarting,
//! the ClassLoader hook and the command triggers. Everything here runs off the traced threads'
//! paths: they only ever see their five words change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hubble_format::pool::{thread_streams, H_TICKET};
use hubble_format::threads::{ProcessHeader, ThreadsFile};
use hubble_format::{Mode, TraceHeader};
use log::{error, info, warn};

use crate::anchors::{self, Anchors};
use crate::art::{block_at, clock_pair, Art, ArtStateLock, ThreadHandle};
use crate::block::{self, ForceStop, ThreadBlock};
use crate::flush::{self, DistinctPointers, PointerSet, Storage};
use crate::pool::{self, Pool};
use crate::props::{self, Command, PropertySource};
use crate::ring::{ring_size, Ring};
use crate::symbols::{resolve_missing, Resolver, Symbols};
use hubble_format::file::WindowCrc;

/// The window goes to the file in pieces of this size. On the benchmark's VM one 32 MiB
/// `pwrite` took 55–150 ms where 256 KiB pieces took ~10 ms (alone) to ~37 ms (beside the
/// symbolization); a piece size costs nothing where the kernel does not care.
const WRITE_CHUNK: usize = 256 << 10;

/// Static configuration of one process's control plane.
#[derive(Clone, Debug)]
pub struct Config {
    /// Package name (`debug.hubble.ctl` addresses it).
    pub package: String,
    /// Process name, written into trace files.
    pub process: String,
    /// Trace directory (`/data/data/<package>/files/hubble`).
    pub dir: PathBuf,
    /// Ring bytes per traced thread (a power of two).
    pub ring_bytes: usize,
    /// N: threads traced at once.
    pub threads: usize,
    /// Files kept.
    pub max_files: usize,
    /// Bytes kept.
    pub max_bytes: u64,
    /// ISA mode of the process.
    pub mode: Mode,
    /// How long a stop may take before the flush gives up (the thread may be in a long loop
    /// without calls; it stops at its next trace point and the next flush picks it up).
    pub stop_timeout: Duration,
    /// Longest sleep between two polls of a stop (backing off from spinning and yielding);
    /// zero = only yield (tests that flush in a tight loop).
    pub max_poll_sleep: Duration,
    /// Dead-loader names kept before a tick scans the rings and forgets those no ring holds
    /// (without flushes, windows never advance and every unload would add its methods forever).
    pub dead_names_scan_at: usize,
    /// Many-thread mode (`debug.hubble.threads all`): every thread ART reports traces into one
    /// pool of this geometry, and `threads`/`ring_bytes` are not used. None: per-thread rings.
    pub pool: Option<hubble_format::pool::Geometry>,
    /// `debug.hubble.tasks 1`: the control thread asks ART for task records when it starts
    /// ([`crate::Art::start_task_records`]).
    pub tasks: bool,
}

impl Config {
    /// The defaults of `docs/architecture.md` for a package.
    pub fn new(package: &str, process: &str, dir: PathBuf) -> Config {
        Config {
            package: package.to_string(),
            process: process.to_string(),
            dir,
            ring_bytes: crate::ring::DEFAULT_RING_BYTES,
            threads: 2,
            tasks: false,
            max_files: 8,
            max_bytes: 256 << 20,
            mode: if cfg!(target_pointer_width = "64") {
                Mode::Bits64
            } else {
                Mode::Bits32
            },
            stop_timeout: Duration::from_millis(200),
            max_poll_sleep: Duration::from_millis(1),
            dead_names_scan_at: 1 << 16,
            pool: None,
        }
    }

    /// Applies `debug.hubble.{ring_mb,threads,budget_mb,retention}`.
    pub fn with_properties(mut self, p: &dyn PropertySource) -> Config {
        if let Some(mb) = p
            .get(props::RING_MB)
            .and_then(|v| v.trim().parse::<usize>().ok())
        {
            self.ring_bytes = ring_size(mb.saturating_mul(1 << 20));
        }
        // Logged there; the settings in force stay.
        let _ = self.apply_thread_selector(p);
        match props::parse_tasks(p.get(props::TASKS).as_deref()) {
            Ok(on) => self.tasks = on,
            Err(e) => log::error!("hubble: {e}; task records stay off"),
        }
        if let Some((files, mib)) = p
            .get(props::RETENTION)
            .and_then(|v| props::parse_retention(&v))
        {
            self.max_files = files;
            self.max_bytes = mib << 20;
        }
        self
    }

    /// The tracing mode in force: the N most recent threads in rings, or every thread in the
    /// pool.
    pub fn selector(&self) -> props::ThreadSelector {
        match self.pool {
            Some(g) => props::ThreadSelector::All {
                budget: g.blocks * g.block_slots * 8,
            },
            None => props::ThreadSelector::Recent(self.threads),
        }
    }

    /// What [`Config::selector`] traces, in words (for the log).
    pub fn describe_mode(&self) -> String {
        match self.pool {
            Some(g) => format!(
                "every thread in one pool of {} blocks of {} KiB",
                g.blocks,
                (g.block_slots * 8) >> 10
            ),
            None => format!(
                "the {} most recent threads in per-thread rings of {} KiB",
                self.threads,
                self.ring_bytes >> 10
            ),
        }
    }

    /// Applies `debug.hubble.threads` and `debug.hubble.budget_mb` (`all`: many-thread mode,
    /// `docs/many-threads.md`). A bad configuration (an unknown selector, a budget that is not a
    /// number or too small for the active blocks) is logged as an error naming what is wrong and
    /// what tracing keeps, returned, and changes nothing.
    pub fn apply_thread_selector(&mut self, p: &dyn PropertySource) -> Option<props::ConfigError> {
        match props::parse_thread_selector(
            p.get(props::THREADS).as_deref(),
            p.get(props::BUDGET_MB).as_deref(),
            self.threads,
        ) {
            Ok(props::ThreadSelector::Recent(n)) => {
                self.threads = n.max(1);
                self.pool = None;
                None
            }
            Ok(props::ThreadSelector::All { budget }) => {
                self.pool = Some(props::pool_geometry(budget));
                None
            }
            Err(e) => {
                log::error!("hubble: {e}; tracing keeps {}", self.describe_mode());
                Some(e)
            }
        }
    }
}

/// Gives a registered thread its pool words (called with the registry locked).
fn start_pooled(e: &mut Entry, p: &Pool) {
    let since = pool::head(p);
    // SAFETY: registered threads are alive while the registry lock is held.
    pool::start(unsafe { block_at(e.block) }, p, e.next_seq);
    e.pooled = Some(Pooled {
        since,
        ..Pooled::default()
    });
}

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

struct Traced {
    ring: Ring,
    /// Which start from an empty ring this is ([`Registry::runs`]): a ring that goes back to
    /// its thread, or to another, after a reclaim is a new run, cleared and written from slot
    /// 0, though its address may be the same. The duration triggers read a new run afresh.
    run: u64,
    /// Symbol epoch when the ring last (re)started.
    start_epoch: u64,
    /// A stop was requested and not answered in time: what asked for it. The thread stops at its
    /// next trace point; [`Control::tick`] then finishes the work.
    stopping: Option<StopCause>,
    /// Bounds at the ring's idle gaps, for timestamps across them.
    anchors: Anchors,
}

/// Why a traced thread was asked to stop.
#[derive(Clone, Debug, PartialEq, Eq)]
enum StopCause {
    /// A flush with this reason.
    Flush(String),
    /// Its ring is being reclaimed ([`Control::rebalance`]).
    Reclaim,
}

struct Entry {
    tid: u32,
    name: String,
    block: usize,
    /// Per-thread override: `Some(true)` enabled by API, `Some(false)` disabled.
    enabled: Option<bool>,
    /// Foreground order (higher = more recent); 0 = never foreground.
    last_fg: u64,
    traced: Option<Traced>,
    /// Many-thread mode: the thread traces into the pool.
    pooled: Option<Pooled>,
    /// Many-thread mode: the `seq` its next start continues from (after a stop of tracing).
    next_seq: u32,
}

/// A thread traced in the pool (many-thread mode).
#[derive(Default)]
struct Pooled {
    /// A stop was requested and not answered in time: what asked for it ([`Control::tick`]
    /// finishes it).
    stopping: Option<StopCause>,
    /// Idle gaps seen since the thread last started (the cursor is an address in the pool).
    anchors: Anchors,
    /// The pool's head when the thread started: its blocks have tickets at or above it, so a
    /// block of its tid below it is an earlier thread's (tids come back).
    since: u64,
}

/// What the many-thread flushes remember between two of them (under the registry lock).
#[derive(Default)]
struct PoolBook {
    /// The pool's head at the last flush: every block taken since has a ticket at or above it.
    last_head: u64,
    /// Tickets of the blocks threads went on in after the last flush (behind a start record).
    continued: std::collections::HashSet<u64>,
    /// Names of threads gone whose blocks the pool may still hold (pruned at each flush to the
    /// tids the pool holds).
    exited: std::collections::BTreeMap<u32, String>,
}

/// What ART reported while possibly holding its own locks (`thread_list_lock_`): queued under a
/// leaf lock and applied by the next registry operation, so ART never waits for the registry
/// (whose holder may be waiting for `thread_list_lock_` in `LockThreadState`).
enum Pending {
    Attached {
        thread: ThreadHandle,
        tid: u32,
        name: String,
        is_ui: bool,
        block: usize,
    },
    Foreground(ThreadHandle),
    Renamed(ThreadHandle, String),
}

#[derive(Default)]
struct Registry {
    threads: HashMap<ThreadHandle, Entry>,
    tick: u64,
    /// Rings started empty so far (each one's [`Traced::run`]).
    runs: u64,
    spare: Vec<Ring>,
    tracing_on: bool,
    book: PoolBook,
}

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

/// The flush reason of an ANR (SIGQUIT) flush: files are `<ms>-<pid>-<tid>-anr.hubble`.
pub const ANR_REASON: &str = "anr";

/// What [`Control::handle_anr`] did with a pending request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anr {
    /// Every traced thread was stopped and flushed; this many flushes succeeded.
    Flushed(usize),
    /// Within [`crate::props::ANR_INTERVAL`] of the last ANR flush: dropped (counted).
    Suppressed,
    /// [`crate::props::ANR_INTERVAL`] is `off`.
    Disabled,
}

/// The ANR request (set by the signal catcher, taken by the control thread) and the rate limit.
#[derive(Default)]
struct AnrState {
    /// A request not handled yet. The only thing the signal catcher's path writes.
    pending: std::sync::atomic::AtomicBool,
    /// The control thread's alone.
    policy: Mutex<AnrPolicy>,
}

#[derive(Default)]
struct AnrPolicy {
    /// The property value last parsed.
    source: Option<String>,
    /// `None` until a valid value was read: [`props::DEFAULT_ANR_INTERVAL`].
    interval: Option<Option<Duration>>,
    /// Timer value when the last ANR flush began.
    last: Option<u64>,
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
    pending: Mutex<Vec<Pending>>,
    /// A leaf lock: never held across a call into ART or a wait, so the ClassLoader hook (on
    /// the GC thread, under the mutator lock) can always take it.
    symbols: Mutex<Symbols>,
    window: Mutex<Vec<u64>>,
    last_ctl: Mutex<Option<String>>,
    /// The duration triggers' state ([`crate::triggers`]).
    triggers: crate::triggers::Triggers,
    /// The ANR flush's request flag and rate limit.
    anr: AnrState,
    /// Many-thread mode's pool (`Config::pool`); None in ring mode.
    pool: Option<Pool>,
    /// Counters.
    pub stats: Stats,
}

/// What one look at a thread asked to stop found.
enum Polled {
    Stopped(usize),
    Pending,
    NotTracing,
}

/// Waiting for stops: spin briefly (a stop is usually answered within microseconds), then
/// yield, then sleep with doubling up to `max_sleep`, never past the deadline.
struct Backoff {
    deadline: Instant,
    max_sleep: Duration,
    spins: u32,
    sleep: Duration,
}

impl Backoff {
    fn new(timeout: Duration, max_sleep: Duration) -> Backoff {
        Backoff {
            deadline: Instant::now() + timeout,
            max_sleep,
            spins: 0,
            sleep: Duration::from_micros(2),
        }
    }

    /// Waits a little; false once the deadline has passed.
    fn wait(&mut self) -> bool {
        // A stop is usually answered within microseconds: spin, then yield, then sleep.
        match self.spins {
            0..=63 => {
                self.spins += 1;
                std::hint::spin_loop();
            }
            64..=79 => {
                self.spins += 1;
                std::thread::yield_now();
            }
            _ => {
                let now = Instant::now();
                if now >= self.deadline {
                    return false;
                }
                if self.max_sleep.is_zero() {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(self.sleep.min(self.deadline - now));
                    self.sleep = (self.sleep * 2).min(self.max_sleep);
                }
            }
        }
        true
    }
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
        let pool = config.pool.map(|g| {
            let pool = Pool::new(config.mode, g);
            pool.set_take_entry(art.pool_take_entry());
            pool
        });
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
            window: Mutex::new(Vec::new()),
            last_ctl: Mutex::new(None),
            triggers: Default::default(),
            anr: AnrState::default(),
            stats: Stats::default(),
        }
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

    /// A thread was attached to the runtime. `is_ui` marks the main (UI) thread, which counts as
    /// foreground from the start. Idempotent; never waits for the registry.
    pub fn thread_attached(&self, thread: ThreadHandle, tid: u32, name: &str, is_ui: bool) {
        let block = self.art.block_address(thread);
        lock(&self.pending).push(Pending::Attached {
            thread,
            tid,
            name: name.to_string(),
            is_ui,
            block,
        });
    }

    /// A thread reports its own attach (`Thread::Init`, on the thread itself, holding no ART
    /// lock, before it runs any Java code). In many-thread mode, with tracing on, it starts
    /// tracing here and now, under the registry lock as every start does, so that its first
    /// trace point (its `Thread.run()`, a task's begin) is recorded; otherwise it is queued as
    /// [`Control::thread_attached`] does, for the control thread. Returns whether it started
    /// (then no rebalance is needed for it). Like [`Control::thread_detached`], it may wait for
    /// the registry while the control thread holds it (a flush: at most its stop timeout).
    pub fn thread_attached_itself(
        &self,
        thread: ThreadHandle,
        tid: u32,
        name: &str,
        is_ui: bool,
    ) -> bool {
        self.thread_attached(thread, tid, name, is_ui);
        let Some(p) = &self.pool else {
            return false;
        };
        let mut reg = self.registry();
        if !reg.tracing_on {
            return false;
        }
        match reg.threads.get_mut(&thread) {
            Some(e) if e.enabled != Some(false) && e.pooled.is_none() => {
                start_pooled(e, p);
                true
            }
            _ => false,
        }
    }

    /// Applies queued reports. Called with the registry locked.
    fn drain(&self, reg: &mut Registry) {
        let events = std::mem::take(&mut *lock(&self.pending));
        for event in events {
            match event {
                Pending::Attached {
                    thread,
                    tid,
                    name,
                    is_ui,
                    block,
                } => {
                    let tick = if is_ui {
                        reg.tick += 1;
                        reg.tick
                    } else {
                        0
                    };
                    let e = reg.threads.entry(thread).or_insert(Entry {
                        tid,
                        name: String::new(),
                        block,
                        enabled: None,
                        last_fg: 0,
                        traced: None,
                        pooled: None,
                        next_seq: 0,
                    });
                    // Another tid: a new Thread at a freed one's address (idempotent otherwise).
                    e.tid = tid;
                    e.name = name;
                    if is_ui && e.last_fg == 0 {
                        e.last_fg = tick;
                    }
                }
                Pending::Foreground(thread) => {
                    reg.tick += 1;
                    let tick = reg.tick;
                    if let Some(e) = reg.threads.get_mut(&thread) {
                        e.last_fg = tick;
                    }
                }
                Pending::Renamed(thread, name) => {
                    if let Some(e) = reg.threads.get_mut(&thread) {
                        e.name = name;
                    }
                }
            }
        }
    }

    fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        let mut reg = lock(&self.registry);
        self.drain(&mut reg);
        reg
    }

    /// A thread is detaching. Called on the thread itself (it runs no trace point meanwhile,
    /// and holds no ART lock): tracing is switched off directly and its ring is reclaimed.
    /// Call [`Control::rebalance`] afterwards (on the control thread).
    pub fn thread_detached(&self, thread: ThreadHandle) {
        let mut reg = self.registry();
        if let Some(mut e) = reg.threads.remove(&thread) {
            if let (Some(_), Some(p)) = (e.pooled.take(), &self.pool) {
                // SAFETY: the entry was registered and the thread is still alive (it is calling).
                let b = unsafe { block_at(e.block) };
                // Seals the block it holds, also when it answered a stop that no restart
                // followed (a flush that timed out on another thread): else the block stays
                // OWNED for good (docs/many-threads.md, "Threads that start and die").
                pool::unregister(b, p);
                clear_block(b);
                // Its sealed blocks stay readable until overwritten: the flush names them.
                reg.book.exited.insert(e.tid, std::mem::take(&mut e.name));
            }
            if let Some(t) = e.traced.take() {
                // SAFETY: the entry was registered and the thread is still alive (it is calling).
                let b = unsafe { block_at(e.block) };
                clear_block(b);
                t.ring.clear();
                reg.spare.push(t.ring);
            }
        }
    }

    /// The thread's name changed. Returns the command if the name was a `HUBBLE:` command (then
    /// ART keeps the real name; the caller hands the command to the control thread).
    pub fn thread_renamed(&self, thread: ThreadHandle, name: &str) -> Option<Command> {
        let command = props::parse_thread_name(name);
        if command.is_none() {
            lock(&self.pending).push(Pending::Renamed(thread, name.to_string()));
        }
        command
    }

    /// The thread became foreground: it is among the N most recent now. Call
    /// [`Control::rebalance`] afterwards (on the control thread: it may wait for a stop).
    pub fn thread_foreground(&self, thread: ThreadHandle) {
        lock(&self.pending).push(Pending::Foreground(thread));
    }

    /// Per-thread enable (counts as foreground now) or disable.
    pub fn set_thread_enabled(
        &self,
        thread: ThreadHandle,
        enabled: bool,
    ) -> Result<(), RuntimeError> {
        {
            let mut reg = self.registry();
            reg.tick += 1;
            let tick = reg.tick;
            let e = reg
                .threads
                .get_mut(&thread)
                .ok_or(RuntimeError::UnknownThread(thread))?;
            e.enabled = Some(enabled);
            if enabled {
                e.last_fg = tick;
            }
        }
        self.rebalance()
    }

    /// Sets N.
    pub fn set_thread_count(&self, n: usize) -> Result<(), RuntimeError> {
        self.threads_n.store(n.max(1), Ordering::Relaxed);
        self.rebalance()
    }

    /// Turns tracing on for the N most-recently-foreground enabled threads.
    pub fn start_tracing(&self) -> Result<(), RuntimeError> {
        self.registry().tracing_on = true;
        self.rebalance()
    }

    /// Turns tracing off everywhere (rings are kept for a restart).
    pub fn stop_tracing(&self) -> Result<(), RuntimeError> {
        self.registry().tracing_on = false;
        self.rebalance()
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

    /// Threads currently traced (holding a ring, or in the pool in many-thread mode).
    pub fn traced_threads(&self) -> Vec<ThreadHandle> {
        let reg = self.registry();
        let mut v: Vec<_> = reg
            .threads
            .iter()
            .filter(|(_, e)| e.traced.is_some() || e.pooled.is_some())
            .map(|(h, _)| *h)
            .collect();
        v.sort_unstable();
        v
    }

    /// Makes the traced set the N most-recently-foreground enabled threads: stops and reclaims
    /// the rings of threads that fell out (oldest first), then starts the newcomers.
    pub fn rebalance(&self) -> Result<(), RuntimeError> {
        if let Some(p) = &self.pool {
            return self.rebalance_pool(p);
        }
        let n = self.threads_n.load(Ordering::Relaxed);
        let mut reg = self.registry();
        let mut wanted: Vec<(u64, ThreadHandle)> = if reg.tracing_on {
            reg.threads
                .iter()
                .filter(|(_, e)| {
                    e.enabled != Some(false) && (e.last_fg > 0 || e.enabled == Some(true))
                })
                .map(|(h, e)| (e.last_fg, *h))
                .collect()
        } else {
            Vec::new()
        };
        wanted.sort_unstable_by(|a, b| b.cmp(a));
        wanted.truncate(n);
        let keep: Vec<ThreadHandle> = wanted.iter().map(|w| w.1).collect();
        let mut result = Ok(());
        // Reclaim, oldest foreground first.
        let mut drop_list: Vec<(u64, ThreadHandle)> = reg
            .threads
            .iter()
            .filter(|(h, e)| e.traced.is_some() && !keep.contains(h))
            .map(|(h, e)| (e.last_fg, *h))
            .collect();
        drop_list.sort_unstable();
        for (_, h) in drop_list {
            match self.stop_entry(&mut reg, h, StopCause::Reclaim) {
                Ok(_) => {
                    let e = reg.threads.get_mut(&h).expect("listed");
                    let t = e.traced.take().expect("traced");
                    // SAFETY: registered threads are alive while the registry lock is held.
                    clear_block(unsafe { block_at(e.block) });
                    t.ring.clear();
                    reg.spare.push(t.ring);
                }
                Err(err) => {
                    warn!("hubble: cannot reclaim the ring of {h:#x}: {err}");
                    result = Err(err);
                }
            }
        }
        let in_use = reg.threads.values().filter(|e| e.traced.is_some()).count();
        let mut free = n.saturating_sub(in_use);
        for h in keep {
            if free == 0 {
                break;
            }
            if reg.threads.get(&h).is_some_and(|e| e.traced.is_some()) {
                continue;
            }
            let ring = match reg.spare.pop() {
                Some(r) if r.bytes() == self.config.ring_bytes => r,
                _ => Ring::new(self.config.ring_bytes).map_err(RuntimeError::Map)?,
            };
            let epoch = lock(&self.symbols).epoch();
            let ts = self.art.timer() as u32;
            reg.runs += 1;
            let run = reg.runs;
            let e = reg.threads.get_mut(&h).expect("listed");
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(e.block) };
            block::start(b, ring.slots(), self.config.mode, 0, ts);
            e.traced = Some(Traced {
                ring,
                run,
                start_epoch: epoch,
                stopping: None,
                anchors: Anchors::default(),
            });
            free -= 1;
        }
        result
    }

    /// Many-thread mode: every registered thread not disabled traces while tracing is on (a
    /// start costs no memory: the thread takes a block at its first trace point). The others
    /// are stopped, their block sealed from their end (readable until overwritten) and their
    /// words cleared.
    fn rebalance_pool(&self, p: &Pool) -> Result<(), RuntimeError> {
        let mut reg = self.registry();
        let on = reg.tracing_on;
        let mut leaving = Vec::new();
        let mut handles: Vec<ThreadHandle> = reg.threads.keys().copied().collect();
        handles.sort_unstable();
        for h in handles {
            let e = reg.threads.get_mut(&h).expect("listed");
            let wanted = on && e.enabled != Some(false);
            if wanted && e.pooled.is_none() {
                start_pooled(e, p);
            } else if !wanted && e.pooled.is_some() {
                leaving.push(h);
            }
        }
        if leaving.is_empty() {
            return Ok(());
        }
        let (stopped, late) = self.stop_pooled(&mut reg, &leaving, &StopCause::Reclaim);
        for s in stopped {
            let e = reg.threads.get_mut(&s.thread).expect("listed");
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(e.block) };
            pool::unregister(b, p);
            // Skip one `seq`: a later start is not the continuation of this run.
            e.next_seq = (b.end.load(crate::sync::Ordering::Relaxed) as u32).wrapping_add(1);
            clear_block(b);
            e.pooled = None;
        }
        match late.first() {
            None => Ok(()),
            Some(&h) => Err(RuntimeError::StopTimeout(h, self.config.stop_timeout)),
        }
    }

    /// Many-thread mode's all-threads stop (`docs/many-threads.md`, "Stopping all threads"):
    /// every doorbell first, then polls every thread in rounds until each has published its
    /// end: by itself (Acquire), or by the §6 force stop when it is not runnable; the others
    /// get the doorbell again (`pool::ring_again`: a block take's plain `limit` store may have
    /// hidden the first). Returns the stopped threads, and those still running at the stop
    /// timeout, which keep their request with `cause` for [`Control::tick`].
    fn stop_pooled(
        &self,
        reg: &mut Registry,
        threads: &[ThreadHandle],
        cause: &StopCause,
    ) -> (Vec<PoolStopped>, Vec<ThreadHandle>) {
        let mut pending = Vec::with_capacity(threads.len());
        for &h in threads {
            let Some(e) = reg.threads.get_mut(&h) else {
                continue;
            };
            let Some(pt) = e.pooled.as_mut() else {
                continue;
            };
            match &pt.stopping {
                None => {
                    // SAFETY: registered threads are alive while the registry lock is held.
                    block::request_stop(unsafe { block_at(e.block) });
                    pt.stopping = Some(cause.clone());
                }
                Some(StopCause::Reclaim) if *cause != StopCause::Reclaim => {
                    pt.stopping = Some(cause.clone())
                }
                Some(_) => {}
            }
            pending.push((h, e.block));
        }
        let mut stopped = Vec::with_capacity(pending.len());
        let mut backoff = Backoff::new(self.config.stop_timeout, self.config.max_poll_sleep);
        loop {
            pending.retain(|&(h, addr)| {
                // SAFETY: registered threads are alive while the registry lock is held.
                let b = unsafe { block_at(addr) };
                let end = match self.poll_stop(b, h) {
                    Polled::Stopped(end) => Some(end),
                    Polled::Pending => None,
                    // Cursor 0 and nothing published: it holds no block (SEALED as its end:
                    // nothing to close, a restart starts it afresh).
                    Polled::NotTracing => Some(hubble_format::pool::SEALED as usize),
                };
                match end {
                    Some(end) => {
                        stopped.push(PoolStopped {
                            thread: h,
                            block: b.end.load(crate::sync::Ordering::Relaxed),
                            end,
                        });
                        false
                    }
                    None => {
                        pool::ring_again(b);
                        true
                    }
                }
            });
            if pending.is_empty() {
                break;
            }
            if !backoff.wait() {
                break;
            }
        }
        for s in &stopped {
            if let Some(pt) = reg
                .threads
                .get_mut(&s.thread)
                .and_then(|e| e.pooled.as_mut())
            {
                pt.stopping = None;
            }
        }
        (stopped, pending.into_iter().map(|(h, _)| h).collect())
    }

    /// Completes a pending stop and restarts the ring where the thread stopped.
    fn restart_stopped(&self, h: ThreadHandle) -> Result<(), RuntimeError> {
        let mut reg = self.registry();
        let end = self.stop_entry(&mut reg, h, StopCause::Reclaim)?;
        let e = reg
            .threads
            .get_mut(&h)
            .ok_or(RuntimeError::UnknownThread(h))?;
        let t = e.traced.as_mut().ok_or(RuntimeError::NotTraced(h))?;
        let slots = t.ring.slots();
        let ts = self.art.timer() as u32;
        // SAFETY: registered threads are alive while the registry lock is held.
        let b = unsafe { block_at(e.block) };
        // The same window goes on (no file was written): its epoch stays.
        block::start(b, slots, self.config.mode, slots.offset(end), ts);
        // Older positions are behind the start record now.
        t.anchors.clear();
        Ok(())
    }

    /// Stops a traced thread (§6): doorbell, bounded backing-off poll, and the native-state
    /// force stop. Returns the end position (an address). On a timeout the request stays, with
    /// its cause, for [`Control::tick`]; a flush's cause outranks a reclaim's.
    fn stop_entry(
        &self,
        reg: &mut Registry,
        h: ThreadHandle,
        cause: StopCause,
    ) -> Result<usize, RuntimeError> {
        let e = reg
            .threads
            .get_mut(&h)
            .ok_or(RuntimeError::UnknownThread(h))?;
        let t = e.traced.as_mut().ok_or(RuntimeError::NotTraced(h))?;
        // SAFETY: registered threads are alive while the registry lock (held by our caller) is.
        let b = unsafe { block_at(e.block) };
        match &t.stopping {
            None => {
                block::request_stop(b);
                t.stopping = Some(cause);
            }
            Some(StopCause::Reclaim) if cause != StopCause::Reclaim => t.stopping = Some(cause),
            Some(_) => {}
        }
        let end = self.wait_stopped(b, h)?;
        t.stopping = None;
        Ok(end)
    }

    fn wait_stopped(&self, b: &ThreadBlock, h: ThreadHandle) -> Result<usize, RuntimeError> {
        let mut backoff = Backoff::new(self.config.stop_timeout, self.config.max_poll_sleep);
        loop {
            match self.poll_stop(b, h) {
                Polled::Stopped(end) => return Ok(end),
                Polled::NotTracing => return Err(RuntimeError::NotTraced(h)),
                Polled::Pending => {}
            }
            if !backoff.wait() {
                return Err(RuntimeError::StopTimeout(h, self.config.stop_timeout));
            }
        }
    }

    /// One look at a thread asked to stop: its published end, or (not running managed code)
    /// the §6 force stop; counted in the stats.
    fn poll_stop(&self, b: &ThreadBlock, h: ThreadHandle) -> Polled {
        if let Some(end) = block::poll_stopped(b) {
            self.stats.cooperative_stops.fetch_add(1, Ordering::Relaxed);
            return Polled::Stopped(end);
        }
        if self.art.is_runnable(h) {
            return Polled::Pending;
        }
        let lock = ArtStateLock {
            art: &self.art,
            thread: h,
        };
        match block::force_stop(b, &lock) {
            ForceStop::Forced(end) => {
                self.stats.forced_stops.fetch_add(1, Ordering::Relaxed);
                Polled::Stopped(end)
            }
            ForceStop::AlreadyStopped(end) => {
                self.stats.cooperative_stops.fetch_add(1, Ordering::Relaxed);
                Polled::Stopped(end)
            }
            ForceStop::Runnable => {
                self.stats.recheck_saves.fetch_add(1, Ordering::Relaxed);
                Polled::Pending
            }
            ForceStop::NotTracing => Polled::NotTracing,
        }
    }

    /// ART's signal catcher received SIGQUIT (an ANR or another stack dump): records an ANR
    /// flush request for the control thread and returns. This is all that runs on the signal
    /// catcher's path: one atomic swap and two counter increments; no lock, no allocation, no
    /// I/O, no call into ART. Returns true if the request is new (the caller wakes the control
    /// thread), false if it joins one the control thread has not taken yet.
    pub fn request_anr(&self) -> bool {
        self.stats.anr_requests.fetch_add(1, Ordering::Relaxed);
        // AcqRel: pairs with the control thread's swap in `handle_anr`; nothing else is handed
        // over (the request carries no data).
        let new = !self.anr.pending.swap(true, Ordering::AcqRel);
        if !new {
            self.stats.anr_coalesced.fetch_add(1, Ordering::Relaxed);
        }
        new
    }

    /// On the control thread: takes a pending ANR request, applies the rate limit
    /// ([`crate::props::ANR_INTERVAL`]), and flushes every traced thread with reason
    /// [`ANR_REASON`]. `None` if no request was pending.
    ///
    /// The request is taken before the flush: one that arrives during it is handled after it,
    /// against the interval (so an ANR storm writes one set of files per interval, and requests
    /// that pile up before the control thread looks become one flush). The interval is measured
    /// on the runtime's timer from the start of the last ANR flush.
    ///
    /// Every traced thread's stop doorbell is rung first (two stores per thread, no lock of
    /// ART's), so each window ends at the request, not after the flushes of the threads before
    /// it; then each thread is flushed in turn (§6 stop, force stop if it is in native code,
    /// copy, restart, symbolize, write). A thread that does not answer within the stop timeout
    /// (a long loop without calls) keeps its request and is flushed by a later tick
    /// ([`Control::tick`]).
    pub fn handle_anr(&self) -> Option<Anr> {
        if !self.anr.pending.swap(false, Ordering::AcqRel) {
            return None;
        }
        let now = self.art.timer();
        let hz = self.art.timer_hz();
        {
            let mut policy = lock(&self.anr.policy);
            let value = self.props.get(props::ANR_INTERVAL);
            if value != policy.source {
                match value.as_deref().map(props::parse_anr_interval) {
                    None => policy.interval = None,
                    Some(Ok(interval)) => policy.interval = Some(interval),
                    Some(Err(e)) => warn!(
                        "hubble: {e}; keeping {}",
                        match policy.interval {
                            None => format!("{:?}", props::DEFAULT_ANR_INTERVAL),
                            Some(None) => "off".to_string(),
                            Some(Some(d)) => format!("{d:?}"),
                        }
                    ),
                }
                policy.source = value;
            }
            let Some(interval) = policy.interval.unwrap_or(Some(props::DEFAULT_ANR_INTERVAL))
            else {
                info!(
                    "hubble: SIGQUIT: no ANR flush ({} is off)",
                    props::ANR_INTERVAL
                );
                return Some(Anr::Disabled);
            };
            let ticks = (interval.as_nanos() * u128::from(hz) / 1_000_000_000)
                .min(u128::from(u64::MAX)) as u64;
            if let Some(last) = policy.last {
                if now.wrapping_sub(last) < ticks {
                    self.stats.anr_suppressed.fetch_add(1, Ordering::Relaxed);
                    info!(
                        "hubble: SIGQUIT: ANR flush rate-limited (one per {interval:?}, {})",
                        props::ANR_INTERVAL
                    );
                    return Some(Anr::Suppressed);
                }
            }
            policy.last = Some(now);
        }
        if let Some(p) = &self.pool {
            let n = self.traced_threads().len();
            info!(
                "hubble: SIGQUIT (ANR or stack dump): flushing {n} threads of the pool to one file"
            );
            self.stats.anr_flushes.fetch_add(1, Ordering::Relaxed);
            // The all-threads stop rings every doorbell before it waits for any thread.
            let ok = self
                .finish(self.flush_pool(p, ANR_REASON), ANR_REASON)
                .is_ok();
            return Some(Anr::Flushed(usize::from(ok)));
        }
        let threads = self.request_stops(StopCause::Flush(ANR_REASON.to_string()));
        info!(
            "hubble: SIGQUIT (ANR or stack dump): flushing {} traced threads",
            threads.len()
        );
        self.stats.anr_flushes.fetch_add(1, Ordering::Relaxed);
        // Each failure is logged and counted by flush itself.
        let flushed = threads
            .into_iter()
            .filter(|&h| self.flush(h, ANR_REASON).is_ok())
            .count();
        Some(Anr::Flushed(flushed))
    }

    /// Rings the stop doorbell of every traced thread whose stop is not requested yet, with
    /// `cause`; a pending reclaim is upgraded to `cause`, as in [`Control::stop_entry`]. Returns
    /// the traced threads. Two stores per thread: never waits for one.
    fn request_stops(&self, cause: StopCause) -> Vec<ThreadHandle> {
        let mut reg = self.registry();
        let mut traced = Vec::new();
        for (h, e) in reg.threads.iter_mut() {
            let Some(t) = e.traced.as_mut() else { continue };
            match &t.stopping {
                None => {
                    // SAFETY: registered threads are alive while the registry lock is held.
                    block::request_stop(unsafe { block_at(e.block) });
                    t.stopping = Some(cause.clone());
                }
                Some(StopCause::Reclaim) => t.stopping = Some(cause.clone()),
                Some(StopCause::Flush(_)) => {}
            }
            traced.push(*h);
        }
        traced.sort_unstable();
        traced
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
            None => self.flush_inner(thread, reason),
        };
        self.finish(r, reason)
    }

    fn finish(
        &self,
        r: Result<Flushed, RuntimeError>,
        reason: &str,
    ) -> Result<Flushed, RuntimeError> {
        match &r {
            Ok(f) => {
                if f.path.is_some() {
                    self.stats.flushes.fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(e) => {
                self.stats.failed_flushes.fetch_add(1, Ordering::Relaxed);
                error!("hubble: flush ({reason}) failed: {e}; tracing resumes");
            }
        }
        r
    }

    /// Many-thread mode's flush: the all-threads stop, the snapshot (each open block closed at
    /// its owner's end), a restart of every thread, all under the registry lock; then, on this
    /// thread alone, `thread_streams`, the symbols of every run once, and one version 4 file
    /// written atomically. If a thread does not stop in time the flush writes nothing: the
    /// others are restarted, its request stays, and the tick runs the flush again once it has
    /// answered (a snapshot taken while a thread runs could hold a block it is taking over).
    ///
    /// Each file holds what is new since the previous flush, as a ring's window does: runs whose
    /// every block predates the previous flush are left out (they were in its file), except a
    /// block a thread went on in behind a start record, from which readers decode the new part.
    fn flush_pool(&self, p: &Pool, reason: &str) -> Result<Flushed, RuntimeError> {
        let consent = self.consent();
        let t0 = Instant::now();
        // One flush at a time (and none beside `prune_dead_names`' scan).
        let _serial = lock(&self.window);
        let (snapshot, header, names, last_head, continued, idle) = {
            let mut reg = self.registry();
            let mut threads: Vec<ThreadHandle> = reg
                .threads
                .iter()
                .filter(|(_, e)| e.pooled.is_some())
                .map(|(h, _)| *h)
                .collect();
            threads.sort_unstable();
            let (stopped, late) =
                self.stop_pooled(&mut reg, &threads, &StopCause::Flush(reason.to_string()));
            if let Some(&h) = late.first() {
                for s in &stopped {
                    let e = &reg.threads[&s.thread];
                    // SAFETY: registered threads are alive while the registry lock is held.
                    pool::resume(unsafe { block_at(e.block) }, p, s.end);
                }
                return Err(RuntimeError::StopTimeout(h, self.config.stop_timeout));
            }
            let (counter, wall) = clock_pair(&self.art);
            let ends: Vec<(usize, usize)> = stopped.iter().map(|s| (s.block, s.end)).collect();
            let snapshot = pool::snapshot(p, &ends);
            let head = pool::head(p);
            // Restart at once: the threads lose only the trace points of the copy.
            let now = self.art.timer();
            let mut continued = std::collections::HashSet::new();
            // Each thread's idle gaps so far, for this file; its next ones are behind the start
            // record the restart writes.
            let mut anchors = std::collections::BTreeMap::new();
            for s in &stopped {
                let e = reg
                    .threads
                    .get_mut(&s.thread)
                    .expect("stopped threads are registered");
                if let Some(pt) = e.pooled.as_mut() {
                    anchors.insert(e.tid, std::mem::take(&mut pt.anchors));
                }
                // SAFETY: registered threads are alive while the registry lock is held.
                let b = unsafe { block_at(e.block) };
                if pool::restart(b, p, s.end, now) {
                    continued.insert(snapshot[(s.block - p.base()) / block::SLOT + H_TICKET]);
                }
            }
            let last_head = std::mem::replace(&mut reg.book.last_head, head);
            let last_continued = std::mem::replace(&mut reg.book.continued, continued);
            let mut names: std::collections::BTreeMap<u32, String> = reg.book.exited.clone();
            for e in reg.threads.values() {
                names.insert(e.tid, e.name.clone());
            }
            let header = ProcessHeader {
                mode: self.config.mode,
                timer_hz: self.art.timer_hz(),
                reference_counter: counter,
                wall_clock_ns: wall,
                pid: std::process::id(),
                process_name: self.config.process.clone(),
                reason: reason.to_string(),
                metadata: props::metadata(&*self.props),
            };
            (snapshot, header, names, last_head, last_continued, anchors)
        };
        let g = p.geometry();
        let mut streams = thread_streams(&snapshot, g, p.base() as u64)?;
        {
            // Forget the names of threads gone whose blocks the pool no longer holds.
            let mut reg = self.registry();
            let live: std::collections::HashSet<u32> = streams.iter().map(|s| s.tid).collect();
            reg.book.exited.retain(|tid, _| live.contains(tid));
        }
        streams.retain(|s| {
            s.blocks
                .last()
                .is_some_and(|last| last.ticket >= last_head || continued.contains(&last.ticket))
        });
        let anchors: std::collections::BTreeMap<u32, Vec<hubble_format::TimeAnchor>> = idle
            .iter()
            .map(|(&tid, a)| {
                let runs: Vec<&hubble_format::pool::ThreadStream> =
                    streams.iter().filter(|s| s.tid == tid).collect();
                (tid, a.for_pool(p.base(), g.block_slots, &snapshot, &runs))
            })
            .filter(|(_, a)| !a.is_empty())
            .collect();
        drop(snapshot);
        let slots: usize = streams.iter().map(|s| s.slots.len()).sum();
        if !consent {
            info!(
                "hubble: no consent ({}), trace of {} threads discarded",
                props::CONSENT,
                streams.len()
            );
            return Ok(Flushed {
                path: None,
                slots,
                symbols: 0,
                phases: [t0.elapsed(), Duration::ZERO, Duration::ZERO, Duration::ZERO],
            });
        }
        let t1 = Instant::now();
        let mut distinct = DistinctPointers::default();
        for s in &streams {
            flush::distinct_methods(&s.slots, self.config.mode, &mut distinct)?;
        }
        // The pool may hold records from before any unload so far: epoch 0 takes every dead
        // loader's name from the cache, never from ART.
        let symbols = self.symbolize_pointers(distinct, 0);
        let symbols: std::collections::BTreeMap<u64, String> = symbols
            .into_iter()
            .map(|(p, name)| (p, name.to_string()))
            .collect();
        let nsymbols = symbols.len();
        let t2 = Instant::now();
        let unix_ms = header.wall_clock_ns / 1_000_000;
        let file = ThreadsFile::from_streams(header, streams, &names, &anchors, symbols);
        let bytes = file.to_bytes()?;
        drop(file);
        let dir = &self.config.dir;
        let io = |path: &std::path::Path| {
            let path = path.to_path_buf();
            move |source| RuntimeError::Io { path, source }
        };
        self.storage.ensure_dir(dir).map_err(io(dir))?;
        // tid 0: no thread of its own, every thread of the process.
        let path = flush::trace_path(dir, unix_ms, std::process::id(), 0, reason);
        let out = self.storage.create_atomic(&path).map_err(io(&path))?;
        for (i, chunk) in bytes.chunks(WRITE_CHUNK).enumerate() {
            out.write_at((i * WRITE_CHUNK) as u64, chunk)
                .map_err(io(&path))?;
        }
        out.commit().map_err(io(&path))?;
        let t3 = Instant::now();
        self.retain(dir);
        Ok(Flushed {
            path: Some(path),
            slots,
            symbols: nsymbols,
            phases: [t1 - t0, t2 - t1, t3 - t2, t3.elapsed()],
        })
    }

    fn flush_inner(&self, thread: ThreadHandle, reason: &str) -> Result<Flushed, RuntimeError> {
        let consent = self.consent();
        let t0 = Instant::now();
        let mut window = lock(&self.window);
        let (header, window_epoch) = {
            let mut reg = self.registry();
            let end = self.stop_entry(&mut reg, thread, StopCause::Flush(reason.to_string()))?;
            let (counter, wall) = clock_pair(&self.art);
            let epoch_now = lock(&self.symbols).epoch();
            let e = reg.threads.get_mut(&thread).expect("stopped above");
            let t = e.traced.as_mut().expect("stopped above");
            let slots = t.ring.slots();
            let end_offset = slots.offset(end);
            // Only the walk that finds the window and the copy happen while the thread is
            // stopped. Collecting the pointers in the same walk would save one walk over the
            // copy (~15% of the flush's instructions) but kept the thread stopped ~4× longer
            // (15 ms instead of 4 ms for a full 32 MiB ring), and the second walk runs beside
            // the window write anyway.
            let copied = flush::copy_window(slots, end_offset, self.config.mode, &mut window);
            // Restart right away, whatever happens next: the traced thread loses nothing more
            // than the trace points of the copy. The start record carries the time tracing
            // really resumes (after the copy), not the flush's reference: tools anchor frames
            // that began before the new window there.
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(e.block) };
            block::start(
                b,
                slots,
                self.config.mode,
                end_offset,
                self.art.timer() as u32,
            );
            let window_epoch = std::mem::replace(&mut t.start_epoch, epoch_now);
            copied?;
            let anchors = t.anchors.for_window(slots, end, &window);
            t.anchors.clear();
            (
                TraceHeader {
                    mode: self.config.mode,
                    timer_hz: self.art.timer_hz(),
                    reference_counter: counter,
                    wall_clock_ns: wall,
                    ring_bytes: t.ring.bytes() as u64,
                    write_pos: end_offset as u64,
                    pid: std::process::id(),
                    tid: e.tid,
                    thread_name: e.name.clone(),
                    process_name: self.config.process.clone(),
                    reason: reason.to_string(),
                    anchors,
                    metadata: props::metadata(&*self.props),
                },
                window_epoch,
            )
        };
        if !consent {
            info!(
                "hubble: no consent ({}), trace of {} discarded",
                props::CONSENT,
                header.tid
            );
            return Ok(Flushed {
                path: None,
                slots: window.len(),
                symbols: 0,
                phases: [t0.elapsed(), Duration::ZERO, Duration::ZERO, Duration::ZERO],
            });
        }
        let t1 = Instant::now();
        let dir = &self.config.dir;
        let io = |path: &std::path::Path| {
            let path = path.to_path_buf();
            move |source| RuntimeError::Io { path, source }
        };
        self.storage.ensure_dir(dir).map_err(io(dir))?;
        let unix_ms = header.wall_clock_ns / 1_000_000;
        let path = flush::trace_path(dir, unix_ms, std::process::id(), header.tid, reason);
        let file = self.storage.create_atomic(&path).map_err(io(&path))?;
        let offset = hubble_format::file::window_offset(&header)?;
        let bytes = hubble_format::file::window_bytes(&window);
        // The window is nearly all of the file and needs nothing but the copy: a helper thread
        // writes and checksums it while this thread (attached to ART) resolves the symbols,
        // which the header counts and the tail holds. The helper touches only the copy and the
        // file, never ART or the ring.
        let write_window = || -> std::io::Result<(WindowCrc, Duration)> {
            let t = Instant::now();
            for (i, chunk) in bytes.chunks(WRITE_CHUNK).enumerate() {
                file.write_at((offset + i * WRITE_CHUNK) as u64, chunk)?;
            }
            file.start_writeback();
            let crc = WindowCrc::of(&bytes);
            Ok((crc, t.elapsed()))
        };
        let (symbols, written, symbolized) = std::thread::scope(|s| {
            let helper = std::thread::Builder::new()
                .name("HubbleWrite".into())
                .spawn_scoped(s, write_window);
            let t = Instant::now();
            let symbols = self.symbolize(&window, window_epoch);
            let symbolized = t.elapsed();
            let written = match helper {
                Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                // No thread to be had: one after the other.
                Err(_) => write_window(),
            };
            (symbols, written, symbolized)
        });
        let t2 = Instant::now();
        let symbols = symbols?;
        let (crc, window_written) = written.map_err(io(&path))?;
        let (head, tail) = hubble_format::file::encode_around(
            &header,
            window.len(),
            &crc,
            symbols.len(),
            symbols.iter().map(|(p, name)| (*p, &**name)),
        )?;
        debug_assert_eq!(head.len(), offset);
        file.write_at(0, &head).map_err(io(&path))?;
        file.write_at((offset + bytes.len()) as u64, &tail)
            .map_err(io(&path))?;
        file.commit().map_err(io(&path))?;
        let finished = t2.elapsed();
        self.retain(dir);
        Ok(Flushed {
            path: Some(path),
            slots: window.len(),
            symbols: symbols.len(),
            phases: [t1 - t0, symbolized, window_written, finished],
        })
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

    /// Names for every distinct pointer of a window, sorted by pointer: cache, dead-loader
    /// names, then ART for the rest ([`crate::symbols::resolve_missing`]: in chunks, no lock of
    /// ours held across the call into ART).
    fn symbolize(
        &self,
        window: &[u64],
        window_epoch: u64,
    ) -> Result<Vec<(u64, Arc<str>)>, RuntimeError> {
        let mut distinct = DistinctPointers::default();
        flush::distinct_methods(window, self.config.mode, &mut distinct)?;
        Ok(self.symbolize_pointers(distinct, window_epoch))
    }

    /// Names for `distinct` pointers, sorted by pointer ([`Control::symbolize`]).
    fn symbolize_pointers(
        &self,
        distinct: DistinctPointers,
        window_epoch: u64,
    ) -> Vec<(u64, Arc<str>)> {
        // The file wants the pointers in order: sorting them bare moves 8 bytes an element,
        // sorting (pointer, name) pairs afterwards 24.
        let mut pointers: Vec<u64> = distinct.iter().collect();
        drop(distinct);
        pointers.sort_unstable();
        let mut names: Vec<Option<Arc<str>>> = vec![None; pointers.len()];
        resolve_missing(
            &self.symbols,
            &ArtResolver(&self.art),
            &pointers,
            window_epoch,
            &mut names,
        );
        let out: Vec<(u64, Arc<str>)> = pointers
            .into_iter()
            .zip(names)
            .filter_map(|(p, name)| Some((p, name?)))
            .collect();
        // Dead names older than every ring's window can go.
        let oldest = lock(&self.registry)
            .threads
            .values()
            .filter_map(|e| e.traced.as_ref().map(|t| t.start_epoch))
            .min();
        if let Some(oldest) = oldest {
            lock(&self.symbols).prune_dead(oldest);
        }
        out
    }

    /// ClassLoader hook: called by ART under its unload lock, on the GC thread holding the
    /// mutator lock, before `loader`'s memory (its `ArtMethod`s) is freed. Every method of the
    /// loader is named now, while it is alive, and remembered as dead: windows that started
    /// before now take its name from the cache and never hand the pointer to ART (see
    /// [`crate::symbols::resolve_missing`] for why no flush in progress can either). It takes
    /// only the symbol cache's leaf lock: it never waits for a flush, a traced thread or the
    /// disk, so it cannot stall the GC or deadlock with a pending SuspendAll (docs/protocol.md).
    /// Returns how many methods were named.
    pub fn class_loader_unloading(&self, loader: usize) -> usize {
        let mut owned = Vec::new();
        self.art.loader_methods(loader, &mut owned);
        let mut names = Vec::with_capacity(owned.len());
        self.art.resolve(&owned, &mut names);
        let named: Vec<(u64, Arc<str>)> = owned
            .iter()
            .copied()
            .zip(names.into_iter().map(Arc::from))
            .collect();
        let n = named.len();
        lock(&self.symbols).unload(&owned, named);
        self.stats
            .unloaded_names
            .fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// The control thread's periodic work (every [`crate::TICK`]), after commands and
    /// properties. Each step reads the traced threads' state and never waits for one of them.
    pub fn tick(&self) {
        self.stats.ticks.fetch_add(1, Ordering::Relaxed);
        self.finish_late_stops();
        self.close_lagging_blocks();
        self.prune_dead_names();
        self.observe_idle();
        crate::triggers::tick(self);
    }

    /// Many-thread mode: closes the block of every thread in native code that has held it while
    /// the pool went more than N − A tickets round (BTrace's bound on active blocks). Without it,
    /// a thread that idles for good (a pool worker waiting for work, a looper on an empty queue)
    /// would keep its half-written block OWNED: the pool could never hand it on, and with enough
    /// such threads every take would skip owned blocks and drop records. Closed under the
    /// thread's state lock, as a force stop is (`pool::force_close` re-checks that the thread is
    /// not runnable and not stopping); its next trace point takes a fresh block, `seq` going on
    /// without a gap. A runnable thread is left alone: it is writing its block, and it reaches
    /// the block's end itself.
    pub fn close_lagging_blocks(&self) {
        let Some(p) = &self.pool else { return };
        // Tickets below this one are more than N − A behind the head.
        let older_than = pool::head(p).saturating_sub(p.geometry().delay());
        let reg = self.registry();
        for (&h, e) in &reg.threads {
            if e.pooled.is_none() {
                continue;
            }
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(e.block) };
            // Without the lock, a hint that keeps the state lock off threads with nothing to
            // close; force_close decides under it.
            let lagging = pool::held_ticket(b, p).is_some_and(|t| t < older_than);
            if !lagging || self.art.is_runnable(h) {
                continue;
            }
            let lock = ArtStateLock {
                art: &self.art,
                thread: h,
            };
            if pool::force_close(b, p, &lock, older_than) {
                self.stats.lagging_closed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Notes the traced threads' idle gaps ([`crate::anchors`]): one cursor load and one counter
    /// read per thread, no store to it.
    fn observe_idle(&self) {
        let margin = anchors::margin(self.art.timer_hz());
        let mut reg = self.registry();
        for e in reg.threads.values_mut() {
            let (anchors, slots) = match (e.traced.as_mut(), e.pooled.as_mut(), &self.pool) {
                (Some(t), _, _) => (&mut t.anchors, t.ring.slots()),
                (None, Some(pt), Some(p)) => (&mut pt.anchors, p.slots()),
                _ => continue,
            };
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(e.block) };
            let cursor = b.cursor.load(crate::sync::Ordering::Acquire);
            let now = self.art.timer();
            anchors.observe(slots, cursor, now, margin);
        }
    }

    /// Bounds the dead-loader names: past `dead_names_scan_at` of them, scans every traced ring
    /// (relaxed reads while the threads run) and keeps only the names of pointers still in one.
    /// Exact because a dead loader's methods can never be written again (nothing can call
    /// them): a pointer absent now stays absent. The window lock keeps any flush's copy, the
    /// only other place a window lives, from being between its copy and its symbolization.
    fn prune_dead_names(&self) {
        if lock(&self.symbols).dead_len() < self.config.dead_names_scan_at {
            return;
        }
        let _window = lock(&self.window);
        let mut present = PointerSet::default();
        if let Some(p) = &self.pool {
            // Every slot of the pool (headers too: a false candidate only keeps a name longer).
            // The first slot has no predecessor: 0, never a method.
            let slots = p.copy();
            let sym = lock(&self.symbols);
            keep_dead_pointers(&sym, slots.iter().copied(), 0, &mut present);
        }
        {
            let reg = self.registry();
            let sym = lock(&self.symbols);
            for t in reg.threads.values().filter_map(|e| e.traced.as_ref()) {
                let slots = t.ring.slots().slots;
                let load = |s: &crate::sync::AtomicU64| s.load(crate::sync::Ordering::Relaxed);
                // A ring's first slot follows its last.
                let last = slots.last().map_or(0, load);
                keep_dead_pointers(&sym, slots.iter().map(load), last, &mut present);
            }
        }
        let mut sym = lock(&self.symbols);
        let before = sym.dead_len();
        sym.retain_dead(|p| present.contains(&p));
        info!(
            "hubble: dead-loader names {before} -> {} (the rest are in no ring)",
            sym.dead_len()
        );
    }

    /// A stop that timed out (the thread ran a long stretch without a trace point)
    /// stays requested; once the thread has answered it, or can be force-stopped because it left
    /// managed code, the flush or reclaim that asked for it is finished here and tracing restarts.
    /// Without this the thread would stay silently untraced until the next explicit flush, whose
    /// window would end at the old stop.
    fn finish_late_stops(&self) {
        let ready: Vec<(ThreadHandle, StopCause)> = {
            let reg = self.registry();
            reg.threads
                .iter()
                .filter_map(|(h, e)| {
                    let cause = match (&e.traced, &e.pooled) {
                        (Some(t), _) => t.stopping.clone()?,
                        (None, Some(pt)) => pt.stopping.clone()?,
                        (None, None) => return None,
                    };
                    // SAFETY: registered threads are alive while the registry lock is held.
                    let b = unsafe { block_at(e.block) };
                    let answered = block::poll_stopped(b).is_some() || !self.art.is_runnable(*h);
                    answered.then_some((*h, cause))
                })
                .collect()
        };
        if self.pool.is_some() {
            // One flush of every thread, or one rebalance, covers every late thread.
            let flush = ready.iter().find_map(|(_, c)| match c {
                StopCause::Flush(reason) => Some(reason.clone()),
                StopCause::Reclaim => None,
            });
            if let Some(reason) = flush {
                info!("hubble: the pool's threads stopped late; finishing the flush ({reason})");
                // Logged and counted by flush itself.
                let _ = self.flush(0, &reason);
            } else if !ready.is_empty() {
                if let Err(e) = self.rebalance() {
                    warn!("hubble: {e}");
                }
            }
            return;
        }
        for (h, cause) in ready {
            match cause {
                StopCause::Flush(reason) => {
                    info!("hubble: thread {h:#x} stopped late; finishing its flush ({reason})");
                    // Logged and counted by flush itself.
                    let _ = self.flush(h, &reason);
                }
                StopCause::Reclaim => {
                    // Rebalance reclaims it if it is still unwanted (its stop is answered now);
                    // if it is wanted again by now, it kept its ring: restart it where it stopped.
                    let r = self.rebalance().and_then(|()| {
                        let pending = self.registry().threads.get(&h).is_some_and(|e| {
                            e.traced.as_ref().is_some_and(|t| t.stopping.is_some())
                        });
                        if pending {
                            self.restart_stopped(h)
                        } else {
                            Ok(())
                        }
                    });
                    if let Err(e) = r {
                        warn!("hubble: {e}");
                    }
                }
            }
        }
    }

    /// Dead-loader names kept (for tests and logs).
    pub fn dead_names(&self) -> usize {
        lock(&self.symbols).dead_len()
    }

    /// The duration triggers in force and what they fired.
    pub fn triggers(&self) -> &crate::triggers::Triggers {
        &self.triggers
    }

    /// For [`crate::triggers`]: `f` on every traced thread whose stop is not pending, with its
    /// block, ring and run ([`Traced::run`]), under the registry lock (which keeps both alive).
    /// `f` must not call back into `self`.
    pub(crate) fn for_each_traced_ring(
        &self,
        mut f: impl FnMut(ThreadHandle, &ThreadBlock, crate::block::Slots<'_>, u64),
    ) {
        let reg = self.registry();
        for (h, e) in &reg.threads {
            let Some(t) = e.traced.as_ref().filter(|t| t.stopping.is_none()) else {
                continue;
            };
            // SAFETY: registered threads are alive while the registry lock is held.
            f(*h, unsafe { block_at(e.block) }, t.ring.slots(), t.run);
        }
    }

    /// For [`crate::triggers`]: the pool and every thread traced in it that is not being stopped,
    /// with its tid and the pool's head when it started ([`Pooled::since`]), under the registry
    /// lock.
    pub(crate) fn for_each_pooled_thread(
        &self,
        mut f: impl FnMut(&Pool, ThreadHandle, u32, &ThreadBlock, u64),
    ) {
        let Some(p) = &self.pool else { return };
        let reg = self.registry();
        for (h, e) in &reg.threads {
            let Some(pt) = e.pooled.as_ref().filter(|t| t.stopping.is_none()) else {
                continue;
            };
            // SAFETY: registered threads are alive while the registry lock is held.
            f(p, *h, e.tid, unsafe { block_at(e.block) }, pt.since);
        }
    }

    /// For [`crate::triggers`]: the symbol cache's unload epoch.
    pub(crate) fn symbol_epoch(&self) -> u64 {
        lock(&self.symbols).epoch()
    }

    /// For [`crate::triggers`]: names for `pointers` seen in records written after the symbol
    /// epoch was `epoch` ([`crate::symbols::resolve_missing`]; no lock of ours held into ART).
    pub(crate) fn resolve_names(
        &self,
        pointers: &[u64],
        epoch: u64,
        names: &mut [Option<Arc<str>>],
    ) {
        resolve_missing(
            &self.symbols,
            &ArtResolver(&self.art),
            pointers,
            epoch,
            names,
        );
    }

    /// For [`crate::triggers`]: the property source.
    pub(crate) fn properties(&self) -> &dyn PropertySource {
        &*self.props
    }
}

/// A thread stopped by [`Control::stop_pooled`].
struct PoolStopped {
    thread: ThreadHandle,
    /// Its block word `end` at the stop: the block it holds, or its next `seq` if none.
    block: usize,
    /// The end it published (an address in that block, or `SEALED`).
    end: usize,
}

/// [`Resolver`] through [`Art`].
struct ArtResolver<'a, A: Art>(&'a A);

impl<A: Art> Resolver for ArtResolver<'_, A> {
    fn generation(&self) -> u64 {
        self.0.unload_generation()
    }
    fn resolve(&self, pointers: &[u64], generation: u64, out: &mut Vec<String>) -> bool {
        self.0.resolve_unless_unloaded(pointers, generation, out)
    }
}

/// Adds to `present` every pointer among `slots` (read in order, `before` the slot preceding
/// the first) that has a dead-loader name: a narrow entry's low word, or the slot before a wide
/// entry's marker (low word 1). Exits, pads and start records (0, 2, 3) name nothing.
fn keep_dead_pointers(
    sym: &Symbols,
    slots: impl Iterator<Item = u64>,
    before: u64,
    present: &mut PointerSet,
) {
    let mut previous = before;
    for v in slots {
        let candidate = match v as u32 {
            0 | 2 | 3 => None,
            1 => Some(previous),
            lo => Some(u64::from(lo)),
        };
        if let Some(c) = candidate.filter(|&c| sym.has_dead(c)) {
            present.insert(c);
        }
        previous = v;
    }
}

fn clear_block(b: &ThreadBlock) {
    use crate::sync::Ordering::{Relaxed, Release};
    b.limit.store(0, Relaxed);
    b.stop.store(0, Relaxed);
    b.begin.store(0, Relaxed);
    b.end.store(0, Relaxed);
    b.cursor.store(0, Release);
}
