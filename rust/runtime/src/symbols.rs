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
    /// Pointer → the methods that died at that address, oldest first: ART hands a dead loader's
    /// arenas back, so a later loader's method may take the same address and die in turn. A
    /// record names the first of them that died after it was written, or the live method.
    dead: Map<Vec<Dead>>,
    epoch: u64,
}

/// A method of an unloaded class loader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dead {
    /// Its name, resolved while it was alive.
    pub name: Arc<str>,
    /// The unload epoch it died in: windows that started at or before it may hold it.
    pub epoch: u64,
    /// The timer (the counter the trace points read, all 64 bits) when its loader was
    /// unloaded: every record of it was written before, none of a later method at its address.
    pub at: u64,
}

impl Symbols {
    /// The current unload epoch (a ring remembers it when it (re)starts).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The name for a pointer found in a window that started at `window_epoch`, if known: the
    /// first method that died at that address since, else the live one.
    pub fn lookup(&self, pointer: u64, window_epoch: u64) -> Option<Arc<str>> {
        if let Some(gens) = self.dead.get(&pointer) {
            if let Some(d) = gens.iter().find(|d| d.epoch >= window_epoch) {
                return Some(d.name.clone());
            }
        }
        self.live.get(&pointer).cloned()
    }

    /// Remembers a resolved name.
    pub fn insert(&mut self, pointer: u64, name: Arc<str>) {
        if self.live.len() >= MAX_CACHED {
            self.live.clear();
        }
        self.live.insert(pointer, name);
    }

    /// A class loader is being unloaded at timer value `at`: `names` are its methods, resolved
    /// while still valid (windows that started before now name them from here, never through
    /// ART); `owned` is every method it owns (evicted from the live cache, since the addresses
    /// may be reused by methods of a later loader).
    pub fn unload(&mut self, owned: &[u64], names: Vec<(u64, Arc<str>)>, at: u64) {
        for p in owned {
            self.live.remove(p);
        }
        for (p, name) in names {
            self.dead.entry(p).or_default().push(Dead {
                name,
                epoch: self.epoch,
                at,
            });
        }
        self.epoch += 1;
    }

    /// Forgets dead names no window can contain any more: every ring restarted after `oldest`.
    pub fn prune_dead(&mut self, oldest_window_epoch: u64) {
        self.dead.retain(|_, gens| {
            gens.retain(|d| d.epoch >= oldest_window_epoch);
            !gens.is_empty()
        });
    }

    /// Number of dead-method names kept (every generation of every address).
    pub fn dead_len(&self) -> usize {
        self.dead.values().map(Vec::len).sum()
    }

    /// Whether `pointer` has a dead-loader name (of any epoch).
    pub fn has_dead(&self, pointer: u64) -> bool {
        self.dead.contains_key(&pointer)
    }

    /// The methods that died at `pointer`, oldest first (empty if none).
    pub fn dead_at(&self, pointer: u64) -> &[Dead] {
        self.dead.get(&pointer).map_or(&[], Vec::as_slice)
    }

    /// Keeps only the dead-loader names whose pointer `keep` says may still be read.
    pub fn retain_dead(&mut self, keep: impl Fn(u64) -> bool) {
        self.dead.retain(|p, _| keep(*p));
    }
}

/// Pointers resolved through ART per round of [`resolve_missing`]: bounds how long the GC's
/// class-loader unloading can wait for the control thread (one batch of `PrettyMethod`, well
/// under a millisecond), never for a stop or the disk.
pub const RESOLVE_CHUNK: usize = 256;

/// ART's side of the symbolization handshake (`hubble_bridge.cc`): resolution under the unload
/// lock, refused when an unload completed since the generation the caller read.
pub trait Resolver {
    /// Unloads completed so far.
    fn generation(&self) -> u64;
    /// Names of `pointers` if the generation is still `generation`; `false` (nothing read)
    /// otherwise.
    fn resolve(&self, pointers: &[u64], generation: u64, out: &mut Vec<String>) -> bool;
}

/// Access to the symbol cache under its (leaf) lock.
pub trait SymbolsCell {
    /// Runs `f` with the cache locked.
    fn with<T>(&self, f: impl FnOnce(&mut Symbols) -> T) -> T;
}

