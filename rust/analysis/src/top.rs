//! `hubble top`: methods by self time and by inclusive time, with call counts.
//!
//! Inclusive time counts a recursive method once per outermost activation (time inside a
//! nested call of the same method is already inside the outer one).

use std::collections::HashMap;

use serde::Serialize;

use crate::walk::walk;
use crate::{Input, Result};

/// One method's totals.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct MethodStats {
    /// The method's name.
    pub method: String,
    /// Completed or cut activations in the windows.
    pub calls: u64,
    /// Time in the method itself, ns.
    pub self_ns: u64,
    /// Time in the method and its callees, ns.
    pub inclusive_ns: u64,
}

/// Every method's totals over all inputs, by self time (descending), then name.
pub fn top(inputs: &[Input<'_>]) -> Result<Vec<MethodStats>> {
    let mut by_name: HashMap<String, MethodStats> = HashMap::new();
    for input in inputs {
        // Per method pointer: (calls, self ticks, inclusive ticks); converted once at the end.
        let mut stats: HashMap<Option<u64>, (u64, u64, u64)> = HashMap::new();
        let clock = walk(*input, |ancestors, frame| {
            let recursive = ancestors.iter().any(|a| a.method == frame.method);
            let entry = stats.entry(frame.method).or_default();
            entry.0 += 1;
            entry.1 += frame.self_ticks();
            if !recursive {
                entry.2 += frame.ticks();
            }
        })?;
        for (method, (calls, self_ticks, incl_ticks)) in stats {
            let name = hubble_format::names::display(&input.file.symbols, method).into_owned();
            let e = by_name.entry(name.clone()).or_insert(MethodStats {
                method: name,
                calls: 0,
                self_ns: 0,
                inclusive_ns: 0,
            });
            e.calls += calls;
            e.self_ns += clock.ticks_to_ns(self_ticks) as u64;
            e.inclusive_ns += clock.ticks_to_ns(incl_ticks) as u64;
        }
    }
    let mut out: Vec<MethodStats> = by_name.into_values().collect();
    out.sort_by(|a, b| {
        b.self_ns
            .cmp(&a.self_ns)
            .then_with(|| a.method.cmp(&b.method))
    });
    Ok(out)
}
