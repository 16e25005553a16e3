//! The skewed many-thread workload (BTrace's big/little imbalance), shared by
//! `tests/pool_stress.rs` and `benches/many_threads.rs`: `long` long-lived threads (`big` of
//! them write as fast as they can, the others spin 300–1 560 iterations per record and yield
//! every 64 records) and waves of short-lived threads that write a few hundred records and
//! exit. Every record's timestamp is one global counter, so timestamps are unique and ordered
//! across threads; each thread keeps the timestamp of its newest record (ground truth for the
//! metrics: a trace cannot see a thread it lost entirely).
//!
//! Two targets for the same threads: the pool (many-thread mode) and per-thread rings of equal
//! total memory (today's mode: one ring of budget / `long` per long-lived thread; short-lived
//! threads run the same loop untraced, since a ring per short-lived thread would exceed the
//! budget — a choice that favours the rings, whose metric then ignores them).
#![allow(dead_code)] // each includer uses part of it

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hubble_format::pool::{thread_streams, Geometry, ThreadStream};
use hubble_format::ring::{decode, RingView};
use hubble_format::{Mode, Record};
use hubble_runtime::block::{self, Slots, ThreadBlock};
use hubble_runtime::metrics::{self, Kept, Metrics, Run};
use hubble_runtime::pool::{self, Pool};

pub const MODE: Mode = Mode::Bits64;

/// The workload's shape.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// Long-lived threads.
    pub long: usize,
    /// How many of them are big (no pause between records).
    pub big: usize,
    /// Short-lived threads per wave.
    pub wave: usize,
    /// Records each short-lived thread writes.
    pub short_records: u64,
    /// Waves per pass: a wave starts each time the threads have written 1/`waves_per_pass` of
    /// the budget's capacity in records (a record count, not a wall-clock period, so a slower
    /// build or machine runs the same workload).
    pub waves_per_pass: u64,
}

/// The workload as measured against per-thread rings: 64 threads (4 big, 60 little), 8
/// short-lived threads of 300 records 8 times per pass over the budget: 64 thread starts per
/// budget's worth of records. Each takes a block and fills 15 % of it, so the churn is the
/// utilization's main term. 64 per pass is the realistic end: 64 MiB hold 8 M records, seconds
/// of a busy app, and an app starts thousands of threads in its life (minutes to hours), i.e. a
/// few per second.
pub const SKEWED_64: Shape = Shape {
    long: 64,
    big: 4,
    wave: 8,
    short_records: 300,
    waves_per_pass: 8,
};

/// Twice that churn (128 starts per pass).
pub const BUSY: Shape = Shape {
    waves_per_pass: 16,
    ..SKEWED_64
};

/// Sixteen times that churn (1 024 starts per pass): the stop/restart cycles.
pub const CHURN: Shape = Shape {
    waves_per_pass: 128,
    ..SKEWED_64
};

pub enum Target {
    Pool(Pool),
    /// One ring per long-lived thread.
    Rings(Vec<Box<[AtomicU64]>>),
}

pub struct Traced {
    pub block: ThreadBlock,
    pub tid: u32,
    /// Index of its ring (ring target; None: untraced).
    ring: Option<usize>,
    pub alive: AtomicBool,
    /// Newest record's timestamp + 1 (0: none), stored after each record it wrote or lost.
    newest: AtomicU64,
    /// Records written (ring target: to know whether its ring wrapped).
    written: AtomicU64,
}

pub struct Workload {
    pub shape: Shape,
    pub target: Arc<Target>,
    clock: Arc<AtomicU64>,
    quit: Arc<AtomicBool>,
    pub threads: Vec<Arc<Traced>>,
    handles: Vec<std::thread::JoinHandle<()>>,
    next_tid: u32,
    pub budget_bytes: u64,
}

fn slots_of(ring: &[AtomicU64]) -> Slots<'_> {
    Slots {
        base: ring.as_ptr() as usize,
        slots: ring,
    }
}

