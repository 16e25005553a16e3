//! Timestamps across gaps of 2^32 ticks and more, at the counter frequencies of
//! real devices: 1 GHz (Armv8.6 and later), 24.576 MHz and 19.2 MHz. Random call streams with
//! idle gaps of ten minutes to three hours; every gap longer than a control-thread tick gets
//! the anchor the runtime would take (a bound less than a tick plus the margin after the record
//! before the gap). Both decoders must give every record's exact full counter; without the
//! anchors they must not (the property the anchors exist for).

use hubble_format::slot::Mode;
use hubble_format::{decode_events, EventIter, EventKind, RingWriter, TimeAnchor, TimeBase};
use proptest::prelude::*;

const FREQUENCIES: [u64; 3] = [1_000_000_000, 24_576_000, 19_200_000];

/// One stream: (full counter, kind) of every record, oldest first, and the ring it went into.
struct Written {
    truth: Vec<(u64, EventKind)>,
    ring: RingWriter,
    anchors: Vec<TimeAnchor>,
    reference: u64,
}

#[derive(Clone, Debug)]
struct Plan {
    mode: Mode,
    hz: u64,
    ring_slots: usize,
    start: u64,
    /// (gap in microseconds or, if `idle`, in seconds; idle; how late the tick saw it, 0–1)
    steps: Vec<(u64, bool, f64, bool)>,
    /// How long after the newest record the flush comes (seconds).
    tail_s: u64,
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        prop_oneof![Just(Mode::Bits64), Just(Mode::Bits32)],
        0..FREQUENCIES.len(),
        prop_oneof![Just(64usize), Just(300), Just(1 << 14)],
        0u64..(1 << 40),
        proptest::collection::vec(
            (
                0u64..5_000,
                prop::bool::weighted(0.03),
                0.0f64..1.0,
                any::<bool>(),
            ),
            1..1500,
        ),
        prop_oneof![Just(0u64), 600u64..10_800],
    )
        .prop_map(|(mode, f, ring_slots, start, steps, tail_s)| Plan {
            mode,
            hz: FREQUENCIES[f],
            ring_slots,
            start,
            steps,
            tail_s,
        })
}

fn write(plan: &Plan) -> Written {
    let hz = plan.hz;
    let tick = hz / 4;
    let margin = hz / 1000;
    let mut ring = RingWriter::new(plan.mode, plan.ring_slots);
    let n = plan.ring_slots as u64;
    // Tape position: slots written so far (pads too), from the write position's moves.
    let mut tape = 0u64;
    let mut pos = 0u64;
    let mut advance = |ring: &RingWriter, tape: &mut u64| {
        let now = ring.write_pos_bytes() / 8;
        // A write moves the cursor 1 to 3 slots (a pad, a two-slot entry): less than a lap.
        *tape += (now + n - pos) % n;
        pos = now;
    };
    let mut t = plan.start;
    ring.start(t as u32);
    advance(&ring, &mut tape);
    let mut truth = vec![(t, EventKind::Start)];
    // (tape position, bound) of every idle gap, oldest first.
    let mut gaps: Vec<(u64, u64)> = Vec::new();
    let mut depth = 0;
    let push_gap = |gaps: &mut Vec<(u64, u64)>, at: u64, t: u64, late: f64| {
        gaps.push((at, t + (late * tick as f64) as u64 + margin));
    };
    for (k, &(gap, idle, late, enter)) in plan.steps.iter().enumerate() {
        if idle {
            push_gap(&mut gaps, tape, t, late);
            t += (600 + gap * 2) * hz;
        } else {
            t += gap * hz / 1_000_000;
        }
        if enter || depth == 0 {
            let method = if k % 3 == 0 && plan.mode == Mode::Bits64 {
                0x7f00_0000_0000 + 8 * k as u64
            } else {
                0x1000 + 4 * (k as u64 % 97)
            };
            ring.entry(method, t as u32).unwrap();
            truth.push((t, EventKind::Entry { method }));
            depth += 1;
        } else {
            ring.exit(t as u32);
            truth.push((t, EventKind::Exit));
            depth -= 1;
        }
        advance(&ring, &mut tape);
    }
    if plan.tail_s > 0 {
        push_gap(&mut gaps, tape, t, 0.5);
        t += plan.tail_s * hz;
    }
    let reference = t + 17;
    let anchors: Vec<TimeAnchor> = gaps
        .iter()
        .rev()
        .map(|&(at, bound)| TimeAnchor {
            slots_after: tape - at,
            bound,
        })
        .filter(|a| a.slots_after <= n)
        .collect();
    Written {
        truth,
        ring,
        anchors,
        reference,
    }
}

