//! The run-test's Java trace-file decoder (tests/art-run-test/2300-hubble-transitions,
//! `Main.decode`) agrees with hubble-format on a file written by hubble-format: its expected
//! output is only as good as that decoder, so it is checked here, on the host, with javac/java.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use hubble_format::{decode, Mode, Record, RingView, RingWriter, TraceFile, TraceHeader};
use hubble_interp_replay::repo_root;

fn short_name(pretty: &str) -> Option<String> {
    let head = pretty.split('(').next().unwrap();
    let qualified = head.rsplit(' ').next().unwrap();
    let method = qualified.rsplit('.').next().unwrap();
    method.starts_with("t_").then(|| qualified.to_string())
}

/// The nesting of t_ methods, computed from hubble-format's own decoder.
fn reference(file: &TraceFile) -> Vec<String> {
    let window = decode(&RingView::linear(&file.window), file.header.mode).unwrap();
    let mut out = Vec::new();
    let mut stack: Vec<Option<String>> = Vec::new();
    let depth = |s: &Vec<Option<String>>| s.iter().filter(|n| n.is_some()).count();
    for r in window.records {
        match r {
            Record::Entry { method, .. } => {
                let name = short_name(file.symbols.get(&method).map_or("?", |s| s.as_str()));
                if let Some(n) = &name {
                    out.push(format!("{}> {n}", "  ".repeat(depth(&stack))));
                }
                stack.push(name);
            }
            Record::Exit { .. } => {
                if let Some(Some(n)) = stack.pop() {
                    out.push(format!("{}< {n}", "  ".repeat(depth(&stack))));
                }
            }
            _ => {}
        }
    }
    out
}

fn java_decode(trace: &Path) -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run-test-java");
    std::fs::create_dir_all(&dir).unwrap();
    let cli = dir.join("DecodeCli.java");
    std::fs::write(
        &cli,
        "public class DecodeCli { public static void main(String[] a) throws Exception {\n\
         for (String l : Main.decode(new java.io.File(a[0]))) System.out.println(l); } }\n",
    )
    .unwrap();
    let main = repo_root().join("tests/art-run-test/2300-hubble-transitions/src/Main.java");
    let ok = Command::new("javac")
        .args(["--release", "17", "-d"])
        .arg(&dir)
        .arg(&main)
        .arg(&cli)
        .status()
        .expect("javac");
    assert!(ok.success());
    let mut java = Command::new("java");
    java.arg("-cp").arg(&dir).arg("DecodeCli").arg(trace);
    let out = hubble_testkit::stdout_of(&mut java);
    out.lines().map(str::to_string).collect()
}

#[test]
fn java_decoder_matches_hubble_format() {
    let mut ring = RingWriter::new(Mode::Bits64, 64);
    let (run_case, t_a, t_b, helper, t_c) = (
        0x7000_0010u64,
        0x7f_0000_1000u64,
        0x7000_0020u64,
        0x7000_0030u64,
        0x7000_0040u64,
    );
    let mut ts = 1000;
    let mut next = || {
        ts += 7;
        ts
    };
    ring.exit(next()); // leftover of an older window: before the start record, never decoded
    ring.start(next());
    ring.entry(run_case, next()).unwrap();
    ring.entry(t_a, next()).unwrap(); // wide pointer: two slots
    ring.entry(t_b, next()).unwrap();
    ring.exit(next());
    ring.entry(helper, next()).unwrap();
    ring.entry(t_c, next()).unwrap();
    ring.exit(next());
    ring.exit(next());
    ring.exit(next()); // t_a
    ring.exit(next()); // run_case
    ring.exit(next()); // a frame entered before tracing started
    ring.entry(t_b, next()).unwrap(); // still running at flush: entry only
    let end = (ring.write_pos_bytes() / 8) as usize;
    let used = decode(&ring.view(), Mode::Bits64).unwrap().slots_used;
    let mut symbols = BTreeMap::new();
    symbols.insert(run_case, "void Main.runCase()".to_string());
    symbols.insert(t_a, "void Main.t_a$noinline$()".to_string());
    symbols.insert(t_b, "int Main.t_b$noinline$(int)".to_string());
    symbols.insert(helper, "void Main.helper(java.lang.String)".to_string());
    symbols.insert(t_c, "void Ex.t_c()".to_string());
    let file = TraceFile {
        header: TraceHeader {
            mode: Mode::Bits64,
            timer_hz: 19_200_000,
            reference_counter: u64::from(ts) + 1,
            wall_clock_ns: 1_763_800_000_000_000_000,
            ring_bytes: 64 * 8,
            write_pos: ring.write_pos_bytes(),
            pid: 1,
            tid: 1,
            thread_name: "main".into(),
            process_name: "art.test.hubble".into(),
            reason: "case".into(),
            anchors: Vec::new(),
            metadata: Default::default(),
        },
        window: ring.slots()[end - used..end].to_vec(),
        symbols,
    };
    let path = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run-test.hubble");
    file.write_atomic(&path).unwrap();
    let want = reference(&file);
    assert_eq!(
        want,
        [
            "> Main.t_a$noinline$",
            "  > Main.t_b$noinline$",
            "  < Main.t_b$noinline$",
            "  > Ex.t_c",
            "  < Ex.t_c",
            "< Main.t_a$noinline$",
            "> Main.t_b$noinline$",
        ]
    );
    assert_eq!(java_decode(&path), want);
}
