//! Any bytes as a trace file: parse, and if it parses, decode and build the tree. Each input is
//! tried twice: as it is, and with its last four bytes replaced by the right CRC, so mutations
//! reach the structure checks behind the checksum.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "common/resealed.rs"]
mod resealed;

fn check(data: &[u8]) {
    if let Ok(file) = hubble_format::TraceFile::parse(data) {
        if let Ok(decoded) = file.decode_events() {
            let _ = hubble_format::build_tree(
                &decoded.events,
                file.header.reference_counter,
                hubble_format::TreeOptions { max_depth: 64 },
            );
        }
        // What parses must serialize back to the same bytes, but for the version: a version 1
        // or 2 file (no anchors, no metadata) is written back as the current version, with the
        // checksum that goes with it.
        let mut expected = data.to_vec();
        if u16::from_le_bytes([data[8], data[9]]) < hubble_format::file::VERSION {
            expected[8..10].copy_from_slice(&hubble_format::file::VERSION.to_le_bytes());
            let n = expected.len() - 4;
            let crc = crc32fast::hash(&expected[..n]);
            expected[n..].copy_from_slice(&crc.to_le_bytes());
        }
        assert_eq!(file.to_bytes().expect("re-serializes"), expected);
    }
}

fuzz_target!(|data: &[u8]| resealed::as_is_and_resealed(data, check));
