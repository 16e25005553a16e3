//! Decoded events with full timer values: what exporters and analyses consume.

use alloc::vec::Vec;

use crate::ring::{self, DecodeError, RingView, WindowStart};
use crate::slot::Mode;
use crate::time::{self, TimeError};

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

/// Decodes a ring and recovers every timestamp from the flush-time `reference` counter, in one
/// backward pass (the walk and Fig. 3's recovery both go from newest to oldest).
pub fn decode_events(
    view: &RingView<'_>,
    mode: Mode,
    reference: u64,
) -> Result<DecodedTrace, EventsError> {
    decode_events_into(view, mode, reference, Vec::new())
}

/// [`decode_events`] into a caller's buffer (cleared first), so repeated decodes (a tool going
/// through many files, a runtime flushing again and again) reuse memory already faulted in.
pub fn decode_events_into(
    view: &RingView<'_>,
    mode: Mode,
    reference: u64,
    mut events: Vec<Event>,
) -> Result<DecodedTrace, EventsError> {
    events.clear();
    events.reserve(view.valid_slots());
    // Backwards, like Fig. 3: the walk and the timestamp recovery share one pass; one reverse
    // at the end is cheaper than the forward iterator's look-ahead per slot.
    let mut clock = time::BackwardClock::new(reference);
    let mut failed_at = None;
    let summary = ring::walk_back(view, mode, |record| {
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
        }
    }
}

/// Events in time order, one at a time, without materializing the window.
///
/// A backward walk (which only tracks timestamps) finds where the window begins and the full
/// timer value of its oldest record; from there the ring is read forwards. Forward reading is
/// unambiguous from a record boundary: a slot is the pointer half of a two-slot entry exactly
/// when the slot after it carries the marker 1. Timestamps then recover forwards: the upper half
/// stays the same unless the low half went down, when it grows by one.
pub struct EventIter<'a> {
    older: &'a [u64],
    newer: &'a [u64],
    pos: usize,
    end: usize,
    mode: Mode,
    previous: u64,
    started: bool,
    summary: ring::WalkSummary,
}

impl<'a> EventIter<'a> {
    /// Prepares iteration over `view`'s window; timestamps recover from `reference`.
    pub fn new(view: &RingView<'a>, mode: Mode, reference: u64) -> Result<Self, EventsError> {
        let mut clock = time::BackwardClock::new(reference);
        let mut oldest = None;
        let mut index = 0usize;
        let mut failed_at = None;
        let summary = ring::walk_back(view, mode, |record| {
            if failed_at.is_some() {
                return;
            }
            match clock.step(record.ts()) {
                Some(counter) => oldest = Some(counter),
                None => failed_at = Some(index),
            }
            index += 1;
        })
        .map_err(EventsError::Decode)?;
        if let Some(newest_first) = failed_at {
            return Err(EventsError::Time(TimeError::BeforeZero {
                index: index - 1 - newest_first,
            }));
        }
        let (older, newer) = view.pieces();
        let end = older.len() + newer.len();
        // The window is the last `slots_used` slots; a dropped half record is skipped.
        let pos = end - summary.slots_used + usize::from(summary.dropped_half_record);
        // `previous` must make the first step land on the oldest counter: take its upper half
        // and a low half no larger than the first timestamp.
        let previous = oldest.map_or(reference, |c| c & !0xffff_ffff);
        Ok(EventIter {
            older,
            newer,
            pos,
            end,
            mode,
            previous,
            started: false,
            summary,
        })
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

    fn step_forward(&mut self, ts: u32) -> u64 {
        let mut upper = self.previous >> 32;
        if self.started && ts < self.previous as u32 {
            upper += 1;
        }
        self.started = true;
        self.previous = (upper << 32) | u64::from(ts);
        self.previous
    }
}

impl Iterator for EventIter<'_> {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        while self.pos < self.end {
            let (hi, lo) = crate::slot::unpack(self.slot(self.pos));
            if self.mode == Mode::Bits64 && self.pos + 1 < self.end {
                let (next_hi, next_lo) = crate::slot::unpack(self.slot(self.pos + 1));
                if next_lo == crate::slot::WIDE_ENTRY {
                    let method = self.slot(self.pos);
                    self.pos += 2;
                    let counter = self.step_forward(next_hi);
                    return Some(Event {
                        counter,
                        kind: EventKind::Entry { method },
                    });
                }
            }
            self.pos += 1;
            let kind = match lo {
                crate::slot::EXIT => EventKind::Exit,
                crate::slot::PAD => continue,
                crate::slot::START => EventKind::Start,
                method => EventKind::Entry {
                    method: u64::from(method),
                },
            };
            let counter = self.step_forward(hi);
            return Some(Event { counter, kind });
        }
        None
    }
}