fn worker(
    target: &Target,
    t: &Traced,
    clock: &AtomicU64,
    rate: u32,
    records: Option<u64>,
    quit: &AtomicBool,
) {
    let mut depth = 0u64;
    let mut n = 0u64;
    let ring = match (target, t.ring) {
        (Target::Rings(rings), Some(i)) => Some(slots_of(&rings[i])),
        _ => None,
    };
    let traced = matches!(target, Target::Pool(_)) || ring.is_some();
    while !quit.load(Ordering::Relaxed) && records.map_or(true, |r| n < r) {
        let now = clock.fetch_add(1, Ordering::Relaxed);
        let m = 0x1000_0000 | (u64::from(t.tid) << 8) | (depth << 3);
        let entry = depth == 0 || (depth < 16 && now % 3 != 0);
        let written = match (target, &ring) {
            (Target::Pool(p), _) if entry => pool::trace_entry(&t.block, p, t.tid, m, now),
            (Target::Pool(p), _) => pool::trace_exit(&t.block, p, t.tid, now),
            (Target::Rings(_), Some(r)) if entry => {
                block::trace_entry(&t.block, r, MODE, m, now as u32)
            }
            (Target::Rings(_), Some(r)) => block::trace_exit(&t.block, r, now as u32),
            (Target::Rings(_), None) => false,
        };
        if entry {
            depth += 1;
        } else {
            depth -= 1;
        }
        // A record not written while tracing is on (cursor != 0) is lost (a pool drop); one
        // not written because the thread answered a stop is not.
        if traced && (written || t.block.cursor.load(Ordering::Relaxed) != 0) {
            t.newest.store(now + 1, Ordering::Relaxed);
        }
        if written {
            t.written.fetch_add(1, Ordering::Relaxed);
        }
        n += 1;
        for _ in 0..rate {
            std::hint::spin_loop();
        }
        if rate > 200 && n % 64 == 0 {
            std::thread::yield_now();
        }
    }
    if let Target::Pool(p) = target {
        pool::thread_exit(&t.block, p);
    }
    // Release: the control thread that sees the thread gone sees its newest timestamp.
    t.alive.store(false, Ordering::Release);
}

impl Workload {
    /// Starts the long-lived threads.
    pub fn start(shape: Shape, target: Target, budget_bytes: u64) -> Workload {
        let mut w = Workload {
            shape,
            target: Arc::new(target),
            clock: Arc::new(AtomicU64::new(1)),
            quit: Arc::new(AtomicBool::new(false)),
            threads: Vec::new(),
            handles: Vec::new(),
            next_tid: 100,
            budget_bytes,
        };
        for i in 0..shape.long {
            // 4 big producers, 60 little ones 100-1000x slower.
            let rate = if i < shape.big {
                0
            } else {
                300 + 20 * i as u32
            };
            w.spawn(rate, None, Some(i));
        }
        w
    }

    fn spawn(&mut self, rate: u32, records: Option<u64>, ring: Option<usize>) {
        self.next_tid += 1;
        let t = Arc::new(Traced {
            block: ThreadBlock::default(),
            tid: self.next_tid,
            ring: ring.filter(|_| matches!(*self.target, Target::Rings(_))),
            alive: AtomicBool::new(true),
            newest: AtomicU64::new(0),
            written: AtomicU64::new(0),
        });
        match &*self.target {
            Target::Pool(p) => pool::start(&t.block, p, 0),
            Target::Rings(rings) => {
                if let Some(i) = t.ring {
                    let ts = self.clock.fetch_add(1, Ordering::Relaxed);
                    block::start(&t.block, slots_of(&rings[i]), MODE, 0, ts as u32);
                }
            }
        }
        self.threads.push(t.clone());
        let (target, clock, quit) = (self.target.clone(), self.clock.clone(), self.quit.clone());
        self.handles.push(std::thread::spawn(move || {
            worker(&target, &t, &clock, rate, records, &quit)
        }));
    }

    /// Records so far (the clock).
    pub fn records(&self) -> u64 {
        self.clock.load(Ordering::Relaxed)
    }

