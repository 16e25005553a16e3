//! The analyses: `hubble top`, `chains`, `match`, `summary` (text for people, `--json` for
//! machines).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::ValueEnum;
use hubble_analysis::{chains, ms, signatures, summary, top};

use crate::output::with_output;
use crate::peers_input::{flushes, inputs, load_all, threads};

#[derive(clap::Args)]
pub struct Common {
    /// Trace files (one per thread); their results are added up.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Write here instead of stdout (`-` = stdout).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
}

#[derive(clap::Args)]
pub struct TopArgs {
    #[command(flatten)]
    common: Common,
    /// Methods to list (0 = all).
    #[arg(short = 'n', long, default_value_t = 20)]
    limit: usize,
    /// Order by inclusive time instead of self time.
    #[arg(long)]
    inclusive: bool,
}

#[derive(clap::Args)]
pub struct TasksArgs {
    #[command(flatten)]
    common: Common,
    /// DiagDroid's threshold τ: a site whose longest queuing or execution time exceeds it is
    /// anomalous.
    #[arg(long, value_name = "MS", default_value_t = 500.0)]
    tau_ms: f64,
    /// Also list every task identity's runs: where each was submitted, on which threads, how
    /// long it queued and ran (a Kotlin coroutine's launch and resumptions share one identity).
    #[arg(long)]
    each: bool,
}

/// `hubble tasks --json`: the per-thread executions and the queuing report.
#[derive(serde::Serialize)]
struct TasksJson<'a> {
    threads: &'a [hubble_analysis::tasks::ThreadTasks],
    queuing: &'a hubble_analysis::queuing::Report,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum By {
    /// Time the chain held the thread in the window.
    Time,
    /// Number of frames.
    Depth,
}

#[derive(clap::Args)]
pub struct ChainsArgs {
    #[command(flatten)]
    common: Common,
    /// The window: the last this-many ms before each flush (0 = the whole window).
    #[arg(long, default_value_t = 200.0)]
    last_ms: f64,
    /// Ranking.
    #[arg(long, value_enum, default_value = "time")]
    by: By,
    /// Chains to list (0 = all).
    #[arg(short = 'n', long, default_value_t = 10)]
    limit: usize,
}

#[derive(clap::Args)]
pub struct MatchArgs {
    /// Signature file (see docs/tools.md).
    signatures: PathBuf,
    #[command(flatten)]
    common: Common,
}

#[derive(clap::Args)]
pub struct SummaryArgs {
    #[command(flatten)]
    common: Common,
    /// Signature file to match (optional).
    #[arg(long, value_name = "FILE")]
    signatures: Option<PathBuf>,
    /// Methods in the top list.
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// Chains listed.
    #[arg(long, default_value_t = 10)]
    chains: usize,
    /// The chains' window: the last this-many ms before each flush.
    #[arg(long, default_value_t = 200.0)]
    last_ms: f64,
    /// Instead of one report: one summary per input file (one per upload, as devices send
    /// them), added as Parquet parts under this directory (`summaries/`, `summary_top/`,
    /// `summary_signatures/`; docs/fleet.md). Each row carries the file's device-class
    /// metadata (device, build, SDK, ABI) and `--meta`, never its identity.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["json", "output"])]
    parquet: Option<PathBuf>,
    /// Metadata for `--parquet`, overriding the files' own (e.g. `app.version=4.2.0`).
    #[arg(long, value_name = "KEY=VALUE", requires = "parquet")]
    meta: Vec<String>,
}

fn limit<T>(mut v: Vec<T>, n: usize) -> Vec<T> {
    if n > 0 {
        v.truncate(n);
    }
    v
}

fn window_ns(last_ms: f64) -> Result<Option<u64>> {
    anyhow::ensure!(
        last_ms.is_finite() && last_ms >= 0.0,
        "--last-ms must be a non-negative number"
    );
    Ok((last_ms > 0.0).then(|| (last_ms * 1e6).round() as u64))
}

fn read_signatures(path: &PathBuf) -> Result<Vec<signatures::Signature>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    Ok(signatures::parse(&path.display().to_string(), &text)?)
}

fn json(out: &mut dyn Write, value: &impl serde::Serialize) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)?;
    Ok(())
}

pub fn run_top(args: TopArgs) -> Result<()> {
    let loaded = load_all(&args.common.files)?;
    let mut stats = top::top(&inputs(&loaded))?;
    if args.inclusive {
        stats.sort_by(|a, b| {
            b.inclusive_ns
                .cmp(&a.inclusive_ns)
                .then_with(|| a.method.cmp(&b.method))
        });
    }
    let stats = limit(stats, args.limit);
    with_output(args.common.output.as_deref(), |out| {
        if args.common.json {
            return json(out, &stats);
        }
        writeln!(
            out,
            "{:>12} {:>12} {:>9}  method",
            "self ms", "incl ms", "calls"
        )?;
        for s in &stats {
            writeln!(
                out,
                "{:>12} {:>12} {:>9}  {}",
                ms(s.self_ns),
                ms(s.inclusive_ns),
                s.calls,
                s.method
            )?;
        }
        Ok(())
    })
}

