//! The x86_64 and x86 trace points ART emits, run on this CPU against the reference writer.
//!
//! Every scenario: tracing off (entry and exit: three instructions, nothing written), start,
//! a few hundred random entries and exits (x86_64: `ArtMethod*` values above and below 4 GiB),
//! several wraps (odd and even ring sizes: pad and exact fill), a stale doorbell (the inline half
//! sees limit 0, the out-of-line recheck the real limit), a stop request mid-stream (nothing
//! written, cursor cleared, end position published), off again, restart. After every trace point
//! the whole ring, the cursor, limit and stop words are compared with
//! `hubble_format::RingWriter` fed the same calls, and every general register but the cursor and
//! the counter's (RAX/RDX, RCX for RDTSCP) must be unchanged (each is set to a random pattern
//! before the call). Single-stepped runs feed the writer the scripted counter value the harness
//! substituted after the RDTSC; native runs take the timestamp from the slot and check that it
//! lies between the fenced counter reads around the call. The ring is decoded backwards with
//! `hubble_format::decode` after each stop and at the end.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hubble_format::{Mode, Record, RingWriter};
use hubble_hotpath_x86::{blob_command, build_harness, run, Blob, Blobs, Isa, Kind, Rng, COUNTERS};
use hubble_testkit::synth::check_ring_window;

fn blobs() -> &'static Blobs {
    static B: OnceLock<Blobs> = OnceLock::new();
    B.get_or_init(Blobs::load)
}

fn harness(isa: Isa) -> &'static PathBuf {
    static H64: OnceLock<PathBuf> = OnceLock::new();
    static H32: OnceLock<PathBuf> = OnceLock::new();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    match isa {
        Isa::X86_64 => H64.get_or_init(|| build_harness(isa, dir)),
        Isa::X86 => H32.get_or_init(|| build_harness(isa, dir)),
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Entry(u64, u64),
    Exit(u64),
    Start(u32),
    Stop,
    Stale,
}

struct Setup<'a> {
    isa: Isa,
    entry_kind: Kind,
    counter: &'a str,
    cursor: &'a str,
    method: &'a str,
    slots: usize,
    /// Single-stepped (scripted counter) or native.
    step: bool,
    ops: usize,
    /// Stop when the cursor is at the ring's end (end - 8 or end) instead of mid-stream.
    stop_when_full: bool,
    seed: u64,
}

/// Executed instructions per path (single-stepped): (min, max, count).
type Stats = BTreeMap<String, (u64, u64, u64)>;

fn add(stats: &mut Stats, path: String, executed: u64) {
    let e = stats.entry(path).or_insert((u64::MAX, 0, 0));
    e.0 = e.0.min(executed);
    e.1 = e.1.max(executed);
    e.2 += 1;
}

fn method(rng: &mut Rng, isa: Isa, wide: bool) -> u64 {
    let x = rng.next();
    match (isa, wide) {
        (Isa::X86_64, true) => (x | (1 << (32 + (x >> 59)))) & !3,
        _ => (x & 0xffff_fffc) | 0x10,
    }
}

/// The script: ops plus where the stop falls, chosen by simulating the writer.
fn script(s: &Setup, rng: &mut Rng) -> Vec<Op> {
    let mode = if s.isa == Isa::X86 {
        Mode::Bits32
    } else {
        Mode::Bits64
    };
    let limit_slots = if mode == Mode::Bits64 {
        s.slots - 1
    } else {
        s.slots
    };
    let mut sim = RingWriter::new(mode, s.slots);
    let mut ts = rng.next() & 0xffff_ffff_0000_0000 | 0xfff0_0000; // wraps its low half early
    let mut ops = vec![Op::Entry(method(rng, s.isa, false), ts), Op::Exit(ts)];
    sim.start(0x1234_5678);
    ops.push(Op::Start(0x1234_5678));
    let stop_at = s.ops / 2;
    let stale_at = s.ops / 3;
    let mut stopped = false;
    let mut laps = 0;
    for i in 0..s.ops {
        ts = ts.wrapping_add(1 + rng.below(1 << 24));
        let pos = sim.write_pos_bytes() as usize / 8;
        let stop_now = !stopped
            && if s.stop_when_full {
                laps > 0 && pos >= limit_slots
            } else {
                i == stop_at
            };
        if s.step && i == stale_at && !stop_now {
            ops.push(Op::Stale);
        }
        let wide = s.isa == Isa::X86_64 && s.entry_kind == Kind::Entry && rng.below(2) == 0;
        let op = if rng.below(5) < 2 {
            Op::Exit(ts)
        } else {
            Op::Entry(method(rng, s.isa, wide), ts)
        };
        if stop_now {
            stopped = true;
            ops.push(Op::Stop);
            ops.push(op);
            ops.push(Op::Entry(method(rng, s.isa, false), ts));
            ops.push(Op::Exit(ts));
            let start_ts = 0x1234_5678u32.wrapping_add(0x1000);
            sim.start(start_ts); // only for positions; the checker replays for real
            ops.push(Op::Start(start_ts));
            continue;
        }
        let before = sim.write_pos_bytes();
        match op {
            Op::Exit(t) => sim.exit(t as u32),
            Op::Entry(m, t) => sim.entry(m, t as u32).unwrap(),
            _ => unreachable!(),
        }
        if sim.write_pos_bytes() < before {
            laps += 1;
        }
        ops.push(op);
    }
    assert!(
        stopped,
        "the scenario never stopped (ring too large for the op count?)"
    );
    ops
}

