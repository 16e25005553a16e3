//! Many-thread mode against per-thread rings, BTrace's two metrics side by side
//! (`docs/many-threads.md`, "Metrics"): the skewed 64-thread workload of `tests/skewed` through
//! per-thread rings of equal total memory (today's mode: 64 rings of budget / 64) and through the
//! pool (many-thread mode: 16 KiB blocks, A = 64, 128 — the default —, 256, and N, the first
//! session's reuse-at-once rule). Each row runs the workload until three budgets' worth of records
//! were written, stops every thread and measures the latest continuous fragment and the memory
//! utilization, both as a share of the budget. Prints a Markdown table.
//!
//!   cargo bench -p hubble-runtime --bench many_threads
//!
//! `HUBBLE_BUDGET_MB` (default 64) sets the budget.

#[path = "../tests/skewed/mod.rs"]
mod skewed;

use std::time::{Duration, Instant};

use hubble_format::pool::BLOCK_BYTES;
use hubble_runtime::metrics::Metrics;
use hubble_runtime::props::ACTIVE_BLOCKS;
use skewed::{geometry, measure_pool, measure_rings, Shape, BUSY, CHURN, SKEWED_64};

const PASSES: u64 = 3;
const TIMEOUT: Duration = Duration::from_secs(1200);

fn row(workload: &str, mode: &str, m: Metrics, took: Duration) {
    println!(
        "| {workload} | {mode} | {:.1} % | {:.1} % | {:.0} s |",
        m.fragment_ratio() * 100.0,
        m.utilization() * 100.0,
        took.as_secs_f64()
    );
}

fn main() {
    let mb: usize = std::env::var("HUBBLE_BUDGET_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let budget = mb << 20;
    let blocks = budget / BLOCK_BYTES;
    println!(
        "budget {mb} MiB; pool: {blocks} blocks of {} KiB; rings: 64 × {} KiB",
        BLOCK_BYTES >> 10,
        (budget / 64) >> 10
    );
    println!();
    println!("| workload | mode | latest continuous fragment | memory utilization | run |");
    println!("|---|---|---|---|---|");
    let runs: [(&str, Shape); 3] = [
        ("64 threads + 64 short-lived per pass", SKEWED_64),
        ("64 threads + 128 short-lived per pass", BUSY),
        ("64 threads + 1 024 short-lived per pass", CHURN),
    ];
    for (name, shape) in runs {
        let t = Instant::now();
        let m = measure_rings(shape, budget, PASSES, TIMEOUT);
        row(name, "per-thread rings, 64 × budget/64", m, t.elapsed());
        let mut actives = vec![ACTIVE_BLOCKS];
        if shape.waves_per_pass == SKEWED_64.waves_per_pass {
            actives.extend([64, 256, blocks]);
        }
        for a in actives {
            let t = Instant::now();
            let m = measure_pool(shape, geometry(budget, BLOCK_BYTES, a), PASSES, TIMEOUT);
            let mode = if a == blocks {
                "pool, A = N (reuse at once)".to_string()
            } else if a == ACTIVE_BLOCKS {
                format!("pool, A = {a} (default)")
            } else {
                format!("pool, A = {a}")
            };
            row(name, &mode, m, t.elapsed());
        }
    }
}
