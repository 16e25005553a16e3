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
//! the emulated thread's Hubble block and ring, then copies both back. In many-thread mode the
//! ring's mapping holds the pool, and `tp::Exit` may take a block through `pool_take.h`: the
//! copy's addresses the C++ reads (the thread's words, the pool header's `P_BLOCKS`) are moved
//! to the copy, and the ones it writes (the words, a sealed block's `close`) moved back.

use unicorn_engine::Unicorn;

use hubble_format::pool::{
    Geometry, H_CLOSE, POOL_HEADER_SLOTS, P_BLOCKS, P_BLOCK_BYTES, P_DELAY, P_MASK,
};

use crate::cpu::{uc, EmuError, Isa};
use crate::thread;

extern "C" {
    fn hubble_harness_unwind_exits64(block: *mut u64, frames: u32, now: u64, tid: u32);
    fn hubble_harness_unwind_exits32(block: *mut u32, frames: u32, now: u64, tid: u32);
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
/// and the ring (`ring_bytes` long; in many-thread mode, `begin` tagged, the pool at its start).
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
    let begin = uc(u.mem_read_as_vec(thread + offs[thread::BEGIN], ptr))?;
    let pool = if begin[0] & 1 != 0 {
        // As the C++ finds it: the pool's shape in its header, the tid in the `Thread`.
        let tid = uc(u.mem_read_as_vec(thread + thread::tid_offset(ptr as u32), 4))?;
        let header = uc(u.mem_read_as_vec(ring, POOL_HEADER_SLOTS * 8))?;
        let word = |i: usize| u64::from_le_bytes(header[i * 8..i * 8 + 8].try_into().unwrap());
        let blocks = word(P_MASK) as usize + 1;
        let geometry = Geometry {
            blocks,
            block_slots: word(P_BLOCK_BYTES) as usize / 8,
            active: blocks - word(P_DELAY) as usize,
        };
        if geometry.total_slots() * 8 > ring_bytes as usize {
            return Err(EmuError::Args(format!(
                "a pool larger than its mapping: {geometry:?}"
            )));
        }
        Some((geometry, u32::from_le_bytes(tid.try_into().unwrap())))
    } else {
        None
    };
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
    // (A thread in a pool holds no block, `SEALED` (below the copy), only before its first
    // record here: nothing stops it between blocks.)
    let last = if cursor > host_base {
        Some(cursor - 8 - host_base)
    } else if pool.is_some() {
        None
    } else {
        Some(ring_bytes - 8)
    };
    let now = last.map_or(0, |at| {
        let at = at as usize;
        u64::from_le_bytes(host.bytes()[at..at + 8].try_into().unwrap()) >> 32
    });
    // The pool header's block address, which `pool_take.h` reads, moves to the copy too; every
    // other header word is a count, and a seal's `close` is written, never read.
    let blocks_at = P_BLOCKS * 8;
    let before = pool.map(|_| host.bytes().to_vec());
    if pool.is_some() {
        let v = u64::from_le_bytes(host.bytes()[blocks_at..blocks_at + 8].try_into().unwrap());
        host.bytes()[blocks_at..blocks_at + 8]
            .copy_from_slice(&(host_base + (v - ring)).to_le_bytes());
    }
    let (geometry, tid) = pool.map_or((None, 0), |(g, tid)| (Some(g), tid));
    if ptr == 8 {
        // SAFETY: `block` is five words whose ring addresses point into `host`, which stays
        // mapped for the call; tp::Exit writes only slots in [begin, end), the pool's blocks
        // (addressed from the rebased `P_BLOCKS`) and the block words.
        unsafe { hubble_harness_unwind_exits64(block.as_mut_ptr(), frames, now, tid) };
    } else {
        let mut narrow: [u32; 5] = block.map(|v| v as u32);
        // SAFETY: as above; `host` lies below 2 GiB, so its addresses fit the 32-bit words.
        unsafe { hubble_harness_unwind_exits32(narrow.as_mut_ptr(), frames, now, tid) };
        block = narrow.map(u64::from);
    }
    if let (Some(before), Some(g)) = (before, geometry) {
        let bytes = host.bytes();
        bytes[blocks_at..blocks_at + 8].copy_from_slice(&before[blocks_at..blocks_at + 8]);
        // A seal's `close` is an address in the copy: moved back (only the words written).
        for i in 0..g.blocks {
            let at = (g.block_index(i) + H_CLOSE) * 8;
            if bytes[at..at + 8] != before[at..at + 8] {
                let v = u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
                bytes[at..at + 8].copy_from_slice(&(ring + (v - host_base)).to_le_bytes());
            }
        }
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
