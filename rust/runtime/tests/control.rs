//! The control plane against a fake ART: flush, restart, consent, retention, N threads,
//! per-thread enable, the ClassLoader hook, and faults at flush.
#![cfg(not(loom))]

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use hubble_format::{EventKind, Mode, TraceFile, WindowStart};
use hubble_runtime::flush::{FsStorage, Storage};
use hubble_runtime::props::CONSENT;
use hubble_runtime::{Config, Control, RuntimeError};
use hubble_testkit::runtime::{entry_methods, FailingStorage, FakeArt, FakeProperties, FakeThread};

const MODE: Mode = Mode::Bits64;

fn props(consent: bool) -> Arc<FakeProperties> {
    let p = Arc::new(FakeProperties::default());
    if consent {
        p.set(CONSENT, "1");
    }
    p
}

fn config(dir: &Path) -> Config {
    let mut c = Config::new("com.example", "com.example:proc", dir.to_path_buf());
    c.ring_bytes = 64 << 10;
    c.mode = MODE;
    c
}

/// A control whose stops time out after 5 ms (late stops), with `threads` rings.
fn impatient_control(dir: &Path, threads: usize) -> Control<FakeArt> {
    control_with(dir, |cfg| {
        cfg.stop_timeout = std::time::Duration::from_millis(5);
        cfg.threads = threads;
    })
}

fn control(dir: &Path, consent: bool, storage: Box<dyn Storage>) -> Control<FakeArt> {
    Control::new(FakeArt::default(), config(dir), props(consent), storage)
}

/// A control with consent, writing to `dir`, with the test's changes to the configuration.
fn control_with(dir: &Path, change: impl FnOnce(&mut Config)) -> Control<FakeArt> {
    let mut cfg = config(dir);
    change(&mut cfg);
    Control::new(FakeArt::default(), cfg, props(true), Box::new(FsStorage))
}

/// A temporary directory and the `hubble` folder the runtime writes to inside it.
fn hubble_dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hubble");
    (tmp, dir)
}

/// The UI thread `tid`, attached, and tracing started: the set-up of most tests here.
fn traced_main_thread(c: &Control<FakeArt>, tid: u32) -> Box<FakeThread> {
    let t = FakeThread::new();
    c.thread_attached(t.handle(), tid, "main", true);
    c.start_tracing().unwrap();
    t
}

/// The method entries a flushed file holds.
fn entries_in(file: &TraceFile) -> usize {
    let events = file.decode_events().unwrap().events;
    events
        .iter()
        .filter(|e| matches!(e.kind, EventKind::Entry { .. }))
        .count()
}

/// Writes `depth` nested calls and returns them: methods 0x1000 + 16*i (and a wide one).
fn calls(t: &FakeThread, depth: u32) -> Vec<u64> {
    let mut methods = Vec::new();
    let mut ts = 1000;
    for i in 0..depth {
        let m = if i % 5 == 4 {
            0x7f12_0000_0000 + 16 * u64::from(i)
        } else {
            0x1000 + 16 * u64::from(i)
        };
        assert!(t.entry(MODE, m, ts));
        methods.push(m);
        ts += 1;
    }
    for _ in 0..depth {
        assert!(t.exit(ts));
        ts += 1;
    }
    methods
}

/// Whether `t`'s trace points record: its block has a cursor only while tracing is on.
fn is_tracing(t: &FakeThread) -> bool {
    t.block.cursor.load(Ordering::Relaxed) != 0
}

fn only_file(dir: &Path) -> TraceFile {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    TraceFile::read(&files[0]).unwrap()
}

/// The flush records the device class and build from the read-only properties (format version
/// 3 metadata), leaves out those the device lacks, and cuts an over-long value to the format's
/// limit on a character boundary.
#[test]
fn flush_records_device_and_build_metadata_from_properties() {
    let (_tmp, dir) = hubble_dir();
    let p = props(true);
    p.set("ro.product.model", "Pixel 8");
    p.set("ro.build.version.sdk", "34");
    // 255 bytes of ASCII then a 3-byte character: 258 bytes, cut to 255.
    let long = format!("{}€", "f".repeat(255));
    p.set("ro.build.fingerprint", &long);
    let c = Control::new(FakeArt::default(), config(&dir), p, Box::new(FsStorage));
    let t = traced_main_thread(&c, 42);
    t.to_runnable();
    calls(&t, 3);
    t.to_native();
    c.flush(t.handle(), "jank").unwrap();
    let file = only_file(&dir);
    let got: Vec<(&str, &str)> = file
        .header
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("android.sdk", "34"),
            ("build.fingerprint", &long[..255]),
            ("device.model", "Pixel 8"),
        ]
    );
}

#[test]
fn flush_of_a_thread_in_native_writes_a_decodable_file_and_restarts() {
    let (_tmp, dir) = hubble_dir();
    let c = control(&dir, true, Box::new(FsStorage));
    let t = traced_main_thread(&c, 42);
    assert_eq!(c.traced_threads(), vec![t.handle()]);
    t.to_runnable();
    let methods = calls(&t, 20);
    t.to_native();
    let flushed = c.flush(t.handle(), "jank detector").unwrap();
    assert_eq!(c.stats.forced_stops.load(Ordering::Relaxed), 1);
    let path = flushed.path.unwrap();
    let name = path.file_name().unwrap().to_str().unwrap().to_string();
    assert!(
        name.ends_with(&format!("-{}-42-jank_detector.hubble", std::process::id())),
        "{name}"
    );
    let file = only_file(&dir);
    // Written in pieces (window first, on a helper thread; header and symbols around it), the
    // file is byte for byte what the format crate encodes in one piece.
    assert_eq!(std::fs::read(&path).unwrap(), file.to_bytes().unwrap());
    assert_eq!(file.header.tid, 42);
    assert_eq!(file.header.thread_name, "main");
    assert_eq!(file.header.reason, "jank detector");
    assert_eq!(file.header.ring_bytes, 64 << 10);
    let decoded = file.decode_events().unwrap();
    assert_eq!(decoded.start, WindowStart::StartRecord);
    assert_eq!(entry_methods(&file), methods);
    let exits = decoded
        .events
        .iter()
        .filter(|e| e.kind == EventKind::Exit)
        .count();
    assert_eq!(exits, methods.len());
    for m in &methods {
        assert_eq!(file.symbols[m], FakeArt::name_of(*m));
    }
    assert_eq!(file.symbols.len(), methods.len());
    // Mode 0600.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Restarted: the next trace point is recorded.
    t.to_runnable();
    assert!(t.exit(5000));
    // A second flush holds only what came after the restart; symbols come from the cache.
    t.to_native();
    std::fs::remove_file(&path).unwrap();
    c.flush(t.handle(), "again").unwrap();
    let second = only_file(&dir).decode_events().unwrap();
    assert_eq!(second.events.len(), 2, "{:?}", second.events);
    assert_eq!(second.events[0].kind, EventKind::Start);
    assert_eq!(second.events[1].kind, EventKind::Exit);
}

