//! Inputs as streams of frame steps, one thread at a time or merged in wall-clock order.
//!
//! A window may begin inside calls whose entries were overwritten, and end inside calls still
//! running at the flush. The streams balance both edges: a thread's stream opens the frames
//! entered before the window at the window start (method `None`) and closes every frame still
//! open at the flush time (the file's reference counter). Nothing is materialized: one backward
//! walk over the raw window counts the frames cut at the start (and lists the methods, for
//! writers that need them up front) while [`EventIter`] finds where to begin; then it decodes
//! forwards on the fly. Steps travel in batches of [`BATCH`]: the per-step work of balancing,
//! placing on the wall clock and merging runs in tight loops, not in layers of iterators.

// The crate is no_std; this module is in its `std` feature.
use std::prelude::rust_2021::*;
use std::vec;

use crate::clock::WallClock;
use crate::{slot, EventIter, EventsError, Record, RingView, TraceFile};

/// An input whose window could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The input's name (its path).
    pub name: String,
    /// What is wrong with it.
    pub source: EventsError,
}

impl core::fmt::Display for InputError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{}: {}", self.name, self.source)
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Result of preparing inputs.
pub type Result<T> = core::result::Result<T, InputError>;

/// One input: a trace file and the name errors call it by.
#[derive(Clone, Copy)]
pub struct Input<'a> {
    /// The file.
    pub file: &'a TraceFile,
    /// Its name (usually the path).
    pub name: &'a str,
}

/// One step of a thread's call stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// A frame begins: the method, or `None` if it was entered before the window.
    Enter(Option<u64>),
    /// The innermost frame ends.
    Exit,
}

/// Steps per batch: a few KiB, so a batch stays in the L1 cache between the stages.
pub const BATCH: usize = 1024;

/// What the backward walk learned about a window.
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape {
    /// Frames open when the window begins (their entries were overwritten).
    pub before: u64,
    /// Frames still open at the flush, including those in `before` that never exit.
    pub open_at_end: u64,
    /// Entries in the window.
    pub entries: u64,
}

impl Step {
    /// The step of a packed code ([`EXIT`], [`BEFORE`] or the method entered).
    #[inline]
    pub fn from_code(code: u64) -> Step {
        match code {
            EXIT => Step::Exit,
            BEFORE => Step::Enter(None),
            method => Step::Enter(Some(method)),
        }
    }
}

/// Packed code of [`Step::Exit`].
pub const EXIT: u64 = 0;
/// Packed code of `Step::Enter(None)` (no method pointer is 1).
pub const BEFORE: u64 = 1;

/// One thread's steps with their timer values, edges balanced.
pub struct ThreadSteps<'a> {
    events: EventIter<'a>,
    /// Timer values are placed on this clock when there is one.
    clock: Option<WallClock>,
    pending_before: u64,
    depth: u64,
    /// When the frames cut at the window start begin: the first event (or the flush).
    first: u64,
    end: u64,
    last: u64,
    finished: bool,
    buf: Vec<(u64, u64)>,
    len: usize,
    next: usize,
}

impl<'a> ThreadSteps<'a> {
    /// Packs the next batch of steps into the buffer as (time, code), code [`EXIT`],
    /// [`BEFORE`] or the method entered.
    fn fill(&mut self) {
        // One loop per kind of time, so that neither pays for the other's in its inner loop.
        match self.clock {
            Some(clock) => self.fill_with(|c| clock.wall_ns(c)),
            None => self.fill_with(|c| c),
        }
    }

