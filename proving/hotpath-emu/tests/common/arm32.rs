//! The 32-bit Arm guests' registers (`pool_t32.rs`, `nterp_pool_a32.rs`): unicorn's numbering
//! and the operands of the MRRC that reads the counter.
use unicorn_engine::RegisterARM;

/// Unicorn's id of r`n` (r0 to r12, and LR as r14).
pub fn r(n: u8) -> i32 {
    match n {
        0..=12 => RegisterARM::R0 as i32 + i32::from(n),
        14 => RegisterARM::LR as i32,
        _ => panic!("r{n}"),
    }
}

/// The destination registers of `mrrc p15, #1, rA, rB, c14` (its operands as capstone prints
/// them) → (A, B).
pub fn mrrc_registers(operands: &str) -> (u8, u8) {
    let regs: Vec<u8> = operands
        .split(',')
        .filter_map(|p| match p.trim() {
            "ip" => Some(12),
            "lr" => Some(14),
            name => name.strip_prefix('r')?.parse().ok(),
        })
        .collect();
    assert_eq!(regs.len(), 2, "{operands}");
    (regs[0], regs[1])
}
