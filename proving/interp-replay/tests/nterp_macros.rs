//! nterp's trace-point macros (art-patches/files/runtime/hubble/nterp_{arm64,x86_64,x86}.S,
//! included unchanged by cpp/nterp_*_harness.S) run with the Hubble block at the real Thread
//! offsets (art-patches/thread-offsets.txt): arm64 under qemu-aarch64 from a static
//! cross-compiled harness, x86_64 natively with %gs pointing at the fake Thread, x86 (32-bit
//! mode) natively as a static i386 binary (x86_64 kernels run them) with %fs pointing at the fake
//! Thread, set up as ART's Thread::InitCpu does. They must leave the ring as
//! hubble_format::RingWriter does for the same calls. The timestamps are the real counter, so
//! the upper half of timestamp-carrying slots is not compared; pointers, markers, start/pad
//! records, the cursor and the published end are compared exactly. The x86 and x86_64 harnesses
//! also check, around every macro, that only the registers the macro file may clobber changed.
//! Needs aarch64-linux-gnu-gcc, qemu-aarch64, gcc and i686-linux-gnu-gcc (Debian
//! gcc-aarch64-linux-gnu, qemu-user, gcc-i686-linux-gnu): missing tools fail the test. (armng's
//! A32 MRRC of CNTVCT is not run: qemu-arm rejects it.)
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Rng;
use hubble_format::{Mode, RingWriter};
use hubble_interp_replay::{nterp_harness, repo_root, run_script, NterpIsa};

fn harness(isa: NterpIsa) -> Vec<String> {
    nterp_harness(
        Path::new(env!("CARGO_TARGET_TMPDIR")),
        isa,
        "nterp_harness.c",
    )
}

/// What a harness printed: the cursor and the stop word (byte offsets from the ring, cursor
/// `None` when off), every slot, and the counter's low 32 bits before and after each entry/exit
/// op of the script.
type Run = (Option<u64>, u64, Vec<u64>, Vec<(u32, u32)>);

fn run(cmd: &[String], script: &str) -> Run {
    let text = run_script(cmd, script);
    let mut lines = text.lines();
    let cursor: i64 = lines.next().unwrap()[7..].parse().unwrap();
    let stop: u64 = lines.next().unwrap()[5..].parse().unwrap();
    let (mut slots, mut clocks) = (Vec::new(), Vec::new());
    for line in lines {
        if let Some(pair) = line.strip_prefix("clock ") {
            let (before, after) = pair.split_once(' ').unwrap();
            clocks.push((before.parse().unwrap(), after.parse().unwrap()));
        } else {
            slots.push(u64::from_str_radix(line, 16).unwrap());
        }
    }
    ((cursor >= 0).then_some(cursor as u64), stop, slots, clocks)
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Untouched,
    Exact,          // pointer slot of a two-slot entry, start and pad records
    LowWord(usize), // hi = a real timestamp, read by this entry/exit op (index among them)
}

fn check(cmd: &[String], mode: Mode, slots: usize, seed: u64, ops: usize) {
    let mut rng = Rng::new(seed | 1);
    let mut w = RingWriter::new(mode, slots);
    let mut kinds = vec![Kind::Untouched; slots];
    let (mut running, mut stop_req, mut published) = (false, false, 0u64);
    let bits = if mode == Mode::Bits64 { 64 } else { 32 };
    let mut script = format!("mode {bits}\nslots {slots}\n");
    // Marks the slots a call wrote (by diffing the writer before and after) with their kind.
    let mark = |before: &[u64], w: &RingWriter, kinds: &mut Vec<Kind>, wide: bool, op: usize| {
        let after = w.slots();
        let pos = (w.write_pos_bytes() / 8) as usize;
        for i in 0..after.len() {
            if before[i] != after[i] || (i + 1 == pos) || (wide && i + 2 == pos) {
                let v = after[i];
                let lo = v as u32;
                kinds[i] = if lo == 2 || lo == 3 || (wide && i + 2 == pos) {
                    Kind::Exact
                } else {
                    Kind::LowWord(op)
                };
            }
        }
    };
    let mut clocked_op = 0; // entry/exit ops so far (the harness clocks each, traced or not)
    for i in 0..ops {
        let r = rng.next() % 100;
        let ts = (i as u32) * 3 + 7;
        if i == 0 || (!running && r < 30) {
            let before = w.slots().to_vec();
            w.start(ts);
            mark(&before, &w, &mut kinds, false, usize::MAX);
            running = true;
            stop_req = false;
            script += &format!("start {ts}\n");
        } else if running && !stop_req && r < 3 {
            stop_req = true;
            script += "stop\n";
        } else {
            let entry = r < 55;
            // Small, 32-bit and (64-bit mode only) wide ArtMethod* values.
            let m = match rng.next() % if mode == Mode::Bits64 { 3 } else { 2 } {
                0 => 4 + 4 * (rng.next() % (1 << 20)),
                1 => (rng.next() & 0xffff_fffc) | 4,
                _ => (rng.next() & 0x0000_7fff_ffff_fff8) | 8,
            };
            script += &if entry {
                format!("entry {m:x} {ts}\n")
            } else {
                format!("exit {ts}\n")
            };
            let op = clocked_op;
            clocked_op += 1;
            if !running {
                continue;
            }
            if stop_req {
                running = false;
                stop_req = false;
                published = w.write_pos_bytes();
                continue;
            }
            let before = w.slots().to_vec();
            if entry {
                w.entry(m, 0).unwrap();
                mark(&before, &w, &mut kinds, m >> 32 != 0, op);
            } else {
                w.exit(0);
                mark(&before, &w, &mut kinds, false, op);
            }
        }
    }
    let (cursor, stop, got, clocks) = run(cmd, &script);
    assert_eq!(clocks.len(), clocked_op, "one clock line per entry/exit op");
    let ctx = format!(
        "{}: mode {bits}, {slots} slots, seed {seed:#x}",
        cmd.join(" ")
    );
    for (i, (g, e)) in got.iter().zip(w.slots()).enumerate() {
        match kinds[i] {
            Kind::Untouched | Kind::Exact => assert_eq!(g, e, "slot {i} ({ctx})"),
            Kind::LowWord(op) => {
                assert_eq!(*g as u32, *e as u32, "slot {i} low word ({ctx})");
                // The macro's own counter read, not a stale or missing one.
                let (before, after) = clocks[op];
                let ts = (*g >> 32) as u32;
                assert!(
                    ts.wrapping_sub(before) <= after.wrapping_sub(before),
                    "slot {i} timestamp {ts} not read during op {op} ({before}..={after}) ({ctx})"
                );
            }
        }
    }
    let want_cursor = running.then(|| w.write_pos_bytes());
    let want_stop = if stop_req {
        1
    } else if running {
        0
    } else {
        published
    };
    assert_eq!(cursor, want_cursor, "cursor ({ctx})");
    assert_eq!(stop, want_stop, "stop ({ctx})");
}

