//! Timestamps across idle gaps of 2^32 ticks and more: a traced thread that
//! writes nothing for ten minutes or hours (a UI thread in `nativePollOnce`, a thread blocked on
//! a monitor until an ANR) still gets every record's exact full counter value from its file.
//! Records keep 32 bits of the counter; at 1 GHz (Armv8.6's frequency) 2^32 ticks are 4.3 s,
//! at 24.576 MHz 175 s, at 19.2 MHz 224 s.
//!
//! Fake ART with a manual clock at each frequency: the test writes every record with a
//! timestamp it knows, calls `Control::tick` every 250 ms of that clock as the control thread
//! does, and compares the flushed file's decoded counters with the truth, record for record.
#![cfg(not(loom))]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hubble_format::{EventKind, Mode, TraceFile};
use hubble_runtime::flush::FsStorage;
use hubble_runtime::props::CONSENT;
use hubble_runtime::{Config, Control};
use hubble_testkit::runtime::{FakeArt, FakeProperties, FakeThread};

const MODE: Mode = Mode::Bits64;
/// Below and above 4 GiB: one- and two-slot entries.
const METHODS: [u64; 3] = [0x1000, 0x7f12_0000_0040, 0x2340];
const FREQUENCIES: [u64; 3] = [1_000_000_000, 24_576_000, 19_200_000];

struct Rig {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    c: Control<FakeArt>,
    t: Box<FakeThread>,
    hz: u64,
    /// The clock now (ticks).
    now: u64,
    /// When the control thread ticks next.
    next_tick: u64,
    /// Every event written since tracing started, as (full counter, kind).
    truth: Vec<(u64, EventKind)>,
}

impl Rig {
    fn new(hz: u64, ring_bytes: usize) -> Rig {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("hubble");
        let art = FakeArt::default();
        art.set_timer_hz(hz);
        // A device that has been up for a while: the upper half of the counter is not zero.
        let now = 3 * (1u64 << 32) + 12_345;
        art.set_timer(now);
        let props = Arc::new(FakeProperties::default());
        props.set(CONSENT, "1");
        let mut config = Config::new("com.example", "com.example", dir.clone());
        config.ring_bytes = ring_bytes;
        config.mode = MODE;
        let c = Control::new(art, config, props, Box::new(FsStorage));
        let t = FakeThread::new();
        c.thread_attached(t.handle(), 42, "main", true);
        c.start_tracing().unwrap();
        t.to_runnable();
        Rig {
            _tmp: tmp,
            dir,
            c,
            t,
            hz,
            now,
            next_tick: now + hz / 4,
            truth: vec![(now, EventKind::Start)],
        }
    }

    /// Moves the clock `ticks` on, with the control thread's ticks every 250 ms on the way.
    fn advance(&mut self, ticks: u64) {
        let target = self.now + ticks;
        while self.next_tick <= target {
            self.now = self.next_tick;
            self.c.art().set_timer(self.now);
            self.c.tick();
            self.next_tick += self.hz / 4;
        }
        self.now = target;
        self.c.art().set_timer(self.now);
    }

    fn ms(&self, ms: u64) -> u64 {
        self.hz / 1000 * ms
    }

    fn entry(&mut self, method: u64) {
        assert!(self.t.entry(MODE, method, self.now as u32));
        self.truth.push((self.now, EventKind::Entry { method }));
    }

    fn exit(&mut self) {
        assert!(self.t.exit(self.now as u32));
        self.truth.push((self.now, EventKind::Exit));
    }

    /// A burst of work: `calls` nested pairs, a few microseconds to a millisecond apart.
    fn burst(&mut self, calls: usize, seed: u64) {
        let mut x = seed | 1;
        for i in 0..calls {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.entry(METHODS[i % METHODS.len()]);
            self.advance(self.hz / 1_000_000 * (1 + x % 1000));
            self.exit();
            self.advance(self.hz / 1_000_000 * (1 + (x >> 10) % 50));
        }
    }

    /// Flushes with the thread out of managed code (a forced stop), as at idle.
    fn flush(&mut self) -> TraceFile {
        self.t.to_native();
        let f = self.c.flush(self.t.handle(), "idle").unwrap();
        self.t.to_runnable();
        TraceFile::read(f.path.as_deref().expect("consent given")).unwrap()
    }
}

fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.count())
}

