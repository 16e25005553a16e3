//! The runtime's doubles (feature `runtime`): a fake ART ([`FakeArt`]), fake threads that run the
//! traced side the way the assembly does ([`FakeThread`]), properties a test sets
//! ([`FakeProperties`]) and storage that keeps files in memory or fails. Used by
//! hubble-runtime's integration tests and benchmarks and by the proving grounds' control planes.

use std::collections::{HashMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use hubble_format::Mode;

use hubble_runtime::art::{Art, ThreadHandle};
use hubble_runtime::block::{self, RawSlots, ThreadBlock};
use hubble_runtime::flush::{PendingFile, Storage};
use hubble_runtime::pool::Pool;

/// The tests' property source: properties in memory that a test sets (the host build's own
/// source, [`hubble_runtime::props::MemProperties`]).
pub type FakeProperties = hubble_runtime::props::MemProperties;

/// A thread as ART has it, for the control plane: its block, its state, its state lock.
#[derive(Debug, Default)]
pub struct FakeThread {
    /// `tlsPtr_.hubble_*`.
    pub block: ThreadBlock,
    runnable: AtomicBool,
    /// Suspend count ("state lock" holders); also guards checkpoint requests, as ART's
    /// `thread_suspend_count_lock_` does.
    locked: Mutex<u32>,
    unlocked: Condvar,
    /// A stop checkpoint is pending ([`Art::request_stop_checkpoint`]).
    checkpoint: AtomicBool,
}

impl FakeThread {
    /// A thread that starts out not runnable (as if in native code).
    pub fn new() -> Box<FakeThread> {
        Box::default()
    }

    /// The `Thread*` handle.
    pub fn handle(&self) -> ThreadHandle {
        self as *const FakeThread as usize
    }

    /// Transition to runnable: waits while the state lock is held (as ART waits while a suspend
    /// request is pending).
    pub fn to_runnable(&self) {
        let mut n = self.locked.lock().expect("state");
        while *n > 0 {
            n = self.unlocked.wait(n).expect("state");
        }
        self.runnable.store(true, Ordering::Release);
    }

    /// Transition out of runnable (native code, waiting): never waits; a pending checkpoint
    /// runs first, as in ART.
    pub fn to_native(&self) {
        self.suspend_check();
        let _n = self.locked.lock().expect("state");
        self.runnable.store(false, Ordering::Release);
    }

    /// A suspend check of the runnable thread (a loop's back edge): runs a pending checkpoint.
    pub fn suspend_check(&self) {
        if self.checkpoint.swap(false, Ordering::AcqRel) {
            block::answer_stop_at_suspend_check(&self.block);
        }
    }

    /// A method entry trace point (the thread must be runnable).
    pub fn entry(&self, mode: Mode, method: u64, ts: u32) -> bool {
        block::trace_entry(&self.block, &RawSlots, mode, method, ts)
    }

    /// A method exit trace point.
    pub fn exit(&self, ts: u32) -> bool {
        block::trace_exit(&self.block, &RawSlots, ts)
    }

    /// A method entry trace point in many-thread mode (`counter`: the full timer value).
    pub fn pool_entry(&self, pool: &Pool, tid: u32, method: u64, counter: u64) -> bool {
        hubble_runtime::pool::trace_entry(&self.block, pool, tid, method, counter)
    }

    /// A method exit trace point in many-thread mode.
    pub fn pool_exit(&self, pool: &Pool, tid: u32, counter: u64) -> bool {
        hubble_runtime::pool::trace_exit(&self.block, pool, tid, counter)
    }
}

/// ART, faked: threads are [`FakeThread`] addresses; method `m` is named `m<hex>` (or, with
/// `pretty_names`, a PrettyMethod-like signature); loader `L` owns the methods `L+8 .. L+64`.
/// Resolving a method of a freed loader panics, as a use-after-free would crash the real
/// runtime. Unloading follows `hubble_bridge.cc`: [`FakeArt::unload`] holds the unload lock
/// around the control plane's hook and bumps the generation before the memory goes.
#[derive(Default)]
pub struct FakeArt {
    freed: Mutex<HashSet<u64>>,
    /// `hubble_bridge.cc`'s unload lock and generation.
    unload_lock: Mutex<()>,
    generation: AtomicU64,
    /// Runs once, at the next checked resolution, before the unload lock is taken: the moment a
    /// GC thread can slip in (tests use it to unload a loader exactly then).
    pub before_resolve: Mutex<Option<Box<dyn FnOnce() + Send>>>,
    /// Methods resolved through ART so far.
    pub resolved: AtomicU64,
    /// Names override.
    pub names: Mutex<HashMap<u64, String>>,
    /// Names shaped like `ArtMethod::PrettyMethod`'s (`void com.example.C1a2b.m1a2b3c(int,
    /// java.lang.String)`, ~60 bytes) instead of `m<hex>`, for the benchmark: the symbol table
    /// then has a real file's size, and each name costs a formatted string of that length
    /// (~0.3 µs here), the part of PrettyMethod's ~1 µs that is not walking dex data.
    pub pretty_names: bool,
    /// When non-zero, the timer's value instead of CLOCK_MONOTONIC ([`FakeArt::set_timer`]):
    /// tests of the duration triggers write trace points with timestamps they choose and move
    /// the clock between ticks.
    pub manual_timer: AtomicU64,
    /// When non-zero, the timer's frequency instead of 1 GHz ([`FakeArt::set_timer_hz`]).
    pub manual_hz: AtomicU64,
    /// `AttachCurrentThread` fails, as ART's does while the runtime shuts down or when
    /// `Thread::Init` fails (`Thread::Attach` returns null).
    pub attach_refused: AtomicBool,
    /// This ART's trace points have no block-end path for the pool (as an ART build for an ISA
    /// the series has no trace points for): many-thread mode must be refused ([`Art::has_pool_path`]).
    pub without_pool_path: bool,
    /// Calls of [`Art::start_task_records`], and how many methods each reports.
    pub task_record_starts: AtomicU64,
    /// What [`Art::start_task_records`] answers (a framework with all nine: 9).
    pub task_methods: usize,
    /// [`Art::request_stop_checkpoint`] always refuses, as a runtime without the checkpoint
    /// would: tests show what the checkpoint changes.
    pub without_stop_checkpoints: bool,
}

impl FakeArt {
    /// The methods the fake loader `loader` owns.
    pub fn loader_methods_of(loader: usize) -> Vec<u64> {
        (1..=8).map(|i| loader as u64 + 8 * i).collect()
    }

    /// What ART's `DeleteClassLoader` does with the hook (patch 0024, `hubble_bridge.cc`
    /// `ClassLoaderUnloadingWithTable`): under the unload lock, the control plane's hook, then
    /// the generation bump; after the lock, the loader's memory is freed.
    pub fn unload(&self, loader: usize, hook: impl FnOnce(usize)) {
        {
            let _l = self.unload_lock.lock().expect("unload lock");
            hook(loader);
            self.generation.fetch_add(1, Ordering::Release);
        }
        self.free_loader(loader);
    }

    /// Marks a loader's memory freed: resolving its methods from now on panics.
    pub fn free_loader(&self, loader: usize) {
        self.freed
            .lock()
            .expect("freed")
            .extend(Self::loader_methods_of(loader));
    }

    /// A new class loader allocated where a freed one was: the same `ArtMethod*` values are
    /// live methods again, resolvable, and now named `names`. ART 14 does reuse the memory:
    /// `ClassLinker::DeleteClassLoader` ends with `delete data.allocator`
    /// (runtime/class_linker.cc:2613-2645), whose `ArenaAllocator` destructor gives its arenas
    /// back to the pool (libartbase/base/arena_allocator.cc:263-267), and every new loader's
    /// `LinearAlloc`, where its `ArtMethod`s live, draws from that same pool
    /// (`Runtime::CreateLinearAlloc`, runtime/runtime.cc:3151-3156).
    pub fn reuse_loader(&self, loader: usize, names: &[(u64, &str)]) {
        let mut freed = self.freed.lock().expect("freed");
        for m in Self::loader_methods_of(loader) {
            freed.remove(&m);
        }
        let mut table = self.names.lock().expect("names");
        for (m, name) in names {
            table.insert(*m, (*name).to_string());
        }
    }

    /// Sets the timer (ns; 1 GHz) to `counter` from now on; 0 goes back to CLOCK_MONOTONIC.
    pub fn set_timer(&self, counter: u64) {
        self.manual_timer.store(counter, Ordering::Relaxed);
    }

    /// Sets the timer's frequency (Hz) reported from now on; 0 goes back to 1 GHz.
    pub fn set_timer_hz(&self, hz: u64) {
        self.manual_hz.store(hz, Ordering::Relaxed);
    }

    /// The name the fake gives a method.
    pub fn name_of(method: u64) -> String {
        format!("m{method:x}")
    }

    /// The name the fake gives a method with `pretty_names`.
    pub fn pretty_name_of(method: u64) -> String {
        format!(
            "void com.example.app.C{:x}.m{method:x}(int, java.lang.String)",
            method >> 10
        )
    }
}

/// The wall clock in Unix-epoch ns (the fakes' `Art::wall_ns`).
pub fn wall_clock_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// CLOCK_MONOTONIC in ns (the fakes' timer).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass and nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What [`FakeArt`] answers for [`Art::pool_take_entry`]: the pool header must carry it.
pub const FAKE_POOL_TAKE: u64 = 0x7a4e_0000;

impl Art for FakeArt {
    fn pool_take_entry(&self) -> u64 {
        // FakeThread::pool_entry/pool_exit run the pool's traced side (runtime/src/pool.rs); no
        // compiled code calls this address: a recognisable value for the header's check, and
        // through the default `has_pool_path`, whether this ART has the pool path at all.
        if self.without_pool_path {
            0
        } else {
            FAKE_POOL_TAKE
        }
    }
    fn block_address(&self, thread: ThreadHandle) -> usize {
        // SAFETY: tests register only live FakeThreads and keep them alive while registered.
        let t = unsafe { &*(thread as *const FakeThread) };
        &t.block as *const ThreadBlock as usize
    }
    fn is_runnable(&self, thread: ThreadHandle) -> bool {
        // SAFETY: as above.
        let t = unsafe { &*(thread as *const FakeThread) };
        t.runnable.load(Ordering::Acquire)
    }
    fn lock_state(&self, thread: ThreadHandle) {
        // SAFETY: as above.
        let t = unsafe { &*(thread as *const FakeThread) };
        *t.locked.lock().expect("state") += 1;
    }
    fn unlock_state(&self, thread: ThreadHandle) {
        // SAFETY: as above.
        let t = unsafe { &*(thread as *const FakeThread) };
        *t.locked.lock().expect("state") -= 1;
        t.unlocked.notify_all();
    }
    fn request_stop_checkpoint(&self, thread: ThreadHandle) -> bool {
        if self.without_stop_checkpoints {
            return false;
        }
        // SAFETY: as above.
        let t = unsafe { &*(thread as *const FakeThread) };
        let _n = t.locked.lock().expect("state");
        if !t.runnable.load(Ordering::Acquire) {
            return false;
        }
        t.checkpoint.store(true, Ordering::Release);
        true
    }
    fn resolve(&self, methods: &[u64], out: &mut Vec<String>) {
        let freed = self.freed.lock().expect("freed");
        let names = self.names.lock().expect("names");
        for m in methods {
            assert!(
                !freed.contains(m),
                "use after free: resolving {m:#x} of an unloaded class loader"
            );
            out.push(names.get(m).cloned().unwrap_or_else(|| {
                if self.pretty_names {
                    Self::pretty_name_of(*m)
                } else {
                    Self::name_of(*m)
                }
            }));
        }
        self.resolved
            .fetch_add(methods.len() as u64, Ordering::Relaxed);
    }
    fn resolve_unless_unloaded(
        &self,
        methods: &[u64],
        generation: u64,
        out: &mut Vec<String>,
    ) -> bool {
        let hook = self.before_resolve.lock().expect("hook").take();
        if let Some(hook) = hook {
            hook();
        }
        let _l = self.unload_lock.lock().expect("unload lock");
        if self.generation.load(Ordering::Acquire) != generation {
            return false;
        }
        self.resolve(methods, out);
        true
    }
    fn unload_generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
    fn loader_methods(&self, loader: usize, out: &mut Vec<u64>) {
        out.extend(Self::loader_methods_of(loader));
    }
    fn timer(&self) -> u64 {
        match self.manual_timer.load(Ordering::Relaxed) {
            0 => monotonic_ns(),
            t => t,
        }
    }
    fn timer_hz(&self) -> u64 {
        match self.manual_hz.load(Ordering::Relaxed) {
            0 => 1_000_000_000,
            hz => hz,
        }
    }
    fn wall_ns(&self) -> u64 {
        wall_clock_ns()
    }
    fn start_task_records(&self) -> usize {
        self.task_record_starts.fetch_add(1, Ordering::Relaxed);
        self.task_methods
    }
    fn attach_current_thread(&self, _name: &str) -> bool {
        !self.attach_refused.load(Ordering::Relaxed)
    }
    fn detach_current_thread(&self) {}
}

/// Files kept in memory (the stress test flushes far too often for a disk).
#[derive(Debug, Default)]
pub struct MemStorage {
    /// Path → bytes.
    pub files: Mutex<HashMap<PathBuf, Vec<u8>>>,
}

/// A [`MemStorage`] file being written: visible only once committed.
struct MemPending<'a> {
    storage: &'a MemStorage,
    path: PathBuf,
    bytes: Mutex<Vec<u8>>,
}

