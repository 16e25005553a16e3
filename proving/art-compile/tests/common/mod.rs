//! Shared by the compiler harness's integration tests.
#![allow(dead_code)]
pub mod inputs;
pub mod oracle;

use std::path::{Path, PathBuf};
use std::process::Command;

use hubble_art_compile::{Compiled, Harness};

/// The repository's tests/compiler-corpus.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/compiler-corpus")
}

/// The harness program, or None (with a message) when it is not built; under CI=true a
/// missing harness is a failure, never a skip.
pub fn harness_or_skip() -> Option<Harness> {
    match Harness::locate() {
        Ok(h) => Some(h),
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!("CI=true and the compiler harness is not available: {e}")
        }
        Err(e) => {
            eprintln!("SKIPPED (not under CI): {e}");
            None
        }
    }
}

/// Assembles tests/compiler-corpus/smali/*.smali with Debian's smali into DIR/corpus.dex.
pub fn corpus_dex(dir: &Path) -> PathBuf {
    let out = dir.join("corpus.dex");
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir().join("smali"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "smali"))
        .collect();
    files.sort();
    let st = Command::new("smali")
        .arg("a")
        .arg("-o")
        .arg(&out)
        .args(&files)
        .status()
        .expect("smali (Debian package libsmali-java: scripts/deps/compiler-harness.apt)");
    assert!(st.success(), "smali failed on {files:?}");
    out
}

pub use hubble_testkit::Rng;

/// `desc` compiled for arm64, thumb2, x86_64 and x86, traced and untraced (outputs under `dir`); its
/// shorty must be the Java twin's.
pub fn compile_both(
    h: &Harness,
    dex: &Path,
    desc: &str,
    shorty: &str,
    dir: &Path,
) -> (Compiled, Compiled) {
    let [traced, plain] = [(true, "t.txt"), (false, "u.txt")].map(|(traced, out)| {
        h.compile(dex, desc, "arm64,thumb2,x86_64,x86", traced, &dir.join(out))
            .unwrap_or_else(|e| panic!("{desc}: {e}"))
    });
    assert_eq!(
        traced.shorty, shorty,
        "{desc}: shorty differs from the Java twin's"
    );
    (traced, plain)
}

/// A fresh scratch directory `hubble-PREFIX-NAME-PID` under the temp dir.
pub fn tempdir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hubble-{prefix}-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The call tree the harness observed in a run (`Outcome::calls`): the `ArtMethod*` of every
/// call it made or dispatched in order, how many returns it saw, and how many distinct methods
/// were called.
pub struct Observed {
    pub entries: Vec<u64>,
    pub returns: usize,
    pub distinct: usize,
}

pub fn observed(calls: &[(bool, u64)]) -> Observed {
    let entries: Vec<u64> = calls.iter().filter(|c| c.0).map(|c| c.1).collect();
    let mut distinct = entries.clone();
    distinct.sort_unstable();
    distinct.dedup();
    Observed {
        returns: calls.len() - entries.len(),
        distinct: distinct.len(),
        entries,
    }
}
