//! Time anchors at a traced thread's idle gaps.
//!
//! A record keeps only the low 32 bits of the counter; the decoder recovers the rest walking
//! back from the flush's reference, which is exact while consecutive records are less than
//! 2^32 ticks apart: 4.3 s at 1 GHz (mandatory from Armv8.6), 175 s at 24.576 MHz. A UI thread
//! waiting in `nativePollOnce`, or blocked on a monitor until an ANR, writes nothing for far
//! longer. The trace points cannot afford a wider record, so the control thread, which ticks
//! every [`crate::TICK`] anyway, watches the cursors instead:
//!
//! * a cursor seen unchanged at two ticks in a row marks a gap of at least a tick; the counter
//!   read when that cursor was first seen (plus [`margin`]) bounds the record before it from
//!   above, less than a tick after it was written, however long the gap then lasts;
//! * the flush turns the anchors still inside its window into
//!   [`TimeAnchor`](hubble_format::TimeAnchor)s (`slots after` the anchor, bound) for the file;
//!   the decoder restarts its backward walk from the bound there, as it starts from the
//!   reference at the end.
//!
//! In many-thread mode the cursor moves through the pool's blocks: the same watch runs over the
//! pool's words, and the flush places each anchor in the thread's runs through the block its
//! cursor was in ([`Anchors::for_pool`]).
//!
//! Nothing here stores to the thread's block or ring. Whether an anchor still describes the
//! window is checked through the slot before its cursor (the sentinel): a lap rewrites it with
//! a different timestamp. A stale first read of that slot (its store not yet visible, as
//! `docs/protocol.md` allows) only makes the two reads disagree, and the anchor is then taken a
//! tick later, still a valid bound.

use std::collections::VecDeque;

use hubble_format::pool::{ThreadStream, BLOCK_HEADER_SLOTS, POOL_HEADER_SLOTS};
use hubble_format::TimeAnchor;

use crate::block::{Slots, SLOT};
use crate::sync::Ordering;

/// Anchors kept per traced thread: each is an idle gap of at least a tick, so this covers any
/// window with fewer than 4096 such gaps (≥ 17 min of them); older ones are dropped first.
pub const MAX_ANCHORS: usize = 4096;

/// One idle gap: the cursor address, the bound, and the slot before the cursor as it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Anchor {
    cursor: usize,
    bound: u64,
    sentinel: u64,
}

/// A cursor as one tick saw it.
#[derive(Clone, Copy, Debug)]
struct Seen {
    cursor: usize,
    at: u64,
    sentinel: u64,
}

/// The anchors of one traced ring.
#[derive(Debug, Default)]
pub struct Anchors {
    seen: Option<Seen>,
    list: VecDeque<Anchor>,
}

/// How much later than the counter read after loading a cursor a record before that cursor can
/// carry: the trace point's counter read and the control thread's are not ordered with the
/// cursor by any barrier (on ARM, `CNTVCT_EL0` reads may be taken early). 1 ms of ticks is
/// far beyond any reordering and far below the 2^32 ticks the bound must stay within.
pub fn margin(timer_hz: u64) -> u64 {
    (timer_hz / 1000).max(1)
}

impl Anchors {
    /// One tick's look at the ring: `cursor` (the block's, loaded with acquire ordering; 0 =
    /// tracing off), then `now`, the counter read after it.
    pub fn observe(&mut self, slots: Slots<'_>, cursor: usize, now: u64, margin: u64) {
        if cursor < slots.base || cursor > slots.end() {
            self.seen = None;
            return;
        }
        let sentinel = slot_before(slots, cursor);
        match self.seen {
            Some(s) if s.cursor == cursor && s.sentinel == sentinel => {
                // Once per gap; the same address a lap later, idle again, is a new gap (its
                // sentinel differs).
                let last = self.list.back().map(|a| (a.cursor, a.sentinel));
                if last != Some((cursor, sentinel)) {
                    if self.list.len() == MAX_ANCHORS {
                        self.list.pop_front();
                    }
                    self.list.push_back(Anchor {
                        cursor,
                        bound: s.at.saturating_add(margin),
                        sentinel,
                    });
                }
            }
            _ => {
                self.seen = Some(Seen {
                    cursor,
                    at: now,
                    sentinel,
                })
            }
        }
    }

    /// Forgets everything: tracing (re)started, the ring's old positions are behind a start
    /// record now.
    pub fn clear(&mut self) {
        self.seen = None;
        self.list.clear();
    }

