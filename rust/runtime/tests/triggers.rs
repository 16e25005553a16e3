//! Duration triggers (`debug.hubble.triggers`): the control thread's tick reads the
//! traced rings behind the threads and flushes a thread whose call of a watched method ran
//! longer than its threshold. Fake ART with a manual clock (1 GHz): the tests choose every
//! record's timestamp and the time of every tick, and call `Control::tick` themselves.
#![cfg(not(loom))]

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use hubble_format::{Mode, TraceFile};
use hubble_runtime::block::ThreadBlock;
use hubble_runtime::flush::FsStorage;
use hubble_runtime::props::{CONSENT, TRIGGERS, TRIGGER_INTERVAL};
use hubble_runtime::{Config, Control};
use hubble_testkit::runtime::{FakeArt, FakeProperties, FakeThread};

mod trigger_methods;
use trigger_methods::{one_firing, BIND, DO_FRAME, JANK, MS, OTHER, T0};

const MODE: Mode = Mode::Bits64;
/// A fake class loader the address tests unload, and its first method's address, which the
/// loader that takes its memory gives to doFrame.
const LOADER: usize = 0x5000_0000;
const REUSED: u64 = LOADER as u64 + 8;

struct Rig {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    props: Arc<FakeProperties>,
    c: Control<FakeArt>,
    t: Box<FakeThread>,
}

fn rig_with(triggers: &str, ring_bytes: usize) -> Rig {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hubble");
    let art = trigger_methods::art();
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    props.set(TRIGGERS, triggers);
    let mut config = Config::new("com.example", "com.example", dir.clone());
    config.ring_bytes = ring_bytes;
    config.mode = MODE;
    let c = Control::new(art, config, props.clone(), Box::new(FsStorage));
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 42, "main", true);
    c.start_tracing().unwrap();
    let r = Rig {
        _tmp: tmp,
        dir,
        props,
        c,
        t,
    };
    r.tick_at(0);
    r
}

fn rig(triggers: &str) -> Rig {
    rig_with(triggers, 64 << 10)
}

impl Rig {
    fn ts(ms: u64) -> u32 {
        (T0 + ms * MS) as u32
    }
    fn entry(&self, method: u64, ms: u64) {
        assert!(self.t.entry(MODE, method, Self::ts(ms)));
    }
    fn exit(&self, ms: u64) {
        assert!(self.t.exit(Self::ts(ms)));
    }
    /// A call of `method` from `from` to `to` ms.
    fn call(&self, method: u64, from: u64, to: u64) {
        self.entry(method, from);
        self.exit(to);
    }
    /// The control thread's tick at time `ms`. The thread is out of runnable meanwhile (as if
    /// in native code), so a flush stops it at once (forced) and nothing waits.
    fn tick_at(&self, ms: u64) {
        self.c.art().set_timer(T0 + ms * MS);
        self.t.to_native();
        self.c.tick();
        self.t.to_runnable();
    }
    fn files(&self) -> Vec<TraceFile> {
        files_in(&self.dir)
    }
    fn reasons(&self) -> Vec<String> {
        self.files().into_iter().map(|f| f.header.reason).collect()
    }
    fn block(&self) -> &ThreadBlock {
        &self.t.block
    }
    /// `ClassLoaderUnloadingWithTable` for the fake loader [`LOADER`], then a new loader at its
    /// addresses whose first method ([`REUSED`]) is doFrame.
    fn unload_and_reuse_as_do_frame(&self) {
        self.c
            .art()
            .unload(LOADER, |l| assert_eq!(self.c.class_loader_unloading(l), 8));
        self.c.art().reuse_loader(
            LOADER,
            &[(REUSED, "void android.view.Choreographer.doFrame(long, int)")],
        );
    }
    /// A second traced thread, 43, with 80 records of an unwatched method, and the tick at
    /// 100 ms that starts its reader.
    fn second_thread_read_from_100ms(&self) -> Box<FakeThread> {
        let u = FakeThread::new();
        self.c.thread_attached(u.handle(), 43, "u", false);
        self.c.thread_foreground(u.handle());
        self.c.rebalance().unwrap();
        assert_eq!(self.c.traced_threads().len(), 2);
        for i in 0..40 {
            assert!(u.entry(MODE, OTHER, Self::ts(10 + i)));
            assert!(u.exit(Self::ts(10 + i)));
        }
        u.to_native();
        self.tick_at(100);
        u
    }
    /// A 20 ms doFrame on `u` from 190 to 210 ms, across the tick at 200, then ticks to 500:
    /// nothing may fire.
    fn a_short_frame_on(&self, u: &FakeThread) {
        assert!(u.entry(MODE, DO_FRAME, Self::ts(190)));
        self.tick_at(200);
        assert!(u.exit(Self::ts(210)));
        for ms in [300, 400, 500] {
            self.tick_at(ms);
        }
        let fired = self.c.triggers().fired();
        assert!(fired.is_empty(), "{fired:?}");
        assert!(self.files().is_empty());
    }
}

