//! The main job's driver: the emulated UI thread, the runtime's real control thread with its
//! duration trigger, a property-driven flush; then the slot-for-slot proof ([`crate::proof`])
//! and the report ([`crate::report`]).
//!
//! Threads:
//! * **emulator** (the "UI thread"): unicorn running the op array through the emitted A64
//!   trace points; leaves runnable for the stream's native calls (JNI, binder, idle);
//! * **control**: `hubble_runtime::control_loop` over a real `Control<EmulatedArt>`; it starts
//!   tracing, and on commands stops the UI thread (§6: doorbell + poll, or force stop while the
//!   thread is native), flushes the trace file with symbols and restarts. Its tick runs the
//!   runtime's own jank detector (`hubble_runtime::triggers`, set up by
//!   `debug.hubble.triggers`, here `android.view.Choreographer.doFrame>100ms=jank`): it reads
//!   the ring behind the UI thread and flushes with reason `jank` once a `doFrame` has run
//!   past the threshold — the janky frame, still running (a cooperative stop);
//! * **main**: when the UI thread idles, sets `debug.hubble.ctl` to `<package> flush
//!   startup-complete` (the Nanoscope-style property trigger); then checks every file, and
//!   that the jank file holds a `doFrame` longer than the threshold.
//!
//! What the emulator observes independently of the control plane (unicorn code hooks on single
//! instructions of the emitted bytes): which op's trace point executed the `STLR` that
//! published the end position (and the end position itself, from the register), and which op's
//! trace point was the first to read the counter after each stop (the restart). The control
//! plane's forced stops are observed by the `Art` double (its state lock).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use hubble_format::Mode;
use hubble_runtime::block::ThreadBlock;
use hubble_runtime::props;
use hubble_runtime::{Config, Control, Message};
use hubble_testkit::runtime::FakeProperties;

pub use crate::art_double::{EmulatedArt, Events, StopEvent, ThreadState, Timer, TIMER_HZ};
pub use crate::emu::{calibrate, HostMap};
use crate::emu::{xreg, Machine};
use crate::guest;
use crate::native;
use crate::proof::{check_files, longest_frame_ms};
pub use crate::proof::{Evidence, FileCheck, FRAME_METHOD};
pub use crate::report::{report_json, Isa, Report};
use crate::workload::{self, op_kind, OpKind, Shape, Workload};

/// Package of the emulated app.
pub const PACKAGE: &str = "com.example.app";

/// The app's trace directory under `out` (`data/data/<package>/files/hubble`), as a fresh
/// install has it: its parent there, the directory itself not yet (a previous run's is removed).
pub fn fresh_trace_dir(out: &Path) -> Result<PathBuf> {
    let dir = out.join("data/data").join(PACKAGE).join("files/hubble");
    std::fs::create_dir_all(dir.parent().unwrap())?;
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    Ok(dir)
}

/// The properties of the app: consent given, the package selected for tracing.
pub fn app_properties() -> Arc<FakeProperties> {
    let p = Arc::new(FakeProperties::default());
    p.set(props::CONSENT, "1");
    p.set(props::PACKAGES, PACKAGE);
    p
}