#[test]
fn cooperative_stop_of_a_running_thread() {
    let (_tmp, dir) = hubble_dir();
    let c = Arc::new(control(&dir, true, Box::new(FsStorage)));
    let t: Arc<FakeThread> = Arc::from(FakeThread::new());
    c.thread_attached(t.handle(), 7, "main", true);
    c.start_tracing().unwrap();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let runner = {
        let (t, stop) = (t.clone(), stop.clone());
        std::thread::spawn(move || {
            t.to_runnable();
            let mut ts = 0u32;
            while !stop.load(Ordering::Relaxed) {
                t.entry(MODE, 0x2000, ts);
                t.exit(ts + 1);
                ts += 2;
            }
            t.to_native();
        })
    };
    for _ in 0..5 {
        c.flush(t.handle(), "loop").unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    runner.join().unwrap();
    assert!(c.stats.cooperative_stops.load(Ordering::Relaxed) >= 1);
    for e in std::fs::read_dir(&dir).unwrap() {
        let f = TraceFile::read(&e.unwrap().path()).unwrap();
        let d = f.decode_events().unwrap();
        // Entries and exits alternate after the start record.
        for pair in d.events.windows(2) {
            assert_ne!(pair[0].kind, pair[1].kind);
        }
    }
}

#[test]
fn no_consent_no_file_but_tracing_goes_on() {
    let (_tmp, dir) = hubble_dir();
    let c = control(&dir, false, Box::new(FsStorage));
    let t = traced_main_thread(&c, 1);
    t.to_runnable();
    calls(&t, 3);
    t.to_native();
    let f = c.flush(t.handle(), "x").unwrap();
    assert!(f.path.is_none());
    assert!(!dir.exists());
    t.to_runnable();
    assert!(t.exit(1));
}

#[test]
fn retention_keeps_the_newest_files() {
    let (_tmp, dir) = hubble_dir();
    let c = control_with(&dir, |cfg| cfg.max_files = 3);
    let t = traced_main_thread(&c, 1);
    let mut paths = Vec::new();
    for i in 0..6 {
        std::thread::sleep(std::time::Duration::from_millis(2));
        paths.push(c.flush(t.handle(), &format!("r{i}")).unwrap().path.unwrap());
    }
    let mut left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    left.sort();
    assert_eq!(left, paths[3..].to_vec());
    // Byte cap: each file is > 100 bytes, so a 1-byte cap leaves nothing but... the cap is
    // applied after writing, oldest first.
    let c2 = control_with(&dir, |cfg| cfg.max_bytes = 1);
    let t2 = FakeThread::new();
    c2.thread_attached(t2.handle(), 2, "main", true);
    c2.start_tracing().unwrap();
    c2.flush(t2.handle(), "bytes").unwrap();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
}

#[test]
fn n_most_recent_foreground_threads_are_traced_and_the_oldest_reclaimed() {
    let tmp = tempfile::tempdir().unwrap();
    let c = control(tmp.path(), true, Box::new(FsStorage));
    let ts: Vec<_> = (0..3).map(|_| FakeThread::new()).collect();
    c.thread_attached(ts[0].handle(), 1, "main", true);
    c.thread_attached(ts[1].handle(), 2, "a", false);
    c.thread_attached(ts[2].handle(), 3, "b", false);
    c.start_tracing().unwrap();
    assert_eq!(c.traced_threads(), vec![ts[0].handle()]);
    c.thread_foreground(ts[1].handle());
    c.rebalance().unwrap();
    let mut want = vec![ts[0].handle(), ts[1].handle()];
    want.sort();
    assert_eq!(c.traced_threads(), want);
    c.thread_foreground(ts[2].handle());
    c.rebalance().unwrap();
    let mut want = vec![ts[1].handle(), ts[2].handle()];
    want.sort();
    assert_eq!(c.traced_threads(), want);
    assert!(!is_tracing(&ts[0]), "reclaimed: tracing off");
    assert!(!ts[0].entry(MODE, 0x1000, 1));
    assert!(is_tracing(&ts[2]));
    // Per-thread disable and enable.
    c.set_thread_enabled(ts[2].handle(), false).unwrap();
    assert!(!c.traced_threads().contains(&ts[2].handle()));
    c.set_thread_enabled(ts[0].handle(), true).unwrap();
    assert!(c.traced_threads().contains(&ts[0].handle()));
    // N = 3 and everything enabled.
    c.set_thread_enabled(ts[2].handle(), true).unwrap();
    c.set_thread_count(3).unwrap();
    assert_eq!(c.traced_threads().len(), 3);
    // Detach returns the ring; attach is idempotent.
    c.thread_attached(ts[1].handle(), 2, "a-renamed", false);
    assert_eq!(c.traced_threads().len(), 3);
    c.thread_detached(ts[1].handle());
    assert_eq!(c.traced_threads().len(), 2);
    assert!(!is_tracing(&ts[1]));
    c.stop_tracing().unwrap();
    assert!(c.traced_threads().is_empty());
}

#[test]
fn class_loader_unload_names_buffered_pointers_before_the_memory_goes() {
    let (_tmp, dir) = hubble_dir();
    let c = control(&dir, true, Box::new(FsStorage));
    let t = traced_main_thread(&c, 1);
    let loader = 0x7f55_0000_0000usize;
    let dying = FakeArt::loader_methods_of(loader);
    t.to_runnable();
    assert!(t.entry(MODE, dying[0], 1));
    assert!(t.entry(MODE, 0x3000, 2));
    assert!(t.exit(3));
    assert!(t.exit(4));
    assert!(t.entry(MODE, dying[3], 5));
    t.to_native();
    // Every method of the loader is named while it is alive; then the memory goes.
    c.art()
        .unload(loader, |l| assert_eq!(c.class_loader_unloading(l), 8));
    // The flush must not hand the dead pointers to ART (FakeArt panics if it does).
    c.flush(t.handle(), "after unload").unwrap();
    let f = only_file(&dir);
    assert_eq!(f.symbols[&dying[0]], FakeArt::name_of(dying[0]));
    assert_eq!(f.symbols[&dying[3]], FakeArt::name_of(dying[3]));
    assert_eq!(f.symbols[&0x3000], FakeArt::name_of(0x3000));
}

/// A ring window holding records of a dead loader's method and of a later method that took its
/// address (ART reuses a dead loader's arenas): each record is named by when it ran, the dead
/// one's under the alias (pointer | 2) and the new one's under the pointer, not the whole window
/// by the first method that died there after the window began, as the epoch alone named it.
/// An idle gap longer than the low word wraps between the two calls is dated by the anchor the
/// tick took.
#[test]
fn a_ring_window_names_a_reused_address_by_when_each_record_ran() {
    for idle_gap in [false, true] {
        let (_tmp, dir) = hubble_dir();
        let c = control(&dir, true, Box::new(FsStorage));
        let t = FakeThread::new();
        c.thread_attached(t.handle(), 1, "main", true);
        let t0 = 50u64 << 32;
        c.art().set_timer(t0);
        c.start_tracing().unwrap();
        let loader = 0x7000_0000usize;
        let m = FakeArt::loader_methods_of(loader)[3];
        let call = |at: u64| {
            c.art().set_timer(at);
            t.to_runnable();
            assert!(t.entry(MODE, m, at as u32));
            assert!(t.exit(at as u32 + 10));
            t.to_native();
        };
        call(t0 + 100);
        c.art().set_timer(t0 + 1_000);
        c.art().unload(loader, |l| {
            c.class_loader_unloading(l);
        });
        c.art().reuse_loader(loader, &[(m, "void B.run()")]);
        let later = if idle_gap {
            // Idle for more than a wrap, with the ticks that anchor it.
            c.art().set_timer(t0 + 2_000);
            c.tick();
            c.tick();
            t0 + 2_000 + (5u64 << 32)
        } else {
            t0 + 2_000
        };
        call(later);
        c.art().set_timer(later + 100);
        c.flush(t.handle(), "after").unwrap();
        let f = only_file(&dir);
        let alias = m | hubble_runtime::reuse::ALIAS_BIT;
        assert_eq!(
            f.symbols[&m], "void B.run()",
            "B's record (idle gap: {idle_gap})"
        );
        assert_eq!(f.symbols[&alias], FakeArt::name_of(m), "A's record");
        assert_eq!(entry_methods(&f), [alias, m], "A's call, then B's");
    }
}

/// The class-loader unload hook runs on the GC thread holding the mutator lock. It must never
/// wait for a flush in progress (which may wait up to the stop timeout for a traced thread, write
/// to disk, or block entering ART while a SuspendAll is pending — which itself waits for the GC
/// thread).
#[test]
fn class_loader_unload_never_waits_for_a_flush_in_progress() {
    let (_tmp, dir) = hubble_dir();
    let c = Arc::new(control_with(&dir, |cfg| {
        cfg.stop_timeout = std::time::Duration::from_secs(60)
    }));
    let t: Arc<FakeThread> = Arc::from(FakeThread::new());
    c.thread_attached(t.handle(), 1, "main", true);
    c.start_tracing().unwrap();
    t.to_runnable();
    assert!(t.entry(MODE, 0x3000, 1));
    // A flush rings the doorbell of a runnable thread that is busy without calls.
    let flusher = {
        let c = c.clone();
        let h = t.handle();
        std::thread::spawn(move || c.flush(h, "jank").map(|_| ()))
    };
    while t.block.stop.load(Ordering::Acquire) != hubble_runtime::block::STOP_REQUESTED {
        std::thread::yield_now();
    }
    // Meanwhile the GC unloads a class loader.
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let gc = {
        let c = c.clone();
        std::thread::spawn(move || {
            c.art().unload(0x5000_0000, |l| {
                c.class_loader_unloading(l);
            });
            done_tx.send(()).unwrap();
        })
    };
    let finished = done_rx.recv_timeout(std::time::Duration::from_secs(10));
    // Let the flush end either way (the thread reaches a trace point), so the test never hangs.
    assert!(!t.exit(2));
    flusher.join().unwrap().unwrap();
    gc.join().unwrap();
    assert!(
        finished.is_ok(),
        "the class-loader hook waited for a flush that was waiting for a traced thread"
    );
}

/// An unload that completes between the flush's choice of pointers to resolve and
/// its call into ART: the call is refused (generation changed), the cache names the dead loader's
/// pointers, and no freed `ArtMethod` is read (FakeArt panics on a use after free).
#[test]
fn an_unload_racing_the_symbolization_never_reads_freed_methods() {
    let (_tmp, dir) = hubble_dir();
    let c = Arc::new(control(&dir, true, Box::new(FsStorage)));
    let t = traced_main_thread(&c, 1);
    let loader = 0x7f66_0000_0000usize;
    let dying = FakeArt::loader_methods_of(loader);
    t.to_runnable();
    assert!(t.entry(MODE, dying[2], 1));
    assert!(t.entry(MODE, 0x4000, 2));
    t.to_native();
    let gc = c.clone();
    *c.art().before_resolve.lock().unwrap() = Some(Box::new(move || {
        gc.art().unload(loader, |l| {
            gc.class_loader_unloading(l);
        });
    }));
    c.flush(t.handle(), "race").unwrap();
    assert!(
        c.art().before_resolve.lock().unwrap().is_none(),
        "the race ran"
    );
    let f = only_file(&dir);
    assert_eq!(f.symbols[&dying[2]], FakeArt::name_of(dying[2]));
    assert_eq!(f.symbols[&0x4000], FakeArt::name_of(0x4000));
}

/// The I/O error a flush of `t` that must fail ends with.
fn flush_io_error(c: &Control<FakeArt>, t: &FakeThread, reason: &str) -> std::io::Error {
    match c.flush(t.handle(), reason) {
        Err(RuntimeError::Io { source, .. }) => source,
        other => panic!("{other:?}"),
    }
}

/// A failed flush leaves nothing behind in `dir`: no partial file, no temporary.
fn assert_no_file_left(dir: &Path) {
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty(),
        "no partial file, no temporary left: {left:?}"
    );
}

