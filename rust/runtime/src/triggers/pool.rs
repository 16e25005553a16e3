//! The detector's reads in many-thread mode (`docs/many-threads.md`): a pooled thread's records
//! are not one ring but its blocks in `seq` order, wherever the pool put them. A position is a
//! block's `seq` and a slot in it; a stretch runs from the position where the previous one
//! ended, through the thread's blocks between (found by their headers' `(tid, seq)`), up to the
//! position seen at the previous tick, as in ring mode (the module docs of [`super`]):
//!
//! * **Which blocks are the thread's.** Headers are read once per tick ([`Blocks`]). A tid comes
//!   back after its thread dies, and a dead thread's blocks stay in the pool with their
//!   `(tid, seq)`: only blocks taken at or after the ticket the pool's head had when this thread
//!   started ([`super::TraceSource::for_each_pooled_thread`]) are its own.
//! * **Laps.** A block is reused N − A tickets after its seal at the earliest, by a new take
//!   that rewrites its header (a new ticket, another `(tid, seq)`) before its slots. A block
//!   gone before the tick is a gap; the header of each block copied is read again after the
//!   copy, and one taken again meanwhile makes the reader start over.
//! * **Gaps.** A `seq` that has no block (a dropped record consumes one, a restart that found no
//!   room in its block skips one, a block may have been overwritten) means records are missing
//!   there: the stretch keeps what follows the last gap and the calls in progress are forgotten
//!   (`Stretch::lost`), as at a start record.
//! * **A thread between blocks** (cursor [`SEALED`]: its block ended and it has not taken the
//!   next, or the tick closed it as a lagging block) is at offset 0 of the block
//!   its `end` word numbers: everything before is in sealed blocks. A take under way may have
//!   put a block's address there already: the position is then unknown for this tick, and the
//!   reader waits.
//! * **Starting.** The backfill is the thread's newest blocks, up to [`BACKFILL_BLOCKS`], each
//!   older than the next, back to a gap.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use hubble_format::pool::{BLOCK_HEADER_SLOTS, H_CLOSE, H_IDENT, H_TICKET, SEALED};
use hubble_format::slot;

use super::{Instant, Place, Reader, Stretch, ThreadHandle};
use crate::block::{ThreadBlock, SLOT};
use crate::pool::Pool;
use crate::sync::{fence, AtomicU64, Ordering};

/// Blocks a backfill reads at most (256 KiB of 16 KiB blocks): as far back as a call that
/// began before the detector looked can be timed, and what every pooled thread's reader may
/// copy at once when the triggers are first set.
pub const BACKFILL_BLOCKS: u32 = 16;

/// A position in a thread's stream of blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pos {
    /// The block's `seq`.
    seq: u32,
    /// Data slots of that block before the position.
    off: usize,
    /// Whether the thread held the block when the position was seen (if not, `off` is 0 and the
    /// block may not exist yet).
    held: bool,
}

/// A pooled reader's place.
pub(super) struct PoolPlace {
    /// Where the next stretch begins (unused while the reader's next stretch is a backfill).
    from: Pos,
    /// The position seen at the previous tick: the next stretch ends there.
    seen: Pos,
}

/// Where a pooled thread is, from its words.
pub(super) enum At {
    /// Tracing off, or stopped (cursor 0): its reader is dropped and starts afresh later.
    Off,
    /// Not known this tick (a block take under way, or a header not visible yet).
    Unknown,
    /// Here.
    Pos(Pos),
}

fn load(a: &AtomicU64) -> u64 {
    // Relaxed: what it orders is argued in the module docs of `super` (the one-tick lag).
    a.load(Ordering::Relaxed)
}

