//! `hubble fleet …` hands its arguments to the `hubble-fleet` engine binary (kept apart so that
//! `hubble` carries no query engine): the one beside the `hubble` executable first, else the
//! one on `PATH`, and exits with its status. Fake engines (shell scripts) stand in for it, next
//! to hard links of the built `hubble` in the target directory.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A `hubble-fleet` in `dir` that writes `tag` and its arguments to `$OUT` and exits with `code`.
fn fake_engine(dir: &Path, tag: &str, code: i32) {
    let path = dir.join("hubble-fleet");
    std::fs::write(
        &path,
        format!("#!/bin/sh\necho \"{tag} $*\" > \"$OUT\"\nexit {code}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `hubble` linked into a directory of its own (a hard link: the executable's own path is
/// where it looks for the engine).
fn hubble_in(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let to = dir.join("hubble");
    std::fs::hard_link(env!("CARGO_BIN_EXE_hubble"), &to).unwrap();
    to
}

fn fleet(hubble: &Path, path_dir: &Path, out: &Path, args: &[&str]) -> Output {
    Command::new(hubble)
        .arg("fleet")
        .args(args)
        .env("PATH", path_dir)
        .env("OUT", out)
        .output()
        .unwrap()
}

#[test]
fn fleet_runs_the_engine_beside_it_else_on_the_path_with_its_status() {
    // In the target directory: hard links need the executable's file system.
    let tmp = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let on_path = tmp.path().join("bin");
    std::fs::create_dir(&on_path).unwrap();
    fake_engine(&on_path, "path", 3);
    let out = tmp.path().join("out.txt");
    let read = || std::fs::read_to_string(&out).unwrap();

    let beside = hubble_in(&tmp.path().join("beside"));
    fake_engine(beside.parent().unwrap(), "beside", 0);
    let o = fleet(&beside, &on_path, &out, &["query", "--top", "5"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(read(), "beside query --top 5\n");

    let alone = hubble_in(&tmp.path().join("alone"));
    let o = fleet(&alone, &on_path, &out, &["query"]);
    assert_eq!(o.status.code(), Some(3), "the engine's status");
    assert_eq!(read(), "path query\n");

    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = fleet(&alone, &empty, &out, &["query"]);
    assert_ne!(o.status.code(), Some(0));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("cannot run hubble-fleet"), "{err}");
}
