//! The exits of the compiled frames an exception pops, written as the runtime writes them.
//!
//! On a device, a compiled frame that an exception leaves never runs its own exit trace point:
//! `QuickExceptionHandler`'s `CatchBlockStackVisitor` visits the frames innermost first and,
//! with patch 0021, calls `hubble::TraceUnwoundQuickFrame` for each frame it unwinds, which
//! writes an exit through `tp::Exit` (runtime/hubble/trace_hooks.h, trace_point.h) when the frame
//! wrote its entry (a compiled, non-native, non-inlined frame on an ISA with an emitter). The
//! harness has no catch handlers in compiled code yet (docs/compiler-harness.md), so every
//! frame between the throw and the harness's call is unwound: this writes their exits with that
//! same `tp::Exit`, compiled from the unchanged header (cpp/unwind_exit.cc), on a host copy of
//! the emulated thread's Hubble block and ring, then copies both back.

use unicorn_engine::Unicorn;

use crate::emu::{uc, EmuError, Isa};
use crate::thread;

extern "C" {
    fn hubble_harness_unwind_exits64(block: *mut u64, frames: u32, now: u64);
    fn hubble_harness_unwind_exits32(block: *mut u32, frames: u32, now: u64);
}

/// A private anonymous mapping below 2 GiB (so that 32-bit block words can address it).
struct LowMap {
    ptr: *mut u8,
    len: usize,
}

impl LowMap {
    fn new(len: usize) -> Result<LowMap, EmuError> {
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_32BIT,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(EmuError::Unicorn(
                "mmap of the unwinder's ring copy failed".into(),
            ));
        }
        Ok(LowMap { ptr: p.cast(), len })
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is `len` bytes, readable and writable, owned by self.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for LowMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping `new` made.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Writes `frames` exits into the emulated ring, as `TraceUnwoundQuickFrame` does for each
/// unwound compiled frame. `thread` and `ring` are the emulated addresses of the `Thread` image
/// and the ring (`ring_bytes` long).
pub(crate) fn write_exits(
    u: &mut Unicorn<'_, ()>,
    isa: Isa,
    thread: u64,
    ring: u64,
    ring_bytes: u64,
    frames: u32,
) -> Result<(), EmuError> {
    if frames == 0 {
        return Ok(());
    }
    let ptr = if isa == Isa::Arm64 { 8usize } else { 4 };
    let offs = thread::hubble_offsets(ptr as u32);
    // Many-thread mode (`begin` = the pool | 1): the copy below rebases a ring, and the C++
    // trace point would take pool blocks at emulated addresses. Not modelled: say so.
    let begin = uc(u.mem_read_as_vec(thread + offs[thread::BEGIN], ptr))?;
    if begin[0] & 1 != 0 {
        return Err(EmuError::Args(
            "an exception unwound compiled frames in many-thread mode, which the harness's \
             unwinder does not model"
                .into(),
        ));
    }
    let mut host = LowMap::new(ring_bytes as usize)?;
    let emulated = uc(u.mem_read_as_vec(ring, ring_bytes as usize))?;
    host.bytes().copy_from_slice(&emulated);
    let host_base = host.ptr as u64;
    let inside = |v: u64, base: u64| v >= base && v <= base + ring_bytes;
    let mut block = [0u64; 5];
    for (k, off) in offs.iter().enumerate() {
        let raw = uc(u.mem_read_as_vec(thread + off, ptr))?;
        let mut b = [0u8; 8];
        b[..ptr].copy_from_slice(&raw);
        let v = u64::from_le_bytes(b);
        // Ring addresses move to the copy; 0 (off, doorbell) and 1 (stop requested) stay.
        block[k] = if inside(v, ring) {
            host_base + (v - ring)
        } else {
            v
        };
    }
    // The unwinder runs right after the throw: its exits carry the timestamp of the last record
    // the emulated code wrote (the slot before the cursor).
    let cursor = block[thread::CURSOR];
    let last = if cursor > host_base {
        cursor - 8
    } else {
        host_base + ring_bytes - 8
    };
    let at = (last - host_base) as usize;
    let now = u64::from_le_bytes(host.bytes()[at..at + 8].try_into().unwrap()) >> 32;
    if ptr == 8 {
        // SAFETY: `block` is five words whose ring addresses point into `host`, which stays
        // mapped for the call; tp::Exit writes only slots in [begin, end) and the block.
        unsafe { hubble_harness_unwind_exits64(block.as_mut_ptr(), frames, now) };
    } else {
        let mut narrow: [u32; 5] = block.map(|v| v as u32);
        // SAFETY: as above; `host` lies below 2 GiB, so its addresses fit the 32-bit words.
        unsafe { hubble_harness_unwind_exits32(narrow.as_mut_ptr(), frames, now) };
        block = narrow.map(u64::from);
    }
    uc(u.mem_write(ring, host.bytes()))?;
    for (k, off) in offs.iter().enumerate() {
        let v = block[k];
        let back = if inside(v, host_base) {
            ring + (v - host_base)
        } else {
            v
        };
        uc(u.mem_write(thread + off, &back.to_le_bytes()[..ptr]))?;
    }
    Ok(())
}