/// The position of the pooled thread with words `block` and tid `tid`.
pub(super) fn position(p: &Pool, block: &ThreadBlock, tid: u32, since: u64) -> At {
    let cursor = block.cursor.load(Ordering::Relaxed);
    if cursor == 0 {
        return At::Off;
    }
    let g = p.geometry();
    let slots = p.slots();
    let first = slots.base + g.block_index(0) * SLOT;
    let block_bytes = g.block_slots * SLOT;
    let in_pool = |a: usize| a >= first && a <= first + g.blocks * block_bytes;
    if cursor == SEALED as usize {
        // Between blocks: `end` numbers the next one, unless a take has put an address there.
        let end = block.end.load(Ordering::Relaxed);
        return match u32::try_from(end) {
            Ok(seq) if !in_pool(end) => At::Pos(Pos {
                seq,
                off: 0,
                held: false,
            }),
            _ => At::Unknown,
        };
    }
    if !in_pool(cursor) || (cursor - first) % SLOT != 0 || cursor == first {
        return At::Unknown;
    }
    // A cursor at a block's end belongs to that block, not the next.
    let i = (cursor - first - SLOT) / block_bytes;
    let h = g.block_index(i);
    let data = slots.base + (h + BLOCK_HEADER_SLOTS) * SLOT;
    if cursor < data {
        return At::Unknown;
    }
    let (owner, seq) = slot::unpack(load(&slots.slots[h + H_IDENT]));
    let ticket = load(&slots.slots[h + H_TICKET]);
    if owner != tid || ticket < since {
        return At::Unknown; // the take's header is not visible yet
    }
    At::Pos(Pos {
        seq,
        off: (cursor - data) / SLOT,
        held: true,
    })
}

/// The pool's block headers, read once per tick: `(tid, seq)` → (block index, ticket) of every
/// block ever taken, the newest ticket kept where a tid came back.
pub(super) struct Blocks(HashMap<(u32, u32), (usize, u64)>);

impl Blocks {
    pub(super) fn of(p: &Pool) -> Blocks {
        let g = p.geometry();
        let slots = p.slots().slots;
        let mut map = HashMap::with_capacity(g.blocks);
        // A block never taken reads as tid 0's: no thread's.
        for i in 0..g.blocks {
            let h = g.block_index(i);
            let (tid, seq) = slot::unpack(load(&slots[h + H_IDENT]));
            let ticket = load(&slots[h + H_TICKET]);
            match map.entry((tid, seq)) {
                Entry::Vacant(e) => {
                    e.insert((i, ticket));
                }
                Entry::Occupied(mut e) => {
                    if e.get().1 < ticket {
                        e.insert((i, ticket));
                    }
                }
            }
        }
        Blocks(map)
    }

    /// Block `seq` of the thread `tid` started at ticket `since`.
    fn find(&self, tid: u32, seq: u32, since: u64) -> Option<(usize, u64)> {
        self.0
            .get(&(tid, seq))
            .copied()
            .filter(|&(_, t)| t >= since)
    }
}

/// Copies the pooled thread's new stretch into `buf` (see [`super::ring::copy`]); `at` is where
/// the thread is now.
#[allow(clippy::too_many_arguments)]
pub(super) fn copy(
    reader: Entry<'_, ThreadHandle, Reader>,
    buf: &mut Vec<u64>,
    p: &Pool,
    blocks: &Blocks,
    tid: u32,
    since: u64,
    at: At,
    now: Instant,
    timer: &impl Fn() -> u64,
) -> Option<Stretch> {
    let At::Pos(at) = at else {
        return None; // read next tick, up to the same position as now
    };
    let thread = *reader.key();
    let fresh = || {
        let place = PoolPlace { from: at, seen: at };
        Reader::at(Place::Pool(place), now, timer())
    };
    let r = super::existing(reader, fresh)?;
    let Place::Pool(place) = &mut r.place else {
        *r = fresh();
        return None;
    };
    let from = match r.backfill {
        Some(_) => backfill_start(blocks, tid, since, place.seen),
        None => place.from,
    };
    let start = buf.len();
    let Some(lost) = read(p, blocks, tid, since, from, place.seen, buf) else {
        buf.truncate(start);
        *r = fresh();
        return None;
    };
    place.from = place.seen;
    place.seen = at;
    Some(r.copied(thread, start, buf.len(), lost, now))
}