/// Parameters of a run.
#[derive(Clone, Debug)]
pub struct Params {
    /// Which trace points.
    pub isa: Isa,
    /// `--isa x86_64`: the blob file of `scripts/hotpath-x86-gen`.
    pub x86_blobs: Option<PathBuf>,
    /// Target method invocations.
    pub invocations: usize,
    /// Ring size in bytes (a power of two).
    pub ring_bytes: usize,
    /// PRNG seed.
    pub seed: u64,
    /// Where the app's data directory and the report go.
    pub out: PathBuf,
    /// Threshold of the runtime's jank trigger (`doFrame>…ms=jank`).
    pub jank_threshold_ms: u64,
    /// Self time the janky frame's app methods take in total (ms).
    pub jank_ms: u64,
    /// Ops per emulator chunk (progress output between chunks).
    pub chunk_ops: usize,
    /// Print progress.
    pub verbose: bool,
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
    let (iters_per_us, timer, native_code) = match p.isa {
        Isa::A64 => (calibrate()?, Timer::Emulated, None),
        Isa::X86_64 => {
            let path = p.x86_blobs.as_ref().context(
                "--isa x86_64 needs --x86-blobs FILE (scripts/hotpath-x86-gen prints it)",
            )?;
            let code = native::Code::load(path)?;
            ensure!(
                code.offsets[0] == guest::block_offset() as i64,
                "the x86 blobs' cursor offset {} is not the Thread layout's {}",
                code.offsets[0],
                guest::block_offset()
            );
            let hz = crate::art_double::calibrate_tsc();
            say(format!(
                "x86_64 natively: ART's emitted trace points from {}, TSC calibrated at {hz} Hz",
                path.display()
            ));
            (native::calibrate(), Timer::Tsc { hz }, Some(Arc::new(code)))
        }
    };
    say(format!(
        "UI thread speed: {iters_per_us} work-loop iterations per µs"
    ));
    let w = workload::generate(Shape {
        invocations: p.invocations,
        iters_per_us,
        jank_us: p.jank_ms * 1000,
        seed: p.seed,
        slow: None,
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
    let dir = fresh_trace_dir(&p.out)?;
    let fake_props = app_properties();
    // The jank detector is the runtime's own: a duration trigger on the frame.
    let trigger_spec = format!("{FRAME_METHOD}>{}ms=jank", p.jank_threshold_ms);
    fake_props.set(props::TRIGGERS, &trigger_spec);
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
        timer,
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
    let control_thread = spawn_control_thread(&control, rx, "main-job")?;
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
        let native_code = native_code.clone();
        std::thread::Builder::new()
            .name("main".into())
            .spawn(move || -> Result<u128> {
                let r = (|| -> Result<u128> {
                    let mut code_map = HostMap::new(guest::CODE_BYTES)?;
                    let mut machine = None;
                    if native_code.is_none() {
                        let mut m = Machine::new(
                            &mut code_map,
                            &thread,
                            &ops_map,
                            &progress,
                            Some((ring_begin, (ring_end - ring_begin) as usize)),
                        )?;
                        let code = guest::code();
                        install_hooks(&mut m, &code, events.clone())?;
                        machine = Some(m);
                    } else {
                        native::set_thread_register(thread.addr())?;
                    }
                    // SAFETY: the block lives in `thread`, which this closure keeps alive.
                    let block = unsafe { &*(block_addr as *const ThreadBlock) };
                    let driver = native_code.as_deref().map(|code| native::Driver {
                        code,
                        ops: &ops_map,
                        progress: &progress,
                        block,
                        events: &events,
                    });
                    let t0 = Instant::now();
                    let mut native_i = 0;
                    let mut last_print = Instant::now();
                    state.to_runnable();
                    for (from, to) in segments {
                        while native_i < natives.len() && natives[native_i].at == from {
                            let n = &natives[native_i];
                            state.to_native();
                            if n.idle {
                                if verbose {
                                    eprintln!(
                                        "[main-job]   UI thread idle after {} ms ({} records written)",
                                        t0.elapsed().as_millis(),
                                        events.counter_reads.load(Ordering::Relaxed)
                                    );
                                }
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
                        match (&mut machine, &driver) {
                            (Some(m), _) => m.run(from, to)?,
                            (None, Some(d)) => d.run(from, to)?,
                            (None, None) => unreachable!("no machine and no native driver"),
                        }
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
        r?;
        bail!("the UI thread never reached its idle wait");
    }
    // The trigger's flush before the second trigger. The detector reads the ring one tick
    // behind the thread, so it may still be on its way when the thread idles.
    let want_first = 1;
    let t1 = Instant::now();
    while control.stats.flushes.load(Ordering::Acquire)
        + control.stats.failed_flushes.load(Ordering::Acquire)
        < want_first
    {
        ensure!(
            t1.elapsed() < Duration::from_secs(10),
            "the runtime's jank trigger ({trigger_spec}) never fired ({} records written, {} stops seen, cursor {:#x}, {} ms since the UI thread started)",
            events.counter_reads.load(Ordering::Relaxed),
            events.stops.lock().unwrap().len(),
            block.cursor.load(Ordering::Relaxed),
            t0.elapsed().as_millis()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let fired = control.triggers().fired();
    let trigger = fired.first().cloned();
    if let Some(f) = &trigger {
        say(format!(
            "runtime trigger '{}' fired: {} ran {} ms{} (threshold {} ms) → flush",
            f.reason,
            f.method,
            f.duration.as_millis(),
            if f.exited { "" } else { ", still running" },
            p.jank_threshold_ms
        ));
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
        fired.len() == 1 && fired[0].reason == "jank",
        "the runtime's triggers fired {fired:?}, want one jank"
    );
    let jank_file = files
        .iter()
        .find(|f| f.reason == "jank")
        .context("the trigger fired but no jank file was written")?;
    ensure!(
        fired[0].path.as_deref() == Some(jank_file.path.as_path()),
        "the trigger wrote {:?}, the jank file is {}",
        fired[0].path,
        jank_file.path.display()
    );
    let jank_file_longest_frame_ms = longest_frame_ms(&jank_file.path, &w, p.jank_threshold_ms)?;
    Ok(Report {
        ops: w.ops.len(),
        invocations: w.invocations,
        exceptions: w.exceptions,
        max_depth: w.max_depth,
        methods_low_high: w.table.split_4g(),
        ring_bytes: p.ring_bytes,
        iters_per_us,
        isa: p.isa,
        timer_hz: timer.hz(),
        emulate_ms,
        records_written: events.counter_reads.load(Ordering::Relaxed),
        jank_frame: (jank.number, jank.start, jank.end),
        trigger_spec,
        trigger,
        jank_file_longest_frame_ms,
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
            ev.stopped(StopEvent {
                op: ((x20 - ops_base) / 8) as usize - 1,
                end,
                forced: false,
            });
        })
        .map_err(|e| anyhow!("hook: {e:?}"))?;
    }
    for addr in cursor_stores {
        let ev = events.clone();
        m.uc.add_code_hook(addr, addr, move |uc, _, _| {
            ev.record_written(|| {
                let x20 = uc.reg_read(xreg(20)).unwrap_or(0);
                ((x20 - ops_base) / 8) as usize - 1
            });
        })
        .map_err(|e| anyhow!("hook: {e:?}"))?;
    }
    Ok(())
}

/// The control thread, as hubble_runtime's `control_thread` runs it after `RuntimeStarted`:
/// start tracing (the UI thread), then serve [`hubble_runtime::control_loop`]. Without the
/// attach and detach (the doubles have no ART to attach to), and with a start that fails said
/// on stderr (`who` names the job), since the main job has no logger.
pub(crate) fn spawn_control_thread<A: hubble_runtime::Art + Send + Sync + 'static>(
    control: &Arc<Control<A>>,
    rx: mpsc::Receiver<Message>,
    who: &'static str,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    let control = control.clone();
    std::thread::Builder::new()
        .name("HubbleControl".into())
        .spawn(move || {
            if let Err(e) = control.start_tracing() {
                eprintln!("[{who}] start_tracing: {e}");
            }
            hubble_runtime::control_loop(&*control, &rx);
        })
}
