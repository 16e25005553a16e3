//! Runs emitted trace points in unicorn against a memory image laid out like ART's `Thread`
//! (the real offsets from art-patches/thread-offsets.txt) and a ring, and plays the control
//! thread's part of docs/architecture.md (start, stop doorbell, restart) on that memory.
#![allow(dead_code)]

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

use hubble_hotpath_emu::{emit_a64, emit_t32, field, thread_offsets, Blob, Kind, Options};
use unicorn_engine::{Arch, ArmCpuModel, Mode, Prot, RegisterARM, RegisterARM64, Unicorn};

use super::arm32::r as reg_arm;
use super::disasm::{disassemble, Isa};

pub const CODE: u64 = 0x10_0000;
const CODE_STRIDE: u64 = 0x1000;
const CODE_SIZE: u64 = 0x1_0000;

pub use hubble_testkit::Rng;

/// What the hooks saw during one run.
#[derive(Default)]
struct Seen {
    executed: u64,
    addrs: Vec<u64>,
    counters: Vec<u32>,
    /// The next value a counter read returns. Unicorn derives CNTVCT from the host's wall clock,
    /// which may step backwards; the hook writes this instead, so every run is reproducible.
    next_counter: u64,
    barriers: u64,
    /// Written to memory when the first barrier of the slow path executes (models a control
    /// thread store that the trace point's inline load missed but the reload after the barrier
    /// sees).
    inject_at_barrier: Option<(u64, Vec<u8>)>,
}

/// One executed trace point.
#[derive(Clone, Debug)]
pub struct Run {
    /// Instructions executed (the terminator excluded).
    pub executed: u64,
    /// Counter values read (low 32 bits), one per record written.
    pub counters: Vec<u32>,
    /// Whether the out-of-line half ran.
    pub out_of_line: bool,
}

pub struct Layout {
    pub isa: Isa,
    pub thread: u64,
    pub ring: u64,
    pub slots: usize,
    pub offsets: [i32; 5],
    pub ptr: u64,
}

pub struct Machine {
    pub uc: Unicorn<'static, ()>,
    pub layout: Layout,
    blobs: Vec<(Kind, u64, Blob)>,
    seen: Rc<RefCell<Seen>>,
    /// Registers the trace point may clobber (codes), besides the flags.
    clobbered: Vec<u8>,
    pub method_reg: u8,
    pub temps: [u8; 3],
    pub rng: Rng,
}

/// Unicorn's id of `x<n>`.
pub fn reg_a64(n: u8) -> i32 {
    match n {
        0..=28 => RegisterARM64::X0 as i32 + i32::from(n),
        29 => RegisterARM64::X29 as i32,
        30 => RegisterARM64::X30 as i32,
        _ => panic!("x{n}"),
    }
}

impl Machine {
    /// An A64 machine: thread block and ring above 4 GiB, method in `method_reg` (ART: x0).
    pub fn a64(slots: usize, method_reg: u8, opts: Options) -> Machine {
        let uc = Unicorn::new(Arch::ARM64, Mode::ARM).expect("unicorn arm64");
        let layout = Layout {
            isa: Isa::A64,
            thread: 0x5_0000_0000,
            ring: 0x7_0000_1000,
            slots,
            offsets: thread_offsets::A64,
            ptr: 8,
        };
        let emit = |k, offsets: &[i32; 5]| emit_a64(k, method_reg, offsets, opts);
        Machine::build(uc, layout, emit, vec![16, 17], method_reg, [16, 17, 17])
    }

    /// A T32 machine: 32-bit addresses, r9 = thread, three temps.
    pub fn t32(slots: usize, method_reg: u8, temps: [u8; 3], opts: Options) -> Machine {
        let mut uc = Unicorn::new(Arch::ARM, Mode::THUMB).expect("unicorn arm");
        uc.ctl_set_cpu_model(ArmCpuModel::CORTEX_A15 as i32)
            .unwrap();
        let layout = Layout {
            isa: Isa::T32,
            thread: 0x4_0000,
            ring: 0x20_1000,
            slots,
            offsets: thread_offsets::ARM32,
            ptr: 4,
        };
        let emit = |k, offsets: &[i32; 5]| emit_t32(k, method_reg, temps, offsets, opts);
        Machine::build(uc, layout, emit, temps.to_vec(), method_reg, temps)
    }

