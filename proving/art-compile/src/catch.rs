//! Exception delivery into compiled catch handlers: the harness's double of
//! `QuickExceptionHandler::FindCatch` (runtime/quick_exception_handler.cc), for compiled frames.
//!
//! Frames are visited innermost first, as `CatchBlockStackVisitor::VisitFrame` does (ART 14:
//! runtime/quick_exception_handler.cc:82-116); a native frame has no dex pc and is unwound
//! (`HandleTryItems`, :123-129). For each other frame, the dex pc of the call it is in
//! (`OatQuickMethodHeader::ToDexPc`: the stack map at the return address) is looked up in the
//! method's try items and their handlers, in order (`ArtMethod::FindCatchBlock`,
//! runtime/art_method.cc:319-363: the catch-all ends the search, a handler whose type does not
//! resolve is skipped, else the first whose type `IsAssignableFrom` the exception's class). The
//! first match is the catch: the handler's native pc is its catch stack map's
//! (`ToNativeQuickPcForCatchHandlers`, quick_exception_handler.cc:138-141), and every catch
//! vreg live at the catch (always in a stack slot) gets the value its throwing call's location
//! holds, or the delivery fails as ART's CHECK does (`SetCatchEnvironmentForOptimizedHandler`,
//! :292-374). The frames inside the catching one
//! are unwound (their exits written by `crate::unwind`, as patch 0021's visitor does for each
//! frame it pops); execution continues at the handler with the catching frame's sp.
//!
//! Without a class linker, types are compared by name: the few exceptions the harness's
//! entrypoints throw know their superclasses (`superclasses`); a handler of any other type
//! never matches (ART ignores a handler whose type fails to resolve, FindCatchBlock).

use unicorn_engine::{RegisterARM, RegisterARM64, Unicorn};

use crate::cpu::{gpr, Frame, Isa};
use crate::output::{DexRegs, PcMap, TryItem, VregLoc};

/// A compiled method the machine has loaded: what the exception handler reads of it.
#[derive(Clone, Debug)]
pub(crate) struct FrameCode {
    /// Code start (thumb bit clear) and length.
    pub(crate) start: u64,
    pub(crate) len: u64,
    pub(crate) pc_map: Vec<PcMap>,
    pub(crate) dex_regs: Vec<DexRegs>,
    pub(crate) tries: Vec<TryItem>,
    pub(crate) move_exceptions: Vec<u32>,
}

/// Where delivery ends.
pub(crate) enum Delivery {
    /// Caught by frame `depth` (0: the innermost): the frames inside it are popped; execution
    /// continues at `pc` with `sp`. `keep`: the handler begins with move-exception, so the
    /// exception stays pending for it (ArtMethod::FindCatchBlock's `has_no_move_exception`,
    /// art_method.cc:356; FindCatch clears it otherwise, quick_exception_handler.cc:254-257).
    Caught {
        depth: usize,
        sp: u64,
        pc: u64,
        keep: bool,
    },
    /// No compiled frame catches it: every frame is popped.
    Uncaught,
}

/// java.lang's class hierarchy for the exceptions the harness's entrypoints throw (libcore:
/// ArithmeticException extends RuntimeException, ...), innermost first, as descriptors.
fn superclasses(exception: &str) -> Vec<String> {
    let chain: &[&str] = match exception {
        "java.lang.ArithmeticException" | "java.lang.NullPointerException" => &[
            "java.lang.RuntimeException",
            "java.lang.Exception",
            "java.lang.Throwable",
        ],
        "java.lang.ArrayIndexOutOfBoundsException" => &[
            "java.lang.IndexOutOfBoundsException",
            "java.lang.RuntimeException",
            "java.lang.Exception",
            "java.lang.Throwable",
        ],
        "java.lang.NoSuchMethodError"
        | "java.lang.NoSuchFieldError"
        | "java.lang.AbstractMethodError" => &[
            "java.lang.IncompatibleClassChangeError",
            "java.lang.LinkageError",
            "java.lang.Error",
            "java.lang.Throwable",
        ],
        "java.lang.IncompatibleClassChangeError" => &[
            "java.lang.LinkageError",
            "java.lang.Error",
            "java.lang.Throwable",
        ],
        _ => &[],
    };
    std::iter::once(exception)
        .chain(chain.iter().copied())
        .map(|c| format!("L{};", c.replace('.', "/")))
        .collect()
}

