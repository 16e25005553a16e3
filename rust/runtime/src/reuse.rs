//! Addresses a dead class loader's method shares with a later one. ART gives an unloaded
//! loader's arenas back, and a later loader's `ArtMethod` may land where a dead one was: a pool
//! flush can then hold records of both under one pointer. Every record of the dead method was
//! written before its loader was unloaded, every record of the later one after, so the
//! record's time decides; the flush names the most recent of them under the pointer itself and
//! writes the records of the others under an alias, the pointer with bit 1 set, which no
//! `ArtMethod` has (they are 4-byte aligned, 8-byte on 64-bit) and which encodes in the same
//! slots (`docs/trace-format.md`, "Slots").

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use hubble_format::pool::{BlockInfo, ThreadStream};
use hubble_format::ring::{walk_back_anchored, RingView, Walked};
use hubble_format::slot::{Record, PAD, START, TASK, WIDE_ENTRY};
use hubble_format::time::BackwardClock;
use hubble_format::{Mode, TimeAnchor};

use crate::symbols::Dead;

/// What an alias adds to the pointer.
pub const ALIAS_BIT: u64 = 2;

/// Which method each record of a reused address names: rewrites the records of all but the
/// most recent one to the alias, and returns the names this decided (the pointer's, when its
/// most recent method is dead too, and every alias's). A pointer it returns no name for names
/// the live method at its address. `dead` lists, per pointer, the methods that died there
/// (oldest first); `now` is the timer at the snapshot (after every record).
pub fn split_reused(
    streams: &mut [ThreadStream],
    dead: &HashMap<u64, Vec<Dead>>,
    now: u64,
    mode: Mode,
) -> Vec<(u64, Arc<str>)> {
    if dead.is_empty() {
        return Vec::new();
    }
    let mut found = Found::new();
    for (si, stream) in streams.iter().enumerate() {
        each_entry(
            &stream.slots,
            &stream.blocks,
            now,
            mode,
            |at, narrow, method, time| {
                found.add(dead, si, at, narrow, method, time);
            },
        );
    }
    let mut slots: Vec<&mut [u64]> = streams.iter_mut().map(|s| &mut s.slots[..]).collect();
    found.decide(dead, &mut slots)
}

/// [`split_reused`] for a ring window (`window` as [`crate::flush::copy_window`] copied it,
/// oldest slot first): each record is dated as readers date it, backwards from `reference`
/// (the counter at the stop) through the window's `anchors`, so an idle gap of more than 2^32
/// ticks between two records does not misdate the older one. None (nothing rewritten) when the
/// window does not decode or date: its file's reader reports that.
pub fn split_reused_window(
    window: &mut [u64],
    anchors: &[TimeAnchor],
    dead: &HashMap<u64, Vec<Dead>>,
    reference: u64,
    mode: Mode,
) -> Option<Vec<(u64, Arc<str>)>> {
    if dead.is_empty() {
        return Some(Vec::new());
    }
    // The entries' times, newest first, as the backward walk finds them.
    let mut times = Vec::new();
    let mut clock = BackwardClock::new(reference);
    let mut dated = true;
    let walked = walk_back_anchored(
        &RingView::linear(window),
        mode,
        anchors,
        |step| match step {
            Walked::Anchor(i) => clock.clamp(anchors[i].bound),
            Walked::Record(record) => {
                let Some(time) = clock.step(record.ts()).filter(|_| dated) else {
                    dated = false; // below timer zero
                    return;
                };
                if let Record::Entry { method, .. } = record {
                    times.push((method, time));
                }
            }
        },
    );
    if walked.is_err() || !dated {
        return None;
    }
    // The same entries by slot, oldest first; the walk may have left out a half record at the
    // oldest end, so the two lists are matched from the newest.
    let mut slots = Vec::new();
    each_entry(window, &[], reference, mode, |at, narrow, method, _| {
        slots.push((at, narrow, method))
    });
    let mut found = Found::new();
    for (&(at, narrow, method), &(walked_method, time)) in slots.iter().rev().zip(&times) {
        if method != walked_method {
            debug_assert!(
                false,
                "slot {at}: {method:#x}, the walk found {walked_method:#x}"
            );
            return None;
        }
        found.add(dead, 0, at, narrow, method, time);
    }
    Some(found.decide(dead, &mut [window]))
}

