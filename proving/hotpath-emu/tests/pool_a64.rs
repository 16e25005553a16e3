//! Many-thread mode on A64 (`docs/many-threads.md`): the emitted trace
//! points (`hubble_trace_point_arm64.cc`) and the runtime's block-end function they call
//! (`runtime/hubble/pool_arm64.S`, assembled unchanged by `build.rs`) run in unicorn for many
//! threads that share one pool, each with a `Thread` image at the real offsets
//! (`thread-offsets.txt`, `tid` included). After every trace point the pool, every header word
//! and every data slot, and the thread's words must equal `hubble_format::pool::PoolWriter`
//! fed the same calls; every register but x16/x17 (and SP) must be unchanged.
//!
//! Threads interleave at trace-point granularity (one core): what this proves is the
//! sequential algorithm, slot for slot. The races (two takers of one block, a stop during a
//! take) are the loom models' (`rust/runtime/tests/loom_pool.rs`), on the same algorithm.
mod common;

use std::cell::Cell;
use std::rc::Rc;

use common::disasm::{disassemble, Isa};
use common::emu::{reg_a64 as x, Rng};
use common::pool_code::{PoolCode, CODE, CODE_BYTES, STUB};
use common::pool_guest::{feed, Layout};
use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::pool_traffic::{Op, Traffic, ROOMY, SATURATED, SMALL};
use hubble_format::slot::Mode;
use hubble_hotpath_emu::{field, pool_take_a64, thread_offsets, Kind};
use unicorn_engine::{Arch, Mode as UcMode, RegisterARM64, Unicorn};

const THREADS: u64 = 0x5_0000_0000;
const STACK: u64 = 0x6_0000_0000;
const POOL: u64 = 0x7_0000_0000;
const LAYOUT: Layout = Layout {
    threads: THREADS,
    stack: STACK,
    pool: POOL,
    offsets: thread_offsets::A64,
    word_bytes: 8,
};

struct Pool {
    uc: Unicorn<'static, ()>,
    /// (kind, entry address, terminator address)
    blobs: Vec<(Kind, u64, u64)>,
    writer: PoolWriter,
    geometry: Geometry,
    /// The counter value every MRS of the current trace point returns (one per record, as
    /// the writer takes it: the block header's time and the record's).
    counter: Rc<Cell<u64>>,
    /// Blocks taken (the block-end function's MRS ran).
    takes: Rc<Cell<u64>>,
    /// Instructions executed by the last trace point, the block-end function's included.
    executed: Rc<Cell<u64>>,
    tids: Vec<u32>,
    rng: Rng,
}

impl Pool {
    fn new(geometry: Geometry, threads: usize, seed: u64, stub: &[u8]) -> Pool {
        LAYOUT.check_tid_offset();
        let mut uc = Unicorn::new(Arch::ARM64, UcMode::ARM).expect("unicorn arm64");
        LAYOUT.map(&mut uc, CODE, CODE_BYTES, threads, geometry);
        let counter = Rc::new(Cell::new(0u64));
        let takes = Rc::new(Cell::new(0u64));
        // Every MRS: its destination register gets the scripted counter (hooked on the next
        // instruction, once the MRS has written it).
        let code = PoolCode::place(&mut uc, stub);
        let (placed, after_mrs) = (code.blobs, code.after_mrs);
        let executed = Rc::new(Cell::new(0u64));
        let (c, t, e) = (Rc::clone(&counter), Rc::clone(&takes), Rc::clone(&executed));
        let terminators: Vec<u64> = placed.iter().map(|p| p.2).collect();
        uc.add_code_hook(CODE, CODE + CODE_BYTES - 1, move |uc, addr, _| {
            if !terminators.contains(&addr) {
                e.set(e.get() + 1);
            }
            if let Some(&(reg, stub)) = after_mrs.get(&addr) {
                uc.reg_write(x(reg), c.get()).unwrap();
                if stub {
                    t.set(t.get() + 1);
                }
            }
        })
        .unwrap();

        let mut writer = PoolWriter::new(Mode::Bits64, geometry, POOL);
        writer.set_take_entry(STUB);
        LAYOUT.write_header(&mut uc, &writer);
        let tids = LAYOUT.start_threads(&mut uc, &mut writer, threads, (1000, 7));
        Pool {
            uc,
            blobs: placed,
            writer,
            geometry,
            counter,
            takes,
            executed,
            tids,
            rng: Rng::new(seed),
        }
    }

    fn thread(i: usize) -> u64 {
        LAYOUT.thread(i)
    }

    fn word(&self, i: usize, f: usize) -> u64 {
        LAYOUT.word(&self.uc, i, f)
    }

    fn set_word(&mut self, i: usize, f: usize, v: u64) {
        LAYOUT.set_word(&mut self.uc, i, f, v);
    }

