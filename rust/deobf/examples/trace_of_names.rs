//! Writes a trace file whose symbol table holds the given method names, each method entered
//! once and returned from, in file order: `trace_of_names NAMES.txt OUT.hubble [APP_VERSION]`.
//!
//! proving/deobf/run feeds it the obfuscated names of a program ProGuard obfuscated (one
//! PrettyMethod name a line), then reads the trace back through `hubble` with `--mapping`.
//! Method `i` gets pointer `0x7000_0000 + 48 i` and lasts `i + 1` µs, so every command's output
//! can be tied back to its line.

use std::collections::BTreeMap;

use hubble_format::ring::decode;
use hubble_format::{Mode, RingWriter, TraceFile, TraceHeader};

const HZ: u64 = 19_200_000;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 || args.len() > 4 {
        eprintln!("usage: trace_of_names NAMES.txt OUT.hubble [APP_VERSION]");
        std::process::exit(2);
    }
    let text = std::fs::read_to_string(&args[1]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[1]);
        std::process::exit(2)
    });
    let names: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let slots = (names.len() * 2 + 8).next_power_of_two();
    let mut ring = RingWriter::new(Mode::Bits32, slots);
    let mut t: u64 = 1 << 20;
    ring.start(t as u32);
    let mut symbols = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        let ptr = 0x7000_0000 + 48 * i as u64;
        symbols.insert(ptr, (*name).to_owned());
        t += 100;
        ring.entry(ptr, t as u32).expect("a 32-bit method pointer");
        t += (i as u64 + 1) * HZ / 1_000_000;
        ring.exit(t as u32);
    }
    let view = ring.view();
    let window = decode(&view, Mode::Bits32).expect("the writer's ring decodes");
    let (older, newer) = view.pieces();
    let linear: Vec<u64> = older.iter().chain(newer).copied().collect();
    let mut metadata = BTreeMap::new();
    if let Some(v) = args.get(3) {
        metadata.insert("app.version".to_owned(), v.clone());
    }
    let file = TraceFile {
        header: TraceHeader {
            mode: Mode::Bits32,
            timer_hz: HZ,
            reference_counter: t + 10,
            wall_clock_ns: 1_700_000_000_000_000_000,
            ring_bytes: (slots * 8) as u64,
            write_pos: ring.write_pos_bytes(),
            pid: 4242,
            tid: 4242,
            thread_name: "main".into(),
            process_name: "com.example.shop".into(),
            reason: "deobfuscation check".into(),
            anchors: Vec::new(),
            metadata,
        },
        window: linear[linear.len() - window.slots_used..].to_vec(),
        symbols,
    };
    if let Err(e) = file.write_atomic(std::path::Path::new(&args[2])) {
        eprintln!("{}: {e}", args[2]);
        std::process::exit(2);
    }
}
