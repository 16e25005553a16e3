//! The scene's checks: the ANR file against what every thread observed itself writing, and
//! `hubble tasks`' queuing report against what the scene knows of every task.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{bail, ensure, Context as _, Result};
use hubble_analysis::queuing::{self, Group, Task};
use hubble_analysis::Input;
use hubble_format::{counter_to_ns, EventKind, Trace};

use crate::tasks::tracer::{Rec, Traced, What};
use crate::tasks::units::{m, names, Known, Scene, Style};

/// One thread of the file.
#[derive(Clone, Debug)]
pub struct ThreadCheck {
    /// Name.
    pub name: String,
    /// Tid.
    pub tid: u32,
    /// Records in the file (= records it wrote before its stop).
    pub records: usize,
    /// Task records among them.
    pub task_records: usize,
    /// Pool blocks its records filled.
    pub blocks: u32,
    /// Whether the flush stopped it by force (it was native) or at its own trace point.
    pub forced: bool,
}

/// What the checks compare: the app's data directory and what the scene saw.
pub struct Evidence {
    /// Where the runtime wrote its files.
    pub dir: PathBuf,
    /// Every traced thread, with the records it wrote and its stops.
    pub threads: Vec<Arc<Traced>>,
    /// The app.
    pub scene: Arc<Scene>,
    /// Every task as the scene saw it, after every thread ended.
    pub known: Vec<Known>,
    /// τ of the report, ns.
    pub tau_ns: u64,
    /// Control-plane stops: cooperative, forced.
    pub stops: (u64, u64),
}

/// What the scene produced and proved.
pub struct Report {
    /// The ANR file.
    pub file: PathBuf,
    /// Its threads.
    pub threads: Vec<ThreadCheck>,
    /// `hubble tasks`' queuing report of it (equal to the scene's own figures).
    pub queuing: queuing::Report,
    /// Control-plane stops.
    pub cooperative_stops: u64,
    /// Forced stops.
    pub forced_stops: u64,
    /// What was checked, for checking again (a test tampers with the file or the figures).
    pub evidence: Evidence,
}

fn what(kind: EventKind) -> Option<What> {
    match kind {
        EventKind::Entry { method } => Some(What::Entry(method)),
        EventKind::Exit => Some(What::Exit),
        EventKind::Task { kind, task, queue } => Some(What::Task(kind, task, queue)),
        EventKind::Start => None,
    }
}

fn the_anr_file(dir: &Path) -> Result<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "hubble"))
        .collect();
    files.sort();
    match files.as_slice() {
        [one] if one.to_string_lossy().ends_with("-anr.hubble") => Ok(one.clone()),
        _ => bail!(
            "{}: want one `-anr.hubble` file, found {files:?}",
            dir.display()
        ),
    }
}

/// Records each thread wrote before its one stop.
fn stop_of(t: &Traced) -> Result<(usize, bool)> {
    let stops = t.stops.lock().unwrap().clone();
    let forced = t.forced.lock().unwrap().clone();
    match (stops.as_slice(), forced.as_slice()) {
        ([k], []) => Ok((*k, false)),
        ([], [k]) => Ok((*k, true)),
        _ => bail!(
            "thread {}: one stop expected (one flush), saw cooperative {stops:?} and forced {forced:?}",
            t.name
        ),
    }
}

/// The checks.
pub fn check(ev: Evidence) -> Result<Report> {
    let (checks, file, queuing) = compare(&ev)?;
    Ok(Report {
        file,
        threads: checks,
        queuing,
        cooperative_stops: ev.stops.0,
        forced_stops: ev.stops.1,
        evidence: ev,
    })
}

impl Evidence {
    /// The checks again (the file as it is now).
    pub fn check(&self) -> Result<()> {
        compare(self).map(|_| ())
    }
}

