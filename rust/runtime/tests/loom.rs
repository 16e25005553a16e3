//! loom models of the §6 start/stop protocol (run with `RUSTFLAGS="--cfg loom"`, see
//! tests/stages/20-loom.sh). Traced thread against control thread, exhaustively over
//! interleavings and the weak-memory outcomes loom models:
//! * no lost stop: the control thread always obtains an end position;
//! * nothing is written after the end position is published;
//! * no torn two-slot entry: the window decodes to exactly the records written, in order;
//! * the native-state path, including the thread re-entering managed code during the force
//!   stop, and (as a check that the model can fail) the same path without the re-check.
#![cfg(loom)]

use hubble_format::ring::{decode, RingView};
use hubble_format::{Mode, Record};
use hubble_runtime::block::{self, ForceStop, Slots, StateLock, ThreadBlock};
use hubble_runtime::ring::Ring;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Condvar, Mutex};

const MODE: Mode = Mode::Bits64;
const WIDE: u64 = 0x7f00_0000_1000;

/// ART's thread state and its transition lock, reduced to what §6 relies on: a thread blocks in
/// its transition to runnable while the lock (suspend request) is held.
struct State {
    runnable: AtomicBool,
    count: Mutex<u32>,
    cv: Condvar,
}

impl State {
    fn new(runnable: bool) -> State {
        State {
            runnable: AtomicBool::new(runnable),
            count: Mutex::new(0),
            cv: Condvar::new(),
        }
    }
    fn to_runnable(&self) {
        let mut n = self.count.lock().unwrap();
        while *n > 0 {
            n = self.cv.wait(n).unwrap();
        }
        self.runnable.store(true, Ordering::Release);
    }
    fn to_native(&self) {
        let _n = self.count.lock().unwrap();
        self.runnable.store(false, Ordering::Release);
    }
}

impl StateLock for State {
    fn is_runnable(&self) -> bool {
        self.runnable.load(Ordering::Acquire)
    }
    fn lock(&self) -> bool {
        *self.count.lock().unwrap() += 1;
        true
    }
    fn unlock(&self) {
        *self.count.lock().unwrap() -= 1;
        self.cv.notify_all();
    }
}

struct Shared {
    block: ThreadBlock,
    ring: Ring,
    state: State,
}

/// A runnable thread tracing into a ring of `ring_bytes`, started at its first slot.
fn tracing(ring_bytes: usize) -> Arc<Shared> {
    let sh = Arc::new(Shared {
        block: ThreadBlock::default(),
        ring: Ring::new(ring_bytes).unwrap(),
        state: State::new(true),
    });
    block::start(&sh.block, sh.ring.slots(), MODE, 0, 1);
    sh
}

fn snapshot(s: Slots<'_>) -> Vec<u64> {
    s.slots.iter().map(|x| x.load(Ordering::Relaxed)).collect()
}

enum Op {
    Entry(u64),
    Exit,
    ToNative,
    ToRunnable,
}

/// Runs the traced thread's ops; returns the records it wrote.
fn traced(sh: &Shared, ops: &[Op]) -> Vec<Record> {
    let slots = sh.ring.slots();
    let mut written = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let ts = 10 + i as u32;
        match op {
            Op::Entry(m) => {
                if block::trace_entry(&sh.block, &slots, MODE, *m, ts) {
                    written.push(Record::Entry { method: *m, ts });
                }
            }
            Op::Exit => {
                if block::trace_exit(&sh.block, &slots, ts) {
                    written.push(Record::Exit { ts });
                }
            }
            Op::ToNative => sh.state.to_native(),
            Op::ToRunnable => sh.state.to_runnable(),
        }
    }
    written
}

/// The control side's stop: doorbell, then poll; force only through `force`.
fn stop(sh: &Shared, force: impl Fn(&ThreadBlock, &State) -> ForceStop) -> usize {
    block::request_stop(&sh.block);
    loop {
        if let Some(end) = block::poll_stopped(&sh.block) {
            return end;
        }
        if !sh.state.is_runnable() {
            match force(&sh.block, &sh.state) {
                ForceStop::Forced(end) | ForceStop::AlreadyStopped(end) => return end,
                ForceStop::Runnable => {}
                ForceStop::NotTracing => panic!("tracing was on"),
            }
        }
        loom::thread::yield_now();
    }
}

