//! The main job's many-thread scene (`main-job tasks`): an app whose UI
//! thread feeds an `AsyncTask` serial executor and an undersized thread pool, then blocks on a
//! result until the system declares an ANR. Every thread runs the x86_64 trace points ART's own
//! assembler emits, natively, traced in many-thread mode (`debug.hubble.threads all`): one pool
//! of 16 KiB blocks, each thread taking the next block through the runtime's block-end function
//! (`pool_x86_64.S`) when its block fills. Task records come from `tp::Task`, the C++ trace
//! point the runtime's task entrypoint ends in. The ANR is the runtime's own SIGQUIT path
//! (`Control::request_anr`, as `signal_catcher.cc` calls it): the real control thread stops
//! every thread (the busy worker at its next trace point, the waiting ones by force) and writes
//! one version 4 file with reason `anr`.
//!
//! The proof ([`proof`]): the file decodes, per thread, to exactly the records that thread
//! observed itself writing up to its stop; and `hubble tasks`' analysis of the file
//! (`hubble_analysis::queuing`) reports every task's submission, begin, end, queuing time,
//! execution time and queue length, each queue's capacity and each site's group exactly as the
//! scene produced them ([`units`]).
//!
//! * [`units`]: the app (executors, tasks, the UI thread);
//! * [`tracer`]: a traced thread, its calls and its own record of what it wrote;
//! * [`entrypoints`]: the block-end function and `tp::Task`, compiled and loaded;
//! * [`art`]: `hubble_runtime::Art` for the scene's process;
//! * [`proof`]: the checks, and the scene's report.

pub mod art;
pub mod entrypoints;
pub mod proof;
pub mod tracer;
pub mod units;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context as _, Result};
use hubble_format::Mode;
use hubble_runtime::props;
use hubble_runtime::{Config, Control, Message};

use crate::native::Code;
use crate::run::{app_properties, fresh_trace_dir, PACKAGE};
use art::SceneArt;
use entrypoints::Entrypoints;
pub use proof::Report;
use tracer::{Traced, Tracer};
use units::{Scene, Shape};

/// Parameters of the scene.
#[derive(Clone, Debug)]
pub struct Params {
    /// The blob file of `scripts/hotpath-x86-gen`.
    pub x86_blobs: PathBuf,
    /// Output directory (the app's data directory, the entrypoints' library, the report).
    pub out: PathBuf,
    /// The app.
    pub shape: Shape,
    /// How long the UI thread is blocked before the ANR (ms).
    pub anr_after_ms: u64,
    /// `debug.hubble.budget_mb`.
    pub budget_mb: usize,
    /// τ of the report (ns).
    pub tau_ns: u64,
    /// Print progress.
    pub verbose: bool,
}

impl Params {
    /// The scene `scripts/main-job` runs.
    pub fn new(x86_blobs: PathBuf, out: PathBuf) -> Params {
        Params {
            x86_blobs,
            out,
            shape: Shape {
                feed: 5,
                slow_ms: 1500,
                quick_ms: 20,
                thumbs: 8,
                thumb_ms: 60,
                pool_threads: 2,
                seed: 0x4855_4242_4c45,
            },
            anr_after_ms: 700,
            budget_mb: 8,
            tau_ns: 500_000_000,
            verbose: true,
        }
    }
}

/// One OS thread of the scene: which role it plays.
#[derive(Clone, Copy)]
enum Role {
    Ui,
    Worker(usize),
}

