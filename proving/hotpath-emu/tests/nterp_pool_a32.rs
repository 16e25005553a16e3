//! nterp's arm macros in many-thread mode (`docs/many-threads.md`): armng (A32)
//! runs `HUBBLE_NTERP_TRACE_ENTRY`/`EXIT` (`runtime/hubble/nterp_arm.S`, unchanged), whose slow
//! path calls the T32 block-end function (`pool_arm.S`) with BLX when `begin` carries the pool
//! tag. qemu-arm's user mode refuses armng's MRRC of CNTVCT, so the linked bytes
//! (`cpp/nterp_a32.S`, `build.rs`) run in unicorn, interworking included, for several threads
//! over one pool; after every op the pool and every thread's words must equal `PoolWriter` in
//! 32-bit mode fed the same calls, and every register the macros may not clobber must be kept.
mod common;

use std::cell::Cell;
use std::collections::HashMap;
use std::rc::Rc;

use common::arm32::{mrrc_registers, r};
use common::emu::Rng;
use common::pool_guest::{self, feed, Layout};
use hubble_format::pool::{Geometry, PoolWriter};
use hubble_format::pool_traffic::{Op, Traffic, ROOMY, SATURATED};
use hubble_format::slot::Mode;
use hubble_hotpath_emu::nterp_a32::{self, symbols};
use unicorn_engine::{Arch, ArmCpuModel, Mode as UcMode, RegisterARM, Unicorn};

const CODE: u64 = 0x10_0000;
const CODE_BYTES: u64 = 0x1000;
/// Where the wrappers return to (`lr`): emulation stops there.
const RETURN: u64 = CODE + CODE_BYTES - 0x10;
const LAYOUT: Layout = pool_guest::ARM32;
const STACK: u64 = LAYOUT.stack;
const POOL: u64 = LAYOUT.pool;

/// Every MRRC in `bytes` (A32 below `thumb_from`, T32 from it), as (address after it, its two
/// destination registers).
fn mrrcs(bytes: &[u8], thumb_from: usize) -> HashMap<u64, (u8, u8)> {
    let mut out = HashMap::new();
    use capstone::prelude::*;
    for (from, to, mode) in [
        (thumb_from, bytes.len(), arch::arm::ArchMode::Thumb),
        (0, thumb_from, arch::arm::ArchMode::Arm),
    ] {
        let cs = Capstone::new().arm().mode(mode).build().unwrap();
        let insns = cs.disasm_all(&bytes[from..to], CODE + from as u64).unwrap();
        for i in insns.iter() {
            if i.mnemonic() == Some("mrrc") {
                let regs = mrrc_registers(i.op_str().unwrap());
                out.insert(i.address() + i.bytes().len() as u64, regs);
            }
        }
    }
    out
}

struct Nterp {
    uc: Unicorn<'static, ()>,
    writer: PoolWriter,
    geometry: Geometry,
    counter: Rc<Cell<u64>>,
    takes: Rc<Cell<u64>>,
    tids: Vec<u32>,
    rng: Rng,
}

impl Nterp {
    fn new(geometry: Geometry, threads: usize, seed: u64, code: &[u8]) -> Nterp {
        let mut uc = Unicorn::new(Arch::ARM, UcMode::ARM).expect("unicorn arm");
        uc.ctl_set_cpu_model(ArmCpuModel::CORTEX_A15 as i32)
            .unwrap();
        LAYOUT.map(&mut uc, CODE, CODE_BYTES, threads, geometry);
        assert!((code.len() as u64) < RETURN - CODE);
        uc.mem_write(CODE, code).unwrap();
        let after = mrrcs(code, symbols::HUBBLE_POOL_TAKE as usize);
        let take_from = CODE + symbols::HUBBLE_POOL_TAKE;
        assert_eq!(
            after.keys().filter(|&&a| a > take_from).count(),
            1,
            "one MRRC in the block-end function"
        );
        assert_eq!(
            after.len(),
            3,
            "the entry's, the exit's and the function's MRRC"
        );
        let counter = Rc::new(Cell::new(0u64));
        let takes = Rc::new(Cell::new(0u64));
        let (c, t) = (Rc::clone(&counter), Rc::clone(&takes));
        uc.add_code_hook(CODE, CODE + CODE_BYTES - 1, move |uc, addr, _| {
            if let Some(&(lo, hi)) = after.get(&addr) {
                uc.reg_write(r(lo), c.get() & 0xffff_ffff).unwrap();
                uc.reg_write(r(hi), c.get() >> 32).unwrap();
                if addr > take_from {
                    t.set(t.get() + 1);
                }
            }
        })
        .unwrap();
        let mut writer = PoolWriter::new(Mode::Bits32, geometry, POOL);
        // P_TAKE: what compiled code calls; nterp calls the function directly.
        writer.set_take_entry((CODE + symbols::HUBBLE_POOL_TAKE) | 1);
        LAYOUT.write_header(&mut uc, &writer);
        let tids = LAYOUT.start_threads(&mut uc, &mut writer, threads, (2000, 11));
        Nterp {
            uc,
            writer,
            geometry,
            counter,
            takes,
            tids,
            rng: Rng::new(seed),
        }
    }

