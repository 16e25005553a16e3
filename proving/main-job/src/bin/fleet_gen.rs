//! `fleet-gen`: a fleet of trace files from the main job's cold-start workload, for the fleet
//! tables and queries: varied seeds, devices and anomaly reasons over app versions,
//! with one regression planted in the newest version.
//!
//! Each trace is the workload's call stream written through the reference ring writer, timed as
//! a device would see it (19.2 MHz timer, ~0.1 µs per trace point, the workload's work units as
//! µs), into a ring small enough to wrap, as a flushed ring does. Files go to
//! `<OUT>/<app version>/`, one directory per version, as an upload pipeline that knows the
//! version keeps them; `hubble export --format parquet --meta app.version=<v>` takes each.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Parser;
use hubble_format::{Mode, RingWriter, TraceFile, TraceHeader};
use hubble_main_job::workload::{generate, op_kind, OpKind, Shape};

/// The regression planted in the newest of [`VERSIONS`]: this method does this many µs more
/// per call. It runs for every item a frame binds, so the janky frames' share of it grows.
const PLANTED: (&str, u64) = (
    "boolean com.example.app.text.EmojiTrie.match(int[], int)",
    60,
);
/// App versions, oldest first.
const VERSIONS: [&str; 3] = ["5.0.0", "5.1.0", "5.2.0"];
/// (manufacturer, model, ABI, device code name).
const DEVICES: [(&str, &str, &str, &str); 5] = [
    ("Google", "Pixel 8", "arm64-v8a", "shiba"),
    ("Google", "Pixel 6a", "arm64-v8a", "bluejay"),
    ("samsung", "SM-A146B", "arm64-v8a", "a14"),
    ("Xiaomi", "Redmi 9A", "armeabi-v7a", "dandelion"),
    ("Google", "Cuttlefish x86_64", "x86_64", "vsoc_x86_64"),
];
/// Anomaly reasons and their weights (out of 20).
const REASONS: [(&str, u64); 3] = [("jank", 12), ("startup", 5), ("anr", 3)];
const TIMER_HZ: u64 = 19_200_000;

#[derive(Parser)]
#[command(about = "Generate a fleet of Hubble traces from the main job's workload")]
struct Args {
    /// Output directory (one subdirectory per app version).
    #[arg(long)]
    out: PathBuf,
    /// Traces to generate.
    #[arg(long, default_value_t = 200)]
    traces: usize,
    /// Seed of the first trace (trace i uses seed + i).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Method invocations per workload.
    #[arg(long, default_value_t = 3000)]
    invocations: usize,
    /// Ring size in slots (a flushed window holds at most this many).
    #[arg(long, default_value_t = 8192)]
    ring_slots: usize,
}

