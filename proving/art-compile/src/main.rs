//! art-compile-run: compile one method of a .dex file with the patched ART compiler and run it.
//!
//!   art-compile-run --dex FILE.dex --method 'LFoo;->bar(II)I' --isa arm64 --args 3,4
//!
//! Prints the disassembly with the trace points marked, the result, and the decoded trace.
//! Exit status: 0 ok; 1 a check failed (ring, registers, results differ across ISAs); 2 bad
//! input or something the harness cannot run.
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use hubble_art_compile::dispatch::Linker;
use hubble_art_compile::heap::{class_of_descriptor, object_address, ObjectSpec};
use hubble_art_compile::{
    canonical, check_traced, disasm, format_value, parse_args, Arg, Harness, Runner,
};
use hubble_format::Record;

#[derive(Parser)]
#[command(about = "Compile a dex method with the patched ART compiler and run what it emits")]
struct Cli {
    /// The .dex file.
    #[arg(long)]
    dex: PathBuf,
    /// The method, as 'LFoo;->bar(II)I'.
    #[arg(long)]
    method: String,
    /// arm64, thumb2, x86_64, x86 or all.
    #[arg(long, default_value = "all")]
    isa: String,
    /// Arguments, comma-separated, in the method's parameter types.
    #[arg(long, default_value = "", allow_hyphen_values = true)]
    args: String,
    /// Remove the trace nodes before the passes (the untraced control).
    #[arg(long)]
    no_trace: bool,
    /// For a native method: the C file with its native function, compiled by clang for each
    /// ISA's native ABI (freestanding, no relocations); the JNI stub runs around it.
    #[arg(long)]
    native: Option<PathBuf>,
    /// The native function's name in --native (default: the JNI short name,
    /// Java_<class>_<method>).
    #[arg(long)]
    native_symbol: Option<String>,
}

/// The JNI short name of a method descriptor 'Lpkg/Foo;->bar(..)..' (JNI specification,
/// "Resolving Native Method Names": `_` → `_1`, `/` → `_`; other non-alphanumerics `_0xxxx`).
fn jni_short_name(method: &str) -> Option<String> {
    let (class, rest) = method.strip_prefix('L')?.split_once(";->")?;
    let name = rest.split_once('(')?.0;
    let mangle = |s: &str| -> String {
        s.chars()
            .map(|c| match c {
                '/' => "_".to_string(),
                '_' => "_1".to_string(),
                ';' => "_2".to_string(),
                '[' => "_3".to_string(),
                c if c.is_ascii_alphanumeric() => c.to_string(),
                c => format!("_0{:04x}", c as u32),
            })
            .collect()
    };
    Some(format!("Java_{}_{}", mangle(class), mangle(name)))
}

