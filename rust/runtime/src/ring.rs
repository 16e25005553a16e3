//! Rings: a power of two of 8-byte slots in their own mapping ([`crate::memory`]).

use std::io;

use crate::block::{Slots, SLOT};
use crate::memory::Mapping;

/// Default ring size per traced thread (`debug.hubble.ring_mb`).
pub const DEFAULT_RING_BYTES: usize = 32 << 20;
/// Smallest ring accepted: a page, the unit the mapping commits.
#[cfg(not(loom))]
pub const MIN_RING_BYTES: usize = 4096;
/// loom's models wrap rings of a few slots, which it keeps in ordinary memory.
#[cfg(loom)]
pub const MIN_RING_BYTES: usize = 2 * SLOT;
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
    memory: Mapping,
}

impl Ring {
    /// Maps a zero-filled ring of `bytes` bytes (a power of two, at least [`MIN_RING_BYTES`]).
    pub fn new(bytes: usize) -> io::Result<Ring> {
        if !bytes.is_power_of_two() || bytes < MIN_RING_BYTES {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("ring size {bytes} is not a power of two of at least {MIN_RING_BYTES}"),
            ));
        }
        Ok(Ring {
            memory: Mapping::new(bytes / SLOT)?,
        })
    }

    /// The slots, with the address the block uses for the first one.
    pub fn slots(&self) -> Slots<'_> {
        self.memory.slots()
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.memory.bytes()
    }

    /// Zeroes the ring (a reclaimed ring must not show an earlier thread's records).
    pub fn clear(&self) {
        self.memory.clear();
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
