//! What `--mapping` costs an export: `hubble export` (Perfetto, Chrome JSON) of a 32 MiB ring
//! naming 10 000 and 50 000 methods (the latter as export/examples/bench_export.rs) without a
//! mapping, against the same trace obfuscated and exported with its mapping, and with a mapping
//! grown to a large app's size by classes the trace never names. Runs the real binary,
//! alternating the cases; prints the medians (wall and the child's CPU time) and the overhead,
//! and in process the parts (reading the mapping, deobfuscating the symbol table on one
//! thread). A table to read, not a test: nothing fails on a figure.
//!
//! `cargo bench -p hubble-cli --bench deobf [-- RING_MIB [RUNS]]` (defaults 32, 5).

#[path = "../tests/common/obfuscate.rs"]
mod obfuscate;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use hubble_format::Mode;
use hubble_testkit::synth::{trace, Spec};

/// CPU time of the waited-for children (user + system).
fn children_cpu() -> Duration {
    // SAFETY: an all-zero rusage is a valid value of the plain C struct it is.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `ru` is valid and writable; RUSAGE_CHILDREN is a constant Linux knows.
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) } != 0 {
        return Duration::ZERO;
    }
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// One `hubble` run: wall and CPU time.
fn run(args: &[&str]) -> (Duration, Duration) {
    let cpu = children_cpu();
    let t = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_hubble"))
        .args(args)
        .output()
        .expect("run hubble");
    let wall = t.elapsed();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    (wall, children_cpu() - cpu)
}

/// Classes and methods an app has besides those the trace names: `classes` classes of
/// `methods` methods each, in ProGuard's format with R8's line ranges (≈ 70 bytes a line).
fn filler(classes: usize, methods: usize) -> String {
    let mut s = String::new();
    for c in 0..classes {
        s += &format!(
            "com.example.filler.pkg{}.Filler{c} -> f{}.{}:\n",
            c % 97,
            c % 97,
            obfuscate::short(c)
        );
        for m in 0..methods {
            s += &format!(
                "    {}:{}:java.lang.String method{m}(int,com.example.filler.Model):{}:{} -> {}\n",
                m * 3 + 1,
                m * 3 + 3,
                m * 7 + 10,
                m * 7 + 12,
                obfuscate::short(m)
            );
        }
    }
    s
}

