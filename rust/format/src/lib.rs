//! The Hubble trace format (Hubble, OSDI '22, §5.1, Figures 2–3).
//!
//! * [`slot`]: the 64-bit slot encoding of trace points and control records.
//! * [`ring`]: a reference writer (the traced thread's algorithm, used by tests and tools) and
//!   the reverse decoder that reads a wrapped ring back from its write position.
//! * [`time`]: recovery of full 64-bit timer values from the 32 bits each slot keeps.
//! * [`tree`]: call-tree reconstruction (LIFO matching, frames cut by the window edges).
//! * [`file`]: the self-describing, checksummed trace file written at flush (one thread).
//! * [`threads`]: version 4, a whole process in one file: one section per thread, each thread's
//!   runs of pool blocks ([`pool`]).
//! * [`trace`]: any version read as per-thread sections of runs.
//! * With `std`, reading a trace as the tools show it: [`names`] (display names), [`clock`]
//!   (timer values on the wall clock) and [`stream`] (each thread's call steps, the edges of the
//!   window balanced, threads merged in time): what every writer and analysis starts from.
//!
//! The codec needs only `alloc`; the `std` feature adds file I/O.
#![no_std]
#![deny(unsafe_op_in_unsafe_fn)]

extern crate alloc;
#[cfg(feature = "std")]
extern crate std;

#[cfg(feature = "std")]
pub mod clock;
pub mod file;
#[cfg(feature = "std")]
pub mod names;
pub mod pool;
pub mod pool_traffic;
pub mod ring;
pub mod slot;
#[cfg(feature = "std")]
pub mod stream;
pub mod threads;
pub mod time;
pub mod trace;
pub mod tree;

mod events;

pub use events::{
    decode_events, decode_events_into, DecodedTrace, Event, EventIter, EventKind, EventsError,
};
pub use file::{FileError, TraceFile, TraceHeader};
pub use ring::{decode, DecodeError, RingView, RingWriter, Window, WindowStart};
pub use slot::{Mode, Record};
pub use threads::{ProcessHeader, Run, ThreadSection, ThreadsFile};
pub use time::{counter_to_ns, recover_timestamps, TimeAnchor, TimeBase, TimeError};
pub use trace::{RunFile, RunRef, RunSeq, Section, Trace};
pub use tree::{build_tree, CallTree, Frame, TreeOptions};
