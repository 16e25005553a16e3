//! The ring: a reference writer and the reverse decoder (Hubble §5.1.1).
//!
//! The writer is the traced thread's algorithm from `docs/architecture.md`, slot for slot: the
//! hand-written sequences, the interpreters and the runtime's Rust model must leave the ring
//! exactly as [`RingWriter`] does for the same calls. The decoder never needs the writer's state:
//! it starts at the write position and walks backwards, reading the last slot of each record.

use alloc::vec::Vec;
use core::fmt;

use crate::slot::{self, BadIdentity, BadMethod, Mode, Record, TaskKind, SLOT_BYTES};
use crate::time::TimeAnchor;

/// A ring written exactly as the traced thread writes it.
#[derive(Clone, Debug)]
pub struct RingWriter {
    slots: Vec<u64>,
    cursor: usize,
    mode: Mode,
}

impl RingWriter {
    /// A zero-filled ring of `slots` slots (at least 2), cursor at the first slot.
    pub fn new(mode: Mode, slots: usize) -> RingWriter {
        assert!(slots >= 2, "a ring needs at least two slots");
        RingWriter {
            slots: alloc::vec![0; slots],
            cursor: 0,
            mode,
        }
    }

    /// The slot index the fast path may not reach: `end - 8` bytes in 64-bit mode (so a two-slot
    /// entry always fits without a second check), `end` in 32-bit mode.
    fn limit(&self) -> usize {
        match self.mode {
            Mode::Bits64 => self.slots.len() - 1,
            Mode::Bits32 => self.slots.len(),
        }
    }

    /// The slow path's wrap before a record of `width` slots: pad the (at most one) slot left
    /// and go back to the first slot. A 64-bit limit already keeps room for two slots; a 32-bit
    /// one is the end, so a two-slot record (a task record) wraps one slot earlier there.
    fn make_room(&mut self, width: usize) {
        if self.cursor >= self.limit().min(self.slots.len() + 1 - width) {
            if self.cursor != self.slots.len() {
                self.slots[self.cursor] = slot::encode_pad();
            }
            self.cursor = 0;
        }
    }

    fn push(&mut self, value: u64) {
        self.slots[self.cursor] = value;
        self.cursor += 1;
    }

    /// Records that tracing (re)starts here (written by the control thread).
    pub fn start(&mut self, ts: u32) {
        self.make_room(1);
        self.push(slot::encode_start(ts));
    }

    /// Records a method entry.
    pub fn entry(&mut self, method: u64, ts: u32) -> Result<(), BadMethod> {
        let (encoded, used) = slot::encode_entry(self.mode, method, ts)?;
        self.make_room(used);
        for value in &encoded[..used] {
            self.push(*value);
        }
        Ok(())
    }

    /// Records a task record (after the entry of the method that wrote it): two slots in both
    /// modes.
    pub fn task(
        &mut self,
        kind: TaskKind,
        task: u32,
        queue: u32,
        ts: u32,
    ) -> Result<(), BadIdentity> {
        let encoded = slot::encode_task(kind, task, queue, ts)?;
        self.make_room(encoded.len());
        for value in encoded {
            self.push(value);
        }
        Ok(())
    }

    /// Records a method exit.
    pub fn exit(&mut self, ts: u32) {
        self.make_room(1);
        self.push(slot::encode_exit(ts));
    }

    /// The ring's slots.
    pub fn slots(&self) -> &[u64] {
        &self.slots
    }

    /// Byte offset of the next slot to be written (may equal the ring size before a wrap).
    pub fn write_pos_bytes(&self) -> u64 {
        (self.cursor * SLOT_BYTES) as u64
    }

    /// The execution mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// A view of the whole ring for [`decode`].
    pub fn view(&self) -> RingView<'_> {
        RingView {
            slots: &self.slots,
            write_pos: self.cursor,
            valid: self.slots.len(),
        }
    }
}

