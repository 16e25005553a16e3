//! Duration triggers: flush a thread when one of its calls of a watched method runs
//! longer than a threshold (`debug.hubble.triggers`, [`crate::props::parse_triggers`]). No
//! framework patch and no anomaly API call: the control thread reads the rings behind the
//! traced threads at every tick (`ring.rs`), or in many-thread mode each thread's
//! blocks in `seq` order (`pool.rs`). The design and its limits are in
//! `docs/architecture.md` ("Duration triggers") and `docs/protocol.md` ("The trigger
//! detector's reads"); in short:
//!
//! * **Reading behind the writer.** The traced side publishes its cursor with a plain store
//!   and no barrier, so on ARM the slots just below a fresh cursor may not be visible yet.
//!   Each tick reads only up to the cursor it saw at the PREVIOUS tick; a tick (250 ms) is
//!   orders of magnitude longer than a store buffer takes to drain. Practical, not formal: a
//!   thread descheduled between its slot stores and its cursor store for a whole tick would
//!   leave a stale slot behind (it fails decoding or dating, and the reader forgets the calls
//!   in progress, or at worst one duration is wrong). Nothing here stores to the thread's
//!   block or ring or takes a lock the thread takes.
//! * **Laps and restarts.** After each read the reader remembers the slot before where it
//!   reads next (the sentinel) and its value; if it has changed by the next read, or changes
//!   while the read copies, the writer came round and the stretch is dropped. A 32-bit
//!   timestamp in every record makes an equal rewrite practically impossible. A ring cleared
//!   and started again from slot 0 (a reclaim, then a start: the same address or another) is
//!   a new run (`Traced::run`) and is read afresh: a new reader's sentinel lies half a ring
//!   back, often an unwritten slot, zero before and after the clear, so it cannot tell. A
//!   start record (tracing restarted: what ran meanwhile is lost) forgets the calls in
//!   progress.
//! * **Starting and restarting.** A new reader, or one that lost its place, first reads the
//!   newest half ring before the cursor (back to the last start record in it), dated backward
//!   from a timer read after the cursor, as a flush dates its window: a call that began
//!   before the detector looked is timed too.
//! * **Timestamps.** Afterwards, the records read at tick k lie between the cursors seen at
//!   ticks k-2 and k-1: written after tick k-2's timer read and before tick k's, so the full
//!   value is the one within 2^32 ticks after tick k-2's read with the record's low 32 bits.
//!   Exact while ticks are less than 2^31 timer ticks apart (35 s at 62.5 MHz).
//! * **Which pointers are trigger methods.** Each new distinct `ArtMethod*` of an entry is
//!   named once through the flush's symbol cache and its unload-safe resolution
//!   ([`crate::symbols::resolve_missing`]) and classified against the patterns. No new
//!   bridge call: any class loader, every overload, classes loaded later, and the names are
//!   the ones a later flush needs anyway.
//! * **Firing.** A call fires at its exit if it ran longer than its threshold, or earlier, at
//!   the first tick that finds it still open for longer (a frame that never returns must not
//!   wait for its exit; the duration is then a lower bound). The thread is flushed with the
//!   trigger's reason (`TraceSource::flush_thread`); a reason flushes at most once per
//!   [`crate::props::TRIGGER_INTERVAL`] (default 30 s); hits within it are counted in
//!   [`Triggers::suppressed`].

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use hubble_format::slot::{self, Mode};
use log::{info, warn};

use crate::art::ThreadHandle;
use crate::block::{Slots, ThreadBlock};
use crate::flush::PointerHasher;
use crate::pool::Pool;
use crate::props::{self, PropertySource, TriggerSpec, DEFAULT_TRIGGER_INTERVAL};

mod pool;
mod ring;

/// Open calls of trigger methods kept per thread (deeper recursion is not timed).
pub const MAX_OPEN: usize = 64;
/// Classified pointers kept before the classification is simply dropped and redone.
const MAX_CLASSIFIED: usize = 1 << 20;

