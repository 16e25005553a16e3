//! Many-thread mode on x86_64 (issue 17; `docs/many-threads.md`): the trace points ART's x86_64
//! assembler emits (`trace_point_x86_64.cc`, from `scripts/hotpath-x86-gen`) and the runtime's
//! block-end function they call (`runtime/hubble/pool_x86_64.S`, assembled unchanged into the
//! harness) run natively on this CPU, single-stepped, for many threads sharing one pool: each
//! thread a page laid out like `Thread` at the real offsets (`tid` included), `%gs` at the one
//! being traced. After every trace point the whole pool and every thread's words must equal
//! `hubble_format::pool::PoolWriter` fed the same calls; every general register but the cursor
//! and the counter's (RAX, RDX; RCX for RDTSCP) must be unchanged, RCX included when it is not
//! the cursor (compiled code may keep an argument there across the call).
//!
//! Threads interleave at trace-point granularity (one thread runs at a time): this proves the
//! sequential algorithm slot for slot; the races are the loom models' (`loom_pool.rs`).
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hubble_format::pool::{Geometry, PoolWriter, POOL_HEADER_SLOTS, SEALED};
use hubble_format::pool_traffic::{Op, Traffic, ROOMY, SATURATED, SMALL};
use hubble_format::Mode;
use hubble_hotpath_x86::pool::{build_pool_harness, PoolHarness};
use hubble_hotpath_x86::{blob_command, Blobs, Isa, Kind};

fn blobs() -> &'static Blobs {
    static B: OnceLock<Blobs> = OnceLock::new();
    B.get_or_init(Blobs::load)
}

fn harness() -> &'static PathBuf {
    static H: OnceLock<PathBuf> = OnceLock::new();
    H.get_or_init(|| build_pool_harness(blobs(), Path::new(env!("CARGO_TARGET_TMPDIR"))))
}

const CURSOR: usize = 0;
const LIMIT: usize = 1;
const STOP: usize = 2;
const BEGIN: usize = 3;
const END: usize = 4;

/// Which emitted trace points: counter and register assignment (a `gen_blobs.cc` pair).
#[derive(Clone, Copy)]
struct Variant {
    counter: &'static str,
    cursor: &'static str,
    method: &'static str,
}

const RCX_CURSOR: Variant = Variant {
    counter: "rdtsc",
    cursor: "rcx",
    method: "rdi",
};

/// Every register assignment the generator emits, with each counter read it allows.
const VARIANTS: [Variant; 7] = [
    RCX_CURSOR,
    Variant {
        counter: "rdtsc",
        cursor: "r8",
        method: "rdi",
    },
    Variant {
        counter: "rdtsc",
        cursor: "rbx",
        method: "rdi",
    },
    Variant {
        counter: "rdtsc",
        cursor: "r15",
        method: "r9",
    },
    Variant {
        counter: "lfence-rdtsc",
        cursor: "rsi",
        method: "r12",
    },
    Variant {
        counter: "rdtscp",
        cursor: "r8",
        method: "rdi",
    },
    Variant {
        counter: "rdtscp",
        cursor: "r11",
        method: "rdi",
    },
];

struct Pool {
    h: PoolHarness,
    writer: PoolWriter,
    geometry: Geometry,
    /// Offsets of cursor, limit, stop, begin, end (consecutive words) and of the tid.
    offsets: [i32; 5],
    tid_offset: i32,
    tids: Vec<u32>,
    /// Registers a trace point may change (the cursor, RAX, RDX; RCX with RDTSCP).
    may_change: u32,
    variant: Variant,
    selected: Option<usize>,
    /// Instructions executed by the last trace point, the block-end function's included.
    executed: u64,
    /// Blocks taken: trace points whose block-end function read the counter.
    takes: u64,
}

