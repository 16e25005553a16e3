//! kill -9 during flush, repeated, from a child process: a file under a final `.hubble` name is
//! always complete (parses, CRC matches); what a killed flush leaves is a `.…hubble.tmp` file,
//! which the next flush of a live process removes once its owner is dead.
#![cfg(not(loom))]

use std::path::Path;
use std::sync::Arc;

use hubble_format::{Mode, TraceFile};
use hubble_runtime::flush::FsStorage;
use hubble_runtime::props::CONSENT;
use hubble_runtime::{Config, Control};
use hubble_testkit::runtime::{FakeArt, FakeProperties, FakeThread};

const CHILD: &str = "HUBBLE_KILL9_CHILD";

fn control(dir: &Path) -> Control<FakeArt> {
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    let mut cfg = Config::new("com.kill", "com.kill", dir.to_path_buf());
    cfg.ring_bytes = 4 << 20;
    cfg.mode = Mode::Bits64;
    cfg.max_files = 1000;
    cfg.max_bytes = u64::MAX;
    Control::new(FakeArt::default(), cfg, props, Box::new(FsStorage))
}

/// The child: fill the ring, flush, forever (until killed).
fn child(dir: &Path) -> ! {
    let c = control(dir);
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 1, "main", true);
    c.start_tracing().unwrap();
    let mut ts = 0u32;
    loop {
        t.to_runnable();
        for i in 0..50_000u64 {
            t.entry(Mode::Bits64, 0x1000 + 16 * (i % 5000), ts);
            t.exit(ts + 1);
            ts = ts.wrapping_add(2);
        }
        t.to_native();
        // Tell the parent when a flush begins and ends, so it can aim its kill inside one and
        // know afterwards whether it landed there.
        use std::io::Write;
        let mut out = std::io::stdout();
        out.write_all(b"F").unwrap();
        out.flush().unwrap();
        c.flush(t.handle(), "kill9").unwrap();
        out.write_all(b"D").unwrap();
        out.flush().unwrap();
    }
}

/// The child's next flush marker ('F' begin, 'D' end), skipping what the test harness prints.
fn next_marker(r: &mut impl std::io::Read, buf: &mut [u8; 1]) -> u8 {
    loop {
        r.read_exact(buf).expect("the child's stdout");
        if matches!(buf[0], b'F' | b'D') {
            return buf[0];
        }
    }
}

#[test]
fn kill9_during_flush_never_leaves_a_partial_file() {
    if let Some(dir) = std::env::var_os(CHILD) {
        child(Path::new(&dir));
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hubble");
    let exe = std::env::current_exe().unwrap();
    let rounds = 10u32;
    let mut tmp_seen = std::collections::HashSet::new();
    let mut inside = 0;
    for round in 0..rounds {
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", "kill9_during_flush_never_leaves_a_partial_file"])
            .env(CHILD, &dir)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Kill at a different point of a flush each round: time one whole flush of this child
        // (begin to end marker), then wait for the next one to begin and kill it after
        // round / (2 rounds) of that time (its first half: durations vary). Flushes got faster
        // over time, and a fixed delay stopped aiming.
        use std::io::Read;
        let mut marker = [0u8; 1];
        let mut stdout = child.stdout.take().unwrap();
        assert_eq!(next_marker(&mut stdout, &mut marker), b'F');
        let began = std::time::Instant::now();
        assert_eq!(next_marker(&mut stdout, &mut marker), b'D');
        let one_flush = began.elapsed();
        assert_eq!(next_marker(&mut stdout, &mut marker), b'F');
        std::thread::sleep(one_flush * round / (2 * rounds));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // What the child said after the first flush began: the kill landed inside a flush if the
        // last marker is a begin ("F") with no end ("D") after it.
        let mut rest = Vec::new();
        stdout.read_to_end(&mut rest).unwrap();
        if rest
            .iter()
            .rev()
            .find(|m| matches!(m, b'F' | b'D'))
            .is_none_or(|&m| m == b'F')
        {
            inside += 1;
        }
        for e in std::fs::read_dir(&dir).into_iter().flatten() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".hubble") {
                TraceFile::read(&p).unwrap_or_else(|e| panic!("{name} is partial: {e}"));
            } else {
                assert!(
                    name.starts_with('.') && name.ends_with(".hubble.tmp"),
                    "{name}"
                );
                tmp_seen.insert(name);
            }
        }
    }
    let finals = hubble_testkit::file_names(&dir, |n| n.ends_with(".hubble")).len();
    println!(
        "kill -9: {rounds} rounds, {inside} kills inside a flush, {finals} complete files, \
         temporary files seen after kills: {} (distinct)",
        tmp_seen.len()
    );
    assert!(finals > 0, "the children flushed at least once");
    // The test proves something only if kills did land mid-flush, and at least one mid-write
    // (a temporary file left behind).
    assert!(
        inside * 2 >= rounds,
        "only {inside} of {rounds} kills landed inside a flush: the timing no longer aims"
    );
    assert!(
        !tmp_seen.is_empty(),
        "no kill landed while a temporary file was being written"
    );
    // A live process's flush removes the dead children's temporary files.
    let c = control(&dir);
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 1, "main", true);
    c.start_tracing().unwrap();
    c.flush(t.handle(), "cleanup").unwrap();
    let tmps = hubble_testkit::file_names(&dir, |n| n.ends_with(".tmp")).len();
    assert_eq!(
        tmps, 0,
        "stale temporary files of dead processes are removed"
    );
}
