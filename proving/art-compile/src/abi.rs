//! Arguments and where ART's managed calling convention puts them. Each `place_*` follows the
//! code generator's own `InvokeDexCallingConventionVisitor*::GetNextLocation`
//! (compiler/optimizing/code_generator_arm64.cc, code_generator_arm_vixl.cc,
//! code_generator_x86.cc, code_generator_x86_64.cc) line by line, so compiled code finds its parameters where it
//! expects them.

/// An argument: its shorty type and its bits (ints sign-extended to 64, floats as IEEE bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arg {
    pub ty: u8,
    pub bits: u64,
}

/// Parses `3,4,-1.5` against the shorty's parameter types (`"III"`: return type first).
pub fn parse_args(shorty: &str, text: &str) -> Result<Vec<Arg>, String> {
    let params = &shorty.as_bytes()[1..];
    let parts: Vec<&str> = if text.trim().is_empty() {
        Vec::new()
    } else {
        text.split(',').map(str::trim).collect()
    };
    if parts.len() != params.len() {
        return Err(format!(
            "the method takes {} argument(s) (shorty {shorty}), got {}",
            params.len(),
            parts.len()
        ));
    }
    params
        .iter()
        .zip(parts)
        .map(|(&ty, p)| {
            let bad = || format!("'{p}' is not a valid {} argument", ty as char);
            let bits = match ty {
                b'Z' => match p {
                    "true" | "1" => 1,
                    "false" | "0" => 0,
                    _ => return Err(bad()),
                },
                b'B' => p.parse::<i8>().map_err(|_| bad())? as i64 as u64,
                b'S' => p.parse::<i16>().map_err(|_| bad())? as i64 as u64,
                b'C' => p.parse::<u16>().map_err(|_| bad())? as u64,
                b'I' => p.parse::<i32>().map_err(|_| bad())? as i64 as u64,
                b'J' => p.parse::<i64>().map_err(|_| bad())? as u64,
                b'F' => u64::from(p.parse::<f32>().map_err(|_| bad())?.to_bits()),
                b'D' => p.parse::<f64>().map_err(|_| bad())?.to_bits(),
                b'L' => return Err("reference arguments are not supported yet".into()),
                _ => return Err(format!("unknown shorty type {}", ty as char)),
            };
            Ok(Arg { ty, bits })
        })
        .collect()
}

/// Register numbers and values; `stack` lists what goes to memory: (stack index in 32-bit
/// vreg units, bits, wide). The callee finds stack index `i` at its entry sp + pointer size +
/// 4 * i (CallingConvention::GetStackOffsetOf: the ArtMethod* slot, then every parameter's
/// vreg space, registers' included).
#[derive(Debug, Default)]
pub struct Placed {
    pub core: Vec<(u8, u64)>,
    /// arm64: d<n>; arm: s<n> (a double is written to its even s register's d).
    pub fp: Vec<(u8, u64)>,
    pub stack: Vec<(u32, u64, bool)>,
}

/// arm64: x1-x7 (x0 is the ArtMethod*), d0-d7, stack otherwise.
pub fn place_arm64(_shorty: &str, args: &[Arg]) -> Result<Placed, String> {
    let mut p = Placed::default();
    let (mut gp, mut fp, mut stack) = (0u8, 0u8, 0u32);
    for a in args {
        let wide = matches!(a.ty, b'J' | b'D');
        match a.ty {
            b'F' | b'D' => {
                if fp < 8 {
                    p.fp.push((fp, a.bits));
                    fp += 1;
                } else {
                    p.stack.push((stack, a.bits, wide));
                }
            }
            _ => {
                if gp < 7 {
                    let v = if wide { a.bits } else { a.bits & 0xffff_ffff };
                    p.core.push((gp + 1, v));
                    gp += 1;
                } else {
                    p.stack.push((stack, a.bits, wide));
                }
            }
        }
        stack += if wide { 2 } else { 1 };
    }
    Ok(p)
}

/// arm (thumb2): r1-r3 (longs in r2:r3, skipping r1), s0-s15 with ART's float/double
/// back-filling.
pub fn place_arm(_shorty: &str, args: &[Arg]) -> Result<Placed, String> {
    const NCORE: u32 = 3; // r1, r2, r3
    const NFP: u32 = 16; // s0-s15
    let mut p = Placed::default();
    let (mut gp_index, mut stack_index, mut float_index, mut double_index) =
        (0u32, 0u32, 0u32, 0u32);
    for a in args {
        let wide = matches!(a.ty, b'J' | b'D');
        match a.ty {
            b'J' => {
                let mut index = gp_index;
                let stack = stack_index;
                gp_index += 2;
                stack_index += 2;
                if index + 1 < NCORE && index == 0 {
                    // Skip R1, and use R2_R3 instead.
                    gp_index += 1;
                    index += 1;
                }
                if index + 1 < NCORE {
                    p.core.push((index as u8 + 1, a.bits & 0xffff_ffff));
                    p.core.push((index as u8 + 2, a.bits >> 32));
                } else {
                    p.stack.push((stack, a.bits, wide));
                }
            }
            b'F' => {
                let stack = stack_index;
                stack_index += 1;
                if float_index % 2 == 0 {
                    float_index = float_index.max(double_index);
                }
                if float_index < NFP {
                    p.fp.push((float_index as u8, a.bits));
                    float_index += 1;
                } else {
                    p.stack.push((stack, a.bits, wide));
                }
            }
            b'D' => {
                double_index = double_index.max((float_index + 1) / 2 * 2); // RoundUp(float_index_, 2)
                let stack = stack_index;
                stack_index += 2;
                if double_index + 1 < NFP {
                    // Written as d<double_index/2>: s<2n> low half, s<2n+1> high half.
                    p.fp.push((double_index as u8, a.bits & 0xffff_ffff));
                    p.fp.push((double_index as u8 + 1, a.bits >> 32));
                    double_index += 2;
                } else {
                    p.stack.push((stack, a.bits, wide));
                }
            }
            _ => {
                let index = gp_index;
                gp_index += 1;
                let stack = stack_index;
                stack_index += 1;
                if index < NCORE {
                    p.core.push((index as u8 + 1, a.bits & 0xffff_ffff));
                } else {
                    p.stack.push((stack, a.bits, wide));
                }
            }
        }
    }
    Ok(p)
}

