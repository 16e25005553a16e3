//! The registry: every thread ART reported (a [`ThreadRow`] each) and what tracing it holds, a
//! ring ([`Traced`]) or its words in the pool ([`Pooled`]). ART's reports, which may come
//! under ART's own locks, are queued ([`Report`]) and applied by the next registry operation
//! (`docs/protocol.md`, "Flush", for the lock order and why).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::TryLockError;
use std::time::{Duration, Instant};

use crate::anchors::Anchors;
use crate::art::{block_at, Art, ThreadHandle};
use crate::block::ThreadBlock;
use crate::pool::{self, Pool};
use crate::props::{self, Command};
use crate::ring::Ring;

use super::{lock, Control};

/// How long a thread being born waits for the registry to start its own tracing
/// ([`Control::thread_attached_itself`]): longer than a rebalance or a flush's copy of a few
/// threads, far shorter than a flush waiting for a stop.
pub const ATTACH_WAIT: Duration = Duration::from_millis(2);

/// A thread traced in its own ring.
pub(super) struct Traced {
    pub(super) ring: Ring,
    /// Which start from an empty ring this is ([`Registry::runs`]): a ring that goes back to
    /// its thread, or to another, after a reclaim is a new run, cleared and written from slot
    /// 0, though its address may be the same. The duration triggers read a new run afresh.
    pub(super) run: u64,
    /// Symbol epoch when the ring last (re)started.
    pub(super) start_epoch: u64,
    /// A stop was requested and not answered in time: what asked for it. The thread stops at its
    /// next trace point; [`Control::tick`] then finishes the work.
    pub(super) stopping: Option<StopCause>,
    /// Bounds at the ring's idle gaps, for timestamps across them.
    pub(super) anchors: Anchors,
}

/// Why a traced thread was asked to stop (kept in its row while the stop is pending).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum StopCause {
    /// A flush with this reason.
    Flush(String),
    /// Its ring is being reclaimed ([`Control::rebalance`]).
    Reclaim,
}

/// One registered thread: what ART reported of it, and what tracing it holds.
pub(super) struct ThreadRow {
    pub(super) tid: u32,
    pub(super) name: String,
    /// The address of its five words (`ThreadBlock`).
    pub(super) block: usize,
    /// Per-thread override: `Some(true)` enabled by API, `Some(false)` disabled.
    pub(super) enabled: Option<bool>,
    /// Foreground order (higher = more recent); 0 = never foreground.
    pub(super) last_fg: u64,
    /// Ring mode: the thread traces into its own ring.
    pub(super) traced: Option<Traced>,
    /// Many-thread mode: the thread traces into the pool.
    pub(super) pooled: Option<Pooled>,
    /// Many-thread mode: the `seq` its next start continues from (after a stop of tracing).
    pub(super) next_seq: u32,
    /// The control thread itself: never traced, whatever the commands say (it would be asked to
    /// stop by itself, and a forced stop of itself resumes itself, which ART forbids).
    pub(super) control: bool,
}

impl ThreadRow {
    /// Whether tracing may include this thread (it still needs to be wanted: foreground, or
    /// many-thread mode).
    pub(super) fn may_trace(&self) -> bool {
        !self.control && self.enabled != Some(false)
    }
}

/// A thread traced in the pool (many-thread mode).
#[derive(Default)]
pub(super) struct Pooled {
    /// A stop was requested and not answered in time: what asked for it ([`Control::tick`]
    /// finishes it).
    pub(super) stopping: Option<StopCause>,
    /// Idle gaps seen since the thread last started (the cursor is an address in the pool).
    pub(super) anchors: Anchors,
    /// The pool's head when the thread started: its blocks have tickets at or above it, so a
    /// block of its tid below it is an earlier thread's (tids come back).
    pub(super) since: u64,
}

/// What the many-thread flushes remember between two of them (under the registry lock).
#[derive(Default)]
pub(super) struct PoolBook {
    /// The pool's head at the last flush: every block taken since has a ticket at or above it.
    pub(super) last_head: u64,
    /// Tickets of the blocks threads went on in after the last flush (behind a start record).
    pub(super) continued: std::collections::HashSet<u64>,
    /// Names of threads gone whose blocks the pool may still hold (pruned at each flush to the
    /// tids the pool holds).
    pub(super) exited: std::collections::BTreeMap<u32, String>,
}

