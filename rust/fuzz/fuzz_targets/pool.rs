//! Any bytes as a stopped pool (the block layout of `docs/many-threads.md`): the first 12 bytes
//! choose the geometry, the ISA mode and the pool's address, the rest are the snapshot's slots.
//! `thread_streams` must return streams or an error, never panic or read outside a block; every
//! stream it returns holds only its blocks' written slots; and what a flush would write of them
//! (a version 4 file) is refused with an error or reads back equal, each run decoding or erring.
#![no_main]
use hubble_format::pool::{self, Geometry, BLOCK_HEADER_SLOTS};
use hubble_format::{Mode, ProcessHeader, ThreadsFile, Trace};
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

fuzz_target!(|data: &[u8]| {
    if data.len() < 12 {
        return;
    }
    let (head, rest) = data.split_at(12);
    let blocks = 1usize << (head[0] % 5);
    let geometry = Geometry {
        blocks,
        block_slots: BLOCK_HEADER_SLOTS + 2 + usize::from(head[1] % 30),
        active: 1 + usize::from(head[2]) % blocks,
    };
    let mode = if head[3] & 1 == 0 {
        Mode::Bits64
    } else {
        Mode::Bits32
    };
    // A user-space address, 8-aligned (the runtime's pool is an mmap).
    let base = u64::from_le_bytes(head[4..12].try_into().unwrap()) & 0x00ff_ffff_ffff_fff8;
    let mut slots: Vec<u64> = rest
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // Mostly the right length (zeros after the input), sometimes exactly what was given.
    if head[3] & 2 == 0 {
        slots.resize(geometry.total_slots(), 0);
    }
    let Ok(streams) = pool::thread_streams(&slots, geometry, base) else {
        return;
    };
    assert_eq!(slots.len(), geometry.total_slots());
    let mut seen = 0;
    for s in &streams {
        assert!(!s.blocks.is_empty());
        let mut at = 0;
        for b in &s.blocks {
            assert_eq!(b.tid, s.tid);
            assert!(b.used <= geometry.data_slots());
            let data = geometry.block_index(b.index) + BLOCK_HEADER_SLOTS;
            assert_eq!(&s.slots[at..at + b.used], &slots[data..data + b.used]);
            at += b.used;
        }
        assert_eq!(at, s.slots.len());
        seen += s.blocks.len();
    }
    assert!(seen <= blocks);
    let header = ProcessHeader {
        mode,
        timer_hz: 19_200_000,
        reference_counter: u64::MAX,
        wall_clock_ns: 0,
        pid: 1,
        process_name: String::new(),
        reason: String::new(),
        metadata: BTreeMap::new(),
    };
    let file = ThreadsFile::from_streams(
        header,
        streams,
        &BTreeMap::new(),
        &BTreeMap::new(),
        BTreeMap::new(),
    );
    // A corrupt pool may hold two blocks of one thread with one ticket or consecutive seqs
    // out of ticket order: the writer refuses those, it never panics.
    let Ok(bytes) = file.to_bytes() else {
        return;
    };
    let Ok(Trace::Threads(back)) = Trace::parse(&bytes) else {
        panic!("a file the writer wrote does not read back");
    };
    assert_eq!(back, file);
    for r in back.into_run_files() {
        let _ = r.file.decode_events();
    }
});