/// What the detector reads and flushes: the control plane (`crate::Control`) that ticks it.
pub(crate) trait TraceSource {
    /// The runtime's timer (the records' clock).
    fn timer(&self) -> u64;
    /// Its frequency.
    fn timer_hz(&self) -> u64;
    /// The process's ISA mode (how the records decode).
    fn mode(&self) -> Mode;
    /// The property source (`debug.hubble.triggers`, `debug.hubble.trigger_interval`).
    fn properties(&self) -> &dyn PropertySource;
    /// `f` on every thread traced in a ring whose stop is not pending, with its block, ring and
    /// run (a new run is a ring started empty again), while both stay alive. `f` must not call
    /// back into the source.
    fn for_each_traced_ring(&self, f: impl FnMut(ThreadHandle, &ThreadBlock, Slots<'_>, u64));
    /// `f` on the pool and every thread traced in it whose stop is not pending, with its tid,
    /// its block and the pool's head when it started, while they stay alive. `f` must not call
    /// back into the source.
    fn for_each_pooled_thread(&self, f: impl FnMut(&Pool, ThreadHandle, u32, &ThreadBlock, u64));
    /// The symbol cache's unload epoch.
    fn symbol_epoch(&self) -> u64;
    /// Names for `pointers` seen in records written after the symbol epoch was `epoch`
    /// ([`crate::symbols::resolve_missing`]).
    fn resolve_names(&self, pointers: &[u64], epoch: u64, names: &mut [Option<Arc<str>>]);
    /// The methods that died at each of `pointers` (oldest first), for those with any: a
    /// record's time then says which method it names ([`crate::reuse`]).
    fn dead_at(&self, pointers: &[u64]) -> HashMap<u64, Vec<crate::symbols::Dead>>;
    /// Flushes `thread` with `reason`: the file written, if any (a failure is the flush's to
    /// log and count).
    fn flush_thread(&self, thread: ThreadHandle, reason: &str) -> Option<PathBuf>;
}

/// A trigger that fired and flushed.
#[derive(Clone, Debug)]
pub struct Fired {
    /// The trigger's reason (the file's).
    pub reason: String,
    /// The trigger's method pattern, as written.
    pub method: String,
    /// The thread flushed.
    pub thread: ThreadHandle,
    /// How long the call ran: exact if it had returned (`exited`), else how long it had run
    /// at least when it was seen still open.
    pub duration: Duration,
    /// Whether the call had returned.
    pub exited: bool,
    /// The file written (`None` without consent or if the flush failed).
    pub path: Option<PathBuf>,
}

/// The detector, one per control plane. Only the control thread ticks it.
#[derive(Default)]
pub struct Triggers {
    state: Mutex<State>,
    fired: Mutex<Vec<Fired>>,
    /// Firings dropped by the per-reason rate limit.
    pub suppressed: AtomicU64,
}

/// Firings remembered for [`Triggers::fired`].
const MAX_FIRED_LOG: usize = 256;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Triggers {
    /// The triggers in force.
    pub fn active(&self) -> Vec<TriggerSpec> {
        lock(&self.state).specs.clone()
    }
    /// The firings that flushed so far (oldest first; the last 256).
    pub fn fired(&self) -> Vec<Fired> {
        lock(&self.fired).clone()
    }
}

#[derive(Default)]
struct State {
    /// The property value the triggers were parsed from (a rejected one too: logged once).
    source: Option<String>,
    specs: Vec<TriggerSpec>,
    interval: Option<Duration>,
    interval_source: Option<String>,
    /// Pointer → bit mask of the triggers whose pattern its name matches (0: none).
    classes: HashMap<u64, u64, BuildHasherDefault<PointerHasher>>,
    /// Symbol epoch the classification belongs to (an unload may reuse addresses).
    classes_epoch: u64,
    /// Pointers at which a dead loader's method lived: a record's mask depends on its time.
    generations: HashMap<u64, Generations, BuildHasherDefault<PointerHasher>>,
    readers: HashMap<ThreadHandle, Reader>,
    /// Reason → timer value of its last flush.
    last_flush: HashMap<String, u64>,
    /// The stretches copied this tick, back to back.
    buf: Vec<u64>,
    /// One stretch's records and their full times.
    recs: Vec<(Rec, u64)>,
}

/// One traced thread's reading position and call stack.
struct Reader {
    /// Where in the thread's memory it reads: a ring, or the thread's blocks in the pool.
    place: Place,
    /// Timer read before the records from `from` on were written.
    low: Instant,
    /// Timer read just before the position `seen` was.
    seen_at: Instant,
    /// The next stretch is a backfill: of unknown age before `seen`, dated backward from this
    /// timer value (read after `seen`).
    backfill: Option<u64>,
    /// Call depth relative to where reading (re)started.
    depth: i64,
    open: Vec<Open>,
}

enum Place {
    Ring(ring::RingPlace),
    Pool(pool::PoolPlace),
}

/// The methods one address named: each dead one's unload time and mask, oldest first, and the
/// live one's mask once a record written after the last unload asked for it (before that, the
/// address may be free: its name must not be asked of ART).
struct Generations {
    dead: Vec<(u64, u64)>,
    live: Option<u64>,
}

impl Generations {
    /// The mask of the method a record written at `t` named; None: the live one, not named yet.
    fn mask_at(&self, t: u64) -> Option<u64> {
        match self.dead.iter().find(|(died, _)| *died > t) {
            Some(&(_, mask)) => Some(mask),
            None => self.live,
        }
    }
}

/// A timer value read at a tick.
#[derive(Clone, Copy, Debug)]
struct Instant {
    timer: u64,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    depth: i64,
    /// Triggers watching this call, and those that fired (or were suppressed) for it.
    mask: u64,
    fired: u64,
    entered: u64,
}

impl Reader {
    /// A reader whose first stretch is a backfill before the position `place` holds as seen,
    /// seen at `now`, dated backward from `after`.
    fn at(place: Place, now: Instant, after: u64) -> Reader {
        Reader {
            place,
            low: now,
            seen_at: now,
            backfill: Some(after),
            depth: 0,
            open: Vec::new(),
        }
    }

    /// The stretch of `thread` just copied into `buf[start..end]`, dated by what the reader
    /// knew; then the reader moves on: what was seen at the previous tick is where the next
    /// stretch starts, and `now` dates what is read up to the position seen now.
    fn copied(
        &mut self,
        thread: ThreadHandle,
        start: usize,
        end: usize,
        lost: bool,
        now: Instant,
    ) -> Stretch {
        let stretch = Stretch {
            thread,
            start,
            end,
            low: self.low,
            backfill: self.backfill,
            end_at: self.seen_at,
            lost,
        };
        self.low = self.seen_at;
        self.seen_at = now;
        self.backfill = None;
        stretch
    }
}

/// The reader a thread has, or, for a thread read for the first time, `fresh` put in its place
/// and None (its first stretch is read at the next tick).
fn existing<'a>(
    reader: std::collections::hash_map::Entry<'a, ThreadHandle, Reader>,
    fresh: impl FnOnce() -> Reader,
) -> Option<&'a mut Reader> {
    match reader {
        std::collections::hash_map::Entry::Occupied(e) => Some(e.into_mut()),
        std::collections::hash_map::Entry::Vacant(e) => {
            e.insert(fresh());
            None
        }
    }
}