/// x86: ECX, EDX, EBX (longs in the pairs ECX_EDX or EDX_EBX by their first index, never
/// back-filled), XMM0-3 (one per float or double), stack otherwise: code_generator_x86.h:38-41
/// (kParameterCoreRegisters, kParameterCorePairRegisters, kParameterFpuRegisters) and
/// code_generator_x86.cc:1439-1497 (InvokeDexCallingConventionVisitorX86::GetNextLocation), ART
/// 14. `stack` holds every argument, register ones included: art_quick_invoke_stub copies the
/// whole argument array after the ArtMethod* slot (quick_entrypoints_x86.S:484-488) before it
/// loads the registers, and the code reads a stack-passed argument there.
pub fn place_x86(_shorty: &str, args: &[Arg]) -> Result<Placed, String> {
    const CORE: [u8; 3] = [1, 2, 3]; // ECX, EDX, EBX in ART's numbering
    const PAIRS: [(u8, u8); 2] = [(1, 2), (2, 3)]; // ECX_EDX, EDX_EBX
    const NFP: u32 = 4; // XMM0-3
    let mut p = Placed::default();
    let (mut gp_index, mut float_index, mut stack_index) = (0u32, 0u32, 0u32);
    for a in args {
        let wide = matches!(a.ty, b'J' | b'D');
        match a.ty {
            b'J' => {
                let index = gp_index;
                gp_index += 2;
                if index + 1 < CORE.len() as u32 {
                    let (lo, hi) = PAIRS[index as usize];
                    p.core.push((lo, a.bits & 0xffff_ffff));
                    p.core.push((hi, a.bits >> 32));
                }
            }
            b'F' | b'D' => {
                let index = float_index;
                float_index += 1;
                if index < NFP {
                    p.fp.push((index as u8, a.bits));
                }
            }
            _ => {
                let index = gp_index;
                gp_index += 1;
                if index < CORE.len() as u32 {
                    p.core.push((CORE[index as usize], a.bits & 0xffff_ffff));
                }
            }
        }
        p.stack.push((stack_index, a.bits, wide));
        stack_index += if wide { 2 } else { 1 };
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm_long_skips_r1() {
        let a = parse_args("VJI", "5,7").unwrap();
        let p = place_arm("VJI", &a).unwrap();
        // J in r2:r3, I no longer fits a register (r1 is skipped, not back-filled).
        assert_eq!(p.core, vec![(2, 5), (3, 0)]);
        assert_eq!(p.stack.len(), 1);
    }

    #[test]
    fn arm_float_backfills_after_double() {
        let a = parse_args("VFDF", "1,2,3").unwrap();
        let p = place_arm("VFDF", &a).unwrap();
        let regs: Vec<u8> = p.fp.iter().map(|f| f.0).collect();
        // F → s0, D → s2:s3, F → s1 (back-filled).
        assert_eq!(regs, vec![0, 2, 3, 1]);
    }

    #[test]
    fn x86_long_pairs_follow_the_first_index() {
        // I → ECX; J → EDX_EBX (index 1); I → stack only.
        let a = parse_args("VIJI", "1,2,3").unwrap();
        let p = place_x86("VIJI", &a).unwrap();
        assert_eq!(p.core, vec![(1, 1), (2, 2), (3, 0)]);
        // J at index 0 → ECX_EDX, then I → EBX; D, F → XMM0, XMM1.
        let a = parse_args("VJIDF", "-1,7,1.5,2").unwrap();
        let p = place_x86("VJIDF", &a).unwrap();
        assert_eq!(p.core, vec![(1, 0xffff_ffff), (2, 0xffff_ffff), (3, 7)]);
        assert_eq!(p.fp.iter().map(|f| f.0).collect::<Vec<_>>(), vec![0, 1]);
        // Every argument is also in the stack array, at its vreg index.
        let idx: Vec<u32> = p.stack.iter().map(|s| s.0).collect();
        assert_eq!(idx, vec![0, 2, 3, 5]);
    }

    #[test]
    fn bad_arguments_are_errors() {
        assert!(parse_args("III", "1").is_err());
        assert!(parse_args("III", "1,x").is_err());
        assert!(parse_args("IB", "300").is_err());
    }
}