    #[inline(always)]
    fn fill_with(&mut self, time: impl Fn(u64) -> u64) {
        if self.buf.is_empty() {
            self.buf = vec![(0, 0); BATCH];
        }
        let mut n = 0;
        // Frames entered before the window begin with it.
        while self.pending_before > 0 && n < BATCH {
            self.pending_before -= 1;
            self.depth += 1;
            self.buf[n] = (time(self.first), BEFORE);
            n += 1;
        }
        // Entries and exits come in a data-dependent mix: the loop has no branch on the kind
        // (it would mispredict for a good share of steps). A start record, or an exit at
        // depth 0 (impossible when `before` came from the same window), is dropped.
        let mut depth = self.depth;
        while !self.finished && n < BATCH {
            let events = self.events.next_codes(BATCH - n);
            let Some(&(last, _)) = events.last() else {
                self.finished = true;
                break;
            };
            self.last = last;
            for &(counter, code) in events {
                let exit = code == EXIT;
                let keep = code != u64::from(slot::START) && !(exit && depth == 0);
                self.buf[n] = (time(counter), code);
                n += usize::from(keep);
                depth = if keep {
                    depth + u64::from(!exit) - u64::from(exit)
                } else {
                    depth
                };
            }
        }
        if self.finished {
            let at = time(self.end.max(self.last));
            while depth > 0 && n < BATCH {
                depth -= 1;
                self.buf[n] = (at, EXIT);
                n += 1;
            }
        }
        self.depth = depth;
        self.len = n;
        self.next = 0;
    }
}

impl Iterator for ThreadSteps<'_> {
    type Item = (u64, Step);

    #[inline]
    fn next(&mut self) -> Option<(u64, Step)> {
        if self.next == self.len {
            self.fill();
            if self.len == 0 {
                return None;
            }
        }
        let (counter, code) = self.buf[self.next];
        self.next += 1;
        Some((counter, Step::from_code(code)))
    }
}

/// A prepared input: its shape and clock, and its events ready to iterate.
#[derive(Clone)]
pub struct Prepared<'a> {
    /// The input.
    pub input: Input<'a>,
    /// Its wall clock.
    pub clock: WallClock,
    /// Its edges.
    pub shape: Shape,
    events: EventIter<'a>,
}

impl<'a> Prepared<'a> {
    /// The input's steps, edges balanced (each call starts from the beginning).
    pub fn steps(&self) -> ThreadSteps<'a> {
        self.steps_on(None)
    }

    fn steps_on(&self, clock: Option<WallClock>) -> ThreadSteps<'a> {
        let header = &self.input.file.header;
        ThreadSteps {
            events: self.events.clone(),
            clock,
            pending_before: self.shape.before,
            depth: 0,
            first: self
                .events
                .oldest_counter()
                .unwrap_or(header.reference_counter),
            end: header.reference_counter,
            last: 0,
            finished: false,
            buf: Vec::new(),
            len: 0,
            next: 0,
        }
    }
}

/// Prepares one input with a single backward walk: its shape, the frames cut at both edges.
pub fn prepare_one(input: Input<'_>) -> Result<Prepared<'_>> {
    prepare_listing(&[input], |_, _| {}).map(|mut p| p.remove(0))
}

/// Prepares every input (see [`prepare_one`]).
pub fn prepare<'a>(inputs: &[Input<'a>]) -> Result<Vec<Prepared<'a>>> {
    inputs.iter().map(|input| prepare_one(*input)).collect()
}

/// [`prepare`], and `method(i, pointer)` sees every method entered in input `i` (in no
/// particular order), for writers that list the methods up front.
pub fn prepare_listing<'a>(
    inputs: &[Input<'a>],
    mut method: impl FnMut(usize, u64),
) -> Result<Vec<Prepared<'a>>> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let header = &input.file.header;
            // Walking newest → oldest, `suffix` = entries − exits after the current point. The
            // depth at a point is D − suffix (D = entries − exits of the whole window), so the
            // frames open before the window are max(suffix) − D and those open at the end
            // max(suffix). (Plain locals: as fields of a struct behind a reference they went
            // through memory on every record, a third slower walk.)
            let (mut suffix, mut most, mut entries) = (0i64, 0i64, 0u64);
            let events = EventIter::new_visiting(
                &RingView::linear(&input.file.window),
                header.mode,
                header.time_base(),
                |record| {
                    // Arithmetic, not a branch on the kind: entries and exits come in a mix
                    // that would mispredict for a good share of records.
                    let (m, entry, exit) = match record {
                        Record::Entry { method, .. } => (method, true, false),
                        Record::Exit { .. } => (0, false, true),
                        Record::Start { .. } | Record::Task { .. } => (0, false, false),
                    };
                    entries += u64::from(entry);
                    suffix += i64::from(entry) - i64::from(exit);
                    most = most.max(suffix);
                    if entry {
                        method(i, m);
                    }
                },
            )
            .map_err(|source| InputError {
                name: input.name.to_owned(),
                source,
            })?;
            Ok(Prepared {
                input: *input,
                clock: WallClock::new(header),
                shape: Shape {
                    before: (most - suffix) as u64,
                    open_at_end: most as u64,
                    entries,
                },
                events,
            })
        })
        .collect()
}

