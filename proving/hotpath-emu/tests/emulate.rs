//! The emitted A64 and T32 trace points, executed in unicorn, checked slot by slot.
mod common;

use common::emu::Machine;
use common::scenario;
use hubble_hotpath_emu::Options;

fn print(stats: &scenario::Stats) {
    for (path, (min, max, n)) in &stats.paths {
        println!("{path:<32} {min:>3}..{max:<3} x{n}");
    }
}

#[test]
fn a64_scenario_x0() {
    // 13 slots: odd, so wraps hit both "one slot left (pad)" and "exactly full".
    let mut m = Machine::a64(13, 0, Options::default());
    let stats = scenario::run(&mut m, 600, 333, 101);
    print(&stats);
    // docs/hot-path.md: LDR, LDR, (TST,) CBZ, CMP/CCMP, MRS, B.HS, STP, STR.
    assert_eq!(stats.paths["Exit - fast"].1, 8);
    assert_eq!(stats.paths["EntryNarrow narrow fast"].1, 8);
    assert_eq!(stats.paths["Entry narrow fast"].1, 9);
    assert_eq!(stats.paths["Entry off"].1, 4);
    assert_eq!(stats.paths["Exit off"].1, 3);
    assert!(stats.paths.keys().any(|k| k.contains("wrap")));
    assert!(stats.paths.keys().any(|k| k.starts_with("Entry wide")));
}

#[test]
fn a64_scenario_other_method_register_and_isb() {
    let opts = Options {
        isb: true,
        ..Options::default()
    };
    let mut m = Machine::a64(8, 7, opts);
    let stats = scenario::run(&mut m, 400, 50, 7);
    assert_eq!(
        stats.paths["Exit - fast"].1, 9,
        "ISB adds exactly one instruction"
    );
}

#[test]
fn t32_scenario_low_temps() {
    let mut m = Machine::t32(11, 0, [4, 5, 6], Options::default());
    let stats = scenario::run(&mut m, 600, 250, 99);
    print(&stats);
    assert_eq!(stats.paths["Exit - fast"].1, 8);
    assert_eq!(stats.paths["Entry narrow fast"].1, 7);
    assert!(stats.paths.keys().any(|k| k.contains("wrap")));
}

#[test]
fn t32_scenario_high_cursor_temp() {
    // r12 cannot be tested with CBZ: the emitter falls back to CMP + BEQ (OFF = 3).
    let mut m = Machine::t32(9, 1, [12, 10, 11], Options::default());
    assert_eq!(m.off_instructions(hubble_hotpath_emu::Kind::Exit), 3);
    let stats = scenario::run(&mut m, 300, 120, 30);
    assert_eq!(stats.paths["Exit off"].1, 3);
    assert_eq!(stats.paths["Exit - fast"].1, 9);
}

/// The registers a compiled JNI stub gives the T32 trace points
/// (`art-patches/files/compiler/jni/quick/hubble_jni_trace.cc`): r5-r7 at the entry (method in
/// r0), r2, r3 and LR at the exit. Every other register, the return registers r0/r1 among
/// them, must come through unchanged, and the ring must match the reference writer.
#[test]
fn t32_scenario_jni_stub_registers() {
    let mut entry = Machine::t32(11, 0, [5, 6, 7], Options::default());
    let stats = scenario::run(&mut entry, 400, 160, 41);
    assert_eq!(stats.paths["Entry narrow fast"].1, 7);
    let mut exit = Machine::t32(11, 0, [2, 3, 14], Options::default());
    let stats = scenario::run(&mut exit, 400, 160, 43);
    print(&stats);
    assert_eq!(stats.paths["Exit - fast"].1, 8);
    assert!(stats.paths.keys().any(|k| k.contains("wrap")));
}

/// A stop request that arrives exactly when the ring is full (cursor at `limit` or `end`):
/// the stop check comes first, so the end position published is the unwrapped cursor, the
/// decoder accepts it, and a restart from it wraps (with a pad in 64-bit mode).
fn stop_at_ring_end(mut m: Machine, mode: hubble_format::Mode, finish_wide: bool) {
    use hubble_format::{decode, Record, RingView, RingWriter};
    use hubble_hotpath_emu::{field, Kind};
    let ring = m.layout.ring;
    let mut model = RingWriter::new(mode, m.layout.slots);
    model.start(1);
    m.control_start(ring, 1);
    let mut expected = vec![Record::Start { ts: 1 }];
    while m.read_field(field::CURSOR) < m.real_limit() {
        if finish_wide && m.read_field(field::CURSOR) + 16 == m.ring_end() {
            // The last record takes the two slots left: the cursor ends exactly at `end`.
            let wide = 0x0000_0042_1234_5670;
            let r = m.run(Kind::Entry, wide);
            model.entry(wide, *r.counters.last().unwrap()).unwrap();
            expected.push(Record::Entry {
                method: wide,
                ts: *r.counters.last().unwrap(),
            });
            continue;
        }
        let r = m.run(Kind::Exit, 0);
        model.exit(*r.counters.last().unwrap());
        expected.push(Record::Exit {
            ts: *r.counters.last().unwrap(),
        });
    }
    if finish_wide {
        assert_eq!(m.read_field(field::CURSOR), m.ring_end());
    }
    let full = m.read_field(field::CURSOR);
    m.control_request_stop();
    let before = m.ring();
    m.run(Kind::EntryNarrow, 0x1234_5670);
    assert_eq!(m.ring(), before, "nothing stored after the stop request");
    assert_eq!(m.read_field(field::CURSOR), 0);
    assert_eq!(m.read_field(field::STOP), full);
    assert_eq!(full - ring, model.write_pos_bytes());
    let slots = m.ring();
    let w = decode(&RingView::new(&slots, full - ring, None).unwrap(), mode).unwrap();
    assert_eq!(w.records, expected);
    model.start(2);
    m.control_start(full, 2);
    assert_eq!(m.ring(), model.slots());
    let r = m.run(Kind::EntryNarrow, 0x1234_5670);
    model
        .entry(0x1234_5670, *r.counters.last().unwrap())
        .unwrap();
    assert_eq!(m.ring(), model.slots());
    assert_eq!(m.read_field(field::CURSOR), ring + model.write_pos_bytes());
}

#[test]
fn a64_stop_when_ring_full() {
    use hubble_format::Mode::Bits64;
    // Cursor stops at end - 8 (one slot left: the restart pads it) and at end (nothing left).
    stop_at_ring_end(Machine::a64(10, 0, Options::default()), Bits64, false);
    stop_at_ring_end(Machine::a64(11, 0, Options::default()), Bits64, true);
}

#[test]
fn t32_stop_when_ring_full() {
    use hubble_format::Mode::Bits32;
    stop_at_ring_end(
        Machine::t32(10, 0, [4, 5, 6], Options::default()),
        Bits32,
        false,
    );
}
