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
        if !rest.is_empty() {
            let mut last = [0u8; 8];
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
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
        // A separator no type name holds, and the depth (`[]` per dimension).
        h.write_u8(0xff);
        h.write_u8((dims.len() / 2) as u8);
    }
    h.finish()
}