fn files_in(dir: &Path) -> Vec<TraceFile> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = rd.map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths.iter().map(|p| TraceFile::read(p).unwrap()).collect()
}

#[test]
fn a_call_longer_than_the_threshold_flushes_exactly_one_file_with_the_reason() {
    let r = rig(JANK);
    assert_eq!(r.c.triggers().active().len(), 1);
    r.entry(OTHER, 5);
    r.call(DO_FRAME, 10, 60); // 50 ms > 32 ms
    r.exit(61);
    r.tick_at(100);
    r.tick_at(200);
    assert_eq!(r.reasons(), vec!["jank"]);
    let fired = r.c.triggers().fired();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0].reason, "jank");
    assert_eq!(fired[0].method, "android.view.Choreographer.doFrame");
    assert_eq!(fired[0].thread, r.t.handle());
    assert!(fired[0].exited);
    assert_eq!(fired[0].duration, Duration::from_millis(50));
    assert!(fired[0].path.is_some());
    // The file holds the call.
    let file = &r.files()[0];
    assert_eq!(file.header.tid, 42);
    assert!(file.symbols.values().any(|s| s.contains("doFrame")));
    // Nothing more fires for it.
    r.tick_at(300);
    r.tick_at(400);
    assert_eq!(r.files().len(), 1);
}

#[test]
fn a_call_below_the_threshold_flushes_nothing() {
    let r = rig(JANK);
    r.call(DO_FRAME, 10, 40); // 30 ms
    r.call(DO_FRAME, 50, 82); // 32 ms: not longer than the threshold
    r.call(OTHER, 83, 99); // not watched
    for ms in [100, 200, 300, 400] {
        r.tick_at(ms);
    }
    assert!(r.files().is_empty());
    assert!(r.c.triggers().fired().is_empty());
}

#[test]
fn recursive_calls_are_timed_each_by_its_own_exit() {
    // The outer call is long, the inner one short: one firing, for the outer call's 70 ms.
    let r = rig(JANK);
    r.entry(DO_FRAME, 10);
    r.call(DO_FRAME, 20, 30);
    r.call(OTHER, 31, 79);
    r.exit(80);
    r.tick_at(100);
    r.tick_at(200);
    let fired = r.c.triggers().fired();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0].duration, Duration::from_millis(70));
    assert_eq!(r.reasons(), vec!["jank"]);

    // Both long: two firings of one reason in one tick, the second rate-limited.
    let r = rig(JANK);
    r.entry(DO_FRAME, 10);
    r.call(DO_FRAME, 20, 70); // 50 ms
    r.exit(90); // 80 ms
    r.tick_at(100);
    r.tick_at(200);
    let fired = r.c.triggers().fired();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0].duration, Duration::from_millis(50));
    assert_eq!(r.c.triggers().suppressed.load(Ordering::Relaxed), 1);
    assert_eq!(r.files().len(), 1);
}

