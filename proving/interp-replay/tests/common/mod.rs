//! What the pool replays share (`pool.rs`: the C++ trace point; `nterp_pool.rs`: nterp's arm64
//! macros): random skewed traffic of several threads, the drivers' common output, and the
//! reference writer fed the same calls.
#![allow(dead_code)]

use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::pool_traffic::{self as traffic, Traffic};
use hubble_format::slot::Mode;

pub use hubble_testkit::Rng;

/// One trace point: thread index, method (entries), counter; or a task record after an entry
/// (thread, kind, task, queue, counter: only the C++ trace point writes them).
#[derive(Clone, Copy)]
pub enum Op {
    Entry(usize, u64, u64),
    Exit(usize, u64),
    Task(usize, hubble_format::slot::TaskKind, u32, u32, u64),
}

/// The drivers give thread `i` this tid.
pub fn tid(i: usize) -> u32 {
    1000 + 7 * i as u32
}

/// The pool proofs' skewed traffic (`hubble_format::pool_traffic`): threads 0 and 1 write half
/// the records, the others share the rest; wide (two-slot) entries only in 64-bit mode. The C++
/// trace point and nterp have no narrow kind: every entry is of any width.
pub fn traffic(mode: Mode, threads: usize, steps: usize, seed: u64) -> Vec<Op> {
    let t = Traffic::new(threads, seed);
    let t = if mode == Mode::Bits64 {
        t
    } else {
        t.narrow_pointers()
    };
    t.take(steps)
        .map(|s| match s.op {
            traffic::Op::Entry(m) | traffic::Op::EntryNarrow(m) => {
                Op::Entry(s.thread, m, s.counter)
            }
            traffic::Op::Exit => Op::Exit(s.thread, s.counter),
            traffic::Op::Replace => unreachable!("no replacements asked for"),
        })
        .collect()
}

/// `ops` with a task record after about one entry in four, on the entry's thread at its counter
/// (identities of up to 28 bits).
pub fn with_tasks(ops: Vec<Op>, seed: u64) -> Vec<Op> {
    let mut rng = Rng::new(seed | 1);
    let mut out = Vec::with_capacity(ops.len() * 5 / 4);
    for op in ops {
        out.push(op);
        if let Op::Entry(i, _, c) = op {
            if rng.below(4) == 0 {
                let id = rng.next() as u32 & 0x0fff_ffff;
                let kind = hubble_format::slot::TaskKind::ALL[rng.below(4) as usize];
                out.push(Op::Task(i, kind, id, id.rotate_left(9) & 0x0fff_ffff, c));
            }
        }
    }
    out
}

/// The scripts' first line: the pool's geometry and the number of threads.
pub fn pool_line(g: Geometry, threads: usize) -> String {
    format!(
        "blocks {} slots {} active {} threads {threads}\n",
        g.blocks, g.block_slots, g.active
    )
}

/// After ten threads' traffic over the roomy pool: nothing dropped, and the ticket counter went
/// round the pool several times (blocks were reused after the bound ran).
pub fn assert_went_round(w: &PoolWriter, what: &str) {
    assert_eq!(w.dropped, 0, "{what}: dropped records");
    assert!(
        w.slots()[0] > 8 * hubble_format::pool_traffic::ROOMY.blocks as u64,
        "{what}: {} tickets",
        w.slots()[0]
    );
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
            Op::Task(i, kind, task, queue, c) => {
                w.task(tid(i), kind, task, queue, counter(c)).unwrap();
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