pub fn run_chains(args: ChainsArgs) -> Result<()> {
    let window = window_ns(args.last_ms)?;
    let loaded = load_all(&args.common.files)?;
    let rank = match args.by {
        By::Time => chains::Rank::Time,
        By::Depth => chains::Rank::Depth,
    };
    let found = limit(
        chains::chains_before(&inputs(&loaded), &flushes(&loaded), window, rank)?,
        args.limit,
    );
    with_output(args.common.output.as_deref(), |out| {
        if args.common.json {
            return json(out, &found);
        }
        match window {
            Some(ns) => writeln!(
                out,
                "call chains in the last {} ms before the flush",
                ms(ns)
            )?,
            None => writeln!(out, "call chains in the whole window")?,
        }
        for (i, c) in found.iter().enumerate() {
            writeln!(
                out,
                "#{} {} ms, depth {}, {} activation(s)",
                i + 1,
                ms(c.self_ns),
                c.depth,
                c.count
            )?;
            for (d, m) in c.methods.iter().enumerate() {
                writeln!(out, "  {:indent$}{m}", "", indent = d.min(40))?;
            }
        }
        Ok(())
    })
}

pub fn run_match(args: MatchArgs) -> Result<()> {
    let sigs = read_signatures(&args.signatures)?;
    let loaded = load_all(&args.common.files)?;
    let found = signatures::matches(&inputs(&loaded), &sigs)?;
    with_output(args.common.output.as_deref(), |out| {
        if args.common.json {
            return json(out, &found);
        }
        writeln!(
            out,
            "{:<32} {:>8} {:>12} {:>12}",
            "signature", "matches", "total ms", "max ms"
        )?;
        for m in &found {
            writeln!(
                out,
                "{:<32} {:>8} {:>12} {:>12}",
                m.name,
                m.count,
                ms(m.total_ns),
                ms(m.max_ns)
            )?;
        }
        Ok(())
    })
}

pub fn run_summary(args: SummaryArgs) -> Result<()> {
    let sigs = match &args.signatures {
        Some(p) => read_signatures(p)?,
        None => Vec::new(),
    };
    let window = window_ns(args.last_ms)?.unwrap_or(u64::MAX);
    let options = summary::Options {
        top: args.top,
        chains: args.chains,
        chain_window_ns: window,
    };
    if let Some(dir) = &args.parquet {
        return crate::parquet::summaries(&args.common.files, dir, &sigs, options, &args.meta);
    }
    let loaded = load_all(&args.common.files)?;
    let report = summary::summarize_before(&inputs(&loaded), &flushes(&loaded), &sigs, options)?;
    with_output(args.common.output.as_deref(), |out| {
        if args.common.json {
            return json(out, &report);
        }
        writeln!(out, "top methods by self time:")?;
        for t in &report.top {
            writeln!(
                out,
                "  {:>12} ms self {:>12} ms incl {:>8} calls  {}",
                ms(t.self_ns),
                ms(t.inclusive_ns),
                t.calls,
                t.method
            )?;
        }
        writeln!(out, "matched signatures:")?;
        for m in &report.matched {
            writeln!(
                out,
                "  {}: {} match(es), {} ms total, {} ms max",
                m.signature,
                m.count,
                ms(m.total_ns),
                ms(m.max_ns)
            )?;
        }
        writeln!(out, "chain shapes:")?;
        for c in &report.chains {
            writeln!(
                out,
                "  {} ms, depth {}: {}",
                ms(c.self_ns),
                c.depth,
                c.methods.join(" > ")
            )?;
        }
        Ok(())
    })
}

pub fn run_tasks(args: TasksArgs) -> Result<()> {
    if !(args.tau_ms.is_finite() && args.tau_ms >= 0.0) {
        anyhow::bail!(
            "--tau-ms {}: give a number of milliseconds, 0 or more",
            args.tau_ms
        );
    }
    let tau_ns = (args.tau_ms * 1e6).round() as u64;
    let each = args.each;
    let args = args.common;
    let loaded = load_all(&args.files)?;
    let report = hubble_analysis::tasks::tasks_threads(&inputs(&loaded), &threads(&loaded))?;
    let queued = hubble_analysis::queuing::queuing(&inputs(&loaded), &flushes(&loaded), tau_ns)?;
    with_output(args.output.as_deref(), |out| {
        if args.json {
            return json(
                out,
                &TasksJson {
                    threads: &report,
                    queuing: &queued,
                },
            );
        }
        for t in &report {
            writeln!(out, "thread {} (tid {})", t.thread, t.tid)?;
            for (api, n) in &t.scheduled {
                writeln!(out, "  scheduled {n:>6} x {api}")?;
            }
            for e in &t.executions {
                writeln!(
                    out,
                    "  {:>6} x {:>10} ms total {:>10} ms max {:>4} over 16 ms  {}  (via {})",
                    e.count,
                    ms(e.total_ns),
                    ms(e.max_ns),
                    e.over_16ms,
                    e.task,
                    e.dispatcher
                )?;
            }
        }
        write_queuing(out, &queued)?;
        if each {
            write_each(out, &queued, &report)?;
        }
        Ok(())
    })
}