impl Reader {
    fn forget_calls(&mut self) {
        self.depth = 0;
        self.open.clear();
    }
}

/// A record decoded forward.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rec {
    Entry(u64, u32),
    Exit(u32),
    Start(u32),
}

/// Decodes a stretch of slots forward. It ends at a cursor value (a record boundary); it
/// starts at one too unless `fresh` (a backfill: then a leading second half of a two-slot
/// entry or task record is skipped). Task records are not calls: skipped. `None` at the first
/// slot that cannot be decoded.
fn decode_forward(
    slots: &[u64],
    mode: Mode,
    fresh: bool,
    mut visit: impl FnMut(Rec),
) -> Option<()> {
    let mut i = 0;
    if fresh
        && slots
            .first()
            .is_some_and(|&v| v as u32 == slot::WIDE_ENTRY || v as u32 == slot::TASK)
    {
        i = 1;
    }
    while i < slots.len() {
        let v = slots[i];
        // A two-slot entry or task record: the first slot, then its marker. No first slot's
        // low half is 1 or 4 (`slot::is_wide_pointer`, `slot::encode_task`), so a marker is
        // never mistaken for one.
        if let Some(&next) = slots.get(i + 1) {
            let (hi, lo) = slot::unpack(next);
            if lo == slot::WIDE_ENTRY {
                if mode == Mode::Bits32 || !slot::is_wide_pointer(v) {
                    return None;
                }
                visit(Rec::Entry(v, hi));
                i += 2;
                continue;
            }
            if lo == slot::TASK {
                slot::decode_task_payload(v)?;
                i += 2;
                continue;
            }
        }
        let (hi, lo) = slot::unpack(v);
        match lo {
            slot::EXIT => visit(Rec::Exit(hi)),
            // Its first slot is not in the stretch.
            slot::WIDE_ENTRY | slot::TASK => return None,
            slot::PAD => {}
            slot::START => visit(Rec::Start(hi)),
            5..=slot::LAST_CONTROL => return None,
            method => visit(Rec::Entry(u64::from(method), hi)),
        }
        i += 1;
    }
    Some(())
}

