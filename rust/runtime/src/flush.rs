//! Flush: copy the valid window out of a stopped ring, find its distinct method pointers, and
//! write the trace file (temporary name, 0600, fsync, rename) under the retention caps.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::io;
use std::path::{Path, PathBuf};

use hubble_format::ring::{walk_back, DecodeError, RingView};
use hubble_format::{Mode, Record};

use crate::block::Slots;

/// A multiplicative hasher for pointers: the flush hashes millions of them and SipHash's
/// DoS resistance buys nothing here.
#[derive(Default, Clone, Copy)]
pub struct PointerHasher(u64);

impl Hasher for PointerHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 =
                (self.0.rotate_left(5) ^ u64::from(*b)).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (v ^ (v >> 29)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A set of pointers with [`PointerHasher`].
pub type PointerSet = HashSet<u64, BuildHasherDefault<PointerHasher>>;

/// Copies the window of a stopped ring (end position `end_offset` bytes into it) into `out`,
/// oldest slot first, and returns how many slots the window has. The caller must have acquired
/// the end position (the traced thread writes nothing until the ring is restarted).
pub fn copy_window(
    ring: Slots<'_>,
    end_offset: usize,
    mode: Mode,
    out: &mut Vec<u64>,
) -> Result<usize, DecodeError> {
    out.clear();
    let slots = read_slots(ring);
    let slots: &[u64] = &slots;
    let view = RingView::new(slots, end_offset as u64, None)?;
    let summary = walk_back(&view, mode, |_| {})?;
    let keep = summary.slots_used - usize::from(summary.dropped_half_record);
    let (older, newer) = view.pieces();
    let total = older.len() + newer.len();
    let skip = total - keep;
    out.reserve(keep);
    if skip < older.len() {
        out.extend_from_slice(&older[skip..]);
        out.extend_from_slice(newer);
    } else {
        out.extend_from_slice(&newer[skip - older.len()..]);
    }
    Ok(keep)
}

/// The ring's slots as plain integers: borrowed in place (no copy) in the real runtime; read
/// one by one under loom, whose atomics have no u64 layout.
fn read_slots(ring: Slots<'_>) -> std::borrow::Cow<'_, [u64]> {
    #[cfg(not(loom))]
    {
        // SAFETY: AtomicU64 has u64's layout; the traced thread is stopped (its end position
        // was acquired) and only this thread touches the ring until it restarts it, so nothing
        // writes the memory while this shared view exists.
        let slots = unsafe {
            std::slice::from_raw_parts(ring.slots.as_ptr().cast::<u64>(), ring.slots.len())
        };
        std::borrow::Cow::Borrowed(slots)
    }
    #[cfg(loom)]
    {
        std::borrow::Cow::Owned(
            ring.slots
                .iter()
                .map(|s| s.load(crate::sync::Ordering::Relaxed))
                .collect(),
        )
    }
}

/// The distinct method pointers of a window: an open-addressing set of nonzero pointers with
/// linear probing. A window repeats its methods millions of times, so nearly every insert is a
/// hit; here a hit is one multiply, one load and one compare, where a `HashSet` insert costs
/// several times that and a direct-mapped filter in front of one misses whenever more methods
/// are hot than it has entries.
#[derive(Debug)]
pub struct DistinctPointers {
    table: Vec<u64>,
    len: usize,
    shift: u32,
}

impl Default for DistinctPointers {
    fn default() -> Self {
        // 128 KiB: a window's hot methods fit without regrowing; more methods double it.
        Self::with_bits(14)
    }
}

impl DistinctPointers {
    fn with_bits(bits: u32) -> DistinctPointers {
        DistinctPointers {
            table: vec![0; 1 << bits],
            len: 0,
            shift: 64 - bits,
        }
    }

    #[inline]
    fn home(&self, p: u64) -> usize {
        (p.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> self.shift) as usize
    }

    /// Adds a pointer (`p` ≠ 0: zero marks a free entry; no method pointer is below 4).
    #[inline]
    pub fn insert(&mut self, p: u64) {
        debug_assert_ne!(p, 0);
        let mask = self.table.len() - 1;
        let mut i = self.home(p);
        loop {
            let v = self.table[i];
            if v == p {
                return;
            }
            if v == 0 {
                self.table[i] = p;
                self.len += 1;
                // At most half full: probes stay short.
                if self.len * 2 > self.table.len() {
                    self.grow();
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    #[cold]
    fn grow(&mut self) {
        let bits = 64 - self.shift + 1;
        let old = std::mem::replace(self, Self::with_bits(bits));
        for p in old.iter() {
            self.insert(p);
        }
    }

    /// Number of distinct pointers.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The pointers, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.table.iter().copied().filter(|&p| p != 0)
    }
}

/// The distinct method pointers of a linear window.
pub fn distinct_methods(
    window: &[u64],
    mode: Mode,
    out: &mut DistinctPointers,
) -> Result<(), DecodeError> {
    walk_back(&RingView::linear(window), mode, |r| {
        if let Record::Entry { method, .. } = r {
            out.insert(method);
        }
    })?;
    Ok(())
}

/// A file being written for [`Storage::create_atomic`]: pieces at any offsets, from any thread,
/// then one commit. Dropped without a commit, nothing appears under its name.
pub trait PendingFile: Send + Sync {
    /// Writes all of `bytes` at `offset`.
    fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()>;
    /// Makes the file durable under its name (for the file system: fsync, rename, directory
    /// fsync).
    fn commit(self: Box<Self>) -> io::Result<()>;
    /// Asks for the bytes written so far to start going to disk now, so that the commit's
    /// fsync has less left to wait for. A hint: the default does nothing.
    fn start_writeback(&self) {}
}

/// Where trace files go. The file system, or a fault injector in tests.
pub trait Storage: Send + Sync {
    /// Starts writing `path` atomically (never a partial file under `path`).
    fn create_atomic(&self, path: &Path) -> io::Result<Box<dyn PendingFile + '_>>;
    /// Creates the trace directory if needed.
    fn ensure_dir(&self, dir: &Path) -> io::Result<()>;
    /// Trace files in `dir`: (name, bytes).
    fn list(&self, dir: &Path) -> io::Result<Vec<(String, u64)>>;
    /// Removes a file.
    fn remove(&self, path: &Path) -> io::Result<()>;
}

/// A storage shared with whoever else holds it (a test reading what the control plane wrote).
impl<S: Storage + ?Sized> Storage for std::sync::Arc<S> {
    fn create_atomic(&self, path: &Path) -> io::Result<Box<dyn PendingFile + '_>> {
        (**self).create_atomic(path)
    }
    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        (**self).ensure_dir(dir)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<(String, u64)>> {
        (**self).list(dir)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        (**self).remove(path)
    }
}

impl PendingFile for hubble_format::file::AtomicFile {
    fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        hubble_format::file::AtomicFile::write_at(self, offset, bytes)
    }
    fn commit(self: Box<Self>) -> io::Result<()> {
        hubble_format::file::AtomicFile::commit(*self)
    }
    fn start_writeback(&self) {
        use std::os::fd::AsRawFd;
        // SAFETY: sync_file_range only reads the descriptor, which the file keeps open; offset
        // 0 and length 0 mean "the whole file". The result is ignored: this is only a hint.
        unsafe {
            sync_file_range(self.file().as_raw_fd(), 0, 0, SYNC_FILE_RANGE_WRITE);
        }
    }
}

#[cfg(target_os = "linux")]
use libc::{sync_file_range, SYNC_FILE_RANGE_WRITE};

// The libc crate has no binding for Android; bionic has the function since API 26
// (<fcntl.h>), and the constant is the kernel's.
#[cfg(target_os = "android")]
extern "C" {
    fn sync_file_range(fd: libc::c_int, offset: i64, len: i64, flags: libc::c_uint) -> libc::c_int;
}
#[cfg(target_os = "android")]
const SYNC_FILE_RANGE_WRITE: libc::c_uint = 2;

/// Elsewhere there is no early writeback: the commit's fsync does it all.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
unsafe fn sync_file_range(_fd: i32, _offset: i64, _len: i64, _flags: u32) -> i32 {
    0
}
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const SYNC_FILE_RANGE_WRITE: u32 = 0;

/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct FsStorage;

/// Makes one directory with `mode`; one that exists already is fine.
fn make_dir(dir: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match std::fs::DirBuilder::new().mode(mode).create(dir) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        r => r,
    }
}

impl Storage for FsStorage {
    fn create_atomic(&self, path: &Path) -> io::Result<Box<dyn PendingFile + '_>> {
        Ok(Box::new(hubble_format::file::AtomicFile::create(path)?))
    }
    fn ensure_dir(&self, dir: &Path) -> io::Result<()> {
        // `<data dir>/files/hubble`: the app's `files/` exists only once the app has asked for
        // it (ContextImpl.getFilesDir makes it, 0771), so it is made as ContextImpl makes it;
        // `hubble/` is ours alone (0700). A missing app data directory is an error, not
        // something to invent.
        if let Some(files) = dir.parent() {
            if files.parent().is_some_and(Path::is_dir) {
                make_dir(files, 0o771)?;
            }
        }
        make_dir(dir, 0o700)
    }
    fn list(&self, dir: &Path) -> io::Result<Vec<(String, u64)>> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if let Ok(md) = entry.metadata() {
                if md.is_file() {
                    out.push((name, md.len()));
                }
            }
        }
        Ok(out)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }
}

