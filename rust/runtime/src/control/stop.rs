//! The §6 stop, control side: request (the doorbell), bounded backing-off poll ([`Backoff`]),
//! the native-state force stop, for one ring thread or for every pooled thread at once; and
//! the tick's completion of stops that timed out (`docs/protocol.md`, "Control side").

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use log::{info, warn};

use crate::art::{block_at, Art, ArtStateLock, ThreadHandle};
use crate::block::{self, ForceStop, ThreadBlock};
use crate::pool;

use super::registry::{Registry, StopCause};
use super::{Control, RuntimeError};

/// What one look at a thread asked to stop found.
enum Polled {
    Stopped(usize),
    Pending,
    NotTracing,
}

/// Waiting for stops: spin briefly (a stop is usually answered within microseconds), then
/// yield, then sleep with doubling up to `max_sleep`, never past the deadline.
struct Backoff {
    deadline: Instant,
    max_sleep: Duration,
    spins: u32,
    sleep: Duration,
}

impl Backoff {
    fn new(timeout: Duration, max_sleep: Duration) -> Backoff {
        Backoff {
            deadline: Instant::now() + timeout,
            max_sleep,
            spins: 0,
            sleep: Duration::from_micros(2),
        }
    }

    /// Whether the wait is past its spinning and yielding: a stop not answered by then is worth
    /// a checkpoint (a lock and a CAS in ART, and a closure run by the thread).
    fn sleeping(&self) -> bool {
        self.spins >= 80
    }

    /// Waits a little; false once the deadline has passed.
    fn wait(&mut self) -> bool {
        // A stop is usually answered within microseconds: spin, then yield, then sleep.
        match self.spins {
            0..=63 => {
                self.spins += 1;
                std::hint::spin_loop();
            }
            64..=79 => {
                self.spins += 1;
                std::thread::yield_now();
            }
            _ => {
                let now = Instant::now();
                if now >= self.deadline {
                    return false;
                }
                if self.max_sleep.is_zero() {
                    std::thread::yield_now();
                } else {
                    std::thread::sleep(self.sleep.min(self.deadline - now));
                    self.sleep = (self.sleep * 2).min(self.max_sleep);
                }
            }
        }
        true
    }
}

/// The stop checkpoint of one thread during one wait ([`Art::request_stop_checkpoint`]): asked
/// once it is placed; while the thread is not runnable (ART refuses then), asked again at the next
/// poll, unless the force stop ends the wait first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Checkpoint {
    NotYet,
    Placed,
}

impl Checkpoint {
    fn ask_once<A: Art>(&mut self, control: &Control<A>, h: ThreadHandle) {
        if *self == Checkpoint::NotYet && control.art.request_stop_checkpoint(h) {
            control
                .stats
                .stop_checkpoints
                .fetch_add(1, Ordering::Relaxed);
            *self = Checkpoint::Placed;
        }
    }
}

/// A thread stopped by [`Control::stop_pooled`].
pub(super) struct PoolStopped {
    pub(super) thread: ThreadHandle,
    /// Its block word `end` at the stop: the block it holds, or its next `seq` if none.
    pub(super) block: usize,
    /// The end it published (an address in that block, or `SEALED`).
    pub(super) end: usize,
}

impl<A: Art> Control<A> {
    /// Stops a thread traced in a ring (§6): doorbell, bounded backing-off poll, and the native-state
    /// force stop. Returns the end position (an address). On a timeout the request stays, with
    /// its cause, for [`Control::tick`]; a flush's cause outranks a reclaim's.
    pub(super) fn stop_traced(
        &self,
        reg: &mut Registry,
        h: ThreadHandle,
        cause: StopCause,
    ) -> Result<usize, RuntimeError> {
        let row = reg
            .threads
            .get_mut(&h)
            .ok_or(RuntimeError::UnknownThread(h))?;
        let t = row.traced.as_mut().ok_or(RuntimeError::NotTraced(h))?;
        // SAFETY: registered threads are alive while the registry lock (held by our caller) is.
        let b = unsafe { block_at(row.block) };
        match &t.stopping {
            None => {
                block::request_stop(b);
                t.stopping = Some(cause);
            }
            Some(StopCause::Reclaim) if cause != StopCause::Reclaim => t.stopping = Some(cause),
            Some(_) => {}
        }
        let end = self.wait_stopped(b, h)?;
        t.stopping = None;
        Ok(end)
    }