fn assert_resumes(t: &FakeThread) {
    t.to_runnable();
    assert!(t.exit(99), "tracing resumed after the failed flush");
    t.to_native();
}

#[test]
fn disk_full_injected_is_logged_and_tracing_resumes() {
    let (_tmp, dir) = hubble_dir();
    let storage = FailingStorage {
        errno: libc::ENOSPC,
        failing: true.into(),
    };
    let c = control(&dir, true, Box::new(storage));
    let t = traced_main_thread(&c, 1);
    let source = flush_io_error(&c, &t, "full");
    assert_eq!(source.raw_os_error(), Some(libc::ENOSPC));
    assert_eq!(c.stats.failed_flushes.load(Ordering::Relaxed), 1);
    assert_resumes(&t);
}

#[test]
fn missing_directory_is_logged_and_tracing_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    // The app's data directory does not exist: we do not invent it.
    let dir = tmp.path().join("no-such-app").join("files").join("hubble");
    let c = control(&dir, true, Box::new(FsStorage));
    let t = traced_main_thread(&c, 1);
    assert!(matches!(
        c.flush(t.handle(), "x"),
        Err(RuntimeError::Io { .. })
    ));
    assert_resumes(&t);
    assert!(!dir.exists());
}

#[test]
fn an_app_without_files_dir_gets_one_as_context_impl_makes_it() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    // The app's data directory exists, but the app never asked for getFilesDir(): the host
    // VM's first real flush failed here.
    let data = tmp.path().join("com.example.app");
    std::fs::create_dir(&data).unwrap();
    let dir = data.join("files").join("hubble");
    let c = control(&dir, true, Box::new(FsStorage));
    let t = traced_main_thread(&c, 1);
    assert!(t.entry(MODE, 0x7000_1000, 100));
    assert!(t.exit(200));
    let f = c.flush(t.handle(), "x").expect("flush");
    let path = f.path.expect("a file was written");
    assert!(path.starts_with(&dir), "{path:?}");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "hubble/ is the runtime's alone");
    assert_eq!(mode(&data.join("files")) & 0o700, 0o700);
    assert_resumes(&t);
}

