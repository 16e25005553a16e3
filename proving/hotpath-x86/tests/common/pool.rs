//! The pool harness of `pool_x86_64.rs` and `pool_x86.rs`: threads over one pool, each trace
//! point single-stepped in the harness process and compared, the whole pool and every thread's
//! words, with `hubble_format::pool::PoolWriter` fed the same calls (64- or 32-bit mode).
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hubble_format::pool::{Geometry, PoolWriter, POOL_HEADER_SLOTS, SEALED};
use hubble_format::pool_traffic::{Op, Traffic, ROOMY, SATURATED, SMALL};
use hubble_format::Mode;
use hubble_hotpath_x86::pool::{build_pool_harness, PoolHarness};
use hubble_hotpath_x86::{blob_command, Blob, Blobs, Isa, Kind};

pub fn blobs() -> &'static Blobs {
    static B: OnceLock<Blobs> = OnceLock::new();
    B.get_or_init(Blobs::load)
}

fn harness(isa: Isa) -> &'static PathBuf {
    static H64: OnceLock<PathBuf> = OnceLock::new();
    static H32: OnceLock<PathBuf> = OnceLock::new();
    let cell = match isa {
        Isa::X86_64 => &H64,
        Isa::X86 => &H32,
    };
    cell.get_or_init(|| build_pool_harness(blobs(), Path::new(env!("CARGO_TARGET_TMPDIR")), isa))
}

/// Bytes of a `Thread` word.
fn word_bytes(isa: Isa) -> usize {
    match isa {
        Isa::X86_64 => 8,
        Isa::X86 => 4,
    }
}

pub const CURSOR: usize = 0;
pub const LIMIT: usize = 1;
pub const STOP: usize = 2;
pub const BEGIN: usize = 3;
pub const END: usize = 4;

/// Which emitted trace points: counter and register assignment (a `gen_blobs.cc` pair).
#[derive(Clone, Copy)]
pub struct Variant {
    pub counter: &'static str,
    pub cursor: &'static str,
    pub method: &'static str,
}

pub struct Pool {
    pub isa: Isa,
    pub h: PoolHarness,
    pub writer: PoolWriter,
    pub geometry: Geometry,
    /// Offsets of cursor, limit, stop, begin, end (consecutive words) and of the tid.
    pub offsets: [i32; 5],
    pub tid_offset: i32,
    pub tids: Vec<u32>,
    /// Registers a trace point may change (the cursor, RAX, RDX; RCX with RDTSCP).
    pub may_change: u32,
    pub variant: Variant,
    pub selected: Option<usize>,
    /// Instructions executed by the last trace point, the block-end function's included.
    pub executed: u64,
    /// Blocks taken: trace points whose block-end function read the counter.
    pub takes: u64,
}

impl Pool {
    pub fn new(isa: Isa, geometry: Geometry, threads: usize, variant: Variant) -> Pool {
        let b = blobs();
        let word = word_bytes(isa);
        let o = b.offsets[&(word as u32)];
        for k in 1..5 {
            assert_eq!(
                o[k],
                o[0] + (word * k) as i32,
                "the Hubble block's words are consecutive"
            );
        }
        let blob = |kind| b.get(isa, kind, variant.counter, variant.cursor, variant.method);
        let mut setup = format!(
            "init {} 0 {} {} {} {} {}\n",
            8 * word,
            o[0],
            o[1],
            o[2],
            o[3],
            o[4]
        );
        setup += &blob_command("entry", blob(Kind::Entry));
        if isa == Isa::X86_64 {
            setup += &blob_command("entry-narrow", blob(Kind::EntryNarrow));
        }
        setup += &blob_command("exit", blob(Kind::Exit));
        let method = isa.reg(variant.method);
        let (a, c, d) = match isa {
            Isa::X86_64 => ("rax", "rcx", "rdx"),
            Isa::X86 => ("eax", "ecx", "edx"),
        };
        let mut may_change = 1 << isa.reg(variant.cursor) | 1 << isa.reg(a) | 1 << isa.reg(d);
        if variant.counter == "rdtscp" {
            may_change |= 1 << isa.reg(c);
        }
        setup += &format!("regs {method} {may_change}\nstep 1\n");
        let h = PoolHarness::start(harness(isa), &setup, geometry.total_slots(), threads);
        let mode = match isa {
            Isa::X86_64 => Mode::Bits64,
            Isa::X86 => Mode::Bits32,
        };
        let mut writer = PoolWriter::new(mode, geometry, h.pool);
        writer.set_take_entry(h.take);
        let mut pool = Pool {
            isa,
            h,
            writer,
            geometry,
            offsets: o,
            tid_offset: match isa {
                Isa::X86_64 => b.tid,
                Isa::X86 => b.tid32,
            }
            .expect("tid offset"),
            tids: Vec::new(),
            may_change,
            variant,
            selected: None,
            executed: 0,
            takes: 0,
        };
        // The runtime's part of the header (Pool::new, set_take_entry); the blocks are zero.
        let header: Vec<u64> = pool.writer.slots()[..POOL_HEADER_SLOTS].to_vec();
        for (i, word) in header.into_iter().enumerate() {
            let at = pool.h.pool + 8 * i as u64;
            pool.h.poke(at, word);
        }
        for i in 0..threads {
            pool.tids.push(1000 + 7 * i as u32);
            pool.start(i);
        }
        pool
    }

