//! Benchmark: decode + symbolize + export to Perfetto of a full 32 MiB ring, as a ratio to a
//! plain read of the same file in the same run, and peak memory.
//!
//! `cargo run --release -p hubble-export --example bench_export [-- RING_MIB [RUNS]]`
//!
//! The trace file (a wrapped 64-bit ring, startup-like call mix, every method symbolized) is
//! written once to the temporary directory; every measurement reads it from the page cache.
//! Each stage's median over RUNS runs is printed, wall time and the process's CPU time. Peak
//! memory (VmHWM) of the full pipeline is measured in a child process running only that
//! pipeline. `--write-only RING_MIB PATH` writes the input and exits, and `--pipeline-only
//! PATH` runs read + export once (for profilers).

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use hubble_export::Input;
use hubble_format::{Mode, TraceFile};
use hubble_testkit::synth::{trace, Spec};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// CPU time the process has run (ns), every thread's, finished ones included: immune to the
/// other processes sharing the machine, unlike wall time, and it counts the export's second
/// thread.
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec and the clock id is a constant Linux knows.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall and CPU time since it was created.
struct Clock(Instant, u64);

impl Clock {
    fn start() -> Clock {
        Clock(Instant::now(), cpu_ns())
    }
    fn stop(&self) -> (Duration, Duration) {
        (
            self.0.elapsed(),
            Duration::from_nanos(cpu_ns().saturating_sub(self.1)),
        )
    }
}

fn vm_hwm_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Read + export; returns the bytes written and the file, so that the caller frees it after
/// stopping its clock, as the plain read's buffer is freed after its clock stops.
fn pipeline(path: &Path, sink: &mut dyn Write) -> (usize, TraceFile) {
    let file = TraceFile::read(path).expect("read");
    let input = [Input {
        file: &file,
        name: "bench",
    }];
    let mut counter = Counting { inner: sink, n: 0 };
    hubble_export::perfetto::write(&input, &mut counter).expect("export");
    (counter.n, file)
}

struct Counting<'a> {
    inner: &'a mut dyn Write,
    n: usize,
}

impl Write for Counting<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.n += buf.len();
        self.inner.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The benchmark's trace: a wrapped 64-bit ring of `mib` MiB, 50 000 methods, all symbolized.
fn bench_file(mib: usize) -> TraceFile {
    trace(&Spec {
        mode: Mode::Bits64,
        ring_slots: (mib << 20) / 8,
        laps: 1.5,
        methods: 50_000,
        ..Spec::default()
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--pipeline-only") {
        let (out, _) = pipeline(Path::new(&args[2]), &mut std::io::sink());
        println!("{out} {}", vm_hwm_kib());
        return;
    }
    if args.get(1).map(String::as_str) == Some("--write-only") {
        // The benchmark's input alone, for profilers: `--write-only RING_MIB PATH`.
        let mib: usize = args[2].parse().expect("RING_MIB");
        bench_file(mib)
            .write_atomic(Path::new(&args[3]))
            .expect("write");
        return;
    }
    let mib: usize = args.get(1).map_or(32, |s| s.parse().expect("RING_MIB"));
    let runs: usize = args.get(2).map_or(7, |s| s.parse().expect("RUNS"));
    let dir = std::env::temp_dir().join(format!("hubble-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("ring.hubble");
    let file = bench_file(mib);
    let slots = file.window.len();
    file.write_atomic(&path).expect("write");
    drop(file);
    let size = std::fs::metadata(&path).expect("stat").len();

    let mut read = Vec::new();
    let mut verify = Vec::new();
    let mut decode = Vec::new();
    let mut export = Vec::new();
    let mut steps = Vec::new();
    let mut export_file = Vec::new();
    let mut out_bytes = 0;
    let out_path = dir.join("out.pftrace");
    let _ = std::fs::read(&path); // warm the page cache
    for _ in 0..runs {
        let t = Clock::start();
        let bytes = std::fs::read(&path).expect("read");
        std::hint::black_box(&bytes);
        read.push(t.stop());
        drop(bytes);

        let t = Clock::start();
        let f = TraceFile::read(&path).expect("read");
        verify.push(t.stop());
        let t = Clock::start();
        let view = hubble_format::RingView::linear(&f.window);
        let n = hubble_format::EventIter::new(&view, f.header.mode, f.header.time_base())
            .expect("decode")
            .count();
        std::hint::black_box(n);
        decode.push(t.stop());
        drop(f);

        let f = TraceFile::read(&path).expect("read");
        let t = Clock::start();
        let input = [Input {
            file: &f,
            name: "bench",
        }];
        let prepared = hubble_format::stream::prepare(&input).expect("prepare");
        let mut merged = hubble_format::stream::Merged::new(&prepared);
        let mut n = 0;
        while let Some((_, run)) = merged.next_run() {
            n += run.len();
        }
        std::hint::black_box(n);
        steps.push(t.stop());
        drop(f);

        let t = Clock::start();
        let (n, f) = pipeline(&path, &mut std::io::sink());
        export.push(t.stop());
        out_bytes = n;
        drop(f);

        let t = Clock::start();
        let mut out = std::io::BufWriter::new(std::fs::File::create(&out_path).expect("out"));
        let (_, f) = pipeline(&path, &mut out);
        out.flush().expect("flush");
        export_file.push(t.stop());
        drop(f);
    }
    let child = std::process::Command::new(std::env::current_exe().expect("self"))
        .arg("--pipeline-only")
        .arg(&path)
        .output()
        .expect("child");
    let child_out = String::from_utf8_lossy(&child.stdout);
    let hwm: u64 = child_out
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let _ = std::fs::remove_dir_all(&dir);

    type Runs = Vec<(Duration, Duration)>;
    let split = |v: &Runs| -> (Duration, Duration) {
        (
            median(v.iter().map(|x| x.0).collect()),
            median(v.iter().map(|x| x.1).collect()),
        )
    };
    let (base_wall, base_cpu) = split(&read);
    let row = |name: &str, v: Runs| {
        let (wall, cpu) = split(&v);
        println!(
            "{name:<58} {:>9.1} ms {:>6.2}x {:>9.1} ms {:>6.2}x",
            wall.as_secs_f64() * 1e3,
            wall.as_secs_f64() / base_wall.as_secs_f64(),
            cpu.as_secs_f64() * 1e3,
            cpu.as_secs_f64() / base_cpu.as_secs_f64()
        );
    };
    println!(
        "ring {mib} MiB: {slots} window slots, file {:.1} MiB, Perfetto output {:.1} MiB, {runs} runs (median)",
        size as f64 / (1 << 20) as f64,
        out_bytes as f64 / (1 << 20) as f64
    );
    println!(
        "{:<58} {:>12} {:>7} {:>12} {:>7}",
        "stage", "wall", "ratio", "cpu", "ratio"
    );
    row("plain read of the file (std::fs::read)", read);
    row("read + verify (TraceFile::read: parse, CRC-32)", verify);
    row("decode only (EventIter over the window)", decode);
    row(
        "balanced wall-clock steps (shape walk + decode + merged runs)",
        steps,
    );
    row(
        "read + decode + symbolize + Perfetto export (to a sink)",
        export,
    );
    row(
        "read + decode + symbolize + Perfetto export (to a file)",
        export_file,
    );
    println!(
        "peak memory (VmHWM) of read + export in a fresh process: {:.1} MiB (file {:.1} MiB)",
        hwm as f64 / 1024.0,
        size as f64 / (1 << 20) as f64
    );
}
