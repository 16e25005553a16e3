//! What the pool replays share (`pool.rs`: the C++ trace point; `nterp_pool.rs`: nterp's arm64
//! macros): random skewed traffic of several threads, the drivers' common output, and the
//! reference writer fed the same calls.
#![allow(dead_code)]

use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::slot::Mode;

pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// One trace point: thread index, method (entries), counter.
#[derive(Clone, Copy)]
pub enum Op {
    Entry(usize, u64, u64),
    Exit(usize, u64),
}

/// The drivers give thread `i` this tid.
pub fn tid(i: usize) -> u32 {
    1000 + 7 * i as u32
}

/// Skewed traffic: threads 0 and 1 write half the records, the others share the rest; wide
/// (two-slot) entries only in 64-bit mode.
pub fn traffic(mode: Mode, threads: usize, steps: usize, seed: u64) -> Vec<Op> {
    let mut rng = Rng(seed | 1);
    let mut counter = 1u64 << 33;
    (0..steps)
        .map(|_| {
            let i = if rng.below(2) == 0 {
                rng.below(2) as usize
            } else {
                2 + rng.below(threads as u64 - 2) as usize
            };
            counter += 1 + rng.below(40);
            if rng.below(5) < 2 {
                Op::Exit(i, counter)
            } else {
                let low = 0x7000_0000 + 0x40 * rng.below(1 << 16);
                let wide = mode == Mode::Bits64 && rng.below(3) == 0;
                let ptr = if wide { (0x7f00 << 32) | low } else { low };
                Op::Entry(i, ptr, counter)
            }
        })
        .collect()
}

/// What a driver printed: the pool's address, each thread's cursor, limit and end, the pool.
pub struct Out {
    pub base: u64,
    pub words: Vec<(u64, u64, u64)>,
    pub slots: Vec<u64>,
}

/// Runs `cmd` on `script` and parses its output.
pub fn run(cmd: &[String], script: &str, threads: usize) -> Out {
    let text = hubble_interp_replay::run_script(cmd, script);
    let mut lines = text.lines();
    let hex = |s: &str| u64::from_str_radix(s, 16).unwrap();
    let base = hex(lines.next().unwrap().strip_prefix("base ").unwrap());
    let mut words = Vec::new();
    for _ in 0..threads {
        let line = lines.next().unwrap().strip_prefix("thread ").unwrap();
        let v: Vec<u64> = line.split(' ').map(hex).collect();
        words.push((v[0], v[1], v[2]));
    }
    Out {
        base,
        words,
        slots: lines.map(hex).collect(),
    }
}

/// The reference writer after the same calls, at the driver's base address; `counter` maps
/// each op's counter (the nterp replay uses 0 and all ones to find the bits a counter sets).
pub fn reference(
    mode: Mode,
    g: Geometry,
    threads: usize,
    ops: &[Op],
    base: u64,
    counter: impl Fn(u64) -> u64,
) -> (PoolWriter, Vec<(u64, u64, u64)>) {
    let mut w = PoolWriter::new(mode, g, base);
    for i in 0..threads {
        w.start_thread(tid(i));
    }
    for op in ops {
        match *op {
            Op::Entry(i, p, c) => {
                w.entry(tid(i), p, counter(c)).unwrap();
            }
            Op::Exit(i, c) => {
                w.exit(tid(i), counter(c));
            }
        }
    }
    let words = (0..threads)
        .map(|i| {
            let t = w.words(tid(i)).unwrap();
            (t.cursor, t.limit, t.end)
        })
        .collect();
    (w, words)
}

pub const ROOMY: Geometry = Geometry {
    blocks: 16,
    block_slots: 17,
    active: 4,
};
pub const SATURATED: Geometry = Geometry {
    blocks: 8,
    block_slots: 9,
    active: 8,
};
