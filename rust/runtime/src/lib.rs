//! hubble-runtime: the control plane of Hubble for AOSP, linked into libart.
//!
//! * [`block`]: the per-thread block and both sides of the Hubble §6 start/stop protocol.
//! * [`memory`], [`ring`], [`pool`]: mappings committed as they are written; each thread's ring;
//!   many-thread mode's pool of blocks.
//! * [`control`]: traced-thread selection (N most recently foreground), stop, flush, restart,
//!   the ClassLoader hook, commands; [`triggers`]: the duration triggers.
//! * [`flush`], [`symbols`], [`reuse`]: window copy-out, symbolization cache (with the names of
//!   unloaded methods, and which records of a reused address are whose), trace files and
//!   retention.
//! * [`anchors`]: bounds at idle gaps, so timestamps survive gaps of 2^32 ticks and more.
//! * [`props`]: system-property control, the thread-name hook, the consent gate; `host_props`
//!   is the property source the host VM uses in place of bionic's.
//! * [`art`]: what the control plane asks of ART (the trait the cxx bridge and the doubles
//!   implement); [`metrics`]: its counters.
//! * [`ffi`]: the cxx bridge (C++ side: `art/runtime/hubble/hubble_bridge.{h,cc}` on Android,
//!   `host/bridge_double.cc` on the host). The exact C++ API is in `docs/protocol.md`.
//!
//! `docs/protocol.md` has the memory orderings and the loom models that check them.
#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

pub mod anchors;
pub mod art;
pub mod block;
pub mod control;
pub mod flush;
#[cfg(not(target_os = "android"))]
pub mod host_props;
pub mod memory;
pub mod metrics;
pub mod pool;
pub mod props;
pub mod reuse;
pub mod ring;
pub mod symbols;
mod sync;
pub mod triggers;

use std::sync::{mpsc, Arc, Mutex, OnceLock};
use std::time::Duration;

pub use art::{Art, CxxArt, ThreadHandle};
pub use control::{Anr, Config, Control, RuntimeError, ANR_REASON, ATTACH_WAIT};
pub use props::Command;

/// The cxx bridge. ART calls the `extern "Rust"` functions (C++ names in `art::hubble`); the
/// control plane calls the `extern "C++"` ones, implemented in `hubble/hubble_bridge.cc`.
/// Handles (`usize`) are `art::Thread*` and `art::LinearAlloc*` addresses.
#[cxx::bridge(namespace = "art::hubble")]
pub mod ffi {
    extern "Rust" {
        /// After fork (never in zygote), once the package is known. Returns whether Hubble runs
        /// in this process (`debug.hubble.packages`). ART then reports every existing thread
        /// with `ThreadAttached` (the main thread with `is_ui`).
        #[cxx_name = "RuntimeStarted"]
        fn runtime_started(package: &str, process: &str, data_dir: &str) -> bool;
        /// A thread was attached (its `Thread*` is valid until `ThreadDetached`). `on_itself`:
        /// reported by the thread itself once `Thread::Init` registered it, holding no ART lock (in
        /// many-thread mode it then starts tracing before it returns); otherwise reported by the
        /// start, possibly under ART's `thread_list_lock_`.
        #[cxx_name = "ThreadAttached"]
        fn thread_attached(thread: usize, tid: u32, name: &str, is_ui: bool, on_itself: bool);
        /// On the detaching thread itself, before its `Thread*` is freed.
        #[cxx_name = "ThreadDetached"]
        fn thread_detached(thread: usize);
        /// `Thread::SetThreadName`: returns true if `name` was a `HUBBLE:` command, in which case
        /// ART must keep the thread's real name.
        #[cxx_name = "ThreadRenamed"]
        fn thread_renamed(thread: usize, name: &str) -> bool;
        /// The thread became foreground (it is among the N traced now).
        #[cxx_name = "ThreadForeground"]
        fn thread_foreground(thread: usize);
        /// Per-thread enable / disable.
        #[cxx_name = "SetThreadEnabled"]
        fn set_thread_enabled(thread: usize, enabled: bool) -> bool;
        /// Before a class loader's `LinearAlloc` (its `ArtMethod`s) is freed, under ART's unload
        /// lock, on the GC thread holding the mutator lock. Synchronous and never waits for a
        /// flush, a traced thread or the disk.
        #[cxx_name = "ClassLoaderUnloading"]
        fn class_loader_unloading(loader: usize);
        /// An anomaly detector fired: flush the traced threads with this reason.
        #[cxx_name = "AnomalyReported"]
        fn anomaly_reported(reason: &str);
        /// ART's signal catcher received SIGQUIT (the ANR stack dump, a bugreport, `kill -3`),
        /// before it dumps: records an ANR flush request and wakes the control thread, never
        /// waiting (no lock the dump needs, no I/O, no call back into ART).
        #[cxx_name = "SigQuitReceived"]
        fn sigquit_received();
    }

