//! The control thread's loop (`hubble_runtime::control_loop`): left alone it runs the tick
//! every `TICK` (250 ms), neither never nor continuously.

use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use hubble_runtime::flush::FsStorage;
use hubble_runtime::props::FakeProperties;
use hubble_runtime::testing::FakeArt;
use hubble_runtime::{control_loop, Config, Control, Message};

#[test]
fn an_idle_loop_ticks_every_tick_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let config = Config::new("com.example", "com.example", tmp.path().to_path_buf());
    let control = Arc::new(Control::new(
        FakeArt::default(),
        config,
        Arc::new(FakeProperties::default()),
        Box::new(FsStorage),
    ));
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