/// Real file systems: a 64 KiB tmpfs (disk full) and a read-only tmpfs. Needs root (mount);
/// without it the test says so and checks nothing else.
/// Fills a 1 MiB ring (a file far larger than the small disks below) and flushes it into `dir`:
/// the flush must fail with `errno`, and tracing resume.
fn full_ring_flush_fails_with(dir: &Path, errno: i32) {
    let c = control_with(dir, |cfg| cfg.ring_bytes = 1 << 20);
    let t = traced_main_thread(&c, 1);
    t.to_runnable();
    for i in 0..200_000u32 {
        t.entry(MODE, 0x1000 + 8 * u64::from(i % 1000), i);
        t.exit(i);
    }
    t.to_native();
    let source = flush_io_error(&c, &t, "full");
    assert_eq!(source.raw_os_error(), Some(errno), "{source}");
    assert_resumes(&t);
}

#[test]
fn real_disk_full_and_read_only_file_systems() {
    let tmp = tempfile::tempdir().unwrap();
    let full = tmp.path().join("full");
    let ro = tmp.path().join("ro");
    std::fs::create_dir_all(&full).unwrap();
    std::fs::create_dir_all(&ro).unwrap();
    let mount = |dir: &Path, opts: &str| {
        std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", opts, "tmpfs"])
            .arg(dir)
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    if !mount(&full, "size=64k") {
        // CI runs as root: a check that cannot run there must fail, not pass by skipping. The
        // disk-full half also runs without privilege (disk_full_by_rlimit_leaves_no_file).
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "real_disk_full_and_read_only_file_systems: mount not permitted under CI=true"
        );
        eprintln!("SKIPPED real_disk_full_and_read_only_file_systems: mount not permitted");
        return;
    }
    struct Umount<'a>(&'a Path);
    impl Drop for Umount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _u1 = Umount(&full);
    // Disk full: a 1 MiB ring written completely does not fit in 64 KiB.
    full_ring_flush_fails_with(&full.join("hubble"), libc::ENOSPC);
    assert_no_file_left(&full.join("hubble"));
    // Read-only.
    std::fs::create_dir_all(ro.join("hubble")).unwrap();
    assert!(mount(&ro, "ro,size=64k"));
    let _u2 = Umount(&ro);
    let c = control(&ro.join("hubble"), true, Box::new(FsStorage));
    let t = traced_main_thread(&c, 1);
    let source = flush_io_error(&c, &t, "ro");
    assert!(
        matches!(
            source.raw_os_error(),
            Some(libc::EROFS) | Some(libc::ENOENT)
        ),
        "{source}"
    );
    assert_resumes(&t);
}

#[test]
fn property_commands_drive_tracing() {
    let (_tmp, dir) = hubble_dir();
    let p = props(true);
    let c = Control::new(
        FakeArt::default(),
        config(&dir),
        p.clone(),
        Box::new(FsStorage),
    );
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 1, "main", true);
    assert!(c.poll_properties().is_none());
    p.set(hubble_runtime::props::CTL, "com.example start");
    c.poll_properties().unwrap().unwrap();
    assert_eq!(c.traced_threads(), vec![t.handle()]);
    assert!(c.poll_properties().is_none(), "same value: not again");
    p.set(hubble_runtime::props::CTL, "com.example flush prop#1");
    c.poll_properties().unwrap().unwrap();
    assert_eq!(only_file(&dir).header.reason, "prop");
    p.set(hubble_runtime::props::CTL, "com.other stop");
    assert!(c.poll_properties().is_none());
    p.set(hubble_runtime::props::CTL, "com.example stop");
    c.poll_properties().unwrap().unwrap();
    assert!(c.traced_threads().is_empty());
    // The thread-name hook: a command, not a name.
    assert!(c.thread_renamed(t.handle(), "HUBBLE:flush:x").is_some());
    assert!(c.thread_renamed(t.handle(), "worker").is_none());
}

/// The UI thread of an impatient control after 6 calls, runnable and silent (a loop without
/// calls), so that a flush's stop times out; the control, the thread and the methods it called.
fn a_flush_that_timed_out(dir: &Path) -> (Control<FakeArt>, Box<FakeThread>, Vec<u64>) {
    let c = impatient_control(dir, 2);
    let t = traced_main_thread(&c, 42);
    t.to_runnable();
    let methods = calls(&t, 6);
    match c.flush(t.handle(), "jank") {
        Err(RuntimeError::StopTimeout(h, _)) => assert_eq!(h, t.handle()),
        other => panic!("expected a stop timeout, got {other:?}"),
    }
    (c, t, methods)
}