/// Whether `a` is before `b` in the thread's stream.
fn behind(a: Pos, b: Pos) -> bool {
    let ahead = a.seq.wrapping_sub(b.seq);
    ahead > i32::MAX as u32 || (ahead == 0 && a.off < b.off)
}

/// Where a backfill ending at `to` starts: offset 0 of the oldest of the thread's blocks
/// before it, back to a gap and at most [`BACKFILL_BLOCKS`] in all.
fn backfill_start(blocks: &Blocks, tid: u32, since: u64, to: Pos) -> Pos {
    let mut first = Pos { off: 0, ..to };
    for _ in 1..BACKFILL_BLOCKS {
        let seq = first.seq.wrapping_sub(1);
        if blocks.find(tid, seq, since).is_none() {
            break;
        }
        first = Pos {
            seq,
            off: 0,
            held: true,
        };
    }
    first
}

/// Copies the thread's slots from `from` to `to` into `buf` (its end). Some(whether records were
/// missing between: what precedes the last gap is not kept), or None if a block was taken again
/// while it was copied.
fn read(
    p: &Pool,
    blocks: &Blocks,
    tid: u32,
    since: u64,
    from: Pos,
    to: Pos,
    buf: &mut Vec<u64>,
) -> Option<bool> {
    if behind(to, from) {
        return None;
    }
    let g = p.geometry();
    let slots = p.slots();
    let start = buf.len();
    // (header slot, ident, ticket) of every block copied, looked at again after the copy.
    let mut copied: Vec<(usize, u64, u64)> = Vec::new();
    let n = to.seq.wrapping_sub(from.seq);
    // The pool holds at most N blocks: of a longer way (a stale or corrupt word may make it
    // 2^31 blocks), only the last N can still be there.
    let skip = n.saturating_sub(g.blocks as u32);
    let mut lost = skip > 0;
    for k in skip..=n {
        let seq = from.seq.wrapping_add(k);
        let last = k == n;
        let found = blocks.find(tid, seq, since);
        let range = found.and_then(|(i, _)| {
            let h = g.block_index(i);
            let lo = if k == 0 { from.off } else { 0 };
            let hi = if last {
                to.off
            } else {
                closed_len(slots.slots, slots.base, h, g.data_slots())?
            };
            (lo <= hi).then_some((h, lo, hi))
        });
        let (Some((_, ticket)), Some((h, lo, hi))) = (found, range) else {
            if last && !to.held {
                break; // the block the thread had not taken yet
            }
            // Dropped, skipped, overwritten, or not closed: what it held is missing.
            lost = true;
            buf.truncate(start);
            continue;
        };
        let data = h + BLOCK_HEADER_SLOTS;
        buf.extend(slots.slots[data + lo..data + hi].iter().map(load));
        copied.push((h, slot::pack(tid, seq), ticket));
    }
    // The copy's loads before the second look at the headers: a take that began while copying
    // has rewritten the header before the slots.
    fence(Ordering::Acquire);
    let intact = copied.iter().all(|&(h, ident, ticket)| {
        load(&slots.slots[h + H_IDENT]) == ident && load(&slots.slots[h + H_TICKET]) == ticket
    });
    intact.then_some(lost)
}

