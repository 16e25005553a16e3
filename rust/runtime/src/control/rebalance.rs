//! Which registered threads are traced: the N most recently foreground ones in rings, or every
//! one in the pool (`docs/many-threads.md`, "The control plane"), and the commands that change
//! the set.

use std::sync::atomic::Ordering;

use log::warn;

use crate::anchors::Anchors;
use crate::art::{block_at, Art, ThreadHandle};
use crate::block;
use crate::pool::{self, Pool};
use crate::ring::Ring;

use super::registry::{clear_block, start_pooled, StopCause, Traced};
use super::{lock, Control, RuntimeError};

impl<A: Art> Control<A> {
    /// Per-thread enable (counts as foreground now) or disable.
    pub fn set_thread_enabled(
        &self,
        thread: ThreadHandle,
        enabled: bool,
    ) -> Result<(), RuntimeError> {
        {
            let mut reg = self.registry();
            reg.tick += 1;
            let tick = reg.tick;
            let row = reg
                .threads
                .get_mut(&thread)
                .ok_or(RuntimeError::UnknownThread(thread))?;
            row.enabled = Some(enabled);
            if enabled {
                row.last_fg = tick;
            }
        }
        self.rebalance()
    }

    /// Sets N.
    pub fn set_thread_count(&self, n: usize) -> Result<(), RuntimeError> {
        self.threads_n.store(n.max(1), Ordering::Relaxed);
        self.rebalance()
    }

    /// Turns tracing on for the N most-recently-foreground enabled threads.
    pub fn start_tracing(&self) -> Result<(), RuntimeError> {
        self.registry().tracing_on = true;
        self.rebalance()
    }

    /// Turns tracing off everywhere (rings are kept for a restart).
    pub fn stop_tracing(&self) -> Result<(), RuntimeError> {
        self.registry().tracing_on = false;
        self.rebalance()
    }

    /// Makes the traced set the N most-recently-foreground enabled threads: stops and reclaims
    /// the rings of threads that fell out (oldest first), then starts the newcomers.
    pub fn rebalance(&self) -> Result<(), RuntimeError> {
        if let Some(p) = &self.pool {
            return self.rebalance_pool(p);
        }
        let n = self.threads_n.load(Ordering::Relaxed);
        let mut reg = self.registry();
        let mut wanted: Vec<(u64, ThreadHandle)> = if reg.tracing_on {
            reg.threads
                .iter()
                .filter(|(_, row)| {
                    row.may_trace() && (row.last_fg > 0 || row.enabled == Some(true))
                })
                .map(|(h, row)| (row.last_fg, *h))
                .collect()
        } else {
            Vec::new()
        };
        wanted.sort_unstable_by(|a, b| b.cmp(a));
        wanted.truncate(n);
        let keep: Vec<ThreadHandle> = wanted.iter().map(|w| w.1).collect();
        let mut result = Ok(());
        // Reclaim, oldest foreground first.
        let mut drop_list: Vec<(u64, ThreadHandle)> = reg
            .threads
            .iter()
            .filter(|(h, row)| row.traced.is_some() && !keep.contains(h))
            .map(|(h, row)| (row.last_fg, *h))
            .collect();
        drop_list.sort_unstable();
        for (_, h) in drop_list {
            match self.stop_traced(&mut reg, h, StopCause::Reclaim) {
                Ok(_) => {
                    let row = reg.threads.get_mut(&h).expect("listed");
                    let t = row.traced.take().expect("traced");
                    // SAFETY: registered threads are alive while the registry lock is held.
                    clear_block(unsafe { block_at(row.block) });
                    t.ring.clear();
                    reg.spare.push(t.ring);
                }
                Err(err) => {
                    warn!("hubble: cannot reclaim the ring of {h:#x}: {err}");
                    result = Err(err);
                }
            }
        }
        let in_use = reg
            .threads
            .values()
            .filter(|row| row.traced.is_some())
            .count();
        let mut free = n.saturating_sub(in_use);
        for h in keep {
            if free == 0 {
                break;
            }
            if reg.threads.get(&h).is_some_and(|row| row.traced.is_some()) {
                continue;
            }
            let ring = match reg.spare.pop() {
                Some(r) if r.bytes() == self.config.ring_bytes => r,
                _ => Ring::new(self.config.ring_bytes).map_err(RuntimeError::Map)?,
            };
            let epoch = lock(&self.symbols).epoch();
            let ts = self.art.timer() as u32;
            reg.runs += 1;
            let run = reg.runs;
            let row = reg.threads.get_mut(&h).expect("listed");
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(row.block) };
            block::start(b, ring.slots(), self.config.mode, 0, ts);
            row.traced = Some(Traced {
                ring,
                run,
                start_epoch: epoch,
                stopping: None,
                anchors: Anchors::default(),
            });
            free -= 1;
        }
        result
    }

    /// Many-thread mode: every registered thread not disabled traces while tracing is on (a
    /// start costs no memory: the thread takes a block at its first trace point). The others
    /// are stopped, their block sealed from their end (readable until overwritten) and their
    /// words cleared.
    fn rebalance_pool(&self, p: &Pool) -> Result<(), RuntimeError> {
        let mut reg = self.registry();
        let on = reg.tracing_on;
        let mut leaving = Vec::new();
        let mut handles: Vec<ThreadHandle> = reg.threads.keys().copied().collect();
        handles.sort_unstable();
        for h in handles {
            let row = reg.threads.get_mut(&h).expect("listed");
            let wanted = on && row.may_trace();
            if wanted && row.pooled.is_none() {
                start_pooled(row, p);
            } else if !wanted && row.pooled.is_some() {
                leaving.push(h);
            }
        }
        if leaving.is_empty() {
            return Ok(());
        }
        let (stopped, late) = self.stop_pooled(&mut reg, &leaving, &StopCause::Reclaim);
        for s in stopped {
            let row = reg.threads.get_mut(&s.thread).expect("listed");
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(row.block) };
            pool::unregister(b, p);
            // Skip one `seq`: a later start is not the continuation of this run.
            row.next_seq = (b.end.load(crate::sync::Ordering::Relaxed) as u32).wrapping_add(1);
            clear_block(b);
            row.pooled = None;
        }
        match late.first() {
            None => Ok(()),
            Some(&h) => Err(RuntimeError::StopTimeout(h, self.config.stop_timeout)),
        }
    }
}