#[test]
fn nested_triggers_fire_each_with_its_reason() {
    let r = rig(&format!(
        "{JANK}; android.app.ActivityThread.handleBindApplication>50ms=slow-start"
    ));
    r.entry(BIND, 5); // two-slot entry
    r.call(DO_FRAME, 10, 20); // 10 ms: no jank
    r.call(DO_FRAME, 21, 61); // 40 ms: jank
    r.exit(95); // bind: 90 ms: slow start
    r.tick_at(100);
    r.tick_at(200);
    let mut reasons = r.reasons();
    reasons.sort();
    assert_eq!(reasons, vec!["jank", "slow-start"]);
    let fired = r.c.triggers().fired();
    assert_eq!(fired[0].reason, "jank");
    assert_eq!(fired[0].duration, Duration::from_millis(40));
    assert_eq!(fired[1].reason, "slow-start");
    assert_eq!(fired[1].duration, Duration::from_millis(90));
}

#[test]
fn a_call_still_open_past_its_threshold_fires_before_it_returns() {
    let r = rig(JANK);
    r.entry(DO_FRAME, 10);
    r.tick_at(100);
    // The entry is read now; the call was still open when the cursor was read at 100 ms.
    r.tick_at(200);
    let fired = r.c.triggers().fired();
    one_firing(&fired, false, 90);
    assert_eq!(r.reasons(), vec!["jank"]);
    r.exit(250);
    r.tick_at(300);
    r.tick_at(400);
    assert_eq!(r.files().len(), 1);
}

#[test]
fn the_rate_limit_is_per_reason() {
    let r = rig(&format!("{JANK}; com.example.Feed.bind>20ms=feed"));
    r.props.set(TRIGGER_INTERVAL, "1s");
    r.call(DO_FRAME, 10, 60);
    r.tick_at(100);
    r.tick_at(200);
    assert_eq!(r.reasons(), vec!["jank"]);
    // Another jank within the second: dropped; another reason: flushed.
    r.call(DO_FRAME, 210, 260);
    r.call(OTHER, 270, 295);
    r.tick_at(300);
    r.tick_at(400);
    assert_eq!(r.files().len(), 2);
    assert_eq!(r.c.triggers().suppressed.load(Ordering::Relaxed), 1);
    // A second later: flushed again.
    r.call(DO_FRAME, 1210, 1260);
    r.tick_at(1300);
    r.tick_at(1400);
    let mut reasons = r.reasons();
    reasons.sort();
    assert_eq!(reasons, vec!["feed", "jank", "jank"]);
}

#[test]
fn a_ring_that_wraps_between_ticks_is_not_misread() {
    // 4 KiB: 512 slots.
    let r = rig_with("android.view.Choreographer.doFrame>300ms=jank", 4096);
    r.entry(DO_FRAME, 10);
    r.tick_at(100);
    r.tick_at(200); // the open doFrame is on the detector's stack now
    r.exit(210); // a 200 ms frame: no jank
    r.entry(OTHER, 220);
    for i in 0..300 {
        r.call(OTHER, 400 + i, 400 + i); // 600 slots: the ring wraps over everything above
    }
    // Read as if nothing had been lost, this exit would close the doFrame after 740 ms.
    r.exit(750);
    r.tick_at(800);
    r.tick_at(900);
    r.tick_at(1000);
    assert!(r.files().is_empty(), "{:?}", r.c.triggers().fired());
    // And the detector is back on its feet.
    r.call(DO_FRAME, 1010, 1400);
    r.tick_at(1500);
    r.tick_at(1600);
    assert_eq!(r.reasons(), vec!["jank"]);
    assert_eq!(
        r.c.triggers().fired()[0].duration,
        Duration::from_millis(390)
    );
}

#[test]
fn a_call_that_began_just_after_a_lap_is_still_timed() {
    // The thread fills a 512-slot ring twice over between two ticks, then enters a long
    // frame: the detector has lost its place, but the newest half ring still holds the
    // frame's entry.
    let r = rig_with(JANK, 4096);
    r.tick_at(100);
    for i in 0..500 {
        let ts = (T0 + 110 * MS + i * 160_000) as u32;
        assert!(r.t.entry(MODE, OTHER, ts));
        assert!(r.t.exit(ts));
    }
    r.entry(DO_FRAME, 195);
    r.tick_at(200); // the lap is found here
    r.tick_at(300); // the newest half ring is read here: the frame has run 5 ms by 200
    r.tick_at(400); // and 105 ms by 300
    let fired = r.c.triggers().fired();
    one_firing(&fired, false, 105);
    assert_eq!(r.reasons(), vec!["jank"]);
}

