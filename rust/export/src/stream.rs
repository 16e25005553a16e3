//! Inputs as streams of frame steps, one thread at a time or merged in wall-clock order.
//!
//! A window may begin inside calls whose entries were overwritten, and end inside calls still
//! running at the flush. The streams balance both edges: a thread's stream opens the frames
//! entered before the window at the window start (method `None`) and closes every frame still
//! open at the flush time (the file's reference counter). Nothing is materialized: a backward
//! walk over the raw window counts the frames cut at the start (and lists the methods, for
//! writers that need them up front), then [`EventIter`] decodes forwards on the fly.

use hubble_format::ring::walk_back;
use hubble_format::{EventIter, EventKind, Record, RingView, TraceFile};

use crate::clock::WallClock;
use crate::{ExportError, Result};

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

/// Walks `input`'s window backwards once: the frames cut at both edges, and every method
/// pointer entered (in no particular order) handed to `method`.
pub fn shape(input: Input<'_>, mut method: impl FnMut(u64)) -> Result<Shape> {
    let file = input.file;
    let view = RingView::linear(&file.window);
    // Walking newest → oldest, `suffix` = entries − exits after the current point. The depth
    // at a point is D − suffix (D = entries − exits of the whole window), so the frames open
    // before the window are max(suffix) − D and those open at the end max(suffix).
    let mut suffix = 0i64;
    let mut most = 0i64;
    let mut entries = 0u64;
    walk_back(&view, file.header.mode, |record| match record {
        Record::Entry { method: m, .. } => {
            entries += 1;
            suffix += 1;
            most = most.max(suffix);
            method(m);
        }
        Record::Exit { .. } => suffix -= 1,
        Record::Start { .. } => {}
    })
    .map_err(|e| ExportError::Input {
        name: input.name.to_owned(),
        source: hubble_format::EventsError::Decode(e),
    })?;
    let before = (most - suffix) as u64;
    let open_at_end = most as u64;
    Ok(Shape {
        before,
        open_at_end,
        entries,
    })
}

/// One thread's steps with their timer values, edges balanced.
pub struct ThreadSteps<'a> {
    events: std::iter::Peekable<EventIter<'a>>,
    pending_before: u64,
    depth: u64,
    end: u64,
    last: u64,
    finished: bool,
}

impl<'a> ThreadSteps<'a> {
    /// Prepares the steps of `input`, whose window has `shape`.
    pub fn new(input: Input<'a>, shape: &Shape) -> Result<ThreadSteps<'a>> {
        let file = input.file;
        let view = RingView::linear(&file.window);
        let events = EventIter::new(&view, file.header.mode, file.header.reference_counter)
            .map_err(|source| ExportError::Input {
                name: input.name.to_owned(),
                source,
            })?;
        Ok(ThreadSteps {
            events: events.peekable(),
            pending_before: shape.before,
            depth: 0,
            end: file.header.reference_counter,
            last: 0,
            finished: false,
        })
    }
}

impl Iterator for ThreadSteps<'_> {
    type Item = (u64, Step);

    #[inline]
    fn next(&mut self) -> Option<(u64, Step)> {
        if self.pending_before > 0 {
            self.pending_before -= 1;
            self.depth += 1;
            // Frames entered before the window begin with it (its first event).
            let at = self.events.peek().map_or(self.end, |e| e.counter);
            return Some((at, Step::Enter(None)));
        }
        if !self.finished {
            for event in self.events.by_ref() {
                self.last = event.counter;
                match event.kind {
                    EventKind::Entry { method } => {
                        self.depth += 1;
                        return Some((event.counter, Step::Enter(Some(method))));
                    }
                    EventKind::Exit => {
                        if self.depth == 0 {
                            // Cannot happen when `before` came from the same window.
                            continue;
                        }
                        self.depth -= 1;
                        return Some((event.counter, Step::Exit));
                    }
                    EventKind::Start => {}
                }
            }
            self.finished = true;
        }
        if self.depth > 0 {
            self.depth -= 1;
            return Some((self.end.max(self.last), Step::Exit));
        }
        None
    }
}

/// A prepared input: its steps, clock and shape.
pub struct Prepared<'a> {
    /// The input.
    pub input: Input<'a>,
    /// Its wall clock.
    pub clock: WallClock,
    /// Its edges.
    pub shape: Shape,
}

/// Prepares every input (one backward walk each); `method(i, pointer)` sees every method entered
/// in input `i`.
pub fn prepare<'a>(
    inputs: &[Input<'a>],
    mut method: impl FnMut(usize, u64),
) -> Result<Vec<Prepared<'a>>> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            let shape = shape(*input, |m| method(i, m))?;
            Ok(Prepared {
                input: *input,
                clock: WallClock::new(&input.file.header),
                shape,
            })
        })
        .collect()
}

/// A thread's next step: wall-clock ns and the step.
type Head = Option<(u64, Step)>;

/// Every thread's steps merged by wall-clock time (ties: the earlier input first), each with
/// its input's index and wall-clock nanoseconds.
pub struct Merged<'a> {
    threads: Vec<(ThreadSteps<'a>, WallClock, Head)>,
}

impl<'a> Merged<'a> {
    /// Starts the merge.
    pub fn new(prepared: &[Prepared<'a>]) -> Result<Merged<'a>> {
        let mut threads = Vec::with_capacity(prepared.len());
        for p in prepared {
            let mut steps = ThreadSteps::new(p.input, &p.shape)?;
            let head = steps.next().map(|(c, s)| (p.clock.wall_ns(c), s));
            threads.push((steps, p.clock, head));
        }
        Ok(Merged { threads })
    }

    /// Wall-clock time of the next step, if any.
    pub fn peek_time(&self) -> Option<u64> {
        self.threads
            .iter()
            .filter_map(|(_, _, head)| head.map(|(t, _)| t))
            .min()
    }
}

impl Iterator for Merged<'_> {
    type Item = (usize, u64, Step);

    #[inline]
    fn next(&mut self) -> Option<(usize, u64, Step)> {
        let mut best: Option<(usize, u64)> = None;
        for (i, (_, _, head)) in self.threads.iter().enumerate() {
            if let Some((t, _)) = head {
                if best.map_or(true, |(_, b)| *t < b) {
                    best = Some((i, *t));
                }
            }
        }
        let (i, _) = best?;
        let (steps, clock, head) = &mut self.threads[i];
        let (t, step) = head.take().expect("chosen head");
        *head = steps.next().map(|(c, s)| (clock.wall_ns(c), s));
        Some((i, t, step))
    }
}
