//! The ring view and the decoder's errors by hand: how much of a ring is valid, where an
//! error says the bad slot is (in a wrapped ring's older piece too), and what each error says.

use hubble_format::slot::{encode_exit, pack, WIDE_ENTRY};
use hubble_format::{decode, DecodeError, Mode, RingView};

#[test]
fn valid_slots_are_the_given_bytes_or_the_whole_ring() {
    let slots = [encode_exit(1); 8];
    assert_eq!(
        RingView::new(&slots, 24, Some(40)).unwrap().valid_slots(),
        5
    );
    assert_eq!(RingView::new(&slots, 24, None).unwrap().valid_slots(), 8);
    assert_eq!(RingView::new(&slots, 64, Some(0)).unwrap().valid_slots(), 0);
    assert_eq!(RingView::linear(&slots[..3]).valid_slots(), 3);
}

/// An 8-slot ring written up to slot 3: slots 0..3 are the newer piece, 3..8 the older. A bad
/// slot at index 5 is reported at byte 40, wherever the walk meets it.
#[test]
fn errors_name_the_ring_offset_in_the_older_piece() {
    let mut slots = [encode_exit(1); 8];
    slots[5] = pack(1, WIDE_ENTRY);
    let view = RingView::new(&slots, 24, None).unwrap();
    assert_eq!(
        decode(&view, Mode::Bits32).unwrap_err(),
        DecodeError::WideEntryIn32BitMode { offset: 40 }
    );
    // 64-bit: the marker at 6, its pointer slot at 5 holds a pointer that fits 32 bits.
    let mut slots = [encode_exit(1); 8];
    slots[6] = pack(1, WIDE_ENTRY);
    slots[5] = 0x7000_0000;
    let view = RingView::new(&slots, 24, None).unwrap();
    assert_eq!(
        decode(&view, Mode::Bits64).unwrap_err(),
        DecodeError::NarrowPointerInWideEntry {
            offset: 40,
            pointer: 0x7000_0000
        }
    );
    // The same in the newer piece: marker at 2, pointer at 1.
    let mut slots = [encode_exit(1); 8];
    slots[2] = pack(1, WIDE_ENTRY);
    slots[1] = 0x10;
    let view = RingView::new(&slots, 24, None).unwrap();
    assert_eq!(
        decode(&view, Mode::Bits64).unwrap_err(),
        DecodeError::NarrowPointerInWideEntry {
            offset: 8,
            pointer: 0x10
        }
    );
}

#[test]
fn decode_errors_say_what_is_wrong() {
    let cases = [
        (DecodeError::EmptyRing, "the ring is empty"),
        (
            DecodeError::BadWritePos {
                write_pos: 12,
                ring_bytes: 64,
            },
            "write position 12 is not a multiple of 8 in 0..=64",
        ),
        (
            DecodeError::BadValid {
                valid: 72,
                ring_bytes: 64,
            },
            "valid length 72 is not a multiple of 8 in 0..=64",
        ),
        (
            DecodeError::WideEntryIn32BitMode { offset: 40 },
            "two-slot entry marker at ring offset 40 in a 32-bit ring",
        ),
        (
            DecodeError::NarrowPointerInWideEntry {
                offset: 8,
                pointer: 0x10,
            },
            "two-slot entry at ring offset 8 holds pointer 0x10, which no writer puts in two \
             slots: the ring is corrupt",
        ),
    ];
    for (e, text) in cases {
        assert_eq!(e.to_string(), text);
        // decode_events' error says what the decoder's says.
        assert_eq!(hubble_format::EventsError::Decode(e).to_string(), text);
    }
    let time = hubble_format::TimeError::BeforeZero { index: 3 };
    assert_eq!(
        hubble_format::EventsError::Time(time.clone()).to_string(),
        time.to_string()
    );
    assert!(time
        .to_string()
        .starts_with("timestamp of record 3 would be before timer zero"));
    let slots = [0u64; 8];
    assert_eq!(
        RingView::new(&[], 0, None).unwrap_err(),
        DecodeError::EmptyRing
    );
    assert!(matches!(
        RingView::new(&slots, 12, None),
        Err(DecodeError::BadWritePos {
            write_pos: 12,
            ring_bytes: 64
        })
    ));
    assert!(matches!(
        RingView::new(&slots, 64, Some(72)),
        Err(DecodeError::BadValid {
            valid: 72,
            ring_bytes: 64
        })
    ));
}