impl Pool {
    fn new(geometry: Geometry, threads: usize, variant: Variant) -> Pool {
        let b = blobs();
        let o = b.offsets[&8];
        for k in 1..5 {
            assert_eq!(
                o[k],
                o[0] + 8 * k as i32,
                "the Hubble block's words are consecutive"
            );
        }
        let isa = Isa::X86_64;
        let blob = |kind| b.get(isa, kind, variant.counter, variant.cursor, variant.method);
        let mut setup = format!("init 64 0 {} {} {} {} {}\n", o[0], o[1], o[2], o[3], o[4]);
        setup += &blob_command("entry", blob(Kind::Entry));
        setup += &blob_command("entry-narrow", blob(Kind::EntryNarrow));
        setup += &blob_command("exit", blob(Kind::Exit));
        let method = isa.reg(variant.method);
        let mut may_change =
            1 << isa.reg(variant.cursor) | 1 << isa.reg("rax") | 1 << isa.reg("rdx");
        if variant.counter == "rdtscp" {
            may_change |= 1 << isa.reg("rcx");
        }
        setup += &format!("regs {method} {may_change}\nstep 1\n");
        let h = PoolHarness::start(harness(), &setup, geometry.total_slots(), threads);
        let mut writer = PoolWriter::new(Mode::Bits64, geometry, h.pool);
        writer.set_take_entry(h.take);
        let mut pool = Pool {
            h,
            writer,
            geometry,
            offsets: o,
            tid_offset: b.tid.expect("tid offset"),
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

    fn field(&self, i: usize, f: usize) -> u64 {
        self.h.thread(i) + self.offsets[f] as u64
    }

    /// The control thread starts thread `i` in pool mode (`pool::start`): no block, seq 0.
    fn start(&mut self, i: usize) {
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
            self.h.poke(at, v);
        }
        self.writer.start_thread(tid);
    }

    fn words(&mut self, i: usize) -> Vec<u64> {
        let at = self.field(i, CURSOR);
        self.h.dump(at, 5)
    }

    /// One trace point of `kind` on thread `i` (every other register random, in the harness).
    fn run(&mut self, i: usize, kind: Kind, method: u64, counter: u64) {
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
            Isa::X86_64
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

    fn pool_slots(&mut self) -> Vec<u64> {
        let (at, n) = (self.h.pool, self.geometry.total_slots());
        self.h.dump(at, n)
    }

    /// The whole pool and every thread's words against the reference writer.
    fn check(&mut self, step: usize) {
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
fn traffic(p: &mut Pool, threads: usize, steps: usize, seed: u64) {
    for (step, s) in Traffic::new(threads, seed ^ 0x5eed).take(steps).enumerate() {
        let (kind, m) = match s.op {
            Op::Exit => (Kind::Exit, 0),
            Op::EntryNarrow(m) => (Kind::EntryNarrow, m),
            Op::Entry(m) => (Kind::Entry, m),
            Op::Replace => unreachable!("no replacements asked for"),
        };
        p.run(s.thread, kind, m, s.counter);
        p.check(step);
    }
}

#[test]
fn many_threads_write_the_pool_slot_for_slot_as_the_reference_writer() {
    for (k, &v) in VARIANTS.iter().enumerate() {
        let steps = if k == 0 { 3000 } else { 600 };
        let mut p = Pool::new(ROOMY, 10, v);
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
            // Reuse happened: the ticket counter went round the pool several times.
            assert!(p.pool_slots()[0] > 4 * ROOMY.blocks as u64);
        }
    }
}

#[test]
fn a_saturated_pool_drops_records_exactly_as_the_reference_writer() {
    let g = SATURATED;
    let mut p = Pool::new(g, 12, VARIANTS[1]);
    traffic(&mut p, 12, 2000, 0xdead_beef);
    assert!(p.writer.dropped > 10, "only {} drops", p.writer.dropped);
    assert!(p.takes > 50);
}

#[test]
fn a_stop_in_pool_mode_publishes_the_cursor_in_the_current_block() {
    let g = SMALL;
    let mut p = Pool::new(g, 2, RCX_CURSOR);
    p.run(0, Kind::Entry, 0x7000_0040, 10);
    p.run(0, Kind::Exit, 0, 11);
    p.check(0);
    let cursor = p.words(0)[CURSOR];
    // request_stop: stop = 1, then the doorbell.
    let (stop, limit) = (p.field(0, STOP), p.field(0, LIMIT));
    p.h.poke(stop, 1);
    p.h.poke(limit, 0);
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

/// The comparison can fail: the block-end function with its reuse bound check removed (the
/// `jb` after `cmp %rdx, %rsi`, ticket against state >> 1, turned into two NOPs) claims a block
/// the reference writer still keeps for its N - A tickets.
#[test]
#[should_panic(expected = "the reference writer's")]
fn without_the_reuse_bound_the_pool_differs_from_the_reference_writer() {
    let mut p = Pool::new(ROOMY, 10, RCX_CURSOR);
    let (take, end) = (p.h.take, p.h.take_end);
    let words =
        p.h.dump(take & !7, ((end - (take & !7)) as usize).div_ceil(8));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let code = &bytes[(take & 7) as usize..(end - (take & !7)) as usize];
    // cmp %rdx, %rsi (REX.W 39 /r, ModRM 11 010 110) and a short JB.
    let at: Vec<usize> = code
        .windows(4)
        .enumerate()
        .filter(|(_, w)| w[..3] == [0x48, 0x39, 0xd6] && w[3] == 0x72)
        .map(|(k, _)| k + 3)
        .collect();
    assert_eq!(
        at.len(),
        1,
        "the bound check: cmp %rdx, %rsi; jb (found {at:?})"
    );
    p.h.patch(take + at[0] as u64, &[0x90, 0x90]);
    traffic(&mut p, 10, 3000, 0x4855_4242);
}

/// A cursor other than RCX: RCX must come back unchanged from the call (the function answers in
/// it). The same emitted code with the PUSH RCX / POP RCX pair turned into NOPs must fail the
/// register check.
#[test]
#[should_panic(expected = "changed [\"rcx\"]")]
fn without_saving_rcx_the_call_clobbers_an_argument() {
    let v = VARIANTS[1];
    let b = blobs();
    let mut blob = b
        .get(
            Isa::X86_64,
            Kind::EntryNarrow,
            v.counter,
            v.cursor,
            v.method,
        )
        .clone();
    let ool = blob.out_of_line;
    // push %rcx (51) ... pop %rcx (59): the only ones in the out-of-line half.
    for op in [0x51u8, 0x59] {
        let at: Vec<usize> = (ool..blob.bytes.len())
            .filter(|&k| blob.bytes[k] == op)
            .collect();
        assert_eq!(at.len(), 1, "one {op:#x} in the out-of-line half: {at:?}");
        blob.bytes[at[0]] = 0x90;
    }
    let mut p = Pool::new(ROOMY, 2, v);
    p.h.send(&blob_command("entry-narrow", &blob)); // replaces the blob
    p.run(0, Kind::EntryNarrow, 0x7000_0040, 10);
}

/// What a block take costs (docs/many-threads.md quotes these): instructions executed by one
/// trace point, single-stepped, the block-end function included. Exact, like the golden
/// listings: a change to the emitter or to pool_x86_64.S must update them and the doc.
#[test]
fn instructions_of_a_block_take() {
    let g = SMALL;
    let mut counts = Vec::new();
    for v in [RCX_CURSOR, VARIANTS[1]] {
        let mut p = Pool::new(g, 1, v);
        let mut c = Vec::new();
        for k in 0..6 {
            p.run(0, Kind::EntryNarrow, 0x7000_0040, 100 + k);
            c.push(p.executed);
        }
        p.check(0);
        counts.push(c);
    }
    println!("x86_64 instructions per trace point, cursor rcx / r8: {counts:?}");
    // 1st: no block yet (nothing to seal), the first candidate free; 2nd, 3rd: the fast path;
    // 4th: cursor == limit = end - 8, so seal + take; then the fast path again. A cursor
    // other than RCX adds PUSH, MOV and POP.
    assert_eq!(
        counts,
        [[75, 12, 12, 84, 12, 12], [78, 12, 12, 87, 12, 12]],
        "instructions per trace point"
    );
}
