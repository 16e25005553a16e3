//! Any bytes as a 64-bit ring: the first 16 bytes choose the write position, the valid length
//! and the reference counter; the rest are slots. Backward and forward decoding must agree.
#![no_main]
use libfuzzer_sys::fuzz_target;

use hubble_format::{EventIter, Mode, RingView};

fuzz_target!(|data: &[u8]| {
    if data.len() < 24 {
        return;
    }
    let (head, rest) = data.split_at(16);
    let slots: Vec<u64> =
        rest.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
    if slots.is_empty() {
        return;
    }
    let n = slots.len() as u64;
    let wp = u64::from(u32::from_le_bytes(head[0..4].try_into().unwrap())) % (n + 1) * 8;
    let valid = u64::from(u32::from_le_bytes(head[4..8].try_into().unwrap())) % (n + 1) * 8;
    let reference = u64::from_le_bytes(head[8..16].try_into().unwrap());
    let view = RingView::new(&slots, wp, Some(valid)).expect("in range by construction");
    let backward = hubble_format::decode_events(&view, Mode::Bits64, reference);
    let forward = EventIter::new(&view, Mode::Bits64, reference).map(|i| i.collect::<Vec<_>>());
    match (backward, forward) {
        (Ok(b), Ok(f)) => {
            assert_eq!(b.events, f);
            let _ = hubble_format::build_tree(
                &b.events,
                reference,
                hubble_format::TreeOptions { max_depth: 64 },
            );
        }
        (Err(_), Err(_)) => {}
        (b, f) => panic!("backward {b:?} and forward {f:?} disagree"),
    }
});
