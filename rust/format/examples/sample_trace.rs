//! Writes a small, valid trace file: `cargo run -p hubble-format --example sample_trace OUT`.
//! Used as the fuzzers' seed and to try the tools without a device.

use std::collections::BTreeMap;

use hubble_format::{Mode, RingWriter, TimeAnchor, TraceFile, TraceHeader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).ok_or("usage: sample_trace OUT")?;
    let mut ring = RingWriter::new(Mode::Bits64, 64);
    let main = 0x7000_1000;
    let wide = 0x7f_2000_0040;
    ring.start(100);
    ring.entry(main, 110)?;
    for i in 0..5u32 {
        ring.entry(wide, 120 + i * 20)?;
        // A task record now and then (docs/tasks.md), so that the fuzzers start from them too.
        if i % 2 == 0 {
            let kind = hubble_format::slot::TaskKind::ALL[i as usize % 4];
            ring.task(kind, 0x0abc_0000 + i, 0x0123_4567, 121 + i * 20)?;
        }
        ring.exit(130 + i * 20);
    }
    ring.exit(300);
    let window = hubble_format::ring::decode(&ring.view(), Mode::Bits64)?;
    let end = (ring.write_pos_bytes() / 8) as usize;
    let mut symbols = BTreeMap::new();
    symbols.insert(
        main,
        "void com.example.app.MainActivity.onCreate(android.os.Bundle)".into(),
    );
    symbols.insert(wide, "int com.example.app.Feed.bind(int)".into());
    let file = TraceFile {
        header: TraceHeader {
            mode: Mode::Bits64,
            timer_hz: 19_200_000,
            reference_counter: 310,
            wall_clock_ns: 1_763_800_000_000_000_000,
            ring_bytes: 64 * 8,
            write_pos: ring.write_pos_bytes(),
            pid: 1234,
            tid: 1234,
            thread_name: "main".into(),
            process_name: "com.example.app".into(),
            reason: "sample".into(),
            // The thread idled after its last record (ts 300) until the flush: the control
            // thread saw the cursor there at 305.
            anchors: vec![TimeAnchor {
                slots_after: 0,
                bound: 305,
            }],
            metadata: [
                ("device.model", "Pixel 8"),
                (
                    "build.fingerprint",
                    "google/shiba/shiba:14/UQ1A.240105.004/1:user/release-keys",
                ),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
        },
        window: ring.slots()[end - window.slots_used..end].to_vec(),
        symbols,
    };
    file.write_atomic(std::path::Path::new(&out))?;
    Ok(())
}
