//! Decoded events with full timer values: what exporters and analyses consume.

use alloc::vec::Vec;

use crate::ring::{self, DecodeError, RingView, Walked, WindowStart};
use crate::slot::Mode;
use crate::time::{self, TimeBase, TimeError};

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A method was entered.
    Entry {
        /// The `ArtMethod*`.
        method: u64,
    },
    /// The innermost open method returned (normally or by exception).
    Exit,
    /// Tracing started.
    Start,
    /// The method just entered submitted or began a task (never from [`EventIter`], which
    /// yields method events only).
    Task {
        /// Submit or begin.
        kind: crate::slot::TaskKind,
        /// The task's identity hash.
        task: u32,
        /// The queue's identity hash (0: unknown).
        queue: u32,
    },
}

/// One event with its full 64-bit timer value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// Generic-timer count.
    pub counter: u64,
    /// What happened.
    pub kind: EventKind,
}

/// A decoded ring: events oldest first plus what the decoder learned about the window.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodedTrace {
    /// Events, oldest first.
    pub events: Vec<Event>,
    /// Where the window begins.
    pub start: WindowStart,
    /// Whether a half two-slot entry at the oldest end was dropped.
    pub dropped_half_record: bool,
    /// Pad slots skipped.
    pub pad_slots: usize,
}

/// Errors of [`decode_events`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EventsError {
    /// The ring could not be decoded.
    Decode(DecodeError),
    /// A timestamp could not be recovered.
    Time(TimeError),
}

impl core::fmt::Display for EventsError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            EventsError::Decode(e) => e.fmt(f),
            EventsError::Time(e) => e.fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for EventsError {}

/// Decodes a ring and recovers every timestamp from the flush-time reference counter (and the
/// window's [`TimeAnchor`](crate::time::TimeAnchor)s, given a [`TimeBase`]), in one backward
/// pass (the walk and Fig. 3's recovery both go from newest to oldest).
pub fn decode_events<'t>(
    view: &RingView<'_>,
    mode: Mode,
    time: impl Into<TimeBase<'t>>,
) -> Result<DecodedTrace, EventsError> {
    decode_events_into(view, mode, time, Vec::new())
}

/// [`decode_events`] into a caller's buffer (cleared first), so repeated decodes (a tool going
/// through many files, a runtime flushing again and again) reuse memory already faulted in.
pub fn decode_events_into<'t>(
    view: &RingView<'_>,
    mode: Mode,
    time: impl Into<TimeBase<'t>>,
    mut events: Vec<Event>,
) -> Result<DecodedTrace, EventsError> {
    let time = time.into();
    events.clear();
    events.reserve(view.valid_slots());
    // Backwards, like Fig. 3: the walk and the timestamp recovery share one pass; one reverse
    // at the end is cheaper than the forward iterator's look-ahead per slot.
    let mut clock = time::BackwardClock::new(time.reference);
    let mut failed_at = None;
    let summary = ring::walk_back_anchored(view, mode, time.anchors, |step| {
        let record = match step {
            Walked::Record(record) => record,
            Walked::Anchor(i) => return clock.clamp(time.anchors[i].bound),
        };
        if failed_at.is_some() {
            return;
        }
        let Some(counter) = clock.step(record.ts()) else {
            failed_at = Some(events.len());
            return;
        };
        events.push(Event {
            counter,
            kind: record.into(),
        });
    })
    .map_err(EventsError::Decode)?;
    if let Some(newest_first) = failed_at {
        let mut total = 0usize;
        let _ = ring::walk_back(view, mode, |_| total += 1);
        return Err(EventsError::Time(TimeError::BeforeZero {
            index: total - 1 - newest_first,
        }));
    }
    events.reverse();
    Ok(DecodedTrace {
        events,
        start: summary.start,
        dropped_half_record: summary.dropped_half_record,
        pad_slots: summary.pad_slots,
    })
}