    /// The machine with the three trace points `emit` gives for the layout's `Thread` offsets.
    fn build(
        mut uc: Unicorn<'static, ()>,
        layout: Layout,
        emit: impl Fn(Kind, &[i32; 5]) -> Blob,
        clobbered: Vec<u8>,
        method_reg: u8,
        temps: [u8; 3],
    ) -> Machine {
        let blobs =
            [Kind::Entry, Kind::EntryNarrow, Kind::Exit].map(|k| (k, emit(k, &layout.offsets)));
        uc.mem_map(CODE, CODE_SIZE, Prot::ALL).unwrap();
        uc.mem_map(layout.thread, 0x1000, Prot::READ | Prot::WRITE)
            .unwrap();
        let ring_bytes = (layout.slots as u64 * 8 + 0xfff) & !0xfff;
        uc.mem_map(
            layout.ring & !0xfff,
            ring_bytes + 0x1000,
            Prot::READ | Prot::WRITE,
        )
        .unwrap();
        let mut placed = Vec::new();
        let mut counter_after = HashSet::new();
        let mut barriers = HashSet::new();
        let mut terminators = HashSet::new();
        for (i, (kind, blob)) in blobs.into_iter().enumerate() {
            let base = CODE + i as u64 * CODE_STRIDE;
            uc.mem_write(base, &blob.bytes).unwrap();
            for insn in disassemble(layout.isa, &blob.bytes) {
                let at = base + insn.offset as u64;
                match insn.mnemonic.as_str() {
                    "mrs" | "mrrc" => {
                        counter_after.insert(at + insn.size as u64);
                    }
                    "dmb" => {
                        barriers.insert(at);
                    }
                    _ => {}
                }
            }
            terminators.insert(base + blob.terminator as u64);
            placed.push((kind, base, blob));
        }
        let seen = Rc::new(RefCell::new(Seen {
            next_counter: 0xfff0_0000,
            ..Seen::default()
        }));
        let hook_seen = Rc::clone(&seen);
        let isa = layout.isa;
        let counter_reg = match isa {
            Isa::A64 => reg_a64(17),
            Isa::T32 => reg_arm(temps[1]),
        };
        uc.add_code_hook(CODE, CODE + CODE_SIZE - 1, move |uc, addr, _size| {
            let mut seen = hook_seen.borrow_mut();
            if terminators.contains(&addr) {
                return;
            }
            seen.executed += 1;
            seen.addrs.push(addr);
            if counter_after.contains(&addr) {
                // Steps of 1..=4096 ticks, starting close enough to 2^32 that the low word wraps
                // within the first few thousand reads.
                let value = seen.next_counter;
                seen.next_counter += 1 + (value.wrapping_mul(0x9e37_79b9) >> 20) % 4096;
                uc.reg_write(counter_reg, value).unwrap();
                seen.counters.push(value as u32);
            }
            if barriers.contains(&addr) {
                seen.barriers += 1;
                if let Some((at, bytes)) = seen.inject_at_barrier.take() {
                    uc.mem_write(at, &bytes).unwrap();
                }
            }
        })
        .unwrap();
        let mut m = Machine {
            uc,
            layout,
            blobs: placed,
            seen,
            clobbered,
            method_reg,
            temps,
            rng: Rng::new(0x4855_4242_4c45),
        };
        let tr = m.layout.thread;
        match m.layout.isa {
            Isa::A64 => m.uc.reg_write(reg_a64(19), tr).unwrap(),
            Isa::T32 => m.uc.reg_write(reg_arm(9), tr).unwrap(),
        }
        m
    }

    /// Instructions of the OFF path (docs/hot-path.md): A64 LDR cursor + LDR limit + CBZ,
    /// with the width test's TST between them for an entry of unknown width; T32 LDRD + CBZ,
    /// or CMP + BEQ for the CBZ when the T32 cursor temp is not r0-r7.
    pub fn off_instructions(&self, kind: Kind) -> u64 {
        match (self.layout.isa, kind) {
            (Isa::A64, Kind::Entry) => 4,
            (Isa::A64, _) => 3,
            (Isa::T32, _) if self.temps[0] > 7 => 3,
            (Isa::T32, _) => 2,
        }
    }

    pub fn blob(&self, kind: Kind) -> &Blob {
        &self.blobs.iter().find(|b| b.0 == kind).unwrap().2
    }

    // ---- memory image -------------------------------------------------------------------

