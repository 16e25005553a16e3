//! The emulated CPU as the whole harness addresses it: the ISA, its registers in unicorn's
//! numbering, words of memory, the error type, a dispatched call's frame. Apart from `emu` (the
//! machine that runs a call) because the doubles of the runtime that the machine calls into
//! (`runtime`, `link`, `catch`, `unwind`, `dispatch`) need them too, and must not depend on it.

use unicorn_engine::{RegisterARM, RegisterARM64, RegisterX86, Unicorn};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    Arm64,
    Thumb2,
    /// 32-bit x86 (`InstructionSet::kX86`), in unicorn's `MODE_32` with `%fs` selecting a GDT
    /// descriptor whose base is the Thread image (`emu::x86_fs`).
    X86,
}

impl Isa {
    pub fn name(self) -> &'static str {
        match self {
            Isa::Arm64 => "arm64",
            Isa::Thumb2 => "thumb2",
            Isa::X86 => "x86",
        }
    }

    /// Bytes in a pointer (and a Thread image's entrypoint slot).
    pub fn pointer_size(self) -> u32 {
        match self {
            Isa::Arm64 => 8,
            Isa::Thumb2 | Isa::X86 => 4,
        }
    }

    pub fn from_name(name: &str) -> Option<Isa> {
        match name {
            "arm64" => Some(Isa::Arm64),
            "thumb2" => Some(Isa::Thumb2),
            "x86" => Some(Isa::X86),
            _ => None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EmuError {
    #[error("unicorn: {0}")]
    Unicorn(String),
    #[error("the code did not return (stopped at {pc:#x} after {executed} instructions): {why}")]
    NoReturn { pc: u64, executed: u64, why: String },
    #[error("arguments: {0}")]
    Args(String),
    #[error("ring: {0}")]
    Ring(String),
    #[error("invoke dispatch: {0}")]
    Dispatch(String),
}

pub(crate) fn uc<T>(r: Result<T, unicorn_engine::uc_error>) -> Result<T, EmuError> {
    r.map_err(|e| EmuError::Unicorn(format!("{e:?}")))
}

/// General register `n` (ART's numbering; 31 on arm64 and 13 on thumb2 are sp) in unicorn's.
pub(crate) fn gpr(isa: Isa, n: u8) -> i32 {
    match isa {
        Isa::Arm64 => match n {
            0..=28 => RegisterARM64::X0 as i32 + i32::from(n),
            29 => RegisterARM64::X29 as i32,
            30 => RegisterARM64::X30 as i32,
            _ => RegisterARM64::SP as i32,
        },
        Isa::Thumb2 => match n {
            0..=12 => RegisterARM::R0 as i32 + i32::from(n),
            13 => RegisterARM::SP as i32,
            _ => RegisterARM::LR as i32,
        },
        // ART's numbering (arch/x86/registers_x86.h): EAX ECX EDX EBX ESP EBP ESI EDI.
        Isa::X86 => [
            RegisterX86::EAX,
            RegisterX86::ECX,
            RegisterX86::EDX,
            RegisterX86::EBX,
            RegisterX86::ESP,
            RegisterX86::EBP,
            RegisterX86::ESI,
            RegisterX86::EDI,
        ][usize::from(n & 7)] as i32,
    }
}

/// FP register `n` (arm64 and thumb2: d<n>; x86: xmm<n>) in unicorn's numbering.
pub(crate) fn fpr(isa: Isa, n: u8) -> i32 {
    match isa {
        Isa::Arm64 => RegisterARM64::D0 as i32 + i32::from(n),
        Isa::Thumb2 => RegisterARM::D0 as i32 + i32::from(n),
        Isa::X86 => RegisterX86::XMM0 as i32 + i32::from(n),
    }
}

/// An x86 XMM register's 128 bits as (low, high).
pub(crate) fn xmm_read(u: &Unicorn<'_, ()>, n: u8) -> (u64, u64) {
    let v = u.reg_read_long(fpr(Isa::X86, n)).unwrap_or_default();
    if v.len() < 16 {
        return (0, 0);
    }
    (
        u64::from_le_bytes(v[..8].try_into().unwrap()),
        u64::from_le_bytes(v[8..16].try_into().unwrap()),
    )
}

/// Writes an x86 XMM register's 128 bits as (low, high).
pub(crate) fn xmm_write(
    u: &mut Unicorn<'_, ()>,
    n: u8,
    low: u64,
    high: u64,
) -> Result<(), EmuError> {
    let mut v = [0u8; 16];
    v[..8].copy_from_slice(&low.to_le_bytes());
    v[8..].copy_from_slice(&high.to_le_bytes());
    uc(u.reg_write_long(fpr(Isa::X86, n), &v))
}

/// Reads a little-endian 32-bit word of emulated memory.
pub(crate) fn read_u32(u: &Unicorn<'_, ()>, at: u64) -> Option<u32> {
    let mut b = [0u8; 4];
    u.mem_read(at, &mut b).ok()?;
    Some(u32::from_le_bytes(b))
}

/// The stack pointer's unicorn register.
pub(crate) fn sp_register(isa: Isa) -> i32 {
    match isa {
        Isa::Arm64 => gpr(isa, 31),
        Isa::Thumb2 => gpr(isa, 13),
        Isa::X86 => RegisterX86::ESP as i32,
    }
}

/// A frame the harness dispatched and has not seen return yet.
pub(crate) struct Frame {
    /// The caller's return address (thumb bit cleared).
    pub(crate) ret: u64,
    /// sp at the call: the callee returns with it restored.
    pub(crate) sp: u64,
}
