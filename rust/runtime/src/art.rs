//! What the control plane needs from ART, as a trait: the cxx bridge implements it for real
//! ([`CxxArt`]), tests implement it in Rust.

use crate::block::{StateLock, ThreadBlock};

/// An ART `Thread*` (an address; never dereferenced by Rust except through [`Art`]).
pub type ThreadHandle = usize;

/// Calls out of the control plane into the runtime.
pub trait Art: Send + Sync + 'static {
    /// Address of the thread's `tlsPtr_.hubble_cursor` (the first word of its [`ThreadBlock`]).
    fn block_address(&self, thread: ThreadHandle) -> usize;

    /// Whether every trace point of this ART (compiled code, nterp, the C++ trace point) takes
    /// the pool's block-end path when `begin` carries the pool tag. Where one does not, a thread
    /// given pool words would run its ring slow path on a pool block, so many-thread mode is
    /// refused (`docs/many-threads.md`). ART has it exactly where it has a block-end function
    /// for compiled code to call ([`Art::pool_take_entry`]): every ISA the series patches (arm64,
    /// arm, x86_64, x86).
    fn has_pool_path(&self) -> bool {
        self.pool_take_entry() != 0
    }
    /// The address compiled code calls when its block is full (`hubble_pool_take`), stored in
    /// the pool header (`hubble_format::pool::P_TAKE`); 0 if this ART has none.
    fn pool_take_entry(&self) -> u64 {
        0
    }
    /// Whether the thread is runnable (may execute managed code and trace points).
    fn is_runnable(&self, thread: ThreadHandle) -> bool;
    /// Blocks the thread's transitions into runnable (ART's suspend request under
    /// `thread_suspend_count_lock_`).
    fn lock_state(&self, thread: ThreadHandle);
    /// [`Art::lock_state`], reporting whether ART placed the request (it may refuse one, e.g.
    /// during a thread flip without read barriers); nothing is to be undone when it did not.
    fn try_lock_state(&self, thread: ThreadHandle) -> bool {
        self.lock_state(thread);
        true
    }
    /// Undoes [`Art::lock_state`].
    fn unlock_state(&self, thread: ThreadHandle);
    /// Asks a runnable thread that has not answered a stop to answer it at its next suspend check
    /// (an ART checkpoint: a loop without calls reaches no trace point, but its back edges check
    /// for suspension). False if the thread is not runnable, or this runtime cannot ask (the
    /// default); then only its trace points or the force stop end the stop.
    fn request_stop_checkpoint(&self, _thread: ThreadHandle) -> bool {
        false
    }
    /// Pretty names of `methods`, in order, with no unload check: only for methods the caller
    /// knows are alive (the dying loader's own methods, inside [`crate::Control::class_loader_unloading`]).
    fn resolve(&self, methods: &[u64], out: &mut Vec<String>);
    /// Pretty names of `methods`, in order, under the mutator lock and ART's unload lock, if no
    /// class loader finished unloading since [`Art::unload_generation`] returned `generation`;
    /// otherwise `false` and nothing is read (some of `methods` may be freed memory now). This
    /// is what keeps the control thread off a dead loader's `ArtMethod`s without ever making the
    /// GC wait for a flush (docs/protocol.md, "Class-loader unloading").
    fn resolve_unless_unloaded(
        &self,
        methods: &[u64],
        generation: u64,
        out: &mut Vec<String>,
    ) -> bool {
        let _ = generation;
        self.resolve(methods, out);
        true
    }
    /// Count of class-loader unloads completed (read with acquire ordering on the ART side).
    fn unload_generation(&self) -> u64 {
        0
    }
    /// Every `ArtMethod*` owned by a class loader (its `LinearAlloc`), before it is freed.
    fn loader_methods(&self, loader: usize, out: &mut Vec<u64>);
    /// The full 64-bit generic-timer count (the clock the trace points read).
    fn timer(&self) -> u64;
    /// Generic-timer frequency in Hz.
    fn timer_hz(&self) -> u64;
    /// Wall clock, Unix epoch nanoseconds.
    fn wall_ns(&self) -> u64;
    /// Task records (`debug.hubble.tasks`): from now on the framework methods that submit, begin
    /// and end asynchronous tasks write one when entered (`runtime/hubble/tasks.h`). Called once,
    /// on the attached control thread; returns how many of those methods this runtime has. A
    /// double without a framework has none.
    fn start_task_records(&self) -> usize {
        0
    }
    /// Attaches the calling thread (the control thread) to the runtime as a daemon.
    fn attach_current_thread(&self, name: &str) -> bool;
    /// Detaches the calling thread.
    fn detach_current_thread(&self);
}

/// The timer and the wall clock read "together": the wall clock between two timer reads, the
/// timer value taken as their midpoint (error at most half the gap).
pub fn clock_pair(art: &impl Art) -> (u64, u64) {
    let a = art.timer();
    let wall = art.wall_ns();
    let b = art.timer();
    (a + (b.wrapping_sub(a)) / 2, wall)
}