#[test]
fn a_call_that_began_before_the_detector_looked_is_timed() {
    // The detector starts reading with the newest half ring already written: a frame that
    // began before the first tick (here: before the trigger was set) is still timed.
    let r = rig("");
    r.call(OTHER, 5, 6);
    r.entry(DO_FRAME, 10);
    r.call(OTHER, 20, 30);
    r.tick_at(40);
    r.props.set(TRIGGERS, JANK);
    r.tick_at(100); // the reader starts here
    r.exit(150);
    r.tick_at(200); // the half ring before the cursor of 100 ms is read here: 90 ms open
    let fired = r.c.triggers().fired();
    one_firing(&fired, false, 90);
    assert_eq!(r.reasons(), vec!["jank"]);
}

#[test]
fn a_bad_spec_keeps_the_triggers_in_force() {
    let r = rig(JANK);
    r.props
        .set(TRIGGERS, "android.view.Choreographer.doFrame>32=jank");
    r.tick_at(50);
    let active = r.c.triggers().active();
    assert_eq!(active.len(), 1);
    assert_eq!(active[0].threshold, Duration::from_millis(32));
    r.call(DO_FRAME, 60, 100);
    r.tick_at(150);
    r.tick_at(250);
    assert_eq!(r.reasons(), vec!["jank"]);
    // A good one replaces them.
    r.props
        .set(TRIGGERS, "android.view.Choreographer.doFrame>1s=jank");
    r.tick_at(300);
    assert_eq!(r.c.triggers().active()[0].threshold, Duration::from_secs(1));
}

#[test]
fn tracing_off_or_a_thread_gone_between_ticks_fires_nothing() {
    let r = rig(JANK);
    r.entry(DO_FRAME, 10);
    r.tick_at(20);
    // Tracing off and on again: what ran in between is lost, so the exit below cannot be
    // matched with the entry above.
    r.t.to_native();
    r.c.stop_tracing().unwrap();
    r.tick_at(30);
    r.t.to_native();
    r.c.start_tracing().unwrap();
    r.t.to_runnable();
    r.exit(100);
    for ms in [200, 300, 400] {
        r.tick_at(ms);
    }
    assert!(r.files().is_empty(), "{:?}", r.c.triggers().fired());
    // Still watching.
    r.call(DO_FRAME, 410, 460);
    r.tick_at(500);
    r.tick_at(600);
    assert_eq!(r.reasons(), vec!["jank"]);

    // The thread detaches (its ring is reclaimed) with a long call in its ring.
    let r = rig(JANK);
    r.call(DO_FRAME, 10, 60);
    r.tick_at(100);
    r.t.to_native();
    r.c.thread_detached(r.t.handle());
    r.tick_at(200);
    r.tick_at(300);
    assert!(r.files().is_empty());
}

#[test]
fn the_detector_never_writes_to_the_traced_thread() {
    let r = rig(JANK);
    r.call(DO_FRAME, 10, 20);
    r.entry(BIND, 30);
    let snapshot = |r: &Rig| {
        let b = r.block();
        let (begin, end) = (
            b.begin.load(Ordering::Relaxed),
            b.end.load(Ordering::Relaxed),
        );
        let words: Vec<usize> = [&b.cursor, &b.limit, &b.stop, &b.begin, &b.end]
            .iter()
            .map(|w| w.load(Ordering::Relaxed))
            .collect();
        // SAFETY: [begin, end) is the thread's live ring (tracing is on, nothing reclaims it).
        let ring = unsafe { std::slice::from_raw_parts(begin as *const u8, end - begin) };
        (words, ring.to_vec())
    };
    let before = snapshot(&r);
    for ms in [100, 200, 300] {
        r.c.art().set_timer(T0 + ms * MS);
        r.c.tick(); // runnable: nothing may stop it either
    }
    assert_eq!(snapshot(&r), before);
    assert!(r.files().is_empty());
}