fn run_scenario(s: &Setup, entry: &Blob, exit: &Blob) -> Stats {
    let isa = s.isa;
    let mode = if isa == Isa::X86 {
        Mode::Bits32
    } else {
        Mode::Bits64
    };
    let ptr = if isa == Isa::X86 { 4 } else { 8 };
    let o = blobs().offsets[&ptr];
    let mut rng = Rng::new(s.seed);
    let ops = script(s, &mut rng);
    let method_reg = isa.reg(s.method);
    // The cursor and what the counter read writes: RAX/EAX (0), RDX/EDX (2), RCX/ECX (1).
    let mut allowed = (1u32 << isa.reg(s.cursor)) | 1 << 0 | 1 << 2;
    if s.counter == "rdtscp" {
        allowed |= 1 << 1;
    }
    let mut text = format!(
        "init {} {} {} {} {} {} {}\n",
        ptr * 8,
        s.slots,
        o[0],
        o[1],
        o[2],
        o[3],
        o[4]
    );
    text += &blob_command("entry", entry);
    text += &blob_command("exit", exit);
    text += &format!("regs {method_reg} {allowed}\nstep {}\n", u8::from(s.step));
    for op in &ops {
        text += &match *op {
            Op::Entry(m, t) => format!("entry {m:x} {t:x}\n"),
            Op::Exit(t) => format!("exit {t:x}\n"),
            Op::Start(t) => format!("start {t}\n"),
            Op::Stop => "stop\n".to_string(),
            Op::Stale => "stale\n".to_string(),
        };
    }
    let reports = run(harness(isa), &text);
    assert_eq!(reports.len(), ops.len(), "one report per command");

    let real_limit = (s.slots as u64 * 8) - if mode == Mode::Bits64 { 8 } else { 0 };
    let names = isa.regs();
    let mut model = RingWriter::new(mode, s.slots);
    let mut on = false;
    let mut stop_requested = false;
    let mut stale = false;
    let mut expected: Vec<Record> = Vec::new();
    let mut stats = Stats::new();
    let mut last_ts: Option<u32> = None;
    for (i, (op, r)) in ops.iter().zip(&reports).enumerate() {
        // Registers first: a clobber must be reported as such.
        let bad = r.changed & !allowed;
        assert!(
            bad == 0,
            "op {i} ({op:?}) changed registers it must preserve: {:?}",
            (0..names.len())
                .filter(|b| bad & (1 << b) != 0)
                .map(|b| names[b])
                .collect::<Vec<_>>()
        );
        let executed = r.executed.saturating_sub(1); // the blob's RET
        match *op {
            Op::Start(t) => {
                model.start(t);
                expected = vec![Record::Start { ts: t }];
                on = true;
                stop_requested = false;
                assert_eq!(r.ring, model.slots(), "op {i}: ring after start");
                continue;
            }
            Op::Stop => {
                stop_requested = true;
                continue;
            }
            Op::Stale => {
                stale = true;
                continue;
            }
            Op::Entry(..) | Op::Exit(..) => {}
        }
        let kind = match op {
            Op::Exit(_) => "exit",
            _ if s.entry_kind == Kind::EntryNarrow => "entry (narrow kind)",
            _ => "entry",
        };
        if !on {
            assert_eq!(r.cursor, None, "op {i}: cursor while off");
            assert_eq!(r.ring, model.slots(), "op {i}: ring written while off");
            if s.step {
                assert_eq!(executed, 3, "op {i}: OFF path of the {kind}");
                assert_eq!(r.reads, 0);
                add(&mut stats, format!("{kind} off"), executed);
            }
            continue;
        }
        if stop_requested {
            let end = model.write_pos_bytes();
            assert_eq!(r.cursor, None, "op {i}: cursor not cleared at the stop");
            assert_eq!(r.stop, end as i64, "op {i}: published end position");
            assert_eq!(
                r.ring,
                model.slots(),
                "op {i}: the ring changed while stopping"
            );
            if s.step {
                assert_eq!(r.reads, 0, "op {i}: counter read on the stop path");
                assert!(r.out_of_line);
                add(&mut stats, format!("{kind} stop"), executed);
            }
            check_ring_window(&r.ring, end, mode, &expected);
            on = false;
            continue;
        }
        let pos_before = model.write_pos_bytes();
        let ts = if s.step {
            assert_eq!(r.reads, 1, "op {i}: one counter read per record");
            match *op {
                Op::Entry(_, t) | Op::Exit(t) => t as u32,
                _ => unreachable!(),
            }
        } else {
            // The slot the record's last word went to, per the writer; its upper half.
            let mut probe = model.clone();
            match *op {
                Op::Entry(m, _) => probe.entry(m, 0).unwrap(),
                _ => probe.exit(0),
            }
            let last = (probe.write_pos_bytes() / 8 - 1) as usize;
            let ts = (r.ring[last] >> 32) as u32;
            let (lo, hi) = (r.clock.0 as u32, r.clock.1 as u32);
            assert!(
                ts.wrapping_sub(lo) <= hi.wrapping_sub(lo),
                "op {i}: timestamp {ts:#x} not between the reads around the call ({lo:#x}..{hi:#x})"
            );
            if let Some(last) = last_ts {
                assert!(
                    ts.wrapping_sub(last) < 1 << 31,
                    "op {i}: counter went backwards"
                );
            }
            last_ts = Some(ts);
            ts
        };
        match *op {
            Op::Entry(m, _) => {
                model.entry(m, ts).unwrap();
                expected.push(Record::Entry { method: m, ts });
            }
            _ => {
                model.exit(ts);
                expected.push(Record::Exit { ts });
            }
        }
        assert_eq!(r.ring, model.slots(), "op {i} ({op:x?}): ring");
        assert_eq!(r.cursor, Some(model.write_pos_bytes()), "op {i}: cursor");
        assert_eq!(r.stop, 0, "op {i}: stop word");
        assert_eq!(r.limit, Some(real_limit), "op {i}: limit");
        if s.step {
            let wide = matches!(*op, Op::Entry(m, _) if m >> 32 != 0);
            let wrapped = model.write_pos_bytes() < pos_before;
            let path = if stale {
                assert!(
                    r.out_of_line,
                    "op {i}: the stale limit did not go out of line"
                );
                "stale-limit"
            } else if wrapped || r.out_of_line && !wide {
                "wrap"
            } else {
                "fast"
            };
            let width = match (kind, wide) {
                ("exit", _) => "",
                (_, true) => " wide",
                _ => " narrow",
            };
            add(&mut stats, format!("{kind}{width} {path}"), executed);
        }
        stale = false;
    }
    check_ring_window(
        &reports.last().unwrap().ring,
        model.write_pos_bytes(),
        mode,
        &expected,
    );
    stats
}