    fn wait_stopped(&self, b: &ThreadBlock, h: ThreadHandle) -> Result<usize, RuntimeError> {
        let mut backoff = Backoff::new(self.config.stop_timeout, self.config.max_poll_sleep);
        let mut checkpoint = Checkpoint::NotYet;
        loop {
            if backoff.sleeping() {
                checkpoint.ask_once(self, h);
            }
            match self.poll_stop(b, h) {
                Polled::Stopped(end) => return Ok(end),
                Polled::NotTracing => return Err(RuntimeError::NotTraced(h)),
                Polled::Pending => {}
            }
            if !backoff.wait() {
                return Err(RuntimeError::StopTimeout(h, self.config.stop_timeout));
            }
        }
    }

    /// One look at a thread asked to stop: its published end, or (not running managed code)
    /// the §6 force stop; counted in the stats.
    fn poll_stop(&self, b: &ThreadBlock, h: ThreadHandle) -> Polled {
        if let Some(end) = block::poll_stopped(b) {
            self.stats.cooperative_stops.fetch_add(1, Ordering::Relaxed);
            return Polled::Stopped(end);
        }
        if self.art.is_runnable(h) {
            return Polled::Pending;
        }
        let lock = ArtStateLock {
            art: &self.art,
            thread: h,
        };
        match block::force_stop(b, &lock) {
            ForceStop::Forced(end) => {
                self.stats.forced_stops.fetch_add(1, Ordering::Relaxed);
                Polled::Stopped(end)
            }
            ForceStop::AlreadyStopped(end) => {
                self.stats.cooperative_stops.fetch_add(1, Ordering::Relaxed);
                Polled::Stopped(end)
            }
            ForceStop::Runnable => {
                self.stats.recheck_saves.fetch_add(1, Ordering::Relaxed);
                Polled::Pending
            }
            ForceStop::NotTracing => Polled::NotTracing,
        }
    }

    /// Rings the stop doorbell of every traced thread whose stop is not requested yet, with
    /// `cause`; a pending reclaim is upgraded to `cause`, as in [`Control::stop_traced`]. Returns
    /// the traced threads. Two stores per thread: never waits for one.
    pub(super) fn request_stops(&self, cause: StopCause) -> Vec<ThreadHandle> {
        let mut reg = self.registry();
        let mut traced = Vec::new();
        for (h, row) in reg.threads.iter_mut() {
            let Some(t) = row.traced.as_mut() else {
                continue;
            };
            match &t.stopping {
                None => {
                    // SAFETY: registered threads are alive while the registry lock is held.
                    block::request_stop(unsafe { block_at(row.block) });
                    t.stopping = Some(cause.clone());
                }
                Some(StopCause::Reclaim) => t.stopping = Some(cause.clone()),
                Some(StopCause::Flush(_)) => {}
            }
            traced.push(*h);
        }
        traced.sort_unstable();
        traced
    }

    /// Many-thread mode's all-threads stop (`docs/many-threads.md`, "Stopping all threads"):
    /// every doorbell first, then polls every thread in rounds until each has published its
    /// end: by itself (Acquire), or by the §6 force stop when it is not runnable; the others
    /// get the doorbell again (`pool::ring_again`: a block take's plain `limit` store may have
    /// hidden the first). Returns the stopped threads, and those still running at the stop
    /// timeout, which keep their request with `cause` for [`Control::tick`].
    pub(super) fn stop_pooled(
        &self,
        reg: &mut Registry,
        threads: &[ThreadHandle],
        cause: &StopCause,
    ) -> (Vec<PoolStopped>, Vec<ThreadHandle>) {
        let mut pending = Vec::with_capacity(threads.len());
        for &h in threads {
            let Some(row) = reg.threads.get_mut(&h) else {
                continue;
            };
            let Some(pt) = row.pooled.as_mut() else {
                continue;
            };
            match &pt.stopping {
                None => {
                    // SAFETY: registered threads are alive while the registry lock is held.
                    block::request_stop(unsafe { block_at(row.block) });
                    pt.stopping = Some(cause.clone());
                }
                Some(StopCause::Reclaim) if *cause != StopCause::Reclaim => {
                    pt.stopping = Some(cause.clone())
                }
                Some(_) => {}
            }
            pending.push((h, row.block, Checkpoint::NotYet));
        }
        let mut stopped = Vec::with_capacity(pending.len());
        let mut backoff = Backoff::new(self.config.stop_timeout, self.config.max_poll_sleep);
        loop {
            let sleeping = backoff.sleeping();
            pending.retain_mut(|(h, addr, checkpoint)| {
                let (h, addr) = (*h, *addr);
                if sleeping {
                    checkpoint.ask_once(self, h);
                }
                // SAFETY: registered threads are alive while the registry lock is held.
                let b = unsafe { block_at(addr) };
                let end = match self.poll_stop(b, h) {
                    Polled::Stopped(end) => Some(end),
                    Polled::Pending => None,
                    // Cursor 0 and nothing published: it holds no block (SEALED as its end:
                    // nothing to close, a restart starts it afresh).
                    Polled::NotTracing => Some(hubble_format::pool::SEALED as usize),
                };
                match end {
                    Some(end) => {
                        stopped.push(PoolStopped {
                            thread: h,
                            block: b.end.load(crate::sync::Ordering::Relaxed),
                            end,
                        });
                        false
                    }
                    None => {
                        pool::ring_again(b);
                        true
                    }
                }
            });
            if pending.is_empty() {
                break;
            }
            if !backoff.wait() {
                break;
            }
        }
        for s in &stopped {
            if let Some(pt) = reg
                .threads
                .get_mut(&s.thread)
                .and_then(|row| row.pooled.as_mut())
            {
                pt.stopping = None;
            }
        }
        (stopped, pending.into_iter().map(|(h, _, _)| h).collect())
    }

