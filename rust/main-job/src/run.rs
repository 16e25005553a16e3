//! The main job's run: the emulated UI thread, the runtime's real control thread, a jank
//! detector, a property-driven flush, and the slot-for-slot proof.
//!
//! Threads:
//! * **emulator** (the "UI thread"): unicorn running the op array through the emitted A64
//!   trace points; leaves runnable for the stream's native calls (JNI, binder, idle);
//! * **control**: `hubble_runtime::control_loop` over a real `Control<EmulatedArt>`; it starts
//!   tracing, and on commands stops the UI thread (§6: doorbell + poll, or force stop while the
//!   thread is native), flushes the trace file with symbols and restarts;
//! * **jank detector**: watches the UI thread's progress against the frames it knows and, when
//!   a frame runs longer than the threshold, posts a flush with reason `jank` — the message the
//!   in-process anomaly API (`hubble_runtime::request_flush`) posts — while the frame still runs;
//! * **main**: when the UI thread idles, sets `debug.hubble.ctl` to `<package> flush
//!   startup-complete` (the Nanoscope-style property trigger); then checks every file.
//!
//! What the emulator observes independently of the control plane (unicorn code hooks on single
//! instructions of the emitted bytes): which op's trace point executed the `STLR` that
//! published the end position (and the end position itself, from the register), and which op's
//! trace point was the first to read the counter after each stop (the restart). The control
//! plane's forced stops are observed by the `Art` double (its state lock).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use hubble_format::ring::{walk_back, RingView};
use hubble_format::{EventKind, Mode, RingWriter, TraceFile};
use hubble_runtime::block::ThreadBlock;
use hubble_runtime::props::{self, Command, FakeProperties};
use hubble_runtime::{Art, Config, Control, Message, ThreadHandle};
use unicorn_engine::{Arch, Prot, RegisterARM64, TlbType, Unicorn};

use crate::guest::{self, label};
use crate::workload::{self, op_kind, OpKind, Shape, Workload};

/// Package of the emulated app.
pub const PACKAGE: &str = "com.example.app";
/// QEMU's generic timer: 62.5 MHz (`CNTVCT_EL0` = CLOCK_MONOTONIC ns / 16 in unicorn).
pub const TIMER_HZ: u64 = 62_500_000;

// ------------------------------------------------------------------------ host memory

/// An anonymous host mapping, page aligned (what `mem_map_ptr` needs).
pub struct HostMap {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: plain memory; every cross-thread access goes through atomics.
unsafe impl Send for HostMap {}
// SAFETY: as above.
unsafe impl Sync for HostMap {}

impl HostMap {
    /// Maps `len` bytes (rounded up to pages), zero-filled.
    pub fn new(len: usize) -> Result<HostMap> {
        let len = (len.max(1) + 0xfff) & !0xfff;
        // SAFETY: anonymous private mapping at an address of the kernel's choice.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            bail!("mmap: {}", std::io::Error::last_os_error());
        }
        Ok(HostMap { ptr: p.cast(), len })
    }
    /// Address.
    pub fn addr(&self) -> u64 {
        self.ptr as u64
    }
    /// Length.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it is empty (never).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The bytes.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes and owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
    /// A u64 word at a byte offset, as an atomic.
    pub fn word(&self, offset: usize) -> &AtomicU64 {
        assert!(offset % 8 == 0 && offset + 8 <= self.len);
        // SAFETY: aligned, inside the mapping, lives as long as self.
        unsafe { &*(self.ptr.add(offset) as *const AtomicU64) }
    }
}

impl Drop for HostMap {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `new`.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

fn map_into(uc: &mut Unicorn<'static, ()>, addr: u64, len: usize, prot: Prot) -> Result<()> {
    // SAFETY: [addr, addr+len) is a live host mapping that outlives the engine (the caller
    // keeps it, or it is the runtime's ring, kept until the control plane is dropped after the
    // emulator thread has ended).
    unsafe { uc.mem_map_ptr(addr, len as u64, prot, addr as *mut libc::c_void) }
        .map_err(|e| anyhow!("unicorn mem_map_ptr {addr:#x}+{len:#x}: {e:?}"))
}

fn new_engine() -> Result<Unicorn<'static, ()>> {
    let mut uc = Unicorn::new(Arch::ARM64, unicorn_engine::Mode::ARM)
        .map_err(|e| anyhow!("unicorn arm64: {e:?}"))?;
    // Host addresses (~2^47) are above the 44-bit physical range unicorn's CPUs accept with
    // the MMU off: translate virtual = physical ourselves (no hook = identity).
    uc.ctl_set_tlb_type(TlbType::VIRTUAL)
        .map_err(|e| anyhow!("unicorn virtual TLB: {e:?}"))?;
    Ok(uc)
}

fn xreg(n: u64) -> i32 {
    RegisterARM64::X0 as i32 + n as i32
}

// ------------------------------------------------------------------------ the Art double

/// The UI thread's runnable state and ART's thread-state lock, as the control plane sees them.
#[derive(Default)]
pub struct ThreadState {
    m: Mutex<StateInner>,
    cv: Condvar,
}

#[derive(Default)]
struct StateInner {
    runnable: bool,
    locked: bool,
}

