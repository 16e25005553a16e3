//! `main-job`: see the crate docs and scripts/main-job.
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use clap::{Parser, Subcommand};
use hubble_hotpath_emu::{emit_t32, thread_offsets, Kind, Options, Terminator};
use hubble_main_job::{guest, run, tasks};

#[derive(Parser)]
#[command(
    name = "main-job",
    about = "The Hubble main job on the host (see scripts/main-job)"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Emit the A64 and T32 trace points with ART's emitters and write their listings.
    Emit {
        /// Output directory.
        #[arg(long, default_value = "out/main-job")]
        out: PathBuf,
    },
    /// Run the cold-start workload through the emitted A64 bytes under the real control plane,
    /// and check every flushed file slot for slot.
    Run {
        /// Method invocations in the stream (the paper's cold starts: 250k-420k).
        #[arg(long, default_value_t = 400_000)]
        invocations: usize,
        /// Ring size in KiB (power of two; smaller than the stream so it wraps).
        #[arg(long, default_value_t = 2048)]
        ring_kib: usize,
        /// Seed of the stream.
        #[arg(long, default_value_t = 0x4855_4242_4c45)]
        seed: u64,
        /// Threshold of the runtime's jank trigger, `debug.hubble.triggers` =
        /// `android.view.Choreographer.doFrame><N>ms=jank` (ms).
        #[arg(long, default_value_t = 100)]
        jank_threshold_ms: u64,
        /// Self time of the janky frame's app methods (ms of emulated work). The trigger reads
        /// the ring a 250 ms tick behind the thread, so it fires at most threshold + 500 ms
        /// after the frame began: a longer frame is still running when the flush stops the
        /// thread (a cooperative stop).
        #[arg(long, default_value_t = 1000)]
        jank_ms: u64,
        /// Output directory (the app data directory and report.json go here).
        #[arg(long, default_value = "out/main-job")]
        out: PathBuf,
        /// The trace points that run the UI thread: `a64` (the emitted A64 bytes in unicorn) or
        /// `x86_64` (the emitted x86_64 bytes natively on this CPU; needs --x86-blobs).
        #[arg(long, default_value = "a64", value_parser = ["a64", "x86_64"])]
        isa: String,
        /// The blob file `scripts/hotpath-x86-gen` prints (ART's x86_64 trace points).
        #[arg(long, value_name = "FILE")]
        x86_blobs: Option<PathBuf>,
    },
    /// The many-thread scene: a UI thread feeding an AsyncTask serial executor and an undersized
    /// pool, traced in many-thread mode through ART's x86_64 trace points natively, flushed by
    /// an ANR; checks the file record for record and `hubble tasks`' queuing figures exactly.
    Tasks {
        /// The blob file `scripts/hotpath-x86-gen` prints (ART's x86_64 trace points).
        #[arg(long, value_name = "FILE")]
        x86_blobs: PathBuf,
        /// Output directory (the app data directory and tasks.txt go here).
        #[arg(long, default_value = "out/main-job/tasks")]
        out: PathBuf,
        /// The slow feed task's work (ms); the quick ones queue behind it.
        #[arg(long, default_value_t = 1500)]
        slow_ms: u64,
        /// How long the UI thread is blocked before the ANR (ms).
        #[arg(long, default_value_t = 700)]
        anr_after_ms: u64,
    },
}

