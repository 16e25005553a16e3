//! The per-thread block and both sides of the Hubble §6 start/stop protocol.
//!
//! [`ThreadBlock`] has the layout of `Thread::tlsPtr_.hubble_{cursor,limit,stop,begin,end}`
//! (five pointer-sized words, `docs/architecture.md`). The traced side ([`trace_entry`],
//! [`trace_exit`]) is the Rust model of what compiled code, nterp and the switch interpreter
//! run; the control side ([`start`], [`request_stop`], [`poll_stopped`], [`force_stop`]) is what
//! the control thread runs. Orderings map to the A64 sequences one to one and are justified in
//! `docs/protocol.md`:
//!
//! | here                 | A64                | why                                            |
//! |----------------------|--------------------|------------------------------------------------|
//! | `Relaxed` load/store | `LDR`/`LDP`/`STR`  | the fast path may not pay for ordering         |
//! | `fence(Acquire)`     | `DMB ISHLD`        | slow path: see `stop` once `limit = 0` is seen |
//! | `Release` store      | `STLR`             | end position published after the slots         |
//! | `fence(SeqCst)`      | `DMB ISH`          | force stop: ordered before the unlock          |

use hubble_format::slot::{self, Mode};
use hubble_layout::BlockWord;

use crate::sync::{fence, AtomicU64, AtomicUsize, Ordering};

/// Bytes per slot.
pub const SLOT: usize = 8;

/// `Thread::tlsPtr_.hubble_*`: five pointer-sized words, in the order of trace_point.h's
/// `BlockWord` (hubble_layout), which the C++ trace point indexes them by.
#[repr(C)]
#[derive(Debug, Default)]
pub struct ThreadBlock {
    /// Hubble §6 `start`: address of the next slot; 0 = tracing off.
    pub cursor: AtomicUsize,
    /// `end - 8` (64-bit mode) or `end` (32-bit mode) while tracing; 0 = stop doorbell.
    pub limit: AtomicUsize,
    /// Hubble §6 `stop`: 0 running, 1 stop requested, otherwise the published end position.
    pub stop: AtomicUsize,
    /// First slot of the ring.
    pub begin: AtomicUsize,
    /// One past the last slot of the ring.
    pub end: AtomicUsize,
}

/// Words in [`ThreadBlock`] (trace_point.h's `BlockWord::kBlockWords`).
pub const BLOCK_WORDS: usize = BlockWord::kBlockWords;

// loom's atomics are larger than the machine word; outside loom the block is ART's words.
#[cfg(not(loom))]
const _: () = assert!(
    core::mem::size_of::<ThreadBlock>() == BLOCK_WORDS * core::mem::size_of::<usize>(),
    "ThreadBlock is not trace_point.h's kBlockWords words"
);

/// `stop` value: running.
pub const RUNNING: usize = 0;
/// `stop` value: stop requested.
pub const STOP_REQUESTED: usize = 1;

/// A ring's slots and the address its first slot has in the block's words.
///
/// The block holds addresses (what the assembly dereferences); the model turns an address back
/// into an index so the same code runs over mmap'd memory and over loom's atomics.
#[derive(Clone, Copy)]
pub struct Slots<'a> {
    /// Address of `slots[0]` as stored in `begin`.
    pub base: usize,
    /// The slots.
    pub slots: &'a [AtomicU64],
}

impl<'a> Slots<'a> {
    /// Address one past the last slot.
    pub fn end(&self) -> usize {
        self.base + self.slots.len() * SLOT
    }

    fn at(&self, addr: usize) -> &'a AtomicU64 {
        let i = (addr - self.base) / SLOT;
        &self.slots[i]
    }

    /// Byte offset of an address inside the ring.
    pub fn offset(&self, addr: usize) -> usize {
        addr - self.base
    }

    /// The limit the fast path may not reach (`docs/architecture.md`: why `end - 8`).
    pub fn real_limit(&self, mode: Mode) -> usize {
        match mode {
            Mode::Bits64 => self.end() - SLOT,
            Mode::Bits32 => self.end(),
        }
    }
}

/// Where the traced side's stores go: the address in a block word is the slot.
pub trait SlotStore {
    /// Stores `value` into the slot at address `addr`.
    fn store(&self, addr: usize, value: u64);
}

impl SlotStore for Slots<'_> {
    fn store(&self, addr: usize, value: u64) {
        self.at(addr).store(value, Ordering::Relaxed);
    }
}

/// The traced side as the assembly is: slot addresses straight from the block's words.
#[cfg(not(loom))]
#[derive(Clone, Copy, Debug, Default)]
pub struct RawSlots;