    /// Completes a pending stop and restarts the ring where the thread stopped.
    fn restart_stopped(&self, h: ThreadHandle) -> Result<(), RuntimeError> {
        let mut reg = self.registry();
        let end = self.stop_traced(&mut reg, h, StopCause::Reclaim)?;
        let row = reg
            .threads
            .get_mut(&h)
            .ok_or(RuntimeError::UnknownThread(h))?;
        let t = row.traced.as_mut().ok_or(RuntimeError::NotTraced(h))?;
        let slots = t.ring.slots();
        let ts = self.art.timer() as u32;
        // SAFETY: registered threads are alive while the registry lock is held.
        let b = unsafe { block_at(row.block) };
        // The same window goes on (no file was written): its epoch stays.
        block::start(b, slots, self.config.mode, slots.offset(end), ts);
        // Older positions are behind the start record now.
        t.anchors.clear();
        Ok(())
    }

    /// A stop that timed out (the thread ran a long stretch without a trace point)
    /// stays requested; once the thread has answered it, or can be force-stopped because it left
    /// managed code, the flush or reclaim that asked for it is finished here and tracing restarts.
    /// Without this the thread would stay silently untraced until the next explicit flush, whose
    /// window would end at the old stop.
    pub(super) fn finish_late_stops(&self) {
        let ready: Vec<(ThreadHandle, StopCause)> = {
            let reg = self.registry();
            reg.threads
                .iter()
                .filter_map(|(h, row)| {
                    let cause = match (&row.traced, &row.pooled) {
                        (Some(t), _) => t.stopping.clone()?,
                        (None, Some(pt)) => pt.stopping.clone()?,
                        (None, None) => return None,
                    };
                    // SAFETY: registered threads are alive while the registry lock is held.
                    let b = unsafe { block_at(row.block) };
                    let answered = block::poll_stopped(b).is_some() || !self.art.is_runnable(*h);
                    answered.then_some((*h, cause))
                })
                .collect()
        };
        if self.pool.is_some() {
            // One flush of every thread, or one rebalance, covers every late thread.
            let flush = ready.iter().find_map(|(_, c)| match c {
                StopCause::Flush(reason) => Some(reason.clone()),
                StopCause::Reclaim => None,
            });
            if let Some(reason) = flush {
                info!("hubble: the pool's threads stopped late; finishing the flush ({reason})");
                // Logged and counted by flush itself.
                let _ = self.flush(0, &reason);
            } else if !ready.is_empty() {
                if let Err(e) = self.rebalance() {
                    warn!("hubble: {e}");
                }
            }
            return;
        }
        for (h, cause) in ready {
            match cause {
                StopCause::Flush(reason) => {
                    info!("hubble: thread {h:#x} stopped late; finishing its flush ({reason})");
                    // Logged and counted by flush itself.
                    let _ = self.flush(h, &reason);
                }
                StopCause::Reclaim => {
                    // Rebalance reclaims it if it is still unwanted (its stop is answered now);
                    // if it is wanted again by now, it kept its ring: restart it where it stopped.
                    let r = self.rebalance().and_then(|()| {
                        let pending = self.registry().threads.get(&h).is_some_and(|row| {
                            row.traced.as_ref().is_some_and(|t| t.stopping.is_some())
                        });
                        if pending {
                            self.restart_stopped(h)
                        } else {
                            Ok(())
                        }
                    });
                    if let Err(e) = r {
                        warn!("hubble: {e}");
                    }
                }
            }
        }
    }
}
