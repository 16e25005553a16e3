//! The control plane through the real cxx bridge, against the C++ test double of ART
//! (host/bridge_double.cc; the state lock is the real thread_state.cc on host/art-model/):
//! block address, thread state, the state lock, ResolveMethods and LoaderMethods all cross the
//! bridge.
#![cfg(not(loom))]

use std::sync::Arc;

use hubble_format::{Mode, TraceFile};
use hubble_runtime::block::{self, RawSlots, ThreadBlock};
use hubble_runtime::flush::FsStorage;
use hubble_runtime::props::CONSENT;
use hubble_runtime::{Art, Config, Control, CxxArt};
use hubble_testkit::runtime::FakeProperties;

extern "C" {
    fn hubble_double_new_thread() -> usize;
    fn hubble_double_free_thread(t: usize);
    fn hubble_double_set_runnable(t: usize, runnable: bool);
    fn hubble_double_waiting(t: usize) -> i32;
}

#[test]
fn flush_through_the_cxx_bridge() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("hubble");
    let props = Arc::new(FakeProperties::default());
    props.set(CONSENT, "1");
    let mut cfg = Config::new("com.bridge", "com.bridge", dir.clone());
    cfg.ring_bytes = 64 << 10;
    cfg.mode = Mode::Bits64;
    let c = Control::new(CxxArt, cfg, props, Box::new(FsStorage));
    // SAFETY: the double allocates a thread; freed at the end of the test.
    let t = unsafe { hubble_double_new_thread() };
    let art = CxxArt;
    assert_eq!(art.timer_hz(), 1_000_000_000);
    assert!(art.wall_ns() > 1_600_000_000_000_000_000);
    let addr = art.block_address(t);
    // SAFETY: the double's thread starts with its five-word block.
    let blk = unsafe { &*(addr as *const ThreadBlock) };
    c.thread_attached(t, 9, "main", true);
    c.start_tracing().unwrap();
    assert_ne!(blk.cursor.load(std::sync::atomic::Ordering::Relaxed), 0);
    assert!(block::trace_entry(blk, &RawSlots, Mode::Bits64, 0x4000, 1));
    assert!(block::trace_entry(
        blk,
        &RawSlots,
        Mode::Bits64,
        0x7f00_0000_4000,
        2
    ));
    assert!(block::trace_exit(blk, &RawSlots, 3));
    // SAFETY: t is the double's live thread.
    unsafe { hubble_double_set_runnable(t, false) };
    assert!(!art.is_runnable(t));
    let f = c.flush(t, "bridge").unwrap();
    assert_eq!(
        c.stats
            .forced_stops
            .load(std::sync::atomic::Ordering::Relaxed),
        1
    );
    let file = TraceFile::read(&f.path.unwrap()).unwrap();
    assert_eq!(file.symbols[&0x4000], "m4000");
    assert_eq!(file.symbols[&0x7f00_0000_4000], "m7f0000004000");
    // LoaderMethods crosses the bridge too: the double's loader L owns L+8 .. L+64.
    let mut owned = Vec::new();
    art.loader_methods(0x10000, &mut owned);
    assert_eq!(owned.len(), 8);
    assert_eq!(owned[0], 0x10008);
    // Re-entry waits while the state lock is held.
    art.lock_state(t);
    let waiter = std::thread::spawn(move || {
        // SAFETY: as above.
        unsafe { hubble_double_set_runnable(t, true) };
    });
    // Handshake, not a sleep: wait until the thread waits on resume_cond_.
    // SAFETY: as above.
    while unsafe { hubble_double_waiting(t) } == 0 {
        std::thread::yield_now();
    }
    assert!(!art.is_runnable(t), "blocked while the state lock is held");
    art.unlock_state(t);
    waiter.join().unwrap();
    assert!(art.is_runnable(t));
    c.thread_detached(t);
    // SAFETY: detached; nothing refers to it any more.
    unsafe { hubble_double_free_thread(t) };
}
