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
    let loaded = input::load_trace(&args.file)?;
    let h = &loaded.file.header;
    let events = &loaded.decoded.events;
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
            EventKind::Start => {}
        }
    }
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
    println!("reason:          {}", h.reason);
    for (key, value) in &h.metadata {
        println!("metadata:        {key} = {value}");
    }
    println!(
        "mode:            {}-bit",
        if h.mode == Mode::Bits64 { 64 } else { 32 }
    );
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
    if loaded.decoded.dropped_half_record {
        println!("note:            a two-slot entry cut by the wrap was dropped");
    }
    Ok(())
}