/// The decoded events equal the newest `truth` events, counter for counter, both ways.
fn assert_exact(file: &TraceFile, truth: &[(u64, EventKind)], what: &str) {
    let decoded = file.decode_events().unwrap();
    let got: Vec<(u64, EventKind)> = decoded.events.iter().map(|e| (e.counter, e.kind)).collect();
    let want = &truth[truth.len() - got.len()..];
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(
            g,
            w,
            "{what}: event {i} of {}: decoded {g:?}, written {w:?} ({} anchors in the file)",
            got.len(),
            file.header.anchors.len()
        );
    }
    let view = hubble_format::RingView::linear(&file.window);
    let forward: Vec<(u64, EventKind)> =
        hubble_format::EventIter::new(&view, file.header.mode, file.header.time_base())
            .unwrap()
            .map(|e| (e.counter, e.kind))
            .collect();
    assert_eq!(forward, got, "{what}: the forward decoder disagrees");
}

#[test]
fn ten_minutes_idle_in_native_then_more_work_then_a_flush_at_idle() {
    for hz in FREQUENCIES {
        let mut r = Rig::new(hz, 1 << 20);
        r.burst(200, hz);
        // MessageQueue.nativePollOnce: entered, ten minutes of nothing, returns.
        r.entry(0x5550);
        r.advance(r.ms(10 * 60 * 1000));
        r.exit();
        r.burst(200, hz + 1);
        // A second, longer gap (2 h) with the thread blocked in managed code (no call at all).
        r.advance(r.ms(2 * 3600 * 1000));
        r.burst(50, hz + 2);
        // Idle again for 20 min, then the flush: the newest record is 20 min before the
        // reference.
        r.advance(r.ms(20 * 60 * 1000));
        let file = r.flush();
        assert_exact(&file, &r.truth, &format!("{hz} Hz"));
        assert!(
            file.header.anchors.len() >= 3,
            "{hz} Hz: {} anchors",
            file.header.anchors.len()
        );
        assert_eq!(files_in(&r.dir), 1);
    }
}

#[test]
fn gaps_in_a_ring_that_wrapped_keep_only_the_anchors_still_in_the_window() {
    for hz in FREQUENCIES {
        // 512 slots: the window holds the last few bursts only.
        let mut r = Rig::new(hz, 4096);
        for round in 0..12 {
            r.burst(60, hz + round);
            r.advance(r.ms(7 * 60 * 1000 + round * 1000));
        }
        let file = r.flush();
        assert_exact(&file, &r.truth, &format!("{hz} Hz, wrapped"));
        assert!(!file.header.anchors.is_empty(), "{hz} Hz: no anchor kept");
        assert!(
            file.header.anchors.len() < 12,
            "{hz} Hz: anchors of overwritten data kept"
        );
    }
}

#[test]
fn tracing_restarts_after_each_flush_with_a_fresh_set_of_anchors() {
    let hz = FREQUENCIES[1];
    let mut r = Rig::new(hz, 1 << 20);
    r.burst(100, 1);
    r.advance(r.ms(15 * 60 * 1000));
    let first = r.flush();
    assert_exact(&first, &r.truth, "first flush");
    // The restart's start record carries the time tracing resumed.
    r.truth.clear();
    let start = first.decode_events().unwrap();
    assert!(!start.events.is_empty());
    r.truth.push((r.now, EventKind::Start));
    r.burst(100, 2);
    r.advance(r.ms(9 * 60 * 1000));
    r.burst(10, 3);
    let second = r.flush();
    assert!(
        second
            .header
            .anchors
            .iter()
            .all(|a| (a.slots_after as usize) < second.window.len()),
        "an anchor from before the restart reached the second file"
    );
    assert_exact(&second, &r.truth, "second flush");
}

#[test]
fn a_busy_thread_gets_no_anchors() {
    let hz = FREQUENCIES[0];
    let mut r = Rig::new(hz, 1 << 20);
    // Calls every few hundred microseconds through many ticks: the cursor moves every tick.
    r.burst(20_000, 9);
    let file = r.flush();
    assert!(
        file.header.anchors.is_empty(),
        "{:?}",
        &file.header.anchors[..file.header.anchors.len().min(4)]
    );
    assert_exact(&file, &r.truth, "busy");
}

#[test]
fn the_control_threads_counter_read_may_lag_the_threads_by_less_than_a_millisecond() {
    // Neither counter read is ordered with the cursor (CNTVCT_EL0 may be read early): the tick
    // that first sees a cursor can read a counter value below the record just under it. The
    // anchor's 1 ms margin keeps that record at or below the bound.
    for hz in FREQUENCIES {
        let mut r = Rig::new(hz, 1 << 20);
        r.burst(50, hz);
        let tick = r.next_tick;
        r.advance(tick - r.now - 1);
        r.now = tick + r.ms(1) / 2;
        r.entry(0x5550);
        r.c.art().set_timer(tick);
        r.c.tick();
        r.next_tick += hz / 4;
        r.advance(r.ms(10 * 60 * 1000));
        r.exit();
        r.burst(20, hz + 1);
        let file = r.flush();
        assert_exact(&file, &r.truth, &format!("{hz} Hz, counter read lagging"));
    }
}