/// A flush whose stop timed out (the thread was in a loop without calls) must not
/// leave tracing silently off once the thread reaches its next trace point and stops itself:
/// the next control tick finishes the flush it asked for (its reason, its window) and restarts.
#[test]
fn a_stop_that_timed_out_is_finished_and_tracing_restarted_on_the_next_tick() {
    let (_tmp, dir) = hubble_dir();
    let (c, t, methods) = a_flush_that_timed_out(&dir);
    assert!(std::fs::read_dir(&dir).map_or(true, |d| d.count() == 0));
    // The loop ends; the next trace point answers the doorbell and records nothing.
    assert!(!t.exit(9000), "a stopped thread must not record");
    assert!(!is_tracing(&t));
    c.tick();
    // The flush it asked for is written, with the window up to the thread's own stop.
    let file = only_file(&dir);
    assert_eq!(file.header.reason, "jank");
    assert_eq!(entries_in(&file), methods.len());
    // ...and tracing is on again: the next trace point is recorded.
    assert!(is_tracing(&t), "tracing stayed off");
    assert!(t.exit(9001));
    // A tick with nothing pending does nothing.
    c.tick();
    assert_eq!(c.stats.flushes.load(Ordering::Relaxed), 1);
}

/// The other way a late stop ends: the thread never reaches a trace point but leaves managed
/// code (a JNI call, a wait), where the control thread may stop it itself. The tick after that
/// finishes the flush; while it stays runnable and silent, ticks leave the stop pending.
#[test]
fn a_stop_that_timed_out_is_finished_once_the_thread_leaves_managed_code() {
    let (_tmp, dir) = hubble_dir();
    let (c, t, methods) = a_flush_that_timed_out(&dir);
    c.tick();
    assert!(
        std::fs::read_dir(&dir).map_or(true, |d| d.count() == 0),
        "runnable and silent: still pending"
    );
    t.to_native();
    c.tick();
    let file = only_file(&dir);
    assert_eq!(file.header.reason, "jank");
    assert_eq!(entries_in(&file), methods.len());
    t.to_runnable();
    assert!(t.exit(9001), "tracing is on again");
}

/// An impatient control with one ring, tracing the UI thread `a`; `b` waits in the background.
fn two_threads_one_ring(dir: &Path) -> (Control<FakeArt>, Box<FakeThread>, Box<FakeThread>) {
    let c = impatient_control(dir, 1);
    let (a, b) = (FakeThread::new(), FakeThread::new());
    c.thread_attached(a.handle(), 1, "a", true);
    c.thread_attached(b.handle(), 2, "b", false);
    c.start_tracing().unwrap();
    (c, a, b)
}

/// Late stops, the reclaim side: a thread that fell out of the N traced but did not answer in
/// time keeps its ring (and the newcomer waits) until it stops; the next tick completes the swap.
#[test]
fn a_reclaim_that_timed_out_is_completed_on_the_next_tick() {
    let (_tmp, dir) = hubble_dir();
    let (c, a, b) = two_threads_one_ring(&dir);
    assert_eq!(c.traced_threads(), vec![a.handle()]);
    a.to_runnable();
    c.thread_foreground(b.handle());
    assert!(matches!(c.rebalance(), Err(RuntimeError::StopTimeout(..))));
    assert_eq!(
        c.traced_threads(),
        vec![a.handle()],
        "a keeps its ring until it stops"
    );
    assert!(!a.exit(1), "a answers the doorbell at its next trace point");
    c.tick();
    assert_eq!(c.traced_threads(), vec![b.handle()]);
    assert!(is_tracing(&b), "the newcomer traces");
    assert!(!is_tracing(&a));
}

/// Late stops, the reclaim that is called off: the thread that did not answer in time is the
/// foreground one again by the time it stops, so it keeps its ring, and the tick restarts it
/// where it stopped (found by cargo-mutants: with `restart_stopped` a no-op every test passed,
/// and the thread stayed untraced).
#[test]
fn a_timed_out_reclaim_of_a_thread_wanted_again_restarts_it_on_the_next_tick() {
    let (_tmp, dir) = hubble_dir();
    let (c, a, b) = two_threads_one_ring(&dir);
    a.to_runnable();
    c.thread_foreground(b.handle());
    assert!(matches!(c.rebalance(), Err(RuntimeError::StopTimeout(..))));
    // Before a answers, it is the foreground thread again: b is not wanted any more.
    c.thread_foreground(a.handle());
    assert!(!a.exit(1), "a answers the doorbell at its next trace point");
    c.tick();
    assert_eq!(c.traced_threads(), vec![a.handle()]);
    assert!(
        is_tracing(&a),
        "a stayed untraced after its reclaim was called off"
    );
    assert!(a.exit(2), "a records again");
    assert!(!is_tracing(&b));
}

/// Late stops, two stops pending on one thread: a flush asked while a reclaim waits takes
/// its place (the thread's late stop then writes the flush), and a reclaim asked while a flush
/// waits does not (the flush is still written). Either way the thread's file has the flush's
/// reason once it answers.
#[test]
fn a_pending_flush_outranks_a_pending_reclaim_in_either_order() {
    for flush_first in [false, true] {
        let (_tmp, dir) = hubble_dir();
        let (c, a, b) = two_threads_one_ring(&dir);
        a.to_runnable();
        calls(&a, 3);
        let flush = |c: &Control<FakeArt>| {
            assert!(matches!(
                c.flush(a.handle(), "jank"),
                Err(RuntimeError::StopTimeout(..))
            ));
        };
        let reclaim = |c: &Control<FakeArt>| {
            c.thread_foreground(b.handle());
            assert!(matches!(c.rebalance(), Err(RuntimeError::StopTimeout(..))));
        };
        if flush_first {
            flush(&c);
            reclaim(&c);
        } else {
            reclaim(&c);
            flush(&c);
        }
        assert!(!a.exit(1), "a answers the doorbell at its next trace point");
        c.tick();
        let file = only_file(&dir);
        assert_eq!(file.header.reason, "jank", "flush first: {flush_first}");
    }
}

/// N rings, never more: two threads fall out of the N = 2 traced and two come to the foreground.
/// One of the two leaving does not answer in time and keeps its ring, so only one newcomer
/// starts now (the more recent); the other waits for the late thread's ring.
#[test]
fn a_late_reclaim_leaves_room_for_fewer_newcomers() {
    let tmp = tempfile::tempdir().unwrap();
    let c = impatient_control(&tmp.path().join("hubble"), 2);
    let ts: Vec<Box<FakeThread>> = (0..4).map(|_| FakeThread::new()).collect();
    for (i, t) in ts.iter().enumerate() {
        c.thread_attached(t.handle(), i as u32 + 1, "t", false);
    }
    c.thread_foreground(ts[0].handle());
    c.thread_foreground(ts[1].handle());
    c.start_tracing().unwrap();
    let mut want = vec![ts[0].handle(), ts[1].handle()];
    want.sort_unstable();
    assert_eq!(c.traced_threads(), want);
    ts[0].to_runnable(); // silent: its reclaim times out
    c.thread_foreground(ts[2].handle());
    c.thread_foreground(ts[3].handle());
    assert!(matches!(c.rebalance(), Err(RuntimeError::StopTimeout(..))));
    let mut want = vec![ts[0].handle(), ts[3].handle()];
    want.sort_unstable();
    assert_eq!(c.traced_threads(), want, "two rings, never three");
    assert!(!is_tracing(&ts[2]));
}