fn compare(ev: &Evidence) -> Result<(Vec<ThreadCheck>, PathBuf, queuing::Report)> {
    let (dir, threads, scene, known, tau_ns) =
        (&ev.dir, &ev.threads, &*ev.scene, &ev.known, ev.tau_ns);
    let file = the_anr_file(dir)?;
    let name = file.display().to_string();
    let Trace::Threads(tf) = Trace::read(&file).with_context(|| name.clone())? else {
        bail!("{name}: not a version 4 (many-thread) file");
    };
    let pid = tf.header.pid;
    let flush = tf.header.reference_counter;
    let hz = tf.header.timer_hz;
    ensure!(
        pid == std::process::id(),
        "{name}: pid {pid}, this process is {}",
        std::process::id()
    );
    let sections: BTreeMap<u32, (String, u32)> = tf
        .threads
        .iter()
        .map(|s| {
            (
                s.tid,
                (s.thread_name.clone(), s.runs.iter().map(|r| r.blocks).sum()),
            )
        })
        .collect();
    let runs = tf.into_run_files();

    // ---------------------------------------------------------------- every record
    let mut cut: HashMap<u32, usize> = HashMap::new();
    let mut checks = Vec::new();
    for t in threads {
        let (k, forced) = stop_of(t)?;
        cut.insert(t.tid, k);
        let recs: Vec<Rec> = t.recs.lock().unwrap()[..k].to_vec();
        let (sname, blocks) = sections
            .get(&t.tid)
            .with_context(|| format!("{name}: no section for thread {} (tid {})", t.name, t.tid))?;
        ensure!(
            *sname == t.name,
            "{name}: tid {} is named {sname:?}, the thread is {:?}",
            t.tid,
            t.name
        );
        let mut got = Vec::new();
        for r in runs.iter().filter(|r| r.file.header.tid == t.tid) {
            let d = r
                .file
                .decode_events()
                .with_context(|| format!("{name} (tid {}, run {})", t.tid, r.run + 1))?;
            got.extend(d.events.iter().filter_map(|e| {
                what(e.kind).map(|w| Rec {
                    what: w,
                    counter: e.counter,
                })
            }));
        }
        if let Some(i) = (0..got.len().max(recs.len())).find(|&i| got.get(i) != recs.get(i)) {
            bail!(
                "{name}: thread {} (tid {}): record {i} of {} decodes as {:?}, the thread wrote {:?} ({} written before its stop)",
                t.name,
                t.tid,
                got.len(),
                got.get(i),
                recs.get(i),
                recs.len()
            );
        }
        checks.push(ThreadCheck {
            name: t.name.clone(),
            tid: t.tid,
            records: recs.len(),
            task_records: recs
                .iter()
                .filter(|r| matches!(r.what, What::Task(..)))
                .count(),
            blocks: *blocks,
            forced,
        });
    }
    ensure!(
        sections.len() == threads.len(),
        "{name}: {} thread sections, the scene traced {} threads",
        sections.len(),
        threads.len()
    );

    // ---------------------------------------------------------------- hubble tasks
    let inputs: Vec<(String, &hubble_format::TraceFile)> = runs
        .iter()
        .map(|r| (format!("{name} (tid {})", r.file.header.tid), &r.file))
        .collect();
    let input: Vec<Input<'_>> = inputs
        .iter()
        .map(|(n, f)| Input { file: f, name: n })
        .collect();
    let flushes = vec![flush; input.len()];
    let report = queuing::queuing(&input, &flushes, tau_ns).with_context(|| name.clone())?;

    let names = names();
    let ns = |ticks: u64| counter_to_ns(ticks, hz);
    let within = |r: Option<(usize, u64)>, tid: Option<u32>| -> Option<u64> {
        let (i, c) = r?;
        (i < *cut.get(&tid?)?).then_some(c)
    };
    let mut want = Vec::new();
    for kn in known {
        let u = &scene.units[kn.unit];
        let Some(submitted) = within(kn.submit, Some(kn.submit_tid)) else {
            continue;
        };
        let begun = within(kn.begin, kn.run_tid);
        let ended = begun.and(within(kn.end, kn.run_tid));
        let at_take = kn
            .at_take
            .with_context(|| format!("task {:#x} was never run", kn.task))?;
        want.push(Task {
            pid,
            site: Some(names[&u.site].clone()),
            task: kn.task,
            queue: u.queue,
            submit_tid: Some(kn.submit_tid),
            run_tid: begun.and(kn.run_tid),
            method: begun.map(|_| {
                names[&match u.style {
                    Style::Future => m::FUTURE_RUN,
                    Style::Hooks => m::THUMB_RUN,
                }]
                    .clone()
            }),
            submitted: Some(submitted),
            begun,
            ended,
            queued_ns: Some(ns(begun.unwrap_or(flush) - submitted)),
            still_queued: begun.is_none(),
            exec_ns: begun.map(|b| ns(ended.unwrap_or(flush) - b)),
            running: begun.is_some() && ended.is_none(),
            queue_length: Some(at_take - kn.at_submit),
        });
    }
    let mut got: Vec<&Task> = report.tasks.iter().collect();
    got.sort_by_key(|t| t.submitted);
    want.sort_by_key(|t| t.submitted);
    ensure!(
        got.len() == want.len(),
        "{name}: hubble tasks reports {} tasks, the scene submitted {} in the window",
        got.len(),
        want.len()
    );
    for (g, w) in got.iter().zip(&want) {
        ensure!(
            *g == w,
            "{name}: task {:#x}: hubble tasks reports\n  {g:?}\nthe scene produced\n  {w:?}",
            w.task
        );
    }
    for (u, unit) in scene.units.iter().enumerate() {
        let q = report
            .queues
            .iter()
            .find(|q| q.queue == unit.queue)
            .with_context(|| format!("{name}: no queue {:#x} in the report", unit.queue))?;
        let n = want.iter().filter(|t| t.queue == unit.queue).count() as u64;
        ensure!(
            q.capacity == unit.workers as u64 && q.tasks == n,
            "{name}: unit {u} ({} threads, {n} tasks): reported capacity {} with {} tasks",
            unit.workers,
            q.capacity,
            q.tasks
        );
    }
    // Groups: one per site, with M_q, M_e and the verdict from the scene's figures.
    ensure!(
        report.groups.len() == scene.units.len(),
        "{name}: {} groups, want one per site",
        report.groups.len()
    );
    let mut seen_normal = false;
    for g in &report.groups {
        let unit = scene
            .units
            .iter()
            .find(|u| names[&u.site] == g.site)
            .with_context(|| {
                format!("{name}: a group for {:?}, which submitted nothing", g.site)
            })?;
        let mine: Vec<&Task> = want.iter().filter(|t| t.queue == unit.queue).collect();
        let max_q = mine.iter().filter_map(|t| t.queued_ns).max().unwrap_or(0);
        let max_e = mine.iter().filter_map(|t| t.exec_ns).max().unwrap_or(0);
        let over: Vec<&&Task> = mine
            .iter()
            .filter(|t| t.queued_ns.is_some_and(|q| q >= tau_ns))
            .collect();
        let mean_len = if over.is_empty() {
            0.0
        } else {
            over.iter()
                .map(|t| t.queue_length.unwrap_or(0) as f64)
                .sum::<f64>()
                / over.len() as f64
        };
        let check = |g: &Group| {
            g.tasks == mine.len() as u64
                && g.max_queued_ns == max_q
                && g.max_exec_ns == max_e
                && g.capacity == unit.workers as u64
                && g.anomalous == (max_q > tau_ns || max_e > tau_ns)
                && g.queued_over_tau == over.len() as u64
                && (g.mean_queue_length - mean_len).abs() < 1e-9
        };
        ensure!(
            check(g),
            "{name}: group {:?}: reported {g:?}; the scene's: {} tasks, M_q {max_q} ns, M_e {max_e} ns, capacity {}, {} queued >= tau, mean queue length {mean_len}",
            g.site,
            mine.len(),
            unit.workers,
            over.len()
        );
        ensure!(
            !(seen_normal && g.anomalous),
            "{name}: an anomalous group after a normal one"
        );
        seen_normal |= !g.anomalous;
    }
    // The executions part of `hubble tasks` (method records only): each worker ran, within
    // the window, exactly the tasks the scene gave it, each one execution of the task's method.
    let thread_of: Vec<usize> = runs.iter().map(|r| r.section).collect();
    let executions =
        hubble_analysis::tasks::tasks_threads(&input, &thread_of).with_context(|| name.clone())?;
    for t in threads {
        let Some(unit) = scene.units.iter().position(|u| t.name.starts_with(u.name)) else {
            continue;
        };
        let task_method = &names[&match scene.units[unit].style {
            Style::Future => m::FUTURE_RUN,
            Style::Hooks => m::THUMB_RUN,
        }];
        let want = want.iter().filter(|w| w.run_tid == Some(t.tid)).count() as u64;
        let got: u64 = executions
            .iter()
            .filter(|e| e.tid == t.tid)
            .flat_map(|e| &e.executions)
            .filter(|e| &e.task == task_method)
            .map(|e| e.count)
            .sum();
        ensure!(
            got == want,
            "{name}: hubble tasks counts {got} executions of {task_method} on {}, the scene ran {want} there",
            t.name
        );
    }
    // The scene is an ANR behind a slow task: make sure it produced one.
    let feed = &report.groups[0];
    ensure!(
        feed.anomalous && feed.site == names[&m::FEED_REFRESH] && feed.queued_over_tau > 0,
        "{name}: the scene did not queue the feed tasks past tau ({feed:?}): a loaded machine? rerun"
    );
    Ok((checks, file, report))
}