/// The classes of `mapping` (after its header) spread evenly among those of `filler`.
fn spread(mapping: &str, filler: &str) -> String {
    // A class's block: its class line and the indented or comment lines under it.
    let blocks = |text: &str| {
        let (mut header, mut blocks) = (String::new(), Vec::<String>::new());
        for line in text.lines() {
            let block = if line.starts_with([' ', '\t', '#']) {
                blocks.last_mut().unwrap_or(&mut header)
            } else {
                blocks.push(String::new());
                blocks.last_mut().expect("just pushed")
            };
            block.push_str(line);
            block.push('\n');
        }
        (header, blocks)
    };
    let (header, ours) = blocks(mapping);
    let (_, theirs) = blocks(filler);
    let every = (theirs.len() / ours.len().max(1)).max(1);
    let mut out = header;
    let mut ours = ours.into_iter();
    for (i, b) in theirs.into_iter().enumerate() {
        if i % every == 0 {
            out.extend(ours.next());
        }
        out.push_str(&b);
    }
    out.extend(ours);
    out
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let mib: usize = args.first().map_or(32, |s| s.parse().expect("RING_MIB"));
    let runs: usize = args.get(1).map_or(5, |s| s.parse().expect("RUNS"));
    let dir = std::env::temp_dir().join(format!("hubble-deobf-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    println!(
        "hubble export of a {mib} MiB ring with and without --mapping, median of {runs} runs \
         ({} cores)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "{:<54} {:>9} {:>8} {:>9} {:>8}",
        "methods / format / case", "wall ms", "wall +%", "cpu ms", "cpu +%"
    );
    // The cost is per distinct method named, not per slot: a startup's few thousand app
    // methods, and bench_export's 50 000.
    for methods in [10_000, 50_000] {
        bench(&dir, mib, runs, methods);
    }
}

fn bench(dir: &Path, mib: usize, runs: usize, methods: usize) {
    let p = |name: &str| dir.join(name).to_str().expect("UTF-8 path").to_owned();
    let plain = trace(&Spec {
        mode: Mode::Bits64,
        ring_slots: (mib << 20) / 8,
        laps: 1.5,
        methods,
        ..Spec::default()
    });
    let (mapping, symbols) = obfuscate::obfuscate(&plain.symbols, "");
    let mut obf = plain.clone();
    obf.symbols = symbols;
    plain
        .write_atomic(Path::new(&p("plain.hubble")))
        .expect("write");
    obf.write_atomic(Path::new(&p("obf.hubble")))
        .expect("write");
    std::fs::write(p("mapping.txt"), &mapping).expect("write");
    // A large app: 25 000 more classes of 12 methods (300 000 method lines), the trace's
    // classes spread among them as in a real app's mapping (not first in the file, where
    // classes parsed ahead in file order would be just the ones the trace needs).
    std::fs::write(p("large.txt"), spread(&mapping, &filler(25_000, 12))).expect("write");
    let size = |f: &str| std::fs::metadata(p(f)).expect("stat").len() as f64 / (1 << 20) as f64;
    let cases: [(&str, &str, Option<String>); 3] = [
        ("no mapping", "plain.hubble", None),
        (
            "--mapping (the trace's classes)",
            "obf.hubble",
            Some(p("mapping.txt")),
        ),
        (
            "--mapping (+300k method lines)",
            "obf.hubble",
            Some(p("large.txt")),
        ),
    ];
    for format in ["perfetto", "chrome-json"] {
        let out = p("out");
        let mut times: Vec<Vec<(Duration, Duration)>> = vec![Vec::new(); cases.len()];
        run(&["export", &p("plain.hubble"), "--format", format, "-o", &out]); // warm up
        for _ in 0..runs {
            for (i, (_, file, mapping)) in cases.iter().enumerate() {
                let input = p(file);
                let mut a = vec!["export", input.as_str(), "--format", format, "-o", &out];
                if let Some(m) = mapping {
                    a.extend(["--mapping", m.as_str()]);
                }
                times[i].push(run(&a));
            }
        }
        let med: Vec<(Duration, Duration)> = times
            .into_iter()
            .map(|t| {
                (
                    median(t.iter().map(|x| x.0).collect()),
                    median(t.iter().map(|x| x.1).collect()),
                )
            })
            .collect();
        for (i, (name, _, _)) in cases.iter().enumerate() {
            let pct = |a: Duration, b: Duration| 100.0 * (a.as_secs_f64() / b.as_secs_f64() - 1.0);
            println!(
                "{:<54} {:>9.1} {:>8} {:>9.1} {:>8}",
                format!("{} / {format} / {name}", plain.symbols.len()),
                med[i].0.as_secs_f64() * 1e3,
                if i == 0 {
                    "-".into()
                } else {
                    format!("{:+.1}", pct(med[i].0, med[0].0))
                },
                med[i].1.as_secs_f64() * 1e3,
                if i == 0 {
                    "-".into()
                } else {
                    format!("{:+.1}", pct(med[i].1, med[0].1))
                },
            );
        }
    }
    // The parts, in process.
    for (name, file) in [
        ("the trace's classes", "mapping.txt"),
        ("+300k method lines", "large.txt"),
    ] {
        let t = Instant::now();
        let m = hubble_deobf::Mapping::read(Path::new(&p(file))).expect("mapping");
        let read = t.elapsed();
        let mut symbols = obf.symbols.clone();
        let t = Instant::now();
        let report = m.deobfuscate_symbols(&mut symbols).expect("deobfuscate");
        let names = t.elapsed();
        assert_eq!(
            symbols, plain.symbols,
            "deobfuscated names differ from the plain trace's"
        );
        println!(
            "  in process, mapping of {name}: {:.1} MiB, {} classes, read in {:.1} ms; {} names \
             deobfuscated in {:.1} ms on one thread ({} ambiguous, {} kept)",
            size(file),
            m.classes(),
            read.as_secs_f64() * 1e3,
            report.names(),
            names.as_secs_f64() * 1e3,
            report.count(hubble_deobf::Kind::Ambiguous),
            report.warnings()
        );
    }
}
