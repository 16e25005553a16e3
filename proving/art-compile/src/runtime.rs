//! The quick entrypoints compiled code calls, done as the runtime functions they stand for
//! (runtime/arch/{arm,arm64,x86}/entrypoints_init_*.cc, quick_entrypoints_{arm,x86}.S,
//! entrypoints/math_entrypoints.cc), on the emulated registers. Java semantics where the
//! runtime implements them (art_d2l/art_f2l saturate and map NaN to 0, as Rust's `as` does).

use unicorn_engine::{RegisterARM, RegisterARM64, RegisterX86, Unicorn};

use crate::cpu::Isa;

/// What an entrypoint did.
pub enum Outcome {
    /// Returned normally (the caller resumes at lr).
    Returned,
    /// Threw this Java exception (delivery is not modelled: the run stops).
    Threw(String),
    /// The harness does not provide it.
    Unsupported,
}

fn r(u: &Unicorn<'_, ()>, reg: i32) -> u64 {
    u.reg_read(reg).unwrap_or(0)
}
fn w(u: &mut Unicorn<'_, ()>, reg: i32, v: u64) {
    let _ = u.reg_write(reg, v);
}

/// arm: the low half of d<n/2> is s<n> (n even), the high half s<n+1>.
fn arm_s(u: &Unicorn<'_, ()>, n: i32) -> f32 {
    let d = r(u, RegisterARM::D0 as i32 + n / 2);
    f32::from_bits(if n % 2 == 0 {
        d as u32
    } else {
        (d >> 32) as u32
    })
}
fn arm_set_s0(u: &mut Unicorn<'_, ()>, v: f32) {
    let d = r(u, RegisterARM::D0 as i32);
    w(
        u,
        RegisterARM::D0 as i32,
        (d & !0xffff_ffff) | u64::from(v.to_bits()),
    );
}
fn arm_pair(u: &Unicorn<'_, ()>, lo: RegisterARM) -> i64 {
    let lo_v = r(u, lo as i32) & 0xffff_ffff;
    let hi_v = r(u, lo as i32 + 1) & 0xffff_ffff;
    ((hi_v << 32) | lo_v) as i64
}
fn arm_set_pair(u: &mut Unicorn<'_, ()>, lo: RegisterARM, v: i64) {
    w(u, lo as i32, v as u64 & 0xffff_ffff);
    w(u, lo as i32 + 1, (v as u64) >> 32);
}

