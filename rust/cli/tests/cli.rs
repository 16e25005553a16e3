//! The `hubble` binary end to end: good files, raw rings, and every kind of bad input.

mod common;
use common::{hubble, run, sample};

use std::path::{Path, PathBuf};

use hubble_format::{Mode, RingWriter, TraceFile, TraceHeader};

/// A temporary directory holding the sample `t.hubble` with its outer method named: the
/// directory, the file's path and the file.
fn named_sample() -> (tempfile::TempDir, PathBuf, TraceFile) {
    let dir = tempfile::tempdir().unwrap();
    let (path, file) = sample(dir.path(), "t.hubble", true);
    (dir, path, file)
}

/// What `hubble decode ARGS` prints for the named sample (and that it succeeds).
fn decoded(args: &[&str]) -> String {
    let (_dir, path, _) = named_sample();
    let (code, out, _) = run(hubble().arg("decode").args(args).arg(&path));
    assert_eq!(code, 0);
    out
}

#[test]
fn decode_prints_nanoscope_text() {
    // ns = floor(counter × 10^9 / 19 MHz); the unsymbolized method prints as its pointer.
    assert_eq!(
        decoded(&[]),
        "52631:void a.B.c()\n53631:0x7f00000020\n54631:POP\n55631:POP\n"
    );
}

#[test]
fn decode_prints_ticks() {
    // The sample's counter values (reference 1100: upper halves 0).
    assert_eq!(
        decoded(&["--format", "ticks"]),
        "1000:void a.B.c()\n1019:0x7f00000020\n1038:POP\n1057:POP\n"
    );
}

#[test]
fn info_describes_the_file() {
    let (_dir, path, _) = named_sample();
    let (code, out, _) = run(hubble().arg("info").arg(&path));
    assert_eq!(code, 0);
    assert!(out.contains("a.b (pid 7)"), "{out}");
    assert!(out.contains("2 entries, 2 exits"), "{out}");
    assert!(out.contains("1 unresolved"), "{out}");
    // The lines every version prints alike.
    for line in ["reason:          test\n", "mode:            64-bit\n"] {
        assert!(out.contains(line), "no {line:?} in {out}");
    }
    assert!(!out.contains("metadata:"), "{out}");
    let mut file = TraceFile::read(&path).unwrap();
    file.header.metadata = [("android.sdk", "34"), ("cpu.abi", "arm64-v8a")]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into();
    file.write_atomic(&path).unwrap();
    let (code, out, _) = run(hubble().arg("info").arg(&path));
    assert_eq!(code, 0);
    assert!(
        out.contains("metadata:        android.sdk = 34\nmetadata:        cpu.abi = arm64-v8a\n"),
        "{out}"
    );
}

#[test]
fn raw_ring_with_symbols() {
    let dir = tempfile::tempdir().unwrap();
    // A 4-slot 32-bit ring that wrapped: oldest record at the write position.
    let mut ring = RingWriter::new(Mode::Bits32, 4);
    ring.start(1);
    ring.entry(0x100, 2).unwrap();
    ring.entry(0x200, 3).unwrap();
    ring.exit(4);
    ring.exit(5);
    ring.entry(0x300, 6).unwrap();
    let raw = dir.path().join("ring.bin");
    let bytes: Vec<u8> = ring.slots().iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(&raw, bytes).unwrap();
    let tsv = dir.path().join("sym.tsv");
    std::fs::write(&tsv, "0x200\tvoid X.two()\n300\tvoid X.three()\n").unwrap();
    let (code, out, err) = run(hubble()
        .args(["decode", "--raw"])
        .arg(&raw)
        .args(["--mode", "32", "--write-pos"])
        .arg(ring.write_pos_bytes().to_string())
        .args([
            "--ref-counter",
            "10",
            "--timer-hz",
            "1000000000",
            "--symbols",
        ])
        .arg(&tsv));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "3:void X.two()\n4:POP\n5:POP\n6:void X.three()\n");
}

