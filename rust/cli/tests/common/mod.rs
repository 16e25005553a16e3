//! Shared by the tests of this directory (and benches/deobf.rs).

pub mod obfuscate;
