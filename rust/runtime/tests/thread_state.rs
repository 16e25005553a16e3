//! The force stop's thread-state lock (art/runtime/hubble/thread_state.cc, compiled
//! unchanged against host/art-model/, a model of ART 14's suspend protocol that follows
//! thread.cc, thread-inl.h and thread_list.cc line by line) must never leave a suspend request
//! behind. The race of §6's re-check: the thread is in native when the control thread looks,
//! turns runnable before the lock is taken, so the control thread takes the lock, sees it
//! runnable, and undoes the lock. ThreadList::Resume refuses a runnable thread
//! (thread_list.cc 851-855) and kept the count: the thread then parked at its next suspend check
//! forever (an ANR on a device).
//!
//! The same file's stop checkpoint (`RequestStopCheckpoint`), for a runnable thread that reaches
//! no trace point, against the model's checkpoints (`Thread::RequestCheckpoint`,
//! `RunCheckpointFunction` from `CheckSuspend` and from the transition out of runnable).
#![cfg(not(loom))]

use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Duration;

use hubble_runtime::art::ArtStateLock;
use hubble_runtime::block::{self, ForceStop, ThreadBlock};
use hubble_runtime::{Art, CxxArt};

extern "C" {
    fn hubble_double_new_thread() -> usize;
    fn hubble_double_set_runnable(t: usize, runnable: bool);
    fn hubble_double_suspend_check(t: usize);
    fn hubble_double_suspend_count(t: usize) -> i32;
    fn hubble_double_waiting(t: usize) -> i32;
    fn hubble_double_atrace_depth() -> i32;
    fn hubble_double_release(t: usize);
    fn hubble_double_pending_checkpoints(t: usize) -> usize;
}

/// The thread's next suspend check, on a thread of its own: Ok if it passed, Err with the suspend
/// count that held it if it was still parked after `limit` (then it is released, so the test
/// reports instead of hanging).
fn suspend_check_passes(t: usize, limit: Duration) -> Result<(), i32> {
    let (tx, rx) = mpsc::channel();
    let checker = std::thread::spawn(move || {
        // SAFETY: t is a live thread of the model (leaked by the test).
        unsafe { hubble_double_suspend_check(t) };
        tx.send(()).unwrap();
    });
    let r = match rx.recv_timeout(limit) {
        Ok(()) => Ok(()),
        Err(_) => {
            // SAFETY: as above.
            let count = unsafe { hubble_double_suspend_count(t) };
            // SAFETY: as above.
            unsafe { hubble_double_release(t) };
            Err(count)
        }
    };
    checker.join().unwrap();
    r
}

#[test]
fn undoing_the_lock_of_a_thread_that_turned_runnable_leaves_no_suspend_request() {
    // SAFETY: the model allocates a thread; leaked (other tests' threads are independent).
    let t = unsafe { hubble_double_new_thread() };
    let art = CxxArt;
    let depth = unsafe { hubble_double_atrace_depth() };
    // SAFETY (all calls below): t is a live thread of the model.
    unsafe { hubble_double_set_runnable(t, false) };
    assert!(!art.is_runnable(t), "the control thread sees it in native");
    unsafe { hubble_double_set_runnable(t, true) }; // ...and it returns to managed code
    assert!(art.try_lock_state(t));
    assert!(
        art.is_runnable(t),
        "the re-check sees it runnable: no force stop"
    );
    art.unlock_state(t);
    assert_eq!(
        suspend_check_passes(t, Duration::from_secs(5)),
        Ok(()),
        "the thread parked at its next suspend check: UnlockThreadState leaked a suspend request \
         (Err = the suspend count that held it)"
    );
    assert_eq!(unsafe { hubble_double_suspend_count(t) }, 0);
    assert_eq!(
        unsafe { hubble_double_atrace_depth() },
        depth,
        "ATraceBegin/ATraceEnd unpaired"
    );
}

#[test]
fn the_lock_holds_a_thread_in_native_until_it_is_undone() {
    // SAFETY: as above.
    let t = unsafe { hubble_double_new_thread() };
    let art = CxxArt;
    unsafe { hubble_double_set_runnable(t, false) };
    assert!(art.try_lock_state(t));
    assert!(!art.is_runnable(t));
    let (tx, rx) = mpsc::channel();
    let returning = std::thread::spawn(move || {
        // SAFETY: as above. Blocks in TransitionFromSuspendedToRunnable while the lock is held.
        unsafe { hubble_double_set_runnable(t, true) };
        tx.send(()).unwrap();
    });
    // Handshake: the thread is waiting on resume_cond_ (not a sleep).
    while unsafe { hubble_double_waiting(t) } == 0 {
        std::thread::yield_now();
    }
    assert!(!art.is_runnable(t), "blocked while the lock is held");
    art.unlock_state(t);
    rx.recv_timeout(Duration::from_secs(5))
        .expect("the thread resumes once the lock is undone");
    returning.join().unwrap();
    assert!(art.is_runnable(t));
    assert_eq!(unsafe { hubble_double_suspend_count(t) }, 0);
}

