//! The file `hubble-compile-method` writes (cpp/compile_method.cc): one section per ISA with
//! the code and CodeInfo bytes, the frame, and the code intervals of every trace point.

use std::path::Path;

/// A trace point as the code generator emitted it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracePoint {
    /// `true` for HTraceEntry, `false` for HTraceExit.
    pub entry: bool,
    /// The HInstruction id.
    pub id: u32,
    /// Code offsets of the inline part, `[start, end)`.
    pub inline: (usize, usize),
    /// Code offsets of the out-of-line part (its slow path), `[start, end)`; empty if none.
    pub out_of_line: (usize, usize),
    /// Register numbers the register allocator gave the node as temps.
    pub temps: Vec<u8>,
}

/// One stack map of the method's CodeInfo, decoded by ART's own `CodeInfo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcMap {
    /// `StackMap::GetNativePcOffset(isa)`: for a call, the offset of its return address.
    pub native_pc: u32,
    pub dex_pc: u32,
    /// `StackMap::Kind`: -1 Default, 0 Catch, 1 OSR, 2 Debug.
    pub kind: i32,
}

/// An invoke instruction of the method and the dex method_id it names (`inst.VRegB()`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invoke {
    pub dex_pc: u32,
    /// The opcode's name, as ART's `Instruction::Name` spells it (`invoke-static`).
    pub opcode: String,
    pub method_idx: u32,
    /// The callee's descriptor, `LFoo;->bar(II)I`.
    pub callee: String,
}

/// An instance field an iget/iput instruction of the method names (the dex `field_id`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRef {
    pub field_idx: u32,
    /// The declaring class's descriptor, as the field_id names it.
    pub class: String,
    pub name: String,
    /// The field's type descriptor.
    pub ty: String,
}

/// A BL placeholder to a shared entrypoint thunk (`LinkerPatch::CallEntrypointPatch`) and the
/// thunk's code (`CodeGenerator::EmitThunkCode`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThunkCall {
    pub literal_offset: u32,
    pub entrypoint_offset: u32,
    pub thunk: Vec<u8>,
}

/// Where one stack map keeps a dex register (`DexRegisterLocation`, runtime/dex_register_location.h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VregLoc {
    /// kNone: not live.
    None,
    /// kInStack: byte offset from sp.
    Stack(i32),
    Constant(i32),
    /// kInRegister / kInRegisterHigh: a core register's low / high 32 bits.
    Register(u8),
    RegisterHigh(u8),
    /// kInFpuRegister / kInFpuRegisterHigh.
    Fpu(u8),
    FpuHigh(u8),
}

/// One stack map's dex register map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DexRegs {
    pub native_pc: u32,
    pub kind: i32,
    pub vregs: Vec<VregLoc>,
}

/// A try item of the method and its handlers, in search order: the exception type's
/// descriptor (None: catch-all) and the handler's dex pc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TryItem {
    pub start: u32,
    /// One past the last covered dex pc.
    pub end: u32,
    pub handlers: Vec<(Option<String>, u32)>,
}

/// One ISA's compiled code.
#[derive(Clone, Debug)]
pub struct IsaCode {
    pub isa: String,
    pub frame_size: u32,
    pub core_spill_mask: u32,
    pub fp_spill_mask: u32,
    pub trace_nodes_removed: u32,
    /// The register allocator's moves (`HParallelMove` operands) and how many of them read or
    /// write a stack slot (spills and reloads); (0, 0) for a JNI stub.
    pub moves: (u32, u32),
    pub frame_entry: (usize, usize),
    pub trace_points: Vec<TracePoint>,
    /// Slow paths: description and `[start, end)`.
    pub slow_paths: Vec<(String, usize, usize)>,
    pub code: Vec<u8>,
    pub stack_map: Vec<u8>,
    /// Quick entrypoints: name (ART's, without the `p`) and offset from the thread register.
    pub entrypoints: Vec<(String, u32)>,
    /// The stack maps, in CodeInfo order (sorted by native pc, catch maps last).
    pub pc_map: Vec<PcMap>,
    /// Calls to entrypoint thunks the linker must place (src/link.rs).
    pub thunk_calls: Vec<ThunkCall>,
    /// Other linker patches: kind (`LinkerPatch::Type` as a number) and code offset.
    pub other_patches: Vec<(i32, u32)>,
    /// A JNI stub's view of `Thread`, `JNIEnvExt` and `ArtMethod` (name, value), by ART's own
    /// accessors (cpp/compile_method.cc `PrintJniLayout`); empty for managed code.
    pub jni_layout: Vec<(String, u64)>,
    /// Every stack map's dex register map, in CodeInfo order.
    pub dex_regs: Vec<DexRegs>,
    /// The method's try items (the same for every ISA).
    pub tries: Vec<TryItem>,
    /// Dex pcs of the method's move-exception instructions (the same for every ISA): a
    /// handler that begins with one keeps the exception pending for it.
    pub move_exceptions: Vec<u32>,
    /// `Thread::ExceptionOffset`: where move-exception loads the pending exception.
    pub exception_offset: Option<u32>,
}