/// A call that crossed its threshold.
#[derive(Debug)]
struct Hit {
    thread: ThreadHandle,
    trigger: usize,
    /// Timer value at which it was found (its exit, or the time it was open until).
    at: u64,
    ticks: u64,
    exited: bool,
}

/// The stretch a reader copied this tick: `buf[start..end]`. Its records were written after
/// `low` (forward dating), or before `backfill` (a backfill, dated backward); its end was seen
/// after `end_at`.
struct Stretch {
    thread: ThreadHandle,
    start: usize,
    end: usize,
    low: Instant,
    backfill: Option<u64>,
    end_at: Instant,
    /// Records between the previous stretch and this one are lost (a `seq` gap in the pool:
    /// a dropped record or a block overwritten): the calls in progress are forgotten first.
    lost: bool,
}

/// Timer ticks within which a record's time is recovered from its low 32 bits.
const DATABLE: u64 = 1 << 32;

/// One tick of the detector (from the control thread's tick).
pub(crate) fn tick(triggers: &Triggers, source: &impl TraceSource) {
    let mut guard = lock(&triggers.state);
    let st = &mut *guard;
    st.poll_properties(source.properties());
    if st.specs.is_empty() {
        st.readers.clear();
        return;
    }
    // The timer first: every record below a cursor read after it is older than `now`.
    let now = Instant {
        timer: source.timer(),
    };
    // Names are asked as of this epoch: a method that dies later is named from the cache.
    let epoch = source.symbol_epoch();
    st.renew_classes(epoch);
    let mode = source.mode();
    let stretches = st.copy_stretches(source, now, || source.timer());
    let provisional = st.classify(source, &stretches, mode, epoch);
    let hz = source.timer_hz();
    let thresholds: Vec<u64> = st.specs.iter().map(|s| ticks_of(s.threshold, hz)).collect();
    let mut hits = Vec::new();
    for s in &stretches {
        if !st.readers.contains_key(&s.thread) {
            continue;
        }
        let mut recs = std::mem::take(&mut st.recs);
        let dated = date(&st.buf[s.start..s.end], mode, s, now.timer, &mut recs);
        if dated {
            st.name_live_generations(source, &recs, epoch);
        }
        let State {
            readers,
            classes,
            generations,
            ..
        } = &mut *st;
        let r = readers.get_mut(&s.thread).expect("looked up above");
        if s.lost {
            r.forget_calls();
        }
        if !dated {
            info!(
                "hubble: triggers: thread {:#x}: a stretch of its ring does not decode or \
                 cannot be dated; its calls in progress are forgotten",
                s.thread
            );
            r.forget_calls();
            st.recs = recs;
            continue;
        }
        let mask_of = |p: u64, t: u64| match generations.get(&p) {
            Some(g) => g.mask_at(t).unwrap_or(0),
            None => classes.get(&p).copied().unwrap_or(0),
        };
        run_calls(r, &recs, mask_of, &thresholds, s.thread, &mut hits);
        // Calls still open at the end of the stretch ran at least until the timer read
        // before its end was seen.
        for o in &mut r.open {
            let ran = s.end_at.timer.saturating_sub(o.entered);
            for (i, &limit) in thresholds.iter().enumerate() {
                let bit = 1 << i;
                if o.mask & !o.fired & bit != 0 && ran > limit {
                    o.fired |= bit;
                    hits.push(Hit {
                        thread: s.thread,
                        trigger: i,
                        at: s.end_at.timer,
                        ticks: ran,
                        exited: false,
                    });
                }
            }
        }
        st.recs = recs;
    }
    for p in provisional {
        st.classes.remove(&p);
    }
    release_if_oversized(&mut st.buf);
    hits.sort_by_key(|h| h.at);
    let interval = ticks_of(st.interval.unwrap_or(DEFAULT_TRIGGER_INTERVAL), hz);
    let mut flushes = Vec::new();
    for h in hits {
        let spec = &st.specs[h.trigger];
        let allowed = match st.last_flush.get(&spec.reason) {
            None => true,
            Some(&last) => now.timer.saturating_sub(last) >= interval,
        };
        if !allowed {
            triggers.suppressed.fetch_add(1, Ordering::Relaxed);
            info!(
                "hubble: trigger {} ({} > {:?}) rate-limited",
                spec.reason, spec.method, spec.threshold
            );
            continue;
        }
        st.last_flush.insert(spec.reason.clone(), now.timer);
        flushes.push((h, spec.clone()));
    }
    drop(guard);
    for (h, spec) in flushes {
        let duration = Duration::from_nanos(
            (u128::from(h.ticks) * 1_000_000_000 / u128::from(hz.max(1))) as u64,
        );
        info!(
            "hubble: trigger {}: {} ran {duration:?}{} (> {:?}) in thread {:#x}: flushing",
            spec.reason,
            spec.method,
            if h.exited {
                ""
            } else {
                " and is still running"
            },
            spec.threshold,
            h.thread
        );
        let path = source.flush_thread(h.thread, &spec.reason);
        let mut log = lock(&triggers.fired);
        if log.len() >= MAX_FIRED_LOG {
            log.remove(0);
        }
        log.push(Fired {
            reason: spec.reason,
            method: spec.method.to_string(),
            thread: h.thread,
            duration,
            exited: h.exited,
            path,
        });
    }
}