/// What ART reported while possibly holding its own locks (`thread_list_lock_`): queued under a
/// leaf lock and applied by the next registry operation, so ART never waits for the registry
/// (whose holder may be waiting for `thread_list_lock_` in `LockThreadState`).
pub(super) enum Report {
    Attached {
        thread: ThreadHandle,
        tid: u32,
        name: String,
        is_ui: bool,
        block: usize,
    },
    Foreground(ThreadHandle),
    Renamed(ThreadHandle, String),
}

/// Every registered thread and the tracing state they share ([`Control::registry`] locks it).
#[derive(Default)]
pub(super) struct Registry {
    pub(super) threads: HashMap<ThreadHandle, ThreadRow>,
    /// The foreground order's clock ([`ThreadRow::last_fg`]).
    pub(super) tick: u64,
    /// Rings started empty so far (each one's [`Traced::run`]).
    pub(super) runs: u64,
    /// Rings reclaimed, cleared, for the next start.
    pub(super) spare: Vec<Ring>,
    pub(super) tracing_on: bool,
    pub(super) book: PoolBook,
}

/// Gives a registered thread its pool words (called with the registry locked).
pub(super) fn start_pooled(row: &mut ThreadRow, p: &Pool) {
    let since = pool::head(p);
    // SAFETY: registered threads are alive while the registry lock is held.
    pool::start(unsafe { block_at(row.block) }, p, row.next_seq);
    row.pooled = Some(Pooled {
        since,
        ..Pooled::default()
    });
}

/// Clears a thread's five words: tracing off, no ring or pool words left.
pub(super) fn clear_block(b: &ThreadBlock) {
    use crate::sync::Ordering::{Relaxed, Release};
    b.limit.store(0, Relaxed);
    b.stop.store(0, Relaxed);
    b.begin.store(0, Relaxed);
    b.end.store(0, Relaxed);
    b.cursor.store(0, Release);
}

impl<A: Art> Control<A> {
    /// A thread was attached to the runtime. `is_ui` marks the main (UI) thread, which counts as
    /// foreground from the start. Idempotent; never waits for the registry.
    pub fn thread_attached(&self, thread: ThreadHandle, tid: u32, name: &str, is_ui: bool) {
        let block = self.art.block_address(thread);
        lock(&self.pending).push(Report::Attached {
            thread,
            tid,
            name: name.to_string(),
            is_ui,
            block,
        });
    }

    /// A thread reports its own attach (after `Thread::Init`, on the thread itself, holding no ART
    /// lock, before it runs any Java code). In many-thread mode, with tracing on, it starts
    /// tracing here and now, under the registry lock as every start does, so that its first
    /// trace point (its `Thread.run()`, a task's begin) is recorded; otherwise it is queued as
    /// [`Control::thread_attached`] does, for the control thread. Returns whether it started
    /// (then no rebalance is needed for it). It waits for the registry at most
    /// [`ATTACH_WAIT`]: a flush holds it for its stop and copy (up to the stop timeout), and a
    /// thread being born must not wait that long; it is then started by the control thread's
    /// rebalance after the flush, missing the trace points it ran meanwhile.
    pub fn thread_attached_itself(
        &self,
        thread: ThreadHandle,
        tid: u32,
        name: &str,
        is_ui: bool,
    ) -> bool {
        self.thread_attached(thread, tid, name, is_ui);
        let Some(p) = &self.pool else {
            return false;
        };
        let Some(mut reg) = self.registry_within(ATTACH_WAIT) else {
            return false;
        };
        if !reg.tracing_on {
            return false;
        }
        match reg.threads.get_mut(&thread) {
            Some(row) if row.may_trace() && row.pooled.is_none() => {
                start_pooled(row, p);
                true
            }
            _ => false,
        }
    }