fn assert_bad(args: &[&str], file: &Path, needle: &str) {
    let (code, out, err) = run(hubble().args(args).arg(file));
    assert_eq!(code, 2, "stdout {out} stderr {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(&file.display().to_string()),
        "names the file: {err}"
    );
    assert!(err.contains(needle), "says '{needle}': {err}");
}

#[test]
fn bad_files_are_one_line_errors_with_exit_2() {
    let (dir, path, _) = named_sample();
    let good = std::fs::read(&path).unwrap();
    let bad = dir.path().join("bad.hubble");

    std::fs::write(&bad, &good[..good.len() / 2]).unwrap();
    assert_bad(&["decode"], &bad, "truncated");
    // One field spoiled at a time: (command, where, bytes written there, what the error says).
    let last = good.len() - 5;
    let spoiled: [(&str, usize, Vec<u8>, &str); 6] = [
        ("info", 0, vec![b'Z'], "wrong magic"),
        ("decode", 8, vec![7], "unsupported format version 7"),
        (
            "decode",
            48,
            4096u64.to_le_bytes().to_vec(),
            "write position",
        ),
        ("decode", 40, vec![0x01], "ring size"),
        (
            "decode",
            72,
            900_000u32.to_le_bytes().to_vec(),
            "symbol count",
        ),
        ("decode", last, vec![good[last] ^ 0x40], "checksum mismatch"),
    ];
    for (command, at, bytes, needle) in spoiled {
        let mut b = good.clone();
        b[at..at + bytes.len()].copy_from_slice(&bytes);
        std::fs::write(&bad, &b).unwrap();
        assert_bad(&[command], &bad, needle);
    }
    assert_bad(
        &["info"],
        &dir.path().join("missing.hubble"),
        "No such file",
    );
}

#[test]
fn raw_ring_problems_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let raw = dir.path().join("odd.bin");
    std::fs::write(&raw, [0u8; 12]).unwrap();
    let base = [
        "decode",
        "--mode",
        "64",
        "--write-pos",
        "0",
        "--ref-counter",
        "1",
        "--timer-hz",
        "1",
    ];
    let (code, _, err) = run(hubble().args(base).arg("--raw").arg(&raw));
    assert_eq!(code, 2);
    assert!(
        err.contains("odd.bin") && err.contains("multiple of 8"),
        "{err}"
    );
    std::fs::write(&raw, [0u8; 16]).unwrap();
    let (code, _, err) = run(hubble()
        .args([
            "decode",
            "--mode",
            "64",
            "--write-pos",
            "24",
            "--ref-counter",
            "1",
        ])
        .args(["--timer-hz", "1", "--raw"])
        .arg(&raw));
    assert_eq!(code, 2);
    assert!(
        err.contains("odd.bin") && err.contains("write position 24"),
        "{err}"
    );
    let tsv = dir.path().join("bad.tsv");
    std::fs::write(&tsv, "zzz\tname\n").unwrap();
    let (code, _, err) = run(hubble()
        .args(base)
        .arg("--raw")
        .arg(&raw)
        .arg("--symbols")
        .arg(&tsv));
    assert_eq!(code, 2);
    assert!(err.contains("bad.tsv:1"), "{err}");
}

#[test]
fn failed_output_leaves_no_partial_file() {
    let (dir, path, _) = named_sample();
    let mut b = std::fs::read(&path).unwrap();
    let n = b.len();
    b[n - 1] ^= 1;
    let bad = dir.path().join("bad.hubble");
    std::fs::write(&bad, b).unwrap();
    let out = dir.path().join("out.txt");
    let (code, _, _) = run(hubble().arg("decode").arg(&bad).arg("-o").arg(&out));
    assert_eq!(code, 2);
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(!names.iter().any(|n| n.contains("out.txt")), "{names:?}");
    let (code, _, _) = run(hubble().arg("decode").arg(&path).arg("-o").arg(&out));
    assert_eq!(code, 0);
    assert!(std::fs::read_to_string(&out).unwrap().ends_with("POP\n"));
}

/// The record batches of the one part a fleet table directory holds.
fn only_part(table: &Path) -> Vec<arrow_array::RecordBatch> {
    let parts: Vec<PathBuf> = std::fs::read_dir(table)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(parts.len(), 1, "{parts:?}");
    hubble_fleet::write::read_part(&parts[0]).unwrap().1
}