/// Runs entrypoint `name` (ART's name without the `p`).
pub fn call(isa: Isa, name: &str, u: &mut Unicorn<'_, ()>) -> Outcome {
    match name {
        // The thread flags are zero, so compiled code only gets here if a mutant or a bug
        // jumps to the slow path; the runtime would suspend and return.
        "TestSuspend" => return Outcome::Returned,
        "ThrowDivZero" => return Outcome::Threw("java.lang.ArithmeticException".into()),
        // JNI stubs of synchronized natives (jni_compiler.cc 2.1 and 7.2): the harness runs one
        // thread, so the monitor is always free; `crate::jni` checks the object passed.
        "JniLockObject" | "JniUnlockObject" => return Outcome::Returned,
        // A JNI stub found an exception pending (DeliverPendingException: the exception in the
        // first argument register). Delivery is not modelled: the run stops with it.
        "DeliverException" => {
            let exception = match isa {
                Isa::Arm64 => r(u, RegisterARM64::X0 as i32),
                Isa::Thumb2 => r(u, RegisterARM::R0 as i32),
                // X86JNIMacroAssembler::DeliverPendingException passes it in EAX.
                Isa::X86 => r(u, unicorn_engine::RegisterX86::EAX as i32),
            };
            return Outcome::Threw(format!("pending exception {exception:#x}"));
        }
        "ThrowNullPointer" => return Outcome::Threw("java.lang.NullPointerException".into()),
        "ThrowArrayBounds" => {
            return Outcome::Threw("java.lang.ArrayIndexOutOfBoundsException".into())
        }
        _ => {}
    }
    match isa {
        Isa::Arm64 => {
            let d =
                |u: &Unicorn<'_, ()>, n: i32| f64::from_bits(r(u, RegisterARM64::D0 as i32 + n));
            let s = |u: &Unicorn<'_, ()>, n: i32| {
                f32::from_bits(r(u, RegisterARM64::D0 as i32 + n) as u32)
            };
            match name {
                // qpoints->SetFmod(fmod), SetFmodf(fmodf): C's fmod is Java's %.
                "Fmod" => {
                    let v = d(u, 0) % d(u, 1);
                    w(u, RegisterARM64::D0 as i32, v.to_bits());
                }
                "Fmodf" => {
                    let v = s(u, 0) % s(u, 1);
                    w(u, RegisterARM64::D0 as i32, u64::from(v.to_bits()));
                }
                _ => return Outcome::Unsupported,
            }
        }
        Isa::Thumb2 => match name {
            // __aeabi_idivmod: r0 / r1 → r0 quotient, r1 remainder (divisor checked non-zero by
            // HDivZeroCheck before the call).
            "Idivmod" => {
                let (a, b) = (
                    r(u, RegisterARM::R0 as i32) as i32,
                    r(u, RegisterARM::R1 as i32) as i32,
                );
                w(u, RegisterARM::R0 as i32, a.wrapping_div(b) as u32 as u64);
                w(u, RegisterARM::R1 as i32, a.wrapping_rem(b) as u32 as u64);
            }
            // __aeabi_ldivmod for both: quotient r0:r1, remainder r2:r3.
            "Ldiv" | "Lmod" => {
                let (a, b) = (arm_pair(u, RegisterARM::R0), arm_pair(u, RegisterARM::R2));
                arm_set_pair(u, RegisterARM::R0, a.wrapping_div(b));
                arm_set_pair(u, RegisterARM::R2, a.wrapping_rem(b));
            }
            "Lmul" => {
                let v = arm_pair(u, RegisterARM::R0).wrapping_mul(arm_pair(u, RegisterARM::R2));
                arm_set_pair(u, RegisterARM::R0, v);
            }
            "ShlLong" | "ShrLong" | "UshrLong" => {
                let (a, n) = (
                    arm_pair(u, RegisterARM::R0),
                    r(u, RegisterARM::R2 as i32) as u32 & 63,
                );
                let v = match name {
                    "ShlLong" => a << n,
                    "ShrLong" => a >> n,
                    _ => ((a as u64) >> n) as i64,
                };
                arm_set_pair(u, RegisterARM::R0, v);
            }
            // art_quick_fmod(f): d0, d1 → d0; s0, s1 → s0.
            "Fmod" => {
                let a = f64::from_bits(r(u, RegisterARM::D0 as i32));
                let b = f64::from_bits(r(u, RegisterARM::D1 as i32));
                w(u, RegisterARM::D0 as i32, (a % b).to_bits());
            }
            "Fmodf" => {
                let v = arm_s(u, 0) % arm_s(u, 1);
                arm_set_s0(u, v);
            }
            // art_quick_d2l / f2l → art_d2l / art_f2l (art_float_to_integral): r0:r1.
            "D2l" => {
                let v = f64::from_bits(r(u, RegisterARM::D0 as i32)) as i64;
                arm_set_pair(u, RegisterARM::R0, v);
            }
            "F2l" => {
                let v = arm_s(u, 0) as i64;
                arm_set_pair(u, RegisterARM::R0, v);
            }
            // art_quick_l2f → art_l2f: r0:r1 → s0.
            "L2f" => {
                let v = arm_pair(u, RegisterARM::R0) as f32;
                arm_set_s0(u, v);
            }
            _ => return Outcome::Unsupported,
        },
        // quick_entrypoints_x86.S (ART 14): art_quick_ldiv/lmod (:1454-1478) pass a = ECX:EAX,
        // b = EBX:EDX to artLdiv/artLmod (divisor checked non-zero by HDivZeroCheck) and return
        // in EDX:EAX; art_quick_d2l/f2l (:1434-1452) pass XMM0 to art_d2l/art_f2l, result in
        // EDX:EAX. x86 computes float remainders inline (fprem) and long multiplies and shifts
        // inline, so those entrypoints are never called.
        Isa::X86 => {
            let pair = |u: &Unicorn<'_, ()>, lo: RegisterX86, hi: RegisterX86| {
                ((r(u, hi as i32) << 32) | (r(u, lo as i32) & 0xffff_ffff)) as i64
            };
            let v = match name {
                "Ldiv" | "Lmod" => {
                    let a = pair(u, RegisterX86::EAX, RegisterX86::ECX);
                    let b = pair(u, RegisterX86::EDX, RegisterX86::EBX);
                    if name == "Ldiv" {
                        a.wrapping_div(b)
                    } else {
                        a.wrapping_rem(b)
                    }
                }
                "D2l" => f64::from_bits(crate::cpu::xmm_read(u, 0).0) as i64,
                "F2l" => f32::from_bits(crate::cpu::xmm_read(u, 0).0 as u32) as i64,
                _ => return Outcome::Unsupported,
            };
            w(u, RegisterX86::EAX as i32, v as u64 & 0xffff_ffff);
            w(u, RegisterX86::EDX as i32, (v as u64) >> 32);
        }
    }
    Outcome::Returned
}
