//! The pool's reference writer and reader against the layout worked out by hand
//! (`docs/many-threads.md`, "Layout"): every header word of the pool and of each block after a
//! take, a seal at thread exit and a snapshot, the geometry's arithmetic, the reuse bound, and
//! what the reader accepts as a block's `close`.

use hubble_format::pool::{
    blocks, claimable, free_from, thread_streams, BlockInfo, Geometry, PoolError, PoolWriter, FREE,
    OWNED, SEALED,
};
use hubble_format::slot::{pack, Mode};

const G: Geometry = Geometry {
    blocks: 4,
    block_slots: 9,
    active: 2,
};
const BASE: u64 = 0x1000;

/// Address of slot `i` of the pool.
fn addr(i: usize) -> u64 {
    BASE + 8 * i as u64
}

#[test]
fn geometry_by_hand() {
    // 6 header slots, then 4 blocks of 9.
    assert_eq!(G.total_slots(), 6 + 36);
    assert_eq!(G.block_index(0), 6);
    assert_eq!(G.block_index(3), 6 + 27);
    // 9 slots less the 5 of the block header.
    assert_eq!(G.data_slots(), 4);
    assert_eq!(G.delay(), 2);
    let g = Geometry {
        blocks: 4096,
        block_slots: 2048,
        active: 128,
    };
    assert_eq!(g.total_slots(), 6 + 4096 * 2048);
    assert_eq!(g.data_slots(), 2043);
    assert_eq!(g.delay(), 3968);
}

#[test]
fn the_reuse_bound_by_hand() {
    assert_eq!(free_from(5), 10);
    assert!(!claimable(free_from(5), 4));
    assert!(claimable(free_from(5), 5));
    assert!(claimable(free_from(5), 6));
    assert!(claimable(FREE, 0));
    assert!(!claimable(OWNED, 0));
    assert!(!claimable(OWNED, u64::MAX));
}

/// Thread 7 takes block 0 at counter 10 and writes an entry and an exit; thread 9 takes block
/// 1 at counter 11 and writes one entry; thread 5 starts and never traces. Then 7 exits.
#[test]
fn takes_a_seal_at_exit_and_a_snapshot_word_by_word() {
    let mut w = PoolWriter::new(Mode::Bits64, G, BASE);
    assert_eq!(w.base(), BASE);
    assert_eq!(w.geometry(), G);
    // The pool header: next ticket, mask, block 0's address, N − A, block bytes, the
    // block-end function (none until the runtime sets it).
    assert_eq!(&w.slots()[..6], &[0, 3, addr(6), 2, 72, 0]);
    let mut with_take = w.clone();
    with_take.set_take_entry(0x7000_1234);
    assert_eq!(
        &with_take.slots()[..6],
        &[0, 3, addr(6), 2, 72, 0x7000_1234]
    );
    w.start_thread(5);
    w.start_thread(7);
    w.start_thread(9);
    assert!(w.entry(7, 0x100, 10).unwrap());
    assert!(w.exit(7, 12));
    assert!(w.entry(9, 0x200, 11).unwrap());
    // Block 0 (slots 6..15): thread 7's seq 0, ticket 0, counter 10, open, owned; two records.
    let b0 = 6;
    assert_eq!(
        &w.slots()[b0..b0 + 5],
        &[pack(7, 0), 0, 10, 0, OWNED],
        "block 0's header"
    );
    let t7 = w.words(7).unwrap();
    assert_eq!(t7.end, addr(b0));
    assert_eq!(t7.cursor, addr(b0 + 5 + 2));
    assert_eq!(t7.limit, addr(b0 + 9) - 8);
    // Block 1 (slots 15..24): thread 9's seq 0, ticket 1.
    let b1 = 15;
    assert_eq!(&w.slots()[b1..b1 + 5], &[pack(9, 0), 1, 11, 0, OWNED]);
    // Thread 5 holds nothing: its words say so, and the snapshot leaves no close for it.
    let t5 = w.words(5).unwrap();
    assert_eq!((t5.cursor, t5.limit, t5.end), (SEALED, 0, 0));
    let snap = w.snapshot();
    assert_eq!(snap[b0 + 3], addr(b0 + 7), "block 0 closed at 7's cursor");
    assert_eq!(snap[b1 + 3], addr(b1 + 6), "block 1 closed at 9's cursor");
    let mut rest = snap.clone();
    rest[b0 + 3] = 0;
    rest[b1 + 3] = 0;
    assert_eq!(
        rest,
        w.slots(),
        "a snapshot changes only the open blocks' close"
    );
    assert_eq!(
        blocks(&snap, G, BASE).unwrap(),
        [
            BlockInfo {
                index: 0,
                tid: 7,
                seq: 0,
                ticket: 0,
                time: 10,
                used: 2
            },
            BlockInfo {
                index: 1,
                tid: 9,
                seq: 0,
                ticket: 1,
                time: 11,
                used: 1
            },
        ]
    );

    // Thread 7 exits: its block is sealed at its cursor, free from the head (2) + N − A (2).
    let before = w.slots().to_vec();
    w.thread_exit(7);
    assert_eq!(w.words(7), None);
    assert_eq!(w.slots()[b0 + 3], addr(b0 + 7));
    assert_eq!(w.slots()[b0 + 4], free_from(2 + 2));
    let mut changed: Vec<usize> = (0..before.len())
        .filter(|&i| before[i] != w.slots()[i])
        .collect();
    changed.sort_unstable();
    assert_eq!(
        changed,
        [b0 + 3, b0 + 4],
        "an exit writes close and state only"
    );
    // Its records stay readable.
    let streams = thread_streams(&w.snapshot(), G, BASE).unwrap();
    let tids: Vec<(u32, usize)> = streams.iter().map(|s| (s.tid, s.slots.len())).collect();
    assert_eq!(tids, [(7, 2), (9, 1)]);
    // A thread that holds no block (5), or that is not traced (8), exits without a write.
    let before = w.slots().to_vec();
    w.thread_exit(5);
    w.thread_exit(8);
    assert_eq!(w.slots(), before.as_slice());
    assert_eq!(w.words(5), None);
}

