//! Capstone listings of compiled code, with the trace points and slow paths marked.
use capstone::prelude::*;

use crate::output::IsaCode;

fn capstone_for(isa: &str) -> Result<Capstone, String> {
    let cs = match isa {
        "arm64" => Capstone::new()
            .arm64()
            .mode(arch::arm64::ArchMode::Arm)
            .build(),
        "thumb2" => Capstone::new()
            .arm()
            .mode(arch::arm::ArchMode::Thumb)
            .extra_mode([arch::arm::ArchExtraMode::V8].iter().copied())
            .build(),
        "x86_64" => Capstone::new()
            .x86()
            .mode(arch::x86::ArchMode::Mode64)
            .build(),
        "x86" => Capstone::new()
            .x86()
            .mode(arch::x86::ArchMode::Mode32)
            .build(),
        _ => return Err(format!("no disassembler for {isa}")),
    };
    cs.map_err(|e| e.to_string())
}

/// One line per instruction: offset, bytes, text, and a marker for trace point code.
pub fn listing(code: &IsaCode) -> Result<String, String> {
    let cs = capstone_for(&code.isa)?;
    let insns = cs.disasm_all(&code.code, 0).map_err(|e| e.to_string())?;
    let mut out = String::new();
    let mut covered = 0usize;
    for i in insns.iter() {
        let at = i.address() as usize;
        let mut mark = String::new();
        for (n, tp) in code.trace_points.iter().enumerate() {
            let kind = if tp.entry { "TraceEntry" } else { "TraceExit" };
            if at >= tp.inline.0 && at < tp.inline.1 {
                mark = format!("  ◀ {kind} #{n}");
            } else if at >= tp.out_of_line.0 && at < tp.out_of_line.1 {
                mark = format!("  ◀ {kind} #{n} (out of line)");
            }
        }
        let bytes: String = i.bytes().iter().map(|b| format!("{b:02x}")).collect();
        out.push_str(&format!(
            "{at:6x}: {bytes:<10} {} {}{mark}\n",
            i.mnemonic().unwrap_or(""),
            i.op_str().unwrap_or("")
        ));
        covered = at + i.bytes().len();
    }
    if covered < code.code.len() {
        out.push_str(&format!(
            "{covered:6x}: ({} bytes of data: literals or padding)\n",
            code.code.len() - covered
        ));
    }
    Ok(out)
}

/// A direct branch of compiled code: its offset, mnemonic and target offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Branch {
    pub at: usize,
    pub mnemonic: String,
    pub target: usize,
}

/// Whether `m` is a direct branch mnemonic (capstone's spelling) on arm64 or thumb2.
fn is_branch(m: &str) -> bool {
    const CONDS: [&str; 16] = [
        "eq", "ne", "cs", "hs", "cc", "lo", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt",
        "le",
    ];
    if matches!(m, "b" | "cbz" | "cbnz" | "tbz" | "tbnz") || m.starts_with("b.") {
        return true;
    }
    // thumb2: b<cond>, b<cond>.w, b<cond>.n
    let base = m.trim_end_matches(".w").trim_end_matches(".n");
    base.len() == 3 && base.starts_with('b') && CONDS.contains(&&base[1..])
}

/// Every direct branch (B, B.cond, CBZ/CBNZ, TBZ/TBNZ; on x86 JMP and Jcc; not calls) with its
/// target.
pub fn branches(code: &IsaCode) -> Result<Vec<Branch>, String> {
    let cs = capstone_for(&code.isa)?;
    let insns = cs.disasm_all(&code.code, 0).map_err(|e| e.to_string())?;
    let x86 = code.isa.starts_with("x86");
    let mut out = Vec::new();
    for i in insns.iter() {
        let m = i.mnemonic().unwrap_or("");
        if !(if x86 {
            m.starts_with('j')
        } else {
            is_branch(m)
        }) {
            continue;
        }
        let ops = i.op_str().unwrap_or("");
        let last = ops.rsplit([',', ' ']).next().unwrap_or("");
        let hex = if x86 {
            last.strip_prefix("0x")
        } else {
            last.strip_prefix("#0x")
        };
        if let Some(hex) = hex {
            if let Ok(target) = usize::from_str_radix(hex, 16) {
                out.push(Branch {
                    at: i.address() as usize,
                    mnemonic: m.to_string(),
                    target,
                });
            }
        }
    }
    Ok(out)
}

/// Offsets of the `FPREM` instructions (`D9 F8`) in x86 code, found by disassembling it (a byte
/// search could match inside another instruction).
pub fn x86_fprem_offsets(code: &[u8]) -> impl Iterator<Item = u64> {
    let found: Vec<u64> = capstone_for("x86")
        .and_then(|cs| {
            cs.disasm_all(code, 0)
                .map_err(|e| e.to_string())
                .map(|insns| {
                    insns
                        .iter()
                        .filter(|i| i.bytes() == [0xd9, 0xf8])
                        .map(|i| i.address())
                        .collect()
                })
        })
        .unwrap_or_default();
    found.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_mnemonics() {
        for m in ["b", "b.ne", "tbz", "cbnz", "bne", "beq.w", "b.w", "bhs.w"] {
            assert!(is_branch(m), "{m}");
        }
        for m in [
            "bl", "blx", "blr", "br", "bic", "bfi", "bx", "bics", "bfxil",
        ] {
            assert!(!is_branch(m), "{m}");
        }
    }
}
