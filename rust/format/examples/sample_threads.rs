//! Writes a small version 4 (many-thread) trace file and the pool image it came from:
//! `cargo run -p hubble-format --example sample_threads OUT.hubble [POOL.bin]`. The fuzzers'
//! seeds (`threads`, `pool`: POOL.bin starts with the 12 bytes that target reads its geometry
//! from) and a file to try the tools on.

use std::collections::BTreeMap;

use hubble_format::pool::{self, Geometry, PoolWriter};
use hubble_format::{Mode, ProcessHeader, ThreadsFile, TimeAnchor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .ok_or("usage: sample_threads OUT.hubble [POOL.bin]")?;
    // 4 blocks of 6 data slots, A = 2: the `pool` fuzz target's header bytes 2, 4, 1, 0.
    let geometry = Geometry {
        blocks: 4,
        block_slots: pool::BLOCK_HEADER_SLOTS + 6,
        active: 2,
    };
    let base = 0x7a00_0000;
    let mut w = PoolWriter::new(Mode::Bits64, geometry, base);
    let (main, worker) = (1234, 1250);
    w.start_thread(main);
    w.start_thread(worker);
    let on_create = 0x7000_1000;
    let bind = 0x7f_2000_0040;
    let mut t = 1_000u64;
    for i in 0..12 {
        t += 40;
        w.entry(main, on_create, t)?;
        if i % 3 == 0 {
            w.entry(worker, bind, t + 5)?;
            // A task record (docs/tasks.md), so that the fuzzers start from them too.
            w.task(
                worker,
                hubble_format::slot::TaskKind::Begin,
                0x0abc_0000 + i,
                0,
                t + 5,
            )?;
            w.exit(worker, t + 9);
        }
        w.exit(main, t + 20);
    }
    let snapshot = w.snapshot();
    let streams = pool::thread_streams(&snapshot, geometry, base)?;
    let header = ProcessHeader {
        mode: Mode::Bits64,
        timer_hz: 19_200_000,
        reference_counter: t + 100,
        wall_clock_ns: 1_763_800_000_000_000_000,
        pid: main,
        process_name: "com.example.app".into(),
        reason: "sample".into(),
        metadata: BTreeMap::from([("device.model".to_owned(), "Pixel 8".to_owned())]),
    };
    let names = BTreeMap::from([(main, "main".to_owned()), (worker, "worker".to_owned())]);
    // The main thread idled after its last record until the flush.
    let anchors = BTreeMap::from([(
        main,
        vec![TimeAnchor {
            slots_after: 0,
            bound: t + 30,
        }],
    )]);
    let symbols = BTreeMap::from([
        (
            on_create,
            "void com.example.app.MainActivity.onCreate(android.os.Bundle)".to_owned(),
        ),
        (bind, "int com.example.app.Feed.bind(int)".to_owned()),
    ]);
    let file = ThreadsFile::from_streams(header, streams, &names, &anchors, symbols);
    std::fs::write(&out, file.to_bytes()?)?;
    if let Some(image) = args.next() {
        let mut bytes = vec![2u8, 4, 1, 0];
        bytes.extend_from_slice(&base.to_le_bytes());
        for slot in snapshot {
            bytes.extend_from_slice(&slot.to_le_bytes());
        }
        std::fs::write(image, bytes)?;
    }
    Ok(())
}
