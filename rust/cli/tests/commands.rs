//! What `tasks`, `chains --last-ms`, `info` and `decode --format tree` print, each against the
//! library computed here or against values worked out by hand (cargo-mutants found these
//! unpinned: docs/tools.md).

mod common;
use common::{hubble, run, sample};

use std::path::{Path, PathBuf};
use std::process::Command;

use hubble_export::Input;
use hubble_format::TraceFile;
use hubble_testkit::synth::{trace, Spec};

fn synth(dir: &Path) -> (PathBuf, TraceFile) {
    let path = dir.join("t.hubble");
    let file = trace(&Spec {
        seed: 7,
        tid: 12,
        thread_name: "main".into(),
        ..Spec::default()
    });
    file.write_atomic(&path).unwrap();
    (path.clone(), TraceFile::read(&path).unwrap())
}

#[test]
fn tasks_prints_what_the_analysis_finds() {
    let dir = tempfile::tempdir().unwrap();
    let (path, file) = synth(dir.path());
    let name = path.display().to_string();
    let want = hubble_analysis::tasks::tasks(&[Input {
        file: &file,
        name: &name,
    }])
    .unwrap();
    assert!(
        !want.is_empty(),
        "the synthetic trace has no thread to report"
    );
    let (code, out, err) = run(hubble().args(["tasks", path.to_str().unwrap(), "--json"]));
    assert_eq!(code, 0, "{err}");
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["threads"], serde_json::to_value(&want).unwrap());
    // No task records in the synthetic trace: an empty queuing report, and a line saying so.
    assert_eq!(got["queuing"]["tasks"], serde_json::json!([]));
    let (code, text, _) = run(hubble().args(["tasks", path.to_str().unwrap()]));
    assert_eq!(code, 0);
    assert!(
        text.starts_with(&format!(
            "thread {} (tid {})\n",
            want[0].thread, want[0].tid
        )),
        "{text}"
    );
    assert!(
        text.ends_with(
            "queuing: no task records in these traces (docs/tasks.md: which methods write them)\n"
        ),
        "{text}"
    );
}

#[test]
fn chains_use_the_last_ms_asked_for_and_zero_means_the_whole_window() {
    let dir = tempfile::tempdir().unwrap();
    let (path, file) = synth(dir.path());
    let p = path.to_str().unwrap();
    let name = path.display().to_string();
    let input = [Input {
        file: &file,
        name: &name,
    }];
    for (last_ms, window) in [
        ("2.5", Some(2_500_000u64)),
        ("0", None),
        ("0.0004", Some(400)),
    ] {
        let want =
            hubble_analysis::chains::chains(&input, window, hubble_analysis::chains::Rank::Time)
                .unwrap();
        let (code, out, err) =
            run(hubble().args(["chains", p, "--last-ms", last_ms, "--json", "-n", "0"]));
        assert_eq!(code, 0, "{err}");
        let got: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            got,
            serde_json::to_value(&want).unwrap(),
            "--last-ms {last_ms}"
        );
        let (_, text, _) = run(hubble().args(["chains", p, "--last-ms", last_ms]));
        let head = match window {
            Some(ns) => format!(
                "call chains in the last {}.{:03} ms before the flush",
                ns / 1_000_000,
                (ns / 1000) % 1000
            ),
            None => "call chains in the whole window".to_string(),
        };
        assert_eq!(
            text.lines().next(),
            Some(head.as_str()),
            "--last-ms {last_ms}"
        );
    }
}