    unsafe extern "C++" {
        include!("hubble/hubble_bridge.h");

        /// Address of `thread->tlsPtr_.hubble_cursor` (the five words follow it).
        #[cxx_name = "BlockAddress"]
        fn hubble_block_address(thread: usize) -> usize;
        /// Whether the thread's state is `kRunnable`.
        #[cxx_name = "ThreadIsRunnable"]
        fn hubble_thread_is_runnable(thread: usize) -> bool;
        /// Blocks the thread's transitions into `kRunnable` (suspend request under
        /// `thread_suspend_count_lock_`); false if ART refused the request.
        #[cxx_name = "LockThreadState"]
        fn hubble_lock_thread_state(thread: usize) -> bool;
        /// Undoes `LockThreadState` and wakes the thread if it waits.
        #[cxx_name = "UnlockThreadState"]
        fn hubble_unlock_thread_state(thread: usize);
        /// A checkpoint that answers the stop at the runnable thread's next suspend check; false
        /// if the thread is not runnable.
        #[cxx_name = "RequestStopCheckpoint"]
        fn hubble_request_stop_checkpoint(thread: usize) -> bool;
        /// `ArtMethod::PrettyMethod` of each pointer, in order, under the mutator lock and the
        /// unload lock, unless a class loader finished unloading since `UnloadGeneration`
        /// returned `generation` (then false, nothing read).
        #[cxx_name = "ResolveMethods"]
        fn hubble_resolve_methods(methods: &[u64], generation: u64, out: &mut Vec<String>) -> bool;
        /// Unloads completed so far (acquire).
        #[cxx_name = "UnloadGeneration"]
        fn hubble_unload_generation() -> u64;
        /// `PrettyMethod` of the dying loader's own methods, only inside `ClassLoaderUnloading`
        /// (the unload lock is held by the caller, the methods are alive).
        #[cxx_name = "ResolveDyingMethods"]
        fn hubble_resolve_dying_methods(methods: &[u64], out: &mut Vec<String>);
        /// Every `ArtMethod*` allocated in `loader` (a `LinearAlloc*`), only inside
        /// `ClassLoaderUnloading`.
        #[cxx_name = "LoaderMethods"]
        fn hubble_loader_methods(loader: usize, out: &mut Vec<u64>);
        /// The 64-bit generic-timer count (CNTVCT_EL0 / CNTVCT).
        #[cxx_name = "ReadTimer"]
        fn hubble_read_timer() -> u64;
        /// The generic-timer frequency (CNTFRQ).
        #[cxx_name = "TimerHz"]
        fn hubble_timer_hz() -> u64;
        /// CLOCK_REALTIME in ns.
        #[cxx_name = "WallClockNs"]
        fn hubble_wall_clock_ns() -> u64;
        /// The address of this ISA's block-end function for the pool (`runtime/hubble/
        /// pool_<isa>.S`), or 0 where the build has none (many-thread mode is then refused).
        #[cxx_name = "PoolTakeEntry"]
        fn hubble_pool_take_entry() -> u64;
        /// Task records on (`runtime/hubble/tasks.h`): how many framework methods write them.
        #[cxx_name = "StartTaskRecords"]
        fn hubble_start_task_records() -> usize;
        /// Attaches the calling thread as a daemon (the control thread).
        #[cxx_name = "AttachCurrentThread"]
        fn hubble_attach_current_thread(name: &str) -> bool;
        /// Detaches the calling thread.
        #[cxx_name = "DetachCurrentThread"]
        fn hubble_detach_current_thread();
    }
}

/// Work for the control thread.
#[derive(Debug)]
pub enum Message {
    /// A command from a thread's name hook (`Some(thread)`) or from the in-process API.
    Command(Option<ThreadHandle>, Command),
    /// The foreground set changed.
    Rebalance,
    /// Wakes the control thread for a pending ANR request ([`Control::handle_anr`]).
    Anr,
    /// Leave the loop.
    Shutdown,
}

struct Global {
    control: Arc<Control<CxxArt>>,
    tx: Mutex<mpsc::Sender<Message>>,
}

static GLOBAL: OnceLock<Global> = OnceLock::new();

fn global() -> Option<&'static Global> {
    GLOBAL.get()
}

