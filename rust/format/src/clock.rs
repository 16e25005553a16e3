//! Timer values to wall-clock nanoseconds, exactly and without 128-bit division per event.

use crate::TraceHeader;

/// Places one file's timer values on the wall clock through its reference pair:
/// `wall(c) = wall_clock_ns − ⌊(reference − c) · 10⁹ / hz⌋` for `c ≤ reference` (what
/// `TraceFile::counter_to_wall_ns` computes), and `wall_clock_ns + ⌊(c − reference) · 10⁹ / hz⌋`
/// after it.
#[derive(Clone, Copy, Debug)]
pub struct WallClock {
    reference: u64,
    wall_ns: u64,
    hz: u64,
    /// `10⁹ div hz`.
    whole: u64,
    /// `⌊(10⁹ mod hz) · 2⁶⁴ / hz⌋`.
    frac: u64,
    /// `⌈(10⁹ mod hz) · 2⁶⁴ / hz⌉`.
    frac_up: u64,
}

impl WallClock {
    /// The clock of a file.
    pub fn new(header: &TraceHeader) -> WallClock {
        WallClock::from_parts(
            header.reference_counter,
            header.wall_clock_ns,
            header.timer_hz,
        )
    }

    /// A clock from its reference pair and frequency (`hz` ≥ 1).
    pub fn from_parts(reference: u64, wall_ns: u64, hz: u64) -> WallClock {
        let hz = hz.max(1);
        let rem = 1_000_000_000 % hz;
        let scaled = u128::from(rem) << 64;
        WallClock {
            reference,
            wall_ns,
            hz,
            whole: 1_000_000_000 / hz,
            frac: (scaled / u128::from(hz)) as u64,
            // Below 2⁶⁴: rem < hz.
            frac_up: ((scaled + u128::from(hz) - 1) / u128::from(hz)) as u64,
        }
    }

    /// `⌊ticks · 10⁹ / hz⌋`, exact.
    #[inline]
    pub fn ticks_to_ns(&self, ticks: u64) -> u128 {
        if ticks < 1 << 34 && self.hz <= 1 << 30 {
            // The common case (a window shorter than ~12 minutes at 24 MHz), with no correction:
            // rounded up, the fixed-point part overshoots ticks · (10⁹ mod hz) / hz by less than
            // ticks / 2⁶⁴ < 2⁻³⁰ ≤ 1 / hz, and that fraction is a multiple of 1 / hz, so the
            // overshoot never reaches the next integer.
            let part = (u128::from(ticks) * u128::from(self.frac_up)) >> 64;
            return u128::from(ticks * self.whole + part as u64);
        }
        let t = u128::from(ticks);
        let mut ns = t * u128::from(self.whole) + ((t * u128::from(self.frac)) >> 64);
        // The fixed-point part may be one short of the floor; one multiplication checks it.
        if (ns + 1) * u128::from(self.hz) <= t * 1_000_000_000 {
            ns += 1;
        }
        ns
    }

    /// Wall-clock nanoseconds (Unix epoch) of a timer value, clamped to 0.
    #[inline]
    pub fn wall_ns(&self, counter: u64) -> u64 {
        if counter <= self.reference {
            let back = self.ticks_to_ns(self.reference - counter);
            u64::try_from(u128::from(self.wall_ns).saturating_sub(back)).unwrap_or(0)
        } else {
            let fwd = self.ticks_to_ns(counter - self.reference);
            u64::try_from(u128::from(self.wall_ns) + fwd).unwrap_or(u64::MAX)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_against_wide_division() {
        for hz in [
            1u64,
            7,
            19_200_000,
            24_000_000,
            62_500_000,
            1_000_000_000,
            (1 << 30) - 1,
            1 << 30,
            (1 << 30) + 1,
            3_000_000_007,
        ] {
            let clock = WallClock::from_parts(1 << 50, 1_700_000_000_000_000_000, hz);
            let mut x = 0x1234_5678_9abc_def1u64;
            for _ in 0..2000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let ticks = x >> (x % 40);
                let want = u128::from(ticks) * 1_000_000_000 / u128::from(hz);
                assert_eq!(clock.ticks_to_ns(ticks), want, "hz {hz} ticks {ticks}");
            }
            // Where the fraction is exactly zero or just below or above it (every multiple of
            // hz, near the fast path's limit too), and the limit itself.
            for base in [0u64, (1 << 34) - 1_000_000 * hz.min(16_000)] {
                for k in 0..1000u64 {
                    let t = base / hz * hz + k * hz;
                    for ticks in [
                        t.saturating_sub(1),
                        t,
                        t + 1,
                        (1 << 34) - 1 - k,
                        (1 << 34) + k,
                    ] {
                        let want = u128::from(ticks) * 1_000_000_000 / u128::from(hz);
                        assert_eq!(clock.ticks_to_ns(ticks), want, "hz {hz} ticks {ticks}");
                    }
                }
            }
        }
    }

    /// Above 2³⁰ Hz (an x86 TSC at 2 GHz) the fast path's error bound does not hold: these
    /// counts, found by search over the residues nearest a whole nanosecond, are where it
    /// would be one too many.
    #[test]
    fn fast_high_rates_would_be_wrong() {
        for (hz, ticks) in [
            (2_000_000_011u64, 14_181_818_260u64),
            (10_000_000_019, 10_526_315_810),
        ] {
            let clock = WallClock::from_parts(0, 0, hz);
            let want = u128::from(ticks) * 1_000_000_000 / u128::from(hz);
            assert_eq!(clock.ticks_to_ns(ticks), want, "hz {hz} ticks {ticks}");
        }
    }

    #[test]
    fn matches_trace_file_definition() {
        let clock = WallClock::from_parts(1_000_000, 5_000_000_000, 19_200_000);
        for c in [
            0u64, 1, 999_999, 1_000_000, 123_457, 1_000_001, 1_000_003, 20_200_000,
        ] {
            let want = 5_000_000_000i128 + (c as i128 - 1_000_000i128) * 1_000_000_000 / 19_200_000;
            assert_eq!(i128::from(clock.wall_ns(c)), want, "counter {c}");
        }
        // Clamped to the u64 range: before the epoch, and past 2⁶⁴ ns.
        assert_eq!(WallClock::from_parts(1 << 40, 5, 1).wall_ns(0), 0);
        assert_eq!(
            WallClock::from_parts(0, u64::MAX - 5, 1).wall_ns(1),
            u64::MAX
        );
    }
}
