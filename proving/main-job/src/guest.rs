//! The emulated UI thread: a small A64 driver loop that runs the op array through the trace
//! points emitted by the real ART emitters (`hubble_hotpath_emu::emit_a64`), in unicorn.
//!
//! Memory: the `Thread` image, the op array and the progress word are host mmaps; the ring is
//! the runtime's own mapping. Each is mapped into unicorn with `mem_map_ptr` at the address it
//! has in the host, so the addresses the control plane writes into the block are the addresses
//! the guest dereferences. Unicorn's ARM64 CPUs have 44-bit physical addresses and refuse
//! higher ones with the MMU off; host mmaps live near 2^47, so the engine runs in unicorn's
//! virtual-TLB mode with an identity translation (guest virtual = host virtual = "physical").
//!
//! The driver loop (hand-encoded A64, listed with capstone by `main-job emit` and checked by
//! the tests), registers: x19 = Thread*, x20 = next op, x21 = end of this chunk, x22 = &progress.
//!
//! ```text
//! loop:  cmp  x20, x21          ; chunk done?
//!        b.hs done
//!        ldr  x0, [x20], #8     ; op
//!        str  x20, [x22]        ; progress (the Art double places stops in the stream)
//!        tbnz x0, #0, work
//!        cbz  x0, exit
//!        mov  x23, x0
//!        bl   ENTRY             ; the emitted entry trace point (x0 = ArtMethod*)
//!        cmp  x0, x23           ; x0 (the ArtMethod* argument) preserved?
//!        b.ne bad
//!        b    loop
//! exit:  mov  x0, x20           ; a "return value"
//!        mov  x23, x0
//!        bl   EXIT              ; the emitted exit trace point
//!        cmp  x0, x23           ; return value preserved?
//!        b.ne bad
//!        b    loop
//! work:  lsr  x9, x0, #1        ; the method's own work: n iterations
//! spin:  subs x9, x9, #1
//!        b.ne spin
//!        b    loop
//! bad:   brk  #1
//! done:  brk  #0                ; emu_start's `until`: never executed
//! ```

use capstone::prelude::*;
use hubble_hotpath_emu::{emit_a64, thread_offsets, Blob, Kind, Options, Terminator};

/// Offsets (bytes) of the driver's labels.
pub mod label {
    /// `loop`.
    pub const LOOP: u64 = 0;
    /// `bad`.
    pub const BAD: u64 = 84;
    /// `done`.
    pub const DONE: u64 = 88;
}

/// Where the emitted entry and exit trace points are placed after the driver.
pub const ENTRY_AT: u64 = 0x100;
/// See [`ENTRY_AT`].
pub const EXIT_AT: u64 = 0x400;
/// Code bytes.
pub const CODE_BYTES: usize = 0x1000;

fn b_cond(from: u64, to: u64, cond: u32) -> u32 {
    let d = (to as i64 - from as i64) / 4;
    assert!((-(1 << 18)..(1 << 18)).contains(&d));
    0x5400_0000 | (((d as u32) & 0x7_ffff) << 5) | cond
}
fn b(from: u64, to: u64, link: bool) -> u32 {
    let d = (to as i64 - from as i64) / 4;
    assert!((-(1 << 25)..(1 << 25)).contains(&d));
    (if link { 0x9400_0000 } else { 0x1400_0000 }) | ((d as u32) & 0x3ff_ffff)
}
fn cbz(from: u64, to: u64, rt: u32) -> u32 {
    let d = (to as i64 - from as i64) / 4;
    0xb400_0000 | (((d as u32) & 0x7_ffff) << 5) | rt
}
fn tbnz0(from: u64, to: u64, rt: u32) -> u32 {
    let d = (to as i64 - from as i64) / 4;
    assert!((-(1 << 13)..(1 << 13)).contains(&d));
    0x3700_0000 | (((d as u32) & 0x3fff) << 5) | rt
}

const NE: u32 = 1;
const HS: u32 = 2;

/// The driver loop's words (see the module docs), for a code page whose entry and exit trace
/// points sit at [`ENTRY_AT`] and [`EXIT_AT`].
pub fn driver_words() -> Vec<u32> {
    let w = vec![
        0xeb15_029f,                // 0   cmp x20, x21
        b_cond(4, label::DONE, HS), // 4   b.hs done
        0xf840_8680,                // 8   ldr x0, [x20], #8
        0xf900_02d4,                // 12  str x20, [x22]
        tbnz0(16, 68, 0),           // 16  tbnz x0, #0, work
        cbz(20, 44, 0),             // 20  cbz x0, exit
        0xaa00_03f7,                // 24  mov x23, x0
        b(28, ENTRY_AT, true),      // 28  bl ENTRY
        0xeb17_001f,                // 32  cmp x0, x23
        b_cond(36, label::BAD, NE), // 36  b.ne bad
        b(40, label::LOOP, false),  // 40  b loop
        0xaa14_03e0,                // 44  mov x0, x20
        0xaa00_03f7,                // 48  mov x23, x0
        b(52, EXIT_AT, true),       // 52  bl EXIT
        0xeb17_001f,                // 56  cmp x0, x23
        b_cond(60, label::BAD, NE), // 60  b.ne bad
        b(64, label::LOOP, false),  // 64  b loop
        0xd341_fc09,                // 68  lsr x9, x0, #1
        0xf100_0529,                // 72  subs x9, x9, #1
        b_cond(76, 72, NE),         // 76  b.ne spin
        b(80, label::LOOP, false),  // 80  b loop
        0xd420_0020,                // 84  brk #1
        0xd420_0000,                // 88  brk #0
    ];
    assert_eq!(w.len() as u64 * 4, label::DONE + 4);
    w
}