/// Per pointer with dead methods, each record naming it: (stream, slot of the method word,
/// narrow?, generation: index into `dead[p]`, or its length for the live method).
struct Found(BTreeMap<u64, Vec<(usize, usize, bool, usize)>>);

impl Found {
    fn new() -> Found {
        Found(BTreeMap::new())
    }

    fn add(
        &mut self,
        dead: &HashMap<u64, Vec<Dead>>,
        stream: usize,
        at: usize,
        narrow: bool,
        method: u64,
        time: u64,
    ) {
        if let Some(gens) = dead.get(&method) {
            let g = gens.iter().position(|d| d.at > time).unwrap_or(gens.len());
            self.0
                .entry(method)
                .or_default()
                .push((stream, at, narrow, g));
        }
    }

    /// Keeps the newest generation's records under the pointer, moves the others' to the alias,
    /// and returns the names this decided, sorted by pointer.
    fn decide(
        self,
        dead: &HashMap<u64, Vec<Dead>>,
        streams: &mut [&mut [u64]],
    ) -> Vec<(u64, Arc<str>)> {
        let mut names = Vec::new();
        for (p, records) in self.0 {
            let gens = &dead[&p];
            let present: BTreeSet<usize> = records.iter().map(|r| r.3).collect();
            let newest = *present.last().expect("at least one record");
            if let Some(d) = gens.get(newest) {
                names.push((p, d.name.clone()));
            }
            let older: Vec<&str> = present
                .iter()
                .filter(|&&g| g != newest)
                .map(|&g| &*gens[g].name)
                .collect();
            if older.is_empty() {
                continue;
            }
            // More than one dead method behind the alias (the address reused three times within
            // one flush's reach): every candidate, never a guess.
            names.push((p | ALIAS_BIT, Arc::from(older.join(" | "))));
            for &(si, at, narrow, g) in &records {
                if g != newest {
                    let slot = &mut streams[si][at];
                    *slot = if narrow {
                        (*slot & !0xffff_ffff) | ((p | ALIAS_BIT) & 0xffff_ffff)
                    } else {
                        p | ALIAS_BIT
                    };
                }
            }
        }
        names.sort_unstable_by_key(|(p, _)| *p);
        names
    }
}

