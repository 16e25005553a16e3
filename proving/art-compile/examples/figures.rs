//! Prints docs/performance.md's compiler-harness table: per corpus method and ISA, the code
//! size with and without the trace nodes (bytes, %), and the instructions one call executes
//! in unicorn (arm64, thumb2, x86) with and without, for the arguments given per method below;
//! and the register allocator's moves (all, and those to or from a stack slot) with and without.
//!
//!   cargo run -p hubble-art-compile --example figures -- DEX
//!
//! DEX: tests/compiler-corpus assembled by smali (scripts/art-compile-run's README section).
use std::path::PathBuf;

use hubble_art_compile::{parse_args, Harness, Runner, FIGURE_CALLS};

fn main() -> anyhow::Result<()> {
    let dex = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or_else(|| anyhow::anyhow!("usage: figures DEX"))?,
    );
    let h = Harness::locate()?;
    let tmp = std::env::temp_dir();
    println!("| method | ISA | code bytes traced / untraced | + | instructions per call traced / untraced | + | moves traced / untraced (to or from the stack) |");
    println!("|---|---|---|---|---|---|---|");
    for (m, a) in FIGURE_CALLS {
        let t = h.compile(
            &dex,
            m,
            "arm64,thumb2,x86_64,x86",
            true,
            &tmp.join("fig-t.txt"),
        )?;
        let u = h.compile(
            &dex,
            m,
            "arm64,thumb2,x86_64,x86",
            false,
            &tmp.join("fig-u.txt"),
        )?;
        let args = parse_args(&t.shorty, a).map_err(|e| anyhow::anyhow!(e))?;
        let mut rt = Runner::new(&t).map_err(|e| anyhow::anyhow!(e))?;
        let mut ru = Runner::new(&u).map_err(|e| anyhow::anyhow!(e))?;
        for i in 0..t.isas.len() {
            let (ct, cu) = (&t.isas[i], &u.isas[i]);
            let (bt, bu) = (ct.code.len(), cu.code.len());
            let pct = 100.0 * (bt as f64 - bu as f64) / bu as f64;
            let (et, eu) = (
                rt.run(&t, i, &args)
                    .map_err(|e| anyhow::anyhow!(e))?
                    .executed,
                ru.run(&u, i, &args)
                    .map_err(|e| anyhow::anyhow!(e))?
                    .executed,
            );
            let ins = match (et, eu) {
                (Some(et), Some(eu)) => format!("{et} / {eu} | +{}", et as i64 - eu as i64),
                _ => "native: not counted (benches/x86_64_overhead.rs times it) | –".to_string(),
            };
            println!(
                "| `{m}`({a}) | {} | {bt} / {bu} | {pct:+.0}% | {ins} | {} / {} ({} / {}) |",
                ct.isa, ct.moves.0, cu.moves.0, ct.moves.1, cu.moves.1
            );
        }
    }
    Ok(())
}