fn pairs(isa: Isa, counter: &str) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = blobs()
        .blobs
        .keys()
        .filter(|k| k.0 == isa && k.1 == Kind::Entry && k.2 == counter)
        .map(|k| (k.3.clone(), k.4.clone()))
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no {isa:?} {counter} blobs");
    v
}

fn scenarios(isa: Isa, step: bool) -> Stats {
    let mut all = Stats::new();
    let mut seed = 1;
    for counter in COUNTERS {
        for (cursor, method) in pairs(isa, counter) {
            let kinds: &[Kind] = if isa == Isa::X86_64 {
                &[Kind::Entry, Kind::EntryNarrow]
            } else {
                &[Kind::Entry]
            };
            for &entry_kind in kinds {
                for (slots, stop_when_full) in [(37, false), (40, false), (23, true), (24, true)] {
                    seed += 1;
                    let s = Setup {
                        isa,
                        entry_kind,
                        counter,
                        cursor: &cursor,
                        method: &method,
                        slots,
                        step,
                        ops: if step { 300 } else { 600 },
                        stop_when_full,
                        seed,
                    };
                    let b = blobs();
                    let stats = run_scenario(
                        &s,
                        b.get(isa, entry_kind, counter, &cursor, &method),
                        b.get(isa, Kind::Exit, counter, &cursor, &method),
                    );
                    if counter == "rdtsc" {
                        for (k, v) in stats {
                            let e = all.entry(k).or_insert((u64::MAX, 0, 0));
                            e.0 = e.0.min(v.0);
                            e.1 = e.1.max(v.1);
                            e.2 += v.2;
                        }
                    }
                }
            }
        }
    }
    all
}

