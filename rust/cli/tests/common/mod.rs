//! Shared by the tests of this directory (and benches/deobf.rs): running the `hubble` binary
//! under test, a tiny trace file, and an obfuscator.
// Each test file uses some of these.
#![allow(dead_code)]

pub mod obfuscate;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hubble_format::{Mode, RingWriter, TraceFile, TraceHeader};

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

/// A two-call trace (`a.b`, thread `main`, 19 MHz) written to `dir/NAME`: the outer method is
/// named `void a.B.c()` when `named`, the inner one (above 4 GiB) never.
pub fn sample(dir: &Path, name: &str, named: bool) -> (PathBuf, TraceFile) {
    let mut ring = RingWriter::new(Mode::Bits64, 32);
    ring.start(1000);
    ring.entry(0x7000_0010, 1000).unwrap();
    ring.entry(0x7f_0000_0020, 1019).unwrap();
    ring.exit(1038);
    ring.exit(1057);
    let window = hubble_format::ring::decode(&ring.view(), Mode::Bits64).unwrap();
    let end = (ring.write_pos_bytes() / 8) as usize;
    let mut symbols = std::collections::BTreeMap::new();
    if named {
        symbols.insert(0x7000_0010, "void a.B.c()".to_owned());
    }
    let file = TraceFile {
        header: TraceHeader {
            mode: Mode::Bits64,
            timer_hz: 19_000_000,
            reference_counter: 1100,
            wall_clock_ns: 1,
            ring_bytes: 256,
            write_pos: ring.write_pos_bytes(),
            pid: 7,
            tid: 8,
            thread_name: "main".into(),
            process_name: "a.b".into(),
            reason: "test".into(),
            anchors: Vec::new(),
            metadata: Default::default(),
        },
        window: ring.slots()[end - window.slots_used..end].to_vec(),
        symbols,
    };
    let path = dir.join(name);
    file.write_atomic(&path).unwrap();
    (path, file)
}