    /// One trace point of `kind` on thread `i`, with every other register random.
    fn run(&mut self, i: usize, kind: Kind, method: u64, counter: u64) {
        let &(_, at, until) = self.blobs.iter().find(|b| b.0 == kind).unwrap();
        self.counter.set(counter);
        let mut before = Vec::new();
        for r in (0..=30u8).filter(|&r| r != 19) {
            let v = if r == 0 { method } else { self.rng.next() };
            self.uc.reg_write(x(r), v).unwrap();
            before.push((r, v));
        }
        self.uc.reg_write(x(19), Pool::thread(i)).unwrap();
        let sp = STACK + 0x8000 + 16 * self.rng.below(256);
        self.executed.set(0);
        self.uc.reg_write(RegisterARM64::SP as i32, sp).unwrap();
        self.uc.emu_start(at, until, 0, 10_000).unwrap();
        let pc = self.uc.reg_read(RegisterARM64::PC as i32).unwrap();
        assert_eq!(pc, until, "{kind:?} did not reach its end");
        for (r, v) in before {
            if r == 16 || r == 17 {
                continue;
            }
            let now = self.uc.reg_read(x(r)).unwrap();
            assert_eq!(now, v, "x{r} not preserved by {kind:?} on thread {i}");
        }
        assert_eq!(
            self.uc.reg_read(RegisterARM64::SP as i32).unwrap(),
            sp,
            "SP moved"
        );
        let entry = (kind != Kind::Exit).then_some(method);
        feed(&mut self.writer, self.tids[i], entry, counter);
    }

    fn pool_slots(&self) -> Vec<u64> {
        LAYOUT.pool_slots(&self.uc, self.geometry)
    }

    fn check(&self, step: usize) {
        LAYOUT.check(&self.uc, self.geometry, &self.writer, &self.tids, step);
    }
}

/// Skewed traffic (`hubble_format::pool_traffic`) of `threads` threads over a pool of `geometry`.
fn traffic(geometry: Geometry, threads: usize, steps: usize, seed: u64) -> Pool {
    traffic_with(geometry, threads, steps, seed, pool_take_a64())
}

/// The same with the given bytes as the block-end function.
fn traffic_with(geometry: Geometry, threads: usize, steps: usize, seed: u64, stub: &[u8]) -> Pool {
    let mut p = Pool::new(geometry, threads, seed, stub);
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
    p
}

#[test]
fn many_threads_write_the_pool_slot_for_slot_as_the_reference_writer() {
    let g = ROOMY;
    let p = traffic(g, 10, 4000, 0x4855_4242);
    let takes = p.takes.get();
    assert!(takes > 200, "only {takes} blocks taken");
    assert_eq!(p.writer.dropped, 0, "a pool with room dropped records");
    // Reuse happened: the ticket counter went round the pool several times.
    assert!(p.pool_slots()[0] > 4 * g.blocks as u64);
}

#[test]
fn a_saturated_pool_drops_records_exactly_as_the_reference_writer() {
    let g = SATURATED;
    let p = traffic(g, 12, 3000, 0xdead_beef);
    assert!(p.writer.dropped > 10, "only {} drops", p.writer.dropped);
    assert!(p.takes.get() > 50);
}

#[test]
fn a_stop_in_pool_mode_publishes_the_cursor_in_the_current_block() {
    let g = SMALL;
    let mut p = Pool::new(g, 2, 7, pool_take_a64());
    p.run(0, Kind::Entry, 0x7000_0040, 10);
    p.run(0, Kind::Exit, 0, 11);
    p.check(0);
    let cursor = p.word(0, field::CURSOR);
    // request_stop: stop = 1, then the doorbell.
    p.set_word(0, field::STOP, 1);
    p.set_word(0, field::LIMIT, 0);
    let before = p.pool_slots();
    let &(_, at, until) = p.blobs.iter().find(|b| b.0 == Kind::Exit).unwrap();
    p.uc.reg_write(x(19), Pool::thread(0)).unwrap();
    p.uc.emu_start(at, until, 0, 1000).unwrap();
    assert_eq!(p.word(0, field::CURSOR), 0, "tracing off");
    assert_eq!(
        p.word(0, field::STOP),
        cursor,
        "the end position, published"
    );
    assert_eq!(
        p.pool_slots(),
        before,
        "nothing written, no block taken or sealed"
    );
}

/// The comparison can fail: the block-end function with its reuse bound check removed (the
/// `b.lo` after `cmp ticket, state, lsr #1` turned into a NOP) claims a block the reference
/// writer still keeps for its N − A tickets.
#[test]
#[should_panic(expected = "the reference writer's")]
fn without_the_reuse_bound_the_pool_differs_from_the_reference_writer() {
    let mut stub = pool_take_a64().to_vec();
    let insns = disassemble(Isa::A64, &stub);
    let bound = insns
        .windows(2)
        .find(|w| w[0].text.ends_with("lsr #1") && w[1].mnemonic == "b.lo")
        .expect("the bound check: cmp ticket, state, lsr #1; b.lo")[1]
        .offset;
    stub[bound..bound + 4].copy_from_slice(&0xd503_201f_u32.to_le_bytes()); // NOP
    traffic_with(ROOMY, 10, 4000, 0x4855_4242, &stub);
}

/// What a block take costs (docs/many-threads.md quotes these): instructions executed by one
/// trace point, counted in unicorn, the block-end function included. Exact, like the golden
/// listings: a change to the emitter or to pool_arm64.S must update them and the doc.
#[test]
fn instructions_of_a_block_take() {
    let g = SMALL;
    let mut p = Pool::new(g, 1, 3, pool_take_a64());
    let mut counts = Vec::new();
    for k in 0..6 {
        p.run(0, Kind::EntryNarrow, 0x7000_0040, 100 + k);
        counts.push(p.executed.get());
    }
    p.check(0);
    // 1st: no block yet (nothing to seal), the first candidate free; 2nd, 3rd: the fast path;
    // 4th: cursor == limit = end - 8 (a block's last slot holds only a wide entry's second
    // slot), so seal + take; then the fast path again.
    assert_eq!(counts, [76, 8, 8, 87, 8, 8], "instructions per trace point");
}
