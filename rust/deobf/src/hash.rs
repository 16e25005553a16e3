//! A fast hash for short names (the multiply-rotate hash of rustc's FxHasher): lookups of
//! class and method names are most of the cost of deobfuscating a trace, and the std hasher
//! (SipHash, built to resist flooding) costs several times more on such keys. Mapping files are
//! inputs the user chose, not an attacker's.

use std::hash::{BuildHasherDefault, Hasher};

/// Multiply-rotate hashing, one word at a time.
#[derive(Clone, Copy, Default)]
pub struct Fx(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl Fx {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(K);
    }
}

impl Hasher for Fx {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let rest = chunks.remainder();
        let n = rest.len();
        if n > 0 {
            // The last 1–7 bytes in one word (with their count) from overlapping reads: a
            // copy into a buffer would call `memcpy` for every name.
            let word = if n >= 4 {
                let lo = u32::from_le_bytes(rest[..4].try_into().expect("4 bytes"));
                let hi = u32::from_le_bytes(rest[n - 4..].try_into().expect("4 bytes"));
                u64::from(lo) | u64::from(hi) << 32
            } else {
                u64::from(rest[0]) | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]) << 16
            };
            self.add(word ^ (n as u64) << 59);
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// `HashMap<K, V, FxBuild>`.
pub type FxBuild = BuildHasherDefault<Fx>;

/// The hash of a signature in original types: each type's class name and array depth, in
/// order (return type first). Computed from the mapping's lines when a class is parsed and
/// from the runtime's name (its types mapped back) at lookup, so most candidates are turned
/// down by comparing two numbers.
pub fn signature<'a>(types: impl Iterator<Item = (&'a str, &'a str)>) -> u64 {
    let mut h = Fx::default();
    for (base, dims) in types {
        h.write(base.as_bytes());
        // A separator no type name holds, with the depth (`[]` per dimension): one word.
        h.add(0xff | (dims.len() as u64 / 2) << 8);
    }
    h.finish()
}