/// What the reader accepts as a block's `close`: whole data slots, from none to all.
#[test]
fn close_is_whole_slots_of_the_data_area() {
    let mut w = PoolWriter::new(Mode::Bits64, G, BASE);
    w.start_thread(7);
    assert!(w.entry(7, 0x100, 10).unwrap());
    let snap = w.snapshot();
    let data = addr(6 + 5);
    for (close, used) in [(data, Some(0)), (data + 8, Some(1)), (data + 32, Some(4))] {
        let mut s = snap.clone();
        s[6 + 3] = close;
        let got = blocks(&s, G, BASE).map(|b| b[0].used);
        assert_eq!(got.ok(), used, "close {close:#x}");
    }
    for close in [data - 8, data + 4, data + 40] {
        let mut s = snap.clone();
        s[6 + 3] = close;
        assert_eq!(
            blocks(&s, G, BASE),
            Err(PoolError::BadClose { block: 0, close }),
            "close {close:#x}"
        );
    }
}

#[test]
fn pool_errors_say_what_is_wrong() {
    let e = blocks(&[0; 3], G, BASE).unwrap_err();
    assert_eq!(
        e,
        PoolError::BadLength {
            expected: 42,
            got: 3
        }
    );
    assert_eq!(
        e.to_string(),
        "pool snapshot has 3 slots, the geometry says 42"
    );
    let e = PoolError::BadClose {
        block: 2,
        close: 0x1234,
    };
    assert_eq!(
        e.to_string(),
        "block 2 closes at 0x1234, outside its data area: the pool is corrupt"
    );
}

/// The block size the runtime builds its geometry from: 16 KiB as the layout says, a power of
/// two (the emitted code finds a block's end by masking), and a block of it makes a pool the
/// reference writer accepts and fills.
#[test]
fn the_runtime_block_size_makes_a_valid_pool() {
    use hubble_format::pool::BLOCK_BYTES;
    assert_eq!(BLOCK_BYTES, 1 << 14);
    assert!(BLOCK_BYTES.is_power_of_two());
    let g = Geometry {
        blocks: 4,
        block_slots: BLOCK_BYTES / 8,
        active: 2,
    };
    let mut w = PoolWriter::new(Mode::Bits64, g, BASE);
    w.start_thread(1);
    for t in 0..3000u64 {
        assert!(w.entry(1, 0x100, t).unwrap());
    }
    let streams = thread_streams(&w.snapshot(), g, BASE).unwrap();
    assert_eq!(streams.iter().map(|s| s.slots.len()).sum::<usize>(), 3000);
}