impl ThreadState {
    /// Native → runnable: waits while the control thread holds the state lock.
    pub fn to_runnable(&self) {
        let mut s = self.m.lock().unwrap();
        while s.locked {
            s = self.cv.wait(s).unwrap();
        }
        s.runnable = true;
    }
    /// Runnable → native.
    pub fn to_native(&self) {
        self.m.lock().unwrap().runnable = false;
    }
}

/// A stop, as observed outside the control plane.
#[derive(Clone, Copy, Debug)]
pub struct StopEvent {
    /// First op whose trace point did not write (the op executing the stop, or the next op).
    pub op: usize,
    /// The published end position (an address in the ring).
    pub end: u64,
    /// Forced by the control thread while the UI thread was native.
    pub forced: bool,
}

/// What the hooks and the double saw.
#[derive(Default)]
pub struct Events {
    /// Stops, in order.
    pub stops: Mutex<Vec<StopEvent>>,
    /// For each stop, the op whose trace point first wrote again.
    pub restarts: Mutex<Vec<usize>>,
    awaiting_restart: AtomicBool,
    /// Records completed by the emitted code (cursor stores).
    pub counter_reads: AtomicU64,
}

/// `hubble_runtime::Art` for the emulated process: the UI thread's `Thread` image, its state
/// lock, and a symbolizer that resolves the synthetic class table.
pub struct EmulatedArt {
    thread: usize,
    block: usize,
    names: Arc<HashMap<u64, String>>,
    state: Arc<ThreadState>,
    events: Arc<Events>,
    progress: Arc<HostMap>,
    ops_base: u64,
    snapshot: Mutex<Option<(usize, usize, usize)>>,
    /// Pointers the control plane asked to resolve.
    pub resolved: AtomicUsize,
}