    /// The anchors inside a flushed `window` (the copy of the ring's last `window.len()` slots
    /// before the stop position `end`, a ring address), newest first, as the file stores them.
    pub fn for_window(&self, slots: Slots<'_>, end: usize, window: &[u64]) -> Vec<TimeAnchor> {
        let ring = slots.slots.len();
        let end_index = slots.offset(end) / SLOT;
        let mut out: Vec<TimeAnchor> = Vec::new();
        for a in self.list.iter().rev() {
            let index = slots.offset(a.cursor) / SLOT % ring;
            let after = (end_index + ring - index) % ring;
            // The record before the anchor must be in the window, and still the one the anchor
            // saw (no lap since).
            let Some(before) = window.len().checked_sub(after + 1) else {
                continue;
            };
            if window[before] != a.sentinel {
                continue;
            }
            push_older(&mut out, after as u64, a.bound);
        }
        out
    }

    /// Many-thread mode: the anchors of a thread whose cursor moves through the pool's blocks,
    /// placed in its `runs` (its streams from `thread_streams`, oldest first, as the v4 file
    /// lays them end to end), newest first. `snapshot` is the flush's copy of the pool, whose
    /// first word is at `base` and whose blocks are `block_slots` words long. An anchor counts
    /// only while the slot before its cursor is the one it saw (the block was not taken again
    /// since) and its block is in one of the runs with that slot written.
    pub fn for_pool(
        &self,
        base: usize,
        block_slots: usize,
        snapshot: &[u64],
        runs: &[&ThreadStream],
    ) -> Vec<TimeAnchor> {
        let first_block = base + POOL_HEADER_SLOTS * SLOT;
        let total: usize = runs.iter().map(|r| r.slots.len()).sum();
        let mut out: Vec<TimeAnchor> = Vec::new();
        for a in self.list.iter().rev() {
            let Some(rel) = a.cursor.checked_sub(first_block) else {
                continue;
            };
            let (index, word) = (rel / SLOT / block_slots, rel / SLOT % block_slots);
            let Some(data) = word.checked_sub(BLOCK_HEADER_SLOTS) else {
                continue; // a cursor never points into a header
            };
            let before = (a.cursor - base) / SLOT - 1;
            if snapshot.get(before) != Some(&a.sentinel) {
                continue;
            }
            let Some(at) = position(runs, index, data) else {
                continue;
            };
            push_older(&mut out, (total - at) as u64, a.bound);
        }
        out
    }

    /// Anchors kept (for tests).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.list.len()
    }
}

/// Appends an anchor `slots_after` from the end with `bound` to `out`, which is newest first:
/// only if it lies further back than the last one (an older position was seen earlier), and
/// with a bound no later than the last one's (a later bound on an older record would be a weaker
/// one anyway, and the file format requires bounds not to increase).
fn push_older(out: &mut Vec<TimeAnchor>, slots_after: u64, bound: u64) {
    if out.last().is_some_and(|n| n.slots_after >= slots_after) {
        return;
    }
    let bound = out.last().map_or(bound, |n| n.bound.min(bound));
    out.push(TimeAnchor { slots_after, bound });
}

/// Where data slot `data` of pool block `index` is in `runs` laid end to end, if a run holds
/// that block with at least `data` slots written.
fn position(runs: &[&ThreadStream], index: usize, data: usize) -> Option<usize> {
    let mut start = 0;
    for r in runs {
        let mut at = start;
        for b in &r.blocks {
            if b.index == index {
                return (data <= b.used).then_some(at + data);
            }
            at += b.used;
        }
        start += r.slots.len();
    }
    None
}