/// Checks the window at `end` against what the traced thread wrote.
fn check_window(slots: &[u64], base: usize, end: usize, written: &[Record]) {
    let view = RingView::new(slots, (end - base) as u64, None).expect("end inside the ring");
    let window = decode(&view, MODE).expect("the window decodes: no torn record");
    let complete = window.start == hubble_format::WindowStart::StartRecord;
    let records: Vec<Record> = window
        .records
        .into_iter()
        .filter(|r| !matches!(r, Record::Start { .. }))
        .collect();
    assert!(records.len() <= written.len());
    assert_eq!(
        records[..],
        written[written.len() - records.len()..],
        "the window is the newest records written, in order (end published after the last)"
    );
    if complete {
        assert_eq!(
            records.len(),
            written.len(),
            "every written record is in the window"
        );
    }
}

fn model(ops: Vec<Op>, ring_bytes: usize, force: fn(&ThreadBlock, &State) -> ForceStop) {
    let ops = std::sync::Arc::new(ops);
    loom::model(move || {
        let sh = tracing(ring_bytes);
        let slots = sh.ring.slots();
        let t = {
            let (sh, ops) = (sh.clone(), ops.clone());
            loom::thread::spawn(move || traced(&sh, &ops))
        };
        let end = stop(&sh, force);
        let at_stop = snapshot(sh.ring.slots());
        let written = t.join().unwrap();
        let after = snapshot(sh.ring.slots());
        assert_eq!(
            at_stop, after,
            "no slot written after the end position was published"
        );
        assert_eq!(sh.block.cursor.load(Ordering::Relaxed), 0, "tracing is off");
        assert_eq!(sh.block.stop.load(Ordering::Relaxed), end);
        check_window(&at_stop, slots.base, end, &written);
    });
}

fn real_force(b: &ThreadBlock, s: &State) -> ForceStop {
    block::force_stop(b, s)
}

/// The bug the Hubble paper spent weeks on: forcing the stop on the strength of a state read
/// before the lock was taken.
fn force_without_recheck(b: &ThreadBlock, s: &State) -> ForceStop {
    s.lock();
    let outcome = match block::poll_stopped(b) {
        Some(end) => ForceStop::AlreadyStopped(end),
        None => {
            let c = b.cursor.load(loom::sync::atomic::Ordering::Relaxed);
            b.stop.store(c, loom::sync::atomic::Ordering::Relaxed);
            b.cursor.store(0, loom::sync::atomic::Ordering::Relaxed);
            ForceStop::Forced(c)
        }
    };
    loom::sync::atomic::fence(loom::sync::atomic::Ordering::SeqCst);
    s.unlock();
    outcome
}

#[test]
fn cooperative_stop_with_a_two_slot_entry() {
    // The thread ends in native code so that the control side always gets an answer.
    model(
        vec![Op::Entry(WIDE), Op::Exit, Op::ToNative],
        64,
        real_force,
    );
}

#[test]
fn cooperative_stop_across_a_wrap() {
    // 4 slots: start + wide entry fill up to the limit; the exit pads and wraps.
    model(
        vec![Op::Entry(WIDE), Op::Exit, Op::Entry(0x1000), Op::ToNative],
        32,
        real_force,
    );
}

/// The thread goes native and comes back into managed code to call on: the force stop of its
/// native spell races its return (the race the re-check closes; its must-fail twin runs the
/// same operations without it).
fn reentering_managed_code() -> Vec<Op> {
    vec![
        Op::Entry(0x1000),
        Op::ToNative,
        Op::ToRunnable,
        Op::Entry(WIDE),
        Op::Exit,
        Op::ToNative,
    ]
}