/// Calls `visit(slot, narrow, method, time)` for every entry of `slots` (a thread's run made of
/// `blocks`, or with none a window whose times the caller takes elsewhere), oldest first: the
/// slot holding its method (the low word of a one-slot entry, or the first slot of a two-slot
/// one) and its full timer value, rebuilt forwards from each block's take time (records of a
/// block are less than 2^32 ticks apart unless the thread sat idle inside it, which then dates
/// the later ones one wrap early: a method still on the right side of an unload that happened
/// during such a gap is the only case it can misname).
fn each_entry(
    slots: &[u64],
    blocks: &[BlockInfo],
    now: u64,
    mode: Mode,
    mut visit: impl FnMut(usize, bool, u64, u64),
) {
    let mut block = 0;
    let mut block_end = blocks.first().map_or(slots.len(), |b| b.used);
    let mut clock = blocks.first().map_or(now, |b| b.time);
    let mut i = 0;
    let lo = |s: u64| s as u32;
    let hi = |s: u64| (s >> 32) as u32;
    let advance = |clock: &mut u64, ts: u32| {
        *clock += u64::from(ts.wrapping_sub(*clock as u32));
    };
    while i < slots.len() {
        while i >= block_end && block + 1 < blocks.len() {
            block += 1;
            block_end += blocks[block].used;
            clock = clock.max(blocks[block].time);
        }
        let s = slots[i];
        let next = slots.get(i + 1).map(|&n| lo(n));
        if mode == Mode::Bits64 && next == Some(WIDE_ENTRY) {
            advance(&mut clock, hi(slots[i + 1]));
            visit(i, false, s, clock);
            i += 2;
            continue;
        }
        if next == Some(TASK) {
            advance(&mut clock, hi(slots[i + 1]));
            i += 2;
            continue;
        }
        match lo(s) {
            PAD => {}
            0 | START => advance(&mut clock, hi(s)),
            l if u64::from(l) >= hubble_format::slot::MIN_METHOD => {
                advance(&mut clock, hi(s));
                visit(i, true, u64::from(l), clock);
            }
            _ => {} // reserved: the file's own decoder reports it
        }
        i += 1;
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use hubble_format::slot::{encode_entry, encode_exit};

    fn dead(name: &str, at: u64) -> Dead {
        Dead {
            name: Arc::from(name),
            epoch: 0,
            at,
        }
    }

    fn stream(records: &[(Option<u64>, u64)], block_time: u64) -> ThreadStream {
        let mut slots = Vec::new();
        for &(method, t) in records {
            match method {
                Some(m) => {
                    let (s, n) = encode_entry(Mode::Bits64, m, t as u32).unwrap();
                    slots.extend_from_slice(&s[..n]);
                }
                None => slots.push(encode_exit(t as u32)),
            }
        }
        ThreadStream {
            tid: 7,
            blocks: vec![BlockInfo {
                index: 0,
                tid: 7,
                seq: 0,
                ticket: 0,
                time: block_time,
                used: slots.len(),
            }],
            slots,
        }
    }

    /// Plugin A's method at 0x5000 ran, A was unloaded at t = 1000, plugin B's method took the
    /// address and ran: A's records move to the alias, B's keep the pointer (named live, by
    /// ART), wide pointers alike; the times cross a wrap of the low word.
    #[test]
    fn records_before_the_unload_name_the_dead_method_and_after_it_the_new_one() {
        let wide = 0x7f00_0000_5000u64;
        let base = (5u64 << 32) - 500;
        let mut streams = vec![stream(
            &[
                (Some(0x5000), base + 100),
                (None, base + 200),
                (Some(wide), base + 300),
                (None, base + 400),
                (Some(0x5000), base + 1200),
                (None, base + 1300),
                (Some(wide), base + 1400),
                (None, base + 1500),
            ],
            base,
        )];
        let before = streams[0].slots.clone();
        let dead: HashMap<u64, Vec<Dead>> = [
            (0x5000, vec![dead("A.run()", base + 1000)]),
            (wide, vec![dead("A.wide()", base + 1000)]),
        ]
        .into();
        let names = split_reused(&mut streams, &dead, base + 2000, Mode::Bits64);
        assert_eq!(
            names,
            vec![
                (0x5002, Arc::from("A.run()")),
                (wide | 2, Arc::from("A.wide()")),
            ]
        );
        let s = &streams[0].slots;
        assert_eq!(s[0] as u32, 0x5002, "A's narrow entry");
        assert_eq!(s[0] >> 32, before[0] >> 32, "its time kept");
        assert_eq!(s[2], wide | 2, "A's wide entry");
        assert_eq!(&s[5..], &before[5..], "B's records unchanged");
    }

    /// Only the dead method's records: its name, under the pointer itself (nothing rewritten);
    /// only the new one's: no name decided (ART names it), where the old code gave A's.
    #[test]
    fn a_pointer_of_one_generation_is_not_aliased() {
        let dead: HashMap<u64, Vec<Dead>> = [(0x5000, vec![dead("A.run()", 1000)])].into();
        let mut old = vec![stream(&[(Some(0x5000), 100), (None, 200)], 50)];
        let names = split_reused(&mut old, &dead, 2000, Mode::Bits64);
        assert_eq!(names, vec![(0x5000, Arc::from("A.run()"))]);
        let mut new = vec![stream(&[(Some(0x5000), 1100), (None, 1200)], 1050)];
        let before = new[0].slots.clone();
        assert!(split_reused(&mut new, &dead, 2000, Mode::Bits64).is_empty());
        assert_eq!(new[0].slots, before);
    }

    /// Three methods at one address within reach (A died at 1000, B at 2000, C live): C keeps
    /// the pointer, the alias names both dead ones as candidates.
    #[test]
    fn an_address_reused_twice_lists_every_candidate_behind_the_alias() {
        let dead: HashMap<u64, Vec<Dead>> =
            [(0x5000, vec![dead("A.m()", 1000), dead("B.m()", 2000)])].into();
        let mut streams = vec![stream(
            &[
                (Some(0x5000), 100),
                (None, 110),
                (Some(0x5000), 1100),
                (None, 1110),
                (Some(0x5000), 2100),
                (None, 2110),
            ],
            50,
        )];
        let names = split_reused(&mut streams, &dead, 3000, Mode::Bits64);
        assert_eq!(names, vec![(0x5002, Arc::from("A.m() | B.m()"))]);
        assert_eq!(streams[0].slots[4] as u32, 0x5000, "C keeps the pointer");
    }
}