fn send(message: Message) -> bool {
    match global() {
        Some(g) => {
            g.tx.lock()
                .map(|tx| tx.send(message).is_ok())
                .unwrap_or(false)
        }
        None => false,
    }
}

/// The property source of this build: bionic on Android; on a host, the file that
/// [`host_props::PROPERTIES_FILE_ENV`] names (the host VM's `setprop`), else an in-memory one.
pub fn system_properties() -> Arc<dyn props::PropertySource> {
    #[cfg(target_os = "android")]
    {
        Arc::new(props::SystemProperties)
    }
    #[cfg(not(target_os = "android"))]
    {
        match std::env::var_os(host_props::PROPERTIES_FILE_ENV) {
            Some(path) if !path.is_empty() => Arc::new(host_props::FileProperties::new(path)),
            _ => host_properties().clone(),
        }
    }
}

/// The host's stand-in for system properties (set them before `RuntimeStarted`).
#[cfg(not(target_os = "android"))]
pub fn host_properties() -> &'static Arc<props::MemProperties> {
    static P: OnceLock<Arc<props::MemProperties>> = OnceLock::new();
    P.get_or_init(Default::default)
}

fn init_logging() {
    #[cfg(target_os = "android")]
    android_logger::init_once(
        android_logger::Config::default()
            .with_tag("hubble")
            .with_max_level(log::LevelFilter::Info),
    );
    #[cfg(not(target_os = "android"))]
    host_log::init();
}

/// On a host (the host VM) logcat is stderr: `HUBBLE_LOG=info` (or `warn`, `debug`, ...)
/// prints the runtime's log there; unset, it stays silent as before.
#[cfg(not(target_os = "android"))]
mod host_log {
    struct Stderr;

    impl log::Log for Stderr {
        fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
            metadata.level() <= log::max_level()
        }
        fn log(&self, record: &log::Record<'_>) {
            if self.enabled(record.metadata()) {
                eprintln!("{} hubble: {}", record.level(), record.args());
            }
        }
        fn flush(&self) {}
    }

    pub(super) fn init() {
        static LOGGER: Stderr = Stderr;
        let Some(level) = std::env::var("HUBBLE_LOG")
            .ok()
            .and_then(|l| l.parse().ok())
        else {
            return;
        };
        if log::set_logger(&LOGGER).is_ok() {
            log::set_max_level(level);
        }
    }
}

/// How often the control thread polls the properties and runs [`Control::tick`] when no message
/// arrives.
pub const TICK: Duration = Duration::from_millis(250);