    pub fn field(&self, i: usize, f: usize) -> u64 {
        self.h.thread(i) + self.offsets[f] as u64
    }

    /// The control thread starts thread `i` in pool mode (`pool::start`): no block, seq 0.
    pub fn start(&mut self, i: usize) {
        let tid = self.tids[i];
        let at = self.h.thread(i) + self.tid_offset as u64;
        self.h.poke4(at, tid);
        for (f, v) in [
            (STOP, 0),
            (LIMIT, 0),
            (BEGIN, self.h.pool | 1),
            (END, 0),
            (CURSOR, SEALED),
        ] {
            let at = self.field(i, f);
            self.poke_word(at, v);
        }
        self.writer.start_thread(tid);
    }

    /// Writes a `Thread` word (8 or 4 bytes).
    pub fn poke_word(&mut self, at: u64, v: u64) {
        match self.isa {
            Isa::X86_64 => self.h.poke(at, v),
            Isa::X86 => self
                .h
                .poke4(at, u32::try_from(v).expect("a 32-bit Thread word")),
        }
    }

    /// The thread's five words: cursor, limit, stop, begin, end.
    pub fn words(&mut self, i: usize) -> Vec<u64> {
        let at = self.field(i, CURSOR);
        match self.isa {
            Isa::X86_64 => self.h.dump(at, 5),
            Isa::X86 => {
                let raw: Vec<u8> = self
                    .h
                    .dump(at, 3)
                    .iter()
                    .flat_map(|w| w.to_le_bytes())
                    .collect();
                (0..5)
                    .map(|k| {
                        u64::from(u32::from_le_bytes(
                            raw[4 * k..4 * k + 4].try_into().unwrap(),
                        ))
                    })
                    .collect()
            }
        }
    }

    /// One trace point of `kind` on thread `i` (every other register random, in the harness).
    pub fn run(&mut self, i: usize, kind: Kind, method: u64, counter: u64) {
        if self.selected != Some(i) {
            self.h.select(i);
            self.selected = Some(i);
        }
        let command = match kind {
            Kind::Entry => format!("entry {method:x} {counter:x}\n"),
            Kind::EntryNarrow => format!("narrow {method:x} {counter:x}\n"),
            Kind::Exit => format!("exit {counter:x}\n"),
        };
        let r = self.h.trace(&command);
        let changed = r.changed & !self.may_change;
        assert_eq!(
            changed,
            0,
            "{kind:?} on thread {i} changed {:?} ({} cursor {})",
            self.isa
                .regs()
                .iter()
                .enumerate()
                .filter(|(k, _)| changed & 1 << k != 0)
                .map(|(_, n)| *n)
                .collect::<Vec<_>>(),
            self.variant.counter,
            self.variant.cursor
        );
        // The blob's RET is not the trace point's.
        self.executed = r.executed - 1;
        let tid = self.tids[i];
        let written = match kind {
            Kind::Exit => self.writer.exit(tid, counter),
            _ => self.writer.entry(tid, method, counter).unwrap(),
        };
        // One counter read per record, and one more when the block-end function took a block
        // (the block's time); none when no block was free and the record was dropped.
        let expected = if written { 1..=2 } else { 0..=0 };
        assert!(
            expected.contains(&r.reads),
            "{kind:?} on thread {i}: {} counter reads, the reference writer {}",
            r.reads,
            if written {
                "wrote the record"
            } else {
                "dropped it"
            }
        );
        self.takes += r.reads.saturating_sub(1);
    }

    pub fn pool_slots(&mut self) -> Vec<u64> {
        let (at, n) = (self.h.pool, self.geometry.total_slots());
        self.h.dump(at, n)
    }

    /// The whole pool and every thread's words against the reference writer.
    pub fn check(&mut self, step: usize) {
        let got = self.pool_slots();
        let want = self.writer.slots().to_vec();
        if let Some(k) = (0..want.len()).find(|&k| got[k] != want[k]) {
            panic!(
                "step {step}: pool slot {k} is {:#x}, the reference writer's {:#x}",
                got[k], want[k]
            );
        }
        for i in 0..self.tids.len() {
            let w = self.writer.words(self.tids[i]).unwrap();
            let words = self.words(i);
            assert_eq!(
                (words[CURSOR], words[LIMIT], words[END]),
                (w.cursor, w.limit, w.end),
                "step {step}: thread {i}'s cursor, limit, end"
            );
            assert_eq!(words[STOP], 0);
            assert_eq!(words[BEGIN], self.h.pool | 1);
        }
    }
}