/// A fleet batch with a truncated and a corrupt file: both named on stderr, the good files
/// exported (and only they), exit 2; `--meta` lands in every row; a bad `--meta` is refused
/// before anything is written.
#[test]
fn parquet_export_skips_bad_files_by_name_and_exports_the_rest() {
    let (dir, good, file) = named_sample();
    let bytes = std::fs::read(&good).unwrap();
    let other = dir.path().join("other.hubble");
    let mut second = file.clone();
    second.header.tid += 1;
    second.write_atomic(&other).unwrap();
    let truncated = dir.path().join("cut.hubble");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let corrupt = dir.path().join("flipped.hubble");
    let mut flipped = bytes.clone();
    flipped[90] ^= 0x40;
    std::fs::write(&corrupt, &flipped).unwrap();
    let out = dir.path().join("fleet");
    // `hubble export --format parquet [--meta META] -o TO FILES`.
    let export = |meta: Option<&str>, to: &Path, files: &[&Path]| {
        let mut c = hubble();
        c.args(["export", "--format", "parquet"]);
        if let Some(meta) = meta {
            c.args(["--meta", meta]);
        }
        c.arg("-o").arg(to).args(files);
        run(&mut c)
    };
    let (code, _, err) = export(
        Some("app.version=9.9"),
        &out,
        &[&good, &truncated, &corrupt, &other],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("cut.hubble") && err.contains("truncated"),
        "{err}"
    );
    assert!(
        err.contains("flipped.hubble") && err.contains("corrupt"),
        "{err}"
    );
    assert!(err.contains("2 of 4 input(s) failed"), "{err}");
    let batches = only_part(&out.join("traces"));
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 2);
    let versions = batches[0]
        .column_by_name("app_version")
        .unwrap()
        .as_any()
        .downcast_ref::<arrow_array::StringArray>()
        .unwrap()
        .iter()
        .collect::<Vec<_>>();
    assert_eq!(versions, vec![Some("9.9"), Some("9.9")]);
    // All bad: nothing written, exit 2.
    let empty = dir.path().join("empty");
    let (code, _, err) = export(None, &empty, &[&truncated, &corrupt]);
    assert_eq!(code, 2, "{err}");
    assert!(!empty.exists());
    // A bad key: refused before reading anything.
    let (code, _, err) = export(Some("App Version=1"), &empty, &[&good]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("App Version"), "{err}");
    assert!(!empty.exists());
}

/// `--meta`'s value: up to the format's 256 bytes, not one more.
#[cfg(feature = "parquet")]
#[test]
fn parquet_meta_values_up_to_the_format_limit() {
    let (dir, good, _) = named_sample();
    let limit = hubble_format::file::MAX_METADATA_VALUE;
    for (len, ok) in [(limit, true), (limit + 1, false)] {
        let out = dir.path().join(format!("fleet-{len}"));
        let meta = format!("app.version={}", "v".repeat(len));
        let (code, _, err) = run(hubble()
            .args(["export", "--format", "parquet", "--meta", &meta, "-o"])
            .arg(&out)
            .arg(&good));
        if ok {
            assert_eq!(code, 0, "{len} bytes: {err}");
        } else {
            assert_eq!(code, 2, "{len} bytes");
            assert!(err.contains(&format!("the value is {len} bytes")), "{err}");
            assert!(!out.exists());
        }
    }
}

