//! The runtime's entry points from ART (the `extern "Rust"` half of the cxx bridge, what
//! `lifecycle.cc` calls) on the host's C++ double of ART: one process-wide control plane, as in
//! an app, so one test drives them all in order. Stage 65 calls the same functions from C++
//! against the real `libart.so`; this test is what cargo (and so `cargo mutants`) sees of them.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::art::block_at;
use crate::block::{trace_entry, trace_exit, RawSlots};
use crate::props::{CONSENT, PACKAGES, RING_MB};
use hubble_format::{Mode, TraceFile};

extern "C" {
    fn hubble_double_new_thread() -> usize;
    fn hubble_double_set_runnable(t: usize, runnable: bool);
}

const PACKAGE: &str = "com.example.entry";

/// A thread of the C++ double, in native code (so a flush force-stops it: no trace point will
/// answer a doorbell).
fn new_thread() -> usize {
    // SAFETY: the double allocates a model Thread; leaked (the control plane keeps its handle).
    let t = unsafe { hubble_double_new_thread() };
    // SAFETY: a live thread of the double.
    unsafe { hubble_double_set_runnable(t, false) };
    t
}

fn cursor(t: usize) -> usize {
    let b = crate::ffi::hubble_block_address(t);
    // SAFETY: the double's block of a live thread.
    unsafe { block_at(b) }
        .cursor
        .load(std::sync::atomic::Ordering::Acquire)
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !done() {
        assert!(t0.elapsed() < Duration::from_secs(20), "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass and nothing else.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Files of the given reason in `dir`.
fn files(dir: &Path, reason: &str) -> Vec<PathBuf> {
    let suffix = format!("-{reason}.hubble");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.to_str().unwrap().ends_with(&suffix))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Writes `n` entries and exits on `t` (its trace points, as compiled code would).
fn write_calls(t: usize, n: u32) {
    // SAFETY: the double's block of a live thread.
    let b = unsafe { block_at(crate::ffi::hubble_block_address(t)) };
    for i in 0..n {
        assert!(trace_entry(
            b,
            &RawSlots,
            Mode::Bits64,
            0x7000_0000 + 16 * u64::from(i),
            i
        ));
    }
    for i in 0..n {
        assert!(trace_exit(b, &RawSlots, 1000 + i));
    }
}

#[test]
fn every_entry_point_reaches_the_control_plane() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().to_str().unwrap();
    let dir = tmp.path().join("files/hubble");
    // The app's files directory exists (Android creates it with the data directory).
    std::fs::create_dir_all(tmp.path().join("files")).unwrap();
    let ui = new_thread();
    let second = new_thread();

    // Before the runtime starts: nothing to send to, and a thread name is a command only if it
    // parses as one.
    assert!(!super::request_flush("early"), "no control plane yet");
    assert!(!super::set_thread_enabled(ui, true));
    assert!(super::thread_renamed(ui, "HUBBLE:start"));
    assert!(!super::thread_renamed(ui, "RenderThread"));

    let props = super::host_properties();
    props.set(CONSENT, "1");
    props.set(PACKAGES, PACKAGE);
    props.set(RING_MB, "1");
    assert!(
        !super::runtime_started("com.other.app", "com.other.app", data),
        "a package debug.hubble.packages does not name runs untraced"
    );
    assert!(super::runtime_started(PACKAGE, PACKAGE, data));
    let g = super::global().expect("the control plane is up");

    // ThreadAttached of the UI thread, once the control thread is in its loop (its start,
    // which traces the threads attached by then, is over): the attach's own rebalance traces it.
    wait_for("the control loop's first tick", || {
        g.control
            .stats
            .ticks
            .load(std::sync::atomic::Ordering::Relaxed)
            > 0
    });
    assert!(g.control.traced_threads().is_empty());
    super::thread_attached(ui, 4242, "main", true, false);
    wait_for("the UI thread traced", || cursor(ui) != 0);
    write_calls(ui, 3);

    // The in-process API and the anomaly report: one flush each, on the control thread.
    let before = monotonic_ns();
    assert!(super::request_flush("manual"));
    wait_for("a manual flush", || !files(&dir, "manual").is_empty());
    let after = monotonic_ns();
    let bytes = std::fs::read(&files(&dir, "manual")[0]).unwrap();
    let file = TraceFile::parse(&bytes).expect("the flush's file parses");
    assert_eq!(file.header.reason, "manual");
    assert_eq!(
        (file.header.tid, file.header.thread_name.as_str()),
        (4242, "main")
    );
    // The double's timer is CLOCK_MONOTONIC in ns: the flush read it (through CxxArt) between
    // the request and the file.
    assert_eq!(file.header.timer_hz, 1_000_000_000);
    assert!(
        (before..=after).contains(&file.header.reference_counter),
        "reference {} not within [{before}, {after}]",
        file.header.reference_counter
    );
    super::anomaly_reported("jank");
    wait_for("a jank flush", || !files(&dir, "jank").is_empty());

    // A second thread: attached (not UI), then foreground: traced next to the UI thread.
    super::thread_attached(second, 4243, "worker", false, true);
    super::thread_foreground(second);
    wait_for("the foreground thread traced", || cursor(second) != 0);
    // Disabled by name, then by the API: tracing off for it.
    assert!(super::thread_renamed(second, "HUBBLE:stop"));
    wait_for("the thread stopped by name", || cursor(second) == 0);
    assert!(super::set_thread_enabled(second, true));
    wait_for("the thread enabled again", || cursor(second) != 0);
    assert!(super::set_thread_enabled(second, false));
    wait_for("the thread disabled", || cursor(second) == 0);
    assert!(!super::thread_renamed(second, "worker-2"), "a real name");

    // SIGQUIT: an ANR flush of every traced thread.
    super::sigquit_received();
    wait_for("an ANR flush", || !files(&dir, "anr").is_empty());

    // ThreadDetached: the control plane forgets the thread.
    assert!(g.control.traced_threads().contains(&ui));
    super::thread_detached(ui);
    wait_for("the UI thread forgotten", || {
        !g.control.traced_threads().contains(&ui)
    });
    // A loader's unloading reaches the control plane: the names of its methods (the double's
    // loader L owns L+8 .. L+64) are kept for later flushes.
    let before = g.control.stats.unloaded_names.load(Ordering::Relaxed);
    super::class_loader_unloading(0x5000);
    assert_eq!(
        g.control.stats.unloaded_names.load(Ordering::Relaxed) - before,
        8
    );
}
