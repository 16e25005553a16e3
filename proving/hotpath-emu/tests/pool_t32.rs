//! Many-thread mode on T32 (`docs/many-threads.md`): a 32-bit process's
//! emitted trace points (`hubble_trace_point_arm_vixl.cc`) and the runtime's block-end function they
//! call (`runtime/hubble/pool_arm.S`, assembled unchanged by `build.rs`) run in unicorn for
//! many threads that share one pool, each with a `Thread` image at the real 32-bit offsets
//! (`thread-offsets.txt`, `tid` included). After every trace point the pool, every header word
//! and every data slot, and the thread's words must equal `hubble_format::pool::PoolWriter` in
//! 32-bit mode fed the same calls; every register but the three temps and IP (and SP) must be
//! unchanged, LR included (the function hands the caller's LR back).
//!
//! Threads interleave at trace-point granularity (one core): what this proves is the
//! sequential algorithm, slot for slot, with LDREXD/STREXD for the 64-bit ticket and state.
//! The races are the loom models' (`rust/runtime/tests/loom_pool.rs`), on the same algorithm.
mod common;

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use common::arm32::{mrrc_registers, r};
use common::disasm::{disassemble, Isa};
use common::emu::Rng;
use common::pool_guest::{self, feed, Layout};
use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::pool_traffic::{Op, Traffic, ROOMY, SATURATED, SMALL};
use hubble_format::slot::Mode;
use hubble_hotpath_emu::{emit_t32, field, pool_take_t32, thread_offsets, Kind, Options};
use unicorn_engine::{Arch, ArmCpuModel, Mode as UcMode, RegisterARM, Unicorn};

const CODE: u64 = 0x10_0000;
const CODE_BYTES: u64 = 0x1_0000;
/// Where the block-end function is placed (what the pool header's `P_TAKE` holds, | 1: Thumb).
const STUB: u64 = CODE + 0x8000;
const LAYOUT: Layout = pool_guest::ARM32;
const STACK: u64 = LAYOUT.stack;
const POOL: u64 = LAYOUT.pool;
/// The trace points' temps (the code generator's three; the lowest holds the cursor).
const TEMPS: [u8; 3] = [4, 5, 6];
/// The JNI stubs' exit temps (compiler/jni/quick/hubble_jni_trace.cc): r2, r3 and LR, which
/// BuildFrame saved and RemoveFrame reloads.
const JNI_EXIT_TEMPS: [u8; 3] = [2, 3, 14];
const IP: u8 = 12;

struct Pool {
    uc: Unicorn<'static, ()>,
    /// The emitted trace points' temps.
    temps: [u8; 3],
    /// (kind, entry address, terminator address)
    blobs: Vec<(Kind, u64, u64)>,
    writer: PoolWriter,
    geometry: Geometry,
    /// The counter every MRRC of the current trace point returns.
    counter: Rc<Cell<u64>>,
    /// Blocks taken (the block-end function's MRRC ran).
    takes: Rc<Cell<u64>>,
    /// Instructions executed by the last trace point, the block-end function's included.
    executed: Rc<Cell<u64>>,
    tids: Vec<u32>,
    rng: Rng,
}

impl Pool {
    fn new(geometry: Geometry, threads: usize, seed: u64, stub: &[u8]) -> Pool {
        Pool::with_temps(geometry, threads, seed, stub, TEMPS)
    }

    fn with_temps(
        geometry: Geometry,
        threads: usize,
        seed: u64,
        stub: &[u8],
        temps: [u8; 3],
    ) -> Pool {
        LAYOUT.check_tid_offset();
        let mut uc = Unicorn::new(Arch::ARM, UcMode::THUMB).expect("unicorn arm");
        uc.ctl_set_cpu_model(ArmCpuModel::CORTEX_A15 as i32)
            .unwrap();
        LAYOUT.map(&mut uc, CODE, CODE_BYTES, threads, geometry);
        // Every MRRC: its two destination registers get the scripted counter's halves (hooked
        // on the next instruction, once the MRRC has written them).
        let mut after_mrrc: HashMap<u64, ((u8, u8), bool)> = HashMap::new();
        let mut blobs = Vec::new();
        let mut scan = |uc: &mut Unicorn<'static, ()>, at: u64, bytes: &[u8], stub: bool| {
            uc.mem_write(at, bytes).unwrap();
            for i in disassemble(Isa::T32, bytes) {
                if i.mnemonic == "mrrc" {
                    after_mrrc.insert(
                        at + (i.offset + i.size) as u64,
                        (mrrc_registers(&i.text), stub),
                    );
                }
            }
        };
        for (k, kind) in [Kind::Entry, Kind::Exit].into_iter().enumerate() {
            let blob = emit_t32(kind, 0, temps, &thread_offsets::ARM32, Options::default());
            let at = CODE + 0x1000 * k as u64;
            scan(&mut uc, at, &blob.bytes, false);
            blobs.push((kind, at, at + blob.terminator as u64));
        }
        scan(&mut uc, STUB, stub, true);
        assert!(
            after_mrrc.values().any(|v| v.1),
            "the block-end function reads the counter"
        );
        let counter = Rc::new(Cell::new(0u64));
        let takes = Rc::new(Cell::new(0u64));
        let executed = Rc::new(Cell::new(0u64));
        let (c, t, e) = (Rc::clone(&counter), Rc::clone(&takes), Rc::clone(&executed));
        let terminators: Vec<u64> = blobs.iter().map(|b| b.2).collect();
        uc.add_code_hook(CODE, CODE + CODE_BYTES - 1, move |uc, addr, _| {
            if !terminators.contains(&addr) {
                e.set(e.get() + 1);
            }
            if let Some(&((lo, hi), stub)) = after_mrrc.get(&addr) {
                uc.reg_write(r(lo), c.get() & 0xffff_ffff).unwrap();
                uc.reg_write(r(hi), c.get() >> 32).unwrap();
                if stub {
                    t.set(t.get() + 1);
                }
            }
        })
        .unwrap();

