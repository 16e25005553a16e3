//! `hubble summary`: the report meant to leave the device (Hubble §7).
//!
//! It holds exactly three things: the top-N methods (name, calls, self and inclusive time),
//! the signatures that matched (name, count, total and longest duration) and the shapes of the
//! heaviest call chains near the flush (method names, depth, count, time). Nothing else: no
//! process or thread identity (pid, tid, names), no trigger reason, no timestamps (only
//! durations), no pointers — a method the runtime could not name is `<unresolved>` — and no
//! counts of anything but calls. The field list is closed: [`Summary`] is all there is.

use serde::Serialize;

use crate::chains::{chains_before, Rank};
use crate::signatures::{matches, Signature};
use crate::top::top;
use crate::{Input, Result};

/// Version of the summary's schema.
pub const SCHEMA: u32 = 1;

/// What is summarized.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Methods in the top list.
    pub top: usize,
    /// Chains listed.
    pub chains: usize,
    /// The chains' window: the last this-many ns before each flush.
    pub chain_window_ns: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            top: 20,
            chains: 10,
            chain_window_ns: 200_000_000,
        }
    }
}

/// A top method.
#[derive(Clone, Debug, Serialize)]
pub struct TopMethod {
    /// Method name.
    pub method: String,
    /// Activations.
    pub calls: u64,
    /// Self time, ns.
    pub self_ns: u64,
    /// Inclusive time, ns.
    pub inclusive_ns: u64,
}

/// A matched signature.
#[derive(Clone, Debug, Serialize)]
pub struct Matched {
    /// Signature name (from the signature file).
    pub signature: String,
    /// Matching frames.
    pub count: u64,
    /// Total duration, ns.
    pub total_ns: u64,
    /// Longest, ns.
    pub max_ns: u64,
}

/// A chain shape.
#[derive(Clone, Debug, Serialize)]
pub struct ChainShape {
    /// Method names, outermost first.
    pub methods: Vec<String>,
    /// Depth.
    pub depth: usize,
    /// Activations of the innermost method.
    pub count: u64,
    /// Self time of the innermost method in the window, ns.
    pub self_ns: u64,
}

/// The whole report.
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Schema version.
    pub hubble_summary: u32,
    /// Top methods by self time.
    pub top: Vec<TopMethod>,
    /// Signatures that matched at least once.
    pub matched: Vec<Matched>,
    /// Heaviest chains in the window.
    pub chains: Vec<ChainShape>,
    /// The chains' window, ns.
    pub chain_window_ns: u64,
}

/// A method name fit to leave the device: unresolved pointers become `<unresolved>`.
pub fn scrub(name: &str) -> String {
    let hex = name
        .strip_prefix("0x")
        .is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_hexdigit()));
    if hex {
        "<unresolved>".to_owned()
    } else {
        name.to_owned()
    }
}

/// Summarizes `inputs`.
pub fn summarize(
    inputs: &[Input<'_>],
    signatures: &[Signature],
    options: Options,
) -> Result<Summary> {
    let ends: Vec<u64> = inputs
        .iter()
        .map(|i| i.file.header.reference_counter)
        .collect();
    summarize_before(inputs, &ends, signatures, options)
}

/// [`summarize`] with the chains' window ending at `ends[i]` for input `i`
/// ([`crate::chains::chains_before`]).
pub fn summarize_before(
    inputs: &[Input<'_>],
    ends: &[u64],
    signatures: &[Signature],
    options: Options,
) -> Result<Summary> {
    let mut methods: Vec<TopMethod> = Vec::new();
    for m in top(inputs)? {
        let name = scrub(&m.method);
        // Unresolved methods merge into one line.
        match methods.iter_mut().find(|t| t.method == name) {
            Some(t) => {
                t.calls += m.calls;
                t.self_ns += m.self_ns;
                t.inclusive_ns += m.inclusive_ns;
            }
            None => methods.push(TopMethod {
                method: name,
                calls: m.calls,
                self_ns: m.self_ns,
                inclusive_ns: m.inclusive_ns,
            }),
        }
    }
    methods.sort_by(|a, b| {
        b.self_ns
            .cmp(&a.self_ns)
            .then_with(|| a.method.cmp(&b.method))
    });
    methods.truncate(options.top);
    let matched = if signatures.is_empty() {
        Vec::new()
    } else {
        matches(inputs, signatures)?
            .into_iter()
            .filter(|m| m.count > 0)
            .map(|m| Matched {
                signature: m.name,
                count: m.count,
                total_ns: m.total_ns,
                max_ns: m.max_ns,
            })
            .collect()
    };
    let chains = chains_before(inputs, ends, Some(options.chain_window_ns), Rank::Time)?
        .into_iter()
        .filter(|c| c.self_ns > 0)
        .take(options.chains)
        .map(|c| ChainShape {
            methods: c.methods.iter().map(|m| scrub(m)).collect(),
            depth: c.depth,
            count: c.count,
            self_ns: c.self_ns,
        })
        .collect();
    Ok(Summary {
        hubble_summary: SCHEMA,
        top: methods,
        matched,
        chains,
        chain_window_ns: options.chain_window_ns,
    })
}
