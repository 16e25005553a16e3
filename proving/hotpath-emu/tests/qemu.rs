//! The A64 trace points on qemu-aarch64 (Debian `qemu-user`): a static harness cross-compiled
//! with aarch64-linux-gnu-gcc calls the emitted bytes as functions (x19 = Thread block, x0 =
//! ArtMethod*), with the real control-thread stores in between. The ring is then compared with
//! `hubble_format::RingWriter` (pointers and markers; the counter values are the CPU's) and
//! decoded backwards. Set HUBBLE_SKIP_QEMU=1 only where the cross tools cannot be installed.
mod common;

use std::path::PathBuf;
use std::process::Command;

use common::emu::Rng;
use hubble_format::{decode, Mode, Record, RingView, RingWriter};
use hubble_hotpath_emu::*;

fn tool(name: &str) -> bool {
    Command::new(name).arg("--version").output().is_ok()
}

fn build_harness() -> Option<PathBuf> {
    if std::env::var_os("HUBBLE_SKIP_QEMU").is_some() {
        eprintln!("HUBBLE_SKIP_QEMU set: qemu-aarch64 run skipped");
        return None;
    }
    assert!(
        tool("aarch64-linux-gnu-gcc") && tool("qemu-aarch64"),
        "gcc-aarch64-linux-gnu and qemu-user are needed (scripts/deps/hotpath.apt)"
    );
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cpp/qemu_harness.c");
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hubble_qemu_harness");
    let st = Command::new("aarch64-linux-gnu-gcc")
        .args(["-static", "-O1", "-Wall", "-Wextra", "-Werror", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .unwrap();
    assert!(st.success(), "cross-compiling the harness failed");
    Some(out)
}

const EXIT: u64 = 0;
const STOP: u64 = 1;
const RESTART: u64 = 2;

#[test]
fn a64_on_qemu_matches_reference_writer() {
    let Some(harness) = build_harness() else {
        return;
    };
    let offsets = thread_offsets::A64;
    let opts = Options {
        terminator: Terminator::Return,
        ..Options::default()
    };
    let slots: u32 = 37;
    let mut rng = Rng::new(0x7165_6d75);
    let mut ops = Vec::new();
    for i in 0..2000 {
        if i == 1200 {
            ops.push(STOP);
            ops.push(EXIT); // takes the stop path, writes nothing
            ops.push(EXIT); // tracing off
            ops.push(RESTART);
            continue;
        }
        let x = rng.next();
        ops.push(match x % 5 {
            0 | 1 => EXIT,
            2 => ((x >> 8) & 0xffff_fff0) | 0x10 | 1, // narrow variant, pointer < 4 GiB
            3 => ((x >> 8) & 0xffff_fff0) | 0x10,
            _ => (x | (1 << 36)) & !0xf,
        });
    }
    let mut input = Vec::new();
    input.extend_from_slice(&0x3151_4248u32.to_le_bytes());
    for o in offsets {
        input.extend_from_slice(&o.to_le_bytes());
    }
    input.extend_from_slice(&slots.to_le_bytes());
    input.extend_from_slice(&(ops.len() as u32).to_le_bytes());
    for kind in [Kind::Entry, Kind::Exit, Kind::EntryNarrow] {
        let blob = emit_a64(kind, 0, &offsets, opts);
        input.extend_from_slice(&(blob.bytes.len() as u32).to_le_bytes());
        input.extend_from_slice(&blob.bytes);
    }
    for op in &ops {
        input.extend_from_slice(&op.to_le_bytes());
    }
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("hubble_qemu_input.bin");
    std::fs::write(&path, &input).unwrap();
    let out = Command::new("qemu-aarch64")
        .arg(&harness)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "harness failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let words: Vec<u64> = out
        .stdout
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(words.len(), 5 + slots as usize + ops.len());
    let (block, rest) = words.split_at(5);
    let (ring, stops) = rest.split_at(slots as usize);
    let begin = block[3];
    assert_eq!(block[4], begin + u64::from(slots) * 8);

    // The reference writer fed the same calls; counters are the CPU's, so compare pointers
    // and markers exactly and leave the timestamp halves to the monotonicity check below.
    let mut model = RingWriter::new(Mode::Bits64, slots as usize);
    model.start(0x1000);
    let mut expected = vec![Record::Start { ts: 0x1000 }];
    let mut stopping = false;
    for (i, &op) in ops.iter().enumerate() {
        match op {
            STOP => {
                stopping = true;
                continue;
            }
            RESTART => {
                model.start(0x1000);
                expected = vec![Record::Start { ts: 0x1000 }];
                continue;
            }
            _ => {}
        }
        if stopping {
            assert_eq!(
                stops[i],
                begin + model.write_pos_bytes(),
                "published end position"
            );
            stopping = false;
            continue;
        }
        if stops[i] > 1 {
            continue; // tracing off until the restart
        }
        if op == EXIT {
            model.exit(0);
            expected.push(Record::Exit { ts: 0 });
        } else {
            model.entry(op & !1, 0).unwrap();
            expected.push(Record::Entry {
                method: op & !1,
                ts: 0,
            });
        }
    }
    assert_eq!(block[0], begin + model.write_pos_bytes(), "cursor");
    for (i, (&got, &want)) in ring.iter().zip(model.slots()).enumerate() {
        if want >> 32 != 0 && want as u32 > 3 {
            assert_eq!(got, want, "pointer slot {i}");
        } else {
            assert_eq!(got as u32, want as u32, "slot {i} (low half)");
        }
    }
    let window = decode(
        &RingView::new(ring, block[0] - begin, None).unwrap(),
        Mode::Bits64,
    )
    .expect("decode");
    let n = window.records.len();
    assert!(n > slots as usize / 2);
    let strip = |r: &Record| match *r {
        Record::Entry { method, .. } => Record::Entry { method, ts: 0 },
        Record::Exit { .. } => Record::Exit { ts: 0 },
        other => other,
    };
    let got: Vec<Record> = window.records.iter().map(strip).collect();
    let want: Vec<Record> = expected[expected.len() - n..].iter().map(strip).collect();
    assert_eq!(got, want);
    let ts: Vec<u32> = window
        .records
        .iter()
        .filter(|r| !matches!(r, Record::Start { .. }))
        .map(|r| r.ts())
        .collect();
    for pair in ts.windows(2) {
        assert!(
            pair[1].wrapping_sub(pair[0]) < 1 << 31,
            "counter went backwards: {pair:?}"
        );
    }
}
