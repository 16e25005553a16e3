//! A ring thread's flush: stop, copy the window, restart; then the window written by a helper
//! thread while this one symbolizes; then header, symbols, commit (`docs/protocol.md`,
//! "Flush").

use std::time::{Duration, Instant};

use hubble_format::file::WindowCrc;
use hubble_format::TraceHeader;
use log::info;

use crate::art::{block_at, clock_pair, Art, ThreadHandle};
use crate::block;
use crate::flush::{self, DistinctPointers};
use crate::props;

use super::registry::StopCause;
use super::{lock, Control, Flushed, RuntimeError, WRITE_CHUNK};

impl<A: Art> Control<A> {
    /// [`Control::flush`] in ring mode.
    pub(super) fn flush_ring(
        &self,
        thread: ThreadHandle,
        reason: &str,
    ) -> Result<Flushed, RuntimeError> {
        let consent = self.consent();
        let t0 = Instant::now();
        let _flushing = lock(&self.flush_lock);
        let mut window = lock(&self.window);
        let (header, window_epoch) = {
            let mut reg = self.registry();
            let end = self.stop_traced(&mut reg, thread, StopCause::Flush(reason.to_string()))?;
            let (counter, wall) = clock_pair(&self.art);
            let epoch_now = lock(&self.symbols).epoch();
            let row = reg.threads.get_mut(&thread).expect("stopped above");
            let t = row.traced.as_mut().expect("stopped above");
            let slots = t.ring.slots();
            let end_offset = slots.offset(end);
            // Only the walk that finds the window and the copy happen while the thread is
            // stopped. Collecting the pointers in the same walk would save one walk over the
            // copy (~15% of the flush's instructions) but kept the thread stopped ~4× longer
            // (15 ms instead of 4 ms for a full 32 MiB ring), and the second walk runs beside
            // the window write anyway.
            let copied = flush::copy_window(slots, end_offset, self.config.mode, &mut window);
            // Restart right away, whatever happens next: the traced thread loses nothing more
            // than the trace points of the copy. The start record carries the time tracing
            // really resumes (after the copy), not the flush's reference: tools anchor frames
            // that began before the new window there.
            // SAFETY: registered threads are alive while the registry lock is held.
            let b = unsafe { block_at(row.block) };
            block::start(
                b,
                slots,
                self.config.mode,
                end_offset,
                self.art.timer() as u32,
            );
            let window_epoch = std::mem::replace(&mut t.start_epoch, epoch_now);
            copied?;
            let anchors = t.anchors.for_window(slots, end, &window);
            t.anchors.clear();
            (
                TraceHeader {
                    mode: self.config.mode,
                    timer_hz: self.art.timer_hz(),
                    reference_counter: counter,
                    wall_clock_ns: wall,
                    ring_bytes: t.ring.bytes() as u64,
                    write_pos: end_offset as u64,
                    pid: std::process::id(),
                    tid: row.tid,
                    thread_name: row.name.clone(),
                    process_name: self.config.process.clone(),
                    reason: reason.to_string(),
                    anchors,
                    metadata: props::metadata(&*self.props),
                },
                window_epoch,
            )
        };
        if !consent {
            info!(
                "hubble: no consent ({}), trace of {} discarded",
                props::CONSENT,
                header.tid
            );
            return Ok(Flushed {
                path: None,
                slots: window.len(),
                symbols: 0,
                phases: [t0.elapsed(), Duration::ZERO, Duration::ZERO, Duration::ZERO],
            });
        }
        let t1 = Instant::now();
        let dir = &self.config.dir;
        let io = |path: &std::path::Path| {
            let path = path.to_path_buf();
            move |source| RuntimeError::Io { path, source }
        };
        self.storage.ensure_dir(dir).map_err(io(dir))?;
        let unix_ms = header.wall_clock_ns / 1_000_000;
        let path = flush::trace_path(dir, unix_ms, std::process::id(), header.tid, reason);
        let file = self.storage.create_atomic(&path).map_err(io(&path))?;
        // A dead loader's method and a later one at its address, both in the window: each
        // record's time decides (crate::reuse::split_reused_window), before the copy is written,
        // so the pointers are gathered first. Without dead names (almost every flush) they are
        // gathered while the helper below writes the window, and named by the window's epoch.
        let early = if lock(&self.symbols).dead_len() > 0 {
            Some(self.split_reused_window(&mut window, &header, window_epoch)?)
        } else {
            None
        };
        let offset = hubble_format::file::window_offset(&header)?;
        let bytes = hubble_format::file::window_bytes(&window);
        // The window is nearly all of the file and needs nothing but the copy: a helper thread
        // writes and checksums it while this thread (attached to ART) resolves the symbols,
        // which the header counts and the tail holds. The helper touches only the copy and the
        // file, never ART or the ring.
        let write_window = || -> std::io::Result<(WindowCrc, Duration)> {
            let t = Instant::now();
            for (i, chunk) in bytes.chunks(WRITE_CHUNK).enumerate() {
                file.write_at((offset + i * WRITE_CHUNK) as u64, chunk)?;
            }
            file.start_writeback();
            let crc = WindowCrc::of(&bytes);
            Ok((crc, t.elapsed()))
        };
        let (symbols, written, symbolized) = std::thread::scope(|s| {
            let helper = std::thread::Builder::new()
                .name("HubbleWrite".into())
                .spawn_scoped(s, write_window);
            let t = Instant::now();
            let symbols = match early {
                Some((distinct, decided, epoch)) => Ok(self.symbolize(distinct, epoch, &decided)),
                None => {
                    let mut distinct = DistinctPointers::default();
                    flush::distinct_methods(&window, self.config.mode, &mut distinct)
                        .map(|()| self.symbolize(distinct, window_epoch, &[]))
                }
            };
            let symbolized = t.elapsed();
            let written = match helper {
                Ok(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
                // No thread to be had: one after the other.
                Err(_) => write_window(),
            };
            (symbols, written, symbolized)
        });
        let t2 = Instant::now();
        let symbols = symbols?;
        let (crc, window_written) = written.map_err(io(&path))?;
        let (head, tail) = hubble_format::file::encode_around(
            &header,
            window.len(),
            &crc,
            symbols.len(),
            symbols.iter().map(|(p, name)| (*p, &**name)),
        )?;
        debug_assert_eq!(head.len(), offset);
        file.write_at(0, &head).map_err(io(&path))?;
        file.write_at((offset + bytes.len()) as u64, &tail)
            .map_err(io(&path))?;
        file.commit().map_err(io(&path))?;
        let finished = t2.elapsed();
        self.retain(dir);
        Ok(Flushed {
            path: Some(path),
            slots: window.len(),
            symbols: symbols.len(),
            phases: [t1 - t0, symbolized, window_written, finished],
        })
    }
}

/// What [`Control::split_reused_window`] gives the symbolization: the window's pointers, the
/// names the records' times decided, and the symbol epoch to name the rest by.
type SplitWindow = (DistinctPointers, Vec<(u64, std::sync::Arc<str>)>, u64);

impl<A: Art> Control<A> {
    /// The window's pointers, with the records of an address a dead method shares with a later
    /// one split by their time ([`crate::reuse::split_reused_window`]), the names that decided,
    /// and the symbol epoch to name the rest by: the epoch before the dead methods were looked
    /// up (a method that dies later is named from the cache), or the window's if its records
    /// cannot be dated (every dead pointer then named from the cache, never through ART, which
    /// may have freed it).
    fn split_reused_window(
        &self,
        window: &mut [u64],
        header: &TraceHeader,
        window_epoch: u64,
    ) -> Result<SplitWindow, RuntimeError> {
        let mut distinct = DistinctPointers::default();
        flush::distinct_methods(window, self.config.mode, &mut distinct)?;
        let (epoch, dead) = self.dead_generations(&distinct);
        let Some(decided) = crate::reuse::split_reused_window(
            window,
            &header.anchors,
            &dead,
            header.reference_counter,
            self.config.mode,
        ) else {
            return Ok((distinct, Vec::new(), window_epoch));
        };
        for (p, _) in &decided {
            if p & crate::reuse::ALIAS_BIT != 0 {
                distinct.insert(*p);
            }
        }
        Ok((distinct, decided, epoch))
    }
}