/// Fills every `None` of `names` (for `pointers[i]`, of a window that started at
/// `window_epoch`): dead loaders' names from the cache, the rest through ART in chunks.
///
/// Why it never reads freed memory (docs/protocol.md): an unload records its loader's names
/// (and bumps the cache epoch) BEFORE it bumps ART's generation, both under ART's unload lock.
/// Each round reads the generation first, then picks the pointers the cache cannot name; ART
/// resolves them under the same lock only if the generation is unchanged, so no unload ran in
/// between and any earlier one is already in the cache. Names go into the live cache only if
/// the cache's epoch is the one the round started with: a later unload may have evicted them.
pub fn resolve_missing(
    cell: &impl SymbolsCell,
    art: &impl Resolver,
    pointers: &[u64],
    window_epoch: u64,
    names: &mut [Option<Arc<str>>],
) {
    let pending: Vec<usize> = (0..pointers.len())
        .filter(|&i| names[i].is_none())
        .collect();
    let mut batch_at = Vec::with_capacity(RESOLVE_CHUNK);
    let mut batch = Vec::with_capacity(RESOLVE_CHUNK);
    let mut resolved = Vec::with_capacity(RESOLVE_CHUNK);
    // One chunk at a time, each looked up in the cache once per attempt: a refused attempt (an
    // unload ran meanwhile) looks its chunk up again, the rest of the window is not re-scanned.
    for chunk in pending.chunks(RESOLVE_CHUNK) {
        loop {
            let generation = art.generation();
            batch_at.clear();
            let epoch = cell.with(|sym| {
                for &i in chunk {
                    if names[i].is_some() {
                        continue;
                    }
                    match sym.lookup(pointers[i], window_epoch) {
                        Some(name) => names[i] = Some(name),
                        None => batch_at.push(i),
                    }
                }
                sym.epoch()
            });
            if batch_at.is_empty() {
                break;
            }
            batch.clear();
            batch.extend(batch_at.iter().map(|&i| pointers[i]));
            resolved.clear();
            if !art.resolve(&batch, generation, &mut resolved) {
                continue; // An unload ran meanwhile: ask the cache again.
            }
            cell.with(|sym| {
                let cache = sym.epoch() == epoch;
                // A pointer ART gave no name for stays without one (and out of the file).
                for (&i, name) in batch_at.iter().zip(resolved.drain(..)) {
                    let name: Arc<str> = Arc::from(name);
                    if cache {
                        sym.insert(pointers[i], name.clone());
                    }
                    names[i] = Some(name);
                }
            });
            break;
        }
    }
}

impl SymbolsCell for std::sync::Mutex<Symbols> {
    fn with<T>(&self, f: impl FnOnce(&mut Symbols) -> T) -> T {
        f(&mut self.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn name(s: &str) -> Arc<str> {
        Arc::from(s)
    }

    /// Live names are cached until the cache is full, then it starts over.
    #[test]
    fn live_names_are_kept_until_the_cache_is_full() {
        let mut s = Symbols::default();
        s.insert(0x10, name("a"));
        s.insert(0x20, name("b"));
        assert_eq!(s.lookup(0x10, 0).as_deref(), Some("a"));
        assert_eq!(s.lookup(0x20, 0).as_deref(), Some("b"));
        for p in 0..MAX_CACHED as u64 - 2 {
            s.insert(0x1000 + p, name("x"));
        }
        assert_eq!(s.lookup(0x10, 0).as_deref(), Some("a"), "full, not over");
        s.insert(0x30, name("c"));
        assert_eq!(s.lookup(0x10, 0), None, "over: started afresh");
        assert_eq!(s.lookup(0x30, 0).as_deref(), Some("c"));
    }

    /// An unload moves a loader's names to the dead names of its epoch and counts the epoch up:
    /// windows that started at or before it name the pointers from there, later ones (the
    /// address may be a new loader's method) do not; pruning forgets what no window reaches.
    #[test]
    fn unloads_date_their_names_and_pruning_forgets_unreachable_ones() {
        let mut s = Symbols::default();
        assert_eq!(s.epoch(), 0);
        s.insert(0x10, name("live"));
        s.unload(&[0x10, 0x18], vec![(0x10, name("a.dead"))], 100);
        assert_eq!(s.epoch(), 1);
        s.unload(&[0x20], vec![(0x20, name("b.dead"))], 200);
        assert_eq!(s.epoch(), 2);
        assert_eq!(s.lookup(0x10, 0).as_deref(), Some("a.dead"));
        assert_eq!(s.lookup(0x10, 1), None, "a window started after the unload");
        assert_eq!(s.lookup(0x20, 1).as_deref(), Some("b.dead"));
        assert!(s.has_dead(0x10) && s.has_dead(0x20) && !s.has_dead(0x18));
        assert_eq!(s.dead_len(), 2);
        // Every window started at epoch 1 or later: the first unload's names are unreachable.
        s.prune_dead(1);
        assert!(!s.has_dead(0x10) && s.has_dead(0x20));
        s.retain_dead(|p| p != 0x20);
        assert_eq!(s.dead_len(), 0);
    }

    /// Two loaders' methods died at one address in turn: a window that started before both
    /// names the first (the second overwrote it before), one started between them the second.
    #[test]
    fn an_address_reused_and_unloaded_again_keeps_both_names() {
        let mut s = Symbols::default();
        s.unload(&[0x10], vec![(0x10, name("A.m"))], 100);
        s.unload(&[0x10], vec![(0x10, name("B.m"))], 200);
        assert_eq!(s.lookup(0x10, 0).as_deref(), Some("A.m"));
        assert_eq!(s.lookup(0x10, 1).as_deref(), Some("B.m"));
        assert_eq!(s.lookup(0x10, 2), None);
        assert_eq!(s.dead_len(), 2);
        let at: Vec<u64> = s.dead_at(0x10).iter().map(|d| d.at).collect();
        assert_eq!(at, [100, 200]);
        s.prune_dead(1);
        assert_eq!(
            s.lookup(0x10, 0).as_deref(),
            Some("B.m"),
            "A's window is gone"
        );
    }
}
