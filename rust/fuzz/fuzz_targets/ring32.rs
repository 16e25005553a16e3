//! Any bytes as a 32-bit ring (see common/ring.rs).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common/ring.rs"]
mod ring;

fuzz_target!(|data: &[u8]| ring::check(data, hubble_format::Mode::Bits32));
