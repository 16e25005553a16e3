//! The runtime's pool model (`hubble_runtime::pool`: the traced side on Rust atomics, which the
//! loom models check for races) against the reference writer (`hubble_format::pool::
//! PoolWriter`) on the same single-threaded traffic: after every trace point and every thread
//! exit, every pool slot (both headers, every data slot) and every thread's cursor, limit and
//! end must be the writer's. The emitted A64 code, nterp and the C++ trace point are held to the
//! same writer (proving/hotpath-emu/tests/pool_a64.rs, interp-replay/tests/{pool,nterp_pool}.rs).
#![cfg(not(loom))]

use std::sync::atomic::Ordering;

use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::pool_traffic::{Op, Traffic, ROOMY, SATURATED};
use hubble_format::Mode;
use hubble_runtime::block::ThreadBlock;
use hubble_runtime::pool::{self, Pool};

fn tid(i: usize) -> u32 {
    100 + i as u32
}

fn check(p: &Pool, w: &PoolWriter, blocks: &[Option<ThreadBlock>], step: usize) {
    let got = p.copy();
    if let Some(k) = (0..got.len()).find(|&k| got[k] != w.slots()[k]) {
        panic!(
            "step {step}: pool slot {k} is {:#x}, the reference writer's {:#x}",
            got[k],
            w.slots()[k]
        );
    }
    for (i, b) in blocks.iter().enumerate() {
        let (Some(b), Some(words)) = (b, w.words(tid(i))) else {
            continue;
        };
        let mine = (
            b.cursor.load(Ordering::Relaxed) as u64,
            b.limit.load(Ordering::Relaxed) as u64,
            b.end.load(Ordering::Relaxed) as u64,
        );
        assert_eq!(
            mine,
            (words.cursor, words.limit, words.end),
            "step {step}: thread {i}'s cursor, limit, end"
        );
    }
}

/// Skewed traffic of `threads` threads; some exit and are replaced by new ones.
fn run(mode: Mode, g: Geometry, threads: usize, steps: usize, seed: u64) -> (Pool, PoolWriter) {
    let p = Pool::new(mode, g).unwrap();
    let mut w = PoolWriter::new(mode, g, p.base() as u64);
    let mut blocks: Vec<Option<ThreadBlock>> = Vec::new();
    for i in 0..threads {
        let b = ThreadBlock::default();
        pool::start(&b, &p, 0);
        w.start_thread(tid(i));
        blocks.push(Some(b));
    }
    let traffic = Traffic::new(threads, seed).with_replacements();
    let traffic = if mode == Mode::Bits64 {
        traffic
    } else {
        traffic.narrow_pointers()
    };
    for (step, s) in traffic.take(steps).enumerate() {
        let (i, counter) = (s.thread, s.counter);
        let b = blocks[i].as_ref().unwrap();
        match s.op {
            Op::Replace => {
                // The thread exits (its block sealed); a new one takes its place.
                pool::thread_exit(b, &p);
                w.thread_exit(tid(i));
                let b = ThreadBlock::default();
                pool::start(&b, &p, 0);
                w.start_thread(tid(i));
                blocks[i] = Some(b);
            }
            Op::Exit => {
                let mine = pool::trace_exit(b, &p, tid(i), counter);
                assert_eq!(mine, w.exit(tid(i), counter), "step {step}: written?");
            }
            Op::Entry(m) | Op::EntryNarrow(m) => {
                let mine = pool::trace_entry(b, &p, tid(i), m, counter);
                assert_eq!(
                    mine,
                    w.entry(tid(i), m, counter).unwrap(),
                    "step {step}: written?"
                );
            }
        }
        check(&p, &w, &blocks, step);
    }
    (p, w)
}

#[test]
fn the_model_writes_the_pool_as_the_reference_writer() {
    let g = ROOMY;
    for mode in [Mode::Bits64, Mode::Bits32] {
        let (p, w) = run(mode, g, 10, 4000, 0x4855_4242);
        assert_eq!(w.dropped, 0);
        assert!(
            pool::head(&p) > 8 * g.blocks as u64,
            "reuse past the bound ran"
        );
    }
}

#[test]
fn a_saturated_pool_drops_in_the_model_as_in_the_reference_writer() {
    let g = SATURATED;
    let (p, w) = run(Mode::Bits64, g, 12, 3000, 0xdead_beef);
    assert!(w.dropped > 10, "only {} drops", w.dropped);
    // The model's own count (what the stress test and the bench report) agrees.
    assert_eq!(p.stats().drops.load(Ordering::Relaxed), w.dropped);
}

// ---------------------------------------------------------------------------------------------
// The control side's words, which the reference writer does not model.