const RLIMIT_CHILD: &str = "HUBBLE_RLIMIT_CHILD";

/// A full disk without privilege: the flush runs in a child process whose RLIMIT_FSIZE (64 KiB)
/// is below the file's size, with SIGXFSZ ignored so the write fails with EFBIG, as a full
/// partition's fails with ENOSPC. The limit is per process: other tests keep writing freely.
#[test]
fn disk_full_by_rlimit_leaves_no_file_and_tracing_resumes() {
    if let Some(dir) = std::env::var_os(RLIMIT_CHILD) {
        let limit = libc::rlimit {
            rlim_cur: 64 << 10,
            rlim_max: 64 << 10,
        };
        // SAFETY: plain libc calls on this (child) process with valid arguments.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &limit), 0);
        }
        full_ring_flush_fails_with(Path::new(&dir), libc::EFBIG);
        println!("RLIMIT-CHILD-OK");
        return;
    }
    let (_tmp, dir) = hubble_dir();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "disk_full_by_rlimit_leaves_no_file_and_tracing_resumes",
            "--nocapture",
        ])
        .env(RLIMIT_CHILD, &dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("RLIMIT-CHILD-OK"),
        "child: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_file_left(&dir);
}

/// Without flushes a ring's window never advances, so dead-loader names would pile up with every
/// unload; past the bound a tick keeps only those some ring still holds, and a later flush still
/// names the kept ones without reading freed memory.
#[test]
fn dead_loader_names_are_bounded_by_what_the_rings_hold() {
    let (_tmp, dir) = hubble_dir();
    let c = control_with(&dir, |cfg| cfg.dead_names_scan_at = 64);
    let t = traced_main_thread(&c, 1);
    let kept_loader = 0x7f10_0000_0000usize;
    let kept = FakeArt::loader_methods_of(kept_loader)[5];
    t.to_runnable();
    assert!(t.entry(MODE, kept, 1));
    assert!(t.exit(2));
    t.to_native();
    let unload = |l: usize| {
        c.art().unload(l, |l| {
            c.class_loader_unloading(l);
        })
    };
    unload(kept_loader);
    // 9 more loaders, 8 methods each, none of them traced: 80 dead names > 64.
    for k in 1..10usize {
        unload(0x7f20_0000_0000 + k * 0x1000);
    }
    assert_eq!(c.dead_names(), 80);
    c.tick();
    // What is left is what the ring holds (one pointer), not 80 names.
    assert_eq!(c.dead_names(), 1);
    c.flush(t.handle(), "after").unwrap();
    let f = only_file(&dir);
    assert_eq!(f.symbols[&kept], FakeArt::name_of(kept));
}

/// The scan starts when exactly `dead_names_scan_at` names are kept, not one later, and keeps
/// what a ring holds in both encodings: a narrow entry (a loader below 4 GiB) and a wide one (the
/// pointer's slot, then a marker slot), both written after other calls, away from the ring's
/// first slots.
#[test]
fn the_dead_name_scan_starts_at_its_bound_and_keeps_narrow_and_wide_entries() {
    let (_tmp, dir) = hubble_dir();
    let c = control_with(&dir, |cfg| cfg.dead_names_scan_at = 16);
    let t = traced_main_thread(&c, 1);
    let (wide_loader, narrow_loader) = (0x7f10_0000_0000usize, 0x7000_0000usize);
    let wide = FakeArt::loader_methods_of(wide_loader)[2];
    let narrow = FakeArt::loader_methods_of(narrow_loader)[4];
    assert!(wide >> 32 != 0 && narrow >> 32 == 0);
    t.to_runnable();
    let mut ts = 1;
    for m in [0x1000, 0x1010, 0x1020, wide, 0x1030, narrow] {
        assert!(t.entry(MODE, m, ts));
        assert!(t.exit(ts + 1));
        ts += 2;
    }
    t.to_native();
    let unload = |l: usize| {
        c.art().unload(l, |l| {
            c.class_loader_unloading(l);
        })
    };
    unload(wide_loader);
    c.tick();
    assert_eq!(c.dead_names(), 8, "8 names, below the bound: no scan");
    unload(narrow_loader);
    c.tick();
    assert_eq!(
        c.dead_names(),
        2,
        "16 names: the scan keeps the two the ring holds"
    );
    c.flush(t.handle(), "after").unwrap();
    let f = only_file(&dir);
    assert_eq!(f.symbols[&wide], FakeArt::name_of(wide));
    assert_eq!(f.symbols[&narrow], FakeArt::name_of(narrow));
}

/// A control thread that ART refused to attach (`Thread::Attach` returns null while the runtime
/// shuts down, or when `Thread::Init` fails) must not trace: every call it would make into ART
/// afterwards assumes an attached thread (`ResolveMethods` enters ART with
/// `ScopedObjectAccess(Thread::Current())`, which dereferences the null Thread: a crash of the
/// app at its first flush).
#[test]
fn a_control_thread_art_refused_to_attach_traces_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let c = control(&tmp.path().join("hubble"), true, Box::new(FsStorage));
    c.art().attach_refused.store(true, Ordering::Relaxed);
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 42, "main", true);
    let (tx, rx) = std::sync::mpsc::channel();
    tx.send(hubble_runtime::Message::Rebalance).unwrap();
    tx.send(hubble_runtime::Message::Shutdown).unwrap();
    hubble_runtime::control_thread(&c, &rx);
    assert_eq!(
        c.traced_threads(),
        Vec::<usize>::new(),
        "traced without being attached"
    );
    assert!(
        !t.entry(MODE, 0x1000, 1),
        "the UI thread's block was started"
    );
}