impl PendingFile for MemPending<'_> {
    fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let mut b = self.bytes.lock().expect("bytes");
        let start = offset as usize;
        let end = start + bytes.len();
        if b.len() < end {
            // As in a file, a hole reads as zeros until written.
            b.resize(end, 0);
        }
        b[start..end].copy_from_slice(bytes);
        Ok(())
    }
    fn commit(self: Box<Self>) -> io::Result<()> {
        let bytes = self.bytes.into_inner().expect("bytes");
        self.storage
            .files
            .lock()
            .expect("files")
            .insert(self.path, bytes);
        Ok(())
    }
}

impl Storage for MemStorage {
    fn create_atomic(&self, path: &Path) -> io::Result<Box<dyn PendingFile + '_>> {
        Ok(Box::new(MemPending {
            storage: self,
            path: path.to_path_buf(),
            bytes: Mutex::new(Vec::new()),
        }))
    }
    fn ensure_dir(&self, _dir: &Path) -> io::Result<()> {
        Ok(())
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<(String, u64)>> {
        Ok(self
            .files
            .lock()
            .expect("files")
            .iter()
            .filter(|(p, _)| p.parent() == Some(dir))
            .map(|(p, b)| {
                (
                    p.file_name().unwrap().to_string_lossy().into_owned(),
                    b.len() as u64,
                )
            })
            .collect())
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.files.lock().expect("files").remove(path);
        Ok(())
    }
}