fn counters(events: impl IntoIterator<Item = hubble_format::Event>) -> Vec<(u64, EventKind)> {
    events.into_iter().map(|e| (e.counter, e.kind)).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn gaps_of_any_length_are_recovered_exactly(plan in plan()) {
        let w = write(&plan);
        let time = TimeBase { reference: w.reference, anchors: &w.anchors };
        let decoded = decode_events(&w.ring.view(), plan.mode, time).unwrap();
        let got = counters(decoded.events.iter().copied());
        prop_assert!(!got.is_empty());
        let want = &w.truth[w.truth.len() - got.len()..];
        prop_assert_eq!(&got[..], want, "backward, {} Hz, {} anchors", plan.hz, w.anchors.len());
        let forward = counters(EventIter::new(&w.ring.view(), plan.mode, time).unwrap());
        prop_assert_eq!(&forward, &got, "forward, {} Hz", plan.hz);

        // Without the anchors, a window with a gap of 2^32 ticks or more is dated wrongly.
        let long_gap = want.windows(2).any(|p| p[1].0 - p[0].0 >= 1 << 32)
            || w.reference - want.last().unwrap().0 >= 1 << 32;
        let bare = decode_events(&w.ring.view(), plan.mode, w.reference).unwrap();
        prop_assert_eq!(counters(bare.events) == got, !long_gap);
    }
}

#[test]
fn an_anchor_only_ever_lowers_the_clock_to_a_valid_bound() {
    // Two records 1000 ticks apart, an anchor between them whose bound is later than the
    // second record (the tick came after it): the record's own successor is the better bound
    // and decides.
    let mut ring = RingWriter::new(Mode::Bits64, 16);
    ring.start(4_000);
    ring.entry(0x1000, 5_000).unwrap();
    ring.exit(6_000);
    let anchors = [TimeAnchor {
        slots_after: 1,
        bound: (1 << 32) + 9_000,
    }];
    let time = TimeBase {
        reference: (1 << 32) + 7_000,
        anchors: &anchors,
    };
    let d = decode_events(&ring.view(), Mode::Bits64, time).unwrap();
    let got: Vec<u64> = d.events.iter().map(|e| e.counter).collect();
    assert_eq!(
        got,
        [(1 << 32) + 4_000, (1 << 32) + 5_000, (1 << 32) + 6_000]
    );
}

#[test]
fn an_anchor_anywhere_changes_nothing_but_the_clock() {
    // Anchors that never lower the clock, at every position of a wrapped window with two-slot
    // entries, pads and a start record: inside a record, at a pad, past the window. The walk
    // stops at each; the records and their times must be exactly those of the bare walk.
    for (mode, slots) in [(Mode::Bits64, 61usize), (Mode::Bits32, 40)] {
        let mut ring = RingWriter::new(mode, slots);
        ring.start(3);
        let mut t = 3u32;
        for i in 0..70u64 {
            t += 11;
            let wide = mode == Mode::Bits64 && i % 3 == 0;
            ring.entry(
                if wide {
                    0x7f00_0000_0000 + 8 * i
                } else {
                    0x1000 + 4 * i
                },
                t,
            )
            .unwrap();
            if i % 2 == 1 {
                t += 5;
                ring.exit(t);
            }
        }
        let reference = u64::from(t) + 1;
        let bare = decode_events(&ring.view(), mode, reference).unwrap();
        let bare_forward: Vec<_> = EventIter::new(&ring.view(), mode, reference)
            .unwrap()
            .collect();
        for at in 0..=slots as u64 + 1 {
            let anchors = [TimeAnchor {
                slots_after: at,
                bound: u64::MAX,
            }];
            let time = TimeBase {
                reference,
                anchors: &anchors,
            };
            assert_eq!(
                decode_events(&ring.view(), mode, time).unwrap(),
                bare,
                "{mode:?}: anchor {at} slots before the end"
            );
            let forward: Vec<_> = EventIter::new(&ring.view(), mode, time).unwrap().collect();
            assert_eq!(forward, bare_forward, "{mode:?}: forward, anchor at {at}");
        }
    }
}