#[test]
fn a_flush_between_ticks_forgets_the_calls_in_progress() {
    // What the thread ran while it was stopped is not in the ring: after the restart's start
    // record, an exit cannot be paired with an entry from before it.
    let r = rig("android.view.Choreographer.doFrame>300ms=jank");
    r.entry(DO_FRAME, 10);
    r.tick_at(100);
    r.c.art().set_timer(T0 + 150 * MS);
    r.t.to_native();
    r.c.flush(r.t.handle(), "manual").unwrap();
    r.t.to_runnable();
    r.exit(400);
    r.tick_at(500);
    r.tick_at(600);
    r.tick_at(700);
    assert_eq!(r.reasons(), vec!["manual"], "{:?}", r.c.triggers().fired());
}

/// A class loader is unloaded and a new class's method lands at one of its `ArtMethod*`
/// addresses (ART reuses the memory). The tick whose stretch began before the unload names the
/// old method's records by the dead loader's name; what it learns there must not stick to the
/// pointer: a later call of the new method, in a stretch that began after the unload, is timed
/// as the method it is. (A tick reads the records up to the cursor the tick before it saw: the
/// module's one-tick lag.)
#[test]
fn a_reused_method_address_is_classified_by_its_new_method() {
    let r = rig(JANK);
    // The old method at that address, not watched, then the unload and the new method.
    r.call(REUSED, 10, 60);
    r.c.art().set_timer(T0 + 65 * MS);
    r.unload_and_reuse_as_do_frame();
    r.tick_at(70);
    // Reads 10..60, a stretch that began before the unload: the old method, nothing fires.
    r.tick_at(80);
    assert_eq!(r.reasons(), Vec::<String>::new());
    // The new method, 50 ms, read by the tick at 170 (a stretch that began at 80).
    r.call(REUSED, 100, 150);
    r.tick_at(160);
    r.tick_at(170);
    assert_eq!(r.reasons(), vec!["jank"], "{:?}", r.c.triggers().fired());
}

/// Both calls in one stretch that began before the unload: each record is classified by when
/// it was written, the old method's 80 ms call (before the unload) as the dead loader's
/// unwatched method, the new method's 50 ms doFrame (after it) as doFrame, which fires. By the
/// stretch's epoch both were the old method and nothing fired; by the live name both were
/// doFrame and the 80 ms call fired.
#[test]
fn one_stretch_holding_a_reused_address_before_and_after_the_unload_times_each_call_as_its_method()
{
    let r = rig(JANK);
    r.call(REUSED, 10, 90);
    r.c.art().set_timer(T0 + 95 * MS);
    r.unload_and_reuse_as_do_frame();
    r.call(REUSED, 100, 150);
    // The first tick after 0 only sees the cursor; the next reads 10..150 in one stretch.
    r.tick_at(160);
    r.tick_at(170);
    assert_eq!(r.reasons(), vec!["jank"]);
    one_firing(&r.c.triggers().fired(), true, 50);
}

/// The same with the cache's epoch check alone: the address was classified while the old
/// method was live, before the unload, so only the epoch's change can make the detector ask
/// again.
#[test]
fn an_unload_between_ticks_makes_the_detector_ask_again() {
    let r = rig(JANK);
    r.call(REUSED, 10, 60);
    r.tick_at(70);
    r.tick_at(80); // reads 10..60: classified as the old method
    r.unload_and_reuse_as_do_frame();
    r.tick_at(90);
    r.call(REUSED, 100, 150);
    r.tick_at(160);
    r.tick_at(170);
    assert_eq!(r.reasons(), vec!["jank"], "{:?}", r.c.triggers().fired());
}