/// Errors of the ring decoder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeError {
    /// The ring has no slots.
    EmptyRing,
    /// The write position is not a multiple of 8 or lies outside the ring.
    BadWritePos {
        /// The write position in bytes.
        write_pos: u64,
        /// The ring size in bytes.
        ring_bytes: u64,
    },
    /// The valid length is not a multiple of 8 or exceeds the ring.
    BadValid {
        /// The valid length in bytes.
        valid: u64,
        /// The ring size in bytes.
        ring_bytes: u64,
    },
    /// A two-slot entry in a 32-bit ring, which never contains one.
    WideEntryIn32BitMode {
        /// Byte offset of the slot in the ring.
        offset: u64,
    },
    /// A two-slot entry whose pointer fits 32 bits (the writer would have used one slot) or
    /// whose low word is a marker, 1 or 4 (no `ArtMethod` is at such an address, and read
    /// forwards the slot would look like one).
    NarrowPointerInWideEntry {
        /// Byte offset of the pointer slot in the ring.
        offset: u64,
        /// The pointer.
        pointer: u64,
    },
    /// A task record whose payload no writer makes (a marker bit set, an identity too wide).
    BadTaskPayload {
        /// Byte offset of the payload slot in the ring.
        offset: u64,
        /// The payload.
        payload: u64,
    },
    /// A reserved control value (5–7) in the low word.
    ReservedControl {
        /// Byte offset of the slot in the ring.
        offset: u64,
        /// The value.
        value: u32,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::EmptyRing => write!(f, "the ring is empty"),
            DecodeError::BadWritePos {
                write_pos,
                ring_bytes,
            } => write!(
                f,
                "write position {write_pos} is not a multiple of 8 in 0..={ring_bytes}"
            ),
            DecodeError::BadValid { valid, ring_bytes } => {
                write!(
                    f,
                    "valid length {valid} is not a multiple of 8 in 0..={ring_bytes}"
                )
            }
            DecodeError::WideEntryIn32BitMode { offset } => {
                write!(
                    f,
                    "two-slot entry marker at ring offset {offset} in a 32-bit ring"
                )
            }
            DecodeError::NarrowPointerInWideEntry { offset, pointer } => write!(
                f,
                "two-slot entry at ring offset {offset} holds pointer {pointer:#x}, which no \
                 writer puts in two slots: the ring is corrupt"
            ),
            DecodeError::BadTaskPayload { offset, payload } => write!(
                f,
                "task record at ring offset {offset} has payload {payload:#x}, which no writer \
                 makes: the ring is corrupt"
            ),
            DecodeError::ReservedControl { offset, value } => write!(
                f,
                "reserved control value {value} at ring offset {offset}: written by a newer \
                 Hubble, or the ring is corrupt"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for DecodeError {}

/// The part of a ring to decode: the slots, the write position and how much before it is valid.
#[derive(Clone, Copy, Debug)]
pub struct RingView<'a> {
    slots: &'a [u64],
    /// Slot index of the next slot to be written, in `0..=slots.len()`.
    write_pos: usize,
    /// Slots before the write position (wrapping) that may hold data.
    valid: usize,
}

impl<'a> RingView<'a> {
    /// Validates a view. `valid_bytes` defaults to the whole ring.
    pub fn new(
        slots: &'a [u64],
        write_pos_bytes: u64,
        valid_bytes: Option<u64>,
    ) -> Result<RingView<'a>, DecodeError> {
        if slots.is_empty() {
            return Err(DecodeError::EmptyRing);
        }
        let ring_bytes = (slots.len() * SLOT_BYTES) as u64;
        if write_pos_bytes % 8 != 0 || write_pos_bytes > ring_bytes {
            return Err(DecodeError::BadWritePos {
                write_pos: write_pos_bytes,
                ring_bytes,
            });
        }
        let valid = valid_bytes.unwrap_or(ring_bytes);
        if valid % 8 != 0 || valid > ring_bytes {
            return Err(DecodeError::BadValid { valid, ring_bytes });
        }
        Ok(RingView {
            slots,
            write_pos: (write_pos_bytes / 8) as usize,
            valid: (valid / 8) as usize,
        })
    }

    /// A view of slots that are already in time order (oldest first), as a trace file stores them.
    pub fn linear(slots: &'a [u64]) -> RingView<'a> {
        RingView {
            slots,
            write_pos: slots.len(),
            valid: slots.len(),
        }
    }

    /// Slots that may hold data.
    pub fn valid_slots(&self) -> usize {
        self.valid
    }

    /// The valid slots in time order, oldest first, as up to two contiguous pieces.
    pub fn pieces(&self) -> (&'a [u64], &'a [u64]) {
        let n = self.slots.len();
        // write_pos is in 0..=n; an empty window (n = 0 happens for an empty file) has no pieces.
        let end = self.write_pos;
        if self.valid <= end {
            (&self.slots[end - self.valid..end], &[])
        } else {
            let older = self.valid - end;
            (&self.slots[n - older..], &self.slots[..end])
        }
    }
}

/// Why the decoded window begins where it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowStart {
    /// At a start record: everything since tracing started is here.
    StartRecord,
    /// At the valid length (the whole ring, or what the caller said was valid).
    ValidLimit,
}

