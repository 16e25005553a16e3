#![allow(dead_code)]
//! Capstone listings of emitted blobs.
use capstone::prelude::*;
use hubble_hotpath_emu::Blob;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    A64,
    T32,
}

pub fn capstone(isa: Isa) -> Capstone {
    match isa {
        Isa::A64 => Capstone::new()
            .arm64()
            .mode(arch::arm64::ArchMode::Arm)
            .build()
            .unwrap(),
        Isa::T32 => Capstone::new()
            .arm()
            .mode(arch::arm::ArchMode::Thumb)
            .extra_mode([arch::arm::ArchExtraMode::V8].iter().copied())
            .build()
            .unwrap(),
    }
}

/// One instruction: offset, size, text.
#[derive(Clone, Debug)]
pub struct Insn {
    pub offset: usize,
    pub size: usize,
    pub mnemonic: String,
    pub text: String,
}

pub fn disassemble(isa: Isa, bytes: &[u8]) -> Vec<Insn> {
    let cs = capstone(isa);
    let insns = cs.disasm_all(bytes, 0).unwrap();
    let out: Vec<Insn> = insns
        .iter()
        .map(|i| Insn {
            offset: i.address() as usize,
            size: i.bytes().len(),
            mnemonic: i.mnemonic().unwrap_or("").to_string(),
            text: format!(
                "{} {}",
                i.mnemonic().unwrap_or(""),
                i.op_str().unwrap_or("")
            )
            .trim()
            .to_string(),
        })
        .collect();
    let covered: usize = out.iter().map(|i| i.size).sum();
    assert_eq!(covered, bytes.len(), "capstone could not decode every byte");
    out
}

/// A listing: `offset: bytes  text`, with the halves marked.
pub fn listing(isa: Isa, blob: &Blob) -> String {
    let mut s = String::new();
    for i in disassemble(isa, &blob.bytes) {
        if i.offset == blob.out_of_line {
            s.push_str("  ; out of line\n");
        }
        let hex: Vec<String> = blob.bytes[i.offset..i.offset + i.size]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        s.push_str(&format!(
            "  {:04x}: {:<12} {}\n",
            i.offset,
            hex.join(""),
            i.text
        ));
    }
    s
}
