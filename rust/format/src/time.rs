//! Recovery of full timer values from the stored low 32 bits (Hubble Fig. 3).
//!
//! Walking from the newest record back, each timestamp takes the upper 32 bits of its successor
//! (the flush-time reference for the newest); when it is larger than its successor's low half,
//! the timer wrapped in between and the upper half is one less. This is exact as long as
//! consecutive points are less than 2^32 ticks apart and no point is later than the reference.
//!
//! A thread can sit idle far longer than 2^32 ticks (4.3 s at 1 GHz, the counter frequency
//! Armv8.6 mandates; a UI thread waits in `nativePollOnce` for minutes). The control thread
//! therefore notes where such gaps are ([`TimeAnchor`]: a position in the window and a full
//! counter value that every record before it precedes), and the walk restarts from that bound
//! when it crosses the position, exactly as it starts from the reference. A gap of any length
//! is then recovered exactly, with nothing added to the trace points (`docs/trace-format.md`
//! §3).

use alloc::vec::Vec;
use core::fmt;

use crate::slot::Record;

/// A timestamp that cannot be recovered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TimeError {
    /// Recovering record `index` (oldest = 0) would need a timer value below zero: the reference
    /// counter is earlier than the records, or the data is corrupt.
    BeforeZero {
        /// Index of the record, oldest first.
        index: usize,
    },
}

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeError::BeforeZero { index } => write!(
                f,
                "timestamp of record {index} would be before timer zero: the reference counter \
                 is earlier than the trace or the trace is corrupt"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for TimeError {}

/// Steps one record back in time: the full value of `ts` given the full value of its successor.
#[inline]
pub fn step_back(next: u64, ts: u32) -> Option<u64> {
    let mut upper = next >> 32;
    if ts > next as u32 {
        upper = upper.checked_sub(1)?;
    }
    Some((upper << 32) | u64::from(ts))
}

/// [`step_back`] as a running state, for loops over many records. The result is the same, but
/// the loop-carried state is the upper half, which changes only when the timer wrapped: with
/// `step_back(next, ts)` every record waited for its successor's full value (shift, or, shift),
/// here the comparison is between two stored low halves and the branch is predicted.
#[derive(Clone, Copy, Debug)]
pub struct BackwardClock {
    upper: u64,
    low: u32,
}

impl BackwardClock {
    /// Starts from the full counter read at flush (the reference).
    pub fn new(reference: u64) -> BackwardClock {
        BackwardClock {
            upper: reference >> 32,
            low: reference as u32,
        }
    }

    /// The full value of the last timestamp stepped to (the reference before any step).
    pub fn value(&self) -> u64 {
        (self.upper << 32) | u64::from(self.low)
    }

    /// Lowers the clock to `bound` if that is earlier: the next record stepped to is the latest
    /// one at or before `bound` with its low half, instead of the latest before its successor.
    /// Both are upper bounds of the record's time, so the smaller one is right whenever either
    /// is less than 2^32 ticks after the record.
    #[inline]
    pub fn clamp(&mut self, bound: u64) {
        *self = BackwardClock::new(self.value().min(bound));
    }

    /// The full value of `ts`, the record just before the previous one (or the reference);
    /// `None` if it would be below timer zero (the state is then unchanged).
    #[inline]
    pub fn step(&mut self, ts: u32) -> Option<u64> {
        if ts > self.low {
            self.upper = self.upper.checked_sub(1)?;
        }
        self.low = ts;
        Some((self.upper << 32) | u64::from(ts))
    }
}

/// A known bound inside a window: every record in the window's slots before the last
/// `slots_after` slots was written at or before counter value `bound`.
///
/// The control thread takes one when a traced thread's cursor has not moved for a whole tick
/// (the thread idled): `bound` is the counter read when that cursor was first seen, plus a
/// margin for the reads' ordering, so the record before the cursor is less than a tick older
/// than `bound`, however long the thread then stays idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeAnchor {
    /// Slots of the window after the anchored position (0: the window's end).
    pub slots_after: u64,
    /// Full counter value no record before the position is later than.
    pub bound: u64,
}

