//! The runtime's pool model (`hubble_runtime::pool`: the traced side on Rust atomics, which the
//! loom models check for races) against the reference writer (`hubble_format::pool::
//! PoolWriter`) on the same single-threaded traffic: after every trace point and every thread
//! exit, every pool slot (both headers, every data slot) and every thread's cursor, limit and
//! end must be the writer's. The emitted A64 code, nterp and the C++ trace point are held to the
//! same writer (rust/harness/hotpath-emu/tests/pool_a64.rs, interp-replay/tests/{pool,nterp_pool}.rs).
#![cfg(not(loom))]

use std::sync::atomic::Ordering;

use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::Mode;
use hubble_runtime::block::ThreadBlock;
use hubble_runtime::pool::{self, Pool};

struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }
}

fn tid(i: usize) -> u32 {
    100 + i as u32
}

fn check(p: &Pool, w: &PoolWriter, blocks: &[Option<ThreadBlock>], step: usize) {
    let got = p.copy();
    if let Some(k) = (0..got.len()).find(|&k| got[k] != w.slots()[k]) {
        panic!(
            "step {step}: pool slot {k} is {:#x}, the reference writer's {:#x}",
            got[k],
            w.slots()[k]
        );
    }
    for (i, b) in blocks.iter().enumerate() {
        let (Some(b), Some(words)) = (b, w.words(tid(i))) else {
            continue;
        };
        let mine = (
            b.cursor.load(Ordering::Relaxed) as u64,
            b.limit.load(Ordering::Relaxed) as u64,
            b.end.load(Ordering::Relaxed) as u64,
        );
        assert_eq!(
            mine,
            (words.cursor, words.limit, words.end),
            "step {step}: thread {i}'s cursor, limit, end"
        );
    }
}

/// Skewed traffic of `threads` threads; some exit and are replaced by new ones.
fn run(mode: Mode, g: Geometry, threads: usize, steps: usize, seed: u64) -> (Pool, PoolWriter) {
    let p = Pool::new(mode, g);
    let mut w = PoolWriter::new(mode, g, p.base() as u64);
    let mut blocks: Vec<Option<ThreadBlock>> = Vec::new();
    for i in 0..threads {
        let b = ThreadBlock::default();
        pool::start(&b, &p, 0);
        w.start_thread(tid(i));
        blocks.push(Some(b));
    }
    let mut rng = Rng(seed | 1);
    let mut counter = 1u64 << 33;
    for step in 0..steps {
        let i = if rng.below(2) == 0 {
            rng.below(2) as usize
        } else {
            2 + rng.below(threads as u64 - 2) as usize
        };
        counter += 1 + rng.below(40);
        let b = blocks[i].as_ref().unwrap();
        match rng.below(20) {
            0 if i >= 2 => {
                // The thread exits (its block sealed); a new one takes its place.
                pool::thread_exit(b, &p);
                w.thread_exit(tid(i));
                let b = ThreadBlock::default();
                pool::start(&b, &p, 0);
                w.start_thread(tid(i));
                blocks[i] = Some(b);
            }
            1..=7 => {
                let mine = pool::trace_exit(b, &p, tid(i), counter);
                assert_eq!(mine, w.exit(tid(i), counter), "step {step}: written?");
            }
            _ => {
                let low = 0x7000_0000 + 0x40 * rng.below(1 << 16);
                let wide = mode == Mode::Bits64 && rng.below(3) == 0;
                let m = if wide { (0x7f00 << 32) | low } else { low };
                let mine = pool::trace_entry(b, &p, tid(i), m, counter);
                assert_eq!(
                    mine,
                    w.entry(tid(i), m, counter).unwrap(),
                    "step {step}: written?"
                );
            }
        }
        check(&p, &w, &blocks, step);
    }
    (p, w)
}

#[test]
fn the_model_writes_the_pool_as_the_reference_writer() {
    let g = Geometry {
        blocks: 16,
        block_slots: 17,
        active: 4,
    };
    for mode in [Mode::Bits64, Mode::Bits32] {
        let (p, w) = run(mode, g, 10, 4000, 0x4855_4242);
        assert_eq!(w.dropped, 0);
        assert!(
            pool::head(&p) > 8 * g.blocks as u64,
            "reuse past the bound ran"
        );
    }
}

#[test]
fn a_saturated_pool_drops_in_the_model_as_in_the_reference_writer() {
    let g = Geometry {
        blocks: 8,
        block_slots: 9,
        active: 8,
    };
    let (p, w) = run(Mode::Bits64, g, 12, 3000, 0xdead_beef);
    assert!(w.dropped > 10, "only {} drops", w.dropped);
    // The model's own count (what the stress test and the bench report) agrees.
    assert_eq!(p.stats().drops.load(Ordering::Relaxed), w.dropped);
}
