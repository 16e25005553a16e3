//! The traffic every implementation of the pool is driven with in its proof (the Rust model,
//! the emitted A64 and x86_64 code with their block-end functions): the same kind of skewed
//! load, so that each is compared with [`crate::pool::PoolWriter`] on the same shapes. Two big
//! threads take half the trace points, the others share the rest; exits, entries whose
//! `ArtMethod*` is known to fit 32 bits (a JIT method's narrow kind), entries of any width (a
//! third above 4 GiB in 64-bit mode) and, if asked, little threads exiting to be replaced.

use crate::pool::Geometry;

/// Room for every thread of the traffic: 16 blocks of 12 data slots, A = 4 (10 threads own at
/// most 10 blocks), so blocks are taken, sealed, skipped while they wait for their bound, and
/// reused, and no take finds none.
pub const ROOMY: Geometry = Geometry {
    blocks: 16,
    block_slots: 17,
    active: 4,
};

/// Fewer blocks than threads (8 for 12): once 8 threads own one each, the others' takes find
/// none in `TRIES` tickets, drop the record and skip a `seq`.
pub const SATURATED: Geometry = Geometry {
    blocks: 8,
    block_slots: 9,
    active: 8,
};

/// A few blocks of 4 data slots (a narrow entry's fifth record takes the next block): for
/// stops, single takes and their instruction counts.
pub const SMALL: Geometry = Geometry {
    blocks: 4,
    block_slots: 9,
    active: 2,
};

/// What a trace point does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A method entry of any width.
    Entry(u64),
    /// A method entry whose pointer fits 32 bits (what the narrow kind is emitted for).
    EntryNarrow(u64),
    /// A method exit.
    Exit,
    /// The thread exits and a new one takes its index (its block sealed, `pool::thread_exit`).
    Replace,
}

/// One trace point: which thread, what, and the counter value it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub thread: usize,
    pub op: Op,
    /// Increasing; the block header keeps all 64 bits, a slot the low 32.
    pub counter: u64,
}

/// An endless, deterministic stream of [`Step`]s for `threads` threads (at least 3).
#[derive(Clone, Debug)]
pub struct Traffic {
    state: u64,
    threads: usize,
    counter: u64,
    wide: bool,
    replace: bool,
}

impl Traffic {
    /// 64-bit pointers (a third of the entries of any width above 4 GiB), no replacements.
    pub fn new(threads: usize, seed: u64) -> Traffic {
        assert!(threads >= 3, "two big threads and at least one little one");
        Traffic {
            state: seed,
            threads,
            counter: 1 << 32,
            wide: true,
            replace: false,
        }
    }

    /// Every pointer below 4 GiB (32-bit mode).
    pub fn narrow_pointers(mut self) -> Traffic {
        self.wide = false;
        self
    }

    /// Little threads exit now and then and are replaced.
    pub fn with_replacements(mut self) -> Traffic {
        self.replace = true;
        self
    }

    /// splitmix64.
    fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// A method pointer, never a slot marker's value: above 4 GiB if `wide`.
    fn method(&mut self, wide: bool) -> u64 {
        let low = 0x7000_0000 + 0x40 * self.below(1 << 16);
        if wide {
            (0x7f00 + self.below(0x100)) << 32 | low
        } else {
            low
        }
    }
}

impl Iterator for Traffic {
    type Item = Step;