/// Keeps only characters that are safe in a file name.
pub fn sanitize_reason(reason: &str) -> String {
    let s: String = reason
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() || s.starts_with('.') {
        format!("r{s}")
    } else {
        s
    }
}

/// `<unix_ms>-<pid>-<tid>-<reason>.hubble` in `dir`.
pub fn trace_path(dir: &Path, unix_ms: u64, pid: u32, tid: u32, reason: &str) -> PathBuf {
    dir.join(format!(
        "{unix_ms:013}-{pid}-{tid}-{}.hubble",
        sanitize_reason(reason)
    ))
}

/// Removes the oldest trace files until at most `max_files` files and `max_bytes` bytes are
/// left, and temporary files of flushes that died (their process is gone). Returns removals.
pub fn apply_retention(
    storage: &dyn Storage,
    dir: &Path,
    max_files: usize,
    max_bytes: u64,
) -> io::Result<usize> {
    let mut files: Vec<(String, u64)> = Vec::new();
    let mut removed = 0;
    for (name, len) in storage.list(dir)? {
        if name.ends_with(".hubble.tmp") && name.starts_with('.') {
            if tmp_owner_dead(&name) && storage.remove(&dir.join(&name)).is_ok() {
                removed += 1;
            }
        } else if name.ends_with(".hubble") {
            files.push((name, len));
        }
    }
    // Names start with a zero-padded Unix time in ms: lexical order is age order.
    files.sort();
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    let mut count = files.len();
    for (name, len) in &files {
        if count <= max_files && total <= max_bytes {
            break;
        }
        storage.remove(&dir.join(name))?;
        count -= 1;
        total -= len;
        removed += 1;
    }
    Ok(removed)
}

