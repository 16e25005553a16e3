#![allow(dead_code)]
pub mod arm32;
pub mod disasm;
pub mod emu;
pub mod pool_code;
pub mod pool_guest;
pub mod scenario;