/// A method compiled for one or more ISAs.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub method: String,
    /// ART's shorty: return type first, then the parameters (no `this`).
    pub shorty: String,
    pub is_static: bool,
    /// Whether the trace nodes were kept (`--no-trace` removes them).
    pub traced: bool,
    pub dex_code_units: u32,
    /// The method's dex method index.
    pub method_idx: Option<u32>,
    /// Its invoke instructions, in dex pc order.
    pub invokes: Vec<Invoke>,
    /// The instance fields its iget/iput instructions name, in dex pc order.
    pub fields: Vec<FieldRef>,
    /// For a native method: the access flags its JNI stub was compiled with (with
    /// `@FastNative`'s and `@CriticalNative`'s, as the class linker adds them); the sections
    /// then hold the stub.
    pub jni: Option<u32>,
    pub isas: Vec<IsaCode>,
}

impl Compiled {
    pub fn isa(&self, name: &str) -> Option<&IsaCode> {
        self.isas.iter().find(|c| c.isa == name)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {what}")]
    Bad {
        path: String,
        line: usize,
        what: String,
    },
}

fn hex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// A dex register location as compile_method.cc prints it.
fn parse_loc(t: &str) -> Option<VregLoc> {
    if t == "-" {
        return Some(VregLoc::None);
    }
    let (k, v) = t.split_at(1);
    Some(match k {
        "s" => VregLoc::Stack(v.parse().ok()?),
        "c" => VregLoc::Constant(v.parse().ok()?),
        "r" => VregLoc::Register(v.parse().ok()?),
        "R" => VregLoc::RegisterHigh(v.parse().ok()?),
        "f" => VregLoc::Fpu(v.parse().ok()?),
        "F" => VregLoc::FpuHigh(v.parse().ok()?),
        _ => return None,
    })
}

/// Parses the harness's output file.
pub fn read(path: &Path) -> Result<Compiled, OutputError> {
    let text = std::fs::read_to_string(path).map_err(|source| OutputError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse(&text).map_err(|(line, what)| OutputError::Bad {
        path: path.display().to_string(),
        line,
        what,
    })
}

/// Parses the text; errors carry the 1-based line number.
pub fn parse(text: &str) -> Result<Compiled, (usize, String)> {
    let mut c = Compiled {
        method: String::new(),
        shorty: String::new(),
        is_static: false,
        traced: true,
        dex_code_units: 0,
        method_idx: None,
        invokes: Vec::new(),
        fields: Vec::new(),
        jni: None,
        isas: Vec::new(),
    };
    let mut cur: Option<IsaCode> = None;
    let mut saw_header = false;
    let mut move_exceptions: Vec<u32> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
        let num = |s: &str| -> Result<u64, (usize, String)> {
            s.parse::<u64>()
                .map_err(|_| (n, format!("'{s}' is not a number")))
        };
        let need = |cur: &mut Option<IsaCode>| -> Result<(), (usize, String)> {
            if cur.is_none() {
                return Err((n, format!("'{key}' outside an isa section")));
            }
            Ok(())
        };
        match key {
            "hubble-compile" => {
                if rest != "1" {
                    return Err((n, format!("unknown format version {rest}")));
                }
                saw_header = true;
            }
            "method" => c.method = rest.to_string(),
            "shorty" => c.shorty = rest.to_string(),
            "static" => c.is_static = rest == "1",
            "traced" => c.traced = rest == "1",
            "dex_code_units" => c.dex_code_units = num(rest)? as u32,
            "method_idx" => c.method_idx = Some(num(rest)? as u32),
            "jni" => c.jni = Some(num(rest)? as u32),
            "invoke" => {
                let f: Vec<&str> = rest.split(' ').collect();
                if f.len() != 4 {
                    return Err((n, format!("bad invoke line '{rest}'")));
                }
                c.invokes.push(Invoke {
                    dex_pc: num(f[0])? as u32,
                    opcode: f[1].to_string(),
                    method_idx: num(f[2])? as u32,
                    callee: f[3].to_string(),
                });
            }
            "move_exception" => move_exceptions.push(num(rest)? as u32),
            "field" => {
                let f: Vec<&str> = rest.split(' ').collect();
                if f.len() != 4 {
                    return Err((n, format!("bad field line '{rest}'")));
                }
                c.fields.push(FieldRef {
                    field_idx: num(f[0])? as u32,
                    class: f[1].to_string(),
                    name: f[2].to_string(),
                    ty: f[3].to_string(),
                });
            }
            "isa" => {
                if cur.is_some() {
                    return Err((n, "isa section not closed by 'end'".into()));
                }
                cur = Some(IsaCode {
                    isa: rest.to_string(),
                    frame_size: 0,
                    core_spill_mask: 0,
                    fp_spill_mask: 0,
                    trace_nodes_removed: 0,
                    moves: (0, 0),
                    frame_entry: (0, 0),
                    trace_points: Vec::new(),
                    slow_paths: Vec::new(),
                    code: Vec::new(),
                    stack_map: Vec::new(),
                    entrypoints: Vec::new(),
                    pc_map: Vec::new(),
                    thunk_calls: Vec::new(),
                    other_patches: Vec::new(),
                    jni_layout: Vec::new(),
                    dex_regs: Vec::new(),
                    tries: Vec::new(),
                    move_exceptions: move_exceptions.clone(),
                    exception_offset: None,
                });
            }
            "end" => {
                need(&mut cur)?;
                let done = cur.take().unwrap();
                if done.code.is_empty() {
                    return Err((n, format!("isa {} has no code", done.isa)));
                }
                c.isas.push(done);
            }
            _ => {
                need(&mut cur)?;
                let s = cur.as_mut().unwrap();
                let f: Vec<&str> = rest.split(' ').collect();
                match key {
                    "frame_size" => s.frame_size = num(rest)? as u32,
                    "core_spill_mask" => s.core_spill_mask = num(rest)? as u32,
                    "fp_spill_mask" => s.fp_spill_mask = num(rest)? as u32,
                    "trace_nodes_removed" => s.trace_nodes_removed = num(rest)? as u32,
                    "moves" if f.len() == 2 => s.moves = (num(f[0])? as u32, num(f[1])? as u32),
                    "exception_offset" => s.exception_offset = Some(num(rest)? as u32),
                    "frame_entry" if f.len() == 2 => {
                        s.frame_entry = (num(f[0])? as usize, num(f[1])? as usize)
                    }
                    "trace" if f.len() == 7 => {
                        let entry = match f[0] {
                            "entry" => true,
                            "exit" => false,
                            k => return Err((n, format!("unknown trace kind {k}"))),
                        };
                        let temps = if f[6] == "-" {
                            Vec::new()
                        } else {
                            f[6].split(',')
                                .map(|t| num(t).map(|v| v as u8))
                                .collect::<Result<_, _>>()?
                        };
                        s.trace_points.push(TracePoint {
                            entry,
                            id: num(f[1])? as u32,
                            inline: (num(f[2])? as usize, num(f[3])? as usize),
                            out_of_line: (num(f[4])? as usize, num(f[5])? as usize),
                            temps,
                        });
                    }
                    "slow_path" if f.len() == 3 => s.slow_paths.push((
                        f[0].to_string(),
                        num(f[1])? as usize,
                        num(f[2])? as usize,
                    )),
                    "entrypoint" if f.len() == 2 => {
                        s.entrypoints.push((f[0].to_string(), num(f[1])? as u32))
                    }
                    "pc_map" if f.len() == 3 => s.pc_map.push(PcMap {
                        native_pc: num(f[0])? as u32,
                        dex_pc: num(f[1])? as u32,
                        kind: f[2]
                            .parse()
                            .map_err(|_| (n, format!("'{}' is not a stack map kind", f[2])))?,
                    }),
                    "thunk_call" if f.len() == 3 => s.thunk_calls.push(ThunkCall {
                        literal_offset: num(f[0])? as u32,
                        entrypoint_offset: num(f[1])? as u32,
                        thunk: hex(f[2]).ok_or((n, "bad hex in thunk".to_string()))?,
                    }),
                    "linker_patch" if f.len() == 2 => s.other_patches.push((
                        f[0].parse()
                            .map_err(|_| (n, format!("'{}' is not a patch kind", f[0])))?,
                        num(f[1])? as u32,
                    )),
                    "dex_regs" if f.len() >= 2 => {
                        let vregs = f[2..]
                            .iter()
                            .map(|t| parse_loc(t).ok_or((n, format!("bad location '{t}'"))))
                            .collect::<Result<_, _>>()?;
                        s.dex_regs.push(DexRegs {
                            native_pc: num(f[0])? as u32,
                            kind: f[1]
                                .parse()
                                .map_err(|_| (n, format!("'{}' is not a stack map kind", f[1])))?,
                            vregs,
                        });
                    }
                    "try" if f.len() >= 2 => {
                        let mut handlers = Vec::new();
                        for h in &f[2..] {
                            let (ty, pc) = h
                                .rsplit_once('@')
                                .ok_or((n, format!("bad handler '{h}'")))?;
                            let ty = (ty != "*").then(|| ty.to_string());
                            handlers.push((ty, num(pc)? as u32));
                        }
                        s.tries.push(TryItem {
                            start: num(f[0])? as u32,
                            end: num(f[1])? as u32,
                            handlers,
                        });
                    }
                    "jni_layout" if f.len() == 2 => {
                        s.jni_layout.push((f[0].to_string(), num(f[1])?))
                    }
                    "code" => s.code = hex(rest).ok_or((n, "bad hex in code".to_string()))?,
                    "stack_map" => {
                        s.stack_map = hex(rest).ok_or((n, "bad hex in stack_map".to_string()))?
                    }
                    _ => return Err((n, format!("unexpected line '{key} {rest}'"))),
                }
            }
        }
    }
    if !saw_header {
        return Err((
            1,
            "not a hubble-compile file (no 'hubble-compile 1' line)".into(),
        ));
    }
    if cur.is_some() {
        return Err((
            text.lines().count(),
            "truncated: last isa section has no 'end'".into(),
        ));
    }
    if c.shorty.is_empty() || c.isas.is_empty() {
        return Err((text.lines().count(), "no shorty or no isa section".into()));
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "hubble-compile 1\nmethod LA;->f(II)I\nshorty III\nstatic 1\ntraced 1\n\
dex_code_units 9\nmethod_idx 4\ninvoke 3 invoke-static 7 LA;->g(I)I\nisa arm64\nframe_size 16\ncore_spill_mask 0\nfp_spill_mask 0\n\
trace_nodes_removed 0\nframe_entry 0 8\ntrace entry 3 8 20 40 60 -\ntrace exit 9 24 32 60 70 1,2,3\n\
slow_path HubbleTraceSlowPathARM64 40 60\npc_map 12 3 -1\nthunk_call 0 16 aabb\n\
dex_regs 12 -1 s8 c-3 r1 - F2\ntry 0 4 Ljava/lang/ArithmeticException;@6 *@9\ncode 00ff\nstack_map 01\nend\n";

    #[test]
    fn parses_a_section() {
        let c = parse(GOOD).unwrap();
        assert_eq!(c.shorty, "III");
        let a = c.isa("arm64").unwrap();
        assert_eq!(a.code, vec![0, 255]);
        assert_eq!(a.trace_points.len(), 2);
        assert!(a.trace_points[0].entry);
        assert_eq!(a.trace_points[1].temps, vec![1, 2, 3]);
        assert_eq!(a.trace_points[1].out_of_line, (60, 70));
        assert_eq!(c.method_idx, Some(4));
        assert_eq!(
            a.dex_regs,
            vec![DexRegs {
                native_pc: 12,
                kind: -1,
                vregs: vec![
                    VregLoc::Stack(8),
                    VregLoc::Constant(-3),
                    VregLoc::Register(1),
                    VregLoc::None,
                    VregLoc::FpuHigh(2)
                ]
            }]
        );
        assert_eq!(
            a.tries,
            vec![TryItem {
                start: 0,
                end: 4,
                handlers: vec![
                    (Some("Ljava/lang/ArithmeticException;".into()), 6),
                    (None, 9)
                ]
            }]
        );
        assert_eq!(
            a.thunk_calls,
            vec![ThunkCall {
                literal_offset: 0,
                entrypoint_offset: 16,
                thunk: vec![0xaa, 0xbb]
            }]
        );
        assert_eq!(
            c.invokes,
            vec![Invoke {
                dex_pc: 3,
                opcode: "invoke-static".into(),
                method_idx: 7,
                callee: "LA;->g(I)I".into()
            }]
        );
        assert_eq!(
            a.pc_map,
            vec![PcMap {
                native_pc: 12,
                dex_pc: 3,
                kind: -1
            }]
        );
    }

    #[test]
    fn truncation_and_garbage_are_errors() {
        let cut = &GOOD[..GOOD.len() - 4];
        assert!(parse(cut).unwrap_err().1.contains("no 'end'"));
        assert!(parse("hello\n").is_err());
        let bad = GOOD.replace("code 00ff", "code 0g");
        assert!(parse(&bad).unwrap_err().1.contains("hex"));
    }
}