    /// Applies queued reports. Called with the registry locked.
    fn apply_reports(&self, reg: &mut Registry) {
        let reports = std::mem::take(&mut *lock(&self.pending));
        for report in reports {
            match report {
                Report::Attached {
                    thread,
                    tid,
                    name,
                    is_ui,
                    block,
                } => {
                    let tick = if is_ui {
                        reg.tick += 1;
                        reg.tick
                    } else {
                        0
                    };
                    let row = reg.threads.entry(thread).or_insert(ThreadRow {
                        tid,
                        name: String::new(),
                        block,
                        enabled: None,
                        last_fg: 0,
                        traced: None,
                        pooled: None,
                        next_seq: 0,
                        control: false,
                    });
                    // Another tid: a new Thread at a freed one's address (idempotent otherwise).
                    row.tid = tid;
                    row.name = name;
                    row.control = tid != 0 && tid == self.control_tid.load(Ordering::Relaxed);
                    if is_ui && row.last_fg == 0 {
                        row.last_fg = tick;
                    }
                }
                Report::Foreground(thread) => {
                    reg.tick += 1;
                    let tick = reg.tick;
                    if let Some(row) = reg.threads.get_mut(&thread) {
                        row.last_fg = tick;
                    }
                }
                Report::Renamed(thread, name) => {
                    if let Some(row) = reg.threads.get_mut(&thread) {
                        row.name = name;
                    }
                }
            }
        }
    }

    /// The registry, locked, with the queued reports applied.
    pub(super) fn registry(&self) -> std::sync::MutexGuard<'_, Registry> {
        let mut reg = lock(&self.registry);
        self.apply_reports(&mut reg);
        reg
    }

    /// [`Control::registry`] if it can be had within `wait` (polled: the holder is a flush or a
    /// rebalance, not a waiter to be woken), else None.
    fn registry_within(&self, wait: Duration) -> Option<std::sync::MutexGuard<'_, Registry>> {
        let deadline = Instant::now() + wait;
        loop {
            match self.registry.try_lock() {
                Ok(mut reg) => {
                    self.apply_reports(&mut reg);
                    return Some(reg);
                }
                Err(TryLockError::Poisoned(p)) => {
                    let mut reg = p.into_inner();
                    self.apply_reports(&mut reg);
                    return Some(reg);
                }
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_micros(50));
                }
                Err(TryLockError::WouldBlock) => return None,
            }
        }
    }

    /// A thread is detaching. Called on the thread itself (it runs no trace point meanwhile,
    /// and holds no ART lock): tracing is switched off directly and its ring is reclaimed.
    /// Call [`Control::rebalance`] afterwards (on the control thread).
    pub fn thread_detached(&self, thread: ThreadHandle) {
        let mut reg = self.registry();
        if let Some(mut row) = reg.threads.remove(&thread) {
            if let (Some(_), Some(p)) = (row.pooled.take(), &self.pool) {
                // SAFETY: the thread was registered and is still alive (it is calling).
                let b = unsafe { block_at(row.block) };
                // Seals the block it holds, also when it answered a stop that no restart
                // followed (a flush that timed out on another thread): else the block stays
                // OWNED for good (docs/many-threads.md, "Threads that start and die").
                pool::unregister(b, p);
                clear_block(b);
                // Its sealed blocks stay readable until overwritten: the flush names them.
                reg.book
                    .exited
                    .insert(row.tid, std::mem::take(&mut row.name));
            }
            if let Some(t) = row.traced.take() {
                // SAFETY: the thread was registered and is still alive (it is calling).
                let b = unsafe { block_at(row.block) };
                clear_block(b);
                t.ring.clear();
                reg.spare.push(t.ring);
            }
        }
    }

    /// The thread's name changed. Returns the command if the name was a `HUBBLE:` command (then
    /// ART keeps the real name; the caller hands the command to the control thread).
    pub fn thread_renamed(&self, thread: ThreadHandle, name: &str) -> Option<Command> {
        let command = props::parse_thread_name(name);
        if command.is_none() {
            lock(&self.pending).push(Report::Renamed(thread, name.to_string()));
        }
        command
    }

    /// The thread became foreground: it is among the N most recent now. Call
    /// [`Control::rebalance`] afterwards (on the control thread: it may wait for a stop).
    pub fn thread_foreground(&self, thread: ThreadHandle) {
        lock(&self.pending).push(Report::Foreground(thread));
    }

    /// Threads currently traced (holding a ring, or in the pool in many-thread mode).
    pub fn traced_threads(&self) -> Vec<ThreadHandle> {
        let reg = self.registry();
        let mut v: Vec<_> = reg
            .threads
            .iter()
            .filter(|(_, row)| row.traced.is_some() || row.pooled.is_some())
            .map(|(h, _)| *h)
            .collect();
        v.sort_unstable();
        v
    }
}
