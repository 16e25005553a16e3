//! What tracing costs real compiled methods on x86_64, natively: the host counterpart of the
//! paper's overhead table, next to the trace-point micro-benchmark (scripts/hotpath-bench).
//! Per corpus call (FIGURE_CALLS), ART's compiler output run in a forked child, a loop of
//! CALLS calls per sample, for four variants measured interleaved in one run:
//!   untraced  compiled without the trace nodes (ART_USE_HUBBLE=0's code)
//!   off       traced code, tracing off (cursor 0: between a stop and the restart)
//!   on <4G    traced code, tracing on, an ArtMethod* below 4 GiB (boot image: one slot)
//!   on ≥4G    the same with an ArtMethod* above 4 GiB (LinearAlloc: two-slot entry)
//! ns per call is the median of SAMPLES samples, with min and max; the overheads are against
//! untraced, and "per point" spreads the ON overhead over the two trace points a call runs.
//!
//!   cargo bench -p hubble-art-compile --bench x86_64_overhead [-- --samples N --calls N]
#[path = "../tests/common/mod.rs"]
mod common;

use hubble_art_compile::{native, parse_args, Harness, FIGURE_CALLS};

const NARROW: u64 = 0x7012_0120;
const WIDE: u64 = 0x6_0000_0120;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// (median, min, max) of ns per call.
fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (v[v.len() / 2], v[0], v[v.len() - 1])
}

fn main() -> anyhow::Result<()> {
    let samples = arg("--samples", 9) as usize;
    let calls = arg("--calls", 200_000);
    let h = Harness::locate()?;
    let dir = std::env::temp_dir().join(format!("hubble-x86-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let dex = common::corpus_dex(&dir);
    println!(
        "x86_64 compiled corpus methods, natively: ns per call, median of {samples} samples of \
         {calls} calls (min–max); overhead against the untraced build\n"
    );
    println!(
        "| call | untraced | traced, off | traced, on, <4G | traced, on, ≥4G | off | on <4G | \
         on ≥4G | per point <4G / ≥4G |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (m, a) in FIGURE_CALLS {
        let t = h.compile(&dex, m, "x86_64", true, &dir.join("t.txt"))?;
        let u = h.compile(&dex, m, "x86_64", false, &dir.join("u.txt"))?;
        let args = parse_args(&t.shorty, a).map_err(|e| anyhow::anyhow!(e))?;
        let variants: [(&[u8], u64, bool); 4] = [
            (&u.isas[0].code, WIDE, true),
            (&t.isas[0].code, WIDE, false),
            (&t.isas[0].code, NARROW, true),
            (&t.isas[0].code, WIDE, true),
        ];
        let mut ns = vec![Vec::new(); variants.len()];
        for _ in 0..samples {
            for (i, (code, method, tracing)) in variants.iter().enumerate() {
                let r = native::calls(code, &args, *method, calls, *tracing)
                    .map_err(|e| anyhow::anyhow!("{m}: {e}"))?;
                ns[i].push(r.elapsed_ns as f64 / calls as f64);
            }
        }
        let s: Vec<(f64, f64, f64)> = ns.into_iter().map(stats).collect();
        let base = s[0].0;
        let pct = |x: f64| format!("{:+.0}%", 100.0 * (x - base) / base);
        let cell = |(med, lo, hi): (f64, f64, f64)| format!("{med:.2} ({lo:.2}–{hi:.2})");
        println!(
            "| `{m}`({a}) | {} | {} | {} | {} | {} | {} | {} | {:.2} / {:.2} ns |",
            cell(s[0]),
            cell(s[1]),
            cell(s[2]),
            cell(s[3]),
            pct(s[1].0),
            pct(s[2].0),
            pct(s[3].0),
            (s[2].0 - base) / 2.0,
            (s[3].0 - base) / 2.0,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