/// A native method: its JNI stub per ISA, run around the user's native function.
fn run_jni(cli: &Cli, compiled: &hubble_art_compile::Compiled) -> anyhow::Result<bool> {
    use hubble_art_compile::jni::{compile_natives, run_x86_64, JniMachine};
    let Some(source) = &cli.native else {
        anyhow::bail!(
            "{} is native: give --native FILE.c with its native function (and --native-symbol \
             if it is not the JNI short name)",
            cli.method
        );
    };
    if !source.is_file() {
        anyhow::bail!("{}: no such file", source.display());
    }
    if !compiled.is_static {
        anyhow::bail!(
            "{}: instance natives need an object (`this`); not supported here",
            cli.method
        );
    }
    let symbol = match &cli.native_symbol {
        Some(s) => s.clone(),
        None => jni_short_name(&compiled.method)
            .ok_or_else(|| anyhow::anyhow!("{}: not a method descriptor", compiled.method))?,
    };
    let args = parse_args(&compiled.shorty, &cli.args)
        .map_err(|e| anyhow::anyhow!("{}: {e}", cli.method))?;
    let ret = compiled.shorty.as_bytes()[0];
    let dir = std::env::temp_dir().join(format!("art-compile-run-jni-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let mut ok = true;
    for code in &compiled.isas {
        println!(
            "== {} {}: JNI stub, {} bytes, frame {} bytes (access flags {:#x})",
            code.isa,
            compiled.method,
            code.code.len(),
            code.frame_size,
            compiled.jni.unwrap_or(0)
        );
        print!("{}", disasm::listing(code).map_err(|e| anyhow::anyhow!(e))?);
        let natives = compile_natives(source, &code.isa, &dir);
        let natives = match natives {
            Ok(n) => n,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e.into());
            }
        };
        let r = if code.isa == "x86_64" {
            run_x86_64(compiled, code, &natives, &symbol, &args)
        } else {
            JniMachine::new(compiled, code, &natives, &symbol).and_then(|mut m| m.call(&args))
        };
        let r = r.map_err(|e| anyhow::anyhow!("{}: {e}", code.isa))?;
        match &r.run.exception {
            Some(e) => println!("result: threw {e}"),
            None => println!("result: {}", format_value(ret, r.run.result)),
        }
        print_trace(&r.run.records);
        let method = hubble_art_compile::method_value(&code.isa);
        if hubble_art_compile::ring_events(&r.run.records) != vec![(true, method), (false, 0)] {
            println!("CHECK FAILED: the ring is not the stub's entry and exit of {method:#x}");
            ok = false;
        }
        let a = &r.after.left;
        if r.run.exception.is_none() {
            if a.state != 0 || a.top_quick_frame != r.expected_top_quick_frame {
                println!("CHECK FAILED: the stub left state {:#x}, top quick frame {:#x} (want 0, {:#x})",
                    a.state, a.top_quick_frame, r.expected_top_quick_frame);
                ok = false;
            }
            if !r.after.callee_saves_changed.is_empty() {
                println!(
                    "CHECK FAILED: callee-saves changed: {:?}",
                    r.after.callee_saves_changed
                );
                ok = false;
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(ok)
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("art-compile-run: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<bool> {
    if !cli.dex.is_file() {
        anyhow::bail!("{}: no such file", cli.dex.display());
    }
    let isas = if cli.isa == "all" {
        "arm64,thumb2,x86_64,x86".to_string()
    } else {
        cli.isa.clone()
    };
    for isa in isas.split(',') {
        if !matches!(isa, "arm64" | "thumb2" | "x86_64" | "x86") {
            anyhow::bail!("unknown ISA '{isa}' (arm64, thumb2, x86_64, x86 or all)");
        }
    }
    let harness = Harness::locate()?;
    let tmp = std::env::temp_dir().join(format!("art-compile-run-{}.txt", std::process::id()));
    let compiled = harness.compile(&cli.dex, &cli.method, &isas, !cli.no_trace, &tmp);
    let _ = std::fs::remove_file(&tmp);
    let compiled = compiled?;
    if compiled.jni.is_some() {
        return run_jni(&cli, &compiled);
    }
    let mut args = parse_args(&compiled.shorty, &cli.args)
        .map_err(|e| anyhow::anyhow!("{}: {e}", cli.method))?;
    let ret = compiled.shorty.as_bytes()[0];
    let mut ok = true;
    let mut results = Vec::new();
    // Invokes are dispatched into the callees' code, compiled on first call (src/dispatch.rs).
    let callees = std::env::temp_dir().join(format!("art-compile-run-{}", std::process::id()));
    let linker = std::rc::Rc::new(Linker::new(&harness, &cli.dex, !cli.no_trace, &callees));
    let mut runner = Runner::linked(&compiled, &linker).map_err(|e| anyhow::anyhow!(e))?;
    if !compiled.is_static {
        // `this`: a new object of the declaring class, every field zero (src/heap.rs).
        let class = class_of_descriptor(&compiled.method).to_string();
        println!(
            "this: a new {class} (every field zero) at {:#x}",
            object_address(0)
        );
        runner
            .set_objects(&[ObjectSpec {
                class,
                fields: Vec::new(),
            }])
            .map_err(|e| anyhow::anyhow!("{}: {e}", cli.method))?;
        args.insert(
            0,
            Arg {
                ty: b'L',
                bits: object_address(0),
            },
        );
    }
    for (i, code) in compiled.isas.iter().enumerate() {
        println!(
            "== {} {}: {} bytes, frame {} bytes, {} trace point(s){}",
            code.isa,
            compiled.method,
            code.code.len(),
            code.frame_size,
            code.trace_points.len(),
            if compiled.traced {
                ""
            } else {
                " (trace nodes removed)"
            }
        );
        print!("{}", disasm::listing(code).map_err(|e| anyhow::anyhow!(e))?);
        let o = runner.run(&compiled, i, &args);
        let _ = std::fs::remove_dir_all(&callees);
        let o = o.map_err(|e| anyhow::anyhow!("{}: {e}", code.isa))?;
        match &o.exception {
            Some(e) => println!("result: threw {e}"),
            None => println!("result: {}", format_value(ret, o.result)),
        }
        if !o.entrypoints_called.is_empty() {
            println!("entrypoints called: {}", o.entrypoints_called.join(", "));
        }
        if let Some(n) = o.executed {
            println!("instructions executed: {n}");
        }
        if o.calls.len() > 2 {
            println!(
                "calls: {} (the harness dispatched {} invoke(s))",
                o.calls.iter().filter(|c| c.0).count(),
                o.calls.iter().filter(|c| c.0).count() - 1
            );
        }
        {
            print_trace(&o.records);
            if compiled.traced {
                for p in check_traced(&o) {
                    println!("CHECK FAILED: {p}");
                    ok = false;
                }
            }
        }
        let outcome = match &o.exception {
            Some(e) => format!("threw {e}"),
            None => format!("{:#x}", canonical(ret, o.result)),
        };
        results.push((code.isa.clone(), outcome));
    }
    if results.windows(2).any(|w| w[0].1 != w[1].1) {
        println!("CHECK FAILED: results differ across ISAs: {results:?}");
        ok = false;
    }
    Ok(ok)
}

/// The decoded ring, a record a line.
fn print_trace(records: &[Record]) {
    println!("trace ({} records):", records.len());
    for r in records {
        match r {
            Record::Entry { method, ts } => println!("  entry {method:#x} ts={ts}"),
            Record::Exit { ts } => println!("  exit ts={ts}"),
            Record::Start { ts } => println!("  start ts={ts}"),
            Record::Task {
                kind,
                task,
                queue,
                ts,
            } => println!("  task {kind:?} {task:#x} queue {queue:#x} ts={ts}"),
        }
    }
}
