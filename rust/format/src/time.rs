//! Recovery of full timer values from the stored low 32 bits (Hubble Fig. 3).
//!
//! Walking from the newest record back, each timestamp takes the upper 32 bits of its successor
//! (the flush-time reference for the newest); when it is larger than its successor's low half,
//! the timer wrapped in between and the upper half is one less. This is exact as long as
//! consecutive points are less than 2^32 ticks apart and no point is later than the reference.

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