impl EmulatedArt {
    fn block(&self) -> &ThreadBlock {
        // SAFETY: the Thread image outlives the control plane (kept by `run`).
        unsafe { &*(self.block as *const ThreadBlock) }
    }
    fn next_op(&self) -> usize {
        ((self.progress.word(0).load(Ordering::Acquire) - self.ops_base) / 8) as usize
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Art for EmulatedArt {
    fn block_address(&self, thread: ThreadHandle) -> usize {
        assert_eq!(thread, self.thread);
        self.block
    }
    fn is_runnable(&self, _thread: ThreadHandle) -> bool {
        self.state.m.lock().unwrap().runnable
    }
    fn lock_state(&self, _thread: ThreadHandle) {
        let mut s = self.state.m.lock().unwrap();
        s.locked = true;
        let b = self.block();
        *self.snapshot.lock().unwrap() = (!s.runnable).then(|| {
            (
                b.cursor.load(Ordering::Acquire),
                b.stop.load(Ordering::Acquire),
                self.next_op(),
            )
        });
    }
    fn unlock_state(&self, _thread: ThreadHandle) {
        let mut s = self.state.m.lock().unwrap();
        let b = self.block();
        if let Some((cursor, stop_before, op)) = self.snapshot.lock().unwrap().take() {
            let stop = b.stop.load(Ordering::Acquire);
            if stop_before <= 1
                && stop > 1
                && stop == cursor
                && b.cursor.load(Ordering::Acquire) == 0
            {
                self.events.stops.lock().unwrap().push(StopEvent {
                    op,
                    end: stop as u64,
                    forced: true,
                });
                self.events.awaiting_restart.store(true, Ordering::SeqCst);
            }
        }
        s.locked = false;
        self.state.cv.notify_all();
    }
    fn resolve(&self, methods: &[u64], out: &mut Vec<String>) {
        self.resolved.fetch_add(methods.len(), Ordering::Relaxed);
        out.extend(methods.iter().map(|m| {
            self.names
                .get(m)
                .cloned()
                .unwrap_or_else(|| format!("<unknown {m:#x}>"))
        }));
    }
    fn loader_methods(&self, _loader: usize, _out: &mut Vec<u64>) {}
    fn timer(&self) -> u64 {
        monotonic_ns() / (1_000_000_000 / TIMER_HZ)
    }
    fn timer_hz(&self) -> u64 {
        TIMER_HZ
    }
    fn wall_ns(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    }
    fn attach_current_thread(&self, _name: &str) -> bool {
        true
    }
    fn detach_current_thread(&self) {}
}

// ------------------------------------------------------------------------ the machine

struct Machine {
    uc: Unicorn<'static, ()>,
    code: u64,
    ops_base: u64,
}

impl Machine {
    /// Maps code, Thread image, ops and progress (and the ring if given) at their host
    /// addresses, and points the driver's registers at them.
    fn new(
        code_map: &mut HostMap,
        thread: &HostMap,
        ops: &HostMap,
        progress: &HostMap,
        ring: Option<(u64, usize)>,
    ) -> Result<Machine> {
        let code = guest::code();
        code_map.bytes_mut()[..code.bytes.len()].copy_from_slice(&code.bytes);
        let mut uc = new_engine()?;
        map_into(&mut uc, code_map.addr(), code_map.len(), Prot::ALL)?;
        map_into(
            &mut uc,
            thread.addr(),
            thread.len(),
            Prot::READ | Prot::WRITE,
        )?;
        map_into(&mut uc, ops.addr(), ops.len(), Prot::READ)?;
        map_into(
            &mut uc,
            progress.addr(),
            progress.len(),
            Prot::READ | Prot::WRITE,
        )?;
        if let Some((addr, len)) = ring {
            map_into(&mut uc, addr, len, Prot::READ | Prot::WRITE)?;
        }
        let set = |uc: &mut Unicorn<'static, ()>, r: u64, v: u64| {
            uc.reg_write(xreg(r), v)
                .map_err(|e| anyhow!("reg_write: {e:?}"))
        };
        set(&mut uc, 19, thread.addr())?;
        set(&mut uc, 22, progress.addr())?;
        Ok(Machine {
            uc,
            code: code_map.addr(),
            ops_base: ops.addr(),
        })
    }

    /// Runs ops `from..to` (the driver loop until x20 reaches the chunk end).
    fn run(&mut self, from: usize, to: usize) -> Result<()> {
        let uc = &mut self.uc;
        uc.reg_write(xreg(20), self.ops_base + 8 * from as u64)
            .map_err(|e| anyhow!("{e:?}"))?;
        uc.reg_write(xreg(21), self.ops_base + 8 * to as u64)
            .map_err(|e| anyhow!("{e:?}"))?;
        let r = uc.emu_start(self.code + label::LOOP, self.code + label::DONE, 0, 0);
        let pc = uc.reg_read(RegisterARM64::PC as i32).unwrap_or(0);
        let x20 = uc.reg_read(xreg(20)).unwrap_or(0);
        if let Err(e) = r {
            let at = (x20.saturating_sub(self.ops_base) / 8).saturating_sub(1);
            if pc == self.code + label::BAD {
                bail!("op {at}: the trace point did not preserve x0 (brk #1)");
            }
            bail!("unicorn stopped at pc {pc:#x} (op {at}): {e:?}");
        }
        ensure!(
            pc == self.code + label::DONE && x20 == self.ops_base + 8 * to as u64,
            "driver loop ended at pc {pc:#x}, x20 {x20:#x}"
        );
        Ok(())
    }
}

/// Work-loop iterations per µs of emulated time on this machine (a 2M-iteration loop, timed).
pub fn calibrate() -> Result<u64> {
    let mut code = HostMap::new(guest::CODE_BYTES)?;
    let thread = HostMap::new(0x4000)?;
    let mut ops = HostMap::new(16)?;
    let progress = HostMap::new(8)?;
    let n = 2_000_000u64;
    ops.bytes_mut()[..8].copy_from_slice(&workload::work_op(n).to_le_bytes());
    let mut m = Machine::new(&mut code, &thread, &ops, &progress, None)?;
    m.run(0, 1)?; // translate once
    let t0 = Instant::now();
    m.run(0, 1)?;
    let us = t0.elapsed().as_micros().max(1) as u64;
    Ok((n / us).max(1))
}

// ------------------------------------------------------------------------ the run

/// Parameters of a run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Target method invocations.
    pub invocations: usize,
    /// Ring size in bytes (a power of two).
    pub ring_bytes: usize,
    /// PRNG seed.
    pub seed: u64,
    /// Where the app's data directory and the report go.
    pub out: PathBuf,
    /// Jank detector threshold (ms).
    pub jank_threshold_ms: u64,
    /// Self time the janky frame's app methods take in total (ms).
    pub jank_ms: u64,
    /// Ops per emulator chunk (progress output between chunks).
    pub chunk_ops: usize,
    /// Print progress.
    pub verbose: bool,
}

/// The outcome of one flushed file, checked.
#[derive(Clone, Debug)]
pub struct FileCheck {
    /// The file.
    pub path: PathBuf,
    /// Trigger reason in the header.
    pub reason: String,
    /// How the UI thread was stopped.
    pub forced: bool,
    /// First op not recorded (its trace point published the end, or the next op when forced).
    pub stop_op: usize,
    /// End position (byte offset in the ring).
    pub write_pos: u64,
    /// Window slots (all compared).
    pub slots: usize,
    /// Records in the window.
    pub records: usize,
    /// Pad slots in the window.
    pub pads: usize,
    /// Whether the window starts at its start record (else: the ring wrapped over it).
    pub has_start: bool,
    /// The first op the window holds.
    pub first_op: usize,
    /// Distinct methods and their symbols (all checked against the class table).
    pub symbols: usize,
    /// Op at which tracing resumed after this stop (first counter read after it), if it did.
    pub restart_op: Option<usize>,
}

/// What the proof compares the files with (kept so tests can re-check tampered files).
pub struct Evidence {
    /// The trace directory.
    pub dir: PathBuf,
    /// Ring address.
    pub ring_begin: u64,
    /// Stops observed.
    pub stops: Vec<StopEvent>,
    /// Restarts observed.
    pub restarts: Vec<usize>,
    /// Counter reads executed.
    pub counter_reads: u64,
    /// The stream.
    pub workload: Workload,
}

