//! Symbol cache: `ArtMethod*` → pretty name, with per-class-loader eviction.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use crate::flush::PointerHasher;

type Map<V> = HashMap<u64, V, BuildHasherDefault<PointerHasher>>;

/// Entries kept before the cache is simply dropped (names are cheap to resolve again).
pub const MAX_CACHED: usize = 1 << 20;

/// Resolved names, plus the names of methods whose class loader is gone.
#[derive(Default)]
pub struct Symbols {
    live: Map<Arc<str>>,
    /// Pointer → (name, unload epoch): the method died when the epoch was `epoch`; rings whose
    /// window started at or before that epoch may still hold the pointer and must use this name,
    /// never dereference it.
    dead: Map<(Arc<str>, u64)>,
    epoch: u64,
}

impl Symbols {
    /// The current unload epoch (a ring remembers it when it (re)starts).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The name for a pointer found in a window that started at `window_epoch`, if known.
    pub fn lookup(&self, pointer: u64, window_epoch: u64) -> Option<Arc<str>> {
        if let Some((name, died)) = self.dead.get(&pointer) {
            if *died >= window_epoch {
                return Some(name.clone());
            }
        }
        self.live.get(&pointer).cloned()
    }

    /// Whether a pointer of a window that started at `window_epoch` belongs to a dead loader
    /// (and so must not be handed to ART).
    pub fn is_dead(&self, pointer: u64, window_epoch: u64) -> bool {
        self.dead
            .get(&pointer)
            .is_some_and(|(_, d)| *d >= window_epoch)
    }

    /// Remembers a resolved name.
    pub fn insert(&mut self, pointer: u64, name: Arc<str>) {
        if self.live.len() >= MAX_CACHED {
            self.live.clear();
        }
        self.live.insert(pointer, name);
    }

    /// A class loader is being unloaded: `names` are the buffered pointers into it, resolved
    /// while still valid; `owned` is every method it owns (evicted from the live cache, since
    /// the addresses may be reused by methods of a later loader).
    pub fn unload(&mut self, owned: &[u64], names: Vec<(u64, Arc<str>)>) {
        for p in owned {
            self.live.remove(p);
        }
        for (p, name) in names {
            self.dead.insert(p, (name, self.epoch));
        }
        self.epoch += 1;
    }

    /// Forgets dead names no window can contain any more: every ring restarted after `oldest`.
    pub fn prune_dead(&mut self, oldest_window_epoch: u64) {
        self.dead
            .retain(|_, (_, died)| *died >= oldest_window_epoch);
    }

    /// Number of live entries.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether the live cache is empty.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }
}