/// The code page: driver, entry trace point, exit trace point.
pub struct Code {
    /// Bytes (placed at the code address).
    pub bytes: Vec<u8>,
    /// The entry blob.
    pub entry: Blob,
    /// The exit blob.
    pub exit: Blob,
}

/// The A64 `Thread` offsets of the block, checked to be five consecutive words.
pub fn block_offset() -> u64 {
    let o = thread_offsets::A64;
    for i in 1..5 {
        assert_eq!(
            o[i],
            o[0] + 8 * i as i32,
            "hubble block is not five consecutive words"
        );
    }
    o[0] as u64
}

/// Emits the trace points with the real emitters (method in x0, callable: RET terminator) and
/// lays out the code page.
pub fn code() -> Code {
    let opts = Options {
        isb: false,
        terminator: Terminator::Return,
    };
    let entry = emit_a64(Kind::Entry, 0, &thread_offsets::A64, opts);
    let exit = emit_a64(Kind::Exit, 0, &thread_offsets::A64, opts);
    assert!(entry.bytes.len() as u64 <= EXIT_AT - ENTRY_AT);
    assert!(exit.bytes.len() as u64 + EXIT_AT <= CODE_BYTES as u64);
    let mut bytes = vec![0u8; CODE_BYTES];
    for (i, word) in driver_words().iter().enumerate() {
        bytes[i * 4..i * 4 + 4].copy_from_slice(&word.to_le_bytes());
    }
    bytes[ENTRY_AT as usize..ENTRY_AT as usize + entry.bytes.len()].copy_from_slice(&entry.bytes);
    bytes[EXIT_AT as usize..EXIT_AT as usize + exit.bytes.len()].copy_from_slice(&exit.bytes);
    Code { bytes, entry, exit }
}

/// One disassembled instruction.
#[derive(Clone, Debug)]
pub struct Insn {
    /// Byte offset.
    pub offset: u64,
    /// Mnemonic.
    pub mnemonic: String,
    /// Operands.
    pub operands: String,
    /// Raw bytes.
    pub bytes: Vec<u8>,
}

/// Capstone disassembly (A64 or T32) of `bytes` placed at `base`.
pub fn disassemble(thumb: bool, bytes: &[u8], base: u64) -> Vec<Insn> {
    let cs = if thumb {
        Capstone::new()
            .arm()
            .mode(arch::arm::ArchMode::Thumb)
            .extra_mode([arch::arm::ArchExtraMode::V8].iter().copied())
            .build()
    } else {
        Capstone::new()
            .arm64()
            .mode(arch::arm64::ArchMode::Arm)
            .build()
    }
    .expect("capstone");
    let insns = cs.disasm_all(bytes, base).expect("disassembly");
    insns
        .iter()
        .map(|i| Insn {
            offset: i.address(),
            mnemonic: i.mnemonic().unwrap_or("").to_string(),
            operands: i.op_str().unwrap_or("").to_string(),
            bytes: i.bytes().to_vec(),
        })
        .collect()
}

/// A listing with the halves of a blob marked.
pub fn listing(thumb: bool, blob: &Blob) -> String {
    let mut out = String::new();
    for i in disassemble(thumb, &blob.bytes, 0) {
        let mark = if i.offset as usize == blob.terminator {
            "   ; ── end of the inline half"
        } else if i.offset as usize == blob.out_of_line {
            "   ; ── out-of-line half (wrap / stop doorbell)"
        } else {
            ""
        };
        let hex: String = i.bytes.iter().map(|b| format!("{b:02x}")).collect();
        out.push_str(&format!(
            "  {:4}: {:<10} {:<8} {}{}\n",
            i.offset, hex, i.mnemonic, i.operands, mark
        ));
    }
    out
}

/// Offsets (in `blob`) of instructions with this mnemonic.
pub fn find(blob: &Blob, mnemonic: &str) -> Vec<(u64, String)> {
    disassemble(false, &blob.bytes, 0)
        .into_iter()
        .filter(|i| i.mnemonic == mnemonic)
        .map(|i| (i.offset, i.operands))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn driver_loop_disassembles_as_documented() {
        let code = code();
        let text: Vec<String> = disassemble(false, &code.bytes[..label::DONE as usize + 4], 0)
            .into_iter()
            .map(|i| format!("{} {}", i.mnemonic, i.operands))
            .collect();
        let want = [
            "cmp x20, x21",
            "b.hs #0x58",
            "ldr x0, [x20], #8",
            "str x20, [x22]",
            "tbnz w0, #0, #0x44",
            "cbz x0, #0x2c",
            "mov x23, x0",
            "bl #0x100",
            "cmp x0, x23",
            "b.ne #0x54",
            "b #0",
            "mov x0, x20",
            "mov x23, x0",
            "bl #0x400",
            "cmp x0, x23",
            "b.ne #0x54",
            "b #0",
            "lsr x9, x0, #1",
            "subs x9, x9, #1",
            "b.ne #0x48",
            "b #0",
            "brk #1",
            "brk #0",
        ];
        assert_eq!(text, want);
    }
}
