//! Slot encoding (Hubble Fig. 2) and the two control records this implementation adds.
//!
//! Every slot is a little-endian `u64`. The upper 32 bits of a trace point's last slot hold the
//! low 32 bits of the generic-timer count; the lower 32 bits say what the record is:
//!
//! | `lo`      | record                                                                   |
//! |-----------|--------------------------------------------------------------------------|
//! | `0`       | method exit                                                              |
//! | `1`       | second slot of a two-slot entry (64-bit mode): the previous slot is the full pointer |
//! | `2`       | pad: unused tail of the ring before a wrap (no timestamp)               |
//! | `3`       | start: tracing (re)started here; older slots belong to an earlier window |
//! | `4`       | task: second slot of a task record; the previous slot is its payload     |
//! | `5`–`7`   | reserved (a decoder refuses them)                                        |
//! | otherwise | one-slot entry: `lo` is the `ArtMethod*` (its upper 32 bits are zero)   |
//!
//! `ArtMethod` objects are at least 4-byte aligned and never in the first page, so no method
//! pointer can be confused with the values 0–7.
//!
//! A **task record** (`docs/trace-format.md` §1) follows the entry of one of the few
//! framework methods that submit or begin an asynchronous task, and names the task object and
//! its queue by their identity hash codes (ART's `LockWord` hash: 28 bits, never 0), never by
//! content. Its payload slot keeps bits 0 and 2 of the low word clear, so read forwards it never
//! looks like the marker of a two-slot entry (1) or of a task (4).

use hubble_layout as layout;

// The markers, the task kinds' codes and the identity width are ART's (trace_point.h's kMark*,
// TaskKind and kIdentityMask, read by bindgen into hubble_layout): the C++ trace point writes
// them, the decoder here reads them.

/// Low-word value of an exit slot.
pub const EXIT: u32 = layout::kMarkExit;
/// Low-word value of the second slot of a two-slot entry.
pub const WIDE_ENTRY: u32 = layout::kMarkWideEntry;
/// Low-word value of a pad slot.
pub const PAD: u32 = layout::kMarkPad;
/// Low-word value of a start record.
pub const START: u32 = layout::kMarkStart;
/// Low-word value of a task record's second slot.
pub const TASK: u32 = layout::kMarkTask;
/// The largest control value (5–7 are reserved).
pub const LAST_CONTROL: u32 = 7;
/// Smallest pointer that is a method rather than a control value.
pub const MIN_METHOD: u64 = 8;
/// Width of an identity in a task record: ART's identity hash code (`LockWord::kHashSize`,
/// runtime/lock_word.h:126: 32 − 2 state − 1 read-barrier − 1 mark bits), the width of
/// trace_point.h's `kIdentityMask`.
pub const IDENTITY_BITS: u32 = {
    let mask = layout::kIdentityMask;
    assert!(
        mask.count_ones() == mask.trailing_ones(),
        "kIdentityMask: not the low bits"
    );
    mask.trailing_ones()
};
/// Bytes per slot.
pub const SLOT_BYTES: usize = 8;

/// The execution mode of the traced process, which decides the entry encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// 32-bit process: every trace point is one slot, pointers are 32 bits.
    Bits32,
    /// 64-bit process: entries whose pointer has a non-zero upper half take two slots.
    Bits64,
}

impl Mode {
    /// The on-disk code of the mode (32 or 64).
    pub fn code(self) -> u8 {
        match self {
            Mode::Bits32 => 32,
            Mode::Bits64 => 64,
        }
    }

    /// Parses the on-disk code of the mode.
    pub fn from_code(code: u8) -> Option<Mode> {
        match code {
            32 => Some(Mode::Bits32),
            64 => Some(Mode::Bits64),
            _ => None,
        }
    }
}