/// `ArtMethod::FindCatchBlock`: the handler dex pc for an exception thrown at `dex_pc`.
fn find_catch_block(tries: &[TryItem], exception: &str, dex_pc: u32) -> Option<u32> {
    let types = superclasses(exception);
    // Try items do not overlap; the one covering dex_pc, then its handlers in order.
    let item = tries.iter().find(|t| t.start <= dex_pc && dex_pc < t.end)?;
    item.handlers
        .iter()
        .find(|(ty, _)| match ty {
            None => true,
            Some(ty) => types.iter().any(|t| t == ty),
        })
        .map(|(_, pc)| *pc)
}

/// The dex pc of the call whose return address is `native_pc` (ToDexPc).
fn dex_pc_at(pc_map: &[PcMap], native_pc: u32) -> Option<u32> {
    pc_map
        .iter()
        .find(|m| m.native_pc == native_pc && m.kind != 0)
        .map(|m| m.dex_pc)
}

fn read32(u: &Unicorn<'_, ()>, at: u64) -> Result<u32, String> {
    let mut b = [0u8; 4];
    u.mem_read(at, &mut b)
        .map_err(|e| format!("reading the frame at {at:#x}: {e:?}"))?;
    Ok(u32::from_le_bytes(b))
}

/// A vreg's 32-bit value at the throwing call of frame `depth`.
fn value_at(
    u: &Unicorn<'_, ()>,
    isa: Isa,
    sp: u64,
    depth: usize,
    loc: VregLoc,
) -> Result<Option<u32>, String> {
    let in_register = |what: &str| {
        if depth == 0 {
            Ok(())
        } else {
            // The value would be in a callee-save register as the frame made its call: the
            // harness does not read the callee-saves the popped frames spilled yet.
            Err(format!(
                "a catch value in {what} of a frame {depth} calls up is not modelled"
            ))
        }
    };
    Ok(Some(match loc {
        VregLoc::None => return Ok(None),
        VregLoc::Stack(off) => read32(u, sp.wrapping_add(off as u64))?,
        VregLoc::Constant(c) => c as u32,
        VregLoc::Register(r) | VregLoc::RegisterHigh(r) => {
            in_register("a core register")?;
            let v = u.reg_read(gpr(isa, r)).unwrap_or(0);
            if matches!(loc, VregLoc::RegisterHigh(_)) {
                (v >> 32) as u32
            } else {
                v as u32
            }
        }
        VregLoc::Fpu(r) | VregLoc::FpuHigh(r) => {
            in_register("an FP register")?;
            let high = matches!(loc, VregLoc::FpuHigh(_));
            match isa {
                Isa::Arm64 => {
                    let d = u
                        .reg_read(RegisterARM64::D0 as i32 + i32::from(r))
                        .unwrap_or(0);
                    if high {
                        (d >> 32) as u32
                    } else {
                        d as u32
                    }
                }
                // arm: FPU register numbers are S registers; s(2n+1) is d(n)'s high half.
                // x86: XMM registers; a double's high half is the same register's bits 32-63.
                Isa::X86 => {
                    let (low, _) = crate::cpu::xmm_read(u, r);
                    if high {
                        (low >> 32) as u32
                    } else {
                        low as u32
                    }
                }
                Isa::Thumb2 => {
                    let s = r + u8::from(high);
                    let d = u
                        .reg_read(RegisterARM::D0 as i32 + i32::from(s / 2))
                        .unwrap_or(0);
                    if s % 2 == 1 {
                        (d >> 32) as u32
                    } else {
                        d as u32
                    }
                }
            }
        }
    }))
}