/// Whether the process that owns a `.<ms>-<pid>-<tid>-<reason>.hubble.tmp` file is gone.
fn tmp_owner_dead(name: &str) -> bool {
    let pid = name
        .trim_start_matches('.')
        .split('-')
        .nth(1)
        .and_then(|p| p.parse::<i32>().ok());
    match pid {
        // Only a process: kill(0, …) and kill(-n, …) would ask about process groups.
        Some(pid) if pid > 0 => {
            // SAFETY: kill with signal 0 only checks for existence; no signal is sent.
            let r = unsafe { libc::kill(pid, 0) };
            r != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// A reason keeps letters, digits, `_`, `.` and `-`, up to 64 characters; anything else
    /// becomes `_`; a name that would be empty or hidden gets an `r` in front.
    #[test]
    fn reasons_keep_exactly_the_safe_characters() {
        assert_eq!(sanitize_reason("jank"), "jank");
        assert_eq!(sanitize_reason("a.b-c_D9"), "a.b-c_D9");
        assert_eq!(sanitize_reason("a/b c\u{e9}"), "a_b_c_");
        assert_eq!(sanitize_reason(""), "r");
        assert_eq!(sanitize_reason(".hidden"), "r.hidden");
        assert_eq!(sanitize_reason(&"x".repeat(70)), "x".repeat(64));
    }

    /// Retention removes the oldest trace files past the limits and the temporary files of
    /// flushes whose process is gone (`.<ms>-<pid>-…hubble.tmp`), and counts what it removed; a
    /// live process's temporary file, and a file that is neither (no leading dot), stay.
    #[test]
    fn retention_removes_old_traces_and_dead_flushes_temporary_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let live = std::process::id();
        let names = [
            "0000000000001-7-7-old.hubble".to_string(),
            "0000000000002-7-7-new.hubble".to_string(),
            format!(".0000000000003-{dead}-7-x.hubble.tmp"),
            format!(".0000000000004-{live}-7-x.hubble.tmp"),
            format!("0000000000005-{dead}-7-x.hubble.tmp"),
        ];
        for n in &names {
            std::fs::write(dir.join(n), b"0123456789").unwrap();
        }
        let removed = apply_retention(&FsStorage, dir, 1, 1 << 20).unwrap();
        assert_eq!(removed, 2, "the oldest trace and the dead flush's file");
        let mut left: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = vec![names[1].clone(), names[3].clone(), names[4].clone()];
        want.sort();
        assert_eq!(left, want);
    }

    /// A temporary file's owner is gone only when `kill(pid, 0)` fails with ESRCH: not for a live
    /// process (this one) even right after an ESRCH (errno is not reset by a success), not for
    /// a name without a pid.
    #[test]
    fn a_temporary_files_owner_is_dead_only_on_esrch() {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        assert!(tmp_owner_dead(&format!(".1-{dead}-1-x.hubble.tmp")));
        let me = std::process::id();
        assert!(!tmp_owner_dead(&format!(".1-{me}-1-x.hubble.tmp")));
        assert!(!tmp_owner_dead(".1-abc-1-x.hubble.tmp"));
    }

    /// `FsStorage::ensure_dir` creates the last component only (mode 0700), accepts a directory
    /// already there, and fails on anything else: a file where the directory should be, a
    /// missing parent (the app data directory is never invented).
    #[test]
    fn ensure_dir_accepts_a_directory_and_nothing_else() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("hubble");
        FsStorage.ensure_dir(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        FsStorage.ensure_dir(&dir).expect("already there: fine");
        let file = tmp.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let e = FsStorage.ensure_dir(&file).unwrap_err();
        assert_eq!(
            e.kind(),
            io::ErrorKind::AlreadyExists,
            "a file is no directory"
        );
        // `files/` is made when the app's data directory exists (the app never asked for it)...
        let in_new_files = tmp.path().join("files/hubble");
        FsStorage
            .ensure_dir(&in_new_files)
            .expect("files/ made as ContextImpl makes it");
        assert!(in_new_files.is_dir());
        // ...but the app's data directory is never invented.
        let orphan = tmp.path().join("no-such-app/files/hubble");
        let e = FsStorage.ensure_dir(&orphan).unwrap_err();
        assert_eq!(
            e.kind(),
            io::ErrorKind::NotFound,
            "the app's data directory is not invented"
        );
        assert!(!tmp.path().join("no-such-app").exists());
    }

    use hubble_format::ring::decode;
    use hubble_format::RingWriter;

    /// `w`'s ring as the runtime holds it, and the records the tools decode from it.
    fn copied(w: &RingWriter, mode: Mode) -> (Vec<u64>, usize, Vec<Record>, bool) {
        let atomics: Vec<AtomicU64> = w.slots().iter().map(|&v| AtomicU64::new(v)).collect();
        let ring = Slots {
            base: atomics.as_ptr() as usize,
            slots: &atomics,
        };
        let end = w.write_pos_bytes();
        let mut out = vec![7; 3]; // cleared first
        let n = copy_window(ring, end as usize, mode, &mut out).unwrap();
        let view = RingView::new(w.slots(), end, None).unwrap();
        let dropped = walk_back(&view, mode, |_| {}).unwrap().dropped_half_record;
        (out, n, decode(&view, mode).unwrap().records, dropped)
    }

    /// Before the ring wraps the window is every slot written, START first, as written.
    #[test]
    fn an_unwrapped_window_is_every_slot_written() {
        let mut w = RingWriter::new(Mode::Bits64, 64);
        w.start(1);
        for k in 0..10 {
            w.entry(0x7000_0040 + 0x40 * k, 10 + k as u32).unwrap();
            w.exit(20 + k as u32);
        }
        let (out, n, _, _) = copied(&w, Mode::Bits64);
        let written = (w.write_pos_bytes() / 8) as usize;
        assert_eq!(n, written);
        assert_eq!(out, w.slots()[..written]);
    }

    /// After wraps that leave the second half of a two-slot entry as the oldest slot, the
    /// window starts after it (the half is not a record) and decodes to what the tools decode
    /// from the ring itself.
    #[test]
    fn a_wrapped_window_leaves_out_the_half_entry_at_its_oldest_end() {
        let mut seen_half = false;
        for extra in 0..6 {
            let mut w = RingWriter::new(Mode::Bits64, 17);
            w.start(1);
            for k in 0..(12 + extra) {
                w.entry(0x7f00_0000_0040 + 0x40 * k, 10 + k as u32).unwrap(); // two slots
                w.exit(11 + k as u32);
            }
            let (out, n, records, dropped) = copied(&w, Mode::Bits64);
            seen_half |= dropped;
            assert_eq!(out.len(), n);
            let got = decode(&RingView::linear(&out), Mode::Bits64)
                .unwrap()
                .records;
            assert_eq!(got, records, "{extra} more calls");
        }
        assert!(seen_half, "no run left half an entry at the oldest end");
    }

    /// The open-addressing set agrees with a `HashSet` through several regrowths, with
    /// pointers that collide in their low bits (method pointers are 8- or 16-aligned).
    #[test]
    fn distinct_pointers_is_a_set() {
        let mut d = DistinctPointers::default();
        let mut reference = std::collections::HashSet::new();
        let mut x = 0x1234_5678_9abc_def1u64;
        for i in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = if i % 3 == 0 {
                0x7f00_0000_0000 + (x % 70_000) * 4096
            } else {
                4 + (x % 40_000) * 16
            };
            d.insert(p);
            reference.insert(p);
        }
        assert_eq!(d.len(), reference.len());
        let mut got: Vec<u64> = d.iter().collect();
        got.sort_unstable();
        let mut want: Vec<u64> = reference.into_iter().collect();
        want.sort_unstable();
        assert_eq!(got, want);
    }
}
