//! Random inputs and result comparison for corpus (a) and the call-tree corpus (interesting
//! values mixed in; floats equal by bits, any NaN equal to any NaN).
use hubble_art_compile::{canonical, Arg};

use super::Rng;

pub fn random_bits(rng: &mut Rng, ty: u8) -> u64 {
    let interesting_i = [
        0i64,
        1,
        -1,
        2,
        7,
        -100,
        100000,
        1000,
        1001,
        i32::MAX as i64,
        i32::MIN as i64,
    ];
    let interesting_f = [
        0.0f64,
        -0.0,
        1.5,
        -2.25,
        1e30,
        f64::INFINITY,
        f64::NAN,
        3.0e-39,
    ];
    let pick = rng.below(4) == 0;
    match ty {
        b'F' => {
            if pick {
                u64::from(
                    (interesting_f[rng.below(interesting_f.len() as u64) as usize] as f32)
                        .to_bits(),
                )
            } else {
                rng.next() & 0xffff_ffff
            }
        }
        b'D' => {
            if pick {
                interesting_f[rng.below(interesting_f.len() as u64) as usize].to_bits()
            } else {
                rng.next()
            }
        }
        b'J' => {
            if pick {
                interesting_i[rng.below(interesting_i.len() as u64) as usize] as u64
            } else {
                rng.next()
            }
        }
        _ => {
            let v = if pick {
                interesting_i[rng.below(interesting_i.len() as u64) as usize] as u64
            } else if rng.below(2) == 0 {
                rng.below(2000).wrapping_sub(1000)
            } else {
                rng.next()
            };
            canonical(ty, v)
        }
    }
}

/// `n` argument lists for `shorty`.
pub fn inputs(rng: &mut Rng, shorty: &str, n: usize) -> Vec<Vec<Arg>> {
    (0..n)
        .map(|_| {
            shorty.as_bytes()[1..]
                .iter()
                .map(|&ty| Arg {
                    ty,
                    bits: random_bits(rng, ty),
                })
                .collect()
        })
        .collect()
}

/// Equal as the JLS compares results: floats by bits, except that any NaN equals any NaN
/// (ART's and HotSpot's NaN payloads may differ; Java cannot observe the difference
/// through ==, and Float.floatToIntBits canonicalizes).
pub fn same(ty: u8, a: u64, b: u64) -> bool {
    match ty {
        b'F' => a == b || (f32::from_bits(a as u32).is_nan() && f32::from_bits(b as u32).is_nan()),
        b'D' => a == b || (f64::from_bits(a).is_nan() && f64::from_bits(b).is_nan()),
        _ => a == b,
    }
}

/// Inputs per method (HUBBLE_CORPUS_INPUTS, default 1000).
pub fn per_method() -> usize {
    std::env::var("HUBBLE_CORPUS_INPUTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}