/// Storage whose writes fail with an OS error (e.g. `ENOSPC`) while `failing` is set, and
/// otherwise go to the real file system.
#[derive(Debug)]
pub struct FailingStorage {
    /// The errno to fail with.
    pub errno: i32,
    /// Whether writes fail now.
    pub failing: AtomicBool,
}

impl Storage for FailingStorage {
    fn create_atomic(&self, path: &Path) -> io::Result<Box<dyn PendingFile + '_>> {
        if self.failing.load(Ordering::Relaxed) {
            return Err(io::Error::from_raw_os_error(self.errno));
        }
        hubble_runtime::flush::FsStorage.create_atomic(path)
    }
    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        hubble_runtime::flush::FsStorage.ensure_dir(dir)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<(String, u64)>> {
        hubble_runtime::flush::FsStorage.list(dir)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        hubble_runtime::flush::FsStorage.remove(path)
    }
}

/// The methods of a file's entries, in order (its events decoded).
pub fn entry_methods(file: &hubble_format::TraceFile) -> Vec<u64> {
    file.decode_events()
        .expect("the file's events decode")
        .events
        .iter()
        .filter_map(|e| match e.kind {
            hubble_format::EventKind::Entry { method } => Some(method),
            _ => None,
        })
        .collect()
}

/// Threads a test runs beside the control plane, each until it is told to quit. They are told
/// and joined before the control plane (and the rings or pool they write into) goes away, also
/// when the test fails.
#[derive(Debug, Default)]
pub struct Workers {
    quit: Arc<AtomicBool>,
    handles: Vec<std::thread::JoinHandle<()>>,
}

impl Workers {
    /// Starts `run` on a thread of its own; the flag it is given says when to quit.
    pub fn spawn(&mut self, run: impl FnOnce(&AtomicBool) + Send + 'static) {
        let quit = self.quit.clone();
        self.handles.push(std::thread::spawn(move || run(&quit)));
    }

    /// Tells them to quit and waits for them; a worker's panic fails the test.
    pub fn join(&mut self) {
        self.quit.store(true, Ordering::Relaxed);
        for h in self.handles.drain(..) {
            h.join().unwrap();
        }
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.quit.store(true, Ordering::Relaxed);
        // A failing test is already unwinding: a worker's own panic would only hide why.
        for h in self.handles.drain(..) {
            let _ = h.join();
        }
    }
}