    pub fn field_addr(&self, f: usize) -> u64 {
        self.layout.thread + self.layout.offsets[f] as u64
    }
    pub fn read_field(&self, f: usize) -> u64 {
        let bytes = self
            .uc
            .mem_read_as_vec(self.field_addr(f), self.layout.ptr as usize)
            .unwrap();
        let mut buf = [0u8; 8];
        buf[..bytes.len()].copy_from_slice(&bytes);
        u64::from_le_bytes(buf)
    }
    pub fn write_field(&mut self, f: usize, value: u64) {
        let n = self.layout.ptr as usize;
        let addr = self.field_addr(f);
        self.uc.mem_write(addr, &value.to_le_bytes()[..n]).unwrap();
    }
    pub fn ring_end(&self) -> u64 {
        self.layout.ring + self.layout.slots as u64 * 8
    }
    /// The `limit` the control thread publishes while tracing (docs/architecture.md).
    pub fn real_limit(&self) -> u64 {
        match self.layout.isa {
            Isa::A64 => self.ring_end() - 8,
            Isa::T32 => self.ring_end(),
        }
    }
    pub fn ring(&self) -> Vec<u64> {
        let bytes = self
            .uc
            .mem_read_as_vec(self.layout.ring, self.layout.slots * 8)
            .unwrap();
        bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
    pub fn write_slot(&mut self, addr: u64, value: u64) {
        self.uc.mem_write(addr, &value.to_le_bytes()).unwrap();
    }

    // ---- the control thread's side ------------------------------------------------------

    /// start(t, pos): stop = 0; limit; begin/end; START record at pos (making room as the
    /// traced side would); cursor = pos + 8.
    pub fn control_start(&mut self, pos: u64, ts: u32) {
        let (begin, end, limit) = (self.layout.ring, self.ring_end(), self.real_limit());
        self.write_field(field::STOP, 0);
        self.write_field(field::LIMIT, limit);
        self.write_field(field::BEGIN, begin);
        self.write_field(field::END, end);
        let mut pos = pos;
        if pos >= limit {
            if pos != end {
                self.write_slot(pos, hubble_format::slot::encode_pad());
            }
            pos = begin;
        }
        self.write_slot(pos, hubble_format::slot::encode_start(ts));
        self.write_field(field::CURSOR, pos + 8);
    }

    /// request_stop(t): stop = 1, then the doorbell limit = 0.
    pub fn control_request_stop(&mut self) {
        self.write_field(field::STOP, 1);
        self.write_field(field::LIMIT, 0);
    }

    /// Arms a store the slow path's reload sees but its inline LDR/LDRD did not.
    pub fn inject_at_barrier(&mut self, f: usize, value: u64) {
        let bytes = value.to_le_bytes()[..self.layout.ptr as usize].to_vec();
        self.seen.borrow_mut().inject_at_barrier = Some((self.field_addr(f), bytes));
    }

    // ---- running ------------------------------------------------------------------------

    fn gprs(&self) -> Vec<u8> {
        match self.layout.isa {
            Isa::A64 => (0..=30).filter(|&r| r != 19).collect(),
            Isa::T32 => (0..=12).filter(|&r| r != 9).chain([14]).collect(),
        }
    }
    fn reg(&self, n: u8) -> i32 {
        match self.layout.isa {
            Isa::A64 => reg_a64(n),
            Isa::T32 => reg_arm(n),
        }
    }

    /// Runs one trace point with every general register randomized (and the method in its
    /// register), and checks afterwards that only the scratch registers changed.
    pub fn run(&mut self, kind: Kind, method: u64) -> Run {
        let (_, base, blob) = self.blobs.iter().find(|b| b.0 == kind).unwrap();
        let (base, terminator, ool) = (*base, blob.terminator as u64, blob.out_of_line as u64);
        let mut before = Vec::new();
        for r in self.gprs() {
            let mut v = self.rng.next();
            if self.layout.isa == Isa::T32 {
                v &= 0xffff_ffff;
            }
            if r == self.method_reg && kind != Kind::Exit {
                v = method;
            }
            self.uc.reg_write(self.reg(r), v).unwrap();
            before.push((r, v));
        }
        {
            let mut seen = self.seen.borrow_mut();
            seen.executed = 0;
            seen.addrs.clear();
            seen.counters.clear();
            seen.barriers = 0;
        }
        let (begin, until) = match self.layout.isa {
            Isa::A64 => (base, base + terminator),
            Isa::T32 => (base | 1, base + terminator),
        };
        self.uc.emu_start(begin, until, 0, 200).unwrap();
        let pc = self.uc.reg_read(match self.layout.isa {
            Isa::A64 => RegisterARM64::PC as i32,
            Isa::T32 => RegisterARM::PC as i32,
        });
        assert_eq!(
            pc.unwrap() & !1,
            base + terminator,
            "did not reach the end of the trace point"
        );
        for (r, v) in before {
            if self.clobbered.contains(&r) {
                continue;
            }
            let now = self.uc.reg_read(self.reg(r)).unwrap();
            assert_eq!(now, v, "register {r} not preserved by {kind:?}");
        }
        let seen = self.seen.borrow();
        assert!(seen.inject_at_barrier.is_none() || seen.barriers == 0);
        Run {
            executed: seen.executed,
            counters: seen.counters.clone(),
            out_of_line: seen.addrs.iter().any(|&a| a >= base + ool),
        }
    }
}
