//! The control thread's periodic work ([`Control::tick`], every [`crate::TICK`]): late stops,
//! lagging pool blocks, dead-loader names, idle gaps, the duration triggers
//! (`docs/protocol.md`, "Time anchors at idle gaps").

use std::sync::atomic::Ordering;

use crate::anchors;
use crate::art::{block_at, Art, ArtStateLock};
use crate::pool;

use super::Control;

impl<A: Art> Control<A> {
    /// The control thread's periodic work (every [`crate::TICK`]), after commands and
    /// properties. Each step reads the traced threads' state and never waits for one of them.
    pub fn tick(&self) {
        self.stats.ticks.fetch_add(1, Ordering::Relaxed);
        self.finish_late_stops();
        self.close_lagging_blocks();
        self.prune_dead_names();
        self.observe_idle();
        crate::triggers::tick(&self.triggers, self);
    }

    /// Many-thread mode: closes the block of every thread in native code that has held it while
    /// the pool went more than N − A tickets round (BTrace's bound on active blocks). Without it,
    /// a thread that idles for good (a pool worker waiting for work, a looper on an empty queue)
    /// would keep its half-written block OWNED: the pool could never hand it on, and with enough
    /// such threads every take would skip owned blocks and drop records. Closed under the
    /// thread's state lock, as a force stop is (`pool::force_close` re-checks that the thread is
    /// not runnable and not stopping); its next trace point takes a fresh block, `seq` going on
    /// without a gap. A runnable thread is left alone: it is writing its block, and it reaches
    /// the block's end itself.
    pub fn close_lagging_blocks(&self) {
        let Some(p) = &self.pool else { return };
        // Tickets below this one are more than N − A behind the head.
        let older_than = pool::head(p).saturating_sub(p.geometry().delay());
        let reg = self.registry();
        for (&h, row) in &reg.threads {
            if row.pooled.is_none() {
                continue;
            }
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(row.block) };
            // Without the lock, a hint that keeps the state lock off threads with nothing to
            // close; force_close decides under it.
            let lagging = pool::held_ticket(b, p).is_some_and(|t| t < older_than);
            if !lagging || self.art.is_runnable(h) {
                continue;
            }
            let lock = ArtStateLock {
                art: &self.art,
                thread: h,
            };
            if pool::force_close(b, p, &lock, older_than) {
                self.stats.lagging_closed.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Notes the traced threads' idle gaps ([`crate::anchors`]): one cursor load and one counter
    /// read per thread, no store to it.
    fn observe_idle(&self) {
        let margin = anchors::margin(self.art.timer_hz());
        let mut reg = self.registry();
        for row in reg.threads.values_mut() {
            let (anchors, slots) = match (row.traced.as_mut(), row.pooled.as_mut(), &self.pool) {
                (Some(t), _, _) => (&mut t.anchors, t.ring.slots()),
                (None, Some(pt), Some(p)) => (&mut pt.anchors, p.slots()),
                _ => continue,
            };
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(row.block) };
            let cursor = b.cursor.load(crate::sync::Ordering::Acquire);
            let now = self.art.timer();
            anchors.observe(slots, cursor, now, margin);
        }
    }
}
