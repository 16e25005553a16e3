//! Call-tree reconstruction from events (LIFO matching).
//!
//! A ring holds a window of the execution, so frames may be cut at either edge:
//! * an exit whose entry was overwritten closes a frame that began before the window; such
//!   frames are outer to everything before their exit, start at the window start and have no
//!   known method (their entry slot is gone);
//! * an entry still open at flush time ends at the flush (the reference counter).
//!
//! The stack is an explicit vector; frames deeper than [`TreeOptions::max_depth`] are matched
//! but not materialized, so no input can exhaust memory through depth alone.

use alloc::vec::Vec;

use crate::events::{Event, EventKind};

/// Limits of tree building.
#[derive(Clone, Copy, Debug)]
pub struct TreeOptions {
    /// Frames at this depth or deeper are counted, not stored.
    pub max_depth: usize,
}

impl Default for TreeOptions {
    fn default() -> Self {
        TreeOptions { max_depth: 4096 }
    }
}

/// One method invocation (or the part of it inside the window).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The `ArtMethod*`, or `None` for a frame whose entry is before the window.
    pub method: Option<u64>,
    /// Timer value at entry (the window start if it began before the window).
    pub start: u64,
    /// Timer value at exit (the window end if still open at flush).
    pub end: u64,
    /// Nesting depth, 0 = outermost.
    pub depth: u32,
    /// Index of the enclosing frame in [`CallTree::frames`].
    pub parent: Option<u32>,
    /// The entry was not in the window.
    pub begins_before_window: bool,
    /// The exit was not in the window (the method was still running at flush).
    pub open_at_end: bool,
}

impl Frame {
    /// Ticks between start and end.
    pub fn duration(&self) -> u64 {
        self.end.saturating_sub(self.start)
    }
}

/// Frames in pre-order (a parent before its children, siblings in time order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallTree {
    /// All frames.
    pub frames: Vec<Frame>,
    /// Timer value of the window's first event.
    pub window_start: u64,
    /// Timer value the open frames end at.
    pub window_end: u64,
    /// Frames deeper than the limit (matched, not stored).
    pub dropped_deep_frames: u64,
}

/// Builds the call tree of `events` (oldest first); open frames end at `window_end`.
pub fn build_tree(events: &[Event], window_end: u64, options: TreeOptions) -> CallTree {
    let window_start = events.first().map_or(window_end, |e| e.counter);
    let window_end = events
        .last()
        .map_or(window_end, |e| window_end.max(e.counter));

    // Frames opened before the window = the deepest the running depth goes below zero.
    let mut depth = 0i64;
    let mut lowest = 0i64;
    for event in events {
        match event.kind {
            EventKind::Entry { .. } => depth += 1,
            EventKind::Exit => {
                depth -= 1;
                lowest = lowest.min(depth);
            }
            EventKind::Start | EventKind::Task { .. } => {}
        }
    }
    let before = (-lowest) as u64;

    let mut tree = CallTree {
        frames: Vec::new(),
        window_start,
        window_end,
        dropped_deep_frames: 0,
    };
    // None = a frame past the depth limit.
    let mut stack: Vec<Option<u32>> = Vec::new();
    let open = |tree: &mut CallTree, stack: &mut Vec<Option<u32>>, method, start, early| {
        let depth = stack.len();
        if depth < options.max_depth {
            let index = tree.frames.len() as u32;
            tree.frames.push(Frame {
                method,
                start,
                end: window_end,
                depth: depth as u32,
                parent: stack.last().copied().flatten(),
                begins_before_window: early,
                open_at_end: true,
            });
            stack.push(Some(index));
        } else {
            tree.dropped_deep_frames += 1;
            stack.push(None);
        }
    };
    for _ in 0..before {
        open(&mut tree, &mut stack, None, window_start, true);
    }
    for event in events {
        match event.kind {
            EventKind::Entry { method } => {
                open(&mut tree, &mut stack, Some(method), event.counter, false)
            }
            EventKind::Exit => {
                if let Some(Some(index)) = stack.pop() {
                    let frame = &mut tree.frames[index as usize];
                    frame.end = event.counter;
                    frame.open_at_end = false;
                }
            }
            EventKind::Start | EventKind::Task { .. } => {}
        }
    }
    tree
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_lasts_from_its_start_to_its_end_and_never_less_than_zero() {
        let frame = |start, end| Frame {
            method: Some(0x1000),
            start,
            end,
            depth: 0,
            parent: None,
            begins_before_window: false,
            open_at_end: false,
        };
        assert_eq!(frame(5, 12).duration(), 7);
        assert_eq!(frame(12, 12).duration(), 0);
        assert_eq!(frame(u64::MAX - 1, u64::MAX).duration(), 1);
        assert_eq!(
            frame(12, 5).duration(),
            0,
            "an end before the start is no time, not a wrap"
        );
    }
}