/// The same race through the real §6 code path: `block::force_stop` with ART's lock.
#[test]
fn force_stop_that_finds_the_thread_runnable_leaves_it_free_to_run() {
    // SAFETY: as above.
    let t = unsafe { hubble_double_new_thread() };
    let art = CxxArt;
    // SAFETY: the model's thread starts with its five-word block.
    let b = unsafe { &*(art.block_address(t) as *const ThreadBlock) };
    b.cursor.store(0x1000, std::sync::atomic::Ordering::Relaxed);
    unsafe { hubble_double_set_runnable(t, true) };
    let outcome = block::force_stop(
        b,
        &ArtStateLock {
            art: &art,
            thread: t,
        },
    );
    assert_eq!(outcome, ForceStop::Runnable);
    assert_eq!(
        suspend_check_passes(t, Duration::from_secs(5)),
        Ok(()),
        "force_stop left a suspend request on a runnable thread"
    );
    b.cursor.store(0, std::sync::atomic::Ordering::Relaxed);
}

/// A thread with tracing on and a stop requested, as the control thread leaves it.
fn thread_asked_to_stop(runnable: bool) -> (usize, &'static ThreadBlock) {
    // SAFETY: the model allocates a thread; leaked.
    let t = unsafe { hubble_double_new_thread() };
    // SAFETY: the model's thread starts with its five-word block.
    let b = unsafe { &*(CxxArt.block_address(t) as *const ThreadBlock) };
    b.cursor.store(0x1000, Ordering::Relaxed);
    block::request_stop(b);
    // SAFETY: t is a live thread of the model.
    unsafe { hubble_double_set_runnable(t, runnable) };
    (t, b)
}

#[test]
fn a_stop_checkpoint_is_answered_at_the_spinning_thread_s_next_suspend_check() {
    let (t, b) = thread_asked_to_stop(true);
    assert!(
        CxxArt.request_stop_checkpoint(t),
        "a runnable thread takes a checkpoint"
    );
    assert_eq!(
        block::poll_stopped(b),
        None,
        "nothing before the thread runs it"
    );
    // SAFETY: t is a live thread of the model (leaked).
    assert_eq!(unsafe { hubble_double_pending_checkpoints(t) }, 1);
    // The spinning loop's back edge, on a thread of its own.
    std::thread::spawn(move || {
        // SAFETY: as above.
        unsafe { hubble_double_suspend_check(t) }
    })
    .join()
    .unwrap();
    assert_eq!(
        block::poll_stopped(b),
        Some(0x1000),
        "the end it would have published"
    );
    assert_eq!(
        b.cursor.load(Ordering::Relaxed),
        0,
        "tracing off before the publication"
    );
    // SAFETY: as above.
    assert_eq!(unsafe { hubble_double_pending_checkpoints(t) }, 0);
    assert_eq!(
        unsafe { hubble_double_suspend_count(t) },
        0,
        "no suspension involved"
    );
}

#[test]
fn a_thread_in_native_takes_no_checkpoint_the_force_stop_is_its_path() {
    let (t, b) = thread_asked_to_stop(false);
    assert!(!CxxArt.request_stop_checkpoint(t));
    // SAFETY: t is a live thread of the model (leaked).
    assert_eq!(unsafe { hubble_double_pending_checkpoints(t) }, 0);
    let lock = ArtStateLock {
        art: &CxxArt,
        thread: t,
    };
    assert_eq!(block::force_stop(b, &lock), ForceStop::Forced(0x1000));
}

#[test]
fn a_pending_checkpoint_runs_before_the_thread_leaves_runnable() {
    let (t, b) = thread_asked_to_stop(true);
    assert!(CxxArt.request_stop_checkpoint(t));
    // SAFETY: t is a live thread of the model (leaked).
    unsafe { hubble_double_set_runnable(t, false) };
    assert_eq!(block::poll_stopped(b), Some(0x1000));
    // SAFETY: as above.
    assert_eq!(unsafe { hubble_double_pending_checkpoints(t) }, 0);
}

#[test]
fn a_checkpoint_run_after_the_stop_was_answered_and_tracing_restarted_changes_nothing() {
    let (t, b) = thread_asked_to_stop(true);
    assert!(CxxArt.request_stop_checkpoint(t));
    // The thread's own trace point answered first; the control thread restarted it.
    b.cursor.store(0, Ordering::Relaxed);
    b.stop.store(0x1000, Ordering::Release);
    b.stop.store(0, Ordering::Relaxed);
    b.cursor.store(0x2000, Ordering::Release);
    // SAFETY: t is a live thread of the model (leaked).
    unsafe { hubble_double_suspend_check(t) };
    assert_eq!(b.cursor.load(Ordering::Relaxed), 0x2000, "still tracing");
    assert_eq!(b.stop.load(Ordering::Relaxed), 0, "no stop published");
}
