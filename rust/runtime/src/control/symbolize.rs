//! Names for the flushes' method pointers, the ClassLoader hook that keeps the names of dying
//! loaders, and the tick's pruning of those names (`docs/protocol.md`, "Class-loader
//! unloading").

use std::sync::atomic::Ordering;
use std::sync::Arc;

use log::info;

use crate::art::Art;
use crate::flush::{DistinctPointers, PointerSet};
use crate::symbols::{resolve_missing, Resolver, Symbols};

use super::{lock, Control};

impl<A: Art> Control<A> {
    /// Names for `distinct` pointers, sorted by pointer: `decided` first (sorted by pointer:
    /// [`crate::reuse::split_reused`]), then the cache and the dead-loader names, then ART for the
    /// rest ([`crate::symbols::resolve_missing`]: in chunks, no lock of ours held across the call
    /// into ART).
    pub(super) fn symbolize(
        &self,
        distinct: DistinctPointers,
        window_epoch: u64,
        decided: &[(u64, Arc<str>)],
    ) -> Vec<(u64, Arc<str>)> {
        // The file wants the pointers in order: sorting them bare moves 8 bytes an element,
        // sorting (pointer, name) pairs afterwards 24.
        let mut pointers: Vec<u64> = distinct.iter().collect();
        drop(distinct);
        pointers.sort_unstable();
        let mut names: Vec<Option<Arc<str>>> = pointers
            .iter()
            .map(|p| {
                decided
                    .binary_search_by_key(p, |(q, _)| *q)
                    .ok()
                    .map(|i| decided[i].1.clone())
            })
            .collect();
        resolve_missing(
            &self.symbols,
            &ArtResolver(&self.art),
            &pointers,
            window_epoch,
            &mut names,
        );
        let out: Vec<(u64, Arc<str>)> = pointers
            .into_iter()
            .zip(names)
            .filter_map(|(p, name)| Some((p, name?)))
            .collect();
        // Dead names older than every ring's window can go.
        let oldest = lock(&self.registry)
            .threads
            .values()
            .filter_map(|row| row.traced.as_ref().map(|t| t.start_epoch))
            .min();
        if let Some(oldest) = oldest {
            lock(&self.symbols).prune_dead(oldest);
        }
        out
    }