use hubble_format::pool::{BLOCK_HEADER_SLOTS, H_CLOSE, H_STATE, OWNED, POOL_HEADER_SLOTS, SEALED};
use hubble_format::slot;
use hubble_runtime::block::{self, SLOT};

const SMALL: Geometry = Geometry {
    blocks: 8,
    block_slots: 9, // 4 data slots; limit = end - 8 in 64-bit mode
    active: 4,
};

/// `start` gives the thread the tagged pool address (bit 0: the pool path, which the emitted
/// code and nterp test) and no block.
#[test]
fn start_tags_begin_and_gives_no_block() {
    let p = Pool::new(Mode::Bits64, SMALL).unwrap();
    let b = ThreadBlock::default();
    pool::start(&b, &p, 5);
    assert_eq!(b.begin.load(Ordering::Relaxed), p.base() | 1);
    assert_eq!(b.cursor.load(Ordering::Relaxed) as u64, SEALED);
    assert_eq!(
        (
            b.limit.load(Ordering::Relaxed),
            b.end.load(Ordering::Relaxed)
        ),
        (0, 5)
    );
}

/// The second doorbell rings only while a stop is requested and unanswered.
#[test]
fn the_doorbell_rings_again_only_for_a_pending_stop() {
    let b = ThreadBlock::default();
    b.limit.store(0x1000, Ordering::Relaxed);
    pool::ring_again(&b);
    assert_eq!(b.limit.load(Ordering::Relaxed), 0x1000, "no stop requested");
    block::request_stop(&b);
    b.limit.store(0x1000, Ordering::Relaxed); // a block take's plain store, after the doorbell
    pool::ring_again(&b);
    assert_eq!(b.limit.load(Ordering::Relaxed), 0, "rung again");
    b.stop.store(0x2000, Ordering::Relaxed); // answered: the end published
    b.limit.store(0x1000, Ordering::Relaxed);
    pool::ring_again(&b);
    assert_eq!(
        b.limit.load(Ordering::Relaxed),
        0x1000,
        "an answered stop is not rung"
    );
}

/// A thread holding a block with `used` records, stopped at its cursor: (pool, block, the
/// block's address, the published end).
fn stopped_in_a_block(used: u64) -> (Pool, ThreadBlock, usize, usize) {
    let p = Pool::new(Mode::Bits64, SMALL).unwrap();
    let b = ThreadBlock::default();
    pool::start(&b, &p, 0);
    for i in 0..used {
        assert!(pool::trace_exit(&b, &p, 7, 100 + i));
    }
    let held = b.end.load(Ordering::Relaxed);
    block::request_stop(&b);
    assert!(!pool::trace_exit(&b, &p, 7, 200), "answers the stop");
    let end = block::poll_stopped(&b).expect("published");
    (p, b, held, end)
}

#[test]
fn a_restart_with_room_for_the_start_record_goes_on_in_the_block() {
    // 2 records: the end is the third data slot, below the limit (the fourth).
    let (p, b, held, end) = stopped_in_a_block(2);
    assert_eq!(end, held + (BLOCK_HEADER_SLOTS + 2) * SLOT);
    assert!(pool::restart(&b, &p, end, 300));
    assert_eq!(p.copy()[(end - p.base()) / SLOT], slot::encode_start(300));
    assert_eq!(b.cursor.load(Ordering::Relaxed), end + SLOT);
    let block_end = held + SMALL.block_slots * SLOT;
    assert_eq!(b.limit.load(Ordering::Relaxed), block_end - SLOT);
    assert_eq!(b.end.load(Ordering::Relaxed), held, "the same block");
    assert_eq!(b.stop.load(Ordering::Relaxed), block::RUNNING);
    assert_eq!(p.copy()[(held - p.base()) / SLOT + H_STATE], OWNED);
}

#[test]
fn a_restart_at_the_limit_seals_the_block_and_skips_a_seq() {
    // 3 records: the end is the limit (a start record would leave no room for a wide entry).
    let (p, b, held, end) = stopped_in_a_block(3);
    assert_eq!(end, held + SMALL.block_slots * SLOT - SLOT);
    assert!(!pool::restart(&b, &p, end, 300));
    let header = (held - p.base()) / SLOT;
    assert_eq!(p.copy()[header + H_CLOSE], end as u64, "sealed at the end");
    assert_ne!(p.copy()[header + H_STATE], OWNED);
    assert_eq!(b.cursor.load(Ordering::Relaxed) as u64, SEALED, "no block");
    // The seal's next seq is 1; the restart skips it, so readers see a gap.
    assert_eq!(b.end.load(Ordering::Relaxed), 2);
    assert_eq!(b.begin.load(Ordering::Relaxed), p.base() | 1);
}