impl Evidence {
    /// Runs the slot-for-slot proof over the files in `dir` again.
    pub fn check(&self, ring_bytes: usize) -> Result<Vec<FileCheck>> {
        check_files(
            &self.dir,
            &self.workload,
            self.ring_begin,
            ring_bytes,
            &self.stops,
            &self.restarts,
            self.counter_reads,
        )
    }
}

/// Everything a run produced.
pub struct Report {
    /// Ops in the stream.
    pub ops: usize,
    /// Method invocations.
    pub invocations: usize,
    /// Exceptions (multi-frame unwinds).
    pub exceptions: usize,
    /// Deepest stack.
    pub max_depth: usize,
    /// Distinct methods below / above 4 GiB.
    pub methods_low_high: (usize, usize),
    /// Ring bytes.
    pub ring_bytes: usize,
    /// Work iterations per µs.
    pub iters_per_us: u64,
    /// Emulated time of the stream (ms, wall).
    pub emulate_ms: u128,
    /// Trace points that wrote a record (counter reads in the emitted code).
    pub records_written: u64,
    /// The janky frame: number and op range.
    pub jank_frame: (usize, usize, usize),
    /// Op the detector saw when it fired, and how long the frame had run (ms).
    pub detector_fired_at: Option<(usize, u128)>,
    /// Control-plane counters.
    pub cooperative_stops: u64,
    /// Forced stops.
    pub forced_stops: u64,
    /// Files written.
    pub files: Vec<FileCheck>,
    /// What the files were checked against.
    pub evidence: Evidence,
}

fn runnable_segments(w: &Workload, chunk: usize) -> Vec<(usize, usize)> {
    let mut cuts: Vec<usize> = w.natives.iter().map(|n| n.at).collect();
    cuts.push(w.ops.len());
    let mut out = Vec::new();
    let mut from = 0;
    for cut in cuts {
        while from < cut {
            let to = (from + chunk).min(cut);
            out.push((from, to));
            from = to;
        }
    }
    out
}

