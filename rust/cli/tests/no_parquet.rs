//! `hubble` as AOSP builds it (Android.bp leaves the `parquet` and `deobf` features off): the
//! fleet options and `--mapping` are there, and each says why it cannot run, exit 2, nothing
//! written. Run with
//! `cargo test -p hubble-cli --no-default-features --test no_parquet` (CI stage 10).
#![cfg(not(feature = "parquet"))]

use std::process::Command;

#[test]
fn the_parquet_options_say_why_they_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.hubble");
    std::fs::write(&input, b"not read").unwrap();
    let out = dir.path().join("fleet");
    let export = ["export", "--format", "parquet", "-o"];
    let summary = ["summary", "--parquet"];
    let cases: [(&[&str], &[&str]); 3] = [
        (&export, &[]),
        (&export, &["--meta", "app.version=1"]),
        (&summary, &[]),
    ];
    for (command, meta) in cases {
        let o = Command::new(env!("CARGO_BIN_EXE_hubble"))
            .args(command)
            .arg(&out)
            .args(meta)
            .arg(&input)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{command:?} {meta:?}: {err}");
        assert!(
            err.contains("this hubble was built without Parquet support"),
            "{command:?} {meta:?}: {err}"
        );
        assert!(!out.exists());
    }
}

/// AOSP's build leaves `deobf` off too: `--mapping` is there and says why it cannot run.
#[cfg(not(feature = "deobf"))]
#[test]
fn the_mapping_option_says_why_it_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("t.hubble");
    std::fs::write(&input, b"not read").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_hubble"))
        .args(["top", "--mapping", "mapping.txt"])
        .arg(&input)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("this hubble was built without deobfuscation"),
        "{err}"
    );
}
