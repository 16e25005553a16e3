//! `hubble export --format nanoscope` against `hubble decode` (the format owners' decoder,
//! through the binary) converted to wall time in the test, as the peer stage's
//! `tests/peers/hubble_expect.py` does: counters recovered from decode's ns, frames cut at the
//! window start opened there, frames running at the flush closed at the flush, and
//! `wall(c) = wall_clock_ns − ⌊(reference − c)·10⁹ / hz⌋` worked out here.

mod common;

use hubble_format::Mode;
use hubble_testkit::synth::{trace, Spec};

fn hubble(args: &[&str]) -> String {
    hubble_testkit::stdout_of(common::hubble().args(args))
}

#[test]
fn nanoscope_lines_are_decode_on_the_wall_clock() {
    let dir = tempfile::tempdir().unwrap();
    let specs = [
        // Wrapped (frames cut at the start), a rate that does not divide 10⁹.
        (Mode::Bits64, 1.7, 19_200_000, 0),
        // Not wrapped, one tick a ns, 32-bit.
        (Mode::Bits32, 0.6, 1_000_000_000, 3),
        // Wrapped twice, unresolved methods.
        (Mode::Bits64, 2.3, 24_000_000, 4),
    ];
    for (n, &(mode, laps, timer_hz, unresolved_every)) in specs.iter().enumerate() {
        let file = trace(&Spec {
            mode,
            laps,
            timer_hz,
            unresolved_every,
            ring_slots: 3000,
            seed: 60 + n as u64,
            ..Spec::default()
        });
        let path = dir.path().join(format!("t{n}.hubble"));
        file.write_atomic(&path).unwrap();
        let path = path.to_str().unwrap();
        let h = &file.header;
        let hz = u128::from(h.timer_hz);
        let wall = |c: u64| -> u128 {
            let (r, w) = (u128::from(h.reference_counter), u128::from(h.wall_clock_ns));
            let c = u128::from(c);
            if c <= r {
                w - (r - c) * 1_000_000_000 / hz
            } else {
                w + (c - r) * 1_000_000_000 / hz
            }
        };
        // decode prints ⌊c·10⁹/hz⌋; for hz ≤ 1 GHz the counter is the smallest c that gives it.
        let mut events: Vec<(u64, Option<String>)> = Vec::new();
        for line in hubble(&["decode", path]).lines() {
            let (ns, name) = line.split_once(':').unwrap();
            let ns = u128::from(ns.parse::<u64>().unwrap());
            let c = (ns * hz + 999_999_999) / 1_000_000_000;
            assert_eq!(c * 1_000_000_000 / hz, ns, "counter recovery");
            events.push((c as u64, (name != "POP").then(|| name.to_owned())));
        }
        let (mut depth, mut lowest) = (0i64, 0i64);
        for (_, name) in &events {
            depth += if name.is_some() { 1 } else { -1 };
            lowest = lowest.min(depth);
        }
        assert!(events.len() > 1000, "{}", events.len());
        // The window starts at its oldest record: the start record when it is still there,
        // which decode does not print.
        let first = file.decode_events().unwrap().events[0].counter;
        let mut want: Vec<String> = Vec::new();
        for _ in 0..-lowest {
            want.push(format!(
                "{}:{}",
                wall(first),
                hubble_format::names::BEFORE_WINDOW
            ));
        }
        for (c, name) in &events {
            want.push(format!("{}:{}", wall(*c), name.as_deref().unwrap_or("POP")));
        }
        let last = events.last().unwrap().0.max(h.reference_counter);
        for _ in 0..depth - lowest {
            want.push(format!("{}:POP", wall(last)));
        }
        assert!(
            lowest < 0 || laps < 1.0,
            "spec {n} cuts frames at the start"
        );
        assert!(
            depth - lowest > 0,
            "spec {n} has frames running at the flush"
        );
        let got = hubble(&["export", path, "--format", "nanoscope", "-o", "-"]);
        let got: Vec<&str> = got.lines().collect();
        assert_eq!(got.len(), want.len(), "spec {n}");
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert_eq!(g, w, "spec {n}, line {}", i + 1);
        }
    }
}
