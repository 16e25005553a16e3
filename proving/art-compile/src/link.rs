//! Linking a method's code as dex2oat's relative patcher does for the one patch kind the
//! harness's methods have: in AOT code, a runtime call from a slow path (a throw, a suspend
//! check) is a BL placeholder to a shared thunk (`CodeGeneratorARM64::InvokeRuntime` /
//! `CodeGeneratorARMVIXL::InvokeRuntime` → `EmitEntrypointThunkCall`,
//! `LinkerPatch::CallEntrypointPatch`). dex2oat places one thunk per entrypoint (the code
//! generator's own `EmitThunkCode`: arm64 `ldr xIP0, [xSELF, #off]; br xIP0`, thumb2
//! `ldr pc, [rSELF, #off]; bkpt 0`) and points the BL at it
//! (dex2oat/linker/arm64/relative_patcher_arm64.cc and arm/relative_patcher_thumb2.cc,
//! `PatchEntrypointCall` → `PatchBl`). Unlinked, the placeholder branches to itself. Here the
//! thunks go right after the method's code, within BL range.
//!
//! x86 code calls its entrypoints through `fs:` (no thunks), and the PC-relative addresses
//! `HX86ComputeBaseMethodAddress` serves (constant area, packed-switch tables) are fixed up by
//! the assembler inside the method's own code (`X86Assembler::FinalizeCode` / `RIPFixup` in
//! code_generator_x86.cc); only .bss, boot image and JIT literals would be linker patches
//! (`CodeGeneratorX86::EmitLinkerPatches`), and those are refused here like any other kind.

use crate::cpu::Isa;
use crate::output::IsaCode;

/// The method's code with its entrypoint thunks appended and every BL placeholder pointed at
/// its thunk; an error for a linker patch kind the harness does not link.
pub fn link(isa: Isa, code: &IsaCode) -> Result<Vec<u8>, String> {
    if let Some((kind, at)) = code.other_patches.first() {
        return Err(format!(
            "linker patch kind {kind} at code offset {at}: only entrypoint call thunks are linked"
        ));
    }
    let mut out = code.code.clone();
    // One thunk per entrypoint (ArmBaseRelativePatcher::GetEntrypointCallKey), 16-byte aligned
    // (arm64 and thumb2 thunks are emitted at the code alignment of their ISA; 16 covers both).
    let mut placed: Vec<(u32, usize)> = Vec::new();
    for t in &code.thunk_calls {
        let target = match placed.iter().find(|p| p.0 == t.entrypoint_offset) {
            Some(p) => p.1,
            None => {
                while out.len() % 16 != 0 {
                    out.push(0);
                }
                let at = out.len();
                out.extend(&t.thunk);
                placed.push((t.entrypoint_offset, at));
                at
            }
        };
        let literal = t.literal_offset as usize;
        if literal + 4 > code.code.len() {
            return Err(format!("thunk call at {literal} is outside the code"));
        }
        let displacement = (target as u32).wrapping_sub(t.literal_offset);
        match isa {
            Isa::Arm64 => patch_bl_arm64(&mut out, literal, displacement)?,
            Isa::Thumb2 => patch_bl_thumb2(&mut out, literal, displacement)?,
            // CodeGeneratorX86::InvokeRuntime calls `fs:[offset]` directly
            // (code_generator_x86.cc:1105-1107): x86 code has no entrypoint thunks.
            Isa::X86 => return Err(format!("an entrypoint thunk call at {literal} in x86 code")),
        }
    }
    Ok(out)
}

