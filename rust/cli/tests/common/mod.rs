//! Shared by the tests of this directory (and benches/deobf.rs): running the `hubble` binary
//! under test, and an obfuscator.
// Each test file uses some of these.
#![allow(dead_code)]

pub mod obfuscate;

use std::process::{Command, Output};

/// The `hubble` binary cargo built for these tests.
pub fn hubble() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hubble"))
}

/// Runs `cmd`: its exit status (-1 if a signal ended it), stdout and stderr.
pub fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("run hubble");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Runs `hubble ARGS`.
pub fn output(args: &[&str]) -> Output {
    hubble().args(args).output().expect("run hubble")
}
