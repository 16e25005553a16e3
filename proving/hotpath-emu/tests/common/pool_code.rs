//! The code of an A64 engine in many-thread mode (`pool_a64.rs`, `pool_control.rs`): the
//! emitter's three trace points and the runtime's block-end function, placed at fixed guest
//! addresses, with what the tests hook in them.
use std::collections::HashMap;

use hubble_hotpath_emu::{emit_a64, field, thread_offsets, Kind, Options};
use unicorn_engine::Unicorn;

use super::disasm::{disassemble, Isa};

/// Where the trace points start (one page each: entry, narrow entry, exit).
pub const CODE: u64 = 0x10_0000;
/// Where the block-end function is placed (what the pool header's `P_TAKE` then holds).
pub const STUB: u64 = CODE + 0x8000;
/// Bytes mapped at [`CODE`].
pub const CODE_BYTES: u64 = 0x1_0000;

pub struct PoolCode {
    /// (kind, first instruction, terminator) of each trace point.
    pub blobs: Vec<(Kind, u64, u64)>,
    /// The address after each MRS → (its destination register, whether it is the block-end
    /// function's): a code hook there sets the scripted counter.
    pub after_mrs: HashMap<u64, (u8, bool)>,
    /// The trace points' record-publishing stores (`str x16, [x19, #cursor]`; the block-end
    /// function's store of SEALED with the same instruction publishes nothing).
    pub publish: Vec<u64>,
}

impl PoolCode {
    /// Writes the code into `uc` (which has [`CODE`] mapped), with `stub` as the block-end
    /// function.
    pub fn place(uc: &mut Unicorn<'static, ()>, stub: &[u8]) -> PoolCode {
        let mut code = PoolCode {
            blobs: Vec::new(),
            after_mrs: HashMap::new(),
            publish: Vec::new(),
        };
        let cursor = format!("str x16, [x19, #{:#x}]", thread_offsets::A64[field::CURSOR]);
        let mut scan = |code: &mut PoolCode, at: u64, bytes: &[u8], is_stub: bool| {
            uc.mem_write(at, bytes).unwrap();
            for i in disassemble(Isa::A64, bytes) {
                let pc = at + i.offset as u64;
                if i.mnemonic == "mrs" {
                    let reg: u8 = i.text["mrs x".len()..]
                        .split(',')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap();
                    code.after_mrs.insert(pc + i.size as u64, (reg, is_stub));
                }
                if !is_stub && i.text == cursor {
                    code.publish.push(pc);
                }
            }
        };
        for (k, kind) in [Kind::Entry, Kind::EntryNarrow, Kind::Exit]
            .into_iter()
            .enumerate()
        {
            let blob = emit_a64(kind, 0, &thread_offsets::A64, Options::default());
            let at = CODE + 0x1000 * k as u64;
            scan(&mut code, at, &blob.bytes, false);
            code.blobs.push((kind, at, at + blob.terminator as u64));
        }
        scan(&mut code, STUB, stub, true);
        assert!(!code.publish.is_empty(), "no record store found");
        code
    }
}
