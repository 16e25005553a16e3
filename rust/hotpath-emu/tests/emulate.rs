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
    assert_eq!(stats.paths["Exit - fast"].1, 7);
    assert_eq!(stats.paths["EntryNarrow narrow fast"].1, 7);
    assert_eq!(stats.paths["Entry narrow fast"].1, 8);
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
        stats.paths["Exit - fast"].1, 8,
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
    assert_eq!(m.off_instructions(), 3);
    let stats = scenario::run(&mut m, 300, 120, 30);
    assert_eq!(stats.paths["Exit off"].1, 3);
    assert_eq!(stats.paths["Exit - fast"].1, 9);
}
