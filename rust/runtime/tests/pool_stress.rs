//! Many-thread mode under real threads (`docs/many-threads.md`): the skewed workload of
//! `tests/skewed` (64 long-lived threads, 4 big and 60 little, waves of short-lived ones), all
//! in one pool.
//! * `stop_flush_restart_cycles`: the control thread stops every thread (doorbell, rung again
//!   each poll round), reads the pool, checks that every block decodes and belongs to its
//!   thread's stream, and restarts; `HUBBLE_POOL_CYCLES=N` sets the cycles (default 20).
//! * `the_latest_fragment_is_at_least_90_percent_of_the_budget`: the 90 % target, on the
//!   default configuration (`debug.hubble.budget_mb` 64 → 4 096 blocks of 16 KiB, A = 128),
//!   64 short-lived threads per budget's worth of records, measured once the workload has
//!   written three budgets' worth of records.
//! * `with_reuse_at_once_the_fragment_target_fails`: the same with A = N (a sealed block
//!   reusable at once, the first session's rule): must fail, so the target above can fail.
#![cfg(not(loom))]

mod skewed;

use std::sync::Mutex;
use std::time::Duration;

use hubble_format::pool::{Geometry, BLOCK_BYTES};
use hubble_format::ring::{decode, RingView};
use hubble_format::Record;
use hubble_runtime::pool::Pool;
use hubble_runtime::props::{ACTIVE_BLOCKS, DEFAULT_BUDGET_MB};
use skewed::{measure_pool, Target, Workload, CHURN, MODE, SKEWED_64};

#[test]
fn stop_flush_restart_cycles() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let cycles: usize = std::env::var("HUBBLE_POOL_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    // Small blocks, small pool: many block ends and many overwrites per cycle.
    let g = Geometry {
        blocks: 512,
        block_slots: 512,
        active: 64,
    };
    let mut w = Workload::start(CHURN, Target::Pool(Pool::new(MODE, g).unwrap()), 2 << 20);
    let mut blocks_checked = 0;
    for _ in 0..cycles {
        let target = w.records() + 200_000;
        w.run_until(target, Duration::from_secs(120));
        let ends = w.stop_all();
        for s in w.pool_streams(&ends) {
            blocks_checked += s.blocks.len();
            let records = decode(&RingView::linear(&s.slots), MODE).expect("every stream decodes");
            for r in &records.records {
                if let Record::Entry { method, .. } = r {
                    assert_eq!(
                        (method >> 8) & 0xffff,
                        u64::from(s.tid),
                        "a block of thread {} holds thread {}'s records",
                        s.tid,
                        (method >> 8) & 0xffff
                    );
                }
            }
        }
        w.restart(&ends);
    }
    w.finish();
    assert!(blocks_checked > 0);
}

/// The tests of this binary run one at a time: the fragment depends on how the threads are
/// scheduled, and three 64-thread workloads on the same cores measure the harness, not the pool.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn fragment_target(active: usize) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let budget = DEFAULT_BUDGET_MB << 20;
    let g = skewed::geometry(budget, BLOCK_BYTES, active);
    let m = measure_pool(SKEWED_64, g, 3, Duration::from_secs(600));
    println!(
        "pool {} MiB, A = {active}: latest fragment {:.1} %, utilization {:.1} % of the budget",
        budget >> 20,
        m.fragment_ratio() * 100.0,
        m.utilization() * 100.0
    );
    assert!(
        m.fragment_ratio() >= 0.9,
        "latest fragment {:.1} % of the budget (utilization {:.1} %)",
        m.fragment_ratio() * 100.0,
        m.utilization() * 100.0
    );
}

#[test]
fn the_latest_fragment_is_at_least_90_percent_of_the_budget() {
    fragment_target(ACTIVE_BLOCKS);
}

#[test]
#[should_panic(expected = "latest fragment")]
fn with_reuse_at_once_the_fragment_target_fails() {
    fragment_target((DEFAULT_BUDGET_MB << 20) / BLOCK_BYTES);
}