    /// One op through its A32 wrapper, every register random but r0 (the method at entry).
    fn run(&mut self, i: usize, entry: Option<u64>, counter: u64) {
        self.counter.set(counter);
        let mut before = Vec::new();
        for n in (0..=12u8).filter(|&n| n != 9) {
            let v = match (n, entry) {
                (0, Some(m)) => m,
                _ => self.rng.next() & 0xffff_ffff,
            };
            self.uc.reg_write(r(n), v).unwrap();
            before.push((n, v));
        }
        self.uc.reg_write(r(9), LAYOUT.thread(i)).unwrap();
        self.uc.reg_write(r(14), RETURN).unwrap();
        let sp = STACK + 0x8000 + 8 * self.rng.below(256);
        self.uc.reg_write(RegisterARM::SP as i32, sp).unwrap();
        let at = match entry {
            Some(_) => symbols::HUBBLE_TEST_ENTRY,
            None => symbols::HUBBLE_TEST_EXIT,
        };
        self.uc.emu_start(CODE + at, RETURN, 0, 10_000).unwrap();
        assert_eq!(self.uc.reg_read(RegisterARM::PC as i32).unwrap(), RETURN);
        // Entry clobbers r1, r2, r3, ip (and lr, which the wrapper saves); exit r2, r3, ip.
        let clobbered: &[u8] = if entry.is_some() {
            &[1, 2, 3, 12]
        } else {
            &[2, 3, 12]
        };
        for (n, v) in before {
            if !clobbered.contains(&n) {
                let now = self.uc.reg_read(r(n)).unwrap();
                assert_eq!(
                    now,
                    v,
                    "r{n} not kept by the {} macro",
                    if entry.is_some() { "entry" } else { "exit" }
                );
            }
        }
        assert_eq!(
            self.uc.reg_read(RegisterARM::SP as i32).unwrap(),
            sp,
            "SP moved"
        );
        feed(&mut self.writer, self.tids[i], entry, counter);
    }

    fn check(&self, step: usize) {
        LAYOUT.check(&self.uc, self.geometry, &self.writer, &self.tids, step);
    }
}

fn traffic(g: Geometry, threads: usize, steps: usize, seed: u64, code: &[u8]) -> Nterp {
    let mut n = Nterp::new(g, threads, seed, code);
    for (step, s) in Traffic::new(threads, seed ^ 0xa32)
        .narrow_pointers()
        .take(steps)
        .enumerate()
    {
        let entry = match s.op {
            Op::Exit => None,
            Op::EntryNarrow(m) | Op::Entry(m) => Some(m),
            Op::Replace => unreachable!("no replacements asked for"),
        };
        n.run(s.thread, entry, s.counter);
        n.check(step);
    }
    n
}

#[test]
fn armng_writes_the_pool_as_the_reference_writer() {
    let n = traffic(ROOMY, 10, 4000, 0x4855_4242, nterp_a32::bytes());
    assert!(n.takes.get() > 200, "only {} blocks taken", n.takes.get());
    assert_eq!(n.writer.dropped, 0);
    assert!(n.writer.slots()[0] > 4 * ROOMY.blocks as u64);
}

#[test]
fn a_saturated_pool_drops_in_armng_as_in_the_reference_writer() {
    let n = traffic(SATURATED, 12, 3000, 0xdead_beef, nterp_a32::bytes());
    assert!(n.writer.dropped > 10, "only {} drops", n.writer.dropped);
}

/// The comparison can fail: the slow path without its pool branch (the `bne` after
/// `tst ip, #1` turned into a NOP) wraps to `begin` as ring mode does, writing at the pool's
/// header.
#[test]
#[should_panic(expected = "the reference writer's")]
fn without_the_pool_branch_armng_differs_from_the_reference_writer() {
    use capstone::prelude::*;
    let mut code = nterp_a32::bytes().to_vec();
    let slow = symbols::HUBBLE_NTERP_SLOW_PATH as usize;
    let cs = Capstone::new()
        .arm()
        .mode(arch::arm::ArchMode::Arm)
        .build()
        .unwrap();
    let insns = cs
        .disasm_all(&code[slow..symbols::HUBBLE_POOL_TAKE as usize], slow as u64)
        .unwrap();
    let list: Vec<_> = insns.iter().collect();
    let bne = list
        .windows(2)
        .find(|w| w[0].mnemonic() == Some("tst") && w[1].mnemonic() == Some("bne"))
        .expect("tst ip, #1; bne")[1]
        .address() as usize;
    code[bne..bne + 4].copy_from_slice(&0xe320_f000_u32.to_le_bytes()); // NOP
    traffic(ROOMY, 10, 4000, 0x4855_4242, &code);
}