#[test]
fn force_stop_while_the_thread_reenters_managed_code() {
    model(reentering_managed_code(), 64, real_force);
}

/// Without the re-check the force stop publishes an end position while the thread, back in
/// managed code, keeps tracing: loom finds the interleaving where its cursor is live after the
/// stop. Any other panic (a model bug) does not satisfy the expectation.
#[test]
#[should_panic(expected = "tracing is off")]
fn without_the_recheck_the_model_finds_the_race() {
    model(reentering_managed_code(), 64, force_without_recheck);
}

#[test]
fn restart_after_stop_sees_fresh_limit_or_resumes_on_stale_one() {
    // Stop, restart at the end position while the thread keeps tracing: the LDP may pair the
    // new cursor with the old limit 0; the slow path must resume, not stop or drop the record.
    loom::model(|| {
        let sh = tracing(64);
        let slots = sh.ring.slots();
        let t = {
            let sh = sh.clone();
            loom::thread::spawn(move || traced(&sh, &[Op::Exit, Op::Exit, Op::Exit, Op::ToNative]))
        };
        let end = stop(&sh, real_force);
        block::start(&sh.block, slots, MODE, slots.offset(end), 2);
        let written = t.join().unwrap();
        // Whatever was written after the restart follows the second start record.
        block::request_stop(&sh.block);
        let end2 = match block::poll_stopped(&sh.block) {
            Some(e) => e,
            None => match block::force_stop(&sh.block, &sh.state) {
                ForceStop::Forced(e) | ForceStop::AlreadyStopped(e) => e,
                other => panic!("{other:?}"),
            },
        };
        let ring = snapshot(slots);
        let view = RingView::new(&ring, (end2 - slots.base) as u64, None).unwrap();
        let window = decode(&view, MODE).unwrap();
        let after_restart: Vec<Record> = window
            .records
            .into_iter()
            .filter(|r| !matches!(r, Record::Start { .. }))
            .collect();
        let n_first = (end - slots.base) / 8 - 1;
        assert_eq!(
            after_restart[..],
            written[n_first..],
            "nothing lost after the restart"
        );
    });
}

/// A checkpoint the control thread asked for may run on the traced thread after the stop was
/// answered (by a trace point) and tracing restarted: it must see the restart's `stop = 0`
/// whenever it sees the restart's cursor, and change nothing. `answer` is the checkpoint's body.
fn late_checkpoint(answer: fn(&ThreadBlock)) {
    loom::model(move || {
        let sh = tracing(64);
        let slots = sh.ring.slots();
        block::request_stop(&sh.block);
        assert!(
            !block::trace_exit(&sh.block, &slots, 5),
            "the trace point answers"
        );
        let end = block::poll_stopped(&sh.block).expect("published");
        let t = {
            let sh = sh.clone();
            loom::thread::spawn(move || answer(&sh.block))
        };
        let cursor = block::start(&sh.block, slots, MODE, slots.offset(end), 6);
        t.join().unwrap();
        assert_eq!(
            sh.block.cursor.load(Ordering::Relaxed),
            cursor,
            "the checkpoint stopped tracing after the restart"
        );
        assert_eq!(
            block::poll_stopped(&sh.block),
            None,
            "an end published after the restart"
        );
    });
}

#[test]
fn a_late_stop_checkpoint_leaves_a_restarted_thread_tracing() {
    late_checkpoint(block::answer_stop_at_suspend_check);
}

/// The checkpoint's body without its acquire fence: it may pair the restart's cursor with the
/// old `stop`, and stop tracing for good.
fn answer_without_the_fence(b: &ThreadBlock) {
    let cursor = b.cursor.load(Ordering::Relaxed);
    if cursor == 0 || b.stop.load(Ordering::Relaxed) == 0 {
        return;
    }
    b.cursor.store(0, Ordering::Relaxed);
    b.stop.store(cursor, Ordering::Release);
}

#[test]
#[should_panic]
fn without_the_fence_a_late_checkpoint_can_stop_a_restarted_thread() {
    late_checkpoint(answer_without_the_fence);
}