fn ticks_of(d: Duration, hz: u64) -> u64 {
    (d.as_nanos() * u128::from(hz) / 1_000_000_000).min(u128::from(u64::MAX)) as u64
}

impl State {
    /// Re-reads the properties; a value that does not parse is logged (once) and the triggers
    /// in force stay.
    fn poll_properties(&mut self, p: &dyn PropertySource) {
        let mut value = p.get(props::TRIGGERS).unwrap_or_default();
        for i in 1..=props::TRIGGER_CONTINUATIONS {
            if let Some(more) = p.get(&format!("{}.{i}", props::TRIGGERS)) {
                value.push(';');
                value.push_str(&more);
            }
        }
        if self.source.as_deref() != Some(value.as_str()) {
            match props::parse_triggers(&value) {
                Ok(specs) => {
                    info!("hubble: {} triggers in force: {value:?}", specs.len());
                    self.specs = specs;
                    self.classes.clear();
                    self.readers.clear();
                }
                Err(e) => warn!(
                    "hubble: {}: {e}; keeping the {} triggers in force",
                    props::TRIGGERS,
                    self.specs.len()
                ),
            }
            self.source = Some(value);
        }
        let interval = p.get(props::TRIGGER_INTERVAL);
        if interval != self.interval_source {
            match interval.as_deref().map(props::parse_trigger_interval) {
                None => self.interval = None,
                Some(Ok(d)) => self.interval = Some(d),
                Some(Err(e)) => warn!("hubble: {e}; keeping {:?}", self.interval),
            }
            self.interval_source = interval;
        }
    }

    /// Under the registry lock: each traced thread's new stretch (from the position seen two
    /// ticks ago to the one seen at the previous tick, or a backfill) copied into `buf`,
    /// checked against laps; readers of threads no longer traced are dropped.
    fn copy_stretches(
        &mut self,
        source: &impl TraceSource,
        now: Instant,
        timer: impl Fn() -> u64,
    ) -> Vec<Stretch> {
        let mut out = Vec::new();
        let mut alive = HashSet::new();
        let (readers, buf) = (&mut self.readers, &mut self.buf);
        buf.clear();
        source.for_each_traced_ring(|thread, block, slots, run| {
            let Some(at) = ring::cursor_index(block, slots) else {
                return; // tracing off or stopped: read afresh once it runs again
            };
            alive.insert(thread);
            let reader = readers.entry(thread);
            out.extend(ring::copy(reader, buf, slots, run, at, now, &timer));
        });
        let mut blocks = None;
        source.for_each_pooled_thread(|p, thread, tid, block, since| {
            let at = pool::position(p, block, tid, since);
            if matches!(at, pool::At::Off) {
                return; // tracing off or stopped: read afresh once it runs again
            }
            alive.insert(thread);
            // The headers once per tick, and only in a tick that reads a pooled thread.
            let blocks = blocks.get_or_insert_with(|| pool::Blocks::of(p));
            let reader = readers.entry(thread);
            out.extend(pool::copy(
                reader, buf, p, blocks, tid, since, at, now, &timer,
            ));
        });
        readers.retain(|t, _| alive.contains(t));
        out
    }