#[cfg(not(loom))]
impl SlotStore for RawSlots {
    fn store(&self, addr: usize, value: u64) {
        // SAFETY: `addr` came from the block (cursor, or begin after a wrap) while tracing is on:
        // the control thread maps the ring before releasing the cursor and unmaps it only after
        // this thread has published its stop (or was forced while not runnable, when it runs no
        // trace point), so the slot is live, aligned memory of an AtomicU64.
        unsafe { (*(addr as *const AtomicU64)).store(value, Ordering::Relaxed) }
    }
}

/// What one trace point writes: up to two slots.
#[derive(Clone, Copy, Debug)]
struct Record {
    slots: [u64; 2],
    used: usize,
}

/// The traced thread's trace point, slot for slot the sequence in `docs/architecture.md`.
/// Returns whether the record was written.
#[inline]
fn trace_point(block: &ThreadBlock, ring: &impl SlotStore, record: Record) -> bool {
    trace_point_with(
        block,
        &record.slots[..record.used],
        |cursor| {
            // A real wrap: pad the at most one slot left (64-bit mode), go back to the start.
            if cursor != block.end.load(Ordering::Relaxed) {
                ring.store(cursor, slot::encode_pad());
            }
            Some(block.begin.load(Ordering::Relaxed))
        },
        |addr, value| ring.store(addr, value),
    )
}

/// The §6 protocol of a trace point, shared by the ring (`trace_point`) and the block pool
/// (`crate::pool`), which differ only in what reaching `limit` for real means: `wrap(cursor)`
/// returns where to write instead (the ring's start after a pad; the pool's next block), or
/// None when nothing may be written. `store` writes one slot. Returns whether the record was
/// written.
#[inline]
pub(crate) fn trace_point_with(
    block: &ThreadBlock,
    slots: &[u64],
    wrap: impl FnOnce(usize) -> Option<usize>,
    store: impl Fn(usize, u64),
) -> bool {
    // LDP cursor, limit: two plain loads.
    let mut cursor = block.cursor.load(Ordering::Relaxed);
    let limit = block.limit.load(Ordering::Relaxed);
    if cursor == 0 {
        return false;
    }
    if cursor >= limit {
        // Slow path. DMB ISHLD: having read limit = 0 (released by request_stop) or a fresh
        // cursor (released by start), every later load sees what the control thread wrote first.
        fence(Ordering::Acquire);
        if block.stop.load(Ordering::Relaxed) != RUNNING {
            // Tracing off FIRST, then publish: the STLR orders the cursor = 0 store (and every
            // slot written) before the end position. In the other order (Fig. 4's lines 10-11)
            // the control thread may see the end position, restart (cursor = new), and then have
            // the late cursor = 0 store overwrite its restart: tracing silently stays off. The
            // loom model `restart_after_stop...` finds exactly that.
            block.cursor.store(0, Ordering::Relaxed);
            block.stop.store(cursor, Ordering::Release);
            return false;
        }
        if cursor >= block.limit.load(Ordering::Relaxed) {
            match wrap(cursor) {
                Some(c) => cursor = c,
                None => return false,
            }
        }
        // else: the LDP saw a stale limit (0 from the last stop) with a fresh cursor: resume.
    }
    for (i, value) in slots.iter().enumerate() {
        store(cursor + i * SLOT, *value);
    }
    block
        .cursor
        .store(cursor + slots.len() * SLOT, Ordering::Relaxed);
    true
}

/// Method entry on the traced thread. `method` must be encodable (≥ 4; < 2^32 in 32-bit mode).
pub fn trace_entry(
    block: &ThreadBlock,
    ring: &impl SlotStore,
    mode: Mode,
    method: u64,
    ts: u32,
) -> bool {
    let (slots, used) = slot::encode_entry(mode, method, ts).expect("method pointer is encodable");
    trace_point(block, ring, Record { slots, used })
}

/// Method exit on the traced thread.
pub fn trace_exit(block: &ThreadBlock, ring: &impl SlotStore, ts: u32) -> bool {
    trace_point(
        block,
        ring,
        Record {
            slots: [slot::encode_exit(ts), 0],
            used: 1,
        },
    )
}

/// Control: (re)starts tracing with a start record at byte offset `pos` of the ring. The traced
/// thread must be stopped (cursor 0, end published or never started). Returns the cursor set.
pub fn start(block: &ThreadBlock, ring: Slots<'_>, mode: Mode, pos: usize, ts: u32) -> usize {
    let limit = ring.real_limit(mode);
    let mut at = ring.base + pos;
    // Same room rule as the traced side's wrap (and hubble_format::RingWriter::start).
    if at >= limit {
        if at != ring.end() {
            ring.at(at).store(slot::encode_pad(), Ordering::Relaxed);
        }
        at = ring.base;
    }
    ring.at(at).store(slot::encode_start(ts), Ordering::Relaxed);
    block.begin.store(ring.base, Ordering::Relaxed);
    block.end.store(ring.end(), Ordering::Relaxed);
    block.stop.store(RUNNING, Ordering::Relaxed);
    block.limit.store(limit, Ordering::Relaxed);
    // Release: the start record, the bounds, stop = 0 and the limit are visible to whoever sees
    // this cursor (the traced side's slow path acquires it with its fence).
    let cursor = at + SLOT;
    block.cursor.store(cursor, Ordering::Release);
    cursor
}