    /// Runs waves of short-lived threads until `records` records were written in all (or
    /// `timeout`: panics, the machine is too slow for the configuration).
    pub fn run_until(&mut self, records: u64, timeout: Duration) {
        let t0 = Instant::now();
        let every = (self.budget_bytes / 8 / self.shape.waves_per_pass).max(1);
        let mut next = self.records();
        while self.records() < records {
            assert!(
                t0.elapsed() < timeout,
                "{} of {records} records after {timeout:?}",
                self.records()
            );
            if self.records() >= next {
                for _ in 0..self.shape.wave {
                    self.spawn(0, Some(self.shape.short_records), None);
                }
                next += every;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Stops every live traced thread (doorbell, rung again each poll round in pool mode);
    /// returns (thread, block word `end`, published end) per stopped thread.
    pub fn stop_all(&self) -> Vec<(Arc<Traced>, usize, usize)> {
        let traced: Vec<_> = self
            .threads
            .iter()
            .filter(|t| {
                t.alive.load(Ordering::Acquire) && t.block.cursor.load(Ordering::Relaxed) != 0
            })
            .cloned()
            .collect();
        for t in &traced {
            block::request_stop(&t.block);
        }
        let mut ends = Vec::new();
        for t in traced {
            loop {
                if let Some(e) = block::poll_stopped(&t.block) {
                    ends.push((t.clone(), t.block.end.load(Ordering::Relaxed), e));
                    break;
                }
                if !t.alive.load(Ordering::Acquire) {
                    break; // exited: its block is sealed, nothing to stop
                }
                if matches!(*self.target, Target::Pool(_)) {
                    pool::ring_again(&t.block);
                }
                std::thread::sleep(Duration::from_micros(20));
            }
        }
        ends
    }

    /// The pool's streams after `stop_all`.
    pub fn pool_streams(&self, ends: &[(Arc<Traced>, usize, usize)]) -> Vec<ThreadStream> {
        let Target::Pool(p) = &*self.target else {
            panic!("not a pool")
        };
        let ends: Vec<(usize, usize)> = ends.iter().map(|(_, b, e)| (*b, *e)).collect();
        thread_streams(&pool::snapshot(p, &ends), p.geometry(), p.base() as u64)
            .expect("the pool reads back")
    }

    /// Both metrics after `stop_all`, before any restart (a restart skips a `seq`).
    pub fn measure(&self, ends: &[(Arc<Traced>, usize, usize)]) -> Metrics {
        assert!(
            self.records() < 1 << 32,
            "timestamps are 32-bit in the slots"
        );
        let mut kept: std::collections::BTreeMap<u32, Kept> = self
            .threads
            .iter()
            .filter(|t| matches!(*self.target, Target::Pool(_)) || t.ring.is_some())
            .map(|t| {
                let newest = t.newest.load(Ordering::Relaxed);
                (
                    t.tid,
                    Kept {
                        runs: Vec::new(),
                        newest_written: newest.checked_sub(1),
                    },
                )
            })
            .collect();
        let records = |slots: &[u64], valid: Option<RingView<'_>>| -> Vec<(u64, u64)> {
            let view = valid.unwrap_or_else(|| RingView::linear(slots));
            decode(&view, MODE)
                .expect("every stream decodes")
                .records
                .iter()
                .filter(|r| !matches!(r, Record::Start { .. }))
                .map(|r| (u64::from(r.ts()), 8))
                .collect()
        };
        match &*self.target {
            Target::Pool(_) => {
                for s in self.pool_streams(ends) {
                    kept.get_mut(&s.tid)
                        .expect("a traced thread")
                        .runs
                        .push(Run {
                            from_first: s.blocks[0].seq == 0,
                            records: records(&s.slots, None),
                        });
                }
            }
            Target::Rings(rings) => {
                for (t, _, end) in ends {
                    let ring = &rings[t.ring.expect("only ring threads are stopped")];
                    let base = ring.as_ptr() as usize;
                    let copy: Vec<u64> = ring.iter().map(|s| s.load(Ordering::Relaxed)).collect();
                    // Slots 0 .. len - 2 hold the start record and len - 2 one-slot records
                    // before the first wrap (64-bit mode leaves the last slot to a pad).
                    let wrapped = t.written.load(Ordering::Relaxed) > copy.len() as u64 - 2;
                    let pos = (end - base) as u64;
                    let view = RingView::new(&copy, pos, (!wrapped).then_some(pos)).unwrap();
                    kept.get_mut(&t.tid).unwrap().runs.push(Run {
                        from_first: !wrapped,
                        records: records(&copy, Some(view)),
                    });
                }
            }
        }
        if std::env::var("HUBBLE_DIAG").is_ok() {
            let mut v: Vec<(u64, String)> = Vec::new();
            for (tid, k) in &kept {
                for (i, r) in k.runs.iter().enumerate() {
                    if let Some(f) = r.records.first() {
                        if i > 0 || !r.from_first {
                            v.push((
                                f.0,
                                format!(
                                    "tid {tid} run {i}/{} from_first {} len {}",
                                    k.runs.len(),
                                    r.from_first,
                                    r.records.len()
                                ),
                            ));
                        }
                    }
                }
                let nk = k
                    .runs
                    .iter()
                    .flat_map(|r| r.records.last())
                    .map(|r| r.0)
                    .max();
                if let Some(w) = k.newest_written {
                    if nk.map_or(true, |n| n < w) {
                        v.push((
                            w + 1,
                            format!("tid {tid} tail: newest kept {nk:?} written {w}"),
                        ));
                    }
                }
            }
            v.sort();
            let from = v.last().map_or(0, |x| x.0);
            let mut pre = [0u64; 3];
            for (tid, k) in &kept {
                let class = if *tid <= 100 + self.shape.big as u32 {
                    0
                } else if *tid <= 100 + self.shape.long as u32 {
                    1
                } else {
                    2
                };
                pre[class] += k
                    .runs
                    .iter()
                    .flat_map(|r| &r.records)
                    .filter(|r| r.0 < from)
                    .count() as u64;
            }
            eprintln!(
                "records before T: big {} little {} short {} (budget {} slots)",
                pre[0],
                pre[1],
                pre[2],
                self.budget_bytes / 8
            );
            eprintln!("clock {}", self.records());
            if let Target::Pool(p) = &*self.target {
                let st = p.stats();
                eprintln!(
                    "takes {:?} skips {:?} drops {:?}",
                    st.takes, st.skips, st.drops
                );
            }
            for x in v.iter().rev().take(12) {
                eprintln!("{x:?}");
            }
        }
        let kept: Vec<Kept> = kept.into_values().collect();
        metrics::measure(&kept, self.budget_bytes)
    }

    /// Pool mode: restarts every stopped thread where it stopped.
    pub fn restart(&self, ends: &[(Arc<Traced>, usize, usize)]) {
        let Target::Pool(p) = &*self.target else {
            panic!("not a pool")
        };
        let now = self.records();
        for (t, _, e) in ends {
            pool::restart(&t.block, p, *e, now);
        }
    }

    /// Lets every thread finish.
    pub fn finish(mut self) {
        self.quit.store(true, Ordering::Relaxed);
        for t in &self.threads {
            pool::ring_again(&t.block);
        }
        for h in self.handles.drain(..) {
            h.join().unwrap();
        }
    }
}

/// Pool geometry of `budget` bytes in blocks of `block_bytes` with A = `active`.
pub fn geometry(budget: usize, block_bytes: usize, active: usize) -> Geometry {
    Geometry {
        blocks: budget / block_bytes,
        block_slots: block_bytes / 8,
        active,
    }
}

/// Runs the workload on a pool until it wrote `passes` × the pool's capacity in records,
/// stops every thread and measures.
pub fn measure_pool(shape: Shape, g: Geometry, passes: u64, timeout: Duration) -> Metrics {
    let budget = (g.blocks * g.block_slots * 8) as u64;
    let mut w = Workload::start(shape, Target::Pool(Pool::new(MODE, g).unwrap()), budget);
    w.run_until(passes * budget / 8, timeout);
    let ends = w.stop_all();
    let m = w.measure(&ends);
    w.finish();
    m
}

/// The same on one ring of budget / `long` per long-lived thread.
pub fn measure_rings(shape: Shape, budget: usize, passes: u64, timeout: Duration) -> Metrics {
    let ring_slots = budget / 8 / shape.long;
    let rings = (0..shape.long)
        .map(|_| (0..ring_slots).map(|_| AtomicU64::new(0)).collect())
        .collect();
    let mut w = Workload::start(
        shape,
        Target::Rings(rings),
        (ring_slots * shape.long * 8) as u64,
    );
    w.run_until(passes * budget as u64 / 8, timeout);
    let ends = w.stop_all();
    let m = w.measure(&ends);
    w.finish();
    m
}