    /// Names every entry pointer not classified yet and classifies it against the triggers.
    /// Runs without the registry lock (the naming may call into ART).
    /// At the start of a tick: the classification holds for one symbol epoch, and at most
    /// [`MAX_CLASSIFIED`] pointers (an app that loads code without end must not grow it).
    fn renew_classes(&mut self, epoch: u64) {
        if self.classes_epoch != epoch || self.classes.len() > MAX_CLASSIFIED {
            self.classes.clear();
            self.generations.clear();
            self.classes_epoch = epoch;
        }
    }

    /// The mask of `name` against the triggers.
    fn mask_of(&self, name: Option<&str>) -> u64 {
        name.map_or(0, |n| {
            self.specs
                .iter()
                .enumerate()
                .filter(|(_, s)| s.method.matches(n))
                .fold(0u64, |m, (i, _)| m | 1 << i)
        })
    }

    /// Classifies every entry pointer of the stretches not classified yet. A pointer a dead
    /// loader's method had goes to `generations` (each record is then classified by its time,
    /// in [`State::name_live_generations`] and `run_calls`); the others are named at the epoch
    /// read before the dead methods were looked up (`epoch`: one that dies later is named from
    /// the cache, never by ART). Returns the pointers classified while an unload happened (their
    /// names may be a dead loader's): the tick drops them from `classes` when it ends.
    fn classify(
        &mut self,
        source: &impl TraceSource,
        stretches: &[Stretch],
        mode: Mode,
        epoch: u64,
    ) -> Vec<u64> {
        let mut unknown: Vec<u64> = Vec::new();
        for s in stretches {
            let fresh = s.backfill.is_some();
            let _ = decode_forward(&self.buf[s.start..s.end], mode, fresh, |r| {
                if let Rec::Entry(p, _) = r {
                    if !self.classes.contains_key(&p) && !self.generations.contains_key(&p) {
                        unknown.push(p);
                    }
                }
            });
        }
        if unknown.is_empty() {
            return Vec::new();
        }
        unknown.sort_unstable();
        unknown.dedup();
        for (p, dead) in source.dead_at(&unknown) {
            let dead = dead
                .iter()
                .map(|d| (d.at, self.mask_of(Some(&d.name))))
                .collect();
            self.generations.insert(p, Generations { dead, live: None });
        }
        unknown.retain(|p| !self.generations.contains_key(p));
        let mut names: Vec<Option<Arc<str>>> = vec![None; unknown.len()];
        source.resolve_names(&unknown, epoch, &mut names);
        let provisional = if source.symbol_epoch() != epoch {
            unknown.clone()
        } else {
            Vec::new()
        };
        for (p, name) in unknown.into_iter().zip(names) {
            let mask = self.mask_of(name.as_deref());
            self.classes.insert(p, mask);
        }
        provisional
    }

    /// Names the live method of every address in `generations` that a record of `recs`, written
    /// after the address's last unload, names: a method lives there now (a dead one writes no
    /// record), so ART may be asked.
    fn name_live_generations(
        &mut self,
        source: &impl TraceSource,
        recs: &[(Rec, u64)],
        epoch: u64,
    ) {
        if self.generations.is_empty() {
            return; // every tick without a reused address: no look at the records
        }
        let mut ask: Vec<u64> = recs
            .iter()
            .filter_map(|&(r, t)| match r {
                Rec::Entry(p, _) => self
                    .generations
                    .get(&p)
                    .filter(|g| g.mask_at(t).is_none())
                    .map(|_| p),
                _ => None,
            })
            .collect();
        if ask.is_empty() {
            return;
        }
        ask.sort_unstable();
        ask.dedup();
        let mut names: Vec<Option<Arc<str>>> = vec![None; ask.len()];
        source.resolve_names(&ask, epoch, &mut names);
        for (p, name) in ask.into_iter().zip(names) {
            let mask = self.mask_of(name.as_deref());
            if let Some(g) = self.generations.get_mut(&p) {
                g.live = Some(mask);
            }
        }
    }
}