/// Arm64RelativePatcher::PatchBl.
fn patch_bl_arm64(code: &mut [u8], literal: usize, displacement: u32) -> Result<(), String> {
    // DCHECK((displacement >> 27) == 0u || (displacement >> 27) == 31u);  // 28-bit signed.
    if displacement >> 27 != 0 && displacement >> 27 != 31 {
        return Err(format!(
            "BL at {literal}: displacement {displacement:#x} out of range"
        ));
    }
    let mut insn = (displacement & 0x0fff_ffff) >> 2;
    insn |= 0x9400_0000; // BL
                         // Check that we're just overwriting an existing BL.
    let old = u32::from_le_bytes(code[literal..literal + 4].try_into().unwrap());
    if old & 0xfc00_0000 != 0x9400_0000 {
        return Err(format!("no BL placeholder at {literal}: {old:#010x}"));
    }
    code[literal..literal + 4].copy_from_slice(&insn.to_le_bytes());
    Ok(())
}

/// Thumb2RelativePatcher::PatchBl (and SetInsn32 / GetInsn32: two little-endian halfwords,
/// the high one first).
fn patch_bl_thumb2(code: &mut [u8], literal: usize, displacement: u32) -> Result<(), String> {
    const PC_DISPLACEMENT: u32 = 4; // The base PC is at the end of the 4-byte patch.
    let displacement = displacement.wrapping_sub(PC_DISPLACEMENT);
    if displacement & 1 != 0 || (displacement >> 24 != 0 && displacement >> 24 != 255) {
        return Err(format!(
            "BL at {literal}: displacement {displacement:#x} out of range"
        ));
    }
    let signbit = (displacement >> 31) & 0x1;
    let i1 = (displacement >> 23) & 0x1;
    let i2 = (displacement >> 22) & 0x1;
    let imm10 = (displacement >> 12) & 0x03ff;
    let imm11 = (displacement >> 1) & 0x07ff;
    let j1 = i1 ^ (signbit ^ 1);
    let j2 = i2 ^ (signbit ^ 1);
    let mut value = (signbit << 26) | (j1 << 13) | (j2 << 11) | (imm10 << 16) | imm11;
    value |= 0xf000_d000; // BL
    let a = &mut code[literal..literal + 4];
    let old = (u32::from(a[0]) << 16)
        | (u32::from(a[1]) << 24)
        | u32::from(a[2])
        | (u32::from(a[3]) << 8);
    if old & 0xf800_d000 != 0xf000_d000 {
        return Err(format!("no BL placeholder at {literal}: {old:#010x}"));
    }
    a[0] = (value >> 16) as u8;
    a[1] = (value >> 24) as u8;
    a[2] = value as u8;
    a[3] = (value >> 8) as u8;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm64_bl_reaches_forward_and_back() {
        let mut c = vec![0u8; 16];
        c[4..8].copy_from_slice(&0x9400_0000u32.to_le_bytes()); // bl . (placeholder)
        patch_bl_arm64(&mut c, 4, 8).unwrap();
        assert_eq!(u32::from_le_bytes(c[4..8].try_into().unwrap()), 0x9400_0002);
        c[8..12].copy_from_slice(&0x9400_0000u32.to_le_bytes());
        patch_bl_arm64(&mut c, 8, (-8i32) as u32).unwrap();
        assert_eq!(
            u32::from_le_bytes(c[8..12].try_into().unwrap()),
            0x97ff_fffe
        );
        assert!(patch_bl_arm64(&mut c, 0, 8).is_err(), "not a BL");
    }

    #[test]
    fn thumb2_bl_encodes_as_the_patcher_does() {
        // bl with displacement 0 relative to the end of the instruction: f000 f800.
        let mut c = vec![0x00, 0xf0, 0x00, 0xf8, 0, 0, 0, 0];
        patch_bl_thumb2(&mut c, 0, 4).unwrap();
        assert_eq!(c[..4], [0x00, 0xf0, 0x00, 0xf8]);
        // +8 from the end (target at 12): imm11 = 4.
        patch_bl_thumb2(&mut c, 0, 12).unwrap();
        assert_eq!(c[..4], [0x00, 0xf0, 0x04, 0xf8]);
        assert!(patch_bl_thumb2(&mut c, 4, 8).is_err(), "not a BL");
    }
}