/// A thread's block, as the control side sees it.
///
/// # Safety
/// `address` must be the address of a live `ThreadBlock` for as long as the reference is used:
/// the registry guarantees it by removing a thread (under its lock) before ART frees it.
pub unsafe fn block_at<'a>(address: usize) -> &'a ThreadBlock {
    // SAFETY: the caller guarantees `address` points to a live, aligned ThreadBlock.
    unsafe { &*(address as *const ThreadBlock) }
}

/// [`StateLock`] of one thread through [`Art`].
pub struct ArtStateLock<'a, A: Art> {
    /// The runtime.
    pub art: &'a A,
    /// The thread.
    pub thread: ThreadHandle,
}

impl<A: Art> StateLock for ArtStateLock<'_, A> {
    fn is_runnable(&self) -> bool {
        self.art.is_runnable(self.thread)
    }
    fn lock(&self) -> bool {
        self.art.try_lock_state(self.thread)
    }
    fn unlock(&self) {
        self.art.unlock_state(self.thread)
    }
}

/// [`Art`] through the cxx bridge: the real ART on Android, the C++ test double on the host.
#[derive(Clone, Copy, Debug, Default)]
pub struct CxxArt;

impl Art for CxxArt {
    fn block_address(&self, thread: ThreadHandle) -> usize {
        crate::ffi::hubble_block_address(thread)
    }
    fn is_runnable(&self, thread: ThreadHandle) -> bool {
        crate::ffi::hubble_thread_is_runnable(thread)
    }
    fn lock_state(&self, thread: ThreadHandle) {
        self.try_lock_state(thread);
    }
    fn try_lock_state(&self, thread: ThreadHandle) -> bool {
        crate::ffi::hubble_lock_thread_state(thread)
    }
    fn unlock_state(&self, thread: ThreadHandle) {
        crate::ffi::hubble_unlock_thread_state(thread)
    }
    fn request_stop_checkpoint(&self, thread: ThreadHandle) -> bool {
        crate::ffi::hubble_request_stop_checkpoint(thread)
    }
    fn resolve(&self, methods: &[u64], out: &mut Vec<String>) {
        crate::ffi::hubble_resolve_dying_methods(methods, out)
    }
    fn resolve_unless_unloaded(
        &self,
        methods: &[u64],
        generation: u64,
        out: &mut Vec<String>,
    ) -> bool {
        crate::ffi::hubble_resolve_methods(methods, generation, out)
    }
    fn unload_generation(&self) -> u64 {
        crate::ffi::hubble_unload_generation()
    }
    fn loader_methods(&self, loader: usize, out: &mut Vec<u64>) {
        crate::ffi::hubble_loader_methods(loader, out)
    }
    fn timer(&self) -> u64 {
        crate::ffi::hubble_read_timer()
    }
    fn timer_hz(&self) -> u64 {
        crate::ffi::hubble_timer_hz()
    }
    fn wall_ns(&self) -> u64 {
        crate::ffi::hubble_wall_clock_ns()
    }
    fn pool_take_entry(&self) -> u64 {
        crate::ffi::hubble_pool_take_entry()
    }
    fn start_task_records(&self) -> usize {
        crate::ffi::hubble_start_task_records()
    }
    fn attach_current_thread(&self, name: &str) -> bool {
        crate::ffi::hubble_attach_current_thread(name)
    }
    fn detach_current_thread(&self) {
        crate::ffi::hubble_detach_current_thread()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// The least an `Art` must give: every default method left as it is.
    #[derive(Default)]
    struct Minimal {
        reads: AtomicU64,
    }
    impl Art for Minimal {
        fn block_address(&self, thread: ThreadHandle) -> usize {
            thread
        }
        fn is_runnable(&self, _: ThreadHandle) -> bool {
            false
        }
        fn lock_state(&self, _: ThreadHandle) {}
        fn unlock_state(&self, _: ThreadHandle) {}
        fn resolve(&self, methods: &[u64], out: &mut Vec<String>) {
            out.extend(methods.iter().map(|m| format!("m{m:x}")));
        }
        fn loader_methods(&self, _: usize, _: &mut Vec<u64>) {}
        fn timer(&self) -> u64 {
            // 100, then 300: the pair's timer is the midpoint.
            100 + 200 * self.reads.fetch_add(1, Ordering::Relaxed)
        }
        fn timer_hz(&self) -> u64 {
            1
        }
        fn wall_ns(&self) -> u64 {
            7
        }
        fn attach_current_thread(&self, _: &str) -> bool {
            true
        }
        fn detach_current_thread(&self) {}
    }

    #[test]
    fn the_clock_pair_takes_the_timer_midway_around_the_wall_clock() {
        assert_eq!(clock_pair(&Minimal::default()), (200, 7));
    }

    #[test]
    fn the_defaults_resolve_without_an_unload_check_and_have_no_pool_path() {
        let art = Minimal::default();
        let mut names = Vec::new();
        assert!(art.resolve_unless_unloaded(&[0x10, 0x20], 5, &mut names));
        assert_eq!(names, ["m10", "m20"]);
        assert_eq!(art.unload_generation(), 0);
        assert_eq!(art.pool_take_entry(), 0, "no block-end function by default");
        assert!(!art.has_pool_path());
        assert!(!art.request_stop_checkpoint(1), "no checkpoint by default");
    }
}
