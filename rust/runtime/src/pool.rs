//! Many-thread mode: the shared block pool and both sides of its protocol
//! (`docs/many-threads.md`). The layout and the reference writer are `hubble_format::pool`;
//! this is the same algorithm on atomics, as the traced threads and the control thread run it,
//! checked by `tests/loom_pool.rs` and `tests/pool_stress.rs`.
//!
//! | here                       | A64            | why                                         |
//! |----------------------------|----------------|---------------------------------------------|
//! | `fetch_add(Relaxed)`       | `LDADD`        | a unique ticket; nothing else rides on it   |
//! | `compare_exchange(Acquire)`| `LDR` + `CASA` | the claim, only if the state lets this ticket have the block; pairs with the previous owner's seal |
//! | `store(free_from(head + N − A), Release)` | `STLR` | the seal: data and `close` before the block is free, and free only N − A tickets later |
//! | `limit.store(0, Release)`  | `STLR`         | the doorbell, rung again at every poll round |

use hubble_format::pool::{
    claimable, free_from, Geometry, BLOCK_HEADER_SLOTS, H_CLOSE, H_STATE, H_TICKET, H_TIME, OWNED,
    POOL_HEADER_SLOTS, P_BLOCKS, P_BLOCK_BYTES, P_DELAY, P_MASK, P_NEXT, P_TAKE, SEALED, TRIES,
};
use hubble_format::slot::{self, Mode};

use crate::block::{ThreadBlock, RUNNING, SLOT, STOP_REQUESTED};
use crate::memory::Mapping;
use crate::sync::{fence, AtomicU64, Ordering};

/// How the slow path claims a candidate block. Only [`Claim::Cas`] is correct; the other is
/// the model with the essential step removed, for `tests/loom_pool.rs` to show it fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// A load, the bound check, then a compare-exchange from the state loaded: only one taker
    /// turns a given free state into OWNED.
    Cas,
    /// A load, the check, then a plain store: two takers can both read a free state. Never use
    /// outside the model (`tests/loom_pool.rs` shows it gives one block to two threads).
    LoadThenStore,
}

/// The pool's memory: header words and N blocks of B slots.
pub struct Pool {
    memory: Mapping,
    base: usize,
    geometry: Geometry,
    mode: Mode,
    stats: Stats,
    tries: usize,
}

/// What the slow paths did (the Rust model's bookkeeping; the emitted code keeps none: a drop
/// shows in the trace as a `seq` gap). Plain std atomics, outside the loom model.
#[derive(Debug, Default)]
pub struct Stats {
    /// Blocks taken.
    pub takes: std::sync::atomic::AtomicU64,
    /// Tickets whose block was not claimable (owned, or sealed less than N − A tickets ago).
    pub skips: std::sync::atomic::AtomicU64,
    /// Records dropped: no claimable block within [`TRIES`] tickets.
    pub drops: std::sync::atomic::AtomicU64,
}

impl Pool {
    /// A zeroed pool. The caller checked the geometry (`props::pool_geometry`). Only the
    /// header is written here: a block's pages are committed when a thread first takes it, so
    /// a process pays for the blocks its threads filled, not for the budget.
    pub fn new(mode: Mode, geometry: Geometry) -> std::io::Result<Pool> {
        assert!(geometry.blocks.is_power_of_two());
        assert!(geometry.block_slots > BLOCK_HEADER_SLOTS + 1);
        assert!(geometry.active <= geometry.blocks);
        let memory = Mapping::new(geometry.total_slots())?;
        let base = memory.slots().base;
        let pool = Pool {
            memory,
            base,
            geometry,
            mode,
            stats: Stats::default(),
            tries: TRIES,
        };
        let cells = pool.cells();
        cells[P_MASK].store((geometry.blocks - 1) as u64, Ordering::Relaxed);
        cells[P_BLOCKS].store((base + POOL_HEADER_SLOTS * SLOT) as u64, Ordering::Relaxed);
        cells[P_DELAY].store(geometry.delay(), Ordering::Relaxed);
        cells[P_BLOCK_BYTES].store((geometry.block_slots * SLOT) as u64, Ordering::Relaxed);
        Ok(pool)
    }