fn print(isa: Isa, stats: &Stats) {
    println!("{isa:?}: instructions executed per path (RDTSC), min-max over runs:");
    for (k, (lo, hi, n)) in stats {
        println!("  {k:<28} {lo}-{hi}  ({n} runs)");
    }
}

#[test]
fn x86_64_single_stepped() {
    let stats = scenarios(Isa::X86_64, true);
    print(Isa::X86_64, &stats);
    // The counts docs/hot-path.md gives (derived from the listing there, not from this run).
    assert_eq!(
        stats["entry narrow fast"],
        (14, 14, stats["entry narrow fast"].2)
    );
    assert_eq!(stats["entry (narrow kind) narrow fast"].0, 12);
    assert_eq!(stats["exit fast"].0, 10);
    assert_eq!(stats["entry off"].0, 3);
}

#[test]
fn x86_64_native() {
    scenarios(Isa::X86_64, false);
}

#[test]
fn x86_single_stepped() {
    let stats = scenarios(Isa::X86, true);
    print(Isa::X86, &stats);
    assert_eq!(stats["entry narrow fast"].0, 10);
    assert_eq!(stats["exit fast"].0, 10);
    assert_eq!(stats["entry off"].0, 3);
}

#[test]
fn x86_native() {
    scenarios(Isa::X86, false);
}

/// A copy of `blob` with `at..at + len` replaced by NOPs (or `with`).
fn mutate(blob: &Blob, at: usize, with: &[u8]) -> Blob {
    let mut m = blob.clone();
    m.bytes[at..at + with.len()].copy_from_slice(with);
    m
}

fn must_fail(what: &str, expect: &str, f: impl FnOnce() + std::panic::UnwindSafe) {
    let err = std::panic::catch_unwind(f).expect_err(what);
    let msg = err
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    assert!(
        msg.contains(expect),
        "{what}: failed, but not on '{expect}': {msg}"
    );
    println!(
        "mutant '{what}' caught: {}",
        msg.lines().next().unwrap_or("")
    );
}

#[test]
fn mutants_fail() {
    for (isa, cursor, method, store_len, shl) in [
        // x86_64: the cursor store is `65 48 89 0c 25 <disp32>` (9 bytes); `shl rax, 32` is
        // 48 c1 e0 20, as `shl rbx, 32` 48 c1 e3 20.
        (
            Isa::X86_64,
            "rcx",
            "rdi",
            9usize,
            Some([0x48u8, 0xc1, 0xe0, 0x20]),
        ),
        // x86: the cursor store is `64 89 0d <disp32>` (7 bytes).
        (Isa::X86, "ecx", "esi", 7, None),
    ] {
        let b = blobs();
        let entry = b.get(isa, Kind::Entry, "rdtsc", cursor, method);
        let exit = b.get(isa, Kind::Exit, "rdtsc", cursor, method);
        let setup = |step| Setup {
            isa,
            entry_kind: Kind::Entry,
            counter: "rdtsc",
            cursor,
            method,
            slots: 37,
            step,
            ops: 100,
            stop_when_full: false,
            seed: 7,
        };
        // The unmutated bytes pass (the mutants below fail for what they change, not the setup).
        run_scenario(&setup(true), entry, exit);
        // Dropped store: the inline half's last instruction, the cursor publication.
        let at = entry.terminator - store_len;
        assert!(
            matches!(entry.bytes[at], 0x64 | 0x65),
            "cursor store not where expected"
        );
        let dropped = mutate(entry, at, &vec![0x90; store_len]);
        must_fail(
            &format!("{isa:?} entry without its cursor store"),
            "cursor",
            || {
                run_scenario(&setup(true), &dropped, exit);
            },
        );
        // Clobbered register.
        let clobber = match shl {
            Some(pattern) => {
                let at = exit
                    .bytes
                    .windows(4)
                    .position(|w| w == pattern)
                    .expect("shl rax, 32 in the exit");
                mutate(exit, at, &[0x48, 0xc1, 0xe3, 0x20])
            }
            None => {
                // x86: `add ecx, 8` (83 c1 08) becomes `add ebx, 8`.
                let at = exit
                    .bytes
                    .windows(3)
                    .position(|w| w == [0x83, 0xc1, 0x08])
                    .expect("add ecx, 8 in the exit");
                mutate(exit, at, &[0x83, 0xc3, 0x08])
            }
        };
        must_fail(
            &format!("{isa:?} exit clobbering a preserved register"),
            "changed registers",
            || {
                run_scenario(&setup(false), entry, &clobber);
            },
        );
    }
}