impl From<crate::slot::Record> for EventKind {
    #[inline(always)]
    fn from(record: crate::slot::Record) -> EventKind {
        match record {
            crate::slot::Record::Entry { method, .. } => EventKind::Entry { method },
            crate::slot::Record::Exit { .. } => EventKind::Exit,
            crate::slot::Record::Start { .. } => EventKind::Start,
            crate::slot::Record::Task {
                kind, task, queue, ..
            } => EventKind::Task { kind, task, queue },
        }
    }
}

/// Events in time order, one at a time, without materializing the window.
///
/// A backward walk (which only tracks timestamps) finds where the window begins and the full
/// timer value of its oldest record; from there the ring is read forwards. Forward reading is
/// unambiguous from a record boundary: a slot is the pointer half of a two-slot entry exactly
/// when the slot after it carries the marker 1 (a task record's payload: the marker 4).
/// Timestamps then recover forwards: the upper half stays the same unless the low half went
/// down, when it grows by one.
///
/// The forward pass decodes a batch of slots at a time into a small buffer, with no branch
/// that depends on the data: every slot yields a candidate event (a marker's method is the slot
/// before it) and is kept unless it is a pointer half, a pad or half of a task record. Task
/// records are not method events: [`decode_events`] yields them, this iterator skips them.
/// Entries and exits, wide and narrow, then cost the same, and a mix of them costs no
/// mispredictions.
#[derive(Clone)]
pub struct EventIter<'a> {
    older: &'a [u64],
    newer: &'a [u64],
    pos: usize,
    end: usize,
    /// The slot before `pos` (the pointer, when `pos` is a two-slot entry's marker).
    prev: u64,
    clock: ForwardClock,
    /// Decoded (counter, code) pairs: code 0 exit, 3 start, otherwise the method.
    buf: Vec<(u64, u64)>,
    len: usize,
    next: usize,
    summary: ring::WalkSummary,
    oldest: Option<u64>,
    /// Where the backward walk crossed an anchor: (slot index, full time of the first record
    /// from there on), in slot order. Forward recovery cannot see a gap longer than 2^32
    /// ticks; it restarts from these values instead.
    resets: Vec<(usize, u64)>,
    /// Index in `resets` of the next one ahead.
    next_reset: usize,
}

/// Slots decoded per batch: the buffer (16 bytes a slot) stays in the L1 cache.
const BATCH: usize = 1024;

/// Forward timestamp recovery (the mirror of [`time::BackwardClock`]).
#[derive(Clone, Copy, Debug)]
struct ForwardClock {
    upper: u64,
    low: u32,
}

impl ForwardClock {
    /// The full value of `ts` if `keep` (the state moves on), else of nothing (it stays).
    #[inline(always)]
    fn step(&mut self, ts: u32, keep: bool) -> u64 {
        let wrapped = keep & (ts < self.low);
        self.upper += u64::from(wrapped);
        // A mask, not an `if`: pointer halves (not kept) come in a data-dependent mix.
        let m = 0u32.wrapping_sub(u32::from(keep));
        self.low ^= (self.low ^ ts) & m;
        (self.upper << 32) | u64::from(ts)
    }
}

/// One slot read forwards: the candidate (counter, code) and whether it is an event. `prev` is
/// the slot before, `next` the slot after (0 past the end: not a marker). `TASKS`: whether the
/// window holds task records; a window without (almost every one) takes the loop that does not
/// look for them, which the two tests more cost ~10 % of the streaming decode.
#[inline(always)]
fn forward<const TASKS: bool>(
    clock: &mut ForwardClock,
    prev: u64,
    cur: u64,
    next: u64,
) -> ((u64, u64), bool) {
    let (hi, lo) = crate::slot::unpack(cur);
    // A marker's method is the slot before it; selected by a mask, as wide and narrow entries
    // come in a data-dependent mix.
    let wide = 0u64.wrapping_sub(u64::from(lo == crate::slot::WIDE_ENTRY));
    let code = u64::from(lo) ^ ((u64::from(lo) ^ prev) & wide);
    let next_lo = next as u32;
    let advance = (next_lo != crate::slot::WIDE_ENTRY) & (lo != crate::slot::PAD);
    if !TASKS {
        return ((clock.step(hi, advance), code), advance);
    }
    // A task record's marker moves the clock as the backward walk's does (both directions then
    // agree on every counter, whatever the ring holds) but is not a method event.
    let advance = advance & (next_lo != crate::slot::TASK);
    let keep = advance & (lo != crate::slot::TASK);
    ((clock.step(hi, advance), code), keep)
}