        let mut writer = PoolWriter::new(Mode::Bits32, geometry, POOL);
        writer.set_take_entry(STUB | 1);
        LAYOUT.write_header(&mut uc, &writer);
        let tids = LAYOUT.start_threads(&mut uc, &mut writer, threads, (1000, 7));
        Pool {
            uc,
            temps,
            blobs,
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
        for n in (0..=12u8).filter(|&n| n != 9).chain([14]) {
            let v = if n == 0 {
                method
            } else {
                self.rng.next() & 0xffff_ffff
            };
            self.uc.reg_write(r(n), v).unwrap();
            before.push((n, v));
        }
        self.uc.reg_write(r(9), Pool::thread(i)).unwrap();
        let sp = STACK + 0x8000 + 8 * self.rng.below(256);
        self.executed.set(0);
        self.uc.reg_write(RegisterARM::SP as i32, sp).unwrap();
        self.uc.emu_start(at | 1, until, 0, 10_000).unwrap();
        let pc = self.uc.reg_read(RegisterARM::PC as i32).unwrap() & !1;
        assert_eq!(pc, until, "{kind:?} did not reach its end");
        for (n, v) in before {
            if self.temps.contains(&n) || n == IP {
                continue;
            }
            let now = self.uc.reg_read(r(n)).unwrap();
            assert_eq!(now, v, "r{n} not preserved by {kind:?} on thread {i}");
        }
        assert_eq!(
            self.uc.reg_read(RegisterARM::SP as i32).unwrap(),
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

/// Skewed traffic (`hubble_format::pool_traffic`, pointers below 4 GiB) of `threads` threads
/// over a pool of `geometry`, through the block-end function `stub`.
fn traffic(geometry: Geometry, threads: usize, steps: usize, seed: u64, stub: &[u8]) -> Pool {
    let mut p = Pool::new(geometry, threads, seed, stub);
    drive(&mut p, threads, steps, seed ^ 0x5eed);
    p
}

/// `steps` of the traffic of `threads` threads (from `seed`) through `p`, checked after each.
fn drive(p: &mut Pool, threads: usize, steps: usize, seed: u64) {
    let steps = Traffic::new(threads, seed).narrow_pointers().take(steps);
    for (step, s) in steps.enumerate() {
        let (kind, m) = match s.op {
            Op::Exit => (Kind::Exit, 0),
            Op::EntryNarrow(m) | Op::Entry(m) => (Kind::Entry, m),
            Op::Replace => unreachable!("no replacements asked for"),
        };
        p.run(s.thread, kind, m, s.counter);
        p.check(step);
    }
}

/// Four threads through `stub` from a pool that has handed out 2^32 - 5 tickets (every block
/// free from then): the head passes 2^32.
fn across_two_to_the_32(stub: &[u8]) -> Pool {
    let mut p = Pool::new(ROOMY, 4, 11, stub);
    p.writer.set_next_ticket((1u64 << 32) - 5);
    let slots = p.writer.slots()[..].to_vec();
    for (k, word) in slots.iter().enumerate() {
        p.uc.mem_write(POOL + 8 * k as u64, &word.to_le_bytes())
            .unwrap();
    }
    drive(&mut p, 4, 1500, 0x32);
    p
}

#[test]
fn many_threads_write_the_pool_slot_for_slot_as_the_reference_writer() {
    let g = ROOMY;
    let p = traffic(g, 10, 4000, 0x4855_4242, pool_take_t32());
    let takes = p.takes.get();
    assert!(takes > 200, "only {takes} blocks taken");
    assert_eq!(p.writer.dropped, 0, "a pool with room dropped records");
    // Reuse happened: the ticket counter went round the pool several times.
    assert!(p.pool_slots()[0] > 4 * g.blocks as u64);
}

/// The JNI stubs' exit registers: the cursor in r2, the counter in r3 and LR. The function's
/// address goes into r3 (IP carries the caller's LR across the call), and every register but
/// the temps and IP is kept.
#[test]
fn the_jni_stub_exit_registers_take_blocks_as_the_reference_writer() {
    let mut p = Pool::with_temps(ROOMY, 4, 0x0a11, pool_take_t32(), JNI_EXIT_TEMPS);
    for (step, s) in Traffic::new(4, 0x1a11)
        .narrow_pointers()
        .take(1500)
        .enumerate()
    {
        // Exits only: the JNI exit sequence (an entry's method register would be r0 anyway).
        p.run(s.thread, Kind::Exit, 0, s.counter);
        p.check(step);
    }
    assert!(p.takes.get() > 100, "only {} blocks taken", p.takes.get());
}

#[test]
fn a_saturated_pool_drops_records_exactly_as_the_reference_writer() {
    let g = SATURATED;
    let p = traffic(g, 12, 3000, 0xdead_beef, pool_take_t32());
    assert!(p.writer.dropped > 10, "only {} drops", p.writer.dropped);
    assert!(p.takes.get() > 50);
}

/// Tickets and block states are 64-bit in a 32-bit process: a head past 2^32 carries into the
/// high word in the fetch-add, the seal's bound and the claim's comparison alike.
#[test]
fn tickets_past_two_to_the_32_carry_into_the_high_word() {
    let p = across_two_to_the_32(pool_take_t32());
    assert!(p.pool_slots()[0] > 1 << 32, "the head crossed 2^32");
}

#[test]
fn a_stop_in_pool_mode_publishes_the_cursor_in_the_current_block() {
    let g = SMALL;
    let mut p = Pool::new(g, 3, 7, pool_take_t32());
    p.run(0, Kind::Entry, 0x7000_0040, 10);
    p.run(0, Kind::Exit, 0, 11);
    p.check(0);
    let cursor = p.word(0, field::CURSOR);
    // request_stop: stop = 1, then the doorbell.
    p.set_word(0, field::STOP, 1);
    p.set_word(0, field::LIMIT, 0);
    let before = p.pool_slots();
    let &(_, at, until) = p.blobs.iter().find(|b| b.0 == Kind::Exit).unwrap();
    p.uc.reg_write(r(9), Pool::thread(0)).unwrap();
    p.uc.emu_start(at | 1, until, 0, 1000).unwrap();
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
/// `blo` after the 64-bit `ticket - bound` turned into a NOP) claims a block the reference
/// writer still keeps for its N − A tickets.
#[test]
#[should_panic(expected = "the reference writer's")]
fn without_the_reuse_bound_the_pool_differs_from_the_reference_writer() {
    let mut stub = pool_take_t32().to_vec();
    let insns = disassemble(Isa::T32, &stub);
    let bound = insns
        .windows(2)
        .find(|w| w[0].mnemonic.starts_with("sbcs") && w[1].mnemonic.starts_with("blo"))
        .expect("the bound check: sbcs; blo")[1]
        .clone();
    assert_eq!(bound.size, 2, "a narrow blo");
    stub[bound.offset..bound.offset + 2].copy_from_slice(&0xbf00_u16.to_le_bytes()); // NOP
    traffic(ROOMY, 10, 4000, 0x4855_4242, &stub);
}

/// The high word matters: the fetch-add without its carry (`adc` of the ticket's high word
/// replaced by a move of the low word's sum) breaks the pool once the head passes 2^32.
#[test]
#[should_panic(expected = "the reference writer's")]
fn without_the_carry_the_head_differs_past_two_to_the_32() {
    let mut stub = pool_take_t32().to_vec();
    let insns = disassemble(Isa::T32, &stub);
    // adds r2, r0, #1; adc.w r3, r1, #0 (the ticket): the adc becomes mov.w r3, #0.
    let adc = insns
        .windows(2)
        .find(|w| w[0].text == "adds r2, r0, #1" && w[1].mnemonic.starts_with("adc"))
        .expect("the ticket's fetch-add: adds; adc")[1]
        .clone();
    assert_eq!(adc.size, 4);
    stub[adc.offset..adc.offset + 4].copy_from_slice(&[0x4f, 0xf0, 0x00, 0x03]); // mov.w r3, #0
    across_two_to_the_32(&stub);
}

/// What a block take costs (docs/many-threads.md quotes these): instructions executed by one
/// trace point, counted in unicorn, the block-end function included. Exact, like the golden
/// listings: a change to the emitter or to pool_arm.S must update them and the doc.
#[test]
fn instructions_of_a_block_take() {
    let g = SMALL;
    let mut p = Pool::new(g, 3, 3, pool_take_t32());
    let mut counts = Vec::new();
    for k in 0..6 {
        p.run(0, Kind::Entry, 0x7000_0040, 100 + k);
        counts.push(p.executed.get());
    }
    p.check(0);
    // 1st: no block yet (nothing to seal), the first candidate free; then the fast path (7)
    // until the block's 4 data slots are used (32-bit mode: limit = end); the 5th seals and
    // takes.
    assert_eq!(
        counts,
        [82, 7, 7, 7, 101, 7],
        "instructions per trace point"
    );
}