/// xorshift64* for the choices around the workload (the workload has its own generator).
fn mix(mut x: u64) -> u64 {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

struct Device {
    manufacturer: &'static str,
    model: &'static str,
    abi: &'static str,
    code: &'static str,
}

fn main() -> Result<()> {
    let args = Args::parse();
    anyhow::ensure!(args.traces > 0, "--traces must be positive");
    anyhow::ensure!(args.ring_slots >= 64, "--ring-slots must be at least 64");
    let mut per_version = BTreeMap::<&str, usize>::new();
    for i in 0..args.traces {
        let seed = args.seed.wrapping_add(i as u64);
        let r = mix(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let version = VERSIONS[(r % VERSIONS.len() as u64) as usize];
        let (manufacturer, model, abi, code) = DEVICES[((r >> 8) % DEVICES.len() as u64) as usize];
        let mut pick = (r >> 16) % 20;
        let reason = REASONS
            .iter()
            .find(|(_, w)| {
                let hit = pick < *w;
                pick = pick.saturating_sub(*w);
                hit
            })
            .map_or("jank", |(name, _)| *name);
        let slow = (version == VERSIONS[VERSIONS.len() - 1]).then_some(PLANTED);
        let device = Device {
            manufacturer,
            model,
            abi,
            code,
        };
        let file = trace(seed, &args, slow, reason, &device, i)?;
        let dir = args.out.join(version);
        std::fs::create_dir_all(&dir).with_context(|| format!("{}", dir.display()))?;
        let path = dir.join(format!("{i:06}-{reason}.hubble"));
        file.write_atomic(&path)
            .with_context(|| format!("{}", path.display()))?;
        *per_version.entry(version).or_default() += 1;
    }
    for (version, n) in &per_version {
        println!("{version}\t{n}\t{}", args.out.join(version).display());
    }
    println!(
        "planted\t{}\t{} +{} us per call",
        VERSIONS[VERSIONS.len() - 1],
        PLANTED.0,
        PLANTED.1
    );
    Ok(())
}

fn trace(
    seed: u64,
    args: &Args,
    slow: Option<(&'static str, u64)>,
    reason: &str,
    device: &Device,
    index: usize,
) -> Result<TraceFile> {
    let w = generate(Shape {
        invocations: args.invocations,
        iters_per_us: 1,
        jank_us: 2000,
        seed,
        slow,
    });
    let mode = if device.abi == "armeabi-v7a" {
        Mode::Bits32
    } else {
        Mode::Bits64
    };
    // A 32-bit process's ArtMethod pointers fit 32 bits: there every method gets a new one.
    let mut pointers: HashMap<u64, u64> = HashMap::new();
    let mut pointer = |m: u64| -> u64 {
        if mode == Mode::Bits64 {
            return m;
        }
        let next = 0x2000_0000 + 16 * pointers.len() as u64;
        *pointers.entry(m).or_insert(next)
    };
    let mut ring = RingWriter::new(mode, args.ring_slots);
    let us = TIMER_HZ / 1_000_000;
    let mut t: u64 = 1 << 33;
    ring.start(t as u32);
    let mut natives = w.natives.iter().peekable();
    let mut names = BTreeMap::new();
    for (at, op) in w.ops.iter().enumerate() {
        while let Some(n) = natives.next_if(|n| n.at == at) {
            // The final idle wait is where the flush happens: it adds nothing to the trace.
            if !n.idle {
                t += n.ms * 1000 * us;
            }
        }
        match op_kind(*op) {
            OpKind::Entry(method) => {
                t += 2;
                let p = pointer(method);
                if let Some(name) = w.table.name(method) {
                    names.insert(p, name.to_string());
                }
                ring.entry(p, t as u32)
                    .map_err(|e| anyhow::anyhow!("method {p:#x}: {e:?}"))?;
            }
            OpKind::Exit => {
                t += 2;
                ring.exit(t as u32);
            }
            OpKind::Work(n) => t += n * us,
        }
    }
    let reference = t + 100;
    let view = ring.view();
    let window = hubble_format::ring::decode(&view, mode)?;
    let (older, newer) = view.pieces();
    let linear: Vec<u64> = older.iter().chain(newer).copied().collect();
    let slots = linear[linear.len() - window.slots_used..].to_vec();
    // The symbol table names the methods in the window, as the runtime's flush does.
    let symbols = window
        .records
        .iter()
        .filter_map(|r| match r {
            hubble_format::Record::Entry { method, .. } => {
                names.get(method).map(|n| (*method, n.clone()))
            }
            _ => None,
        })
        .collect();
    let metadata = [
        ("device.manufacturer", device.manufacturer.to_string()),
        ("device.model", device.model.to_string()),
        ("cpu.abi", device.abi.to_string()),
        ("android.sdk", "34".to_string()),
        (
            "build.fingerprint",
            format!(
                "{}/{}/{}:14/UQ1A.240105.004/11206848:user/release-keys",
                device.manufacturer.to_lowercase(),
                device.code,
                device.code
            ),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let id = 10_000 + (seed % 20_000) as u32;
    Ok(TraceFile {
        header: TraceHeader {
            mode,
            timer_hz: TIMER_HZ,
            reference_counter: reference,
            wall_clock_ns: 1_764_000_000_000_000_000 + index as u64 * 60_000_000_000,
            ring_bytes: (args.ring_slots * 8) as u64,
            write_pos: ring.write_pos_bytes(),
            pid: id,
            tid: id,
            thread_name: "main".into(),
            process_name: "com.example.app".into(),
            reason: reason.into(),
            anchors: Vec::new(),
            metadata,
        },
        window: slots,
        symbols,
    })
}
