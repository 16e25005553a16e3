//! Writes docs/performance.md: executed instructions per trace point (unicorn, every path of
//! the scenario tests), bytes stored, and llvm-mca estimates per core model: Cortex-A55 and
//! Cortex-A510 (little, in-order), LLVM's `cortex-a76` (its Cortex-A57 model), Neoverse N1
//! (A76-class) and Neoverse V1 (X1-class) for A64, Cortex-A57 for T32 (the only AArch32 model
//! LLVM has). Next to ours: Nanoscope's A64 entry (encoded with the same VIXL) and upstream ART's
//! own low-overhead tracing (TraceProfiler, modelled from its source: `TRACE_PROFILER_*`).
//!
//!   cargo run -p hubble-hotpath-emu --example hotpath_perf -- [--mca PATH] > docs/performance.md
//!
//! scripts/hotpath-perf runs it; tests/stages/40-hotpath.sh fails if the committed file is stale.
#[path = "../tests/common/mod.rs"]
mod common;

use std::fmt::Write as _;
use std::process::Command;

use common::disasm::{disassemble, Isa};
use common::emu::Machine;
use common::scenario;
use hubble_hotpath_emu::*;
use unicorn_engine::{Arch, Mode, Prot, RegisterARM64, Unicorn};

/// The straight-line ON path of a blob's inline half (branches not taken), as llvm-mc text.
fn fast_path_asm(isa: Isa, blob: &Blob) -> String {
    let mut s = String::new();
    match isa {
        Isa::A64 => {}
        Isa::T32 => s.push_str(".syntax unified\n.thumb\n"),
    }
    for insn in disassemble(isa, &blob.bytes[..blob.terminator]) {
        let mut text = insn.text.replace("sb,", "r9,").replace("[sb", "[r9");
        // Branch targets become a local label after the block: llvm-mca needs a label, and
        // on the ON path none of these branches is taken.
        if let Some(pos) = text.find('#') {
            let m = insn.mnemonic.as_str();
            if m.starts_with('b') || m.starts_with("cb") {
                text.truncate(pos);
                text.push_str("1f");
            }
        }
        s.push_str(&fast_path_line(&text));
        s.push('\n');
    }
    s.push_str("1:\n");
    s
}

/// Capstone prints TST's logical immediate as a negative number, which llvm-mc rejects.
fn fast_path_line(text: &str) -> String {
    if text.starts_with("tst ") {
        text.replace("#-0x100000000", "#0xffffffff00000000")
    } else {
        text.to_string()
    }
}

struct Mca {
    cycles_per_iter: f64,
    rthroughput: f64,
    ipc: f64,
    /// The scheduling model llvm-mca used, from its resource names (`CortexA55UnitALU` ->
    /// `CortexA55`): LLVM maps several CPU names to another core's model.
    model: String,
}

/// The A64 core models of the tables: (llvm-mca CPU, column name). LLVM has no Cortex-A76 or
/// Cortex-X1 model of its own (both CPU names select the Cortex-A57 model); Neoverse N1 is the
/// A76's server derivative and Neoverse V1 the X1's server sibling (designed alongside it by the
/// same team), each with a model of its own.
const A64_CPUS: [(&str, &str); 5] = [
    ("cortex-a55", "A55"),
    ("cortex-a510", "A510"),
    ("cortex-a76", "A76"),
    ("neoverse-n1", "N1 (A76-class)"),
    ("neoverse-v1", "V1 (X1-class)"),
];

