//! The detector's reads in ring mode: a thread's records are one ring, read from the slot
//! after the previous stretch up to the cursor seen at the previous tick, a lap told by the
//! sentinel slot below the stretch (the module docs of [`super`]).

use std::collections::hash_map::Entry;

use super::{Instant, Place, Reader, Stretch, ThreadHandle};
use crate::block::{Slots, ThreadBlock, SLOT};
use crate::sync::{fence, Ordering};

/// A reader's position in a ring.
pub(super) struct RingPlace {
    /// The ring's run (`Traced::run`): a reclaimed ring may come back to another thread, or to
    /// this one, cleared and restarted from slot 0 at the same address.
    run: u64,
    /// Next slot to read.
    from: usize,
    /// The cursor (slot index) seen at the previous tick: read up to here next.
    seen: usize,
    /// The slot before `from` and its value: if it changes, the writer has come round.
    sentinel: Option<(usize, u64)>,
}

impl Reader {
    /// Starts (or restarts) reading a ring whose cursor is at slot `at`, seen at `now`;
    /// `after` is a timer read after the cursor. The first stretch, read at the next tick, is
    /// the newest half ring before `at` (back to the last start record in it): a call that
    /// began before the detector looked, or before it lost its place, is timed too. Half a
    /// ring, so that the writer has to fill the other half before the next tick to spoil it.
    fn ring(
        run: u64,
        len: usize,
        at: usize,
        now: Instant,
        after: u64,
        load: impl Fn(usize) -> u64,
    ) -> Reader {
        let from = (at + len - len / 2) % len;
        let before = (from + len - 1) % len;
        Reader::at(
            Place::Ring(RingPlace {
                run,
                from,
                seen: at,
                // Far below the cursor: written long ago, visible.
                sentinel: Some((before, load(before))),
            }),
            now,
            after,
        )
    }
}

/// Copies the thread's new stretch of its ring into `buf`: the slots from where the previous
/// one ended up to the cursor seen at the previous tick. `at` is the cursor now. None when the
/// reader starts (again): its first stretch, next tick, is a backfill.
pub(super) fn copy(
    reader: Entry<'_, ThreadHandle, Reader>,
    buf: &mut Vec<u64>,
    slots: Slots<'_>,
    run: u64,
    at: usize,
    now: Instant,
    timer: &impl Fn() -> u64,
) -> Option<Stretch> {
    let thread = *reader.key();
    let n = slots.slots.len();
    let load = |i: usize| slots.slots[i].load(Ordering::Relaxed);
    let fresh = || Reader::ring(run, n, at, now, timer(), load);
    let r = super::existing(reader, fresh)?;
    let Place::Ring(p) = &mut r.place else {
        *r = fresh();
        return None;
    };
    // Whether the slot before the stretch is as it was (no lap, no clear).
    let intact = |p: &RingPlace| match p.sentinel {
        None => true,
        Some((i, v)) => load(i) == v,
    };
    if p.run != run || !intact(p) {
        *r = fresh();
        return None;
    }
    let start = buf.len();
    let count = (p.seen + n - p.from) % n;
    buf.extend((0..count).map(|j| load((p.from + j) % n)));
    // The stretch's loads before the second look at the sentinel: a lap that began while
    // copying has rewritten the sentinel before it reached the stretch.
    fence(Ordering::Acquire);
    if !intact(p) {
        buf.truncate(start);
        *r = fresh();
        return None;
    }
    // The slot below the previous tick's cursor is visible by now: the next look at it tells
    // whether the writer came round.
    let before = (p.seen + n - 1) % n;
    p.sentinel = Some((before, load(before)));
    p.from = p.seen;
    p.seen = at;
    Some(r.copied(thread, start, buf.len(), false, now))
}

/// The thread's cursor as a slot index, if tracing is on and it points into this ring.
pub(super) fn cursor_index(block: &ThreadBlock, slots: Slots<'_>) -> Option<usize> {
    // Relaxed: what it orders is argued in the module docs (the one-tick lag).
    let cursor = block.cursor.load(Ordering::Relaxed);
    if cursor <= slots.base || cursor > slots.end() || (cursor - slots.base) % SLOT != 0 {
        return None;
    }
    Some(((cursor - slots.base) / SLOT) % slots.slots.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cursor_counts_only_inside_its_ring_and_on_a_slot() {
        let slots: Vec<crate::sync::AtomicU64> =
            (0..4).map(|_| crate::sync::AtomicU64::new(0)).collect();
        let ring = Slots {
            base: 0x1000,
            slots: &slots,
        };
        let at = |cursor: usize| {
            let block = ThreadBlock::default();
            block.cursor.store(cursor, crate::sync::Ordering::Relaxed);
            cursor_index(&block, ring)
        };
        assert_eq!(at(0), None, "tracing off");
        assert_eq!(at(0x1000), None, "no record yet");
        assert_eq!(at(0x1008), Some(1));
        assert_eq!(at(0x1018), Some(3));
        assert_eq!(
            at(0x1020),
            Some(0),
            "after the last slot: the next record wraps"
        );
        assert_eq!(at(0x1028), None, "past the ring");
        assert_eq!(at(0x1004), None, "not on a slot");
        assert_eq!(at(0x0ff8), None, "below the ring");
    }
}
