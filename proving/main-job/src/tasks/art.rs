//! `hubble_runtime::Art` for the scene's process: every traced thread's `Thread` image and state
//! lock, the block-end function's address, names from the scene's method table, the TSC.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use hubble_runtime::{Art, ThreadHandle};

use crate::art_double::{force_stopped, resolve_from};
use crate::tasks::tracer::Traced;

/// The scene's ART.
pub struct SceneArt {
    /// Threads by handle.
    pub threads: Mutex<HashMap<ThreadHandle, Arc<Traced>>>,
    /// Method names.
    pub names: HashMap<u64, String>,
    /// `hubble_pool_take`.
    pub pool_take: u64,
    /// TSC ticks per second.
    pub hz: u64,
    /// Per thread, while the control thread holds its state lock with the thread native: the
    /// cursor, stop word and records written then (the thread cannot write until unlocked).
    snapshots: Mutex<HashMap<ThreadHandle, (usize, usize, usize)>>,
}

impl SceneArt {
    /// An ART with no threads yet.
    pub fn new(names: HashMap<u64, String>, pool_take: u64, hz: u64) -> SceneArt {
        SceneArt {
            threads: Mutex::new(HashMap::new()),
            names,
            pool_take,
            hz,
            snapshots: Mutex::new(HashMap::new()),
        }
    }

    fn thread(&self, t: ThreadHandle) -> Arc<Traced> {
        self.threads.lock().unwrap()[&t].clone()
    }
}

impl Art for SceneArt {
    fn block_address(&self, thread: ThreadHandle) -> usize {
        self.thread(thread).block() as *const _ as usize
    }
    fn pool_take_entry(&self) -> u64 {
        self.pool_take
    }
    fn is_runnable(&self, thread: ThreadHandle) -> bool {
        self.thread(thread).state.is_runnable()
    }
    fn lock_state(&self, thread: ThreadHandle) {
        let t = self.thread(thread);
        let runnable = t.state.lock();
        if !runnable {
            let b = t.block();
            self.snapshots.lock().unwrap().insert(
                thread,
                (
                    b.cursor.load(Ordering::Acquire),
                    b.stop.load(Ordering::Acquire),
                    t.written.load(Ordering::Acquire),
                ),
            );
        }
    }
    fn unlock_state(&self, thread: ThreadHandle) {
        let t = self.thread(thread);
        if let Some((cursor, stop_before, written)) = self.snapshots.lock().unwrap().remove(&thread)
        {
            if force_stopped(t.block(), cursor, stop_before) {
                t.forced.lock().unwrap().push(written);
            }
        }
        t.state.unlock();
    }
    fn resolve(&self, methods: &[u64], out: &mut Vec<String>) {
        resolve_from(&self.names, methods, out);
    }
    fn loader_methods(&self, _loader: usize, _out: &mut Vec<u64>) {}
    fn timer(&self) -> u64 {
        crate::art_double::tsc()
    }
    fn timer_hz(&self) -> u64 {
        self.hz
    }
    fn wall_ns(&self) -> u64 {
        hubble_testkit::runtime::wall_clock_ns()
    }
    fn attach_current_thread(&self, _name: &str) -> bool {
        true
    }
    fn detach_current_thread(&self) {}
}