/// The open-call check is per trigger: a call of the second trigger's method, still open,
/// fires that trigger (its own bit, its own threshold).
#[test]
fn an_open_call_fires_the_trigger_that_watches_it() {
    let r = rig(&format!(
        "{JANK}; android.app.ActivityThread.handleBindApplication>50ms=slow-start"
    ));
    r.entry(BIND, 10);
    r.tick_at(100);
    r.tick_at(200);
    let fired = r.c.triggers().fired();
    one_firing(&fired, false, 90);
    assert_eq!(fired[0].reason, "slow-start");
}

/// An open call that has run exactly its threshold when the cursor is read has not passed it:
/// it fires when it returns a millisecond later, as a call that exited.
#[test]
fn an_open_call_at_exactly_its_threshold_waits() {
    let r = rig(JANK);
    r.entry(DO_FRAME, 68);
    r.tick_at(100); // 32 ms so far
    r.exit(101);
    r.tick_at(200);
    r.tick_at(300);
    let fired = r.c.triggers().fired();
    one_firing(&fired, true, 33);
}

/// A call still open across several ticks fires its trigger once: rate-limited (another jank
/// flushed within the interval), it is counted as suppressed once, not at every tick.
#[test]
fn an_open_call_is_suppressed_once() {
    let r = rig(JANK);
    r.props.set(TRIGGER_INTERVAL, "10s");
    r.call(DO_FRAME, 10, 60);
    r.tick_at(100);
    r.tick_at(200);
    assert_eq!(r.reasons(), vec!["jank"]);
    r.entry(DO_FRAME, 300);
    for ms in [400, 500, 600, 700] {
        r.tick_at(ms);
    }
    assert_eq!(r.c.triggers().suppressed.load(Ordering::Relaxed), 1);
    assert_eq!(r.files().len(), 1);
}

/// Thresholds are converted at the timer's own frequency: on a 24 MHz counter (the arm64
/// generic timer of many SoCs) a 31 ms call stays below 32 ms and a 40 ms call passes it.
#[test]
fn thresholds_are_counted_in_the_timers_ticks() {
    const HZ: u64 = 24_000_000;
    let r = rig(JANK);
    r.c.art().set_timer_hz(HZ);
    let at = |ms: u64| T0 + ms * HZ / 1000;
    let tick = |ms: u64| {
        r.c.art().set_timer(at(ms));
        r.t.to_native();
        r.c.tick();
        r.t.to_runnable();
    };
    assert!(r.t.entry(MODE, DO_FRAME, at(10) as u32));
    assert!(r.t.exit(at(41) as u32));
    assert!(r.t.entry(MODE, DO_FRAME, at(50) as u32));
    assert!(r.t.exit(at(90) as u32));
    tick(100);
    tick(200);
    let fired = r.c.triggers().fired();
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert_eq!(fired[0].duration, Duration::from_millis(40));
}

/// A thread moved to another ring of the same size between two ticks (both traced threads
/// disabled, their rings spare, then this one enabled again: it takes the other's ring). The
/// detector reads the new ring afresh. Kept reading at the old ring's place (slot 81, above
/// the new cursor), it would take the new ring's first records for the old ring's backfill,
/// dated back from a reference older than them (2^32 ticks off): a 20 ms call would look open
/// for seconds and fire.
#[test]
fn a_thread_moved_to_another_ring_is_read_afresh() {
    let r = rig(JANK);
    let u = r.second_thread_read_from_100ms();
    let old = u.block.begin.load(Ordering::Relaxed);
    r.t.to_native();
    r.c.set_thread_enabled(u.handle(), false).unwrap();
    r.c.set_thread_enabled(r.t.handle(), false).unwrap();
    r.c.set_thread_enabled(u.handle(), true).unwrap();
    assert_ne!(u.block.begin.load(Ordering::Relaxed), old, "another ring");
    r.a_short_frame_on(&u);
}

/// The same with the same ring given back: disabled and enabled again between two ticks, the
/// thread gets its own (cleared) ring back at the same address, restarted from slot 0.
#[test]
fn a_thread_restarted_in_its_own_ring_is_read_afresh() {
    let r = rig(JANK);
    let u = r.second_thread_read_from_100ms();
    let old = u.block.begin.load(Ordering::Relaxed);
    r.c.set_thread_enabled(u.handle(), false).unwrap();
    r.c.set_thread_enabled(u.handle(), true).unwrap();
    assert_eq!(u.block.begin.load(Ordering::Relaxed), old, "the same ring");
    r.a_short_frame_on(&u);
}

