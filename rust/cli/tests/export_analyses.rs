//! `hubble export` and the analyses, end to end through the binary.

mod common;
use common::output;

use std::path::{Path, PathBuf};

use hubble_testkit::synth::{trace, Spec};

fn traces(dir: &Path) -> Vec<PathBuf> {
    (0..2)
        .map(|i| {
            let path = dir.join(format!("t{i}.hubble"));
            trace(&Spec {
                seed: 50 + i,
                tid: 10 + i as u32,
                thread_name: format!("thread{i}"),
                ..Spec::default()
            })
            .write_atomic(&path)
            .unwrap();
            path
        })
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn every_format_writes_a_file_and_stdout_matches() {
    let dir = tempfile::tempdir().unwrap();
    let files = traces(dir.path());
    for format in ["perfetto", "trace", "chrome-json", "folded", "svg"] {
        let out = dir.path().join(format!("out.{format}"));
        let export = |to: &str| {
            output(&[
                "export",
                s(&files[0]),
                s(&files[1]),
                "--format",
                format,
                "-o",
                to,
            ])
        };
        let r = export(s(&out));
        assert!(
            r.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        let written = std::fs::read(&out).unwrap();
        assert!(!written.is_empty());
        let r = export("-");
        assert!(r.status.success());
        assert_eq!(r.stdout, written, "{format}: stdout differs from the file");
    }
}

#[test]
fn failures_leave_no_output_and_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let files = traces(dir.path());
    let out = dir.path().join("never.txt");
    // Nanoscope takes one thread.
    let r = output(&[
        "export",
        s(&files[0]),
        s(&files[1]),
        "--format",
        "nanoscope",
        "-o",
        s(&out),
    ]);
    assert_eq!(r.status.code(), Some(2));
    assert!(!out.exists());
    // A corrupt input.
    let bad = dir.path().join("bad.hubble");
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x40;
    std::fs::write(&bad, bytes).unwrap();
    for args in [
        vec!["export", s(&bad), "--format", "perfetto", "-o", s(&out)],
        vec!["top", s(&bad), "-o", s(&out)],
        vec!["summary", s(&bad), "--json", "-o", s(&out)],
    ] {
        let r = output(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("bad.hubble"), "{err}");
        assert!(!out.exists());
    }
    let remaining: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.contains("never"))
        .collect();
    assert!(remaining.is_empty(), "{remaining:?}");
}

#[test]
fn analyses_print_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let files = traces(dir.path());
    let sigs = dir.path().join("sigs.txt");
    std::fs::write(
        &sigs,
        "method sleep *Thread.sleep*\nchain click-sleep *onClick* > *sleep*\n",
    )
    .unwrap();
    let r = output(&["match", s(&sigs), s(&files[0]), s(&files[1]), "--json"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert!(v[0]["count"].as_u64().unwrap() > 0);

    let r = output(&["top", s(&files[0]), "-n", "3"]);
    let text = String::from_utf8(r.stdout).unwrap();
    assert_eq!(text.lines().count(), 4, "{text}");

    let r = output(&[
        "chains",
        s(&files[0]),
        "--last-ms",
        "50",
        "--json",
        "-n",
        "2",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);

    let r = output(&["summary", s(&files[0]), "--signatures", s(&sigs), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(v["hubble_summary"], 1);

    std::fs::write(&sigs, "method ok *x*\nfunction bad *y*\n").unwrap();
    let r = output(&["match", s(&sigs), s(&files[0])]);
    assert_eq!(r.status.code(), Some(2));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("sigs.txt:2:"), "{err}");
}