/// A state lock whose answers the test chooses, counting its locks and unlocks.
struct Lock {
    grants: bool,
    runnable: bool,
    held: std::cell::Cell<i32>,
}
impl block::StateLock for Lock {
    fn is_runnable(&self) -> bool {
        self.runnable
    }
    fn lock(&self) -> bool {
        if self.grants {
            self.held.set(self.held.get() + 1);
        }
        self.grants
    }
    fn unlock(&self) {
        self.held.set(self.held.get() - 1);
    }
}

/// BTrace's bound on active blocks, control side: a block held by a thread that is not runnable
/// is sealed under its state lock and handed back; never a runnable thread's, never a stopping
/// one's, never without the lock; the lock is always given back.
#[test]
fn force_close_seals_only_a_parked_threads_block_and_held_ticket_names_it() {
    let lock = |grants, runnable| Lock {
        grants,
        runnable,
        held: std::cell::Cell::new(0),
    };
    let p = Pool::new(Mode::Bits64, SMALL).unwrap();
    let b = ThreadBlock::default();
    pool::start(&b, &p, 0);
    assert_eq!(pool::held_ticket(&b, &p), None, "no block yet");
    assert!(pool::trace_exit(&b, &p, 7, 1)); // ticket 0: block 0
    assert!(pool::trace_exit(&b, &p, 7, 2));
    assert!(pool::trace_exit(&b, &p, 7, 3));
    assert!(pool::trace_exit(&b, &p, 7, 4)); // the block is full: ticket 1, block 1
    assert_eq!(pool::held_ticket(&b, &p), Some(1));
    let held = b.end.load(Ordering::Relaxed);
    let header = (held - p.base()) / SLOT;

    for l in [lock(false, false), lock(true, true)] {
        assert!(
            !pool::force_close(&b, &p, &l, u64::MAX),
            "refused lock, or runnable"
        );
        assert_eq!(l.held.get(), 0, "the lock given back");
        assert_eq!(p.copy()[header + H_STATE], OWNED);
    }
    block::request_stop(&b); // stopping: the stop protocol owns the block now
    let l = lock(true, false);
    assert!(!pool::force_close(&b, &p, &l, u64::MAX));
    assert_eq!(l.held.get(), 0);
    b.stop.store(block::RUNNING, Ordering::Relaxed);
    b.limit
        .store(held + SMALL.block_slots * SLOT - SLOT, Ordering::Relaxed);

    let cursor = b.cursor.load(Ordering::Relaxed);
    assert!(
        !pool::force_close(&b, &p, &l, 1),
        "its block was taken at ticket 1: not older than 1"
    );
    assert_eq!(l.held.get(), 0);
    assert_eq!(p.copy()[header + H_STATE], OWNED);
    assert!(
        pool::force_close(&b, &p, &l, 2),
        "parked, tracing, holding a block taken before ticket 2"
    );
    assert_eq!(l.held.get(), 0);
    assert_eq!(p.copy()[header + H_CLOSE], cursor as u64);
    assert_ne!(p.copy()[header + H_STATE], OWNED, "handed back");
    assert_eq!(b.cursor.load(Ordering::Relaxed) as u64, SEALED);
    assert_eq!(b.limit.load(Ordering::Relaxed), 0);
    assert_eq!(pool::held_ticket(&b, &p), None);
    assert!(
        !pool::force_close(&b, &p, &l, u64::MAX),
        "nothing left to close"
    );
    // Its next record takes a new block (seq 2: 0 and 1 were the two before).
    assert!(pool::trace_exit(&b, &p, 7, 5));
    let next = b.end.load(Ordering::Relaxed);
    assert_eq!(slot::unpack(p.copy()[(next - p.base()) / SLOT]), (7, 2));
    // A take in progress, read without the lock: the next seq is in `end` already, the old
    // cursor still in place. No block (and no read outside the pool).
    let end = b.end.load(Ordering::Relaxed);
    b.end.store(3, Ordering::Relaxed);
    assert_eq!(pool::held_ticket(&b, &p), None, "a seq is no block");
    b.end.store(end + SLOT, Ordering::Relaxed);
    assert_eq!(
        pool::held_ticket(&b, &p),
        None,
        "inside a block is no block"
    );
    let past = p.base() + (POOL_HEADER_SLOTS + SMALL.blocks * SMALL.block_slots) * SLOT;
    b.end.store(past, Ordering::Relaxed);
    assert_eq!(
        pool::held_ticket(&b, &p),
        None,
        "where a block after the last would be"
    );
    b.end.store(p.base(), Ordering::Relaxed);
    assert_eq!(pool::held_ticket(&b, &p), None, "the pool's header");
    b.end.store(end, Ordering::Relaxed);
    b.cursor.store(0, Ordering::Relaxed);
    assert_eq!(pool::held_ticket(&b, &p), None, "tracing off");
}