impl<'a> EventIter<'a> {
    /// Prepares iteration over `view`'s window; timestamps recover from the reference (and
    /// anchors) of `time`.
    pub fn new<'t>(
        view: &RingView<'a>,
        mode: Mode,
        time: impl Into<TimeBase<'t>>,
    ) -> Result<Self, EventsError> {
        Self::new_visiting(view, mode, time, |_| {})
    }

    /// [`EventIter::new`], whose backward walk also hands every record of the window to
    /// `visit`, newest first: a caller that needs a look at the whole window before iterating
    /// (how deep the stack is at its edges, which methods it names) gets it from the same walk.
    pub fn new_visiting<'t>(
        view: &RingView<'a>,
        mode: Mode,
        time: impl Into<TimeBase<'t>>,
        mut visit: impl FnMut(crate::slot::Record),
    ) -> Result<Self, EventsError> {
        let time = time.into();
        let reference = time.reference;
        let mut clock = time::BackwardClock::new(reference);
        let mut crossed = Vec::new();
        let mut count = 0usize;
        let mut failed_at = None;
        let summary = ring::walk_back_anchored(view, mode, time.anchors, |step| {
            let record = match step {
                Walked::Record(record) => record,
                Walked::Anchor(i) => {
                    // The full time of the oldest record after the anchor (or the reference):
                    // where the forward pass restarts.
                    let anchor = time.anchors[i];
                    crossed.push((anchor.slots_after, clock.value()));
                    return clock.clamp(anchor.bound);
                }
            };
            // Only the first failure matters (the result is then an error); the walk goes on
            // to count the records, which the error's index needs.
            if failed_at.is_none() && clock.step(record.ts()).is_none() {
                failed_at = Some(count);
            }
            visit(record);
            count += 1;
        })
        .map_err(EventsError::Decode)?;
        if let Some(newest_first) = failed_at {
            return Err(EventsError::Time(TimeError::BeforeZero {
                index: count - 1 - newest_first,
            }));
        }
        // The clock stands at the oldest record.
        let oldest = (count > 0).then(|| clock.value());
        let (older, newer) = view.pieces();
        let end = older.len() + newer.len();
        // The window is the last `slots_used` slots; a dropped half record is skipped.
        let pos = end - summary.slots_used + usize::from(summary.dropped_half_record);
        // The first step must land on the oldest counter: its upper half, and a low half no
        // larger than any timestamp.
        let upper = oldest.unwrap_or(reference) >> 32;
        // Newest first from the walk; slot order for the forward pass. (An anchor at the
        // window's end resets at `end`, which the forward pass never reaches.)
        let resets = crossed
            .into_iter()
            .rev()
            .map(|(after, value)| (end - after as usize, value))
            .collect();
        Ok(EventIter {
            older,
            newer,
            pos,
            end,
            prev: 0,
            clock: ForwardClock { upper, low: 0 },
            buf: Vec::new(),
            len: 0,
            next: 0,
            summary,
            oldest,
            resets,
            next_reset: 0,
        })
    }

    /// The full timer value of the window's oldest record (the first event), if any.
    pub fn oldest_counter(&self) -> Option<u64> {
        self.oldest
    }

    /// What the backward walk learned about the window.
    pub fn summary(&self) -> ring::WalkSummary {
        self.summary
    }

    fn slot(&self, i: usize) -> u64 {
        if i < self.older.len() {
            self.older[i]
        } else {
            self.newer[i - self.older.len()]
        }
    }

    /// The tight loop over `slots`, all but the last (whose successor is in another piece).
    #[inline(always)]
    fn tight<const TASKS: bool>(&mut self, slots: &[u64]) {
        let mut clock = self.clock;
        let mut prev = self.prev;
        let mut n = self.len;
        let out = &mut self.buf[..];
        for pair in slots.windows(2) {
            let (event, keep) = forward::<TASKS>(&mut clock, prev, pair[0], pair[1]);
            out[n] = event;
            n += usize::from(keep);
            prev = pair[0];
        }
        self.clock = clock;
        self.prev = prev;
        self.len = n;
    }

    /// Decodes the next batch of slots into the buffer.
    fn fill(&mut self) {
        if self.buf.is_empty() {
            self.buf = alloc::vec![(0, 0); BATCH + 1];
        }
        self.len = 0;
        self.next = 0;
        let mut stop = (self.pos + BATCH).min(self.end);
        // A batch ends at the next reset, so the tight loop below never has to look for one.
        while let Some(&(at, value)) = self.resets.get(self.next_reset) {
            if at > self.pos {
                stop = stop.min(at);
                break;
            }
            // The first step from here lands on `value` (its upper half, a low half no larger
            // than any timestamp), whatever went before.
            self.clock = ForwardClock {
                upper: value >> 32,
                low: 0,
            };
            self.next_reset += 1;
        }
        while self.pos < stop {
            let (piece, base) = if self.pos < self.older.len() {
                (self.older, 0)
            } else {
                (self.newer, self.older.len())
            };
            // Slots whose successor is in the same piece go through the tight loop; the last
            // slot of a piece looks at the other piece (or the end) on its own.
            let first = self.pos - base;
            let last = (stop - base).min(piece.len() - 1);
            if first < last {
                let slots = &piece[first..=last];
                if self.summary.task_records > 0 {
                    self.tight::<true>(slots);
                } else {
                    self.tight::<false>(slots);
                }
                self.pos = base + last;
            } else {
                let cur = self.slot(self.pos);
                let next = if self.pos + 1 < self.end {
                    self.slot(self.pos + 1)
                } else {
                    0
                };
                // The slower, task-aware step is as good here: one slot per piece end.
                let (event, keep) = forward::<true>(&mut self.clock, self.prev, cur, next);
                self.buf[self.len] = event;
                self.len += usize::from(keep);
                self.prev = cur;
                self.pos += 1;
            }
        }
    }
}

impl EventIter<'_> {
    /// Up to `max` next events packed as (counter, code), code [`slot::EXIT`](crate::slot::EXIT),
    /// [`slot::START`](crate::slot::START) or the method entered (fewer when a batch of the
    /// decoder ends; none only at the end), for consumers that loop over a slice and handle
    /// entries and exits without a branch on the kind.
    #[inline]
    pub fn next_codes(&mut self, max: usize) -> &[(u64, u64)] {
        while self.next == self.len {
            if self.pos >= self.end {
                return &[];
            }
            self.fill();
        }
        let start = self.next;
        self.next = self.len.min(start + max);
        &self.buf[start..self.next]
    }
}

impl Iterator for EventIter<'_> {
    type Item = Event;

    #[inline]
    fn next(&mut self) -> Option<Event> {
        // Inside a batch, straight from the buffer; at its end, through the refill.
        let (counter, code) = if self.next < self.len {
            self.next += 1;
            self.buf[self.next - 1]
        } else {
            *self.next_codes(1).first()?
        };
        let kind = match code {
            0 => EventKind::Exit,
            3 => EventKind::Start,
            method => EventKind::Entry { method },
        };
        Some(Event { counter, kind })
    }
}
