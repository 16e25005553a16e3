//! Ring memory: an anonymous private mapping of 8-byte slots, a power of two in size.

use std::io;

use crate::block::{Slots, SLOT};
use crate::sync::AtomicU64;

/// Default ring size per traced thread (`debug.hubble.ring_mb`).
pub const DEFAULT_RING_BYTES: usize = 32 << 20;
/// Smallest ring accepted (a page).
pub const MIN_RING_BYTES: usize = 4096;
/// Largest ring accepted (1 GiB): anything larger is a configuration mistake.
pub const MAX_RING_BYTES: usize = 1 << 30;

/// Rounds a requested size up to a power of two within the accepted range.
pub fn ring_size(requested: usize) -> usize {
    requested
        .clamp(MIN_RING_BYTES, MAX_RING_BYTES)
        .next_power_of_two()
}

/// One ring. The traced thread writes it through the addresses in its block; the control thread
/// reads it through [`Ring::slots`] only after the end position has been acquired.
pub struct Ring {
    #[cfg(not(loom))]
    ptr: std::ptr::NonNull<AtomicU64>,
    #[cfg(loom)]
    cells: Vec<AtomicU64>,
    len: usize,
}

// SAFETY: the mapping is owned by the Ring and only accessed through atomics.
#[cfg(not(loom))]
unsafe impl Send for Ring {}
// SAFETY: as above: every access is an atomic load or store.
#[cfg(not(loom))]
unsafe impl Sync for Ring {}

impl Ring {
    /// Maps a zero-filled ring of `bytes` bytes (a power of two, at least a page).
    #[cfg(not(loom))]
    pub fn new(bytes: usize) -> io::Result<Ring> {
        if !bytes.is_power_of_two() || bytes < MIN_RING_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("ring size {bytes} is not a power of two of at least {MIN_RING_BYTES}"),
            ));
        }
        // SAFETY: anonymous private mapping, no file and no fixed address: it cannot alias
        // anything; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = std::ptr::NonNull::new(p.cast::<AtomicU64>()).expect("mmap never returns null");
        Ok(Ring {
            ptr,
            len: bytes / SLOT,
        })
    }

    /// A ring of `bytes` bytes in loom's model (ordinary memory).
    #[cfg(loom)]
    pub fn new(bytes: usize) -> io::Result<Ring> {
        let len = bytes / SLOT;
        Ok(Ring {
            cells: (0..len).map(|_| AtomicU64::new(0)).collect(),
            len,
        })
    }

    /// The slots, with the address the block uses for the first one.
    pub fn slots(&self) -> Slots<'_> {
        #[cfg(not(loom))]
        {
            // SAFETY: the mapping holds `len` zero-initialized u64s, AtomicU64 has the layout of
            // u64, and it lives as long as `self`.
            let slots = unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) };
            Slots {
                base: self.ptr.as_ptr() as usize,
                slots,
            }
        }
        #[cfg(loom)]
        {
            // Loom's atomics have no fixed layout: give the model a fake, aligned base address.
            Slots {
                base: 0x1000,
                slots: &self.cells,
            }
        }
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * SLOT
    }

    /// Zeroes the ring (a reclaimed ring must not show an earlier thread's records).
    pub fn clear(&self) {
        // MADV_DONTNEED on a private anonymous mapping gives zero pages back and frees the memory.
        // SAFETY: the range is exactly our mapping; no reference into it is held across this
        // call by the caller (the ring is not attached to any thread).
        #[cfg(not(loom))]
        let zeroed = unsafe {
            libc::madvise(self.ptr.as_ptr().cast(), self.bytes(), libc::MADV_DONTNEED) == 0
        };
        // Loom's model is ordinary memory.
        #[cfg(loom)]
        let zeroed = false;
        if !zeroed {
            for s in self.slots().slots {
                s.store(0, crate::sync::Ordering::Relaxed);
            }
        }
    }
}

#[cfg(not(loom))]
impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `new`; no slice into it outlives `self`.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.bytes());
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::Ordering;

    /// The documented default (`docs/architecture.md`, `debug.hubble.ring_mb`): 32 MiB.
    #[test]
    fn the_default_ring_is_32_mib() {
        assert_eq!(DEFAULT_RING_BYTES, 32 << 20);
        assert_eq!(ring_size(DEFAULT_RING_BYTES), DEFAULT_RING_BYTES);
    }

    /// A cleared ring reads zero everywhere, and a dropped one is unmapped.
    #[test]
    fn clear_zeroes_and_drop_unmaps() {
        let ring = Ring::new(4 * MIN_RING_BYTES).unwrap();
        for (i, s) in ring.slots().slots.iter().enumerate() {
            s.store(i as u64 + 1, Ordering::Relaxed);
        }
        ring.clear();
        assert!(ring
            .slots()
            .slots
            .iter()
            .all(|s| s.load(Ordering::Relaxed) == 0));
        let (addr, bytes) = (ring.slots().base, ring.bytes());
        drop(ring);
        let mut pages = vec![0u8; bytes / 4096];
        // SAFETY: mincore only reports on the range; `pages` holds one byte per page.
        let r = unsafe { libc::mincore(addr as *mut libc::c_void, bytes, pages.as_mut_ptr()) };
        let e = std::io::Error::last_os_error();
        assert_eq!(
            (r, e.raw_os_error()),
            (-1, Some(libc::ENOMEM)),
            "still mapped"
        );
    }
}
