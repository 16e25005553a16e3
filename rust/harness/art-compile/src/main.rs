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
use hubble_art_compile::{
    canonical, check_traced, disasm, format_value, parse_args, Harness, Runner,
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
    let args = parse_args(&compiled.shorty, &cli.args)
        .map_err(|e| anyhow::anyhow!("{}: {e}", cli.method))?;
    let ret = compiled.shorty.as_bytes()[0];
    let mut ok = true;
    let mut results = Vec::new();
    // Invokes are dispatched into the callees' code, compiled on first call (src/dispatch.rs).
    let callees = std::env::temp_dir().join(format!("art-compile-run-{}", std::process::id()));
    let linker = std::rc::Rc::new(Linker::new(&harness, &cli.dex, !cli.no_trace, &callees));
    let mut runner = Runner::linked(&compiled, &linker).map_err(|e| anyhow::anyhow!(e))?;
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
            println!("trace ({} records):", o.records.len());
            for r in &o.records {
                match r {
                    Record::Entry { method, ts } => println!("  entry {method:#x} ts={ts}"),
                    Record::Exit { ts } => println!("  exit ts={ts}"),
                    Record::Start { ts } => println!("  start ts={ts}"),
                }
            }
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