/// Reading forward keeps a call open across ticks however much runs inside it: a 4 KiB ring
/// (512 slots), a frame whose entry is overwritten long before it passes its threshold (150
/// slots of inner calls per tick, five ticks). A reader that lost its place at every tick
/// would only see the newest half ring and never the frame's entry.
#[test]
fn a_long_call_with_more_than_half_a_ring_inside_is_timed() {
    let r = rig_with("android.view.Choreographer.doFrame>300ms=jank", 4096);
    r.entry(DO_FRAME, 5);
    for k in 1..=5u64 {
        for i in 0..75 {
            r.call(OTHER, k * 100 - 50 + i / 8, k * 100 - 50 + i / 8);
        }
        r.tick_at(k * 100);
    }
    // Still open when the cursor was read at 400 ms: 395 ms so far.
    let fired = r.c.triggers().fired();
    one_firing(&fired, false, 395);
}

/// The detector's stack holds open calls of watched methods only, at most `MAX_OPEN`: deep
/// unwatched nesting takes no room from a watched call inside it, and a watched call below
/// `MAX_OPEN` open watched calls is not timed (bounded memory per thread, documented).
#[test]
fn only_watched_calls_take_room_on_the_detectors_stack() {
    use hubble_runtime::triggers::MAX_OPEN;
    let n = MAX_OPEN as u64;
    // A 40 ms frame inside `MAX_OPEN` open calls of OTHER, and the ticks that read it.
    let frame_inside_open_calls = |r: &Rig| {
        for i in 0..n {
            r.entry(OTHER, 10 + i / 16);
        }
        r.call(DO_FRAME, 20, 60);
        for _ in 0..n {
            r.exit(61);
        }
        r.tick_at(100);
        r.tick_at(200);
    };
    // Unwatched nesting, then the frame inside it: timed.
    let r = rig(JANK);
    frame_inside_open_calls(&r);
    assert_eq!(r.reasons(), vec!["jank"]);
    // MAX_OPEN open watched calls (never long enough), then the frame: beyond the bound.
    let r = rig(&format!("{JANK}; com.example.Feed.bind>10s=feed"));
    frame_inside_open_calls(&r);
    assert!(
        r.c.triggers().fired().is_empty(),
        "{:?}",
        r.c.triggers().fired()
    );
}

/// A backfill dated back from a timer still below 2^32 (the counter started less than 2^32
/// ticks ago: 4.3 s at 1 GHz). A record whose low half is above the reference's cannot be
/// earlier than it (a stale or torn slot): it and everything before it are dropped, not dated
/// at 0. Kept, this frame entry would make a one-second frame of a 10 ms one.
#[test]
fn a_backfill_record_that_cannot_be_dated_is_dropped_with_what_precedes_it() {
    const S: u64 = 1_000_000_000;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hubble");
    let art = FakeArt::default();
    art.names.lock().unwrap().insert(
        DO_FRAME,
        "void android.view.Choreographer.doFrame(long, int)".into(),
    );
    art.set_timer(S);
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    props.set(TRIGGERS, JANK);
    let mut config = Config::new("com.example", "com.example", dir.clone());
    config.ring_bytes = 64 << 10;
    config.mode = MODE;
    let c = Control::new(art, config, props, Box::new(FsStorage));
    let t = FakeThread::new();
    c.thread_attached(t.handle(), 42, "main", true);
    c.start_tracing().unwrap();
    assert!(t.entry(MODE, DO_FRAME, (3 * S) as u32));
    assert!(t.exit((S + 10 * MS) as u32));
    t.to_native();
    for at in [S + 50 * MS, S + 100 * MS, S + 200 * MS] {
        c.art().set_timer(at);
        c.tick();
    }
    assert!(
        c.triggers().fired().is_empty(),
        "{:?}",
        c.triggers().fired()
    );
    assert!(files_in(&dir).is_empty());
}