    /// ClassLoader hook: called by ART under its unload lock, on the GC thread holding the
    /// mutator lock, before `loader`'s memory (its `ArtMethod`s) is freed. Every method of the
    /// loader is named now, while it is alive, and remembered as dead: windows that started
    /// before now take its name from the cache and never hand the pointer to ART (see
    /// [`crate::symbols::resolve_missing`] for why no flush in progress can either). It takes
    /// only the symbol cache's leaf lock: it never waits for a flush, a traced thread or the
    /// disk, so it cannot stall the GC or deadlock with a pending SuspendAll (docs/protocol.md).
    /// Returns how many methods were named.
    pub fn class_loader_unloading(&self, loader: usize) -> usize {
        let mut owned = Vec::new();
        self.art.loader_methods(loader, &mut owned);
        let mut names = Vec::with_capacity(owned.len());
        self.art.resolve(&owned, &mut names);
        let named: Vec<(u64, Arc<str>)> = owned
            .iter()
            .copied()
            .zip(names.into_iter().map(Arc::from))
            .collect();
        let n = named.len();
        let at = self.art.timer();
        lock(&self.symbols).unload(&owned, named, at);
        self.stats
            .unloaded_names
            .fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// Bounds the dead-loader names: past `dead_names_scan_at` of them, scans every traced ring
    /// (relaxed reads while the threads run) and keeps only the names of pointers still in one.
    /// Exact because a dead loader's methods can never be written again (nothing can call
    /// them): a pointer absent now stays absent. The flush lock keeps any flush's copy, the
    /// only other place a window lives, from being between its copy and its symbolization.
    pub(super) fn prune_dead_names(&self) {
        if lock(&self.symbols).dead_len() < self.config.dead_names_scan_at {
            return;
        }
        let _flushing = lock(&self.flush_lock);
        let mut present = PointerSet::default();
        if let Some(p) = &self.pool {
            // Every slot of the pool (headers too: a false candidate only keeps a name longer).
            // The first slot has no predecessor: 0, never a method.
            let slots = p.copy();
            let sym = lock(&self.symbols);
            keep_dead_pointers(&sym, slots.iter().copied(), 0, &mut present);
        }
        {
            let reg = self.registry();
            let sym = lock(&self.symbols);
            for t in reg.threads.values().filter_map(|row| row.traced.as_ref()) {
                let slots = t.ring.slots().slots;
                let load = |s: &crate::sync::AtomicU64| s.load(crate::sync::Ordering::Relaxed);
                // A ring's first slot follows its last.
                let last = slots.last().map_or(0, load);
                keep_dead_pointers(&sym, slots.iter().map(load), last, &mut present);
            }
        }
        let mut sym = lock(&self.symbols);
        let before = sym.dead_len();
        sym.retain_dead(|p| present.contains(&p));
        info!(
            "hubble: dead-loader names {before} -> {} (the rest are in no ring)",
            sym.dead_len()
        );
    }

    /// The methods that died at each of `distinct`'s addresses (those with any), and the
    /// symbol epoch before the first was read: a later unload is then found by a lookup at that
    /// epoch, never resolved through ART. In chunks, so the GC's unload hook never waits for
    /// more than one chunk's lookups.
    pub(super) fn dead_generations(
        &self,
        distinct: &DistinctPointers,
    ) -> (
        u64,
        std::collections::HashMap<u64, Vec<crate::symbols::Dead>>,
    ) {
        let pointers: Vec<u64> = distinct.iter().collect();
        self.dead_generations_of(&pointers)
    }

    /// [`Control::dead_generations`] of `pointers`.
    pub(super) fn dead_generations_of(
        &self,
        pointers: &[u64],
    ) -> (
        u64,
        std::collections::HashMap<u64, Vec<crate::symbols::Dead>>,
    ) {
        let mut epoch = None;
        let mut dead = std::collections::HashMap::new();
        for chunk in pointers.chunks(crate::symbols::RESOLVE_CHUNK) {
            let sym = lock(&self.symbols);
            epoch.get_or_insert(sym.epoch());
            for &p in chunk {
                let gens = sym.dead_at(p);
                if !gens.is_empty() {
                    dead.insert(p, gens.to_vec());
                }
            }
        }
        (epoch.unwrap_or_else(|| lock(&self.symbols).epoch()), dead)
    }

    /// Dead-loader names kept (for tests and logs).
    pub fn dead_names(&self) -> usize {
        lock(&self.symbols).dead_len()
    }
}

/// [`Resolver`] through [`Art`].
pub(super) struct ArtResolver<'a, A: Art>(pub(super) &'a A);

impl<A: Art> Resolver for ArtResolver<'_, A> {
    fn generation(&self) -> u64 {
        self.0.unload_generation()
    }
    fn resolve(&self, pointers: &[u64], generation: u64, out: &mut Vec<String>) -> bool {
        self.0.resolve_unless_unloaded(pointers, generation, out)
    }
}

/// Adds to `present` every pointer among `slots` (read in order, `before` the slot preceding
/// the first) that has a dead-loader name: a narrow entry's low word, or the slot before a wide
/// entry's marker (low word 1). Exits, pads and start records (0, 2, 3) name nothing.
fn keep_dead_pointers(
    sym: &Symbols,
    slots: impl Iterator<Item = u64>,
    before: u64,
    present: &mut PointerSet,
) {
    let mut previous = before;
    for v in slots {
        let candidate = match v as u32 {
            0 | 2 | 3 => None,
            1 => Some(previous),
            lo => Some(u64::from(lo)),
        };
        if let Some(c) = candidate.filter(|&c| sym.has_dead(c)) {
            present.insert(c);
        }
        previous = v;
    }
}
