//! The `Thread` image compiled code runs against: the thread register points at it; offset 0
//! is `tls32_.state_and_flags` (zero: no suspend or checkpoint request, so suspend checks fall
//! through); the Hubble block sits at the offsets ART's own accessors give
//! (art-patches/thread-offsets.txt, regenerated and checked by `scripts/art-build --touched`).

/// Field indices in the Hubble block, in docs/architecture.md order.
pub const CURSOR: usize = 0;
pub const LIMIT: usize = 1;
pub const STOP: usize = 2;
pub const BEGIN: usize = 3;
pub const END: usize = 4;

const OFFSETS_TXT: &str = include_str!("../../../art-patches/thread-offsets.txt");

/// The five offsets for a pointer size (8 or 4), read from thread-offsets.txt.
pub fn hubble_offsets(pointer_size: u32) -> [u64; 5] {
    let names = [
        "hubble_cursor",
        "hubble_limit",
        "hubble_stop",
        "hubble_begin",
        "hubble_end",
    ];
    let mut out = [u64::MAX; 5];
    for line in OFFSETS_TXT.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() == 3 && f[1].parse() == Ok(pointer_size) {
            if let Some(i) = names.iter().position(|n| *n == f[0]) {
                out[i] = f[2].parse().expect("thread-offsets.txt: offset");
            }
        }
    }
    assert!(
        out.iter().all(|&o| o != u64::MAX),
        "thread-offsets.txt lacks a field for pointer size {pointer_size}"
    );
    out
}

/// `Thread::TidOffset` for a pointer size, read from thread-offsets.txt (`tid` line).
pub fn tid_offset(pointer_size: u32) -> u64 {
    OFFSETS_TXT
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .find(|f| f.len() == 3 && f[0] == "tid" && f[1].parse() == Ok(pointer_size))
        .map(|f| f[2].parse().expect("thread-offsets.txt: offset"))
        .unwrap_or_else(|| panic!("thread-offsets.txt lacks `tid {pointer_size}`"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_pointer_sizes_are_present_and_consecutive() {
        for ps in [4u32, 8] {
            let o = super::hubble_offsets(ps);
            for w in o.windows(2) {
                assert_eq!(w[1], w[0] + u64::from(ps));
            }
        }
    }
}