    fn cells(&self) -> &[AtomicU64] {
        self.memory.slots().slots
    }

    /// The pool's memory (its committed pages: [`Mapping::resident_pages`]).
    pub fn memory(&self) -> &Mapping {
        &self.memory
    }

    fn at(&self, addr: usize) -> &AtomicU64 {
        &self.cells()[(addr - self.base) / SLOT]
    }

    /// Whether `addr` is the address of one of the pool's blocks.
    fn is_block(&self, addr: usize) -> bool {
        let first = self.base + POOL_HEADER_SLOTS * SLOT;
        let bytes = self.geometry.block_slots * SLOT;
        addr >= first
            && (addr - first) % bytes == 0
            && (addr - first) / bytes < self.geometry.blocks
    }

    /// Header word `slot` of the block (or of the pool) at `addr`: a slot index, so that no
    /// byte arithmetic on the index can land inside the same word by rounding.
    fn word(&self, addr: usize, slot: usize) -> &AtomicU64 {
        &self.cells()[(addr - self.base) / SLOT + slot]
    }

    /// Stores the address of the block-end function compiled code calls (`P_TAKE`: the
    /// runtime's part of the header; `Art::pool_take_entry`).
    pub fn set_take_entry(&self, addr: u64) {
        self.cells()[P_TAKE].store(addr, Ordering::Relaxed);
    }

    /// The pool's address (what `begin` holds, untagged).
    pub fn base(&self) -> usize {
        self.base
    }
    /// Every word of the pool, headers and blocks, as the control thread reads them while the
    /// threads run (the idle-gap anchors' view, [`crate::anchors`]).
    pub fn slots(&self) -> crate::block::Slots<'_> {
        self.memory.slots()
    }
    /// The geometry.
    pub fn geometry(&self) -> Geometry {
        self.geometry
    }
    /// The same pool whose slow path looks at `tries` candidates instead of [`TRIES`] (loom
    /// models only: every try multiplies the interleavings; 3 still covers skip-then-claim).
    #[doc(hidden)]
    pub fn with_tries(mut self, tries: usize) -> Pool {
        self.tries = tries;
        self
    }

    /// The slow paths' counts.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }
    fn block_bytes(&self) -> usize {
        self.geometry.block_slots * SLOT
    }

    /// A relaxed copy of every slot. Meaningful once every thread is stopped (the acquires of
    /// their end positions order their writes before this copy).
    pub fn copy(&self) -> Vec<u64> {
        self.cells()
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }
}

/// Seals the block the thread holds at `cursor`: `close`, the next seq into `end`, then the
/// state "free from head + N − A" with release (what the next owner's acquire pairs with).
/// The bound counts from the head at the seal, not from the block's ticket: the block's newest
/// record is as recent as the head, so it must live as long as a block taken now would
/// (`docs/many-threads.md`, "Reuse after the seal"). A relaxed head is enough: an older head
/// only makes the bound earlier by the tickets taken meanwhile, which are all after the
/// block's last record.
fn seal(block: &ThreadBlock, pool: &Pool, cursor: usize) {
    let b = block.end.load(Ordering::Relaxed);
    pool.word(b, H_CLOSE)
        .store(cursor as u64, Ordering::Relaxed);
    let seq = pool.at(b).load(Ordering::Relaxed) as u32;
    block
        .end
        .store(seq.wrapping_add(1) as usize, Ordering::Relaxed);
    let bound = pool
        .at(pool.base)
        .load(Ordering::Relaxed)
        .wrapping_add(pool.word(pool.base, P_DELAY).load(Ordering::Relaxed));
    pool.word(b, H_STATE)
        .store(free_from(bound), Ordering::Release);
}