/// A task record (two slots) with one data slot left in its block: in 32-bit mode (limit = the
/// block's end) that slot is padded, the block closes at its end, and the record opens the
/// next block; with two slots left it fits. In 64-bit mode the limit already keeps room for
/// two, so a record at the limit takes the next block with no pad.
#[test]
fn a_task_record_pads_the_last_slot_of_a_32_bit_block() {
    use hubble_format::slot::{encode_pad, encode_task, TaskKind};
    let block = |b: usize| addr(G.block_index(b));
    let data = |b: usize, k: usize| addr(G.block_index(b) + 5 + k);
    let slot_at = |w: &PoolWriter, a: u64| w.slots()[((a - BASE) / 8) as usize];
    let task = encode_task(TaskKind::Submit, 0x123, 0x456, 40).unwrap();
    for (mode, entries, pad, next_block) in [
        (Mode::Bits32, 3, true, true),
        (Mode::Bits32, 2, false, false),
        (Mode::Bits64, 3, false, true),
    ] {
        let mut w = PoolWriter::new(mode, G, BASE);
        w.start_thread(7);
        for k in 0..entries {
            assert!(w.entry(7, 0x7000_0040, 10 + k).unwrap());
        }
        assert!(w.task(7, TaskKind::Submit, 0x123, 0x456, 40).unwrap());
        let ctx = format!("{mode:?} after {entries} entries");
        let last = data(0, 3);
        let want_last = if pad {
            encode_pad()
        } else if next_block {
            0
        } else {
            task[1]
        };
        assert_eq!(slot_at(&w, last), want_last, "{ctx}: the block's last slot");
        if next_block {
            // The old block closed at its cursor (the pad counts), the record opens block 1.
            let close = if pad { block(0) + 8 * 9 } else { last };
            assert_eq!(w.slots()[G.block_index(0) + 3], close, "{ctx}: close");
            assert_eq!(
                [slot_at(&w, data(1, 0)), slot_at(&w, data(1, 1))],
                task,
                "{ctx}"
            );
            assert_eq!(w.words(7).unwrap().cursor, data(1, 2), "{ctx}: cursor");
        } else {
            assert_eq!(
                [slot_at(&w, data(0, 2)), slot_at(&w, data(0, 3))],
                task,
                "{ctx}"
            );
            assert_eq!(
                w.words(7).unwrap().cursor,
                block(0) + 8 * 9,
                "{ctx}: cursor"
            );
        }
        let streams = thread_streams(&w.snapshot(), G, BASE).unwrap();
        let records: usize = streams
            .iter()
            .map(|s| {
                hubble_format::ring::decode(&hubble_format::RingView::linear(&s.slots), mode)
                    .unwrap()
                    .records
                    .len()
            })
            .sum();
        assert_eq!(
            records,
            entries as usize + 1,
            "{ctx}: every record reads back"
        );
    }
    // A full 32-bit block (cursor at its end) pads nothing: the next block's header, here
    // another thread's, is not touched.
    let mut w = PoolWriter::new(Mode::Bits32, G, BASE);
    w.start_thread(7);
    w.start_thread(9);
    assert!(w.entry(7, 0x7000_0040, 10).unwrap());
    assert!(w.entry(9, 0x7000_0080, 11).unwrap());
    for k in 1..4 {
        assert!(w.entry(7, 0x7000_0040, 11 + k).unwrap());
    }
    let header: Vec<u64> = w.slots()[G.block_index(1)..G.block_index(1) + 5].to_vec();
    assert!(w.task(7, TaskKind::Begin, 1, 0, 20).unwrap());
    assert_eq!(
        &w.slots()[G.block_index(1)..G.block_index(1) + 5],
        header.as_slice()
    );
    assert_eq!(
        w.slots()[G.block_index(0) + 3],
        block(1),
        "block 0 closed at its end"
    );
}