/// `debug.hubble.tasks 1`: the control thread asks ART for task records once,
/// after it is attached and before it traces the first thread; `0`, absent or a bad value never
/// asks (the bad value is an error naming the property, and task records stay off).
#[test]
fn the_control_thread_starts_task_records_only_when_configured() {
    for (value, expected) in [
        (Some("1"), 1u64),
        (Some("0"), 0),
        (None, 0),
        (Some("yes"), 0),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let p = props(true);
        if let Some(v) = value {
            p.set(hubble_runtime::props::TASKS, v);
        }
        let cfg = config(&tmp.path().join("hubble")).with_properties(&*p);
        assert_eq!(cfg.tasks, expected == 1, "debug.hubble.tasks = {value:?}");
        let mut art = FakeArt::default();
        art.task_methods = 9;
        let c = Control::new(art, cfg, p, Box::new(FsStorage));
        let t = FakeThread::new();
        c.thread_attached(t.handle(), 42, "main", true);
        let (tx, rx) = std::sync::mpsc::channel();
        tx.send(hubble_runtime::Message::Shutdown).unwrap();
        hubble_runtime::control_thread(&c, &rx);
        assert_eq!(
            c.art().task_record_starts.load(Ordering::Relaxed),
            expected,
            "debug.hubble.tasks = {value:?}"
        );
        assert_eq!(
            c.traced_threads(),
            vec![t.handle()],
            "the UI thread is traced"
        );
    }
    assert_eq!(
        hubble_runtime::props::parse_tasks(Some("yes"))
            .unwrap_err()
            .to_string(),
        "debug.hubble.tasks = \"yes\": expected 1 (task records on) or 0 (off)"
    );
}

/// A control thread ART refused to attach never asks for task records either.
#[test]
fn a_refused_control_thread_starts_no_task_records() {
    let tmp = tempfile::tempdir().unwrap();
    let c = control_with(&tmp.path().join("hubble"), |cfg| cfg.tasks = true);
    c.art().attach_refused.store(true, Ordering::Relaxed);
    let (tx, rx) = std::sync::mpsc::channel();
    tx.send(hubble_runtime::Message::Shutdown).unwrap();
    hubble_runtime::control_thread(&c, &rx);
    assert_eq!(c.art().task_record_starts.load(Ordering::Relaxed), 0);
}

/// ART frees a detached `Thread` and may allocate the next one at the same address: a report of
/// that address with another tid is a new thread, and its files carry its own tid, not the dead
/// thread's (`lifecycle.cc` reports the threads that exist at the start and every later attach;
/// a handle can reach the registry twice).
#[test]
fn a_handle_reported_again_with_another_tid_takes_the_new_tid() {
    let (_tmp, dir) = hubble_dir();
    let c = control(&dir, true, Box::new(FsStorage));
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 41, "gone", false);
    c.thread_attached(t.handle(), 42, "main", true);
    c.start_tracing().unwrap();
    t.to_runnable();
    calls(&t, 3);
    t.to_native();
    c.flush(t.handle(), "test").unwrap();
    let file = only_file(&dir);
    assert_eq!(
        (file.header.tid, file.header.thread_name.as_str()),
        (42, "main")
    );
}

// `debug.hubble.threads all` switches the control plane to many-thread mode: the
// pool of `debug.hubble.budget_mb`, every thread traced. A bad configuration (a budget too small
// for the active blocks, a budget or selector that does not parse) is an error naming what is
// wrong and what tracing keeps, and leaves the settings in force as they were, whichever mode
// they are (the first session's `with_properties` parsed "all" as a number, failed, and said
// nothing; the next one refused `all` aloud).
/// `debug.hubble.ring_mb` and `debug.hubble.retention` in MiB: 4 MiB rings, 5 files and 3 MiB
/// kept.
#[test]
fn ring_size_and_retention_properties_are_mebibytes() {
    use hubble_runtime::props::{RETENTION, RING_MB};
    use hubble_testkit::runtime::FakeProperties;
    let p = FakeProperties::default();
    p.set(RING_MB, "4");
    p.set(RETENTION, "5,3");
    let c = Config::new("p", "p", std::path::PathBuf::from("/tmp")).with_properties(&p);
    assert_eq!(c.ring_bytes, 4 << 20);
    assert_eq!((c.max_files, c.max_bytes), (5, 3 << 20));
}

#[test]
fn threads_all_switches_to_the_pool_and_a_bad_configuration_keeps_the_previous_mode() {
    use hubble_format::pool::{Geometry, BLOCK_BYTES};
    use hubble_runtime::props::{ConfigError, ThreadSelector, ACTIVE_BLOCKS, BUDGET_MB, THREADS};
    use hubble_testkit::runtime::FakeProperties;
    let p = FakeProperties::default();
    let base = Config::new("p", "p", std::path::PathBuf::from("/tmp"));
    let c = base.clone().with_properties(&p);
    assert_eq!((c.threads, c.pool), (2, None));
    p.set(THREADS, "all");
    let c = base.clone().with_properties(&p);
    assert_eq!(
        c.pool,
        Some(Geometry {
            blocks: (64 << 20) / BLOCK_BYTES,
            block_slots: BLOCK_BYTES / 8,
            active: ACTIVE_BLOCKS,
        })
    );
    assert_eq!(c.selector(), ThreadSelector::All { budget: 64 << 20 });
    // From rings: a budget too small for A = 128 blocks keeps the rings.
    p.set(BUDGET_MB, "2");
    let mut rings = base.clone();
    rings.threads = 3;
    let e = rings.apply_thread_selector(&p).expect("an error");
    assert!(matches!(e, ConfigError::BudgetTooSmall { .. }), "{e}");
    assert!(e.to_string().contains("debug.hubble.budget_mb = 2"), "{e}");
    assert_eq!((rings.threads, rings.pool), (3, None));
    assert!(rings.describe_mode().contains("3 most recent threads"));
    // From the pool: a too-small budget, a budget that is not a number, an unknown selector all
    // keep the pool of 32 MiB in force.
    p.set(BUDGET_MB, "32");
    let mut pooled = base.clone();
    assert_eq!(pooled.apply_thread_selector(&p), None);
    let before = pooled.clone();
    for (threads, budget, what) in [
        ("all", "4", "need at least"),
        ("all", "lots", "whole number"),
        ("every", "32", "`all`"),
        ("0", "32", "`all`"),
    ] {
        p.set(THREADS, threads);
        p.set(BUDGET_MB, budget);
        let e = pooled.apply_thread_selector(&p).expect("an error");
        assert!(e.to_string().contains(what), "{e}");
        assert_eq!(pooled.pool, before.pool);
        assert_eq!(pooled.selector(), ThreadSelector::All { budget: 32 << 20 });
        assert!(pooled.describe_mode().contains("2048 blocks of 16 KiB"));
    }
    // A count goes back to rings.
    p.set(THREADS, "4");
    assert_eq!(pooled.apply_thread_selector(&p), None);
    assert_eq!((pooled.threads, pooled.pool), (4, None));
}

