//! The main job (README's first command): an app cold start's call stream executed through the
//! A64 trace points that ART's real emitters produce, in unicorn, with the `Thread` image and the
//! ring shared with the host, so that `hubble-runtime`'s real control thread starts, stops (§6),
//! flushes and restarts tracing while the emulated UI thread runs.
//!
//! * [`workload`]: the call stream and its synthetic class table;
//! * [`guest`]: the A64 driver loop and the emitted trace points;
//! * [`emu`]: host memory mapped into unicorn, the machine that runs the driver loop;
//! * [`native`]: `--isa x86_64`: the emitted x86_64 trace points run natively on this CPU;
//! * [`art_double`]: `hubble_runtime::Art` for the emulated process, and what it observes;
//! * [`run`]: the driver: the threads, the runtime's jank trigger, the property trigger;
//! * [`proof`]: the slot-for-slot check of every flushed file; [`report`]: the JSON report;
//! * [`tasks`]: the many-thread scene (`main-job tasks`): worker threads, task records, an ANR.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod art_double;
pub mod emu;
pub mod guest;
pub mod native;
pub mod proof;
pub mod report;
pub mod run;
pub mod tasks;
pub mod workload;