/// `summary --parquet` over a batch with a truncated file: the bad one named, the good ones
/// summarized, exit 2 with the count; each summary row carries the device-class metadata of its
/// file (keys the fleet schema has a column for) and the `--meta` values, and nothing else.
#[cfg(feature = "parquet")]
#[test]
fn parquet_summaries_name_bad_files_and_carry_device_class_metadata() {
    use arrow_array::StringArray;
    let (dir, good, mut file) = named_sample();
    file.header.metadata = [("android.sdk", "34"), ("hubble.private", "x")]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .into();
    file.write_atomic(&good).unwrap();
    let cut = dir.path().join("cut.hubble");
    let bytes = std::fs::read(&good).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let sums = dir.path().join("sums");
    let (code, _, err) = run(hubble()
        .args(["summary", "--parquet"])
        .arg(&sums)
        .args(["--meta", "app.version=9.9"])
        .arg(&good)
        .arg(&cut));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cut.hubble"), "{err}");
    assert!(
        err.contains("1 of 2 input(s) failed (named above); the other 1 were summarized"),
        "{err}"
    );
    let batches = only_part(&sums.join("summaries"));
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
    let column = |c: &str| {
        batches[0]
            .column_by_name(c)
            .unwrap_or_else(|| panic!("no column {c}"))
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .iter()
            .map(|v| v.map(str::to_owned))
            .collect::<Vec<_>>()
    };
    assert_eq!(column("android_sdk"), vec![Some("34".to_owned())]);
    assert_eq!(column("app_version"), vec![Some("9.9".to_owned())]);
    assert_eq!(column("device_model"), vec![None]);
    // A key the schema has no column for is left out of the row's identity too: the same
    // trace without it gives the same summary id.
    file.header.metadata.remove("hubble.private");
    let plain = dir.path().join("plain.hubble");
    file.write_atomic(&plain).unwrap();
    let again = dir.path().join("again");
    let (code, _, err) = run(hubble()
        .args(["summary", "--parquet"])
        .arg(&again)
        .args(["--meta", "app.version=9.9"])
        .arg(&plain));
    assert_eq!(code, 0, "{err}");
    let batches2 = only_part(&again.join("summaries"));
    let id = |b: &[arrow_array::RecordBatch]| {
        b[0].column_by_name("summary_id")
            .unwrap()
            .as_any()
            .downcast_ref::<StringArray>()
            .unwrap()
            .value(0)
            .to_owned()
    };
    assert_eq!(id(&batches), id(&batches2));
}

/// A batch of more than a part's worth of calls (2^20): the part is written as soon as the
/// tables reach it, and the count of exported traces includes it. Two files of 600 000 calls
/// each, then a bad one: one part of two traces, and the error counts both as exported.
#[cfg(feature = "parquet")]
#[test]
fn parquet_export_writes_a_part_once_it_holds_a_million_calls() {
    let dir = tempfile::tempdir().unwrap();
    let calls = 600_000u32;
    let write = |tid: u32| {
        let mut ring = RingWriter::new(Mode::Bits64, 2 * calls as usize + 8);
        ring.start(0);
        for i in 0..calls {
            ring.entry(0x7000_0010, 2 * i).unwrap();
            ring.exit(2 * i + 1);
        }
        let end = (ring.write_pos_bytes() / 8) as usize;
        let file = TraceFile {
            header: TraceHeader {
                mode: Mode::Bits64,
                timer_hz: 19_200_000,
                reference_counter: 2 * u64::from(calls),
                wall_clock_ns: 1,
                ring_bytes: ring.slots().len() as u64 * 8,
                write_pos: ring.write_pos_bytes(),
                pid: 7,
                tid,
                thread_name: "main".into(),
                process_name: "a.b".into(),
                reason: "test".into(),
                anchors: Vec::new(),
                metadata: Default::default(),
            },
            window: ring.slots()[..end].to_vec(),
            symbols: [(0x7000_0010, "void a.B.c()".to_owned())].into(),
        };
        let path = dir.path().join(format!("{tid}.hubble"));
        file.write_atomic(&path).unwrap();
        path
    };
    let (a, b) = (write(1), write(2));
    let bad = dir.path().join("bad.hubble");
    std::fs::write(&bad, b"HUBBLTRC").unwrap();
    let out = dir.path().join("fleet");
    let (code, _, err) = run(hubble()
        .args(["export", "--format", "parquet", "-o"])
        .arg(&out)
        .args([&a, &b, &bad]));
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("1 of 3 input(s) failed (named above); the other 2 were exported"),
        "{err}"
    );
    let batches = only_part(&out.join("traces"));
    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 2);
}
