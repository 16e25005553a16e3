//! Prints capstone listings of every emitted sequence (used to refresh tests/golden/).
#[path = "../tests/common/disasm.rs"]
mod disasm;
use hubble_hotpath_emu::*;
fn main() {
    let a = thread_offsets::A64;
    let t = thread_offsets::ARM32;
    for (name, kind) in [
        ("entry", Kind::Entry),
        ("entry-narrow", Kind::EntryNarrow),
        ("exit", Kind::Exit),
    ] {
        println!("A64 {name}:");
        print!(
            "{}",
            disasm::listing(disasm::Isa::A64, &emit_a64(kind, 0, &a, Options::default()))
        );
        println!("T32 {name}:");
        print!(
            "{}",
            disasm::listing(
                disasm::Isa::T32,
                &emit_t32(kind, 0, [4, 5, 6], &t, Options::default())
            )
        );
    }
}
