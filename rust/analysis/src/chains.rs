//! `hubble chains`: the heaviest call chains in a time window.
//!
//! A chain is a call path, outermost method first. Each frame's self time inside the window is
//! charged to its chain, so a chain's time is what the thread spent with exactly that stack in
//! the window (the time the chain "held" the thread): the chain down to `Thread.sleep` under a
//! click handler shows up with the sleep's length, a tight loop in a method with its own time.
//! The window defaults to the last N ms before the flush — the anomaly's neighbourhood (§7).

use std::collections::HashMap;

use serde::Serialize;

use crate::walk::walk;
use crate::{Input, Result};

/// How chains are ranked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rank {
    /// By time in the window (descending).
    Time,
    /// By depth (descending), then time.
    Depth,
}

/// One call chain.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Chain {
    /// Method names, outermost first.
    pub methods: Vec<String>,
    /// Number of frames (= `methods.len()`).
    pub depth: usize,
    /// Activations of the innermost method on this path inside the window.
    pub count: u64,
    /// Self time of the innermost method on this path inside the window, ns.
    pub self_ns: u64,
}

/// The chains of `inputs` in the last `last_ns` before each flush (`None`: the whole window).
pub fn chains(inputs: &[Input<'_>], last_ns: Option<u64>, rank: Rank) -> Result<Vec<Chain>> {
    let ends: Vec<u64> = inputs
        .iter()
        .map(|i| i.file.header.reference_counter)
        .collect();
    chains_before(inputs, &ends, last_ns, rank)
}

/// [`chains`] in the last `last_ns` before `ends[i]` for input `i`: the flush of the file an
/// input came from. A run of a version 4 file that is not its thread's newest ends before the
/// flush (its reference is its own newest record, `ThreadsFile::into_run_files`), and the
/// window is the flush's, the same for every thread of the process.
pub fn chains_before(
    inputs: &[Input<'_>],
    ends: &[u64],
    last_ns: Option<u64>,
    rank: Rank,
) -> Result<Vec<Chain>> {
    if ends.len() != inputs.len() {
        return Err(crate::AnalysisError::Unsupported(format!(
            "{} flush times for {} inputs",
            ends.len(),
            inputs.len()
        )));
    }
    let mut by_path: HashMap<Vec<String>, (u64, u64)> = HashMap::new();
    for (input, &hi) in inputs.iter().zip(ends) {
        let h = &input.file.header;
        let lo = match last_ns {
            Some(ns) => {
                let ticks = u128::from(ns) * u128::from(h.timer_hz) / 1_000_000_000;
                hi.saturating_sub(u64::try_from(ticks).unwrap_or(u64::MAX))
            }
            None => 0,
        };
        let clip = |a: u64, b: u64| -> u64 { b.min(hi).saturating_sub(a.max(lo)) };
        // Clipped inclusive ticks of completed children, per depth.
        let mut children: Vec<u64> = Vec::new();
        let mut paths: HashMap<Vec<Option<u64>>, (u64, u64)> = HashMap::new();
        let clock = walk(*input, |ancestors, frame| {
            let d = ancestors.len();
            children.resize(children.len().max(d + 2), 0);
            let inside = clip(frame.start, frame.end);
            let kids = std::mem::take(&mut children[d + 1]);
            children[d] += inside;
            let own = inside.saturating_sub(kids);
            if frame.end < lo || frame.start > hi {
                return;
            }
            let mut path: Vec<Option<u64>> = ancestors.iter().map(|a| a.method).collect();
            path.push(frame.method);
            let e = paths.entry(path).or_default();
            e.0 += 1;
            e.1 += own;
        })?;
        for (path, (count, ticks)) in paths {
            let names: Vec<String> = path
                .iter()
                .map(|m| hubble_format::names::display(&input.file.symbols, *m).into_owned())
                .collect();
            let e = by_path.entry(names).or_default();
            e.0 += count;
            e.1 += clock.ticks_to_ns(ticks) as u64;
        }
    }
    let mut out: Vec<Chain> = by_path
        .into_iter()
        .map(|(methods, (count, self_ns))| Chain {
            depth: methods.len(),
            methods,
            count,
            self_ns,
        })
        .collect();
    match rank {
        Rank::Time => out.sort_by(|a, b| {
            b.self_ns
                .cmp(&a.self_ns)
                .then_with(|| b.depth.cmp(&a.depth))
                .then_with(|| a.methods.cmp(&b.methods))
        }),
        Rank::Depth => out.sort_by(|a, b| {
            b.depth
                .cmp(&a.depth)
                .then_with(|| b.self_ns.cmp(&a.self_ns))
                .then_with(|| a.methods.cmp(&b.methods))
        }),
    }
    Ok(out)
}
