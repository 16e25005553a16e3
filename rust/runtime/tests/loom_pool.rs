//! loom models of many-thread mode (`docs/many-threads.md`; run with `RUSTFLAGS="--cfg loom"
//! cargo test --release -p hubble-runtime --test loom_pool`):
//! * block hand-off: threads racing for blocks never share one, and each thread's newest
//!   written record is in its stream, with sealed blocks claimable only N − A tickets after
//!   their seal (A = N / 2 here); with the claim's compare-exchange replaced by a plain store
//!   the model finds two owners (`#[should_panic]`: a foreign record, a stream that no
//!   longer decodes or a writer left without a stream, all reported as "shared block");
//! * the all-threads stop: nothing is written after a thread's end position is published, and
//!   a stop requested while the thread takes a block is still answered; without the control
//!   thread's second doorbell the model finds the stop lost.
#![cfg(loom)]

use hubble_format::pool::{thread_streams, Geometry};
use hubble_format::ring::{decode, RingView};
use hubble_format::{Mode, Record};
use hubble_runtime::block::{self, ThreadBlock};
use hubble_runtime::pool::{self, Claim, Pool};
use loom::sync::Arc;

const MODE: Mode = Mode::Bits32;
/// Candidates per block take in the models (the pool's 32 would multiply the interleavings
/// past loom's budget; 3 covers an owned candidate, a delayed one, and a claim).
const TRIES: usize = 3;

fn method(tid: u32, i: u64) -> u64 {
    0x1000 * u64::from(tid) + 8 * i + 8
}

/// Threads `1..=threads` each write `records` entries into a pool of `blocks` blocks of two data
/// slots; returns (snapshot, per thread: its block word `end`, cursor, last written record).
fn hand_off(threads: u32, records: u64, blocks: usize, claim: Claim) {
    // A = N / 2: a sealed block waits N / 2 tickets, so the model also runs takers that skip a
    // sealed block for its bound and then drop (the ticket check sits between the load and the
    // compare-exchange that loom interleaves).
    let g = Geometry {
        blocks,
        block_slots: 7,
        active: blocks / 2,
    };
    let shared = Arc::new((
        Pool::new(MODE, g).unwrap().with_tries(TRIES),
        (0..threads)
            .map(|_| ThreadBlock::default())
            .collect::<Vec<_>>(),
    ));
    for (i, b) in shared.1.iter().enumerate() {
        let _ = i;
        pool::start(b, &shared.0, 0);
    }
    let handles: Vec<_> = (1..=threads)
        .map(|tid| {
            let s = shared.clone();
            loom::thread::spawn(move || {
                let b = &s.1[tid as usize - 1];
                // The newest record, if the last trace point wrote it: it is in the block the
                // thread holds, which the pool must never give to anyone else.
                let mut last = None;
                for i in 0..records {
                    let m = method(tid, i);
                    last = pool::trace_entry_with(b, &s.0, tid, m, i, claim).then_some(m);
                }
                last
            })
        })
        .collect();
    let lasts: Vec<Option<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let (p, bs) = &*shared;
    let ends: Vec<(usize, usize)> = bs
        .iter()
        .map(|b| {
            (
                b.end.load(loom::sync::atomic::Ordering::Relaxed),
                b.cursor.load(loom::sync::atomic::Ordering::Relaxed),
            )
        })
        .collect();
    let snap = pool::snapshot(p, &ends);
    let streams = thread_streams(&snap, g, p.base() as u64).expect("the pool reads back");
    for s in &streams {
        let w = decode(&RingView::linear(&s.slots), MODE).unwrap_or_else(|e| {
            panic!(
                "shared block: thread {}'s stream does not decode: {e}",
                s.tid
            )
        });
        for r in &w.records {
            // A block given to two owners shows another thread's method under this tid.
            match r {
                Record::Entry { method, .. } => assert_eq!(
                    method / 0x1000,
                    u64::from(s.tid),
                    "shared block: thread {} wrote into a block of thread {}",
                    method / 0x1000,
                    s.tid
                ),
                other => panic!("unexpected record {other:?}"),
            }
        }
    }
    for (i, last) in lasts.iter().enumerate() {
        let tid = i as u32 + 1;
        if let Some(m) = last {
            let newest = streams
                .iter()
                .filter(|s| s.tid == tid)
                .last()
                .unwrap_or_else(|| panic!("shared block: thread {tid} wrote but has no stream"));
            let w = decode(&RingView::linear(&newest.slots), MODE).unwrap_or_else(|e| {
                panic!("shared block: thread {tid}'s newest stream does not decode: {e}")
            });
            assert_eq!(
                w.records.last(),
                Some(&Record::Entry {
                    method: *m,
                    ts: (*m % 0x1000 / 8 - 1) as u32
                }),
                "thread {tid}'s newest record is lost"
            );
        }
    }
}