/// Control: asks the traced thread to stop at its next trace point.
pub fn request_stop(block: &ThreadBlock) {
    block.stop.store(STOP_REQUESTED, Ordering::Relaxed);
    // Release: whoever reads limit = 0 and then fences (acquire) sees stop = 1. The doorbell is
    // what sends the traced thread to the slow path at all; stop alone would not be looked at.
    block.limit.store(0, Ordering::Release);
}

/// Control: the published end position, if the traced thread has stopped.
pub fn poll_stopped(block: &ThreadBlock) -> Option<usize> {
    // Acquire: pairs with the traced side's STLR, so every slot it wrote is visible.
    let stop = block.stop.load(Ordering::Acquire);
    (stop > STOP_REQUESTED).then_some(stop)
}

/// Traced thread, at a suspend check (an ART checkpoint the control thread asked for): answers a
/// pending stop as the slow path of its next trace point would, for a thread running a loop
/// without calls (`thread_state.cc`'s closure, `tp::AnswerStopAtSuspendCheck`). Nothing when
/// tracing is off or no stop is asked: the checkpoint may run after a trace point answered.
pub fn answer_stop_at_suspend_check(block: &ThreadBlock) {
    let cursor = block.cursor.load(Ordering::Relaxed);
    if cursor == 0 {
        return;
    }
    fence(Ordering::Acquire);
    if block.stop.load(Ordering::Relaxed) == RUNNING {
        return;
    }
    block.cursor.store(0, Ordering::Relaxed);
    block.stop.store(cursor, Ordering::Release);
}

/// ART's thread-state transition lock for one thread, as the force stop uses it.
pub trait StateLock {
    /// Whether the thread is runnable (may be running managed code and trace points).
    fn is_runnable(&self) -> bool;
    /// Blocks the thread's transitions into runnable until [`StateLock::unlock`]. Returns false
    /// if the lock could not be taken (then [`StateLock::unlock`] must not be called).
    fn lock(&self) -> bool;
    /// Lets the thread transition again.
    fn unlock(&self);
}

/// Outcome of [`force_stop`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForceStop {
    /// The thread was (still) not runnable: the control thread published this end position.
    Forced(usize),
    /// The thread had already published its end position itself.
    AlreadyStopped(usize),
    /// The thread became runnable before the lock was taken, or the lock was refused: it will
    /// answer the doorbell, or the next poll tries again.
    Runnable,
    /// Tracing was not on.
    NotTracing,
}

/// Control: stops a thread that cannot answer the doorbell because it is not running managed
/// code. Takes the state lock, RE-CHECKS the state under it (the thread may have become runnable
/// between the caller's check and the lock: it would then be writing slots concurrently), and
/// only then publishes the end position itself.
pub fn force_stop(block: &ThreadBlock, lock: &impl StateLock) -> ForceStop {
    if !lock.lock() {
        return ForceStop::Runnable;
    }
    let outcome = if lock.is_runnable() {
        ForceStop::Runnable
    } else if let Some(end) = poll_stopped(block) {
        ForceStop::AlreadyStopped(end)
    } else {
        // Under the lock the thread cannot run a trace point; its last slot writes happened
        // before its transition out of runnable, which the lock acquisition orders before us.
        let cursor = block.cursor.load(Ordering::Relaxed);
        if cursor == 0 {
            ForceStop::NotTracing
        } else {
            block.stop.store(cursor, Ordering::Relaxed);
            block.cursor.store(0, Ordering::Relaxed);
            ForceStop::Forced(cursor)
        }
    };
    // DMB ISH: the stop and cursor stores complete before the unlock lets the thread run again.
    fence(Ordering::SeqCst);
    lock.unlock();
    outcome
}

#[cfg(all(test, not(loom)))]
mod layout_tests {
    use super::*;

    // Each word sits at the index trace_point.h's BlockWord gives it (the C++ trace point's
    // `block[kStop]` is this struct's `stop`).
    #[test]
    fn the_words_are_where_arts_block_word_puts_them() {
        let b = ThreadBlock::default();
        let base = &b as *const ThreadBlock as usize;
        let at = |w: &AtomicUsize| {
            (w as *const AtomicUsize as usize - base) / core::mem::size_of::<usize>()
        };
        assert_eq!(
            [
                at(&b.cursor),
                at(&b.limit),
                at(&b.stop),
                at(&b.begin),
                at(&b.end)
            ],
            [
                BlockWord::kCursor,
                BlockWord::kLimit,
                BlockWord::kStop,
                BlockWord::kBegin,
                BlockWord::kEnd,
            ]
        );
    }
}
