//! Trace memory: an anonymous private mapping of 8-byte slots. The kernel hands out zero pages
//! as they are first written, so a ring or a pool costs only what the traced threads have
//! touched (a 64 MiB pool mapped at launch is not 64 MiB committed).

use std::io;

use crate::block::{Slots, SLOT};
use crate::sync::AtomicU64;

/// `len` zeroed slots, owned.
pub struct Mapping {
    #[cfg(not(loom))]
    ptr: std::ptr::NonNull<AtomicU64>,
    #[cfg(loom)]
    cells: Vec<AtomicU64>,
    len: usize,
}

// SAFETY: the mapping is owned by the Mapping and only accessed through atomics.
#[cfg(not(loom))]
unsafe impl Send for Mapping {}
// SAFETY: as above: every access is an atomic load or store.
#[cfg(not(loom))]
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps `len` zero slots (at least one); nothing is committed until written.
    #[cfg(not(loom))]
    pub fn new(len: usize) -> io::Result<Mapping> {
        let bytes = len
            .checked_mul(SLOT)
            .filter(|b| *b > 0)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "bad mapping size"))?;
        // SAFETY: anonymous private mapping, no file and no fixed address: it cannot alias
        // anything; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = std::ptr::NonNull::new(p.cast::<AtomicU64>()).expect("mmap never returns null");
        Ok(Mapping { ptr, len })
    }

    /// `len` slots in loom's model (ordinary memory).
    #[cfg(loom)]
    pub fn new(len: usize) -> io::Result<Mapping> {
        Ok(Mapping {
            cells: (0..len).map(|_| AtomicU64::new(0)).collect(),
            len,
        })
    }

    /// The slots, with the address the threads' blocks use for the first one.
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

    /// Zeroes every slot and gives the memory back.
    pub fn clear(&self) {
        // MADV_DONTNEED on a private anonymous mapping gives zero pages back and frees the memory.
        // SAFETY: the range is exactly our mapping; no reference into it is held across this
        // call by the caller (nothing writes it meanwhile).
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

    /// Pages of the mapping the process has committed (`mincore`); `None` where it cannot tell.
    #[cfg(not(loom))]
    pub fn resident_pages(&self) -> Option<usize> {
        // SAFETY: sysconf has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).ok()?;
        let mut pages = vec![0u8; (self.bytes() + page - 1) / page];
        // SAFETY: mincore only reports on our own mapping; `pages` holds one byte per page.
        let r = unsafe {
            libc::mincore(
                self.ptr.as_ptr().cast(),
                self.bytes(),
                pages.as_mut_ptr().cast(),
            )
        };
        (r == 0).then(|| pages.iter().filter(|p| **p & 1 != 0).count())
    }
}

#[cfg(not(loom))]
impl Drop for Mapping {
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

    /// A default-budget pool mapped at launch commits its header page only; the blocks' pages
    /// come as threads write them (the pool used to be built from a zero-filled `Box`, all
    /// 64 MiB committed on the main thread inside `bindApplication`).
    #[test]
    fn a_default_budget_pool_commits_only_what_is_written() {
        let g = crate::props::pool_geometry(crate::props::DEFAULT_BUDGET_MB << 20);
        let pool = crate::pool::Pool::new(hubble_format::slot::Mode::Bits64, g).unwrap();
        let mapped = pool.memory().bytes() / 4096;
        let resident = pool.memory().resident_pages().unwrap();
        assert!(mapped >= 16384, "{mapped} pages mapped");
        assert!(
            resident <= 1,
            "{resident} of {mapped} pages committed by Pool::new"
        );
        // A thread's first block: one more page (the block's first), not the budget.
        let block = pool.memory().slots().slots.len() / 2;
        pool.memory().slots().slots[block].store(1, Ordering::Relaxed);
        assert_eq!(pool.memory().resident_pages().unwrap(), resident + 1);
    }

    /// Cleared slots read zero and the pages go back to the kernel.
    #[test]
    fn clear_gives_the_pages_back() {
        let m = Mapping::new(1 << 16).unwrap();
        for s in m.slots().slots.iter().step_by(512) {
            s.store(7, Ordering::Relaxed);
        }
        assert_eq!(m.resident_pages().unwrap(), 128);
        m.clear();
        assert_eq!(m.resident_pages().unwrap(), 0);
        assert!(m
            .slots()
            .slots
            .iter()
            .all(|s| s.load(Ordering::Relaxed) == 0));
    }
}