/// The smallest method pointers (8, the first the encoder takes, and 9) are entries, not the
/// control values 1–7 below them; 4 is a task record's marker and 5–7 are refused as reserved.
#[test]
fn the_smallest_pointers_decode_as_entries() {
    use hubble_format::slot::{encode_entry, Record};
    for method in 0..8 {
        assert!(encode_entry(Mode::Bits32, method, 0).is_err(), "{method}");
    }
    for value in 5u32..8 {
        let slots = [encode_exit(1), pack(2, value), encode_exit(3)];
        for mode in [Mode::Bits32, Mode::Bits64] {
            assert_eq!(
                decode(&RingView::linear(&slots), mode).unwrap_err(),
                DecodeError::ReservedControl { offset: 8, value },
                "{value}"
            );
        }
    }
    let mut slots = Vec::new();
    for (method, ts) in [(8u64, 10u32), (9, 11), (16, 12)] {
        let (s, n) = encode_entry(Mode::Bits32, method, ts).unwrap();
        slots.extend_from_slice(&s[..n]);
    }
    slots.push(encode_exit(13));
    for mode in [Mode::Bits32, Mode::Bits64] {
        let w = decode(&RingView::linear(&slots), mode).unwrap();
        assert_eq!(
            w.records,
            [
                Record::Entry { method: 8, ts: 10 },
                Record::Entry { method: 9, ts: 11 },
                Record::Entry { method: 16, ts: 12 },
                Record::Exit { ts: 13 },
            ]
        );
    }
}

/// A two-slot entry cut by the ring's end: its marker is the newest slot of the newer piece
/// (index 0) and its pointer the oldest-written end of the older one (index 7).
#[test]
fn a_two_slot_entry_across_the_wrap_decodes() {
    use hubble_format::slot::Record;
    let mut slots = [encode_exit(1); 8];
    slots[0] = pack(9, WIDE_ENTRY);
    slots[7] = 0x7f_0000_1000;
    slots[6] = pack(3, 0x2000);
    let view = RingView::new(&slots, 8, None).unwrap();
    // The forward iterator sees the pair across the wrap too.
    use hubble_format::{decode_events, EventIter};
    let events = decode_events(&view, Mode::Bits64, 100u64).unwrap().events;
    let forward: Vec<_> = EventIter::new(&view, Mode::Bits64, 100u64)
        .unwrap()
        .collect();
    assert_eq!(forward, events);
    let w = decode(&view, Mode::Bits64).unwrap();
    let n = w.records.len();
    assert_eq!(
        &w.records[n - 2..],
        &[
            Record::Entry {
                method: 0x2000,
                ts: 3
            },
            Record::Entry {
                method: 0x7f_0000_1000,
                ts: 9
            },
        ]
    );
}

/// Two-slot entries whose pointer's low word looks like a control value or is odd (3, 5, 2):
/// both decoders give the pointer as written.
#[test]
fn wide_pointers_with_any_low_word_decode_as_written() {
    use hubble_format::slot::{encode_entry, Record};
    use hubble_format::{decode_events, EventIter, EventKind};
    for pointer in [
        0x7f_0000_0003u64,
        0x7f_0000_0005,
        0x7f_0000_0002,
        0x7f_0000_1000,
    ] {
        let mut slots = Vec::new();
        let (s, n) = encode_entry(Mode::Bits64, pointer, 10).unwrap();
        slots.extend_from_slice(&s[..n]);
        slots.push(encode_exit(11));
        let view = RingView::linear(&slots);
        let w = decode(&view, Mode::Bits64).unwrap();
        assert_eq!(
            w.records,
            [
                Record::Entry {
                    method: pointer,
                    ts: 10
                },
                Record::Exit { ts: 11 }
            ],
            "{pointer:#x}"
        );
        // The backward decoder, and the forward iterator (its own slot-pair logic).
        let events = decode_events(&view, Mode::Bits64, 20u64).unwrap().events;
        let forward: Vec<_> = EventIter::new(&view, Mode::Bits64, 20u64)
            .unwrap()
            .collect();
        assert_eq!(forward, events, "{pointer:#x}");
        let kinds: Vec<EventKind> = events.iter().map(|e| e.kind).collect();
        assert_eq!(
            kinds,
            [EventKind::Entry { method: pointer }, EventKind::Exit],
            "{pointer:#x}"
        );
    }
}

/// The iterator's oldest counter is its first event's, and there is none in an empty window.
#[test]
fn the_oldest_counter_is_the_first_events() {
    use hubble_format::EventIter;
    let slots = [encode_exit(7), encode_exit(9)];
    let it = EventIter::new(&RingView::linear(&slots), Mode::Bits64, 20u64).unwrap();
    let first = it.clone().next().unwrap().counter;
    assert_eq!(first, 7);
    assert_eq!(it.oldest_counter(), Some(first));
    let empty = EventIter::new(&RingView::linear(&slots[..0]), Mode::Bits64, 20u64).unwrap();
    assert_eq!(empty.oldest_counter(), None);
    assert_eq!(empty.count(), 0);
}

