//! The end-to-end scenario: tracing off, start, random entries and exits with `ArtMethod*`
//! values above and below 4 GiB, ring wraps, a stale stop doorbell, a stop request mid-stream,
//! restart. After every trace point the whole ring and the per-thread block are compared with
//! `hubble_format::RingWriter` fed the same calls and the counter values the code read; after a
//! stop and at the end the ring is decoded backwards with `hubble_format::decode`.
#![allow(dead_code)]

use std::collections::BTreeMap;

use hubble_format::{Mode, Record, RingWriter};
use hubble_hotpath_emu::{field, Kind};
use hubble_testkit::synth::check_ring_window;

use super::disasm::Isa;
use super::emu::Machine;

/// Executed-instruction counts per path: (min, max, how many runs).
#[derive(Default, Debug)]
pub struct Stats {
    pub paths: BTreeMap<String, (u64, u64, u64)>,
    /// Bytes stored into the ring per path (record bytes; pads counted separately).
    pub bytes: BTreeMap<String, u64>,
}

impl Stats {
    fn add(&mut self, path: &str, executed: u64, bytes: u64) {
        let e = self
            .paths
            .entry(path.to_string())
            .or_insert((u64::MAX, 0, 0));
        e.0 = e.0.min(executed);
        e.1 = e.1.max(executed);
        e.2 += 1;
        self.bytes.insert(path.to_string(), bytes);
    }
}

fn method(m: &mut Machine, wide: bool) -> u64 {
    let x = m.rng.next();
    match (m.layout.isa, wide) {
        (Isa::T32, _) | (Isa::A64, false) => ((x & 0xffff_fffc) | 4) & 0xffff_fffc | 0x10,
        (Isa::A64, true) => (x | (1 << (32 + (x >> 59)))) & !3,
    }
}

fn wrapping_ge(a: u32, b: u32) -> bool {
    a.wrapping_sub(b) < (1 << 31)
}

/// Runs `ops` random trace points (a stop request after `stop_at` of them, a stale doorbell
/// at `stale_at`). Panics on any difference from the reference writer.
pub fn run(m: &mut Machine, ops: usize, stop_at: usize, stale_at: usize) -> Stats {
    let mode = match m.layout.isa {
        Isa::A64 => Mode::Bits64,
        Isa::T32 => Mode::Bits32,
    };
    let ring_base = m.layout.ring;
    let mut stats = Stats::default();
    let mut model = RingWriter::new(mode, m.layout.slots);
    let kinds = [Kind::Entry, Kind::EntryNarrow, Kind::Exit];

    // Tracing off: the load(s) and the CBZ (and an A64 entry's TST), nothing written.
    for kind in kinds {
        let method = method(m, false);
        let r = m.run(kind, method);
        assert_eq!(r.executed, m.off_instructions(kind), "OFF path of {kind:?}");
        assert!(r.counters.is_empty());
        assert_eq!(m.read_field(field::CURSOR), 0);
        stats.add(&format!("{kind:?} off"), r.executed, 0);
    }
    assert!(m.ring().iter().all(|&s| s == 0), "ring written while off");

    let mut ts_start = 0x1234_5678u32;
    model.start(ts_start);
    m.control_start(ring_base, ts_start);
    let mut expected = vec![Record::Start { ts: ts_start }];
    let mut last_ts: Option<u32> = None;

    for i in 0..ops {
        let wide = m.layout.isa == Isa::A64 && m.rng.below(2) == 0;
        let kind = match m.rng.below(5) {
            0 | 1 => Kind::Exit,
            2 if !wide => Kind::EntryNarrow,
            _ => Kind::Entry,
        };
        let method = method(m, wide);

        if i == stop_at {
            m.control_request_stop();
            let before = m.ring();
            let r = m.run(kind, method);
            // A64 reads the counter before its branch; nothing may be stored after it (the
            // ring is compared below).
            assert!(r.counters.len() <= 1);
            assert!(r.out_of_line);
            assert_eq!(m.read_field(field::CURSOR), 0, "cursor not cleared");
            let end = m.read_field(field::STOP);
            assert_eq!(
                end,
                ring_base + model.write_pos_bytes(),
                "published end position"
            );
            assert_eq!(m.ring(), before, "the ring changed while stopping");
            stats.add(&format!("{kind:?} stop"), r.executed, 0);
            check_ring_window(&m.ring(), end - ring_base, mode, &expected);
            for kind in kinds {
                let r = m.run(kind, method);
                assert_eq!(r.executed, m.off_instructions(kind), "OFF after stop");
                assert_eq!(m.read_field(field::STOP), end);
            }
            ts_start = ts_start.wrapping_add(0x1000);
            model.start(ts_start);
            m.control_start(end, ts_start);
            expected = vec![Record::Start { ts: ts_start }];
            assert_eq!(m.ring(), model.slots(), "restart");
            continue;
        }
        if i == stale_at {
            // The inline load sees a doorbell (limit 0) with no stop request; the reload after the
            // barrier sees the real limit: the trace point must carry on as usual.
            let limit = m.real_limit();
            m.write_field(field::LIMIT, 0);
            m.inject_at_barrier(field::LIMIT, limit);
        }

        let cursor_before = m.read_field(field::CURSOR);
        let r = m.run(kind, method);
        // One counter read on the fast path; the out-of-line half may read it again (A64 reads
        // it before its branch): the record holds the last value read.
        assert!(!r.counters.is_empty(), "{kind:?} read no counter");
        if !r.out_of_line {
            assert_eq!(r.counters.len(), 1, "{kind:?} must read the counter once");
        }
        let ts = *r.counters.last().unwrap();
        if let Some(last) = last_ts {
            assert!(
                wrapping_ge(ts, last),
                "counter went backwards: {ts} < {last}"
            );
        }
        last_ts = Some(ts);
        let pos_before = model.write_pos_bytes();
        match kind {
            Kind::Exit => {
                model.exit(ts);
                expected.push(Record::Exit { ts });
            }
            _ => {
                model.entry(method, ts).unwrap();
                expected.push(Record::Entry { method, ts });
            }
        }
        assert_eq!(
            m.ring(),
            model.slots(),
            "ring after op {i} ({kind:?}, {method:#x})"
        );
        let cursor = m.read_field(field::CURSOR);
        assert_eq!(
            cursor,
            ring_base + model.write_pos_bytes(),
            "cursor after op {i}"
        );
        assert_eq!(m.read_field(field::STOP), 0);
        assert_eq!(m.read_field(field::LIMIT), m.real_limit());

        let wrapped =
            cursor_before - ring_base != pos_before || model.write_pos_bytes() < pos_before;
        let width = match (kind, wide) {
            (Kind::Exit, _) => "-",
            (_, true) => "wide",
            (_, false) => "narrow",
        };
        let path = if i == stale_at {
            format!("{kind:?} {width} stale-limit")
        } else if wrapped || (r.out_of_line && !wide) {
            format!("{kind:?} {width} wrap")
        } else {
            format!("{kind:?} {width} fast")
        };
        let stored = cursor.wrapping_sub(cursor_before) % (m.layout.slots as u64 * 8);
        let stored = if wrapped { cursor - ring_base } else { stored };
        stats.add(&path, r.executed, stored);
    }
    let cursor = m.read_field(field::CURSOR);
    check_ring_window(&m.ring(), cursor - ring_base, mode, &expected);
    stats
}