/// Runs the scene and checks the ANR file. Fails if any check fails.
pub fn run(p: &Params) -> Result<Report> {
    let say = |s: String| {
        if p.verbose {
            eprintln!("[main-job tasks] {s}");
        }
    };
    let code = Arc::new(Code::load(&p.x86_blobs)?);
    let tid_offset = code.tid_offset.with_context(|| {
        format!(
            "{}: no `tid 8` line (the block-end function reads Thread::tid): rerun scripts/hotpath-x86-gen",
            p.x86_blobs.display()
        )
    })?;
    let ep = Arc::new(Entrypoints::build(
        code.offsets,
        tid_offset,
        &p.out.join("entrypoints"),
    )?);
    let hz = crate::art_double::calibrate_tsc();
    say(format!(
        "ART's x86_64 trace points from {}; pool_x86_64.S and tp::Task built into {} (hubble_pool_take at {:#x}); TSC {hz} Hz",
        p.x86_blobs.display(),
        ep.path.display(),
        ep.pool_take
    ));

    // -------------------------------------------------------------- control plane
    let dir = fresh_trace_dir(&p.out)?;
    let fake_props = app_properties();
    fake_props.set(props::THREADS, "all");
    fake_props.set(props::BUDGET_MB, &p.budget_mb.to_string());
    let mut config = Config::new(PACKAGE, PACKAGE, dir.clone()).with_properties(&*fake_props);
    config.mode = Mode::Bits64;
    config.stop_timeout = Duration::from_secs(5);
    let geometry = config
        .pool
        .context("debug.hubble.threads all did not select many-thread mode")?;
    let control = Arc::new(Control::new(
        SceneArt::new(units::names(), ep.pool_take, hz),
        config,
        fake_props.clone(),
        Box::new(hubble_runtime::flush::FsStorage),
    ));
    let pool = control
        .pool()
        .context("the control plane refused many-thread mode")?;
    let pool_range = (
        pool.base() as u64,
        (pool.base()
            + (hubble_format::pool::POOL_HEADER_SLOTS + geometry.blocks * geometry.block_slots) * 8)
            as u64,
    );
    say(format!(
        "debug.hubble.threads = all, budget_mb = {}: {}",
        p.budget_mb,
        control.config().describe_mode()
    ));

    // -------------------------------------------------------------- the app's threads
    let scene = Arc::new(Scene::new(p.shape));
    let mut roles = vec![(Role::Ui, "main".to_string())];
    for (u, unit) in scene.units.iter().enumerate() {
        for w in 1..=unit.workers {
            roles.push((Role::Worker(u), format!("{}{w}", unit.name)));
        }
    }
    let go = Arc::new(Barrier::new(roles.len() + 1));
    let (blocked_tx, blocked_rx) = mpsc::channel::<Instant>();
    let (attached_tx, attached_rx) = mpsc::channel::<Arc<Traced>>();
    let mut joins = Vec::new();
    for (role, name) in roles.clone() {
        let (code, ep, scene, go) = (code.clone(), ep.clone(), scene.clone(), go.clone());
        let (attached_tx, blocked_tx) = (attached_tx.clone(), blocked_tx.clone());
        joins.push(std::thread::Builder::new().name(name.clone()).spawn(
            move || -> Result<()> {
                // SAFETY: gettid has no preconditions.
                let tid = unsafe { libc::gettid() } as u32;
                let t = Traced::new(&name, tid, &code)?;
                attached_tx
                    .send(t.clone())
                    .map_err(|_| anyhow!("the scene ended"))?;
                go.wait();
                let tr = Tracer::attach(&t, &code, &ep, pool_range)?;
                let r = match role {
                    Role::Ui => scene.ui(&t, &tr, || {
                        let _ = blocked_tx.send(Instant::now());
                    }),
                    Role::Worker(u) => scene.worker(u, &t, &tr),
                };
                t.state.to_native();
                if r.is_err() {
                    scene.abort();
                }
                r.with_context(|| format!("thread {name}"))
            },
        )?);
    }
    drop((attached_tx, blocked_tx));
    let mut threads = Vec::new();
    for i in 0..roles.len() {
        let t = attached_rx
            .recv_timeout(Duration::from_secs(10))
            .with_context(|| format!("thread {i} never attached"))?;
        control
            .art()
            .threads
            .lock()
            .unwrap()
            .insert(t.handle(), t.clone());
        // The UI thread counts as foreground from the start, as ART reports the main thread.
        control.thread_attached(t.handle(), t.tid, &t.name, t.name == "main");
        threads.push(t);
    }
    let (tx, rx) = mpsc::channel::<Message>();
    let control_thread = crate::run::spawn_control_thread(&control, rx, "main-job tasks")?;
    let t0 = Instant::now();
    while !threads
        .iter()
        .all(|t| t.block().begin.load(Ordering::Acquire) & 1 == 1)
    {
        ensure!(
            t0.elapsed() < Duration::from_secs(10),
            "the control thread never started the threads in the pool"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    say(format!(
        "{} threads in the pool ({}), running",
        threads.len(),
        threads
            .iter()
            .map(|t| format!("{} tid {}", t.name, t.tid))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    go.wait();

    // -------------------------------------------------------------- the ANR
    let blocked_at = blocked_rx
        .recv_timeout(Duration::from_secs(30))
        .context("the UI thread never blocked in AsyncTask.get()")?;
    std::thread::sleep(Duration::from_millis(p.anr_after_ms).saturating_sub(blocked_at.elapsed()));
    say(format!(
        "the UI thread has been blocked in AsyncTask.get() for {} ms: SIGQUIT (Control::request_anr, as signal_catcher.cc)",
        blocked_at.elapsed().as_millis()
    ));
    control.request_anr();
    let _ = tx.send(Message::Anr);
    let t1 = Instant::now();
    while control.stats.anr_flushes.load(Ordering::Acquire)
        + control.stats.failed_flushes.load(Ordering::Acquire)
        == 0
    {
        ensure!(
            t1.elapsed() < Duration::from_secs(30),
            "the ANR flush never finished"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    say(format!(
        "ANR flush written in {} ms after the request",
        t1.elapsed().as_millis()
    ));
    let mut failed = Vec::new();
    for (j, (_, name)) in joins.into_iter().zip(&roles) {
        match j.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => failed.push(format!("{e:#}")),
            Err(_) => failed.push(format!("thread {name} panicked")),
        }
    }
    let _ = tx.send(Message::Shutdown);
    control_thread
        .join()
        .map_err(|_| anyhow!("control thread panicked"))?;
    if !failed.is_empty() {
        bail!("{}", failed.join("; "));
    }
    ensure!(
        control.stats.failed_flushes.load(Ordering::Relaxed) == 0,
        "a flush failed (see the log above)"
    );
    let known = scene.known.lock().unwrap().clone();
    proof::check(proof::Evidence {
        dir,
        threads,
        scene,
        known,
        tau_ns: p.tau_ns,
        stops: (
            control.stats.cooperative_stops.load(Ordering::Relaxed),
            control.stats.forced_stops.load(Ordering::Relaxed),
        ),
    })
}