// A control plane built from `all` traces every attached thread (no foreground needed); one
// built from a bad configuration traces as before: the N most recent, in rings.
#[test]
fn a_control_plane_in_pool_mode_traces_every_thread_and_a_bad_one_keeps_rings() {
    use hubble_runtime::props::{BUDGET_MB, THREADS};
    use hubble_testkit::runtime::FakeProperties;
    let tmp = tempfile::tempdir().unwrap();
    let threads: Vec<Box<FakeThread>> = (0..5).map(|_| FakeThread::new()).collect();
    for (budget, pooled) in [("8", true), ("1", false)] {
        let p = FakeProperties::default();
        p.set(THREADS, "all");
        p.set(BUDGET_MB, budget);
        let cfg = config(tmp.path()).with_properties(&p);
        let c = Control::new(FakeArt::default(), cfg, props(true), Box::new(FsStorage));
        assert_eq!(c.pool().is_some(), pooled);
        if let Some(pool) = c.pool() {
            // Compiled code finds ART's block-end function in the pool header.
            let header = pool.copy();
            assert_eq!(
                header[hubble_format::pool::P_TAKE],
                hubble_testkit::runtime::FAKE_POOL_TAKE
            );
        }
        for (i, t) in threads.iter().enumerate() {
            c.thread_attached(t.handle(), 10 + i as u32, "t", i == 0);
        }
        c.start_tracing().unwrap();
        let want = if pooled { 5 } else { 1 };
        assert_eq!(c.traced_threads().len(), want, "budget {budget}");
        c.stop_tracing().unwrap();
        assert!(c.traced_threads().is_empty());
        for t in &threads {
            assert!(!is_tracing(t), "tracing off");
        }
    }
}

// On an ART whose ISA has no block-end function (one the series has no trace points for:
// `PoolTakeEntry` is 0),
// compiled code and nterp have no pool path, so a thread given pool words would run its ring
// slow path on a pool block. `debug.hubble.threads all` must then keep the rings, aloud.
#[test]
fn many_thread_mode_is_refused_on_an_art_without_the_pool_path() {
    use hubble_runtime::props::THREADS;
    use hubble_testkit::runtime::FakeProperties;
    let tmp = tempfile::tempdir().unwrap();
    let p = FakeProperties::default();
    p.set(THREADS, "all");
    let cfg = config(tmp.path()).with_properties(&p);
    assert!(cfg.pool.is_some(), "the configuration asks for the pool");
    let mut art = FakeArt::default();
    art.without_pool_path = true;
    let c = Control::new(art, cfg, props(true), Box::new(FsStorage));
    assert!(c.pool().is_none());
    let threads: Vec<Box<FakeThread>> = (0..3).map(|_| FakeThread::new()).collect();
    for (i, t) in threads.iter().enumerate() {
        c.thread_attached(t.handle(), 10 + i as u32, "t", i == 0);
    }
    c.start_tracing().unwrap();
    assert_eq!(
        c.traced_threads().len(),
        1,
        "rings: the most recent UI thread"
    );
    c.stop_tracing().unwrap();
}

// ART through the cxx bridge: the host's C++ double has no block-end function (`PoolTakeEntry`
// is 0), so `CxxArt` has no pool path and `all` keeps the rings. (On arm64, arm, x86_64 and x86
// `PoolTakeEntry` is `hubble_pool_take`'s address: the proofs in
// proving/hotpath-emu/tests/pool_*.rs, proving/hotpath-x86/tests/pool_x86*.rs and
// the glue test `pool_take_claims_and_seals_blocks_of_the_thread_gs_points_at`.)
#[test]
fn cxx_art_without_a_block_end_function_keeps_the_rings() {
    use hubble_runtime::props::THREADS;
    use hubble_runtime::{Art, CxxArt};
    use hubble_testkit::runtime::FakeProperties;
    assert_eq!(CxxArt.pool_take_entry(), 0);
    assert!(!CxxArt.has_pool_path());
    let tmp = tempfile::tempdir().unwrap();
    let p = FakeProperties::default();
    p.set(THREADS, "all");
    let cfg = config(tmp.path()).with_properties(&p);
    assert!(cfg.pool.is_some(), "the configuration asks for the pool");
    let c = Control::new(CxxArt, cfg, props(true), Box::new(FsStorage));
    assert!(c.pool().is_none());
}

/// Foreground recency with one traced thread. ART may report a thread again (attaches are
/// idempotent): the UI thread reported once more does not jump ahead of the thread that came
/// to the foreground after it; enabling a thread by name or API counts as coming to the
/// foreground now, so it is the one traced.
#[test]
fn recency_orders_the_traced_threads() {
    let tmp = tempfile::tempdir().unwrap();
    let c = control(&tmp.path().join("hubble"), true, Box::new(FsStorage));
    c.set_thread_count(1).unwrap();
    let ts: Vec<Box<FakeThread>> = (0..3).map(|_| FakeThread::new()).collect();
    c.thread_attached(ts[0].handle(), 1, "main", true);
    c.thread_attached(ts[1].handle(), 2, "b", false);
    c.thread_attached(ts[2].handle(), 3, "c", false);
    c.start_tracing().unwrap();
    assert_eq!(c.traced_threads(), [ts[0].handle()]);
    c.thread_foreground(ts[1].handle());
    c.rebalance().unwrap();
    assert_eq!(c.traced_threads(), [ts[1].handle()]);
    // The UI thread reported again: still older than b.
    c.thread_attached(ts[0].handle(), 1, "main", true);
    c.rebalance().unwrap();
    assert_eq!(c.traced_threads(), [ts[1].handle()]);
    // c enabled: the newest.
    c.set_thread_enabled(ts[2].handle(), true).unwrap();
    assert_eq!(c.traced_threads(), [ts[2].handle()]);
    // Enabling is a moment of its own, after the last foreground report, even when the thread
    // enabled sorts below the one reported (equal moments would go to the higher handle).
    let (low, high) = if ts[1].handle() < ts[2].handle() {
        (ts[1].handle(), ts[2].handle())
    } else {
        (ts[2].handle(), ts[1].handle())
    };
    c.thread_foreground(high);
    c.rebalance().unwrap();
    assert_eq!(c.traced_threads(), [high]);
    c.set_thread_enabled(low, true).unwrap();
    assert_eq!(c.traced_threads(), [low]);
    c.stop_tracing().unwrap();
}