/// Skewed traffic (`hubble_format::pool_traffic`) of `threads` threads through `p`.
pub fn traffic(p: &mut Pool, threads: usize, steps: usize, seed: u64) {
    let mut t = Traffic::new(threads, seed ^ 0x5eed);
    if p.isa == Isa::X86 {
        t = t.narrow_pointers();
    }
    for (step, s) in t.take(steps).enumerate() {
        let (kind, m) = match s.op {
            Op::Exit => (Kind::Exit, 0),
            // 32-bit mode: one entry kind (every pointer one slot).
            Op::EntryNarrow(m) if p.isa == Isa::X86 => (Kind::Entry, m),
            Op::EntryNarrow(m) => (Kind::EntryNarrow, m),
            Op::Entry(m) => (Kind::Entry, m),
            Op::Replace => unreachable!("no replacements asked for"),
        };
        p.run(s.thread, kind, m, s.counter);
        p.check(step);
    }
}

/// Each variant under roomy skewed traffic of ten threads, slot for slot: blocks are taken
/// and nothing is dropped; the first (longest) run goes round the pool several times, so
/// blocks are reused.
pub fn writes_slot_for_slot(isa: Isa, variants: &[Variant]) {
    for (k, &v) in variants.iter().enumerate() {
        let steps = if k == 0 { 3000 } else { 600 };
        let mut p = Pool::new(isa, ROOMY, 10, v);
        traffic(&mut p, 10, steps, 0x4855_4242 + k as u64);
        assert!(
            p.takes > steps as u64 / 20,
            "{} cursor {}: only {} blocks taken",
            v.counter,
            v.cursor,
            p.takes
        );
        assert_eq!(p.writer.dropped, 0, "a pool with room dropped records");
        if k == 0 {
            assert!(p.pool_slots()[0] > 4 * ROOMY.blocks as u64);
        }
    }
}

/// Twelve threads over a saturated pool: the drops are the reference writer's.
pub fn drops_as_the_reference_writer(isa: Isa, v: Variant) {
    let mut p = Pool::new(isa, SATURATED, 12, v);
    traffic(&mut p, 12, 2000, 0xdead_beef);
    assert!(p.writer.dropped > 10, "only {} drops", p.writer.dropped);
    assert!(p.takes > 50);
}

/// A stop (`request_stop`: stop = 1, then the doorbell) answered at an exit publishes the
/// cursor, inside the current block, and writes nothing to the pool.
pub fn a_stop_publishes_the_cursor(isa: Isa, threads: usize, v: Variant) {
    let mut p = Pool::new(isa, SMALL, threads, v);
    p.run(0, Kind::Entry, 0x7000_0040, 10);
    p.run(0, Kind::Exit, 0, 11);
    p.check(0);
    let cursor = p.words(0)[CURSOR];
    let (stop, limit) = (p.field(0, STOP), p.field(0, LIMIT));
    p.poke_word(stop, 1);
    p.poke_word(limit, 0);
    let before = p.pool_slots();
    let r = p.h.trace("exit 12\n");
    assert_eq!(r.reads, 0, "no record, no block: no counter read");
    let words = p.words(0);
    assert_eq!(words[CURSOR], 0, "tracing off");
    assert_eq!(words[STOP], cursor, "the end position, published");
    assert_eq!(
        p.pool_slots(),
        before,
        "nothing written, no block taken or sealed"
    );
}

/// The block-end function's bytes as the harness loaded them.
pub fn function_bytes(p: &mut Pool) -> Vec<u8> {
    let (take, end) = (p.h.take, p.h.take_end);
    let words = p.h.dump(take & !7, ((end - (take & !7)) as usize + 7) / 8);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes[(take & 7) as usize..(end - (take & !7)) as usize].to_vec()
}

/// `blob` with the only PUSH and POP of ECX/RCX in its out-of-line half (what keeps the
/// register the function answers in) turned into NOPs.
pub fn without_saving_the_answer_register(mut blob: Blob) -> Blob {
    let ool = blob.out_of_line;
    for op in [0x51u8, 0x59] {
        let at: Vec<usize> = (ool..blob.bytes.len())
            .filter(|&k| blob.bytes[k] == op)
            .collect();
        assert_eq!(at.len(), 1, "one {op:#x} in the out-of-line half: {at:?}");
        blob.bytes[at[0]] = 0x90;
    }
    blob
}

/// Instructions executed by each of six `kind` trace points on thread 0 of a small pool of
/// `threads`, for each variant: a block take's cost (docs/many-threads.md quotes it).
pub fn block_take_counts(
    isa: Isa,
    threads: usize,
    kind: Kind,
    variants: [Variant; 2],
) -> Vec<Vec<u64>> {
    let mut counts = Vec::new();
    for v in variants {
        let mut p = Pool::new(isa, SMALL, threads, v);
        let mut c = Vec::new();
        for k in 0..6 {
            p.run(0, kind, 0x7000_0040, 100 + k);
            c.push(p.executed);
        }
        p.check(0);
        counts.push(c);
    }
    counts
}
