//! The emulator: host memory mapped into unicorn at its own addresses, and the machine that
//! runs the guest driver loop over a range of ops.

use anyhow::{anyhow, bail, ensure, Result};
use std::sync::atomic::AtomicU64;
use std::time::Instant;
use unicorn_engine::{Arch, Prot, RegisterARM64, TlbType, Unicorn};

use crate::guest::{self, label};
use crate::workload;

/// An anonymous host mapping, page aligned (what `mem_map_ptr` needs).
pub struct HostMap {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: plain memory; every cross-thread access goes through atomics.
unsafe impl Send for HostMap {}
// SAFETY: as above.
unsafe impl Sync for HostMap {}

impl HostMap {
    /// Maps `len` bytes (rounded up to pages), zero-filled.
    pub fn new(len: usize) -> Result<HostMap> {
        let len = (len.max(1) + 0xfff) & !0xfff;
        // SAFETY: anonymous private mapping at an address of the kernel's choice.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            bail!("mmap: {}", std::io::Error::last_os_error());
        }
        Ok(HostMap { ptr: p.cast(), len })
    }
    /// Address.
    pub fn addr(&self) -> u64 {
        self.ptr as u64
    }
    /// Length.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether it is empty (never).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The bytes.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes and owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
    /// A u64 word at a byte offset, as an atomic.
    pub fn word(&self, offset: usize) -> &AtomicU64 {
        assert!(offset % 8 == 0 && offset + 8 <= self.len);
        // SAFETY: aligned, inside the mapping, lives as long as self.
        unsafe { &*(self.ptr.add(offset) as *const AtomicU64) }
    }
}

impl Drop for HostMap {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping made in `new`.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

pub(crate) fn map_into(
    uc: &mut Unicorn<'static, ()>,
    addr: u64,
    len: usize,
    prot: Prot,
) -> Result<()> {
    // SAFETY: [addr, addr+len) is a live host mapping that outlives the engine (the caller
    // keeps it, or it is the runtime's ring, kept until the control plane is dropped after the
    // emulator thread has ended).
    unsafe { uc.mem_map_ptr(addr, len as u64, prot, addr as *mut libc::c_void) }
        .map_err(|e| anyhow!("unicorn mem_map_ptr {addr:#x}+{len:#x}: {e:?}"))
}

pub(crate) fn new_engine() -> Result<Unicorn<'static, ()>> {
    let mut uc = Unicorn::new(Arch::ARM64, unicorn_engine::Mode::ARM)
        .map_err(|e| anyhow!("unicorn arm64: {e:?}"))?;
    // Host addresses (~2^47) are above the 44-bit physical range unicorn's CPUs accept with
    // the MMU off: translate virtual = physical ourselves (no hook = identity).
    uc.ctl_set_tlb_type(TlbType::VIRTUAL)
        .map_err(|e| anyhow!("unicorn virtual TLB: {e:?}"))?;
    Ok(uc)
}

pub(crate) fn xreg(n: u64) -> i32 {
    RegisterARM64::X0 as i32 + n as i32
}

pub(crate) struct Machine {
    pub(crate) uc: Unicorn<'static, ()>,
    pub(crate) code: u64,
    pub(crate) ops_base: u64,
}

impl Machine {
    /// Maps code, Thread image, ops and progress (and the ring if given) at their host
    /// addresses, and points the driver's registers at them.
    pub(crate) fn new(
        code_map: &mut HostMap,
        thread: &HostMap,
        ops: &HostMap,
        progress: &HostMap,
        ring: Option<(u64, usize)>,
    ) -> Result<Machine> {
        let code = guest::code();
        code_map.bytes_mut()[..code.bytes.len()].copy_from_slice(&code.bytes);
        let mut uc = new_engine()?;
        map_into(&mut uc, code_map.addr(), code_map.len(), Prot::ALL)?;
        map_into(
            &mut uc,
            thread.addr(),
            thread.len(),
            Prot::READ | Prot::WRITE,
        )?;
        map_into(&mut uc, ops.addr(), ops.len(), Prot::READ)?;
        map_into(
            &mut uc,
            progress.addr(),
            progress.len(),
            Prot::READ | Prot::WRITE,
        )?;
        if let Some((addr, len)) = ring {
            map_into(&mut uc, addr, len, Prot::READ | Prot::WRITE)?;
        }
        let set = |uc: &mut Unicorn<'static, ()>, r: u64, v: u64| {
            uc.reg_write(xreg(r), v)
                .map_err(|e| anyhow!("reg_write: {e:?}"))
        };
        set(&mut uc, 19, thread.addr())?;
        set(&mut uc, 22, progress.addr())?;
        Ok(Machine {
            uc,
            code: code_map.addr(),
            ops_base: ops.addr(),
        })
    }

    /// Runs ops `from..to` (the driver loop until x20 reaches the chunk end).
    pub(crate) fn run(&mut self, from: usize, to: usize) -> Result<()> {
        let uc = &mut self.uc;
        uc.reg_write(xreg(20), self.ops_base + 8 * from as u64)
            .map_err(|e| anyhow!("{e:?}"))?;
        uc.reg_write(xreg(21), self.ops_base + 8 * to as u64)
            .map_err(|e| anyhow!("{e:?}"))?;
        let r = uc.emu_start(self.code + label::LOOP, self.code + label::DONE, 0, 0);
        let pc = uc.reg_read(RegisterARM64::PC as i32).unwrap_or(0);
        let x20 = uc.reg_read(xreg(20)).unwrap_or(0);
        if let Err(e) = r {
            let at = (x20.saturating_sub(self.ops_base) / 8).saturating_sub(1);
            if pc == self.code + label::BAD {
                bail!("op {at}: the trace point did not preserve x0 (brk #1)");
            }
            bail!("unicorn stopped at pc {pc:#x} (op {at}): {e:?}");
        }
        ensure!(
            pc == self.code + label::DONE && x20 == self.ops_base + 8 * to as u64,
            "driver loop ended at pc {pc:#x}, x20 {x20:#x}"
        );
        Ok(())
    }
}

/// Work-loop iterations per µs of emulated time on this machine: the fastest of five timed
/// 2M-iteration loops (as `native::calibrate`). The fastest, because the stream's work ops are
/// sized with it: a figure measured while other processes held the cores made every op shorter
/// once they let go, and the janky frame (1 s nominal) ended and the thread went idle before the
/// jank trigger's stop reached it (CI, 2026-11-28: calibrated at 97 iterations/µs, the whole
/// stream ran in 754 ms). Too fast a figure only makes the frames longer than nominal.
pub fn calibrate() -> Result<u64> {
    let mut code = HostMap::new(guest::CODE_BYTES)?;
    let thread = HostMap::new(0x4000)?;
    let mut ops = HostMap::new(16)?;
    let progress = HostMap::new(8)?;
    let n = 2_000_000u64;
    ops.bytes_mut()[..8].copy_from_slice(&workload::work_op(n).to_le_bytes());
    let mut m = Machine::new(&mut code, &thread, &ops, &progress, None)?;
    m.run(0, 1)?; // translate once
    let mut best = 1;
    for _ in 0..5 {
        let t0 = Instant::now();
        m.run(0, 1)?;
        best = best.max(n / t0.elapsed().as_micros().max(1) as u64);
    }
    Ok(best)
}
