//! `hubble export --format perfetto --with SYSTEM`: the system trace's packets, then Hubble's;
//! and a system trace that cannot take them (missing, not a Perfetto trace, no clock snapshot
//! relating BOOTTIME to REALTIME) is a one-line error naming it, exit status 2, no output file.

mod common;
use common::{hubble, run};

use std::path::{Path, PathBuf};

use hubble_testkit::synth::{trace, Spec};

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn bytes_field(field: u64, body: &[u8], out: &mut Vec<u8>) {
    varint(field << 3 | 2, out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// `Trace.packet` {`data`, trusted_packet_sequence_id 1}, `data` being field `field` of the
/// packet (6 a clock snapshot, 60 a track descriptor).
fn packet(field: u64, data: &[u8]) -> Vec<u8> {
    let mut p = Vec::new();
    bytes_field(field, data, &mut p);
    p.extend([0x50, 0x01]);
    let mut out = Vec::new();
    bytes_field(1, &p, &mut out);
    out
}

fn snapshot(clocks: &[(u64, u64)]) -> Vec<u8> {
    let mut s = Vec::new();
    for &(id, ts) in clocks {
        let mut c = vec![0x08];
        varint(id, &mut c);
        c.push(0x10);
        varint(ts, &mut c);
        bytes_field(1, &c, &mut s);
    }
    packet(6, &s)
}

fn track(uuid: u64) -> Vec<u8> {
    let mut t = vec![0x08];
    varint(uuid, &mut t);
    packet(60, &t)
}

/// A Hubble trace file and a directory to work in.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.hubble");
    trace(&Spec {
        ring_slots: 512,
        ..Spec::default()
    })
    .write_atomic(&path)
    .unwrap();
    (dir, path)
}

fn write_system(dir: &Path, name: &str, packets: Vec<Vec<u8>>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, packets.concat()).unwrap();
    path
}

/// Every name in `dir` that mentions `out`: the output or its temporary file.
fn leftovers(dir: &Path, out: &str) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains(out))
        .collect()
}

fn export_fails(dir: &Path, hubble_file: &Path, with: &Path, needle: &str) {
    let out = dir.join("merged.pftrace");
    let (code, _, err) = run(hubble()
        .args(["export", "--format", "perfetto", "-o"])
        .arg(&out)
        .arg("--with")
        .arg(with)
        .arg(hubble_file));
    assert_eq!(code, 2, "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(&with.display().to_string()),
        "names the file: {err}"
    );
    assert!(err.contains(needle), "says '{needle}': {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(leftovers(dir, "merged.pftrace"), Vec::<String>::new());
}

#[test]
fn the_merged_trace_is_the_system_trace_then_hubble() {
    let (dir, file) = setup();
    let sys = write_system(
        dir.path(),
        "sys.pftrace",
        vec![
            snapshot(&[(6, 5_000_000_000), (1, 1_700_000_000_000_000_000)]),
            track(0x77),
        ],
    );
    let out = dir.path().join("merged.pftrace");
    let (code, _, err) = run(hubble()
        .args(["export", "--format", "perfetto", "--with"])
        .arg(&sys)
        .arg("-o")
        .arg(&out)
        .arg(&file));
    assert_eq!(code, 0, "{err}");
    let system = std::fs::read(&sys).unwrap();
    let merged = std::fs::read(&out).unwrap();
    assert!(merged.starts_with(&system));
    // The rest is what the library writes beside that trace.
    let hubble_file = hubble_format::TraceFile::read(&file).unwrap();
    let inputs = [hubble_export::Input {
        file: &hubble_file,
        name: "t",
    }];
    let mut scanned = hubble_export::system_trace::SystemTrace::scan(
        "sys",
        std::io::Cursor::new(system.as_slice()),
    )
    .unwrap();
    let mut want = Vec::new();
    hubble_export::perfetto::write_threads_beside(&inputs, &[0], &mut scanned, &mut want).unwrap();
    assert_eq!(merged, want);
}

#[test]
fn a_system_trace_that_cannot_take_hubble_is_a_one_line_error() {
    let (dir, file) = setup();
    let d = dir.path();
    export_fails(
        d,
        &file,
        &d.join("missing.pftrace"),
        "No such file or directory",
    );
    let text = d.join("notes.txt");
    std::fs::write(&text, "perfetto trace, honest\n").unwrap();
    export_fails(
        d,
        &file,
        &text,
        "not a Perfetto trace: byte 0 starts field 14",
    );
    // A Hubble trace given as the system trace.
    export_fails(d, &file, &file, "not a Perfetto trace");
    let sys = write_system(d, "sys.pftrace", vec![snapshot(&[(6, 1), (1, 2)])]);
    let mut cut = std::fs::read(&sys).unwrap();
    cut.pop();
    let cut_path = d.join("cut.pftrace");
    std::fs::write(&cut_path, &cut).unwrap();
    export_fails(d, &file, &cut_path, "past the end of the file");
    let none = write_system(d, "none.pftrace", vec![track(5)]);
    export_fails(
        d,
        &file,
        &none,
        "no clock snapshot relates BOOTTIME (its trace clock) to REALTIME (the clock of Hubble's \
         timestamps): it holds no clock snapshot",
    );
    let mono = write_system(d, "mono.pftrace", vec![snapshot(&[(6, 1), (3, 2)])]);
    export_fails(d, &file, &mono, "relate only MONOTONIC, BOOTTIME");
    let compressed = d.join("compressed.pftrace");
    std::fs::write(&compressed, [0x0a, 0x03, 0x92, 0x03, 0x00]).unwrap();
    export_fails(d, &file, &compressed, "compressed packets at byte 0");
}

#[test]
fn with_is_for_perfetto() {
    let (dir, file) = setup();
    let sys = write_system(dir.path(), "sys.pftrace", vec![snapshot(&[(6, 1), (1, 2)])]);
    let out = dir.path().join("out.trace");
    let (code, _, err) = run(hubble()
        .args(["export", "--format", "trace", "--with"])
        .arg(&sys)
        .arg("-o")
        .arg(&out)
        .arg(&file));
    assert_eq!(code, 2);
    assert!(err.contains("--with is for --format perfetto"), "{err}");
    assert!(!out.exists());
}
