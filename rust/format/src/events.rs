//! Decoded events with full timer values: what exporters and analyses consume.

use alloc::vec::Vec;

use crate::ring::{self, DecodeError, RingView, WindowStart};
use crate::slot::{Mode, Record};
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

/// Decodes a ring and recovers every timestamp from the flush-time `reference` counter.
pub fn decode_events(
    view: &RingView<'_>,
    mode: Mode,
    reference: u64,
) -> Result<DecodedTrace, EventsError> {
    let window = ring::decode(view, mode).map_err(EventsError::Decode)?;
    let counters =
        time::recover_timestamps(&window.records, reference).map_err(EventsError::Time)?;
    let events = window
        .records
        .iter()
        .zip(counters)
        .map(|(record, counter)| Event {
            counter,
            kind: match *record {
                Record::Entry { method, .. } => EventKind::Entry { method },
                Record::Exit { .. } => EventKind::Exit,
                Record::Start { .. } => EventKind::Start,
            },
        })
        .collect();
    Ok(DecodedTrace {
        events,
        start: window.start,
        dropped_half_record: window.dropped_half_record,
        pad_slots: window.pad_slots,
    })
}