fn mca(tool: &str, isa: Isa, cpu: &str, asm: &str) -> Option<Mca> {
    let path = std::env::temp_dir().join(format!("hubble-mca-{}-{cpu}.s", std::process::id()));
    std::fs::write(&path, asm).ok()?;
    let triple = match isa {
        Isa::A64 => "aarch64",
        Isa::T32 => "thumbv7a-linux-gnueabihf",
    };
    let out = Command::new(tool)
        .args([
            &format!("-mtriple={triple}"),
            &format!("-mcpu={cpu}"),
            "-iterations=100",
            // A call is a taken branch like the others, which llvm-mca does not charge either;
            // its default (100 cycles) stands for a callee it cannot see. The one sequence with
            // a call (TraceProfiler's) has its callee written out.
            "-call-latency=1",
        ])
        .arg(&path)
        .output()
        .ok()?;
    let _ = std::fs::remove_file(&path);
    if !out.status.success() {
        eprintln!(
            "llvm-mca failed on:\n{asm}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |name: &str| -> Option<f64> {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))?
            .split(':')
            .nth(1)?
            .trim()
            .parse()
            .ok()
    };
    // "Resources:" is followed by lines like "[0.0] - CortexA55UnitALU".
    let model = text
        .lines()
        .skip_while(|l| !l.starts_with("Resources:"))
        .nth(1)?
        .split("- ")
        .nth(1)?
        .split("Unit")
        .next()?
        .to_string();
    Some(Mca {
        cycles_per_iter: field("Total Cycles")? / 100.0,
        rthroughput: field("Block RThroughput")?,
        ipc: field("IPC")?,
        model,
    })
}

/// Upstream ART's low-overhead method tracing (`TraceProfiler`, Android 16), arm64 only (other
/// ISAs get no-op entry points; nterp is not traced), in its "all methods" mode (every entry
/// and exit, no timestamp): the instructions a traced entry executes when the buffer does not
/// wrap, written out as llvm-mca input from the source (modelled, not copied):
/// - compiler/optimizing/code_generator_arm64.cc, `CodeGeneratorARM64::MaybeRecordTraceEvent`,
///   called from `GenerateFrameEntry` / `GenerateFrameExit`: the buffer check in the method,
///   a load of the thread's trace-buffer pointer and a CBNZ to a slow path;
/// - same file, `TracingMethodEntryExitHooksSlowPathARM64::EmitNativeCode`: load the thread's
///   `RecordEntryTraceEvent` entrypoint into LR, BLR, B back;
/// - runtime/arch/arm64/quick_entrypoints_arm64.S, `art_quick_record_entry_trace_event`
///   (installed by `UpdateLowOverheadTraceEntrypoints` in entrypoints_init_arm64.cc): load the
///   current entry pointer, compare it with the buffer start (wrap to the end if at it), step
///   down 8 bytes, store the `ArtMethod*` (x0), store the pointer back, RET.
///
/// Source: the android-16 line of AOSP platform/art as mirrored in HertzifyOS-AOSP/android_art
/// (commit eab566c58632, 2025-07-23); these functions are unchanged there from 6caf34aff9
/// (2024-09-23) until 222b83a2c5 (2025-08-12, Android 16 QPR2: small methods not instrumented).
/// Thread offsets are illustrative (they do not change the model). Taken branches, the call and
/// the return cost nothing in llvm-mca, so for this sequence (five of them) it is a lower bound.
const TRACE_PROFILER_ENTRY: &str = "\
ldr x16, [x19, #0xc0]
cbnz x16, 1f
ldr x30, [x19, #0x4f0]
blr x30
ldr x17, [x19, #0xc8]
cmp x17, x16
b.hs 1f
sub x17, x17, #8
str x0, [x17]
str x17, [x19, #0xc8]
ret
b 1f
1:
";

/// The exit: `art_quick_record_exit_trace_event` stores the marker 1 instead of the method.
const TRACE_PROFILER_EXIT: &str = "\
ldr x16, [x19, #0xc0]
cbnz x16, 1f
ldr x30, [x19, #0x4f8]
blr x30
ldr x17, [x19, #0xc8]
cmp x17, x16
b.hs 1f
sub x17, x17, #8
mov x16, #1
str x16, [x17]
str x17, [x19, #0xc8]
ret
b 1f
1:
";

/// TraceProfiler's OFF path: the buffer check, not taken.
const TRACE_PROFILER_OFF: &str = "\
ldr x16, [x19, #0xc0]
cbnz x16, 1f
";

/// What follows a trace point that is off, for the OFF table: a short method body (three
/// independent instructions) that the untraced call executes anyway.
const BODY: &str = "\
add w1, w1, #1
eor w2, w2, w1
str w2, [x3, #8]
";

/// The OFF path of an emitted inline half: every instruction up to and including the first
/// CBZ (the tracing-off test), as llvm-mc text, then the label it jumps to.
fn off_path_asm(blob: &Blob) -> String {
    let mut s = String::new();
    for insn in disassemble(Isa::A64, &blob.bytes[..blob.terminator]) {
        if insn.mnemonic == "cbz" {
            let text = insn.text.split('#').next().unwrap_or_default().to_string();
            s.push_str(&format!("{text}1f\n"));
            return s;
        }
        s.push_str(&fast_path_line(&insn.text));
        s.push('\n');
    }
    panic!("no CBZ in the inline half");
}

/// A heading of the report, a blank line either side.
fn heading(w: &mut String, text: &str) {
    writeln!(w, "\n{text}\n").unwrap();
}

fn insn_count(asm: &str) -> usize {
    asm.lines()
        .filter(|l| !l.ends_with(':') && !l.starts_with('.') && !l.is_empty())
        .count()
}

/// Runs Nanoscope's entry in unicorn: OFF and ON executed instructions, bytes stored.
fn nanoscope_counts(blob: &Blob) -> (u64, u64, u64) {
    let mut uc = Unicorn::new(Arch::ARM64, Mode::ARM).unwrap();
    let (code, thread, buf) = (0x10_0000u64, 0x20_0000u64, 0x30_0000u64);
    uc.mem_map(code, 0x1000, Prot::ALL).unwrap();
    uc.mem_map(thread, 0x1000, Prot::ALL).unwrap();
    uc.mem_map(buf, 0x1000, Prot::ALL).unwrap();
    uc.mem_write(code, &blob.bytes).unwrap();
    let off = thread + thread_offsets::A64[field::CURSOR] as u64;
    let executed = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let e = executed.clone();
    let end = code + blob.terminator as u64;
    uc.add_code_hook(code, code + 0xfff, move |_, addr, _| {
        if addr != end {
            e.set(e.get() + 1)
        }
    })
    .unwrap();
    uc.reg_write(RegisterARM64::X19, thread).unwrap();
    uc.reg_write(RegisterARM64::X0, 0x7000_1230).unwrap();
    let run = |uc: &mut Unicorn<()>, cursor: u64| {
        uc.mem_write(off, &cursor.to_le_bytes()).unwrap();
        executed.set(0);
        uc.emu_start(code, end, 0, 100).unwrap();
        let mut b = [0u8; 8];
        uc.mem_read(off, &mut b).unwrap();
        (executed.get(), u64::from_le_bytes(b).saturating_sub(cursor))
    };
    let (off_n, _) = run(&mut uc, 0);
    let (on_n, bytes) = run(&mut uc, buf);
    (off_n, on_n, bytes)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tool = args
        .iter()
        .position(|a| a == "--mca")
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_else(|| "/usr/lib/llvm-19/bin/llvm-mca".to_string());

    let mut doc = String::new();
    let w = &mut doc;
    writeln!(w, "# Hot-path performance").unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "Generated by `scripts/hotpath-perf` (`cargo run -p hubble-hotpath-emu --example \
         hotpath_perf`); do not edit. CI (`tests/stages/40-hotpath.sh`) regenerates it and fails \
         if it differs. Sequences: `docs/hot-path.md`. Thread offsets: {}.",
        thread_offsets::SOURCE
    )
    .unwrap();
    heading(w, "## Executed instructions per trace point (unicorn)");
    writeln!(
        w,
        "Every path the emulator tests take, counted by a unicorn code hook over the emitted \
         bytes (inline half plus any out-of-line code; the ART sequences, not a model). \
         `min..max` over all runs of that path; \"bytes\" = bytes the trace point stored into \
         the ring (record only; a wrap's pad slot is not counted)."
    )
    .unwrap();
    let runs: Vec<(&str, Machine)> = vec![
        (
            "A64 (x0 = method, IP0/IP1)",
            Machine::a64(13, 0, Options::default()),
        ),
        (
            "T32 (temps r4 r5 r6)",
            Machine::t32(11, 0, [4, 5, 6], Options::default()),
        ),
        (
            "T32 (temps r10 r11 r12: no CBZ)",
            Machine::t32(11, 0, [12, 10, 11], Options::default()),
        ),
        (
            "A64 with the ISB option",
            Machine::a64(
                13,
                0,
                Options {
                    isb: true,
                    ..Options::default()
                },
            ),
        ),
    ];
    let mut counted = Vec::new();
    for (name, mut m) in runs {
        let stats = scenario::run(&mut m, 600, 333, 101);
        writeln!(w).unwrap();
        writeln!(w, "### {name}").unwrap();
        writeln!(w).unwrap();
        writeln!(w, "| path | instructions | runs | bytes |").unwrap();
        writeln!(w, "|---|---|---|---|").unwrap();
        for (path, (min, max, n)) in &stats.paths {
            let range = if min == max {
                format!("{min}")
            } else {
                format!("{min}..{max}")
            };
            let bytes = stats.bytes.get(path).copied().unwrap_or(0);
            writeln!(w, "| {path} | {range} | {n} | {bytes} |").unwrap();
        }
        counted.push(stats);
    }
    // The most executed instructions of a path of the default A64 / T32 runs.
    let most = |run: usize, path: &str| counted[run].paths[path].1;
    let nano = emit_nanoscope_a64(thread_offsets::A64[field::CURSOR], Terminator::Trap);
    let (n_off, n_on, n_bytes) = nanoscope_counts(&nano);
    writeln!(w).unwrap();
    writeln!(
        w,
        "### Nanoscope's A64 entry (its wiki), same encoder, same emulator"
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(w, "| path | instructions | bytes |").unwrap();
    writeln!(w, "|---|---|---|").unwrap();
    writeln!(w, "| off | {n_off} | 0 |").unwrap();
    writeln!(
        w,
        "| on (no wrap, no stop check: it has neither) | {n_on} | {n_bytes} |"
    )
    .unwrap();

    let version = Command::new(&tool)
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout).lines().find_map(|l| {
                l.split("LLVM version ")
                    .nth(1)
                    .map(|v| v.trim().to_string())
            })
        })
        .unwrap_or_else(|| "unknown".into());
    let major = version.split('.').next().unwrap_or("?").to_string();
    let o = Options::default();
    let entry = emit_a64(Kind::Entry, 0, &thread_offsets::A64, o);
    let narrow = emit_a64(Kind::EntryNarrow, 0, &thread_offsets::A64, o);
    let exit = emit_a64(Kind::Exit, 0, &thread_offsets::A64, o);
    let on: Vec<(&str, String)> = vec![
        ("Hubble A64 entry", fast_path_asm(Isa::A64, &entry)),
        (
            "Hubble A64 entry, pointer known < 4 GiB",
            fast_path_asm(Isa::A64, &narrow),
        ),
        ("Hubble A64 exit", fast_path_asm(Isa::A64, &exit)),
        ("Nanoscope A64 entry", fast_path_asm(Isa::A64, &nano)),
        (
            "ART TraceProfiler entry (Android 16, modelled)",
            TRACE_PROFILER_ENTRY.to_string(),
        ),
        (
            "ART TraceProfiler exit (Android 16, modelled)",
            TRACE_PROFILER_EXIT.to_string(),
        ),
    ];
    let off: Vec<(&str, String)> = vec![
        ("method body alone (no trace point)", String::new()),
        ("Hubble A64 entry", off_path_asm(&entry)),
        (
            "Hubble A64 entry, pointer known < 4 GiB",
            off_path_asm(&narrow),
        ),
        ("Hubble A64 exit", off_path_asm(&exit)),
        ("Nanoscope A64 entry", off_path_asm(&nano)),
        (
            "ART TraceProfiler entry or exit (modelled)",
            TRACE_PROFILER_OFF.to_string(),
        ),
    ];
    // One llvm-mca run per sequence and core; the first run on each core names its model.
    let run_all = |seqs: &[(&str, String)], suffix: &str| -> Vec<Vec<Option<Mca>>> {
        seqs.iter()
            .map(|(_, asm)| {
                let asm = format!("{asm}{suffix}");
                A64_CPUS
                    .iter()
                    .map(|(cpu, _)| mca(&tool, Isa::A64, cpu, &asm))
                    .collect()
            })
            .collect()
    };
    let on_mca = run_all(&on, "");
    let off_mca = run_all(&off, &format!("1:\n{BODY}"));
    let header = |w: &mut String, first: &str| {
        let cols: Vec<String> = A64_CPUS
            .iter()
            .enumerate()
            .map(|(i, (cpu, name))| {
                let model = on_mca[0][i].as_ref().map_or("n/a", |m| m.model.as_str());
                format!("{name} `{cpu}` [{model}]")
            })
            .collect();
        writeln!(w, "| {first} | insns | {} |", cols.join(" | ")).unwrap();
        writeln!(w, "|---|---|{}", "---|".repeat(A64_CPUS.len())).unwrap();
    };
    let cell = |m: &Option<Mca>, f: &dyn Fn(&Mca) -> String| m.as_ref().map_or("n/a".into(), f);
    // A table under the header: one row per sequence, its name, instruction count and a figure
    // per core.
    let table = |w: &mut String,
                 first: &str,
                 seqs: &[(&str, String)],
                 runs: &[Vec<Option<Mca>>],
                 f: &dyn Fn(&Mca) -> String| {
        header(w, first);
        for ((name, asm), row) in seqs.iter().zip(runs) {
            let cells: Vec<String> = row.iter().map(|m| cell(m, f)).collect();
            writeln!(
                w,
                "| {name} | {} | {} |",
                insn_count(asm),
                cells.join(" | ")
            )
            .unwrap();
        }
    };

    writeln!(w).unwrap();
    writeln!(
        w,
        "## llvm-mca (LLVM {major}) per core, A64: cycles per trace point, 100 iterations"
    )
    .unwrap();
    writeln!(w).unwrap();
    writeln!(
        w,
        "`{tool}`, `-iterations=100 -call-latency=1` (only the major version is named: a \
         Debian point release does not make this file stale unless a figure changes). Columns: \
         the CPU name \
         given to llvm-mca and, in brackets, the scheduling model LLVM uses for it (read from \
         its resource names): LLVM has no model of its own for the Cortex-A76 or the Cortex-X1 \
         (both names select the Cortex-A57 model), so the A76-class and X1-class columns are \
         Neoverse N1 (the A76's server derivative) and Neoverse V1 (designed alongside the X1, \
         its server sibling). A55 and A510 are \
         the little, in-order cores. The MRS/MRRC of the counter is modelled as an ordinary \
         system-register read (its real cost is CPU-specific), and taken branches, calls and \
         returns cost nothing in llvm-mca."
    )
    .unwrap();
    heading(w, "### ON: the straight-line traced path");
    writeln!(
        w,
        "The inline half's ON path (branches present, not taken), as capstone disassembles the \
         emitted bytes; Cycles/iter = Total Cycles / 100 of a back-to-back stream of trace \
         points, so stores and the cursor's store-to-load dependency dominate (real code \
         interleaves method bodies). Nanoscope: its wiki's sequence, same encoder. ART \
         TraceProfiler: upstream ART's low-overhead method tracing (Android 16, arm64 only, \
         nterp untraced, \"all methods\" mode: the `ArtMethod*` or an exit marker, no \
         timestamp), the path a traced call executes when the buffer does not wrap, written out \
         from `CodeGeneratorARM64::MaybeRecordTraceEvent` and \
         `TracingMethodEntryExitHooksSlowPathARM64` (compiler/optimizing/code_generator_arm64.cc) \
         and `art_quick_record_entry_trace_event` / `art_quick_record_exit_trace_event` \
         (runtime/arch/arm64/quick_entrypoints_arm64.S): the buffer check, a taken CBNZ to the \
         slow path, LDR + BLR of the thread's entrypoint, the stub, RET, B back \
         (`TRACE_PROFILER_ENTRY` in `hotpath_perf.rs` says which commit). Its five taken \
         branches are free here, so its figures are lower bounds."
    )
    .unwrap();
    writeln!(w).unwrap();
    table(w, "sequence", &on, &on_mca, &|m| {
        format!("{:.2}", m.cycles_per_iter)
    });
    heading(w, "#### Block RThroughput / IPC of the same runs");
    table(w, "sequence", &on, &on_mca, &|m| {
        format!("{:.2} / {:.2}", m.rthroughput, m.ipc)
    });
    heading(w, "### OFF: the untraced check and a method body");
    writeln!(
        w,
        "What every call of an untraced thread pays: the trace point's instructions up to its \
         tracing-off branch (\"insns\"), then a three-instruction method body \
         (`{}`), back to back; the first row is the body alone.",
        BODY.lines().collect::<Vec<_>>().join("; ")
    )
    .unwrap();
    writeln!(w).unwrap();
    table(w, "trace point (OFF)", &off, &off_mca, &|m| {
        format!("{:.2}", m.cycles_per_iter)
    });
    heading(w, "### T32");
    writeln!(
        w,
        "| sequence | insns | A57 cyc/iter | A57 RThroughput | A57 IPC |"
    )
    .unwrap();
    writeln!(w, "|---|---|---|---|---|").unwrap();
    for (name, kind) in [
        ("Hubble T32 entry", Kind::Entry),
        ("Hubble T32 exit", Kind::Exit),
    ] {
        let blob = emit_t32(kind, 0, [4, 5, 6], &thread_offsets::ARM32, o);
        let asm = fast_path_asm(Isa::T32, &blob);
        let r = mca(&tool, Isa::T32, "cortex-a57", &asm);
        let c = |f: &dyn Fn(&Mca) -> f64| cell(&r, &|m| format!("{:.2}", f(m)));
        writeln!(
            w,
            "| {name} | {} | {} | {} | {} |",
            insn_count(&asm),
            c(&|m| m.cycles_per_iter),
            c(&|m| m.rthroughput),
            c(&|m| m.ipc)
        )
        .unwrap();
    }
    heading(w, "## Against the targets");
    // Derived from the runs above: a changed sequence changes these lines too.
    writeln!(
        w,
        "- OFF = 2 instructions: T32 {} with a low cursor temp (r0-r7), {} when the register \
         allocator gives it only high temps (CBZ takes r0-r7 only). A64 {} (exit, entry with \
         the pointer known < 4 GiB) and {} (entry): two LDRs instead of one LDP and the width \
         test before the CBZ, the price of the ON schedule on in-order cores \
         (`docs/hot-path.md`); the OFF table above shows the cycles.\n\
         - ON <= 8 instructions: A64 exit {}, entry with the pointer known < 4 GiB {}, entry {}; \
         T32 entry {}, exit {}. Wrap, stale limit and stop run out of line (rare: once per ring \
         lap or per stop); a two-slot A64 entry (pointer >= 4 GiB) costs {}.{}\n\
         - <= 8 bytes per one-slot trace point: {} (Nanoscope: {} for every point).",
        most(1, "Exit off"),
        most(2, "Exit off"),
        most(0, "Exit off"),
        most(0, "Entry off"),
        most(0, "Exit - fast"),
        most(0, "EntryNarrow narrow fast"),
        most(0, "Entry narrow fast"),
        most(1, "Entry narrow fast"),
        most(1, "Exit - fast"),
        most(0, "Entry wide fast"),
        if most(0, "Entry narrow fast") > 8 {
            format!(
                " The A64 entry of unknown width is over since its rescheduling for \
                 in-order cores (two LDRs for one LDP), for {} cycles on the A55 model \
                 (the LDP schedule's: `docs/hot-path.md`).",
                cell(&on_mca[0][0], &|m| format!("{:.2}", m.cycles_per_iter))
            )
        } else {
            String::new()
        },
        counted[0].bytes["Entry narrow fast"],
        n_bytes
    )
    .unwrap();
    print!("{doc}");
}
