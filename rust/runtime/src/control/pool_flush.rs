//! Many-thread mode's flush: the all-threads stop, one snapshot of the pool, a restart of every
//! thread, then one version 4 file of what is new since the previous flush
//! (`docs/many-threads.md`, "Stopping all threads and flushing").

use std::time::{Duration, Instant};

use hubble_format::pool::{thread_streams, H_TICKET};
use hubble_format::threads::{ProcessHeader, ThreadsFile};
use log::info;

use crate::art::{block_at, clock_pair, Art, ThreadHandle};
use crate::block;
use crate::flush::{self, DistinctPointers};
use crate::pool::{self, Pool};
use crate::props;

use super::registry::StopCause;
use super::{lock, Control, Flushed, RuntimeError, WRITE_CHUNK};

impl<A: Art> Control<A> {
    /// Many-thread mode's flush: the all-threads stop, the snapshot (each open block closed at
    /// its owner's end), a restart of every thread, all under the registry lock; then, on this
    /// thread alone, `thread_streams`, the symbols of every run once, and one version 4 file
    /// written atomically. If a thread does not stop in time the flush writes nothing: the
    /// others are restarted, its request stays, and the tick runs the flush again once it has
    /// answered (a snapshot taken while a thread runs could hold a block it is taking over).
    ///
    /// Each file holds what is new since the previous flush, as a ring's window does: runs whose
    /// every block predates the previous flush are left out (they were in its file), except a
    /// block a thread went on in behind a start record, from which readers decode the new part.
    pub(super) fn flush_pool(&self, p: &Pool, reason: &str) -> Result<Flushed, RuntimeError> {
        let consent = self.consent();
        let t0 = Instant::now();
        let _flushing = lock(&self.flush_lock);
        let (snapshot, header, names, last_head, continued, idle) = {
            let mut reg = self.registry();
            let mut threads: Vec<ThreadHandle> = reg
                .threads
                .iter()
                .filter(|(_, row)| row.pooled.is_some())
                .map(|(h, _)| *h)
                .collect();
            threads.sort_unstable();
            let (stopped, late) =
                self.stop_pooled(&mut reg, &threads, &StopCause::Flush(reason.to_string()));
            if let Some(&h) = late.first() {
                for s in &stopped {
                    let row = &reg.threads[&s.thread];
                    // SAFETY: registered threads are alive while the registry lock is held.
                    pool::resume(unsafe { block_at(row.block) }, p, s.end);
                }
                return Err(RuntimeError::StopTimeout(h, self.config.stop_timeout));
            }
            let (counter, wall) = clock_pair(&self.art);
            let ends: Vec<(usize, usize)> = stopped.iter().map(|s| (s.block, s.end)).collect();
            let snapshot = pool::snapshot(p, &ends);
            let head = pool::head(p);
            // Restart at once: the threads lose only the trace points of the copy.
            let now = self.art.timer();
            let mut continued = std::collections::HashSet::new();
            // Each thread's idle gaps so far, for this file; its next ones are behind the start
            // record the restart writes.
            let mut anchors = std::collections::BTreeMap::new();
            for s in &stopped {
                let row = reg
                    .threads
                    .get_mut(&s.thread)
                    .expect("stopped threads are registered");
                if let Some(pt) = row.pooled.as_mut() {
                    anchors.insert(row.tid, std::mem::take(&mut pt.anchors));
                }
                // SAFETY: registered threads are alive while the registry lock is held.
                let b = unsafe { block_at(row.block) };
                if pool::restart(b, p, s.end, now) {
                    continued.insert(snapshot[(s.block - p.base()) / block::SLOT + H_TICKET]);
                }
            }
            let last_head = std::mem::replace(&mut reg.book.last_head, head);
            let last_continued = std::mem::replace(&mut reg.book.continued, continued);
            let mut names: std::collections::BTreeMap<u32, String> = reg.book.exited.clone();
            for row in reg.threads.values() {
                names.insert(row.tid, row.name.clone());
            }
            let header = ProcessHeader {
                mode: self.config.mode,
                timer_hz: self.art.timer_hz(),
                reference_counter: counter,
                wall_clock_ns: wall,
                pid: std::process::id(),
                process_name: self.config.process.clone(),
                reason: reason.to_string(),
                metadata: props::metadata(&*self.props),
            };
            (snapshot, header, names, last_head, last_continued, anchors)
        };
        let g = p.geometry();
        let mut streams = thread_streams(&snapshot, g, p.base() as u64)?;
        {
            // Forget the names of threads gone whose blocks the pool no longer holds.
            let mut reg = self.registry();
            let live: std::collections::HashSet<u32> = streams.iter().map(|s| s.tid).collect();
            reg.book.exited.retain(|tid, _| live.contains(tid));
        }
        streams.retain(|s| {
            s.blocks
                .last()
                .is_some_and(|last| last.ticket >= last_head || continued.contains(&last.ticket))
        });
        let anchors: std::collections::BTreeMap<u32, Vec<hubble_format::TimeAnchor>> = idle
            .iter()
            .map(|(&tid, a)| {
                let runs: Vec<&hubble_format::pool::ThreadStream> =
                    streams.iter().filter(|s| s.tid == tid).collect();
                (tid, a.for_pool(p.base(), g.block_slots, &snapshot, &runs))
            })
            .filter(|(_, a)| !a.is_empty())
            .collect();
        drop(snapshot);
        let slots: usize = streams.iter().map(|s| s.slots.len()).sum();
        if !consent {
            info!(
                "hubble: no consent ({}), trace of {} threads discarded",
                props::CONSENT,
                streams.len()
            );
            return Ok(Flushed {
                path: None,
                slots,
                symbols: 0,
                phases: [t0.elapsed(), Duration::ZERO, Duration::ZERO, Duration::ZERO],
            });
        }
        let t1 = Instant::now();
        let mut distinct = DistinctPointers::default();
        for s in &streams {
            flush::distinct_methods(&s.slots, self.config.mode, &mut distinct)?;
        }
        // The pool may hold records from before any unload so far, and records of a later
        // method at a dead one's address: each record's time says which
        // (crate::reuse::split_reused). A method that dies after this look is named from the
        // cache at its epoch, never through ART.
        let (epoch, dead) = self.dead_generations(&distinct);
        let decided = crate::reuse::split_reused(
            &mut streams,
            &dead,
            header.reference_counter,
            self.config.mode,
        );
        // The aliases are the only new pointers (a reused pointer keeps its newest method's
        // records): no second decode of the streams.
        for (p, _) in &decided {
            if p & crate::reuse::ALIAS_BIT != 0 {
                distinct.insert(*p);
            }
        }
        let symbols = self.symbolize(distinct, epoch, &decided);
        let symbols: std::collections::BTreeMap<u64, String> = symbols
            .into_iter()
            .map(|(p, name)| (p, name.to_string()))
            .collect();
        let nsymbols = symbols.len();
        let t2 = Instant::now();
        let unix_ms = header.wall_clock_ns / 1_000_000;
        let file = ThreadsFile::from_streams(header, streams, &names, &anchors, symbols);
        let bytes = file.to_bytes()?;
        drop(file);
        let dir = &self.config.dir;
        let io = |path: &std::path::Path| {
            let path = path.to_path_buf();
            move |source| RuntimeError::Io { path, source }
        };
        self.storage.ensure_dir(dir).map_err(io(dir))?;
        // tid 0: no thread of its own, every thread of the process.
        let path = flush::trace_path(dir, unix_ms, std::process::id(), 0, reason);
        let out = self.storage.create_atomic(&path).map_err(io(&path))?;
        for (i, chunk) in bytes.chunks(WRITE_CHUNK).enumerate() {
            out.write_at((i * WRITE_CHUNK) as u64, chunk)
                .map_err(io(&path))?;
        }
        out.commit().map_err(io(&path))?;
        let t3 = Instant::now();
        self.retain(dir);
        Ok(Flushed {
            path: Some(path),
            slots,
            symbols: nsymbols,
            phases: [t1 - t0, t2 - t1, t3 - t2, t3.elapsed()],
        })
    }
}