/// The flush's snapshot closes each stopped thread's open block at its published end, and
/// only for a real end (not SEALED, not the stop request's 1).
/// `held_ticket` names the block a thread holds in every block of pools wherever the heap put
/// them: block arithmetic relative to the pool's first block must not only hold for bases that
/// happen to be aligned to a block's size (ROOMY's blocks are 136 bytes, SMALL's 72; sixteen
/// pools alive at once are at sixteen addresses).
#[test]
fn held_ticket_names_each_block_of_pools_at_any_address() {
    let mut alive = Vec::new();
    for k in 0..16 {
        let g = if k % 2 == 0 {
            ROOMY
        } else {
            hubble_format::pool_traffic::SMALL
        };
        let p = Pool::new(Mode::Bits64, g).unwrap();
        let b = ThreadBlock::default();
        pool::start(&b, &p, 0);
        // One thread alone takes the blocks in ticket order; after each record it holds one.
        let mut held = Vec::new();
        let mut counter = 1;
        while held.len() < g.blocks {
            assert!(pool::trace_exit(&b, &p, 7, counter));
            counter += 1;
            let Some(t) = pool::held_ticket(&b, &p) else {
                panic!(
                    "pool {k} at {:#x}: no block after record {counter}",
                    p.base()
                );
            };
            if held.last() != Some(&t) {
                held.push(t);
            }
        }
        assert_eq!(held, (0..g.blocks as u64).collect::<Vec<_>>(), "pool {k}");
        alive.push((p, b));
    }
}

#[test]
fn the_snapshot_closes_open_blocks_at_published_ends_only() {
    let (p, _b, held, end) = stopped_in_a_block(2);
    let header = (held - p.base()) / SLOT;
    let snap = pool::snapshot(&p, &[(held, end)]);
    assert_eq!(snap[header + H_CLOSE], end as u64);
    for not_an_end in [SEALED as usize, 1, 0] {
        let snap = pool::snapshot(&p, &[(held, not_an_end)]);
        assert_eq!(snap[header + H_CLOSE], 0, "end {not_an_end}");
    }
    let mut rest = pool::snapshot(&p, &[(held, end)]);
    rest[header + H_CLOSE] = 0;
    assert_eq!(rest, p.copy(), "nothing else changed");
}

/// A flush that wrote nothing lets a stopped thread go on where it stopped, with no start
/// record; a thread that held no block starts again with the same seq.
#[test]
fn resume_goes_on_where_the_thread_stopped() {
    let (p, b, held, end) = stopped_in_a_block(2);
    let before = p.copy();
    pool::resume(&b, &p, end);
    assert_eq!(p.copy(), before, "no record written");
    assert_eq!(b.cursor.load(Ordering::Relaxed), end);
    assert_eq!(
        b.limit.load(Ordering::Relaxed),
        held + SMALL.block_slots * SLOT - SLOT
    );
    assert_eq!(b.stop.load(Ordering::Relaxed), block::RUNNING);
    let p32 = Pool::new(Mode::Bits32, SMALL).unwrap();
    let b32 = ThreadBlock::default();
    pool::start(&b32, &p32, 0);
    assert!(pool::trace_exit(&b32, &p32, 7, 1));
    let held32 = b32.end.load(Ordering::Relaxed);
    let end32 = b32.cursor.load(Ordering::Relaxed);
    pool::resume(&b32, &p32, end32);
    assert_eq!(
        b32.limit.load(Ordering::Relaxed),
        held32 + SMALL.block_slots * SLOT,
        "32-bit"
    );
    let idle = ThreadBlock::default();
    pool::start(&idle, &p, 4);
    pool::resume(&idle, &p, SEALED as usize);
    assert_eq!(idle.cursor.load(Ordering::Relaxed) as u64, SEALED);
    assert_eq!(idle.end.load(Ordering::Relaxed), 4, "the same seq");
}

/// Unregistering a thread whose stop is requested but not answered seals nothing: there is no
/// published end to seal at (the thread's block stays its own until it answers or is forced).
#[test]
fn unregister_seals_only_from_a_published_end() {
    let (p, b, held, end) = stopped_in_a_block(2);
    let header = (held - p.base()) / SLOT;
    b.stop.store(block::STOP_REQUESTED, Ordering::Relaxed);
    pool::unregister(&b, &p);
    assert_eq!(
        p.copy()[header + H_CLOSE],
        0,
        "not sealed at the request's 1"
    );
    assert_eq!(p.copy()[header + H_STATE], OWNED);
    b.stop.store(end, Ordering::Relaxed);
    pool::unregister(&b, &p);
    assert_eq!(p.copy()[header + H_CLOSE], end as u64);
    assert_ne!(p.copy()[header + H_STATE], OWNED);
}