/// One huge stretch must not pin its memory for good: a buffer more than four times what this
/// tick used (and above 2 MiB) is given back.
fn release_if_oversized(buf: &mut Vec<u64>) {
    if buf.capacity() > 4 * buf.len().max(1 << 16) {
        *buf = Vec::new();
    }
}

/// Decodes a stretch into `recs` with each record's full timer value. Forward stretches:
/// the value within [`DATABLE`] ticks after `low` with the record's low 32 bits, which must
/// not pass `now` nor go backward. Backfills: walked back from their reference (each record
/// less than 2^32 ticks before its successor, as a flush assumes), and cut at their last start
/// record (what is older belongs to an earlier tracing window). False if the stretch does not
/// decode or cannot be dated.
fn date(stretch: &[u64], mode: Mode, s: &Stretch, now: u64, recs: &mut Vec<(Rec, u64)>) -> bool {
    recs.clear();
    let fresh = s.backfill.is_some();
    if decode_forward(stretch, mode, fresh, |r| recs.push((r, 0))).is_none() {
        return false;
    }
    let ts = |r: &Rec| match *r {
        Rec::Entry(_, ts) | Rec::Exit(ts) | Rec::Start(ts) => ts,
    };
    match s.backfill {
        None => {
            let low = s.low.timer;
            if now.wrapping_sub(low) >= DATABLE {
                return false;
            }
            let mut last = low;
            for (r, t) in recs.iter_mut() {
                *t = low + u64::from(ts(r).wrapping_sub(low as u32));
                if *t > now || *t < last {
                    return false;
                }
                last = *t;
            }
        }
        Some(reference) => {
            let mut next = reference;
            let mut keep_from = 0;
            for (i, (r, t)) in recs.iter_mut().enumerate().rev() {
                let Some(v) = hubble_format::time::step_back(next, ts(r)) else {
                    keep_from = i + 1;
                    break;
                };
                *t = v;
                next = v;
                if matches!(r, Rec::Start(_)) {
                    keep_from = i;
                    break;
                }
            }
            recs.drain(..keep_from);
        }
    }
    true
}