/// The control thread's loop: commands from the channel; property changes and [`Control::tick`]
/// at least every [`TICK`].
pub fn control_loop<A: Art>(control: &Control<A>, rx: &mpsc::Receiver<Message>) {
    let mut next_tick = std::time::Instant::now() + TICK;
    loop {
        let wait = next_tick.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(wait) {
            Ok(Message::Shutdown) | Err(mpsc::RecvTimeoutError::Disconnected) => return,
            Ok(Message::Rebalance) => {
                if let Err(e) = control.rebalance() {
                    log::warn!("hubble: {e}");
                }
            }
            Ok(Message::Command(thread, command)) => {
                if let Err(e) = control.command(thread, command) {
                    log::warn!("hubble: {e}");
                }
            }
            // The request itself is the flag `handle_anr` takes below.
            Ok(Message::Anr) | Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        // Whatever woke the loop: a SIGQUIT request goes before the properties and the tick
        // (the flag is also what a request whose wake could not be sent leaves for the tick).
        control.handle_anr();
        if let Some(Err(e)) = control.poll_properties() {
            log::warn!("hubble: {e}");
        }
        // A steady stream of messages must not starve the tick.
        if std::time::Instant::now() >= next_tick {
            control.tick();
            next_tick = std::time::Instant::now() + TICK;
        }
    }
}

/// The control thread: attaches to ART, starts tracing (the UI thread and the next foreground
/// one), runs [`control_loop`] until [`Message::Shutdown`], detaches. If ART refuses to attach
/// it (the runtime is shutting down, or `Thread::Init` failed), it returns at once: every call
/// it makes into ART (`ResolveMethods`, `LockThreadState`) assumes an attached thread.
pub fn control_thread<A: Art>(control: &Control<A>, rx: &mpsc::Receiver<Message>) {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    control.set_control_tid(u32::try_from(tid).unwrap_or(0));
    if !control.art().attach_current_thread("HubbleControl") {
        log::error!("hubble: the runtime refused to attach the control thread; not tracing");
        return;
    }
    // Before the first thread is traced, so that its first task is recorded too.
    if control.config().tasks {
        let methods = control.art().start_task_records();
        if methods == 0 {
            log::error!("hubble: debug.hubble.tasks is 1, but ART writes no task records in this process (its log says why)");
        } else {
            log::info!("hubble: task records from {methods} framework methods");
        }
    }
    // Default: trace the UI thread (and the next foreground one).
    if let Err(e) = control.start_tracing() {
        log::warn!("hubble: {e}");
    }
    control_loop(control, rx);
    control.art().detach_current_thread();
}

fn runtime_started(package: &str, process: &str, data_dir: &str) -> bool {
    init_logging();
    let props = system_properties();
    if !props::package_selected(props.get(props::PACKAGES).as_deref(), package) {
        return false;
    }
    let base = if data_dir.is_empty() {
        format!("/data/data/{package}")
    } else {
        data_dir.to_string()
    };
    let dir = std::path::Path::new(&base).join("files").join("hubble");
    let config = Config::new(package, process, dir).with_properties(&*props);
    let control = Arc::new(Control::new(
        CxxArt,
        config,
        props,
        Box::new(flush::FsStorage),
    ));
    let (tx, rx) = mpsc::channel();
    if GLOBAL
        .set(Global {
            control: control.clone(),
            tx: Mutex::new(tx),
        })
        .is_err()
    {
        return true; // Started twice: the first one stands.
    }
    let spawned = std::thread::Builder::new()
        .name("HubbleControl".into())
        .spawn(move || control_thread(&*control, &rx));
    if let Err(e) = spawned {
        log::error!("hubble: cannot start the control thread: {e}");
        return false;
    }
    log::info!("hubble: control thread started for {package} ({process})");
    true
}

fn thread_attached(thread: usize, tid: u32, name: &str, is_ui: bool, on_itself: bool) {
    if let Some(g) = global() {
        let started = if on_itself {
            // No ART lock held: many-thread mode starts the thread now (its first trace point
            // must not race the control thread's rebalance).
            g.control.thread_attached_itself(thread, tid, name, is_ui)
        } else {
            g.control.thread_attached(thread, tid, name, is_ui);
            false
        };
        // Many-thread mode traces every thread, so every attach starts one.
        if is_ui || (g.control.pool().is_some() && !started) {
            // Never waits: this may run under ART's thread_list_lock_.
            send(Message::Rebalance);
        }
    }
}

fn thread_detached(thread: usize) {
    if let Some(g) = global() {
        g.control.thread_detached(thread);
        send(Message::Rebalance);
    }
}

fn thread_renamed(thread: usize, name: &str) -> bool {
    let Some(g) = global() else {
        return props::parse_thread_name(name).is_some();
    };
    match g.control.thread_renamed(thread, name) {
        Some(command) => {
            send(Message::Command(Some(thread), command));
            true
        }
        None => false,
    }
}

fn thread_foreground(thread: usize) {
    if let Some(g) = global() {
        g.control.thread_foreground(thread);
        send(Message::Rebalance);
    }
}

fn set_thread_enabled(thread: usize, enabled: bool) -> bool {
    let command = if enabled {
        Command::Start
    } else {
        Command::Stop
    };
    send(Message::Command(Some(thread), command))
}

fn class_loader_unloading(loader: usize) {
    if let Some(g) = global() {
        g.control.class_loader_unloading(loader);
    }
}

fn anomaly_reported(reason: &str) {
    request_flush(reason);
}

fn sigquit_received() {
    if let Some(g) = global() {
        request_anr_flush(&*g.control, &g.tx);
    }
}

/// What `SigQuitReceived` does, for any control plane: [`Control::request_anr`], and, for a new
/// request, a wake of the control thread ([`Message::Anr`]) if the sender is free right now. It
/// never waits: if another thread holds the sender (a lifecycle report, for microseconds), the
/// control thread finds the request at its next tick, at most [`TICK`] later. Returns true if it
/// woke the control thread.
pub fn request_anr_flush<A: Art>(control: &Control<A>, tx: &Mutex<mpsc::Sender<Message>>) -> bool {
    if !control.request_anr() {
        return false; // the control thread has not taken the pending one yet: it covers this
    }
    match tx.try_lock() {
        Ok(tx) => tx.send(Message::Anr).is_ok(),
        Err(_) => false,
    }
}

/// In-process API for anomaly detectors: flush every traced thread (asynchronously, on the
/// control thread). Returns false if Hubble does not run in this process.
pub fn request_flush(reason: &str) -> bool {
    send(Message::Command(None, Command::Flush(reason.to_string())))
}

#[cfg(test)]
mod entry_points_tests;