fn emit(out: &PathBuf) -> Result<()> {
    std::fs::create_dir_all(out)?;
    let code = guest::code();
    let mut a64 = String::new();
    a64.push_str(&format!(
        "# A64 trace points from art-patches/files/compiler/optimizing/hubble_trace_point_arm64.cc\n# (VIXL {}), x19 = Thread*, x0 = ArtMethod*, block at Thread+{} (art-patches/thread-offsets.txt: {:?})\n",
        "5.1 (libvixl-dev)",
        guest::block_offset(),
        thread_offsets::A64
    ));
    for (name, kind) in [
        ("entry", Kind::Entry),
        ("entry, pointer known < 4 GiB", Kind::EntryNarrow),
        ("exit", Kind::Exit),
    ] {
        let blob = hubble_hotpath_emu::emit_a64(
            kind,
            0,
            &thread_offsets::A64,
            Options {
                isb: false,
                terminator: Terminator::Return,
            },
        );
        a64.push_str(&format!(
            "\n## {name} ({} bytes)\n{}",
            blob.bytes.len(),
            guest::listing(false, &blob)
        ));
    }
    a64.push_str("\n## the main job's driver loop (hand-encoded, proving/main-job/src/guest.rs)\n");
    for i in guest::disassemble(false, &code.bytes[..guest::label::DONE as usize + 4], 0) {
        a64.push_str(&format!(
            "  {:4}: {:<8} {}\n",
            i.offset, i.mnemonic, i.operands
        ));
    }
    let mut t32 = format!(
        "# T32 trace points from art-patches/files/compiler/optimizing/hubble_trace_point_arm_vixl.cc\n# r9 = Thread*, r0 = ArtMethod*, temps r4 r5 r6, block at Thread+{:?}\n",
        thread_offsets::ARM32
    );
    for (name, kind) in [("entry", Kind::Entry), ("exit", Kind::Exit)] {
        let blob = emit_t32(
            kind,
            0,
            [4, 5, 6],
            &thread_offsets::ARM32,
            Options {
                isb: false,
                terminator: Terminator::Return,
            },
        );
        t32.push_str(&format!(
            "\n## {name} ({} bytes)\n{}",
            blob.bytes.len(),
            guest::listing(true, &blob)
        ));
    }
    std::fs::write(out.join("sequences-a64.txt"), &a64)?;
    std::fs::write(out.join("sequences-t32.txt"), &t32)?;
    print!("{a64}\n{t32}");
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Cmd::Emit { out } => emit(&out),
        Cmd::Run {
            invocations,
            ring_kib,
            seed,
            jank_threshold_ms,
            jank_ms,
            out,
            isa,
            x86_blobs,
        } => (|| {
            std::fs::create_dir_all(&out)?;
            let params = run::Params {
                isa: if isa == "x86_64" {
                    run::Isa::X86_64
                } else {
                    run::Isa::A64
                },
                x86_blobs,
                invocations,
                ring_bytes: ring_kib.next_power_of_two() * 1024,
                seed,
                out: out.clone(),
                jank_threshold_ms,
                jank_ms,
                chunk_ops: 50_000,
                verbose: true,
            };
            let report = run::run(&params)?;
            let json = run::report_json(&report);
            std::fs::write(out.join("report.json"), &json).context("report.json")?;
            print_report(&report);
            Ok(())
        })(),
        Cmd::Tasks {
            x86_blobs,
            out,
            slow_ms,
            anr_after_ms,
        } => (|| {
            std::fs::create_dir_all(&out)?;
            let mut p = tasks::Params::new(x86_blobs, out.clone());
            p.shape.slow_ms = slow_ms;
            p.anr_after_ms = anr_after_ms;
            let report = tasks::run(&p)?;
            let text = tasks_text(&report);
            std::fs::write(out.join("tasks.txt"), &text).context("tasks.txt")?;
            print!("{text}");
            Ok(())
        })(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("main-job: error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn print_report(r: &run::Report) {
    println!(
        "stream: {} ops = {} invocations, {} exceptions (multi-frame unwinds), depth {}, methods {} < 4 GiB / {} > 4 GiB",
        r.ops, r.invocations, r.exceptions, r.max_depth, r.methods_low_high.0, r.methods_low_high.1
    );
    println!(
        "{} in {} ms; {} records written by the emitted {}; clock {} Hz; ring {} KiB; stops: {} cooperative, {} forced",
        if r.isa == run::Isa::X86_64 { "ran natively" } else { "emulated" },
        r.emulate_ms,
        r.records_written,
        if r.isa == run::Isa::X86_64 { "x86_64" } else { "A64" },
        r.timer_hz,
        r.ring_bytes >> 10,
        r.cooperative_stops,
        r.forced_stops
    );
    println!("debug.hubble.triggers = {:?}", r.trigger_spec);
    if let Some(f) = &r.trigger {
        println!(
            "runtime trigger '{}' fired: {} ran {} ms{} → flush; the janky frame is #{} (ops {}..{}); the longest doFrame in the jank file: {} ms",
            f.reason,
            f.method,
            f.duration.as_millis(),
            if f.exited { " (returned)" } else { " and was still running" },
            r.jank_frame.0,
            r.jank_frame.1,
            r.jank_frame.2,
            r.jank_file_longest_frame_ms
        );
    }
    for f in &r.files {
        println!(
            "{}\n  reason {:<18} stop {:<24} at op {} (ring offset {:#x}); window = ops {}..{}: {} records in {} slots ({} pad, start record {}) — SLOT FOR SLOT = the stream; {} symbols{}",
            f.path.display(),
            f.reason,
            if f.forced { "forced (thread native)" } else { "cooperative (doorbell)" },
            f.stop_op,
            f.write_pos,
            f.first_op,
            f.stop_op,
            f.records,
            f.slots,
            f.pads,
            if f.has_start { "kept" } else { "overwritten: the ring wrapped" },
            f.symbols,
            f.restart_op.map_or(String::new(), |o| format!("; tracing resumed at op {o} ({} ops after the stop)", o - f.stop_op)),
        );
    }
}

fn tasks_text(r: &tasks::Report) -> String {
    let mut s = format!(
        "{}\n  stops: {} cooperative, {} forced; every thread's records decode exactly as it wrote them:\n",
        r.file.display(),
        r.cooperative_stops,
        r.forced_stops
    );
    for t in &r.threads {
        s.push_str(&format!(
            "  {:<16} tid {:<8} {:>7} records ({} task records) in {:>3} blocks, stopped {}\n",
            t.name,
            t.tid,
            t.records,
            t.task_records,
            t.blocks,
            if t.forced {
                "by force (waiting)"
            } else {
                "at its own trace point"
            }
        ));
    }
    let q = &r.queuing;
    s.push_str(&format!(
        "hubble tasks (tau {} ms) = the scene's own figures, task for task:\n",
        q.tau_ns / 1_000_000
    ));
    for g in &q.groups {
        s.push_str(&format!(
            "  {} {}: {} tasks, capacity {}, max queued {}, max executed {}\n",
            if g.anomalous {
                "ANOMALOUS"
            } else {
                "normal   "
            },
            g.site,
            g.tasks,
            g.capacity,
            hubble_analysis::ms(g.max_queued_ns),
            hubble_analysis::ms(g.max_exec_ns)
        ));
    }
    for t in &q.tasks {
        s.push_str(&format!(
            "    task {:#09x} queue {:#09x}: queued {:>10} ms{}, executed {:>10} ms{}, queue length {}\n",
            t.task,
            t.queue,
            hubble_analysis::ms(t.queued_ns.unwrap_or(0)),
            if t.still_queued { " (still queued at the ANR)" } else { "" },
            t.exec_ns.map_or("-".into(), hubble_analysis::ms),
            if t.running { " (running at the ANR)" } else { "" },
            t.queue_length.unwrap_or(0)
        ));
    }
    s
}
