//! The main job (README's first command): an app cold start's call stream executed through the
//! A64 trace points that ART's real emitters produce, in unicorn, with the `Thread` image and the
//! ring shared with the host, so that `hubble-runtime`'s real control thread starts, stops (§6),
//! flushes and restarts tracing while the emulated UI thread runs.
//!
//! * [`workload`]: the call stream and its synthetic class table;
//! * [`guest`]: the A64 driver loop and the emitted trace points;
//! * [`run`]: the threads, the jank detector, the property trigger, and the slot-for-slot proof.
#![deny(unsafe_op_in_unsafe_fn)]

pub mod guest;
pub mod run;
pub mod workload;
