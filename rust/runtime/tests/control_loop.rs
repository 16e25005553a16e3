//! The control thread's loop (`hubble_runtime::control_loop`): left alone it runs the tick
//! every `TICK` (250 ms), neither never nor continuously.

use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use hubble_runtime::flush::FsStorage;
use hubble_runtime::{control_loop, Config, Control, Message};
use hubble_testkit::runtime::{FakeArt, FakeProperties};

/// A control with nothing to do: no properties, no threads.
fn idle_control(dir: &std::path::Path) -> Arc<Control<FakeArt>> {
    let config = Config::new("com.example", "com.example", dir.to_path_buf());
    Arc::new(Control::new(
        FakeArt::default(),
        config,
        Arc::new(FakeProperties::default()),
        Box::new(FsStorage),
    ))
}

#[test]
fn an_idle_loop_ticks_every_tick_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let control = idle_control(tmp.path());
    let (tx, rx) = mpsc::channel();
    let c = control.clone();
    let thread = std::thread::spawn(move || control_loop(&*c, &rx));
    // 1.5 s idle: 6 ticks at 250 ms. A loop that never ticks gives 0, one that ticks on every
    // wake-up spins and gives thousands; a loaded machine delays ticks, it cannot add any.
    std::thread::sleep(Duration::from_millis(1500));
    tx.send(Message::Shutdown).unwrap();
    thread.join().unwrap();
    let ticks = control.stats.ticks.load(Ordering::Relaxed);
    assert!((1..=7).contains(&ticks), "{ticks} ticks in 1.5 s");
}

/// The first tick waits a whole `TICK` after the loop starts (a freshly started control thread
/// must not run the triggers and the idle-gap scan before the traced threads wrote anything).
/// A tick cannot come earlier than that however loaded the machine is; it can only come later.
#[test]
fn the_first_tick_comes_one_tick_interval_after_the_start() {
    let tmp = tempfile::tempdir().unwrap();
    let control = idle_control(tmp.path());
    let (tx, rx) = mpsc::channel();
    let c = control.clone();
    let start = std::time::Instant::now();
    let thread = std::thread::spawn(move || control_loop(&*c, &rx));
    while control.stats.ticks.load(Ordering::Acquire) == 0 {
        assert!(start.elapsed() < Duration::from_secs(30), "no tick at all");
        std::thread::sleep(Duration::from_millis(1));
    }
    let first = start.elapsed();
    tx.send(Message::Shutdown).unwrap();
    thread.join().unwrap();
    assert!(
        first >= hubble_runtime::TICK,
        "the first tick after {first:?}, before one tick interval"
    );
}