/// `isa`'s macros against the ring writer: 60 rings of 2 to 12 slots (seeds `seed * mul + add`)
/// and one of 1024 slots (seed `large`).
fn every_ring_size(isa: NterpIsa, mode: Mode, (mul, add): (u64, u64), large: u64) {
    let cmd = harness(isa);
    for seed in 0..60u64 {
        check(&cmd, mode, 2 + (seed as usize % 11), seed * mul + add, 200);
    }
    check(&cmd, mode, 1024, large, 800);
}

#[test]
fn nterp_arm64_macros_write_what_ring_writer_writes() {
    every_ring_size(NterpIsa::Arm64, Mode::Bits64, (6151, 11), 77);
}

#[test]
fn nterp_x86_64_macros_write_what_ring_writer_writes() {
    every_ring_size(NterpIsa::X86_64, Mode::Bits64, (7717, 13), 78);
}

/// x86ng (32-bit mode: every record one slot, pointer low, timer high; wrap without a pad).
#[test]
fn nterp_x86_macros_write_what_ring_writer_writes() {
    every_ring_size(NterpIsa::X86, Mode::Bits32, (4099, 17), 79);
}

/// The unwinder and the deoptimizer write an exit for an nterp frame only where
/// `hubble::tp::QuickFrameTracedItsEntry` says nterp wrote its entry (trace_point.h); that table
/// must name exactly the nterp flavours the series patches (a `main.S` including its
/// `hubble/nterp_<isa>.S`), or one ISA gets exits without entries, or entries without exits.
#[test]
fn nterp_traced_table_matches_the_patched_interpreters() {
    let root = repo_root();
    let series = std::fs::read_to_string(root.join("art-patches/series")).unwrap();
    let mut patched = std::collections::BTreeSet::new();
    for name in series
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let patch = std::fs::read_to_string(root.join("art-patches/patches").join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut file = "";
        for line in patch.lines() {
            if let Some(path) = line.strip_prefix("+++ b/") {
                file = path;
            } else if let Some(isa) = file
                .strip_prefix("runtime/interpreter/mterp/")
                .and_then(|f| f.strip_suffix("ng/main.S"))
            {
                if line.starts_with(&format!("+#include \"hubble/nterp_{isa}.S\"")) {
                    assert!(
                        root.join(format!("art-patches/files/runtime/hubble/nterp_{isa}.S"))
                            .is_file(),
                        "{name} includes hubble/nterp_{isa}.S, which art-patches/files lacks"
                    );
                    patched.insert(isa.to_string());
                }
            }
        }
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("isa-table");
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new(hubble_interp_replay::build_driver(&dir, &[]))
        .arg("isa-table")
        .output()
        .unwrap();
    assert!(out.status.success());
    let traced: std::collections::BTreeSet<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.split_whitespace().nth(2) == Some("1"))
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect();
    assert_eq!(
        traced, patched,
        "NterpTraced (trace_point.h) vs the nterp flavours the series patches"
    );
}