/// The slot before `cursor`, wrapping at the ring's start.
fn slot_before(slots: Slots<'_>, cursor: usize) -> u64 {
    let n = slots.slots.len();
    let i = (slots.offset(cursor) / SLOT + n - 1) % n;
    slots.slots[i].load(Ordering::Relaxed)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::AtomicU64;

    fn ring(n: usize) -> Vec<AtomicU64> {
        (0..n).map(|_| AtomicU64::new(0)).collect()
    }

    const BASE: usize = 0x1000;

    /// `cells` as a ring at [`BASE`].
    fn at_base(cells: &[AtomicU64]) -> Slots<'_> {
        Slots {
            base: BASE,
            slots: cells,
        }
    }

    /// The address of slot `i` of a ring at [`BASE`].
    fn at(i: usize) -> usize {
        BASE + i * SLOT
    }

    /// The ring's words from slot `cursor` round to the one before it: the window of a thread
    /// whose cursor is there, oldest first.
    fn window_from(cells: &[AtomicU64], cursor: usize) -> Vec<u64> {
        (0..cells.len())
            .map(|i| cells[(cursor + i) % cells.len()].load(Ordering::Relaxed))
            .collect()
    }

    #[test]
    fn an_idle_gap_at_an_address_used_a_lap_before_is_a_new_anchor() {
        let cells = ring(8);
        let slots = at_base(&cells);
        let mut a = Anchors::default();
        cells[2].store(0x10_0000_0000, Ordering::Relaxed);
        a.observe(slots, at(3), 100, 5);
        a.observe(slots, at(3), 200, 5);
        a.observe(slots, at(3), 300, 5);
        assert_eq!(a.len(), 1, "one gap, one anchor");
        // A lap later the thread idles at the same address again: another record below it.
        cells[2].store(0x20_0000_0000, Ordering::Relaxed);
        a.observe(slots, at(3), 900, 5);
        a.observe(slots, at(3), 1000, 5);
        assert_eq!(a.len(), 2);
        // Only the newer one describes a window ending there; the older one's record is gone.
        let window = window_from(&cells, 3);
        let got = a.for_window(slots, at(3), &window);
        assert_eq!(
            got,
            [TimeAnchor {
                slots_after: 0,
                bound: 905
            }]
        );
    }

    // A restart forgets the gaps seen before it, even where the thread idles again at the same
    // address over the same bits (the same method, and a timestamp 2^32 ticks later: 224 s at
    // 19.2 MHz): the gap after the restart gets its own, later bound, never the old one, which
    // is earlier than the record now before that address.
    #[test]
    fn a_restart_forgets_the_gaps_before_it() {
        let cells = ring(8);
        let slots = at_base(&cells);
        let mut a = Anchors::default();
        cells[2].store(0x10_7000_0040, Ordering::Relaxed);
        a.observe(slots, at(3), 100, 5);
        a.observe(slots, at(3), 200, 5);
        assert_eq!(a.len(), 1);
        // The flush restarts the thread; it comes round and idles there again, same bits.
        a.clear();
        assert_eq!(a.len(), 0);
        a.observe(slots, at(3), 7000, 5);
        a.observe(slots, at(3), 7100, 5);
        let window = window_from(&cells, 3);
        assert_eq!(
            a.for_window(slots, at(3), &window),
            [TimeAnchor {
                slots_after: 0,
                bound: 7005
            }]
        );
    }

    #[test]
    fn only_a_cursor_inside_the_ring_is_a_position() {
        let cells = ring(8);
        let slots = at_base(&cells);
        let twice = |cursor: usize| {
            let mut a = Anchors::default();
            a.observe(slots, cursor, 100, 5);
            a.observe(slots, cursor, 200, 5);
            a.len()
        };
        // Tracing off (0), and what no ring position can be.
        assert_eq!(twice(0), 0);
        assert_eq!(twice(slots.base - SLOT), 0);
        assert_eq!(twice(slots.end() + SLOT), 0);
        // Every position, the first slot to one past the last (a full 32-bit ring) included.
        for i in 0..=8 {
            assert_eq!(twice(at(i)), 1, "slot {i}");
        }
    }

    /// `for_pool` by hand: a thread's two runs (blocks 3 then 1, then block 0 after a gap),
    /// blocks of 5 data slots after 5 header words, at 0x1000 after the pool's 6 header words.
    #[test]
    fn pool_anchors_are_placed_in_the_runs_laid_end_to_end() {
        use hubble_format::pool::BlockInfo;
        let (base, block_slots) = (0x1000usize, 10usize);
        let word = |block: usize, data: usize| POOL_HEADER_SLOTS + block * block_slots + 5 + data;
        let cursor = |block: usize, data: usize| base + word(block, data) * SLOT;
        let snapshot: Vec<u64> = (0..POOL_HEADER_SLOTS + 4 * block_slots)
            .map(|w| 0x100 + w as u64)
            .collect();
        let info = |index: usize, used: usize| BlockInfo {
            index,
            tid: 9,
            seq: 0,
            ticket: 0,
            time: 0,
            used,
        };
        let stream = |blocks: Vec<BlockInfo>| ThreadStream {
            tid: 9,
            slots: vec![0; blocks.iter().map(|b| b.used).sum()],
            blocks,
        };
        let runs = [
            stream(vec![info(3, 4), info(1, 2)]),
            stream(vec![info(0, 3)]),
        ];
        let runs: Vec<&ThreadStream> = runs.iter().collect();
        let anchor = |c: usize, bound: u64| Anchor {
            cursor: c,
            bound,
            sentinel: snapshot[(c - base) / SLOT - 1],
        };
        let mut a = Anchors::default();
        a.list.extend([
            // Oldest first: position 2 of 9 (block 3's second slot written), ...
            anchor(cursor(3, 2), 100),
            // ... dropped: block 2 is not the thread's; block 1 has 2 slots written, not 3;
            // the slot before the cursor changed since; a cursor on a header word.
            anchor(cursor(2, 1), 150),
            anchor(cursor(1, 3), 150),
            Anchor {
                sentinel: 7,
                ..anchor(cursor(3, 3), 150)
            },
            anchor(base + word(1, 0) * SLOT - SLOT, 150),
            // ... the end of block 1 (position 6), then block 0's first slot (position 7).
            anchor(cursor(1, 2), 200),
            anchor(cursor(0, 1), 300),
        ]);
        let t = |slots_after, bound| TimeAnchor { slots_after, bound };
        assert_eq!(
            a.for_pool(base, block_slots, &snapshot, &runs),
            vec![t(2, 300), t(3, 200), t(7, 100)]
        );
    }
}