/// Data slots written in the sealed block whose header is slot `h` (None: open, or a `close`
/// outside the block).
fn closed_len(slots: &[AtomicU64], base: usize, h: usize, data_slots: usize) -> Option<usize> {
    let close = load(&slots[h + H_CLOSE]) as usize;
    let data = base + (h + BLOCK_HEADER_SLOTS) * SLOT;
    let len = close.checked_sub(data)?;
    (len % SLOT == 0 && len / SLOT <= data_slots).then_some(len / SLOT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool;
    use hubble_format::pool::Geometry;
    use hubble_format::slot::Mode;

    const G: Geometry = Geometry {
        blocks: 16,
        block_slots: 5 + 9,
        active: 4,
    };

    /// `blocks` blocks' worth of one-slot records on `b` as tid `tid`.
    fn write(p: &Pool, b: &ThreadBlock, tid: u32, blocks: usize) {
        for i in 0..blocks * 4 {
            assert!(pool::trace_entry(b, p, tid, 0x1000, i as u64));
            assert!(pool::trace_exit(b, p, tid, i as u64));
        }
    }

    fn pos(p: &Pool, b: &ThreadBlock, tid: u32, since: u64) -> Pos {
        match position(p, b, tid, since) {
            At::Pos(at) => at,
            _ => panic!("no position"),
        }
    }

    /// A tid comes back: the dead thread's blocks keep their `(tid, seq)`, and the new thread,
    /// whose numbering starts elsewhere, must not take them for its own older blocks.
    #[test]
    fn a_backfill_stops_at_the_blocks_an_earlier_thread_of_its_tid_left() {
        let p = Pool::new(Mode::Bits64, G).unwrap();
        let dead = ThreadBlock::default();
        pool::start(&dead, &p, 0);
        write(&p, &dead, 42, 4);
        pool::thread_exit(&dead, &p);
        // The same tid again, numbered from 5 on (seq 4 is left to neither).
        let since = pool::head(&p);
        let b = ThreadBlock::default();
        pool::start(&b, &p, 5);
        write(&p, &b, 42, 2);
        let blocks = Blocks::of(&p);
        let at = pos(&p, &b, 42, since);
        assert_eq!(at.seq, 6);
        assert!(blocks.find(42, 3, since).is_none(), "the dead thread's");
        assert!(
            blocks.find(42, 3, 0).is_some(),
            "which the pool still holds"
        );
        assert_eq!(backfill_start(&blocks, 42, since, at).seq, 5);
        // A new thread numbered on from the dead one's last block: still not its own.
        let b2 = ThreadBlock::default();
        let since2 = pool::head(&p);
        pool::start(&b2, &p, 4);
        write(&p, &b2, 7, 1);
        let blocks = Blocks::of(&p);
        let at = pos(&p, &b2, 7, since2);
        assert_eq!(backfill_start(&blocks, 7, since2, at).seq, at.seq);
        // A third thread of tid 42, numbered from 0 as a new thread is: its block 0, not the
        // dead thread's, which the pool still holds.
        let b3 = ThreadBlock::default();
        let since3 = pool::head(&p);
        pool::start(&b3, &p, 0);
        write(&p, &b3, 42, 1);
        let blocks = Blocks::of(&p);
        assert_eq!(pos(&p, &b3, 42, since3).seq, 0);
        let (i, ticket) = blocks.find(42, 0, since3).expect("its block 0");
        assert!(ticket >= since3 && i != 0, "block {i}, ticket {ticket}");
    }

    /// Positions: in a block (the cursor at its end too), between blocks (the next `seq`), off.
    #[test]
    fn a_threads_position_follows_its_words() {
        let p = Pool::new(Mode::Bits64, G).unwrap();
        let b = ThreadBlock::default();
        assert!(matches!(position(&p, &b, 9, 0), At::Off));
        pool::start(&b, &p, 3);
        assert_eq!(
            pos(&p, &b, 9, 0),
            Pos {
                seq: 3,
                off: 0,
                held: false
            }
        );
        for i in 0..8 {
            assert!(pool::trace_entry(&b, &p, 9, 0x1000, i));
            let at = pos(&p, &b, 9, 0);
            assert_eq!((at.seq, at.off), (3, i as usize + 1), "{i}");
            assert!(at.held);
        }
        assert!(pool::trace_entry(&b, &p, 9, 0x1000, 9));
        assert_eq!(
            pos(&p, &b, 9, 0),
            Pos {
                seq: 4,
                off: 1,
                held: true
            }
        );
        assert!(
            matches!(position(&p, &b, 10, 0), At::Unknown),
            "another tid's header"
        );
        assert!(
            matches!(position(&p, &b, 9, 2), At::Unknown),
            "a header from before the thread started"
        );
        // 32-bit: the limit is the block's end, which a cursor reaches.
        let p = Pool::new(Mode::Bits32, G).unwrap();
        let b = ThreadBlock::default();
        pool::start(&b, &p, 0);
        for i in 0..9 {
            assert!(pool::trace_exit(&b, &p, 9, i));
        }
        assert_eq!(
            pos(&p, &b, 9, 0),
            Pos {
                seq: 0,
                off: 9,
                held: true
            }
        );
    }

    /// Words a race or a corruption could leave: nothing is read outside a block, nothing
    /// panics; a cursor that is not a data slot of a block is no position, a `close` outside its
    /// block (or below where the reader is) is a gap.
    #[test]
    fn corrupt_words_are_never_read_out_of_a_block() {
        let p = Pool::new(Mode::Bits64, G).unwrap();
        let b = ThreadBlock::default();
        pool::start(&b, &p, 0);
        write(&p, &b, 9, 2);
        assert!(pool::trace_entry(&b, &p, 9, 0x1000, 0)); // the first slot of block 2
        let s = p.slots();
        let header = |i: usize| s.base + G.block_index(i) * SLOT;
        let data = |i: usize| header(i) + BLOCK_HEADER_SLOTS * SLOT;
        let real = b.cursor.load(Ordering::Relaxed);
        // (The end of block 0, where block 1's header starts, is a position: a 32-bit cursor
        // reaches it.)
        for bad in [
            header(1) + SLOT,
            header(1) + 3 * SLOT,
            data(1) + 4,
            header(0),
            s.base,
        ] {
            b.cursor.store(bad, Ordering::Relaxed);
            assert!(matches!(position(&p, &b, 9, 0), At::Unknown), "{bad:#x}");
        }
        b.cursor.store(real, Ordering::Relaxed);
        let blocks = Blocks::of(&p);
        let from = Pos {
            seq: 0,
            off: 5,
            held: true,
        };
        let to = pos(&p, &b, 9, 0);
        assert_eq!(to.seq, 2);
        let close = &s.slots[G.block_index(0) + H_CLOSE];
        let good = close.load(Ordering::Relaxed);
        let mut buf = Vec::new();
        assert_eq!(read(&p, &blocks, 9, 0, from, to, &mut buf), Some(false));
        assert_eq!(buf.len(), 3 + 8 + to.off);
        for bad in [
            data(0) + 10 * SLOT,
            data(0) - SLOT,
            data(0) + 6 * SLOT + 4,
            data(0) + 4 * SLOT,
            0,
        ] {
            close.store(bad as u64, Ordering::Relaxed);
            buf.clear();
            assert_eq!(
                read(&p, &blocks, 9, 0, from, to, &mut buf),
                Some(true),
                "close {bad:#x}"
            );
            assert_eq!(buf.len(), 8 + to.off, "what follows the gap");
        }
        close.store(good, Ordering::Relaxed);
    }

    /// Two positions 2^31 − 1 blocks apart (a stale or corrupt word): only the last N `seq`s
    /// are looked up, and the way is a gap.
    #[test]
    fn a_way_longer_than_the_pool_is_a_gap_not_a_walk() {
        let p = Pool::new(Mode::Bits64, G).unwrap();
        let b = ThreadBlock::default();
        pool::start(&b, &p, 0);
        write(&p, &b, 9, 2);
        let blocks = Blocks::of(&p);
        let to = pos(&p, &b, 9, 0);
        let from = Pos {
            seq: to.seq.wrapping_sub(i32::MAX as u32),
            off: 0,
            held: true,
        };
        let mut buf = Vec::new();
        assert_eq!(read(&p, &blocks, 9, 0, from, to, &mut buf), Some(true));
        assert_eq!(
            buf.len(),
            8 + to.off,
            "block 0 whole, then block 1 to the cursor"
        );
    }
}