/// Runs the main job's workload and checks every flushed file. Returns the report (the caller
/// prints and saves it); fails if any check fails.
pub fn run(p: &Params) -> Result<Report> {
    let say = |s: String| {
        if p.verbose {
            eprintln!("[main-job] {s}");
        }
    };
    // -------------------------------------------------------------- the stream
    let iters_per_us = calibrate()?;
    say(format!(
        "emulator speed: {iters_per_us} work-loop iterations per µs"
    ));
    let w = workload::generate(Shape {
        invocations: p.invocations,
        iters_per_us,
        jank_us: p.jank_ms * 1000,
        seed: p.seed,
    });
    let jank = w
        .frames
        .iter()
        .find(|f| f.janky)
        .cloned()
        .context("no janky frame")?;
    say(format!(
        "stream: {} ops, {} invocations, {} exceptions, max depth {}, {} methods ({} below / {} above 4 GiB), {} frames (jank: #{} ops {}..{})",
        w.ops.len(),
        w.invocations,
        w.exceptions,
        w.max_depth,
        w.table.len(),
        w.table.split_4g().0,
        w.table.split_4g().1,
        w.frames.len(),
        jank.number,
        jank.start,
        jank.end
    ));

    // -------------------------------------------------------------- memory
    let thread = Arc::new(HostMap::new(0x4000)?);
    let mut ops_map = HostMap::new(w.ops.len() * 8)?;
    for (i, op) in w.ops.iter().enumerate() {
        ops_map.bytes_mut()[i * 8..i * 8 + 8].copy_from_slice(&op.to_le_bytes());
    }
    let ops_map = Arc::new(ops_map);
    let progress = Arc::new(HostMap::new(8)?);
    progress.word(0).store(ops_map.addr(), Ordering::Release);
    let block_addr = thread.addr() as usize + guest::block_offset() as usize;
    let handle = thread.addr() as usize;

    // -------------------------------------------------------------- control plane
    let dir = p.out.join("data/data").join(PACKAGE).join("files/hubble");
    std::fs::create_dir_all(dir.parent().unwrap())?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let fake_props = Arc::new(FakeProperties::default());
    fake_props.set(props::CONSENT, "1");
    fake_props.set(props::PACKAGES, PACKAGE);
    let mut config = Config::new(PACKAGE, PACKAGE, dir.clone());
    config.ring_bytes = p.ring_bytes;
    config.mode = Mode::Bits64;
    config.stop_timeout = Duration::from_secs(5);
    let state = Arc::new(ThreadState::default());
    let events = Arc::new(Events::default());
    let names: HashMap<u64, String> = w
        .ops
        .iter()
        .filter_map(|op| match op_kind(*op) {
            OpKind::Entry(m) => Some((m, w.table.name(m).unwrap().to_string())),
            _ => None,
        })
        .collect();
    let art = EmulatedArt {
        thread: handle,
        block: block_addr,
        names: Arc::new(names),
        state: state.clone(),
        events: events.clone(),
        progress: progress.clone(),
        ops_base: ops_map.addr(),
        snapshot: Mutex::new(None),
        resolved: AtomicUsize::new(0),
    };
    let control = Arc::new(Control::new(
        art,
        config,
        fake_props.clone(),
        Box::new(hubble_runtime::flush::FsStorage),
    ));
    // The UI thread: tid = pid, as on Android.
    control.thread_attached(handle, std::process::id(), "main", true);
    let (tx, rx) = mpsc::channel::<Message>();
    let control_thread = {
        let control = control.clone();
        std::thread::Builder::new()
            .name("HubbleControl".into())
            .spawn(move || {
                // As hubble_runtime's RuntimeStarted does: trace the UI thread, then serve.
                if let Err(e) = control.start_tracing() {
                    eprintln!("[main-job] start_tracing: {e}");
                }
                hubble_runtime::control_loop(&*control, &rx);
            })?
    };
    // SAFETY: the block lives in `thread`, kept alive until the end of this function.
    let block = unsafe { &*(block_addr as *const ThreadBlock) };
    let t0 = Instant::now();
    while block.cursor.load(Ordering::Acquire) == 0 {
        ensure!(
            t0.elapsed() < Duration::from_secs(10),
            "control thread never started tracing"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let ring_begin = block.begin.load(Ordering::Acquire) as u64;
    let ring_end = block.end.load(Ordering::Acquire) as u64;
    ensure!(ring_end - ring_begin == p.ring_bytes as u64, "ring size");
    say(format!(
        "control thread traces the UI thread: ring {:#x}..{:#x} ({} KiB, host mmap of hubble-runtime), Thread image at {:#x}, block at +{}",
        ring_begin,
        ring_end,
        p.ring_bytes >> 10,
        thread.addr(),
        guest::block_offset()
    ));

    // -------------------------------------------------------------- emulator thread
    let done = Arc::new(AtomicBool::new(false));
    let idle_reached = Arc::new(AtomicBool::new(false));
    let idle_release = Arc::new(AtomicBool::new(false));
    let segments = runnable_segments(&w, p.chunk_ops);
    let natives = w.natives.clone();
    let emulator = {
        let (thread, ops_map, progress) = (thread.clone(), ops_map.clone(), progress.clone());
        let (state, events, done) = (state.clone(), events.clone(), done.clone());
        let (idle_reached, idle_release) = (idle_reached.clone(), idle_release.clone());
        let verbose = p.verbose;
        let n_ops = w.ops.len();
        std::thread::Builder::new()
            .name("main".into())
            .spawn(move || -> Result<u128> {
                let r = (|| -> Result<u128> {
                    let mut code_map = HostMap::new(guest::CODE_BYTES)?;
                    let mut m = Machine::new(
                        &mut code_map,
                        &thread,
                        &ops_map,
                        &progress,
                        Some((ring_begin, (ring_end - ring_begin) as usize)),
                    )?;
                    let code = guest::code();
                    install_hooks(&mut m, &code, events.clone())?;
                    let t0 = Instant::now();
                    let mut native_i = 0;
                    let mut last_print = Instant::now();
                    state.to_runnable();
                    for (from, to) in segments {
                        while native_i < natives.len() && natives[native_i].at == from {
                            let n = &natives[native_i];
                            state.to_native();
                            if n.idle {
                                idle_reached.store(true, Ordering::Release);
                                let t = Instant::now();
                                while !idle_release.load(Ordering::Acquire)
                                    && t.elapsed() < Duration::from_secs(60)
                                {
                                    std::thread::sleep(Duration::from_millis(2));
                                }
                            } else {
                                std::thread::sleep(Duration::from_millis(n.ms));
                            }
                            state.to_runnable();
                            native_i += 1;
                        }
                        m.run(from, to)?;
                        if verbose && last_print.elapsed() > Duration::from_millis(500) {
                            eprintln!(
                            "[main-job]   emulated {to}/{n_ops} ops ({:.0} %), {} records written",
                            100.0 * to as f64 / n_ops as f64,
                            events.counter_reads.load(Ordering::Relaxed)
                        );
                            last_print = Instant::now();
                        }
                    }
                    state.to_native();
                    Ok(t0.elapsed().as_millis())
                })();
                state.to_native();
                idle_reached.store(true, Ordering::Release);
                done.store(true, Ordering::Release);
                r
            })?
    };

    // -------------------------------------------------------------- jank detector
    let detector = {
        let (progress, done, tx) = (progress.clone(), done.clone(), tx.clone());
        let frames = w.frames.clone();
        let base = ops_map.addr();
        let threshold = Duration::from_millis(p.jank_threshold_ms);
        std::thread::Builder::new()
            .name("JankDetector".into())
            .spawn(move || -> Option<(usize, usize, u128)> {
                let mut k = 0;
                let mut seen_start: Option<(usize, Instant)> = None;
                while !done.load(Ordering::Acquire) {
                    // progress = address past the op being executed.
                    let op = ((progress.word(0).load(Ordering::Acquire) - base) / 8) as usize;
                    let current = op.saturating_sub(1);
                    while k < frames.len() && frames[k].end <= current {
                        k += 1;
                    }
                    if k < frames.len() && frames[k].start <= current {
                        let since = match seen_start {
                            Some((n, t)) if n == k => t,
                            _ => {
                                let t = Instant::now();
                                seen_start = Some((k, t));
                                t
                            }
                        };
                        if since.elapsed() > threshold {
                            // What the in-process anomaly API (request_flush) posts.
                            let _ =
                                tx.send(Message::Command(None, Command::Flush("jank".to_string())));
                            return Some((frames[k].number, current, since.elapsed().as_millis()));
                        }
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                None
            })?
    };

    // -------------------------------------------------------------- idle: property flush
    let t0 = Instant::now();
    while !idle_reached.load(Ordering::Acquire) && !emulator.is_finished() {
        std::thread::sleep(Duration::from_millis(5));
    }
    if emulator.is_finished() || done.load(Ordering::Acquire) {
        // Ended before its idle wait: an error (or a stream without one).
        let r = emulator.join().map_err(|_| anyhow!("emulator panicked"))?;
        let _ = tx.send(Message::Shutdown);
        let _ = control_thread.join();
        let _ = detector.join();
        r?;
        bail!("the UI thread never reached its idle wait");
    }
    let fired = detector.join().map_err(|_| anyhow!("detector panicked"))?;
    if let Some((frame, op, ms)) = fired {
        say(format!(
            "jank detector fired in frame #{frame} at op {op} after {ms} ms (threshold {} ms)",
            p.jank_threshold_ms
        ));
    }
    // Wait for the anomaly's flush before the second trigger.
    let want_first = u64::from(fired.is_some());
    let t1 = Instant::now();
    while control.stats.flushes.load(Ordering::Acquire)
        + control.stats.failed_flushes.load(Ordering::Acquire)
        < want_first
    {
        ensure!(
            t1.elapsed() < Duration::from_secs(30),
            "the anomaly flush never finished"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    if idle_reached.load(Ordering::Acquire) {
        say("UI thread idle in nativePollOnce: setprop debug.hubble.ctl 'com.example.app flush startup-complete'".into());
        fake_props.set(props::CTL, &format!("{PACKAGE} flush startup-complete"));
        let t1 = Instant::now();
        while control.stats.flushes.load(Ordering::Acquire)
            + control.stats.failed_flushes.load(Ordering::Acquire)
            < want_first + 1
        {
            ensure!(
                t1.elapsed() < Duration::from_secs(30),
                "the property flush never finished"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    idle_release.store(true, Ordering::Release);
    let emulate_ms = emulator
        .join()
        .map_err(|_| anyhow!("emulator panicked"))??;
    let _ = tx.send(Message::Shutdown);
    control_thread
        .join()
        .map_err(|_| anyhow!("control thread panicked"))?;
    say(format!(
        "emulation done in {emulate_ms} ms (+{} ms waiting); {} records written by the emitted code",
        t0.elapsed().as_millis().saturating_sub(emulate_ms),
        events.counter_reads.load(Ordering::Relaxed)
    ));
    ensure!(
        control.stats.failed_flushes.load(Ordering::Relaxed) == 0,
        "a flush failed (see the log above)"
    );

    // -------------------------------------------------------------- proof
    let stops = events.stops.lock().unwrap().clone();
    let restarts = events.restarts.lock().unwrap().clone();
    let files = check_files(
        &dir,
        &w,
        ring_begin,
        p.ring_bytes,
        &stops,
        &restarts,
        events.counter_reads.load(Ordering::Relaxed),
    )?;
    ensure!(
        fired.is_none() || files.iter().any(|f| f.reason == "jank"),
        "the detector fired but no jank file was written"
    );
    Ok(Report {
        ops: w.ops.len(),
        invocations: w.invocations,
        exceptions: w.exceptions,
        max_depth: w.max_depth,
        methods_low_high: w.table.split_4g(),
        ring_bytes: p.ring_bytes,
        iters_per_us,
        emulate_ms,
        records_written: events.counter_reads.load(Ordering::Relaxed),
        jank_frame: (jank.number, jank.start, jank.end),
        detector_fired_at: fired.map(|(_, op, ms)| (op, ms)),
        cooperative_stops: control.stats.cooperative_stops.load(Ordering::Relaxed),
        forced_stops: control.stats.forced_stops.load(Ordering::Relaxed),
        files,
        evidence: Evidence {
            dir,
            ring_begin,
            stops,
            restarts,
            counter_reads: events.counter_reads.load(Ordering::Relaxed),
            workload: w,
        },
    })
}

/// Hooks on single instructions of the emitted bytes: the `STLR` that publishes the end
/// position (which op, which end), and the cursor store that completes every record (records
/// written; the first one after a stop is the restart).
fn install_hooks(m: &mut Machine, code: &guest::Code, events: Arc<Events>) -> Result<()> {
    let base = m.code;
    let ops_base = m.ops_base;
    let mut stlr = Vec::new();
    let mut cursor_stores = Vec::new();
    for (at, blob) in [(guest::ENTRY_AT, &code.entry), (guest::EXIT_AT, &code.exit)] {
        for (off, operands) in guest::find(blob, "stlr") {
            let reg: u64 = operands
                .split(',')
                .next()
                .and_then(|r| r.trim().strip_prefix('x'))
                .and_then(|n| n.parse().ok())
                .with_context(|| format!("stlr operands '{operands}'"))?;
            stlr.push((base + at + off, reg));
        }
        // The cursor store that ends every record written (`str <cursor>, [x19, #cursor]`);
        // the stop path stores xzr instead. (Counter reads cannot be counted: the inline half
        // reads the counter before its limit branch, so a slow-path record reads it twice.)
        for (off, operands) in guest::find(blob, "str") {
            if operands.contains("[x19") && !operands.starts_with("xzr") {
                cursor_stores.push(base + at + off);
            }
        }
    }
    // One STLR per trace point (the stop path); the counter is read once per record written,
    // by one of several MRS (one per path through the sequence).
    ensure!(
        stlr.len() == 2 && cursor_stores.len() >= 2,
        "expected one STLR per trace point: {stlr:?}"
    );
    for (addr, reg) in stlr {
        let ev = events.clone();
        m.uc.add_code_hook(addr, addr, move |uc, _, _| {
            let x20 = uc.reg_read(xreg(20)).unwrap_or(0);
            let end = uc.reg_read(xreg(reg)).unwrap_or(0);
            ev.stops.lock().unwrap().push(StopEvent {
                op: ((x20 - ops_base) / 8) as usize - 1,
                end,
                forced: false,
            });
            ev.awaiting_restart.store(true, Ordering::SeqCst);
        })
        .map_err(|e| anyhow!("hook: {e:?}"))?;
    }
    for addr in cursor_stores {
        let ev = events.clone();
        m.uc.add_code_hook(addr, addr, move |uc, _, _| {
            ev.counter_reads.fetch_add(1, Ordering::Relaxed);
            if ev.awaiting_restart.load(Ordering::Relaxed)
                && ev.awaiting_restart.swap(false, Ordering::SeqCst)
            {
                let x20 = uc.reg_read(xreg(20)).unwrap_or(0);
                ev.restarts
                    .lock()
                    .unwrap()
                    .push(((x20 - ops_base) / 8) as usize - 1);
            }
        })
        .map_err(|e| anyhow!("hook: {e:?}"))?;
    }
    Ok(())
}

/// The slot-for-slot proof: replays the stream through hubble-format's reference writer with
/// the tracing windows the hooks observed (on from a start record until a stop op, off until
/// the restart op), and compares every flushed file with the writer's window at that stop.
fn check_files(
    dir: &Path,
    w: &Workload,
    ring_begin: u64,
    ring_bytes: usize,
    stops: &[StopEvent],
    restarts: &[usize],
    counter_reads: u64,
) -> Result<Vec<FileCheck>> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("no trace directory {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "hubble"));
    paths.sort();
    ensure!(!paths.is_empty(), "no trace file was written");
    let files: Vec<TraceFile> = paths
        .iter()
        .map(|p| TraceFile::read(p).with_context(|| format!("reading {}", p.display())))
        .collect::<Result<_>>()?;
    ensure!(
        files.len() == stops.len(),
        "{} files but {} stops observed",
        files.len(),
        stops.len()
    );
    let slots = ring_bytes / 8;
    let mut rw = RingWriter::new(Mode::Bits64, slots);
    rw.start(0);
    let mut recorded: Vec<usize> = Vec::new(); // ops recorded since the last start
    let mut records_before_last_window = 0u64;
    let mut op = 0;
    let mut out = Vec::new();
    for (k, (file, stop)) in files.iter().zip(stops).enumerate() {
        let path = &paths[k];
        // Tracing is on from `op` up to the stop op.
        ensure!(
            stop.op >= op,
            "stop {k} at op {} before tracing resumed at {op}",
            stop.op
        );
        for i in op..stop.op {
            match op_kind(w.ops[i]) {
                OpKind::Entry(m) => {
                    rw.entry(m, 0).map_err(|e| anyhow!("{e}"))?;
                    recorded.push(i);
                }
                OpKind::Exit => {
                    rw.exit(0);
                    recorded.push(i);
                }
                OpKind::Work(_) => {}
            }
        }
        // The published end position is where the reference writer is.
        ensure!(
            stop.end == ring_begin + rw.write_pos_bytes(),
            "{}: stop published end {:#x}, the reference writer is at {:#x}",
            path.display(),
            stop.end,
            ring_begin + rw.write_pos_bytes()
        );
        ensure!(
            file.header.write_pos == rw.write_pos_bytes(),
            "{}: header write_pos {} != {}",
            path.display(),
            file.header.write_pos,
            rw.write_pos_bytes()
        );
        // The reference window: what the decoder keeps of the reference ring.
        let view = rw.view();
        let summary = walk_back(&view, Mode::Bits64, |_| {}).map_err(|e| anyhow!("{e}"))?;
        let keep = summary.slots_used - usize::from(summary.dropped_half_record);
        let wpos = (rw.write_pos_bytes() / 8) as usize;
        let expected: Vec<u64> = (0..keep)
            .map(|j| rw.slots()[(wpos + slots * 2 - keep + j) % slots])
            .collect();
        ensure!(
            file.window.len() == expected.len(),
            "{}: window has {} slots, the ring could hold {} of the stream",
            path.display(),
            file.window.len(),
            expected.len()
        );
        for (j, (got, want)) in file.window.iter().zip(&expected).enumerate() {
            // Slots with a timestamp compare their low half (the writer used ts 0); pointer
            // slots of two-slot entries (high half non-zero) compare all 64 bits.
            let same = if want >> 32 != 0 {
                got == want
            } else {
                *got as u32 == *want as u32
            };
            ensure!(
                same,
                "{}: slot {j} of {} is {got:#018x}, the stream says {want:#018x}",
                path.display(),
                expected.len()
            );
        }
        // Records in the window and which ops they are.
        let rv = RingView::linear(&file.window);
        let mut n_records = 0usize;
        let mut has_start = false;
        let fs = walk_back(&rv, Mode::Bits64, |r| {
            if matches!(r, hubble_format::Record::Start { .. }) {
                has_start = true;
            } else {
                n_records += 1;
            }
        })
        .map_err(|e| anyhow!("{e}"))?;
        ensure!(
            n_records <= recorded.len(),
            "window longer than the recorded stream"
        );
        let first_op = if n_records == 0 {
            stop.op
        } else {
            recorded[recorded.len() - n_records]
        };
        // Symbols: every pointer named as the class table names it.
        let decoded = file
            .decode_events()
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let mut distinct = std::collections::BTreeSet::new();
        let mut last = 0u64;
        for e in &decoded.events {
            ensure!(
                e.counter >= last,
                "{}: timestamps go backwards",
                path.display()
            );
            last = e.counter;
            if let EventKind::Entry { method } = e.kind {
                distinct.insert(method);
                let want = w
                    .table
                    .name(method)
                    .context("pointer not in the class table")?;
                let got = file.symbols.get(&method).map(String::as_str);
                ensure!(
                    got == Some(want),
                    "{}: symbol of {method:#x} is {got:?}, want {want}",
                    path.display()
                );
            }
        }
        // The counter the emulated CPU read and the control plane's reference are one clock.
        let reference = file.header.reference_counter;
        ensure!(
            last <= reference && reference - last < 60 * TIMER_HZ,
            "{}: last event at {last}, reference {reference}: not one clock",
            path.display()
        );
        let restart_op = restarts.get(k).copied();
        out.push(FileCheck {
            path: path.clone(),
            reason: file.header.reason.clone(),
            forced: stop.forced,
            stop_op: stop.op,
            write_pos: file.header.write_pos,
            slots: file.window.len(),
            records: n_records,
            pads: fs.pad_slots,
            has_start,
            first_op,
            symbols: distinct.len(),
            restart_op,
        });
        // Off until the restart, which writes a start record at the end position.
        match restart_op {
            Some(r) => {
                ensure!(r >= stop.op, "restart before the stop");
                rw.start(0);
                records_before_last_window += recorded.len() as u64;
                recorded.clear();
                op = r;
            }
            None => op = w.ops.len(),
        }
    }
    // After the last file: tracing stayed on to the end of the stream (the last restart).
    let mut total = records_before_last_window + recorded.len() as u64;
    for i in op..w.ops.len() {
        if !matches!(op_kind(w.ops[i]), OpKind::Work(_)) {
            total += 1;
        }
    }
    ensure!(
        total == counter_reads,
        "the emitted code completed {counter_reads} records, the stream says {total} records were written"
    );
    Ok(out)
}

/// The report as JSON (hand-written: no serde in this crate).
pub fn report_json(r: &Report) -> String {
    let files: Vec<String> = r
        .files
        .iter()
        .map(|f| {
            format!(
                "    {{\"path\": {:?}, \"reason\": {:?}, \"stop\": {:?}, \"stop_op\": {}, \"write_pos\": {}, \"slots\": {}, \"records\": {}, \"pads\": {}, \"window_has_start_record\": {}, \"first_op\": {}, \"symbols\": {}, \"restart_op\": {}, \"slot_for_slot\": \"match\"}}",
                f.path.display().to_string(),
                f.reason,
                if f.forced { "forced (native)" } else { "cooperative (doorbell)" },
                f.stop_op,
                f.write_pos,
                f.slots,
                f.records,
                f.pads,
                f.has_start,
                f.first_op,
                f.symbols,
                f.restart_op.map_or("null".to_string(), |o| o.to_string())
            )
        })
        .collect();
    format!(
        "{{\n  \"ops\": {},\n  \"invocations\": {},\n  \"exceptions\": {},\n  \"max_depth\": {},\n  \"methods_below_4g\": {},\n  \"methods_above_4g\": {},\n  \"ring_bytes\": {},\n  \"iters_per_us\": {},\n  \"emulate_ms\": {},\n  \"records_written\": {},\n  \"jank_frame\": {{\"number\": {}, \"first_op\": {}, \"end_op\": {}}},\n  \"detector_fired\": {},\n  \"cooperative_stops\": {},\n  \"forced_stops\": {},\n  \"files\": [\n{}\n  ]\n}}\n",
        r.ops,
        r.invocations,
        r.exceptions,
        r.max_depth,
        r.methods_low_high.0,
        r.methods_low_high.1,
        r.ring_bytes,
        r.iters_per_us,
        r.emulate_ms,
        r.records_written,
        r.jank_frame.0,
        r.jank_frame.1,
        r.jank_frame.2,
        r.detector_fired_at
            .map_or("null".to_string(), |(op, ms)| format!("{{\"op\": {op}, \"frame_ms\": {ms}}}")),
        r.cooperative_stops,
        r.forced_stops,
        files.join(",\n")
    )
}
