//! The body of the ring fuzz targets, shared by the 64-bit and 32-bit ones.

use hubble_format::{EventIter, Mode, RingView};

/// Any bytes as a ring: the first 16 bytes choose the write position, the valid length and the
/// reference counter; the rest are slots. Backward and forward decoding must agree.
pub fn check(data: &[u8], mode: Mode) {
    if data.len() < 24 {
        return;
    }
    let (head, rest) = data.split_at(16);
    let slots: Vec<u64> = rest
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    if slots.is_empty() {
        return;
    }
    let n = slots.len() as u64;
    let wp = u64::from(u32::from_le_bytes(head[0..4].try_into().unwrap())) % (n + 1) * 8;
    let valid = u64::from(u32::from_le_bytes(head[4..8].try_into().unwrap())) % (n + 1) * 8;
    let reference = u64::from_le_bytes(head[8..16].try_into().unwrap());
    let view = RingView::new(&slots, wp, Some(valid)).expect("in range by construction");
    let backward = hubble_format::decode_events(&view, mode, reference);
    let forward = EventIter::new(&view, mode, reference).map(|i| i.collect::<Vec<_>>());
    match (backward, forward) {
        (Ok(b), Ok(f)) => {
            assert_eq!(b.events, f);
            let _ = hubble_format::build_tree(
                &b.events,
                reference,
                hubble_format::TreeOptions { max_depth: 64 },
            );
        }
        (Err(b), Err(f)) => assert_eq!(b, f, "both directions fail, and say the same"),
        (b, f) => panic!("backward {b:?} and forward {f:?} disagree"),
    }
}