/// The decoded window of a ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// The records, oldest first.
    pub records: Vec<Record>,
    /// Where the window begins.
    pub start: WindowStart,
    /// Whether the oldest record was the second half of a two-slot entry whose pointer slot
    /// had been overwritten (it is dropped, never read as a pointer).
    pub dropped_half_record: bool,
    /// Pad slots skipped.
    pub pad_slots: usize,
    /// Slots that belong to the window (records, pads and a dropped half record).
    pub slots_used: usize,
}

/// What the reverse walk learned besides the records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkSummary {
    /// Where the window begins.
    pub start: WindowStart,
    /// Whether a half two-slot entry at the oldest end was dropped.
    pub dropped_half_record: bool,
    /// Pad slots skipped.
    pub pad_slots: usize,
    /// Slots that belong to the window.
    pub slots_used: usize,
    /// Task records in the window (the forward iterator takes its slower loop only if any).
    pub task_records: usize,
}

/// Walks the ring backwards from the write position, handing each record to `visit`, newest
/// first (Hubble §5.1.1). Both decoders below are this walk plus a different `visit`.
#[inline]
pub fn walk_back(
    view: &RingView<'_>,
    mode: Mode,
    mut visit: impl FnMut(Record),
) -> Result<WalkSummary, DecodeError> {
    walk_back_anchored(view, mode, &[], |step| {
        if let Walked::Record(record) = step {
            visit(record)
        }
    })
}

/// What [`walk_back_anchored`] hands its visitor, in walk order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walked {
    /// The next record back.
    Record(Record),
    /// The walk has passed `anchors[i]`: every record from here on lies wholly before it (its
    /// newest slot has at least `slots_after` slots of the window after it).
    Anchor(usize),
}