/// Runs a stretch's dated records through the reader's call stack; pushes the calls that
/// exceeded their thresholds.
fn run_calls(
    r: &mut Reader,
    recs: &[(Rec, u64)],
    mask_of: impl Fn(u64, u64) -> u64,
    thresholds: &[u64],
    thread: ThreadHandle,
    hits: &mut Vec<Hit>,
) {
    for &(rec, t) in recs {
        match rec {
            Rec::Start(_) => r.forget_calls(),
            Rec::Entry(p, _) => {
                r.depth += 1;
                let mask = mask_of(p, t);
                if mask != 0 && r.open.len() < MAX_OPEN {
                    r.open.push(Open {
                        depth: r.depth,
                        mask,
                        fired: 0,
                        entered: t,
                    });
                }
            }
            Rec::Exit(_) => {
                if r.open.last().is_some_and(|o| o.depth == r.depth) {
                    let o = r.open.pop().expect("just looked");
                    let ran = t.saturating_sub(o.entered);
                    for (i, &limit) in thresholds.iter().enumerate() {
                        if o.mask & !o.fired & (1 << i) != 0 && ran > limit {
                            hits.push(Hit {
                                thread,
                                trigger: i,
                                at: t,
                                ticks: ran,
                                exited: true,
                            });
                        }
                    }
                }
                r.depth -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_oversized_copy_buffer_is_given_back() {
        let with = |cap: usize, len: usize| {
            let mut v = Vec::with_capacity(cap);
            v.resize(len, 0u64);
            release_if_oversized(&mut v);
            v.capacity()
        };
        // Exact capacities are not promised by Vec::with_capacity: compare against what it gave.
        let kept = Vec::<u64>::with_capacity(4 << 16).capacity();
        assert_eq!(with(4 << 16, 0), kept, "2 MiB is kept");
        assert_eq!(with((4 << 16) + 1, 0), 0, "above 2 MiB, unused: given back");
        let big = Vec::<u64>::with_capacity(4 << 20).capacity();
        assert_eq!(
            with(4 << 20, 1 << 20),
            big,
            "four times what was used is kept"
        );
        assert_eq!(with((4 << 20) + 1, 1 << 20), 0, "more is given back");
    }

    #[test]
    fn the_classification_lasts_one_epoch_and_a_bounded_size() {
        let mut st = State::default();
        st.classes
            .extend((0..MAX_CLASSIFIED as u64).map(|p| (p, 0)));
        st.renew_classes(0);
        assert_eq!(st.classes.len(), MAX_CLASSIFIED, "full is kept");
        st.classes.insert(u64::MAX, 1);
        st.classes.insert(u64::MAX - 1, 1);
        st.renew_classes(0);
        assert!(st.classes.is_empty(), "past full, started over");
        st.classes.insert(8, 1);
        st.renew_classes(0);
        assert_eq!(st.classes.len(), 1, "the same epoch keeps it");
        st.renew_classes(1);
        assert!(st.classes.is_empty(), "an unload forgets it");
        assert_eq!(st.classes_epoch, 1);
        st.classes.insert(8, 1);
        st.renew_classes(1);
        assert_eq!(st.classes.len(), 1, "and the new epoch is remembered");
    }

    #[test]
    fn forward_decoding_matches_the_encoding() {
        let mut slots = Vec::new();
        let mut push = |m: u64, ts: u32| {
            let (s, n) = slot::encode_entry(Mode::Bits64, m, ts).unwrap();
            slots.extend_from_slice(&s[..n]);
        };
        push(0x1000, 1);
        push(0x7f00_0000_0000, 2); // low half 0: would read as an exit alone
        push(0x7f00_0000_0008, 3);
        slots.push(slot::encode_exit(4));
        slots.push(slot::encode_pad());
        slots.push(slot::encode_start(5));
        let mut got = Vec::new();
        assert!(decode_forward(&slots, Mode::Bits64, false, |r| got.push(r)).is_some());
        assert_eq!(
            got,
            vec![
                Rec::Entry(0x1000, 1),
                Rec::Entry(0x7f00_0000_0000, 2),
                Rec::Entry(0x7f00_0000_0008, 3),
                Rec::Exit(4),
                Rec::Start(5)
            ]
        );
        // A marker without its pointer, or in a 32-bit ring: undecodable; unless the stretch
        // was chosen after a lap and may begin anywhere.
        assert!(decode_forward(&slots[2..], Mode::Bits64, false, |_| {}).is_none());
        let mut after_lap = Vec::new();
        assert!(decode_forward(&slots[2..], Mode::Bits64, true, |r| after_lap.push(r)).is_some());
        assert_eq!(after_lap, got[2..]);
        assert!(decode_forward(&slots, Mode::Bits32, false, |_| {}).is_none());
    }

    // Task records (two slots in both modes) are not calls: skipped, whatever their payload's
    // identities; one whose payload is outside a stretch after a lap is skipped too, and a
    // reserved control value or a foreign payload is undecodable.
    #[test]
    fn task_records_are_skipped() {
        for mode in [Mode::Bits64, Mode::Bits32] {
            let mut slots = vec![slot::pack(1, 0x1000)];
            for (i, kind) in slot::TaskKind::ALL.into_iter().enumerate() {
                let id = [0, 1, 0x0fff_ffff, 0x0abc_def0][i];
                slots.extend(slot::encode_task(kind, id, id, 2).unwrap());
            }
            slots.push(slot::encode_exit(3));
            let mut got = Vec::new();
            assert!(decode_forward(&slots, mode, false, |r| got.push(r)).is_some());
            assert_eq!(got, vec![Rec::Entry(0x1000, 1), Rec::Exit(3)], "{mode:?}");
            let mut after_lap = Vec::new();
            assert!(decode_forward(&slots[2..], mode, true, |r| after_lap.push(r)).is_some());
            assert_eq!(after_lap, vec![Rec::Exit(3)], "{mode:?}");
            assert!(decode_forward(&slots[2..], mode, false, |_| {}).is_none());
            for bad in [slot::pack(7, 5), slot::pack(7, 7)] {
                assert!(decode_forward(&[bad], mode, false, |_| {}).is_none());
            }
            let foreign = [1u64 << 60, slot::pack(2, slot::TASK)];
            assert!(decode_forward(&foreign, mode, false, |_| {}).is_none());
        }
    }
}
