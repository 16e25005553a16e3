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
//! | otherwise | one-slot entry: `lo` is the `ArtMethod*` (its upper 32 bits are zero)   |
//!
//! `ArtMethod` objects are at least 4-byte aligned and never at address 0, so no method pointer
//! can be confused with the values 0–3.

/// Low-word value of an exit slot.
pub const EXIT: u32 = 0;
/// Low-word value of the second slot of a two-slot entry.
pub const WIDE_ENTRY: u32 = 1;
/// Low-word value of a pad slot.
pub const PAD: u32 = 2;
/// Low-word value of a start record.
pub const START: u32 = 3;
/// Smallest pointer that is a method rather than a control value.
pub const MIN_METHOD: u64 = 4;
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
            Record::Entry { ts, .. } | Record::Exit { ts } | Record::Start { ts } => ts,
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
/// Fails for pointers 0–3 (control values) and, in 32-bit mode, for pointers ≥ 2^32.
pub fn encode_entry(mode: Mode, method: u64, ts: u32) -> Result<([u64; 2], usize), BadMethod> {
    if method < MIN_METHOD {
        return Err(BadMethod(method));
    }
    if method >> 32 == 0 {
        return Ok(([pack(ts, method as u32), 0], 1));
    }
    match mode {
        Mode::Bits32 => Err(BadMethod(method)),
        Mode::Bits64 => Ok(([method, pack(ts, WIDE_ENTRY)], 2)),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::ToString;

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

    // docs/trace-format.md: the low word's values 0-3 are control values (exit, wide entry, pad,
    // start); every pointer from 4 up is an entry in one slot, ts above it.
    #[test]
    fn pointers_below_four_are_refused_and_four_is_the_first_entry() {
        for mode in [Mode::Bits32, Mode::Bits64] {
            for method in 0u64..=8 {
                let got = encode_entry(mode, method, 0xabcd);
                if method < 4 {
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
}