/// [`walk_back`] that also reports where it passes the `anchors` (sorted by `slots_after`
/// ascending, as a file keeps them). The hot loop stops at the next anchor instead of testing
/// each record, so a walk with a few anchors costs what one without does.
#[inline]
pub fn walk_back_anchored(
    view: &RingView<'_>,
    mode: Mode,
    anchors: &[TimeAnchor],
    mut visit: impl FnMut(Walked),
) -> Result<WalkSummary, DecodeError> {
    let (older, newer) = view.pieces();
    // Index i counts back from the newest slot over the two pieces (no modulo): slot(i) =
    // newer[len-1-i] for i < len(newer), then older from its end. Only the rare control slots
    // use it (a two-slot entry may straddle the pieces).
    let slot = |i: usize| -> (u64, usize) {
        if i < newer.len() {
            let k = newer.len() - 1 - i;
            (newer[k], k)
        } else {
            let k = older.len() - 1 - (i - newer.len());
            (older[k], view.slots.len() - older.len() + k)
        }
    };
    let valid = older.len() + newer.len();
    let mut summary = WalkSummary {
        start: WindowStart::ValidLimit,
        dropped_half_record: false,
        pad_slots: 0,
        slots_used: 0,
        task_records: 0,
    };
    let mut age = 0;
    let mut next_anchor = 0;
    while age < valid {
        while anchors
            .get(next_anchor)
            .is_some_and(|a| a.slots_after <= age as u64)
        {
            visit(Walked::Anchor(next_anchor));
            next_anchor += 1;
        }
        // The hot loop runs over one contiguous piece, newest slot first: choosing
        // the piece and computing the ring index for every slot (as `slot` does) cost most of
        // the walk's instructions. Entries and exits share one path (an exit is "method 0"), so
        // their 50/50 mix costs no branch misprediction; only the rare control values 1–7 leave
        // the loop.
        let (piece, first_age) = if age < newer.len() {
            (newer, 0)
        } else {
            (older, newer.len())
        };
        let top = piece.len() - (age - first_age);
        let piece = &piece[..top];
        // `k` slots of the piece are still to visit. A two-slot entry whose pointer slot is in
        // the same piece and well formed is decoded here too: in 64-bit mode every entry of a
        // method above 4 GiB is one, and leaving the loop for each made the walk ~30% slower.
        let mut k = top;
        // The record ending at piece[k - 1] has `age + top - k` slots after it: the loop stops
        // where that reaches the next anchor.
        let k_cut = anchors.get(next_anchor).map_or(0, |a| {
            (age + top).saturating_sub(usize::try_from(a.slots_after).unwrap_or(usize::MAX))
        });
        while k > k_cut {
            let (hi, lo) = slot::unpack(piece[k - 1]);
            if lo.wrapping_sub(slot::WIDE_ENTRY) <= slot::LAST_CONTROL - slot::WIDE_ENTRY {
                if lo == slot::WIDE_ENTRY && mode == Mode::Bits64 && k >= 2 {
                    let pointer = piece[k - 2];
                    if slot::is_wide_pointer(pointer) {
                        visit(Walked::Record(Record::Entry {
                            method: pointer,
                            ts: hi,
                        }));
                        k -= 2;
                        continue;
                    }
                }
                break;
            }
            visit(Walked::Record(Record::from_code(hi, u64::from(lo))));
            k -= 1;
        }
        let run = top - k;
        age += run;
        if k <= k_cut {
            // The piece is done, or an anchor is reached (or passed: a two-slot entry may
            // straddle it, and counts as after it): on to the older piece (or the end of the
            // window), or the anchor first.
            continue;
        }
        let (value, index) = slot(age);
        let (hi, lo) = slot::unpack(value);
        match lo {
            slot::WIDE_ENTRY => {
                if mode == Mode::Bits32 {
                    return Err(DecodeError::WideEntryIn32BitMode {
                        offset: offset(index),
                    });
                }
                if age + 1 >= valid {
                    summary.dropped_half_record = true;
                    age += 1;
                    break;
                }
                let (pointer, pointer_index) = slot(age + 1);
                if !slot::is_wide_pointer(pointer) {
                    return Err(DecodeError::NarrowPointerInWideEntry {
                        offset: offset(pointer_index),
                        pointer,
                    });
                }
                visit(Walked::Record(Record::Entry {
                    method: pointer,
                    ts: hi,
                }));
                age += 2;
            }
            slot::PAD => {
                summary.pad_slots += 1;
                age += 1;
            }
            slot::TASK => {
                if age + 1 >= valid {
                    summary.dropped_half_record = true;
                    age += 1;
                    break;
                }
                let (payload, payload_index) = slot(age + 1);
                let Some((kind, task, queue)) = slot::decode_task_payload(payload) else {
                    return Err(DecodeError::BadTaskPayload {
                        offset: offset(payload_index),
                        payload,
                    });
                };
                summary.task_records += 1;
                visit(Walked::Record(Record::Task {
                    kind,
                    task,
                    queue,
                    ts: hi,
                }));
                age += 2;
            }
            slot::START => {
                visit(Walked::Record(Record::Start { ts: hi }));
                summary.start = WindowStart::StartRecord;
                age += 1;
                break;
            }
            value => {
                return Err(DecodeError::ReservedControl {
                    offset: offset(index),
                    value,
                })
            }
        }
    }
    summary.slots_used = age;
    Ok(summary)
}

/// Decodes a ring backwards from its write position into records, oldest first.
pub fn decode(view: &RingView<'_>, mode: Mode) -> Result<Window, DecodeError> {
    let mut records = Vec::with_capacity(view.valid);
    let summary = walk_back(view, mode, |r| records.push(r))?;
    records.reverse();
    Ok(Window {
        records,
        start: summary.start,
        dropped_half_record: summary.dropped_half_record,
        pad_slots: summary.pad_slots,
        slots_used: summary.slots_used,
    })
}

fn offset(index: usize) -> u64 {
    (index * SLOT_BYTES) as u64
}
