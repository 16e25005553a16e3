//! The body of the ring fuzz targets, shared by the 64-bit and 32-bit ones.

use hubble_format::{EventIter, Mode, RingView, TimeAnchor, TimeBase};

/// Any bytes as a ring: the first 24 bytes choose the write position, the valid length, the
/// reference counter and up to three time anchors; the rest are slots. Backward and forward
/// decoding must agree (the forward iterator leaves task records out).
pub fn check(data: &[u8], mode: Mode) {
    if data.len() < 32 {
        return;
    }
    let (head, rest) = data.split_at(24);
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
    let anchors = anchors(
        u64::from_le_bytes(head[16..24].try_into().unwrap()),
        reference,
    );
    let time = TimeBase {
        reference,
        anchors: &anchors,
    };
    let backward = hubble_format::decode_events(&view, mode, time);
    let forward = EventIter::new(&view, mode, time).map(|i| i.collect::<Vec<_>>());
    match (backward, forward) {
        (Ok(b), Ok(f)) => {
            let methods: Vec<_> = b
                .events
                .iter()
                .filter(|e| !matches!(e.kind, hubble_format::EventKind::Task { .. }))
                .copied()
                .collect();
            assert_eq!(methods, f);
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

/// Up to three anchors from `bits`, in the order a file keeps them: positions increasing from
/// the end (anywhere, records or not, inside the window or past it), bounds not increasing and
/// up to 2^34 ticks apart, so gaps of 2^32 ticks and more are crossed.
fn anchors(bits: u64, reference: u64) -> Vec<TimeAnchor> {
    let mut out = Vec::new();
    let (mut after, mut bound) = (0u64, reference);
    for i in 0..bits & 3 {
        after += u64::from(i > 0) + ((bits >> (2 + 10 * i)) & 0x3ff);
        bound = bound.saturating_sub(((bits >> (32 + 10 * i)) & 0x3ff) << 24);
        out.push(TimeAnchor {
            slots_after: after,
            bound,
        });
    }
    out
}
