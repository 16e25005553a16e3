//! What the reference computations of `references.rs` and `threads.rs` share.

use std::collections::BTreeMap;

use hubble_analysis::top::MethodStats;

/// A reference `top` from rows of (name, calls, self ns, inclusive ns): added up by name, ranked
/// by self time (descending) then name, as `top` documents.
pub fn top_by_name(rows: impl IntoIterator<Item = (String, u64, u64, u64)>) -> Vec<MethodStats> {
    let mut by_name: BTreeMap<String, MethodStats> = BTreeMap::new();
    for (name, calls, self_ns, inclusive_ns) in rows {
        let e = by_name.entry(name.clone()).or_insert(MethodStats {
            method: name,
            calls: 0,
            self_ns: 0,
            inclusive_ns: 0,
        });
        e.calls += calls;
        e.self_ns += self_ns;
        e.inclusive_ns += inclusive_ns;
    }
    let mut out: Vec<MethodStats> = by_name.into_values().collect();
    out.sort_by_key(|m| (std::cmp::Reverse(m.self_ns), m.method.clone()));
    out
}