/// Finds the catch for `exception` thrown with the innermost frame at (`sp`, return address
/// `pc`) and the dispatched `frames` outside it; on a catch, writes the catch environment.
pub(crate) fn deliver(
    u: &mut Unicorn<'_, ()>,
    isa: Isa,
    methods: &[FrameCode],
    sp: u64,
    pc: u64,
    frames: &[Frame],
    exception: &str,
) -> Result<Delivery, String> {
    // Thumb return addresses carry the mode bit; x86 ones are byte addresses (odd or even).
    let pc = if isa == Isa::Thumb2 { pc & !1 } else { pc };
    let walk = std::iter::once((sp, pc)).chain(frames.iter().rev().map(|f| (f.sp, f.ret)));
    for (depth, (sp, pc)) in walk.enumerate() {
        let Some(m) = methods
            .iter()
            .find(|m| pc > m.start && pc <= m.start + m.len)
        else {
            return Err(format!("no loaded method holds the return address {pc:#x}"));
        };
        // No try items (a method without handlers, or a JNI stub's native frame, which has no
        // dex pc): FindCatchBlock finds nothing; the frame is unwound.
        if m.tries.is_empty() {
            continue;
        }
        let native_pc = (pc - m.start) as u32;
        let Some(dex_pc) = dex_pc_at(&m.pc_map, native_pc) else {
            return Err(format!(
                "no stack map at native pc {native_pc:#x} (ToDexPc's LOG(FATAL))"
            ));
        };
        let Some(handler) = find_catch_block(&m.tries, exception, dex_pc) else {
            continue;
        };
        // GetCatchStackMapForDexPc: the catch stack map of the handler.
        let catch = m
            .pc_map
            .iter()
            .find(|p| p.kind == 0 && p.dex_pc == handler)
            .ok_or_else(|| format!("no catch stack map for the handler at dex pc {handler}"))?;
        let catch_regs = m
            .dex_regs
            .iter()
            .find(|r| r.kind == 0 && r.native_pc == catch.native_pc)
            .ok_or("no dex register map for the catch stack map")?;
        let throw_regs = m
            .dex_regs
            .iter()
            .find(|r| r.kind != 0 && r.native_pc == native_pc)
            .ok_or("no dex register map at the throwing call")?;
        // SetCatchEnvironmentForOptimizedHandler: every catch phi's stack slot gets the value
        // its vreg had at the throwing call.
        for (v, loc) in catch_regs.vregs.iter().enumerate() {
            let VregLoc::Stack(slot) = *loc else {
                if *loc != VregLoc::None {
                    return Err(format!("catch vreg {v} is not in a stack slot: {loc:?}"));
                }
                continue;
            };
            let at_throw = throw_regs.vregs.get(v).copied().unwrap_or(VregLoc::None);
            let value = value_at(u, isa, sp, depth, at_throw)?
                .ok_or_else(|| format!("catch vreg {v} has no value at the throwing call"))?;
            u.mem_write(sp.wrapping_add(slot as u64), &value.to_le_bytes())
                .map_err(|e| format!("writing catch vreg {v}: {e:?}"))?;
        }
        let target = m.start + u64::from(catch.native_pc) + u64::from(isa == Isa::Thumb2);
        return Ok(Delivery::Caught {
            depth,
            sp,
            pc: target,
            keep: m.move_exceptions.contains(&handler),
        });
    }
    Ok(Delivery::Uncaught)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(handlers: &[(Option<&str>, u32)]) -> Vec<TryItem> {
        vec![TryItem {
            start: 2,
            end: 6,
            handlers: handlers
                .iter()
                .map(|(t, pc)| (t.map(str::to_string), *pc))
                .collect(),
        }]
    }

    #[test]
    fn handlers_match_the_class_its_superclasses_and_catch_all_in_order() {
        let ae = "java.lang.ArithmeticException";
        let t = item(&[
            (Some("Ljava/lang/NullPointerException;"), 10),
            (Some("Ljava/lang/RuntimeException;"), 20),
            (None, 30),
        ]);
        assert_eq!(find_catch_block(&t, ae, 3), Some(20));
        assert_eq!(
            find_catch_block(&t, "java.lang.NoSuchMethodError", 3),
            Some(30)
        );
        // Outside the try range: no handler.
        assert_eq!(find_catch_block(&t, ae, 6), None);
        assert_eq!(find_catch_block(&t, ae, 1), None);
        let own = item(&[(Some("Ljava/lang/ArithmeticException;"), 7)]);
        assert_eq!(find_catch_block(&own, ae, 2), Some(7));
        // An Error is not an Exception.
        let ex = item(&[(Some("Ljava/lang/Exception;"), 7)]);
        assert_eq!(
            find_catch_block(&ex, "java.lang.NoSuchMethodError", 2),
            None
        );
        // A type the harness cannot resolve never matches.
        let user = item(&[(Some("Lcom/example/MyException;"), 7)]);
        assert_eq!(find_catch_block(&user, ae, 2), None);
    }
}
