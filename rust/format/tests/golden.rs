//! Golden slots for every case of Hubble Fig. 2, plus the pad and start records.

use hubble_format::slot::{self, Mode};
use hubble_format::{decode, Record, RingView, RingWriter, WindowStart};

const TS: u32 = 0xAABB_CCDD;

#[test]
fn entry_64_low_pointer_is_one_slot() {
    assert_eq!(
        slot::encode_entry(Mode::Bits64, 0x7000_1234, TS).unwrap(),
        ([0xAABB_CCDD_7000_1234, 0], 1)
    );
}

#[test]
fn entry_64_high_pointer_is_two_slots() {
    assert_eq!(
        slot::encode_entry(Mode::Bits64, 0x7f_1234_5678, TS).unwrap(),
        ([0x0000_007f_1234_5678, 0xAABB_CCDD_0000_0001], 2)
    );
}

#[test]
fn exit_is_timestamp_over_zero() {
    assert_eq!(slot::encode_exit(TS), 0xAABB_CCDD_0000_0000);
}

#[test]
fn entry_32_is_one_slot() {
    assert_eq!(
        slot::encode_entry(Mode::Bits32, 0x7000_1234, TS).unwrap(),
        ([0xAABB_CCDD_7000_1234, 0], 1)
    );
}

#[test]
fn control_values_and_wide_pointers_in_32_bit_mode_are_rejected() {
    for bad in 0..4 {
        assert!(slot::encode_entry(Mode::Bits64, bad, TS).is_err());
    }
    assert!(slot::encode_entry(Mode::Bits32, 1 << 32, TS).is_err());
}

#[test]
fn writer_lays_out_slots_exactly() {
    let mut ring = RingWriter::new(Mode::Bits64, 8);
    ring.start(1);
    ring.entry(0x1000, 2).unwrap();
    ring.entry(0x7f_0000_1000, 3).unwrap();
    ring.exit(4);
    ring.exit(5);
    assert_eq!(
        ring.slots(),
        &[
            0x0000_0001_0000_0003,
            0x0000_0002_0000_1000,
            0x0000_007f_0000_1000,
            0x0000_0003_0000_0001,
            0x0000_0004_0000_0000,
            0x0000_0005_0000_0000,
            0,
            0
        ]
    );
    assert_eq!(ring.write_pos_bytes(), 48);
}

#[test]
fn wrap_pads_the_last_slot_in_64_bit_mode() {
    let mut ring = RingWriter::new(Mode::Bits64, 4);
    ring.start(1);
    ring.entry(0x1000, 2).unwrap();
    ring.exit(3);
    // The cursor is at the last slot: the next record goes to the front, the last slot is pad.
    ring.entry(0x2000, 4).unwrap();
    assert_eq!(
        ring.slots(),
        &[
            0x0000_0004_0000_2000,
            0x0000_0002_0000_1000,
            0x0000_0003_0000_0000,
            2
        ]
    );
    let window = decode(&ring.view(), Mode::Bits64).unwrap();
    // The start record was overwritten: the window begins at the oldest surviving record.
    assert_eq!(
        window.records,
        vec![
            Record::Entry {
                method: 0x1000,
                ts: 2
            },
            Record::Exit { ts: 3 },
            Record::Entry {
                method: 0x2000,
                ts: 4
            }
        ]
    );
    assert_eq!(window.start, WindowStart::ValidLimit);
    assert_eq!(window.pad_slots, 1);
}

#[test]
fn half_two_slot_entry_at_the_wrap_point_is_dropped() {
    // Oldest slot (at the write position) is the marker of an entry whose pointer slot was
    // overwritten by the newest record.
    let slots = [
        0x0000_0009_0000_0000u64,
        0x0000_0005_0000_0001,
        0x0000_0006_0000_0000,
    ];
    let view = RingView::new(&slots, 8, None).unwrap();
    let window = decode(&view, Mode::Bits64).unwrap();
    assert!(window.dropped_half_record);
    assert_eq!(
        window.records,
        vec![Record::Exit { ts: 6 }, Record::Exit { ts: 9 }]
    );
}

#[test]
fn decoding_stops_at_the_start_record() {
    let slots = [
        0x0000_0007_0000_1000u64,
        0x0000_0001_0000_0003,
        0x0000_0002_0000_2000,
        0,
    ];
    let view = RingView::new(&slots, 24, None).unwrap();
    let window = decode(&view, Mode::Bits32).unwrap();
    assert_eq!(window.start, WindowStart::StartRecord);
    assert_eq!(
        window.records,
        vec![
            Record::Start { ts: 1 },
            Record::Entry {
                method: 0x2000,
                ts: 2
            }
        ]
    );
}

#[test]
fn corrupt_rings_are_errors_not_guesses() {
    let wide_in_32 = [0x0000_0001_0000_0001u64];
    let view = RingView::new(&wide_in_32, 8, None).unwrap();
    assert!(decode(&view, Mode::Bits32).is_err());
    let narrow_wide = [0x0000_0000_0000_1000u64, 0x0000_0001_0000_0001];
    let view = RingView::new(&narrow_wide, 16, None).unwrap();
    assert!(decode(&view, Mode::Bits64).is_err());
    assert!(RingView::new(&narrow_wide, 12, None).is_err());
    assert!(RingView::new(&narrow_wide, 24, None).is_err());
    assert!(RingView::new(&narrow_wide, 8, Some(4)).is_err());
    assert!(RingView::new(&[], 0, None).is_err());
    // A two-slot entry's pointer slot that itself reads as a marker (low half 1) is no pointer
    // any writer stores: an error, in the walk's fast loop (an exit before it) as in its slow
    // path (the marker first in the window).
    for slots in [
        vec![
            0x0000_7f00_0000_0001u64,
            0x0000_0002_0000_0001,
            0x0000_0003_0000_0000,
        ],
        vec![0x0000_7f00_0000_0001u64, 0x0000_0002_0000_0001],
    ] {
        let view = RingView::new(&slots, 8 * slots.len() as u64, None).unwrap();
        assert!(
            matches!(
                decode(&view, Mode::Bits64),
                Err(hubble_format::DecodeError::NarrowPointerInWideEntry { .. })
            ),
            "{slots:x?}: {:?}",
            decode(&view, Mode::Bits64)
        );
    }
}

#[test]
fn timestamps_recover_across_timer_wraps() {
    // Fig. 3: t1 > t2 means the upper half was one less at t1.
    let records = [
        Record::Entry {
            method: 0x1000,
            ts: 0xFFFF_FFF0,
        },
        Record::Exit { ts: 0x0000_0010 },
        Record::Exit { ts: 0x0000_0020 },
    ];
    let full = hubble_format::recover_timestamps(&records, 0x0000_0005_0000_0030).unwrap();
    assert_eq!(
        full,
        vec![
            0x0000_0004_FFFF_FFF0,
            0x0000_0005_0000_0010,
            0x0000_0005_0000_0020
        ]
    );
    assert!(hubble_format::recover_timestamps(&records, 0x30).is_err());
}
