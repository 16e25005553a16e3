//! The traced-side model leaves a ring exactly as `hubble_format::RingWriter` does for the same
//! calls (including wraps, pads, two-slot entries, stops and restarts), in both modes.
#![cfg(not(loom))]

use hubble_format::{Mode, RingWriter};
use hubble_runtime::block::{self, ThreadBlock};
use hubble_runtime::ring::Ring;

use hubble_testkit::Rng;

fn run(mode: Mode, seed: u64, ops: usize) {
    let ring = Ring::new(4096).unwrap();
    let slots = ring.slots();
    let blk = ThreadBlock::default();
    let mut reference = RingWriter::new(mode, slots.slots.len());
    let mut rng = Rng::new(seed);
    let mut ts = 100u32;
    block::start(&blk, slots, mode, 0, ts);
    reference.start(ts);
    let mut restarts = 0;
    for _ in 0..ops {
        ts = ts.wrapping_add(1 + (rng.next() % 50) as u32);
        match rng.next() % 100 {
            0..=44 => {
                // Narrow and (in 64-bit mode) wide pointers, 4-byte aligned.
                let wide = mode == Mode::Bits64 && rng.next() % 3 == 0;
                let m = if wide {
                    // 8-byte aligned, as ArtMethods are in a 64-bit process.
                    0x7f00_0000_0000 | ((rng.next() % 4096) << 3)
                } else {
                    0x1000 + ((rng.next() % 4096) << 2)
                };
                assert!(block::trace_entry(&blk, &slots, mode, m, ts));
                reference.entry(m, ts).unwrap();
            }
            45..=97 => {
                assert!(block::trace_exit(&blk, &slots, ts));
                reference.exit(ts);
            }
            _ => {
                // Stop through the doorbell, then restart where it stopped.
                block::request_stop(&blk);
                assert!(
                    !block::trace_exit(&blk, &slots, ts),
                    "the stop point writes nothing"
                );
                let end = block::poll_stopped(&blk).expect("stopped");
                assert_eq!(slots.offset(end) as u64, reference.write_pos_bytes());
                assert!(
                    !block::trace_exit(&blk, &slots, ts),
                    "stopped: nothing written"
                );
                block::start(&blk, slots, mode, slots.offset(end), ts);
                reference.start(ts);
                restarts += 1;
            }
        }
        let cursor = blk.cursor.load(std::sync::atomic::Ordering::Relaxed);
        assert_eq!(slots.offset(cursor) as u64, reference.write_pos_bytes());
    }
    let ours: Vec<u64> = slots
        .slots
        .iter()
        .map(|s| s.load(std::sync::atomic::Ordering::Relaxed))
        .collect();
    assert_eq!(ours, reference.slots(), "mode {mode:?} seed {seed}");
    assert!(restarts > 0);
}

#[test]
fn model_matches_ring_writer_64() {
    for seed in 1..40 {
        run(Mode::Bits64, seed * 7919, 5000);
    }
}

#[test]
fn model_matches_ring_writer_32() {
    for seed in 1..40 {
        run(Mode::Bits32, seed * 104729, 5000);
    }
}