/// What timestamps are recovered from: the flush-time reference and the anchors inside the
/// window, sorted by `slots_after` ascending (newest first), as a trace file stores them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBase<'a> {
    /// The full counter read at flush.
    pub reference: u64,
    /// Bounds inside the window ([`TimeAnchor`]).
    pub anchors: &'a [TimeAnchor],
}

impl From<u64> for TimeBase<'static> {
    /// A reference alone (a window without idle gaps, or written before anchors existed).
    fn from(reference: u64) -> TimeBase<'static> {
        TimeBase {
            reference,
            anchors: &[],
        }
    }
}

/// Full 64-bit timer values for `records` (oldest first), given the full counter read at flush.
pub fn recover_timestamps(records: &[Record], reference: u64) -> Result<Vec<u64>, TimeError> {
    let mut out = alloc::vec![0u64; records.len()];
    let mut clock = BackwardClock::new(reference);
    for (index, record) in records.iter().enumerate().rev() {
        out[index] = clock
            .step(record.ts())
            .ok_or(TimeError::BeforeZero { index })?;
    }
    Ok(out)
}

/// Nanoseconds for a timer value: `floor(counter × 10^9 / hz)`.
pub fn counter_to_ns(counter: u64, hz: u64) -> u64 {
    if hz == 0 {
        return 0;
    }
    (u128::from(counter) * 1_000_000_000 / u128::from(hz)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    /// The definition, by search: the latest counter value at or before `next` whose low half is
    /// `ts` (`None` if there is none at or after zero).
    fn latest_with_low(next: u64, ts: u32) -> Option<u64> {
        next.checked_sub(u64::from((next as u32).wrapping_sub(ts)))
    }

    #[test]
    fn step_back_is_the_latest_value_with_that_low_half() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        let mut next_values = alloc::vec![0u64, 1, u32::MAX as u64, 1 << 32, (1 << 32) + 5];
        let mut low_values = alloc::vec![0u32, 1, 5, u32::MAX];
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            next_values.push(x >> (x % 40));
            low_values.push((x >> 17) as u32);
        }
        for &next in &next_values {
            for &ts in low_values
                .iter()
                .take(60)
                .chain(&[next as u32, (next as u32).wrapping_add(1)])
            {
                let want = latest_with_low(next, ts);
                assert_eq!(step_back(next, ts), want, "step_back({next:#x}, {ts:#x})");
                // BackwardClock is the same recovery as a running state.
                let mut clock = BackwardClock::new(next);
                assert_eq!(
                    clock.step(ts),
                    want,
                    "BackwardClock({next:#x}).step({ts:#x})"
                );
            }
        }
    }

    // floor(c × 10^9 / hz), checked by multiplication: ns × hz ≤ c × 10^9 < (ns + 1) × hz.
    #[test]
    fn counter_to_ns_is_the_floor_of_the_exact_quotient() {
        assert_eq!(counter_to_ns(12345, 0), 0, "no frequency: 0");
        let mut x = 0x9e37_79b9_7f4a_7c15_u64;
        for hz in [
            1u64,
            3,
            19_200_000,
            24_576_000,
            1_000_000_000,
            3_000_000_007,
        ] {
            for _ in 0..500 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let c = x >> (x % 64);
                let ns = u128::from(counter_to_ns(c, hz));
                let exact = u128::from(c) * 1_000_000_000;
                let hz = u128::from(hz);
                if exact / hz <= u128::from(u64::MAX) {
                    assert!(
                        ns * hz <= exact && exact < (ns + 1) * hz,
                        "{c} ticks at {hz} Hz: {ns}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_time_error_names_the_record_and_the_cause() {
        let text = TimeError::BeforeZero { index: 17 }.to_string();
        assert!(text.contains("record 17"), "{text:?}");
        assert!(text.contains("before timer zero"), "{text:?}");
    }
}