/// `sample` of cli.rs, by hand: a start and an entry at 1000, an entry at 1019, exits at 1038 and
/// 1057, at 19 MHz (19 ticks = 1 µs); one of the two methods named.
#[test]
fn info_counts_unresolved_methods_and_the_span() {
    let dir = tempfile::tempdir().unwrap();
    for (named, unresolved) in [(true, 1), (false, 2)] {
        let (code, out, err) = run(hubble().args([
            "info",
            sample(dir.path(), &format!("s{named}.hubble"), named)
                .0
                .to_str()
                .unwrap(),
        ]));
        assert_eq!(code, 0, "{err}");
        // 1057 - 1000 = 57 ticks = 3 µs.
        assert!(out.contains("2 entries, 2 exits over 0.003 ms"), "{out}");
        assert!(
            out.contains(&format!(
                "2 distinct, {} symbols, {unresolved} unresolved",
                2 - unresolved
            )),
            "{out}"
        );
    }
}

#[test]
fn decode_tree_prints_each_frame_with_its_duration() {
    let dir = tempfile::tempdir().unwrap();
    let path = sample(dir.path(), "strue.hubble", true).0;
    let (code, out, err) =
        run(hubble().args(["decode", path.to_str().unwrap(), "--format", "tree"]));
    assert_eq!(code, 0, "{err}");
    // c() from 1000 to 1057 (3 µs), the unnamed one inside from 1019 to 1038 (1 µs).
    assert_eq!(out, "void a.B.c()  3.000 us\n  0x7f00000020  1.000 us\n");
}

/// A reader that stops early (`hubble decode … | head`) is not an error: exit 0, nothing on
/// stderr. Any other write error is one (here stdout is /dev/full: ENOSPC).
#[test]
fn a_closed_pipe_ends_quietly_and_a_full_disk_does_not() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.hubble");
    trace(&Spec {
        ring_slots: 1 << 16,
        laps: 1.0,
        seed: 3,
        ..Spec::default()
    })
    .write_atomic(&path)
    .unwrap();
    let (code, out, _) = run(hubble().args(["decode", path.to_str().unwrap()]));
    assert_eq!(code, 0);
    assert!(
        out.len() > 1 << 20,
        "only {} bytes: a pipe buffer may take them all",
        out.len()
    );

    let mut child = Command::new(env!("CARGO_BIN_EXE_hubble"))
        .args(["decode", path.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away before the output is written
    let o = child.wait_with_output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let full = std::fs::File::options()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hubble"))
        .args(["decode", path.to_str().unwrap()])
        .stdout(full)
        .output()
        .unwrap();
    assert_ne!(o.status.code(), Some(0), "a failed write was not reported");
    assert!(!o.stderr.is_empty(), "a failed write without a message");
}

/// `--mode 32` decodes as a 32-bit ring: the wide-entry marker a 64-bit ring uses for pointers
/// above 4 GiB does not exist there, so a ring that holds one is refused, not read as 64-bit.
#[test]
fn a_raw_ring_is_decoded_in_the_mode_asked_for() {
    use hubble_format::{Mode, RingWriter};
    let dir = tempfile::tempdir().unwrap();
    let mut ring = RingWriter::new(Mode::Bits64, 8);
    ring.start(1);
    ring.entry(0x7f_0000_0020, 2).unwrap();
    ring.exit(3);
    let raw = dir.path().join("ring.bin");
    let bytes: Vec<u8> = ring.slots().iter().flat_map(|s| s.to_le_bytes()).collect();
    std::fs::write(&raw, bytes).unwrap();
    let pos = ring.write_pos_bytes().to_string();
    let args = |mode: &'static str| {
        [
            "decode",
            "--raw",
            raw.to_str().unwrap(),
            "--mode",
            mode,
            "--write-pos",
            &pos,
            "--ref-counter",
            "10",
            "--timer-hz",
            "1000000000",
        ]
        .map(String::from)
    };
    let (code, out, err) = run(hubble().args(args("64").each_ref().map(String::as_str)));
    assert_eq!(
        (code, out.as_str()),
        (0, "2:0x7f00000020\n3:POP\n"),
        "{err}"
    );
    let (code, _, err) = run(hubble().args(args("32").each_ref().map(String::as_str)));
    assert_ne!(code, 0, "a wide entry accepted in a 32-bit ring");
    assert!(
        err.contains("ring.bin"),
        "the error does not name the file: {err}"
    );
}
