//! The one pass every analysis makes: frames of a thread, completed innermost first, with their
//! open ancestors.

use hubble_format::clock::WallClock;
use hubble_format::stream::{prepare_one, Step};

use crate::{Input, Result};

/// A frame still open (an ancestor of the frame being closed).
#[derive(Clone, Copy, Debug)]
pub struct Open {
    /// The method, `None` if entered before the window.
    pub method: Option<u64>,
    /// Timer value at entry.
    pub start: u64,
    /// Ticks spent in completed children.
    pub child_ticks: u64,
    /// Whether any child has been entered.
    pub has_children: bool,
}

/// A completed frame.
#[derive(Clone, Copy, Debug)]
pub struct Closed {
    /// The method, `None` if entered before the window.
    pub method: Option<u64>,
    /// Timer value at entry.
    pub start: u64,
    /// Timer value at exit (the flush for frames still running).
    pub end: u64,
    /// Ticks spent in children.
    pub child_ticks: u64,
    /// Whether it called anything.
    pub has_children: bool,
}

impl Closed {
    /// Inclusive ticks.
    pub fn ticks(&self) -> u64 {
        self.end - self.start
    }
    /// Self ticks.
    pub fn self_ticks(&self) -> u64 {
        self.ticks().saturating_sub(self.child_ticks)
    }
}

/// Calls `visit(ancestors, frame)` for every frame of `input` as it completes (post-order);
/// `ancestors[0]` is the outermost. Frames cut by the window edges are balanced as the
/// exporters balance them. Returns the input's clock.
pub fn walk(input: Input<'_>, mut visit: impl FnMut(&[Open], &Closed)) -> Result<WallClock> {
    let prepared = prepare_one(input)?;
    let clock = WallClock::new(&input.file.header);
    let mut stack: Vec<Open> = Vec::new();
    for (counter, step) in prepared.steps() {
        match step {
            Step::Enter(method) => {
                if let Some(parent) = stack.last_mut() {
                    parent.has_children = true;
                }
                stack.push(Open {
                    method,
                    start: counter,
                    child_ticks: 0,
                    has_children: false,
                });
            }
            Step::Exit => {
                let Some(open) = stack.pop() else { continue };
                let closed = Closed {
                    method: open.method,
                    start: open.start,
                    end: counter.max(open.start),
                    child_ticks: open.child_ticks,
                    has_children: open.has_children,
                };
                if let Some(parent) = stack.last_mut() {
                    parent.child_ticks += closed.ticks();
                }
                visit(&stack, &closed);
            }
        }
    }
    Ok(clock)
}