/// The pool path of the slow path (reached with `cursor >= limit`, `stop == 0`, the reloaded
/// limit not above the cursor, `begin` tagged): seal, take, header. Returns the new cursor, or
/// None when no candidate was free (the record is dropped, `seq` jumps).
fn next_block(
    block: &ThreadBlock,
    pool: &Pool,
    tid: u32,
    cursor: usize,
    counter: u64,
    claim: Claim,
) -> Option<usize> {
    if cursor != SEALED as usize {
        seal(block, pool, cursor);
    }
    block.cursor.store(SEALED as usize, Ordering::Relaxed);
    // A plain 0: it is the doorbell's own value, so it can never hide one.
    block.limit.store(0, Ordering::Relaxed);
    let head = pool.base;
    for _ in 0..pool.tries {
        let ticket = pool.word(head, P_NEXT).fetch_add(1, Ordering::Relaxed);
        let mask = pool.word(head, P_MASK).load(Ordering::Relaxed);
        let blocks = pool.word(head, P_BLOCKS).load(Ordering::Relaxed) as usize;
        let b = blocks + (ticket & mask) as usize * pool.block_bytes();
        let state = pool.word(b, H_STATE);
        let old = state.load(Ordering::Relaxed);
        if !claimable(old, ticket) {
            // Still its owner's (a lagging block), or sealed less than N − A tickets ago: skip.
            pool.stats
                .skips
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            continue;
        }
        let claimed = match claim {
            Claim::Cas => state
                .compare_exchange(old, OWNED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok(),
            Claim::LoadThenStore => {
                fence(Ordering::Acquire);
                state.store(OWNED, Ordering::Relaxed);
                true
            }
        };
        if !claimed {
            pool.stats
                .skips
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            continue; // another taker of the same index won it
        }
        pool.stats
            .takes
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let seq = block.end.load(Ordering::Relaxed) as u32;
        pool.at(b).store(slot::pack(tid, seq), Ordering::Relaxed);
        pool.word(b, H_TICKET).store(ticket, Ordering::Relaxed);
        pool.word(b, H_TIME).store(counter, Ordering::Relaxed);
        pool.word(b, H_CLOSE).store(0, Ordering::Relaxed);
        block.end.store(b, Ordering::Relaxed);
        let end = b + pool.block_bytes();
        let limit = match pool.mode {
            Mode::Bits64 => end - SLOT,
            Mode::Bits32 => end,
        };
        // Plain store: it may hide a doorbell rung since the slow path read `stop`; the control
        // thread rings again at every poll round (`ring_again`), so the stop is only delayed.
        block.limit.store(limit, Ordering::Relaxed);
        return Some(b + BLOCK_HEADER_SLOTS * SLOT);
    }
    pool.stats
        .drops
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let seq = block.end.load(Ordering::Relaxed) as u32;
    block
        .end
        .store(seq.wrapping_add(1) as usize, Ordering::Relaxed);
    None
}

/// The ring mode's trace point (`block::trace_point_with`: the same §6 stop protocol), where
/// reaching the block's end takes the next block from the pool instead of wrapping.
fn trace_point(
    block: &ThreadBlock,
    pool: &Pool,
    tid: u32,
    slots: [u64; 2],
    used: usize,
    counter: u64,
    claim: Claim,
) -> bool {
    crate::block::trace_point_with(
        block,
        &slots[..used],
        |cursor| next_block(block, pool, tid, cursor, counter, claim),
        |addr, value| pool.at(addr).store(value, Ordering::Relaxed),
    )
}

/// Method entry on a traced thread in pool mode (`counter`: the full timer value; the slot keeps
/// its low 32 bits, a new block's header all 64).
pub fn trace_entry(block: &ThreadBlock, pool: &Pool, tid: u32, method: u64, counter: u64) -> bool {
    trace_entry_with(block, pool, tid, method, counter, Claim::Cas)
}

/// [`trace_entry`] with the claim chosen (models only).
#[doc(hidden)]
pub fn trace_entry_with(
    block: &ThreadBlock,
    pool: &Pool,
    tid: u32,
    method: u64,
    counter: u64,
    claim: Claim,
) -> bool {
    let (slots, used) =
        slot::encode_entry(pool.mode, method, counter as u32).expect("method pointer is encodable");
    trace_point(block, pool, tid, slots, used, counter, claim)
}

/// Method exit on a traced thread in pool mode.
pub fn trace_exit(block: &ThreadBlock, pool: &Pool, tid: u32, counter: u64) -> bool {
    trace_point(
        block,
        pool,
        tid,
        [slot::encode_exit(counter as u32), 0],
        1,
        counter,
        Claim::Cas,
    )
}

/// Control: starts a thread in pool mode with no block (it takes one at its first trace point,
/// so a thread that never traces costs nothing). `seq` continues the thread's numbering.
pub fn start(block: &ThreadBlock, pool: &Pool, seq: u32) {
    // The base is 8-aligned: + 1 sets bit 0, the tag of the pool path.
    block.begin.store(pool.base + 1, Ordering::Relaxed);
    block.end.store(seq as usize, Ordering::Relaxed);
    block.stop.store(RUNNING, Ordering::Relaxed);
    block.limit.store(0, Ordering::Relaxed);
    // Release: the words above are seen by whoever sees this cursor (slow path fence).
    block.cursor.store(SEALED as usize, Ordering::Release);
}

/// Control: rings the doorbell again while a requested stop has not been answered. The traced
/// thread's block take stores a real `limit` with a plain store, which can land after the first
/// doorbell; this one (or a later one) is then seen. Without it the stop could wait for the
/// thread's next block end (`tests/loom_pool.rs` fails without it).
pub fn ring_again(block: &ThreadBlock) {
    if block.stop.load(Ordering::Relaxed) == STOP_REQUESTED {
        block.limit.store(0, Ordering::Release);
    }
}

/// Control, after the thread published `end` (or was forced): restarts it. Inside its block,
/// with a start record at `end` when one fits (as ring mode restarts); otherwise the block is
/// sealed here and `seq` skips one, so the reader sees the restart as a gap. Returns whether the
/// thread goes on in the block it held (a start record was written there).
pub fn restart(block: &ThreadBlock, pool: &Pool, end: usize, counter: u64) -> bool {
    let real_limit = |b: usize| {
        let e = b + pool.block_bytes();
        match pool.mode {
            Mode::Bits64 => e - SLOT,
            Mode::Bits32 => e,
        }
    };
    if end != SEALED as usize {
        let b = block.end.load(Ordering::Relaxed);
        if end < real_limit(b) {
            pool.at(end)
                .store(slot::encode_start(counter as u32), Ordering::Relaxed);
            block.stop.store(RUNNING, Ordering::Relaxed);
            block.limit.store(real_limit(b), Ordering::Relaxed);
            block.cursor.store(end + SLOT, Ordering::Release);
            return true;
        }
        seal(block, pool, end);
    }
    let seq = block.end.load(Ordering::Relaxed) as u32;
    start(block, pool, seq.wrapping_add(1));
    false
}

/// Seals the block of an exiting thread, on the thread itself (`ThreadDetached`): the block is
/// free for the pool and stays readable until a later owner overwrites it.
pub fn thread_exit(block: &ThreadBlock, pool: &Pool) {
    let cursor = block.cursor.load(Ordering::Relaxed);
    if cursor != 0 && cursor != SEALED as usize {
        seal(block, pool, cursor);
    }
    block.cursor.store(0, Ordering::Relaxed);
    block.limit.store(0, Ordering::Relaxed);
}

/// Control: lets a stopped thread go on exactly where it stopped (`end`, as published), with no
/// start record: for a flush that wrote nothing (another thread did not stop in time), so the
/// run reads on as if the stop had not happened. A start record here would hide from readers
/// every record before it (a run decodes from its last start record), which no file holds.
pub fn resume(block: &ThreadBlock, pool: &Pool, end: usize) {
    if end == SEALED as usize {
        // It holds no block; `end` keeps its next seq.
        let seq = block.end.load(Ordering::Relaxed) as u32;
        start(block, pool, seq);
        return;
    }
    let b = block.end.load(Ordering::Relaxed);
    let e = b + pool.block_bytes();
    let limit = match pool.mode {
        Mode::Bits64 => e - SLOT,
        Mode::Bits32 => e,
    };
    block.stop.store(RUNNING, Ordering::Relaxed);
    block.limit.store(limit, Ordering::Relaxed);
    // Release: as `start`'s (the slow path's fence sees stop = 0 and the limit with it).
    block.cursor.store(end, Ordering::Release);
}

/// Seals the block of a thread the control plane unregisters (`ThreadDetached`, on the thread
/// itself, or the control thread under the registry lock), whatever state the thread is in:
/// tracing (cursor in a block: as [`thread_exit`]), or stopped and not restarted (cursor 0, its
/// end published by itself or by a force stop: sealed from that end). `thread_exit` alone leaves
/// the second kind OWNED for good: nobody restarts a thread that is gone, so the pool would never
/// hand the block on and no flush would read its records (its `close` stays 0).
pub fn unregister(block: &ThreadBlock, pool: &Pool) {
    let cursor = block.cursor.load(Ordering::Relaxed);
    if cursor == 0 {
        // Acquire: pairs with the thread's publication, as a poll does (its slots before it).
        let stop = block.stop.load(Ordering::Acquire);
        if stop > STOP_REQUESTED && stop != SEALED as usize {
            seal(block, pool, stop);
        }
        block.limit.store(0, Ordering::Relaxed);
    } else {
        thread_exit(block, pool);
    }
}

/// Control: closes the block of a thread that is not runnable if it was taken at a ticket below
/// `older_than`, under the thread's state lock (as `block::force_stop`), so the pool can hand the
/// block on: BTrace's bound on active blocks. Returns whether a block was closed.
pub fn force_close(
    block: &ThreadBlock,
    pool: &Pool,
    lock: &impl crate::block::StateLock,
    older_than: u64,
) -> bool {
    if !lock.lock() {
        return false;
    }
    let mut closed = false;
    // Under the lock the thread runs no trace point: its words are the ones it left.
    if !lock.is_runnable() && block.stop.load(Ordering::Relaxed) == RUNNING {
        let cursor = block.cursor.load(Ordering::Relaxed);
        if held_ticket(block, pool).is_some_and(|t| t < older_than) {
            seal(block, pool, cursor);
            block.cursor.store(SEALED as usize, Ordering::Relaxed);
            block.limit.store(0, Ordering::Relaxed);
            closed = true;
        }
    }
    fence(Ordering::SeqCst);
    lock.unlock();
    closed
}

/// The ticket of the block a thread holds (None: it holds none). The control thread's tick
/// closes blocks whose ticket is more than N − A behind the pool's head. Read while the thread
/// runs it is a hint only (a take in progress may have put the next `seq` into `end` already: no
/// block then, None); under the thread's state lock it is exact.
pub fn held_ticket(block: &ThreadBlock, pool: &Pool) -> Option<u64> {
    let cursor = block.cursor.load(Ordering::Relaxed);
    if cursor == 0 || cursor == SEALED as usize {
        return None;
    }
    let b = block.end.load(Ordering::Relaxed);
    pool.is_block(b)
        .then(|| pool.word(b, H_TICKET).load(Ordering::Relaxed))
}

/// The pool's head (next ticket).
pub fn head(pool: &Pool) -> u64 {
    pool.word(pool.base, P_NEXT).load(Ordering::Relaxed)
}

/// A flush's view of the pool once every thread is stopped: the copy, with each open block's
/// `close` set to the end position its owner published (`ends`: (block word `end`, published
/// end) per stopped thread). Decode it with `hubble_format::pool::thread_streams`.
pub fn snapshot(pool: &Pool, ends: &[(usize, usize)]) -> Vec<u64> {
    let mut out = pool.copy();
    for &(b, end) in ends {
        if end != SEALED as usize && end > 1 {
            out[(b - pool.base) / SLOT + H_CLOSE] = end as u64;
        }
    }
    out
}