/// One decoded record, with the 32-bit timestamp as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Record {
    /// Method entry.
    Entry {
        /// The `ArtMethod*`.
        method: u64,
        /// Low 32 bits of the timer.
        ts: u32,
    },
    /// Method exit.
    Exit {
        /// Low 32 bits of the timer.
        ts: u32,
    },
    /// Tracing started (the oldest record of a window that has not wrapped).
    Start {
        /// Low 32 bits of the timer.
        ts: u32,
    },
    /// The method just entered submitted or began an asynchronous task.
    Task {
        /// What the method did with the task.
        kind: TaskKind,
        /// The task object's identity hash (0: none).
        task: u32,
        /// The queue's identity hash (0: not known to the method).
        queue: u32,
        /// Low 32 bits of the timer.
        ts: u32,
    },
}

/// What a task record's method did with its task. The codes are trace_point.h's `TaskKind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TaskKind {
    /// Put the task in its queue (`ThreadPoolExecutor.execute`, `MessageQueue.enqueueMessage`,
    /// `Thread.start`): queuing time starts.
    Submit = layout::TaskKind::kSubmit as isize,
    /// Began running the task, which runs until this frame returns (`FutureTask.run`,
    /// `Handler.dispatchMessage`, `Thread.run`): queuing time ends, execution time starts.
    Begin = layout::TaskKind::kBegin as isize,
    /// Began running the task, which runs until the [`TaskKind::End`] record of the same task on
    /// this thread (`ThreadPoolExecutor.beforeExecute`, before a plain `Runnable`'s `run()`).
    BeginUntilEnd = layout::TaskKind::kBeginUntilEnd as isize,
    /// The task begun by [`TaskKind::BeginUntilEnd`] finished (`ThreadPoolExecutor.afterExecute`).
    End = layout::TaskKind::kEnd as isize,
}

impl TaskKind {
    /// Every kind, in code order.
    pub const ALL: [TaskKind; 4] = [
        TaskKind::Submit,
        TaskKind::Begin,
        TaskKind::BeginUntilEnd,
        TaskKind::End,
    ];

    /// The kind's code (0–3), as the runtime writes it.
    pub fn code(self) -> u32 {
        self as u32
    }
}

impl Record {
    /// An entry (`code` ≥ 4) or an exit (`code` = 0), without a data-dependent branch.
    #[inline(always)]
    pub(crate) fn from_code(ts: u32, code: u64) -> Record {
        if code == 0 {
            Record::Exit { ts }
        } else {
            Record::Entry { method: code, ts }
        }
    }

    /// The stored 32-bit timestamp.
    pub fn ts(&self) -> u32 {
        match *self {
            Record::Entry { ts, .. }
            | Record::Exit { ts }
            | Record::Start { ts }
            | Record::Task { ts, .. } => ts,
        }
    }
}

/// Builds a slot from its upper and lower halves.
#[inline]
pub fn pack(hi: u32, lo: u32) -> u64 {
    (u64::from(hi) << 32) | u64::from(lo)
}

/// Splits a slot into its upper and lower halves.
#[inline]
pub fn unpack(slot: u64) -> (u32, u32) {
    ((slot >> 32) as u32, slot as u32)
}

/// Error for a method pointer that cannot be encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadMethod(pub u64);

impl core::fmt::Display for BadMethod {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "method pointer {:#x} cannot be encoded", self.0)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for BadMethod {}

/// Encodes an entry: returns the slots (oldest first) and how many of them are used.
///
/// Fails for pointers 0–7 (control values), in 32-bit mode for pointers ≥ 2^32, and for
/// pointers ≥ 2^32 whose low word is a marker (1 or 4: see [`is_wide_pointer`]).
pub fn encode_entry(mode: Mode, method: u64, ts: u32) -> Result<([u64; 2], usize), BadMethod> {
    if method < MIN_METHOD {
        return Err(BadMethod(method));
    }
    if method >> 32 == 0 {
        return Ok(([pack(ts, method as u32), 0], 1));
    }
    match mode {
        Mode::Bits64 if is_wide_pointer(method) => Ok(([method, pack(ts, WIDE_ENTRY)], 2)),
        _ => Err(BadMethod(method)),
    }
}