#[test]
fn two_threads_race_for_blocks() {
    loom::model(|| hand_off(2, 3, 2, Claim::Cas));
}

#[test]
fn three_threads_race_for_blocks() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.check(|| hand_off(3, 3, 4, Claim::Cas));
}

#[test]
#[should_panic(expected = "shared block")]
fn without_the_atomic_claim_two_threads_share_a_block() {
    loom::model(|| hand_off(2, 3, 2, Claim::LoadThenStore));
}

/// One traced thread crosses a block end (its take stores a real `limit`) while the control
/// thread requests a stop. Once the take is done, the control thread rings again (unless
/// `re_ring` is off) and lets the thread run one more trace point: that one must answer. And
/// the pool at the published end position equals the pool after the thread finished.
fn stop_during_take(re_ring: bool) {
    use loom::sync::atomic::{AtomicBool, Ordering};
    let g = Geometry {
        blocks: 2,
        block_slots: 7,
        active: 1,
    };
    let shared = Arc::new((
        Pool::new(MODE, g).unwrap().with_tries(TRIES),
        ThreadBlock::default(),
        AtomicBool::new(false),
        AtomicBool::new(false),
    ));
    pool::start(&shared.1, &shared.0, 0);
    // Two data slots a block: the thread's second record below ends its first block.
    assert!(pool::trace_entry(&shared.1, &shared.0, 1, method(1, 0), 0));
    let s = shared.clone();
    let traced = loom::thread::spawn(move || {
        for i in 1..3 {
            pool::trace_entry(&s.1, &s.0, 1, method(1, i), i);
        }
        s.2.store(true, Ordering::Release);
        while !s.3.load(Ordering::Acquire) {
            loom::thread::yield_now();
        }
        pool::trace_entry(&s.1, &s.0, 1, method(1, 3), 3)
    });
    let (p, b, took, rung) = &*shared;
    block::request_stop(b);
    while !took.load(Ordering::Acquire) {
        loom::thread::yield_now();
    }
    if re_ring {
        pool::ring_again(b);
    }
    rung.store(true, Ordering::Release);
    let last_written = traced.join().unwrap();
    let end = block::poll_stopped(b).expect("the stop was answered");
    assert!(!last_written, "the trace point after the doorbell wrote");
    assert!(end > 1);
    // The end position is the thread's cursor at its stop: everything it wrote is below it and
    // the trace point that answered wrote nothing.
    let streams = thread_streams(
        &pool::snapshot(p, &[(b.end.load(Ordering::Relaxed), end)]),
        g,
        p.base() as u64,
    )
    .unwrap();
    let last = streams.last().expect("a stream");
    let w = decode(&RingView::linear(&last.slots), MODE).unwrap();
    assert!(!w.records.is_empty());
    assert!(
        !w.records.contains(&Record::Entry {
            method: method(1, 3),
            ts: 3
        }),
        "a record was written after the end position"
    );
}

#[test]
fn a_stop_during_a_block_take_is_answered_and_nothing_is_written_after_it() {
    loom::model(|| stop_during_take(true));
}

#[test]
#[should_panic(expected = "the stop was answered")]
fn without_the_second_doorbell_the_stop_is_lost() {
    loom::model(|| stop_during_take(false));
}
