//! `hubble info`: a trace file's metadata and window statistics.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Result;
use hubble_format::{counter_to_ns, EventKind, Mode, WindowStart};

use crate::input;

#[derive(clap::Args)]
pub struct Args {
    /// A trace file written by the runtime.
    file: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    match input::load_any(&args.file)? {
        input::Any::Single(loaded) => single(&loaded),
        input::Any::Threads(runs) => threads(&args.file, &runs),
    }
}

/// Entries, exits and the methods entered.
fn count(events: &[hubble_format::Event]) -> (usize, usize, BTreeSet<u64>) {
    let mut entries = 0usize;
    let mut exits = 0usize;
    let mut methods = BTreeSet::new();
    for event in events {
        match event.kind {
            EventKind::Entry { method } => {
                entries += 1;
                methods.insert(method);
            }
            EventKind::Exit => exits += 1,
            EventKind::Start | EventKind::Task { .. } => {}
        }
    }
    (entries, exits, methods)
}

/// Task records (docs/tasks.md): a line only where there are some, naming the tool that reads
/// them.
fn print_tasks(n: usize) {
    if n > 0 {
        println!("tasks:           {n} task records (`hubble tasks`: queuing time)");
    }
}

fn tasks(events: &[hubble_format::Event]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Task { .. }))
        .count()
}

/// A version 4 file: the process once, then a line per thread (its runs, the `seq` its blocks
/// span and how many are missing, its events).
fn threads(path: &std::path::Path, runs: &[input::LoadedRun]) -> Result<()> {
    let Some(first) = runs.first() else {
        anyhow::bail!("{}: no thread", path.display());
    };
    let h = &first.loaded.file.header;
    let sections = runs.iter().filter(|r| r.run == 0).count();
    let slots: usize = runs.iter().map(|r| r.loaded.file.window.len()).sum();
    println!("file:            {}", path.display());
    println!("format:          version 4 (many threads: one section per thread)");
    println!("process:         {} (pid {})", h.process_name, h.pid);
    reason_metadata_mode(h);
    // The newest run of any thread keeps the flush's reference pair.
    let newest = &runs
        .iter()
        .find(|r| r.run + 1 == r.runs)
        .expect("a thread's last run")
        .loaded
        .file
        .header;
    println!(
        "timer:           {} Hz, reference counter {}",
        h.timer_hz, newest.reference_counter
    );
    println!(
        "wall clock:      {} ns since the Unix epoch at the reference",
        newest.wall_clock_ns
    );
    println!(
        "threads:         {sections} ({} runs, {slots} slots, {} bytes)",
        runs.len(),
        slots * 8
    );
    let mut all_methods = BTreeSet::new();
    let mut i = 0;
    while i < runs.len() {
        let n = runs[i].runs;
        let thread = &runs[i..i + n];
        let t = &thread[0].loaded.file.header;
        let (mut entries, mut exits, mut lost) = (0, 0, 0u64);
        let mut anchors = 0;
        for r in thread {
            let (e, x, m) = count(&r.loaded.decoded.events);
            entries += e;
            exits += x;
            lost += u64::from(r.seq.lost_before);
            anchors += r.loaded.file.header.anchors.len();
            all_methods.extend(m);
        }
        let span = match (
            thread[0].loaded.decoded.events.first(),
            thread[n - 1].loaded.decoded.events.last(),
        ) {
            (Some(a), Some(b)) => counter_to_ns(b.counter.saturating_sub(a.counter), h.timer_hz),
            _ => 0,
        };
        println!(
            "thread {} {}: {n} run(s), seq {}..{}, {lost} seq missing, {} anchor(s), {entries} \
             entries, {exits} exits over {:.3} ms",
            t.tid,
            t.thread_name,
            thread[0].seq.first,
            thread[n - 1].seq.last,
            anchors,
            span as f64 / 1e6
        );
        i += n;
    }
    // Each run keeps the symbols its entries name: together, every resolved method.
    let named: BTreeSet<u64> = runs
        .iter()
        .flat_map(|r| r.loaded.file.symbols.keys().copied())
        .collect();
    println!(
        "methods:         {} distinct, {} unresolved",
        all_methods.len(),
        all_methods.difference(&named).count()
    );
    print_aliases(named.iter().copied());
    print_tasks(runs.iter().map(|r| tasks(&r.loaded.decoded.events)).sum());
    Ok(())
}

fn single(loaded: &input::Loaded) -> Result<()> {
    let h = &loaded.file.header;
    let events = &loaded.decoded.events;
    let (entries, exits, methods) = count(events);
    let unresolved = methods
        .iter()
        .filter(|m| !loaded.file.symbols.contains_key(m))
        .count();
    let span = match (events.first(), events.last()) {
        (Some(a), Some(b)) => counter_to_ns(b.counter - a.counter, h.timer_hz),
        _ => 0,
    };
    println!("file:            {}", loaded.path.display());
    println!("process:         {} (pid {})", h.process_name, h.pid);
    println!("thread:          {} (tid {})", h.thread_name, h.tid);
    reason_metadata_mode(h);
    println!(
        "timer:           {} Hz, reference counter {}",
        h.timer_hz, h.reference_counter
    );
    println!(
        "wall clock:      {} ns since the Unix epoch at the reference",
        h.wall_clock_ns
    );
    println!(
        "ring:            {} bytes, write position {}",
        h.ring_bytes, h.write_pos
    );
    println!(
        "window:          {} slots ({} bytes)",
        loaded.file.window.len(),
        loaded.file.window.len() * 8
    );
    println!(
        "idle gaps:       {} anchored (the thread wrote nothing for a tick or more there)",
        h.anchors.len()
    );
    println!(
        "window start:    {}",
        match loaded.decoded.start {
            WindowStart::StartRecord => "tracing start (nothing lost)",
            WindowStart::ValidLimit => "ring wrapped (older data overwritten)",
        }
    );
    println!(
        "events:          {entries} entries, {exits} exits over {:.3} ms",
        span as f64 / 1e6
    );
    println!(
        "methods:         {} distinct, {} symbols, {unresolved} unresolved",
        methods.len(),
        loaded.file.symbols.len()
    );
    print_aliases(loaded.file.symbols.keys().copied());
    print_tasks(tasks(events));
    if loaded.decoded.dropped_half_record {
        println!("note:            a two-slot record cut by the wrap was dropped");
    }
    Ok(())
}

/// Says how many methods of unloaded class loaders the runtime wrote under an alias (their
/// address | 2) because a later method took their address (docs/trace-format.md); nothing when
/// none did.
fn print_aliases(symbols: impl Iterator<Item = u64>) {
    let n = symbols.filter(|p| p & 2 != 0).count();
    if n > 0 {
        println!(
            "reused:          {n} methods of unloaded class loaders whose address a later method \
             took (named apart, under their address | 2)"
        );
    }
}

/// The lines every file version prints alike: trigger reason, metadata, ISA mode.
fn reason_metadata_mode(h: &hubble_format::TraceHeader) {
    println!("reason:          {}", h.reason);
    for (key, value) in &h.metadata {
        println!("metadata:        {key} = {value}");
    }
    println!(
        "mode:            {}-bit",
        if h.mode == Mode::Bits64 { 64 } else { 32 }
    );
}