/// Whether `pointer` can be the first slot of a two-slot entry: above 4 GiB, and its low word
/// not a marker a forward reader looks for in the slot after a record (1: two-slot entry, 4:
/// task). No `ArtMethod` is at such an address (they are 8-byte aligned in a 64-bit process).
#[inline]
pub fn is_wide_pointer(pointer: u64) -> bool {
    let lo = pointer as u32;
    (pointer >> 32 != 0) & (lo != WIDE_ENTRY) & (lo != TASK)
}

/// Encodes an exit.
#[inline]
pub fn encode_exit(ts: u32) -> u64 {
    pack(ts, EXIT)
}

/// Encodes a start record.
#[inline]
pub fn encode_start(ts: u32) -> u64 {
    pack(ts, START)
}

/// The pad slot.
#[inline]
pub fn encode_pad() -> u64 {
    u64::from(PAD)
}

/// Error for an identity wider than [`IDENTITY_BITS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadIdentity(pub u32);

impl core::fmt::Display for BadIdentity {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "identity {:#x} is wider than {IDENTITY_BITS} bits",
            self.0
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for BadIdentity {}

/// Encodes a task record: the payload slot, then the marker slot with the timestamp.
///
/// Payload: the queue's identity in the upper half; in the lower half the task's identity in
/// bits 4–31 and the kind's code in bits 1 (low bit) and 3 (high bit). Bits 0 and 2 stay clear,
/// so the low word is never 1 or 4, the markers a forward reader looks for.
pub fn encode_task(
    kind: TaskKind,
    task: u32,
    queue: u32,
    ts: u32,
) -> Result<[u64; 2], BadIdentity> {
    for id in [task, queue] {
        if id >> IDENTITY_BITS != 0 {
            return Err(BadIdentity(id));
        }
    }
    let code = kind.code();
    let lo = (task << 4) | ((code & 1) << 1) | ((code >> 1) << 3);
    Ok([pack(queue, lo), pack(ts, TASK)])
}

/// Decodes a task record's payload, or `None` when bits 0 and 2 of its low half, or the queue
/// identity's unused upper bits, are not clear (no writer makes such a payload).
#[inline]
pub fn decode_task_payload(payload: u64) -> Option<(TaskKind, u32, u32)> {
    let (queue, lo) = unpack(payload);
    if lo & 0b101 != 0 || queue >> IDENTITY_BITS != 0 {
        return None;
    }
    let code = ((lo >> 1) & 1) | (((lo >> 3) & 1) << 1);
    Some((TaskKind::ALL[code as usize], lo >> 4, queue))
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::ToString;

    // The module's table (docs/architecture.md's too): exit 0, two-slot entry 1, pad 2, start 3,
    // task 4, as ART's trace_point.h defines them (hubble_layout); task kinds 0-3 in `ALL`'s
    // order (the payload decoder indexes `ALL` by code); identities of 28 bits.
    #[test]
    fn the_markers_and_codes_arts_header_gives_are_the_documented_ones() {
        assert_eq!([EXIT, WIDE_ENTRY, PAD, START, TASK], [0, 1, 2, 3, 4]);
        for (code, kind) in TaskKind::ALL.into_iter().enumerate() {
            assert_eq!(kind.code(), code as u32, "{kind:?}");
        }
        assert_eq!(IDENTITY_BITS, 28);
    }

    // docs/trace-format.md: the header's mode byte is the pointer width in bits, 32 or 64, and
    // nothing else is a mode.
    #[test]
    fn mode_codes_are_the_pointer_widths_and_nothing_else_parses() {
        for (mode, bits) in [(Mode::Bits32, 32u8), (Mode::Bits64, 64u8)] {
            assert_eq!(mode.code(), bits);
            assert_eq!(
                Mode::from_code(bits),
                Some(mode),
                "mode {bits} does not parse"
            );
        }
        for code in (0..=u8::MAX).filter(|&c| c != 32 && c != 64) {
            assert_eq!(Mode::from_code(code), None, "{code} parsed as a mode");
        }
    }

    // docs/trace-format.md: the low word's values 0-7 are control values (exit, wide entry, pad,
    // start, task, reserved); every pointer from 8 up is an entry in one slot, ts above it.
    #[test]
    fn pointers_below_eight_are_refused_and_eight_is_the_first_entry() {
        for mode in [Mode::Bits32, Mode::Bits64] {
            for method in 0u64..=12 {
                let got = encode_entry(mode, method, 0xabcd);
                if method < 8 {
                    assert_eq!(
                        got,
                        Err(BadMethod(method)),
                        "{mode:?} accepted control value {method}"
                    );
                } else {
                    let slot = (0xabcd_u64 << 32) | method;
                    assert_eq!(got, Ok(([slot, 0], 1)), "{mode:?} pointer {method}");
                }
            }
        }
    }

    // An error names the pointer that could not be encoded, in hex as ART prints pointers.
    #[test]
    fn a_bad_method_error_names_the_pointer() {
        for (method, mode) in [(2u64, Mode::Bits64), (0x1_0000_0000, Mode::Bits32)] {
            let err = encode_entry(mode, method, 0).unwrap_err();
            assert_eq!(err, BadMethod(method));
            let text = err.to_string();
            assert!(
                text.contains(&format!("{method:#x}")),
                "{text:?} does not name {method:#x}"
            );
            assert!(
                text.contains("cannot be encoded"),
                "{text:?} does not say what is wrong"
            );
        }
    }

    // A task record round-trips every kind and identity at the edges of its 28 bits, and its
    // payload never reads forwards as a marker: bits 0 and 2 of the low word stay clear.
    #[test]
    fn a_task_record_round_trips_and_its_payload_is_never_a_marker() {
        let max = (1u32 << IDENTITY_BITS) - 1;
        for kind in TaskKind::ALL {
            for task in [0, 1, 2, 3, 4, 5, 7, 8, 0x0123_4567, max] {
                for queue in [0, 1, max] {
                    let [payload, marker] = encode_task(kind, task, queue, 0x9876).unwrap();
                    assert_eq!(marker, pack(0x9876, TASK));
                    assert_eq!(
                        decode_task_payload(payload),
                        Some((kind, task, queue)),
                        "{kind:?} {task:#x} {queue:#x}"
                    );
                    let lo = payload as u32;
                    assert!(lo != WIDE_ENTRY && lo != TASK, "payload low word {lo:#x}");
                    assert_eq!(lo & 0b101, 0, "payload low word {lo:#x}");
                }
            }
        }
    }

    // An identity of 29 bits or more is refused (naming it), and a payload no writer makes
    // (a marker bit set, an identity too wide) does not decode.
    #[test]
    fn wide_identities_and_foreign_payloads_are_refused() {
        let wide = 1u32 << IDENTITY_BITS;
        assert_eq!(
            encode_task(TaskKind::Submit, wide, 0, 0),
            Err(BadIdentity(wide))
        );
        assert_eq!(
            encode_task(TaskKind::Begin, 0, wide, 0),
            Err(BadIdentity(wide))
        );
        assert!(BadIdentity(wide).to_string().contains("0x10000000"));
        for lo in [1u32, 4, 5, 0x8000_0001, u32::MAX] {
            assert_eq!(decode_task_payload(u64::from(lo)), None, "low {lo:#x}");
        }
        assert_eq!(decode_task_payload(pack(wide, 0)), None);
        assert_eq!(
            decode_task_payload(pack((1 << IDENTITY_BITS) - 1, 0)),
            Some((TaskKind::Submit, 0, (1 << IDENTITY_BITS) - 1))
        );
    }
}