/// A wide pointer whose low word is a marker (1: two-slot entry, 4: task) is neither encoded
/// nor decoded: read forwards, the slot before it would look like a record's first half.
#[test]
fn wide_pointers_whose_low_word_is_a_marker_are_refused() {
    use hubble_format::slot::{encode_entry, BadMethod};
    for pointer in [0x7f_0000_0001u64, 0x7f_0000_0004] {
        assert_eq!(
            encode_entry(Mode::Bits64, pointer, 10),
            Err(BadMethod(pointer))
        );
        let slots = [encode_exit(1), pointer, pack(12, WIDE_ENTRY)];
        assert_eq!(
            decode(&RingView::linear(&slots), Mode::Bits64).unwrap_err(),
            DecodeError::NarrowPointerInWideEntry { offset: 8, pointer },
            "{pointer:#x}"
        );
    }
}

/// Task records in both modes: the backward decoder gives them in place, with their counters;
/// the forward iterator skips them but counts their timestamps (a task record between two
/// events whose low halves wrap keeps both directions' counters equal); one cut by the ring's
/// end (its payload overwritten) is the dropped half record; one split across the wrap decodes.
#[test]
fn task_records_decode_backwards_and_are_skipped_forwards() {
    use hubble_format::slot::{encode_entry, encode_task, Record, TaskKind};
    use hubble_format::{decode_events, EventIter, EventKind};
    for mode in [Mode::Bits32, Mode::Bits64] {
        let mut slots = Vec::new();
        let (s, n) = encode_entry(mode, 0x1000, 0xffff_fff0).unwrap();
        slots.extend_from_slice(&s[..n]);
        slots.extend(encode_task(TaskKind::Submit, 0x0abc_def1, 0x0123_4567, 0xffff_fff8).unwrap());
        slots.push(encode_exit(0x10));
        let view = RingView::linear(&slots);
        let w = decode(&view, mode).unwrap();
        assert_eq!(
            w.records,
            [
                Record::Entry {
                    method: 0x1000,
                    ts: 0xffff_fff0
                },
                Record::Task {
                    kind: TaskKind::Submit,
                    task: 0x0abc_def1,
                    queue: 0x0123_4567,
                    ts: 0xffff_fff8
                },
                Record::Exit { ts: 0x10 },
            ],
            "{mode:?}"
        );
        let reference = (5u64 << 32) | 0x20;
        let events = decode_events(&view, mode, reference).unwrap().events;
        let counters: Vec<u64> = events.iter().map(|e| e.counter).collect();
        assert_eq!(
            counters,
            [
                (4 << 32) | 0xffff_fff0,
                (4 << 32) | 0xffff_fff8,
                (5 << 32) | 0x10
            ]
        );
        let forward: Vec<_> = EventIter::new(&view, mode, reference).unwrap().collect();
        assert_eq!(forward, [events[0], events[2]], "{mode:?}");
        assert!(matches!(events[1].kind, EventKind::Task { .. }));

        // Cut: only the marker is left at the oldest end.
        let cut = decode(&RingView::linear(&slots[n + 1..]), mode).unwrap();
        assert!(cut.dropped_half_record);
        assert_eq!(cut.records, [Record::Exit { ts: 0x10 }]);

        // Across the wrap: payload in the ring's last slot, marker in its first.
        let task = encode_task(TaskKind::Begin, 7, 0, 40).unwrap();
        let ring = [task[1], encode_exit(41), encode_exit(30), task[0]];
        let view = RingView::new(&ring, 16, Some(24)).unwrap();
        let w = decode(&view, mode).unwrap();
        assert_eq!(
            w.records,
            [
                Record::Task {
                    kind: TaskKind::Begin,
                    task: 7,
                    queue: 0,
                    ts: 40
                },
                Record::Exit { ts: 41 }
            ],
            "{mode:?}"
        );
        let forward: Vec<_> = EventIter::new(&view, mode, 50u64).unwrap().collect();
        assert_eq!(forward.len(), 1, "{mode:?}: {forward:?}");
        assert_eq!(forward[0].kind, EventKind::Exit);
    }
}

/// A task marker whose payload no writer makes is refused, naming the payload's offset.
#[test]
fn a_task_record_with_a_foreign_payload_is_refused() {
    use hubble_format::slot::TASK;
    for payload in [1u64, 4, 5, 0x8000_0004, 1 << 60] {
        let slots = [encode_exit(1), payload, pack(3, TASK)];
        for mode in [Mode::Bits32, Mode::Bits64] {
            assert_eq!(
                decode(&RingView::linear(&slots), mode).unwrap_err(),
                DecodeError::BadTaskPayload { offset: 8, payload },
                "{payload:#x}"
            );
        }
    }
}