    fn next(&mut self) -> Option<Step> {
        let thread = match self.below(2) {
            0 => self.below(2) as usize,
            _ => 2 + self.below(self.threads as u64 - 2) as usize,
        };
        self.counter += 1 + self.below(50);
        let op = match self.below(20) {
            0 if self.replace && thread >= 2 => Op::Replace,
            0..=7 => Op::Exit,
            8..=11 => Op::EntryNarrow(self.method(false)),
            _ => {
                let wide = self.wide && self.below(3) == 0;
                Op::Entry(self.method(wide))
            }
        };
        Some(Step {
            thread,
            op,
            counter: self.counter,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn the_traffic_is_skewed_and_mixed() {
        let steps: Vec<Step> = Traffic::new(10, 7).with_replacements().take(4000).collect();
        let on = |f: &dyn Fn(&Step) -> bool| steps.iter().filter(|s| f(s)).count();
        // Half the points on threads 0 and 1.
        assert!((1800..2200).contains(&on(&|s| s.thread < 2)));
        assert!(on(&|s| s.op == Op::Exit) > 1200);
        assert!(on(&|s| matches!(s.op, Op::EntryNarrow(m) if m >> 32 == 0)) > 600);
        assert!(on(&|s| matches!(s.op, Op::Entry(m) if m >> 32 != 0)) > 200);
        assert!(on(&|s| s.op == Op::Replace && s.thread >= 2) > 20);
        assert!(steps.windows(2).all(|w| w[0].counter < w[1].counter));
        let narrow = Traffic::new(4, 7).narrow_pointers().take(2000);
        assert!(narrow.into_iter().all(|s| match s.op {
            Op::Entry(m) | Op::EntryNarrow(m) => m >> 32 == 0,
            _ => true,
        }));
        assert!(Traffic::new(4, 7).take(2000).all(|s| s.op != Op::Replace));
    }

    /// The generator is splitmix64 (Steele, Lea and Flood, OOPSLA '14), checked against the
    /// first output of the reference implementation (Vigna's `splitmix64.c`) from state 0.
    #[test]
    fn the_generator_is_splitmix64() {
        let mut t = Traffic::new(3, 0);
        assert_eq!(t.next_u64(), 0xe220_a839_7b1d_cdaf);
    }

    /// Each choice in the proportions `next` documents, over 200 000 steps (each share is far
    /// more than 5 standard deviations inside its bounds), and every pointer an `ArtMethod*`
    /// of the ranges `method` documents.
    #[test]
    fn every_choice_has_its_share_and_every_pointer_its_range() {
        let threads = 10;
        let n = 200_000;
        let steps: Vec<Step> = Traffic::new(threads, 11)
            .with_replacements()
            .take(n)
            .collect();
        let share =
            |f: &dyn Fn(&Step) -> bool| steps.iter().filter(|s| f(s)).count() as f64 / n as f64;
        let near = |got: f64, want: f64| assert!((got - want).abs() < 0.01, "{got} for {want}");
        near(share(&|s| s.thread == 0), 0.25);
        near(share(&|s| s.thread == 1), 0.25);
        for little in 2..threads {
            near(share(&|s| s.thread == little), 0.5 / (threads - 2) as f64);
        }
        assert!(steps.iter().all(|s| s.thread < threads));
        // below(20): 0 replaces a little thread (half the points), 0..=7 exits otherwise,
        // 8..=11 narrow entries, the other 8 entries of which a third are wide.
        near(share(&|s| s.op == Op::Replace), 0.5 / 20.0);
        assert!(steps.iter().all(|s| s.op != Op::Replace || s.thread >= 2));
        near(share(&|s| s.op == Op::Exit), 8.0 / 20.0 - 0.5 / 20.0);
        near(share(&|s| matches!(s.op, Op::EntryNarrow(_))), 4.0 / 20.0);
        let wide = |m: u64| m >> 32 != 0;
        near(
            share(&|s| matches!(s.op, Op::Entry(m) if wide(m))),
            8.0 / 20.0 / 3.0,
        );
        near(
            share(&|s| matches!(s.op, Op::Entry(m) if !wide(m))),
            8.0 / 20.0 * 2.0 / 3.0,
        );
        let mut lows = alloc::collections::BTreeSet::new();
        for s in &steps {
            let (Op::Entry(m) | Op::EntryNarrow(m)) = s.op else {
                continue;
            };
            let low = m & 0xffff_ffff;
            assert!((0x7000_0000..0x7040_0000).contains(&low), "{m:#x}");
            assert_eq!(low % 0x40, 0, "{m:#x} is not an ArtMethod's alignment");
            assert!(
                m >> 32 == 0 || (0x7f00..0x8000).contains(&(m >> 32)),
                "{m:#x}"
            );
            lows.insert(low);
        }
        // 120 000 draws of 65 536 values: 65 536 (1 - e^-1.83), about 55 000, distinct.
        assert!(lows.len() > 50_000, "{} distinct methods", lows.len());
        // Counters step by 1 to 50, 25.5 on average.
        let last = steps[n - 1].counter - (1 << 32);
        near(last as f64 / n as f64 / 25.5, 1.0);
    }
}
