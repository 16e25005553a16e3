//! Any bytes as a trace file of any version (`Trace::parse`: versions 1–4, the thread sections
//! of version 4 included): parse, and if it parses, every run decodes or errs, the sections
//! agree with the file, and a version 4 file serializes back to the same bytes. Each input is
//! tried twice: as it is, and with its last four bytes replaced by the right CRC, so mutations
//! reach the checks behind the checksum.
#![no_main]
use hubble_format::{Trace, TreeOptions};
use libfuzzer_sys::fuzz_target;

#[path = "common/resealed.rs"]
mod resealed;

fn check(data: &[u8]) {
    let Ok(trace) = Trace::parse(data) else {
        return;
    };
    let mode = trace.common().mode;
    let reference = trace.common().reference_counter;
    for section in trace.sections() {
        assert!(!section.runs.is_empty());
        for run in &section.runs {
            assert!(run.reference <= reference);
            if let Ok(decoded) = run.decode_events(mode) {
                let _ = hubble_format::build_tree(
                    &decoded.events,
                    run.reference,
                    TreeOptions { max_depth: 64 },
                );
            }
        }
    }
    if let Trace::Threads(file) = trace {
        // Canonical: every field is stored, the tables in their one order.
        assert_eq!(file.to_bytes().expect("re-serializes"), data);
        let sections = file.sections();
        for r in file.clone().into_run_files() {
            let run = &sections[r.section].runs[r.run];
            assert_eq!(r.file.window, run.slots);
            assert!(r.file.header.reference_counter <= run.reference);
            // The run as a window gives the run's events, whatever its reference became.
            if let (Ok(a), Ok(b)) = (r.file.decode_events(), run.decode_events(mode)) {
                assert_eq!(a.events, b.events);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| resealed::as_is_and_resealed(data, check));
