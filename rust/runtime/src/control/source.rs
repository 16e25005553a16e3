//! [`Control`] as the duration triggers' [`TraceSource`]: the traced rings and pooled threads
//! under the registry lock, the symbol cache, the properties, the flush
//! (`docs/protocol.md`, "The trigger detector's reads").

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use hubble_format::Mode;

use crate::art::{block_at, Art, ThreadHandle};
use crate::block::{Slots, ThreadBlock};
use crate::pool::Pool;
use crate::props::PropertySource;
use crate::symbols::resolve_missing;
use crate::triggers::TraceSource;

use super::symbolize::ArtResolver;
use super::{lock, Control};

impl<A: Art> TraceSource for Control<A> {
    fn timer(&self) -> u64 {
        self.art.timer()
    }

    fn timer_hz(&self) -> u64 {
        self.art.timer_hz()
    }

    fn mode(&self) -> Mode {
        self.config.mode
    }

    fn properties(&self) -> &dyn PropertySource {
        &*self.props
    }

    /// Under the registry lock, which keeps each block and ring alive; a ring's run is
    /// [`super::registry::Traced::run`].
    fn for_each_traced_ring(&self, mut f: impl FnMut(ThreadHandle, &ThreadBlock, Slots<'_>, u64)) {
        let reg = self.registry();
        for (h, row) in &reg.threads {
            let Some(t) = row.traced.as_ref().filter(|t| t.stopping.is_none()) else {
                continue;
            };
            // SAFETY: registered threads are alive while the registry lock is held.
            f(*h, unsafe { block_at(row.block) }, t.ring.slots(), t.run);
        }
    }

    /// Under the registry lock; the head is [`super::registry::Pooled::since`].
    fn for_each_pooled_thread(
        &self,
        mut f: impl FnMut(&Pool, ThreadHandle, u32, &ThreadBlock, u64),
    ) {
        let Some(p) = &self.pool else { return };
        let reg = self.registry();
        for (h, row) in &reg.threads {
            let Some(pt) = row.pooled.as_ref().filter(|t| t.stopping.is_none()) else {
                continue;
            };
            // SAFETY: registered threads are alive while the registry lock is held.
            f(p, *h, row.tid, unsafe { block_at(row.block) }, pt.since);
        }
    }

    fn symbol_epoch(&self) -> u64 {
        lock(&self.symbols).epoch()
    }

    fn resolve_names(&self, pointers: &[u64], epoch: u64, names: &mut [Option<Arc<str>>]) {
        resolve_missing(
            &self.symbols,
            &ArtResolver(&self.art),
            pointers,
            epoch,
            names,
        );
    }

    fn dead_at(&self, pointers: &[u64]) -> HashMap<u64, Vec<crate::symbols::Dead>> {
        self.dead_generations_of(pointers).1
    }

    fn flush_thread(&self, thread: ThreadHandle, reason: &str) -> Option<PathBuf> {
        // Logged and counted by flush itself.
        self.flush(thread, reason).ok().and_then(|f| f.path)
    }
}