/// One thread of a merge: its steps, on the wall clock.
struct Lane<'a> {
    steps: ThreadSteps<'a>,
}

impl Lane<'_> {
    /// Wall-clock time of the lane's next step, refilling the batch when it is used up.
    #[inline]
    fn head(&mut self) -> Option<u64> {
        let steps = &mut self.steps;
        if steps.next == steps.len {
            steps.fill();
        }
        (steps.next < steps.len).then(|| steps.buf[steps.next].0)
    }

    /// The steps of the current batch not yet taken.
    fn rest(&self) -> &[(u64, u64)] {
        &self.steps.buf[self.steps.next..self.steps.len]
    }
}

/// Every thread's steps merged by wall-clock time (ties: the earlier input first), each with
/// its input's index and wall-clock nanoseconds.
pub struct Merged<'a> {
    lanes: Vec<Lane<'a>>,
}

impl<'a> Merged<'a> {
    /// Starts the merge.
    pub fn new(prepared: &[Prepared<'a>]) -> Merged<'a> {
        let lanes = prepared
            .iter()
            .map(|p| Lane {
                steps: p.steps_on(Some(p.clock)),
            })
            .collect();
        Merged { lanes }
    }

    /// Wall-clock time of the next step, if any.
    pub fn peek_time(&mut self) -> Option<u64> {
        self.lanes.iter_mut().filter_map(Lane::head).min()
    }

    /// The lane whose step comes next, and the time of the step after which another lane's
    /// comes first (`u64::MAX`: none), with whether a step at exactly that time still belongs
    /// to the chosen lane (ties go to the earlier input).
    fn choose(&mut self) -> Option<(usize, u64, bool)> {
        let mut best: Option<(usize, u64)> = None;
        let mut second: Option<(usize, u64)> = None;
        for (i, lane) in self.lanes.iter_mut().enumerate() {
            let Some(t) = lane.head() else { continue };
            match best {
                Some((_, b)) if t >= b => {
                    if second.map_or(true, |(_, s)| t < s) {
                        second = Some((i, t));
                    }
                }
                _ => {
                    second = best;
                    best = Some((i, t));
                }
            }
        }
        let (i, _) = best?;
        Some(match second {
            Some((j, t)) => (i, t, j > i),
            None => (i, u64::MAX, true),
        })
    }

    /// The next run of steps of one thread that come before any other thread's: its input's
    /// index and the steps (wall-clock ns, code as in [`Step::from_code`]). Writers loop over
    /// runs; with one input a run is a whole batch.
    pub fn next_run(&mut self) -> Option<(usize, &[(u64, u64)])> {
        let (i, limit, inclusive) = self.choose()?;
        let lane = &mut self.lanes[i];
        let rest = lane.rest();
        let n = if limit == u64::MAX {
            rest.len()
        } else {
            rest.iter()
                .position(|s| s.0 > limit || (s.0 == limit && !inclusive))
                .unwrap_or(rest.len())
                .max(1)
        };
        let start = lane.steps.next;
        lane.steps.next += n;
        Some((i, &lane.steps.buf[start..start + n]))
    }
}

impl Iterator for Merged<'_> {
    type Item = (usize, u64, Step);

    #[inline]
    fn next(&mut self) -> Option<(usize, u64, Step)> {
        let (i, _, _) = self.choose()?;
        let steps = &mut self.lanes[i].steps;
        let (t, code) = steps.buf[steps.next];
        steps.next += 1;
        Some((i, t, Step::from_code(code)))
    }
}

/// Runs packed for the trip to the consumer thread: steps, (input, length) per run, and the
/// annotations of the steps if the producer made them.
struct Chunk<A> {
    steps: Vec<(u64, u64)>,
    runs: Vec<(usize, usize)>,
    extra: Vec<A>,
    annotated: bool,
}

impl<A> Default for Chunk<A> {
    fn default() -> Self {
        Chunk {
            steps: Vec::new(),
            runs: Vec::new(),
            extra: Vec::new(),
            annotated: false,
        }
    }
}

/// Chunks in flight between the threads of [`Merged::pipeline`].
const DEPTH: usize = 4;
/// Steps per chunk: about 150 µs of work, so that the threads rarely wait for each other (a
/// wake-up costs several µs, more in a VM; with 1024-step chunks the hand-overs took a tenth of
/// the export's CPU time).
const CHUNK: usize = 16 * BATCH;

impl Merged<'_> {
    /// A [`Merged::next_run`] loop on two threads. A second thread decodes, balances, places on
    /// the wall clock and merges the steps, while this one calls `start` (a writer's header,
    /// which may take a while: it overlaps with the first steps' decoding) and then
    /// `visit(state, input, run, extra)` for every run, in order, where `extra` holds what
    /// `annotate(input, run, extra)` appended for each step of the run (one item a step).
    /// Either thread annotates a chunk of runs: the producer does when the consumer has fallen
    /// behind (two chunks are already waiting), so the work splits itself evenly whether writing is
    /// cheap (a sink) or not (a file). Stops at the first error; returns the state. On two
    /// cores this nearly halves an export's wall time; its CPU time is a single-threaded
    /// loop's plus a hand-over per [`CHUNK`] steps.
    pub fn pipeline<S, A: Send, E>(
        self,
        annotate: &(impl Fn(usize, &[(u64, u64)], &mut Vec<A>) + Sync),
        start: impl FnOnce() -> core::result::Result<S, E>,
        mut visit: impl FnMut(&mut S, usize, &[(u64, u64)], &[A]) -> core::result::Result<(), E>,
    ) -> core::result::Result<S, E> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Chunk<A>>(DEPTH);
        let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Chunk<A>>();
        let queued = &AtomicUsize::new(0);
        let mut merged = self;
        std::thread::scope(|scope| {
            scope.spawn(move || loop {
                let mut chunk = empty_rx.try_recv().unwrap_or_default();
                chunk.steps.clear();
                chunk.runs.clear();
                chunk.extra.clear();
                // A hint, not a protocol: either side may annotate any chunk.
                chunk.annotated = queued.load(Ordering::Relaxed) >= 2;
                let mut done = false;
                while chunk.steps.len() < CHUNK {
                    let Some((i, run)) = merged.next_run() else {
                        done = true;
                        break;
                    };
                    chunk.steps.extend_from_slice(run);
                    chunk.runs.push((i, run.len()));
                    if chunk.annotated {
                        annotate(i, run, &mut chunk.extra);
                    }
                }
                if chunk.runs.is_empty() {
                    break;
                }
                queued.fetch_add(1, Ordering::Relaxed);
                // A failed send means the consumer stopped (an error): so does the producer.
                if full_tx.send(chunk).is_err() || done {
                    break;
                }
            });
            // The receiver is dropped before the scope joins the producer, so a producer
            // blocked on a full channel wakes up (its send fails) when this side fails.
            let full_rx = full_rx;
            let result = (|| {
                let mut state = start()?;
                let mut own = Vec::new();
                for chunk in full_rx.iter() {
                    queued.fetch_sub(1, Ordering::Relaxed);
                    let mut at = 0;
                    for &(i, n) in &chunk.runs {
                        let run = &chunk.steps[at..at + n];
                        let extra = if chunk.annotated {
                            &chunk.extra[at..at + n]
                        } else {
                            own.clear();
                            annotate(i, run, &mut own);
                            &own[..]
                        };
                        assert_eq!(extra.len(), n, "one annotation a step");
                        visit(&mut state, i, run, extra)?;
                        at += n;
                    }
                    // The producer may have finished: its chunks are no longer needed.
                    let _ = empty_tx.send(chunk);
                }
                Ok(state)
            })();
            drop(full_rx);
            result
        })
    }
}
