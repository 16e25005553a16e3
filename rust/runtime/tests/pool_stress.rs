//! Many-thread mode under real threads (`docs/many-threads.md`): 64 long-lived traced threads
//! of skewed rates (a few big producers, many little ones) and waves of short-lived threads that
//! trace a little and exit, all in one pool; the control thread stops every thread (doorbell,
//! rung again each poll round), reads the pool, checks that every block decodes and belongs to
//! its thread's stream, and restarts. The first stop measures the latest continuous fragment.
//! `HUBBLE_POOL_CYCLES=N` sets the stop/flush/restart cycles (default 20).
#![cfg(not(loom))]

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use hubble_format::pool::{thread_streams, Geometry};
use hubble_format::ring::{decode, RingView};
use hubble_format::{Mode, Record};
use hubble_runtime::block::{self, ThreadBlock};
use hubble_runtime::pool::{self, Pool};

const MODE: Mode = Mode::Bits64;
const LONG: usize = 64;

struct Traced {
    block: ThreadBlock,
    tid: u32,
    alive: AtomicBool,
}

fn worker(
    p: &Pool,
    t: &Traced,
    clock: &AtomicU64,
    rate: u32,
    records: Option<u64>,
    stop: &AtomicBool,
) {
    let mut depth = 0u64;
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) && records.map_or(true, |r| n < r) {
        let now = clock.fetch_add(1, Ordering::Relaxed);
        let m = 0x1000_0000 | (u64::from(t.tid) << 8) | (depth << 3);
        if depth == 0 || (depth < 16 && now % 3 != 0) {
            pool::trace_entry(&t.block, p, t.tid, m, now);
            depth += 1;
        } else {
            pool::trace_exit(&t.block, p, t.tid, now);
            depth -= 1;
        }
        n += 1;
        // Little threads pause between records: the big/little imbalance.
        for _ in 0..rate {
            std::hint::spin_loop();
        }
        if rate > 200 && n % 64 == 0 {
            std::thread::yield_now();
        }
    }
    pool::thread_exit(&t.block, p);
    t.alive.store(false, Ordering::Release);
}

/// Stops every live traced thread; returns (block word `end`, published end) per thread.
fn stop_all(threads: &[Arc<Traced>]) -> Vec<(usize, usize)> {
    for t in threads {
        block::request_stop(&t.block);
    }
    let mut ends = Vec::new();
    for t in threads {
        loop {
            if let Some(e) = block::poll_stopped(&t.block) {
                ends.push((t.block.end.load(Ordering::Relaxed), e));
                break;
            }
            if !t.alive.load(Ordering::Acquire) {
                break; // exited: its block is sealed, nothing to stop
            }
            pool::ring_again(&t.block);
            std::thread::sleep(Duration::from_micros(20));
        }
    }
    ends
}

#[test]
fn sixty_four_skewed_threads_and_short_lived_ones_share_the_pool() {
    let ratio = run();
    println!(
        "pool stress: latest fragment {:.1}% of the pool",
        ratio * 100.0
    );
}

// The target. It FAILS today (7-10% measured): a little thread's block, sealed long
// after it was taken, is reused at the ticket counter's next pass, so its older records go
// while other threads' records of the same age stay (docs/many-threads.md, "What is left").
#[test]
#[ignore = "fails until sealed lagging blocks are reused a lap later (docs/many-threads.md)"]
fn the_latest_fragment_is_at_least_90_percent_of_the_pool() {
    let ratio = run();
    assert!(
        ratio >= 0.9,
        "latest fragment {:.1}% of the pool",
        ratio * 100.0
    );
}

/// Runs the workload; returns the first stop's latest fragment as a share of the pool's data.
fn run() -> f64 {
    let cycles: usize = std::env::var("HUBBLE_POOL_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let g = Geometry {
        blocks: 512,
        block_slots: 512,
    };
    let p = Arc::new(Pool::new(MODE, g));
    let clock = Arc::new(AtomicU64::new(1));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tid = 100u32;
    let mut spawn =
        |rate: u32, records: Option<u64>, handles: &mut Vec<_>, live: &mut Vec<Arc<Traced>>| {
            tid += 1;
            let t = Arc::new(Traced {
                block: ThreadBlock::default(),
                tid,
                alive: AtomicBool::new(true),
            });
            pool::start(&t.block, &p, 0);
            live.push(t.clone());
            let (p, clock, stop) = (p.clone(), clock.clone(), stop.clone());
            handles.push(std::thread::spawn(move || {
                worker(&p, &t, &clock, rate, records, &stop)
            }));
        };
    let mut handles = Vec::new();
    let mut live = Vec::new();
    for i in 0..LONG {
        // 4 big producers, 60 little ones 100-1000x slower.
        let rate = if i < 4 { 0 } else { 300 + 20 * i as u32 };
        spawn(rate, None, &mut handles, &mut live);
    }
    let data_bytes = g.blocks * g.data_slots() * 8;
    let mut first_ratio = None;
    let mut blocks_checked = 0usize;
    for cycle in 0..cycles {
        // Short-lived threads: start, trace a few hundred records, die.
        for _ in 0..8 {
            spawn(0, Some(300), &mut handles, &mut live);
        }
        std::thread::sleep(Duration::from_millis(if cycle == 0 { 400 } else { 20 }));
        let ends = stop_all(&live);
        let snap = pool::snapshot(&p, &ends);
        let streams = thread_streams(&snap, g, p.base() as u64).expect("the pool reads back");
        let mut oldest_complete = 0u64;
        let mut records: Vec<(u64, u32)> = Vec::new();
        for s in &streams {
            blocks_checked += s.blocks.len();
            let w = decode(&RingView::linear(&s.slots), MODE).expect("every stream decodes");
            for r in &w.records {
                if let Record::Entry { method, .. } = r {
                    assert_eq!(
                        (method >> 8) & 0xffff,
                        u64::from(s.tid),
                        "a block of thread {} holds thread {}'s records",
                        s.tid,
                        (method >> 8) & 0xffff
                    );
                }
                records.push((u64::from(r.ts()), s.tid));
            }
            // A stream that does not begin at the thread's first block lost older records:
            // the fragment cannot reach before its first one.
            if s.blocks[0].seq != 0 {
                if let Some(r) = w.records.first() {
                    oldest_complete = oldest_complete.max(u64::from(r.ts()));
                }
            }
        }
        if cycle == 0 {
            let fragment = records
                .iter()
                .filter(|(ts, _)| *ts >= oldest_complete)
                .count()
                * 8;
            let ratio = fragment as f64 / data_bytes as f64;
            println!(
                "pool stress: {} streams, {} records, latest fragment {:.1}% of the pool",
                streams.len(),
                records.len(),
                ratio * 100.0
            );
            first_ratio = Some(ratio);
        }
        // Restart every stopped thread where it stopped.
        let now = clock.load(Ordering::Relaxed);
        for t in &live {
            if let Some(e) = block::poll_stopped(&t.block) {
                pool::restart(&t.block, &p, e, now);
            }
        }
        live.retain(|t| t.alive.load(Ordering::Acquire));
    }
    stop.store(true, Ordering::Relaxed);
    for t in &live {
        pool::ring_again(&t.block);
    }
    for h in handles {
        h.join().unwrap();
    }
    assert!(blocks_checked > 0);
    first_ratio.expect("the first cycle measures")
}