/// `--each`: the tasks by identity, each identity's submissions in order.
fn write_each(
    out: &mut dyn Write,
    r: &hubble_analysis::queuing::Report,
    threads: &[hubble_analysis::tasks::ThreadTasks],
) -> Result<()> {
    let name = |tid: Option<u32>| match tid {
        None => "(not in the trace)".to_string(),
        Some(tid) => threads
            .iter()
            .find(|t| t.tid == tid)
            .map_or_else(|| format!("tid {tid}"), |t| t.thread.clone()),
    };
    // Identities in the order of their first submission (the report's tasks are in that order).
    type Runs<'a> = Vec<&'a hubble_analysis::queuing::Task>;
    let mut by_identity: Vec<((u32, u32), Runs)> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for t in &r.tasks {
        let i = *index.entry((t.pid, t.task)).or_insert_with(|| {
            by_identity.push(((t.pid, t.task), Vec::new()));
            by_identity.len() - 1
        });
        by_identity[i].1.push(t);
    }
    writeln!(out, "tasks by identity: {}", by_identity.len())?;
    for ((pid, task), runs) in &by_identity {
        writeln!(
            out,
            "  task {task:#010x} (pid {pid}): {} run{}",
            runs.len(),
            if runs.len() == 1 { "" } else { "s" }
        )?;
        for t in runs {
            let ran = match (t.exec_ns, t.running) {
                (None, _) => String::new(),
                (Some(ns), true) => format!("running for {} ms on {}", ms(ns), name(t.run_tid)),
                (Some(ns), false) => format!("ran {} ms on {}", ms(ns), name(t.run_tid)),
            };
            let line = match (t.submit_tid, t.queued_ns, t.still_queued) {
                // Begun, its submission older than the window.
                (None, _, _) => format!("submitted before the window, {ran}"),
                (Some(_), Some(ns), true) => format!("still queued after {} ms", ms(ns)),
                (Some(_), queued, false) => {
                    let queued = queued.map_or_else(|| "?".to_owned(), ms);
                    format!("queued {queued} ms, {ran}")
                }
                (Some(_), None, true) => "still queued".to_owned(),
            };
            let at = match t.submit_tid {
                None => String::new(),
                Some(tid) => format!(
                    "submitted on {} at {}, ",
                    name(Some(tid)),
                    t.site
                        .as_deref()
                        .unwrap_or(hubble_analysis::queuing::UNKNOWN_SITE)
                ),
            };
            writeln!(out, "    {at}{line}")?;
        }
    }
    Ok(())
}

/// The queuing report as text: groups ranked, then the queues.
fn write_queuing(out: &mut dyn Write, r: &hubble_analysis::queuing::Report) -> Result<()> {
    if r.tasks.is_empty() {
        writeln!(
            out,
            "queuing: no task records in these traces (docs/tasks.md: which methods write them)"
        )?;
        return Ok(());
    }
    let anomalous = r.groups.iter().filter(|g| g.anomalous).count();
    writeln!(
        out,
        "queuing (tau {} ms): {} tasks from {} sites, {anomalous} anomalous",
        ms(r.tau_ns),
        r.tasks.len(),
        r.groups.len()
    )?;
    for g in &r.groups {
        writeln!(
            out,
            "  {} {}: {} tasks, max queued {} ms, max executed {} ms, capacity {}",
            if g.anomalous { "ANOMALOUS" } else { "ok" },
            g.site,
            g.tasks,
            ms(g.max_queued_ns),
            ms(g.max_exec_ns),
            g.capacity
        )?;
        if g.queued_over_tau > 0 {
            writeln!(
                out,
                "      {} queued >= tau: mean queue length {:.2}, mean execution of the tasks \
                 ahead {} ms",
                g.queued_over_tau,
                g.mean_queue_length,
                ms(g.mean_exec_ahead_ns)
            )?;
            for (site, n) in &g.behind {
                writeln!(out, "      behind {n:>4} x {site}")?;
            }
        }
    }
    let still = r.tasks.iter().filter(|t| t.still_queued).count();
    let running = r.tasks.iter().filter(|t| t.running).count();
    if still + running > 0 {
        writeln!(
            out,
            "  at the flush: {still} still queued, {running} running"
        )?;
    }
    for q in &r.queues {
        writeln!(
            out,
            "  queue {:#010x}: capacity {} ({} tasks)",
            q.queue, q.capacity, q.tasks
        )?;
    }
    Ok(())
}
