//! Arguments and where ART's managed calling convention puts them. Each `place_*` follows the
//! code generator's own `InvokeDexCallingConventionVisitor*::GetNextLocation`
//! (compiler/optimizing/code_generator_arm64.cc, code_generator_arm_vixl.cc,
//! code_generator_x86_64.cc) line by line, so compiled code finds its parameters where it
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
    fn bad_arguments_are_errors() {
        assert!(parse_args("III", "1").is_err());
        assert!(parse_args("III", "1,x").is_err());
        assert!(parse_args("IB", "300").is_err());
    }
}
