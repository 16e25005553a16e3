//! The trace file: one self-describing, checksummed file per flushed thread.
//!
//! All integers are little-endian. `docs/trace-format.md` draws the layout:
//!
//! ```text
//!  0  magic "HUBBLTRC"            8  u16 version   10 u8 mode (32|64)  11 u8 metadata count
//! 12  u32 window offset          16  u64 timer Hz  24 u64 reference counter
//! 32  u64 wall clock (Unix ns)   40  u64 ring bytes 48 u64 write position
//! 56  u64 window bytes           64  u32 pid  68 u32 tid  72 u32 symbol count
//! 76  u32 anchor count (version 2; 0 in version 1)
//! 80  3 × (u16 length, UTF-8): thread name, process name, trigger reason; zero pad to 8
//!     window: the ring's valid slots, oldest first (u64 each)
//!     symbols: count × (u64 pointer, u16 length, UTF-8 name), pointers strictly increasing
//!     anchors: count × (u64 slots after, u64 bound), slots after strictly increasing and at
//!              most the window's slots, bounds not increasing ([`TimeAnchor`])
//!     metadata: count × (u16 length, key; u16 length, value), keys strictly increasing
//!     u32 CRC-32 (IEEE) of every byte before it
//! ```
//!
//! Version 2 added the anchors in the word version 1 kept zero: a version 1 file reads as a
//! version 2 file without anchors. Version 3 added the metadata (device, build, app version:
//! what fleet queries group by) counted in the byte versions 1 and 2 kept zero. This crate
//! reads all three and writes version 3.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::slot::Mode;
use crate::time::{TimeAnchor, TimeBase};

/// The file's first eight bytes.
pub const MAGIC: [u8; 8] = *b"HUBBLTRC";
/// The version this crate writes (it reads this one and [`OLDEST_VERSION`]).
pub const VERSION: u16 = 3;
/// The oldest version this crate reads.
pub const OLDEST_VERSION: u16 = 1;
/// Size of the fixed part of the header.
pub const FIXED_HEADER: usize = 80;
/// Longest thread name, process name or reason.
pub const MAX_STRING: usize = 4096;
/// Symbols a file may hold beyond one per window slot (methods resolved early, e.g. when their
/// class loader was unloaded, may be kept although their slots were since overwritten).
pub const MAX_EXTRA_SYMBOLS: usize = 1 << 16;
/// Largest ring a file may describe (64 GiB): anything larger is corruption.
pub const MAX_RING_BYTES: u64 = 1 << 36;
/// Most metadata entries a file holds (the count is one header byte; 32 is plenty for the
/// keys of `docs/trace-format.md` and keeps a corrupt count from driving a long loop).
pub const MAX_METADATA: usize = 32;
/// Longest metadata key: lower-case ASCII letters, digits, `.`, `_` and `-`.
pub const MAX_METADATA_KEY: usize = 64;
/// Longest metadata value (UTF-8): a build fingerprint is about 100 bytes.
pub const MAX_METADATA_VALUE: usize = 256;

/// Everything in the file except the slots and symbols.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceHeader {
    /// Execution mode of the traced process.
    pub mode: Mode,
    /// Generic-timer frequency in Hz.
    pub timer_hz: u64,
    /// Full 64-bit timer value read at flush.
    pub reference_counter: u64,
    /// Wall-clock time (Unix epoch, ns) read together with `reference_counter`.
    pub wall_clock_ns: u64,
    /// Size of the ring in bytes.
    pub ring_bytes: u64,
    /// Byte offset in the ring of the next slot to be written when tracing stopped.
    pub write_pos: u64,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Thread name.
    pub thread_name: String,
    /// Process (package) name.
    pub process_name: String,
    /// Why the trace was flushed (anomaly detector, property, API).
    pub reason: String,
    /// Bounds at the window's idle gaps, newest first, for timestamps across gaps of 2^32
    /// ticks or more ([`TimeAnchor`]); empty for a thread that never idled a whole tick.
    pub anchors: Vec<TimeAnchor>,
    /// What the process knew about itself at flush (`device.model`, `build.fingerprint`, ...;
    /// `docs/trace-format.md` lists the keys), or what an ingest step added (`app.version`).
    /// Empty in files of versions 1 and 2.
    pub metadata: BTreeMap<String, String>,
}

impl TraceHeader {
    /// What the window's timestamps are recovered from: the reference and the anchors.
    pub fn time_base(&self) -> TimeBase<'_> {
        TimeBase {
            reference: self.reference_counter,
            anchors: &self.anchors,
        }
    }
}

/// A whole trace file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFile {
    /// Metadata.
    pub header: TraceHeader,
    /// The valid slots of the ring, oldest first.
    pub window: Vec<u64>,
    /// `ArtMethod*` → pretty method name.
    pub symbols: BTreeMap<u64, String>,
}

/// What is wrong with a trace file.
#[derive(Debug)]
pub enum FileError {
    /// The file ends before `what`.
    Truncated {
        /// The part that is cut off.
        what: &'static str,
    },
    /// The first eight bytes are not the magic.
    BadMagic,
    /// A version this reader does not know.
    UnsupportedVersion(u16),
    /// The mode byte is neither 32 nor 64.
    BadMode(u8),
    /// A field has an impossible value.
    Invalid {
        /// The field.
        field: &'static str,
        /// Why it is impossible.
        problem: String,
    },
    /// The stored checksum does not match the contents.
    ChecksumMismatch {
        /// The stored CRC.
        stored: u32,
        /// The CRC of the contents.
        computed: u32,
    },
    /// Bytes after the checksum.
    TrailingBytes(usize),
    /// Reading or writing failed.
    #[cfg(feature = "std")]
    Io(std::io::Error),
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Truncated { what } => write!(f, "truncated: the file ends inside {what}"),
            FileError::BadMagic => write!(f, "not a Hubble trace (wrong magic)"),
            FileError::UnsupportedVersion(v) => {
                write!(
                    f,
                    "unsupported format version {v} (this tool reads versions \
                     {OLDEST_VERSION} to {VERSION})"
                )
            }
            FileError::BadMode(m) => write!(f, "bad ISA mode {m} (expected 32 or 64)"),
            FileError::Invalid { field, problem } => write!(f, "bad {field}: {problem}"),
            FileError::ChecksumMismatch { stored, computed } => write!(
                f,
                "checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the file is \
                 corrupt"
            ),
            FileError::TrailingBytes(n) => write!(f, "{n} unexpected bytes after the checksum"),
            #[cfg(feature = "std")]
            FileError::Io(e) => e.fmt(f),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for FileError {}

pub(crate) fn invalid(field: &'static str, problem: impl Into<String>) -> FileError {
    FileError::Invalid {
        field,
        problem: problem.into(),
    }
}

pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], FileError> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(FileError::Truncated { what })?;
        let out = self
            .bytes
            .get(self.pos..end)
            .ok_or(FileError::Truncated { what })?;
        self.pos = end;
        Ok(out)
    }
    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, FileError> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?.try_into().expect("2 bytes"),
        ))
    }
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, FileError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4 bytes"),
        ))
    }
    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, FileError> {
        Ok(u64::from_le_bytes(
            self.take(8, what)?.try_into().expect("8 bytes"),
        ))
    }
    pub(crate) fn string(&mut self, what: &'static str) -> Result<String, FileError> {
        let len = usize::from(self.u16(what)?);
        if len > MAX_STRING {
            return Err(invalid(
                what,
                alloc::format!("{len} bytes long (at most {MAX_STRING})"),
            ));
        }
        let bytes = self.take(len, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| invalid(what, "not UTF-8"))
    }
}

impl TraceFile {
    /// Serializes the file.
    pub fn to_bytes(&self) -> Result<Vec<u8>, FileError> {
        let parts = encode_parts(&self.header, &self.window, &self.symbols)?;
        Ok(parts.parts().concat())
    }

    /// Parses and verifies a file.
    pub fn parse(bytes: &[u8]) -> Result<TraceFile, FileError> {
        // Structure first, so a cut-off file says "truncated"; then the checksum, so a flipped
        // bit anywhere says "corrupt" even where the structure happens to look fine.
        let head = parse_head(bytes)?;
        let start = head.window_offset;
        if head.window_bytes > bytes.len() - start {
            return Err(FileError::Truncated {
                what: "the ring window",
            });
        }
        let end = start + head.window_bytes;
        let window = bytes[start..end]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        let mut crc = crc32fast::Hasher::new();
        crc.update(&bytes[..end]);
        head.finish(window, crc, &bytes[end..])
    }
    /// Writes the file atomically: a temporary name in the same directory (mode 0600), fsync,
    /// rename, fsync of the directory. Nothing ever appears under `path` half-written.
    #[cfg(feature = "std")]
    pub fn write_atomic(&self, path: &std::path::Path) -> Result<(), FileError> {
        let parts = encode_parts(&self.header, &self.window, &self.symbols)?;
        write_atomic_parts(path, &parts.parts()).map_err(FileError::Io)
    }

    /// Reads and verifies a file. The window is read straight into the slots it becomes, so a
    /// 32 MiB ring costs one pass over its bytes and no second buffer.
    #[cfg(feature = "std")]
    pub fn read(path: &std::path::Path) -> Result<TraceFile, FileError> {
        use std::io::Read;
        let mut file = std::fs::File::open(path).map_err(FileError::Io)?;
        // The longest header there can be: a shorter read is the whole file.
        let mut prefix = Vec::with_capacity(MAX_HEADER);
        (&mut file)
            .take(MAX_HEADER as u64)
            .read_to_end(&mut prefix)
            .map_err(FileError::Io)?;
        let head = parse_head(&prefix)?;
        let start = head.window_offset;
        let mut window = alloc::vec![0u64; head.window_bytes / 8];
        let bytes = slots_as_bytes_mut(&mut window);
        let have = (prefix.len() - start).min(bytes.len());
        bytes[..have].copy_from_slice(&prefix[start..start + have]);
        file.read_exact(&mut bytes[have..])
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => FileError::Truncated {
                    what: "the ring window",
                },
                _ => FileError::Io(e),
            })?;
        let mut crc = crc32fast::Hasher::new();
        crc.update(&prefix[..start]);
        crc.update(bytes);
        let mut tail = prefix.split_off(start + have);
        // `File::read_to_end` sizes the buffer from the file's length itself.
        file.read_to_end(&mut tail).map_err(FileError::Io)?;
        if cfg!(target_endian = "big") {
            for slot in &mut window {
                *slot = u64::from_le(*slot);
            }
        }
        head.finish(window, crc, &tail)
    }
}

/// The longest header a file can have: the fixed part and three strings at their longest,
/// padded to 8 (the window's offset then; `limits_are_inclusive` checks it against
/// [`window_offset`]). `read`'s first read takes this much.
pub const MAX_HEADER: usize = (FIXED_HEADER + 3 * (2 + MAX_STRING) + 7) & !7;

/// The slots' memory as bytes, to read a window into (on a little-endian host the file's bytes
/// are the slots; a big-endian host swaps them afterwards).
#[cfg(feature = "std")]
fn slots_as_bytes_mut(slots: &mut [u64]) -> &mut [u8] {
    // SAFETY: u64 has no padding and every byte pattern is a valid u64 and u8; the length
    // covers exactly the slice's memory, which the returned borrow keeps exclusive.
    unsafe { core::slice::from_raw_parts_mut(slots.as_mut_ptr().cast::<u8>(), slots.len() * 8) }
}

/// A trace file in three pieces — header, window, symbols + CRC — so a writer can send a
/// 32 MiB window straight from its buffer instead of copying it into the file image.
#[derive(Debug)]
pub struct EncodedParts<'a> {
    /// Header up to the window.
    pub head: Vec<u8>,
    /// The window's slots as little-endian bytes (borrowed on little-endian hosts).
    pub window: alloc::borrow::Cow<'a, [u8]>,
    /// Symbol table and CRC-32.
    pub tail: Vec<u8>,
}

impl EncodedParts<'_> {
    /// The pieces in file order; their concatenation is the file.
    pub fn parts(&self) -> [&[u8]; 3] {
        [&self.head, &self.window, &self.tail]
    }
}

/// Encodes a trace file in pieces (see [`EncodedParts`]); [`TraceFile::to_bytes`] is their
/// concatenation.
pub fn encode_parts<'a>(
    h: &TraceHeader,
    window: &'a [u64],
    symbols: &BTreeMap<u64, String>,
) -> Result<EncodedParts<'a>, FileError> {
    let window_bytes = window_bytes(window);
    let crc = WindowCrc::of(&window_bytes);
    let symbols = symbols.iter().map(|(p, n)| (*p, n.as_str()));
    let (head, tail) = encode_around(h, window.len(), &crc, symbols.len(), symbols)?;
    Ok(EncodedParts {
        head,
        window: window_bytes,
        tail,
    })
}

/// The window's slots as the file stores them (little-endian), borrowed on little-endian hosts.
pub fn window_bytes(window: &[u64]) -> alloc::borrow::Cow<'_, [u8]> {
    if cfg!(target_endian = "little") {
        // SAFETY: u64 has no padding and every byte pattern is a valid u8, the length covers
        // exactly the slice's memory, and on a little-endian machine that memory is the slots'
        // little-endian encoding.
        alloc::borrow::Cow::Borrowed(unsafe {
            core::slice::from_raw_parts(window.as_ptr().cast::<u8>(), window.len() * 8)
        })
    } else {
        alloc::borrow::Cow::Owned(window.iter().flat_map(|s| s.to_le_bytes()).collect())
    }
}

/// The CRC-32 of a window's bytes alone. The file's checksum runs over header, window and
/// symbols in that order; CRC-32 states combine, so a writer can checksum (and write) the
/// 32 MiB window while the symbols, which the header counts, are still being resolved.
#[derive(Clone)]
pub struct WindowCrc {
    state: crc32fast::Hasher,
    /// Bytes covered: combining needs it, and a CRC of the wrong bytes must not pass silently.
    len: usize,
}

impl WindowCrc {
    /// The CRC of `window_bytes` (see [`window_bytes`]).
    pub fn of(window_bytes: &[u8]) -> WindowCrc {
        let mut state = crc32fast::Hasher::new();
        state.update(window_bytes);
        WindowCrc {
            state,
            len: window_bytes.len(),
        }
    }
}

impl fmt::Debug for WindowCrc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WindowCrc")
            .field("crc", &self.state.clone().finalize())
            .field("len", &self.len)
            .finish()
    }
}

/// Byte offset of the window in a file with header `h` (it depends only on the strings), so a
/// writer can place the window before the rest is encoded.
pub fn window_offset(h: &TraceHeader) -> Result<usize, FileError> {
    let mut len = FIXED_HEADER;
    for (what, s) in strings(h) {
        if s.len() > MAX_STRING {
            return Err(invalid(what, alloc::format!("{} bytes long", s.len())));
        }
        len += 2 + s.len();
    }
    Ok((len + 7) & !7)
}

/// Checks that symbol `pointer` comes after the one before it (`previous`, updated): readers
/// rely on the order, so a writer's mistake would be a corrupt file and a reader refuses it.
pub(crate) fn symbol_in_order(previous: &mut Option<u64>, pointer: u64) -> Result<(), FileError> {
    if previous.is_some_and(|p| p >= pointer) {
        return Err(invalid(
            "symbol table",
            "pointers are not strictly increasing",
        ));
    }
    *previous = Some(pointer);
    Ok(())
}

fn strings(h: &TraceHeader) -> [(&'static str, &String); 3] {
    [
        ("thread name", &h.thread_name),
        ("process name", &h.process_name),
        ("trigger reason", &h.reason),
    ]
}

/// The header (up to the window) and the tail (symbols and CRC-32) of a file whose window has
/// `window_slots` slots with CRC `window_crc`. `symbols` yields `symbol_count` (pointer, name)
/// pairs, pointers strictly increasing. With [`window_offset`] this lets a writer put the
/// window first and the rest around it; the bytes are [`encode_parts`]'s.
pub fn encode_around<'s>(
    h: &TraceHeader,
    window_slots: usize,
    window_crc: &WindowCrc,
    symbol_count: usize,
    symbols: impl IntoIterator<Item = (u64, &'s str)>,
) -> Result<(Vec<u8>, Vec<u8>), FileError> {
    check_geometry(h.ring_bytes, h.write_pos, (window_slots * 8) as u64)?;
    if window_crc.len != window_slots * 8 {
        return Err(invalid(
            "window checksum",
            alloc::format!(
                "covers {} bytes, the window has {}",
                window_crc.len,
                window_slots * 8
            ),
        ));
    }
    check_metadata(&h.metadata)?;
    let mut head = Vec::with_capacity(FIXED_HEADER + 64);
    head.extend_from_slice(&MAGIC);
    head.extend_from_slice(&VERSION.to_le_bytes());
    head.push(h.mode.code());
    // At most MAX_METADATA entries (checked above).
    head.push(h.metadata.len() as u8);
    head.extend_from_slice(&[0; 4]); // window offset, patched below
    for v in [
        h.timer_hz,
        h.reference_counter,
        h.wall_clock_ns,
        h.ring_bytes,
        h.write_pos,
        (window_slots * 8) as u64,
    ] {
        head.extend_from_slice(&v.to_le_bytes());
    }
    let count = u32::try_from(symbol_count)
        .map_err(|_| invalid("symbol count", "more than 2^32 symbols"))?;
    check_anchors(&h.anchors, window_slots)?;
    // At most one anchor a slot (checked above), so a window's worth fits in a u32 count.
    let anchor_count = u32::try_from(h.anchors.len())
        .map_err(|_| invalid("anchor count", "more than 2^32 anchors"))?;
    for v in [h.pid, h.tid, count, anchor_count] {
        head.extend_from_slice(&v.to_le_bytes());
    }
    // Checks every string's length, so the casts below cannot truncate.
    let window_offset = window_offset(h)?;
    for (_, s) in strings(h) {
        head.extend_from_slice(&(s.len() as u16).to_le_bytes());
        head.extend_from_slice(s.as_bytes());
    }
    debug_assert!(head.len() <= window_offset && window_offset - head.len() < 8);
    head.resize(window_offset, 0);
    head[12..16].copy_from_slice(&(window_offset as u32).to_le_bytes());
    let mut tail = Vec::new();
    let mut written = 0usize;
    let mut previous = None;
    for (pointer, name) in symbols {
        // The count is in the header and readers rely on the order: a caller's mistake here
        // would be a corrupt file.
        symbol_in_order(&mut previous, pointer)?;
        let len = u16::try_from(name.len())
            .map_err(|_| invalid("symbol name", alloc::format!("{pointer:#x} is too long")))?;
        tail.extend_from_slice(&pointer.to_le_bytes());
        tail.extend_from_slice(&len.to_le_bytes());
        tail.extend_from_slice(name.as_bytes());
        written += 1;
    }
    if written != symbol_count {
        return Err(invalid(
            "symbol count",
            alloc::format!("{symbol_count} announced, {written} given"),
        ));
    }
    for a in &h.anchors {
        tail.extend_from_slice(&a.slots_after.to_le_bytes());
        tail.extend_from_slice(&a.bound.to_le_bytes());
    }
    // Lengths checked by check_metadata: the casts cannot truncate.
    for (key, value) in &h.metadata {
        for s in [key, value] {
            tail.extend_from_slice(&(s.len() as u16).to_le_bytes());
            tail.extend_from_slice(s.as_bytes());
        }
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(&head);
    crc.combine(&window_crc.state);
    crc.update(&tail);
    tail.extend_from_slice(&crc.finalize().to_le_bytes());
    Ok((head, tail))
}

/// Metadata a reader can rely on: bounded in number and length, keys in one plain alphabet
/// (so they are column names in every query engine, unquoted).
pub(crate) fn check_metadata(metadata: &BTreeMap<String, String>) -> Result<(), FileError> {
    if metadata.len() > MAX_METADATA {
        return Err(invalid(
            "metadata",
            alloc::format!("{} entries (at most {MAX_METADATA})", metadata.len()),
        ));
    }
    for (key, value) in metadata {
        check_metadata_key(key)?;
        if value.len() > MAX_METADATA_VALUE {
            return Err(invalid(
                "metadata value",
                alloc::format!(
                    "{key}: {} bytes long (at most {MAX_METADATA_VALUE})",
                    value.len()
                ),
            ));
        }
    }
    Ok(())
}

/// A metadata key: 1 to [`MAX_METADATA_KEY`] bytes of `a-z`, `0-9`, `.`, `_`, `-`.
pub fn check_metadata_key(key: &str) -> Result<(), FileError> {
    let ok = !key.is_empty()
        && key.len() <= MAX_METADATA_KEY
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(invalid(
            "metadata key",
            alloc::format!(
                "{key:?}: want 1 to {MAX_METADATA_KEY} bytes of a-z, 0-9, '.', '_', '-'"
            ),
        ))
    }
}

/// Anchors must be what a runtime can produce: positions strictly increasing inside the window
/// (so at most one per slot and position), bounds not increasing (an older position was seen
/// earlier). A decoder would cope with any, but a file that breaks this is corrupt.
pub(crate) fn check_anchors(anchors: &[TimeAnchor], window_slots: usize) -> Result<(), FileError> {
    for (i, a) in anchors.iter().enumerate() {
        if a.slots_after > window_slots as u64 {
            return Err(invalid(
                "anchor",
                alloc::format!(
                    "anchor {i} lies {} slots before the end of a {window_slots}-slot window",
                    a.slots_after
                ),
            ));
        }
        if let Some(p) = i.checked_sub(1).map(|j| anchors[j]) {
            if p.slots_after >= a.slots_after || p.bound < a.bound {
                return Err(invalid(
                    "anchor",
                    alloc::format!(
                        "anchor {i} ({} slots from the end, bound {}) is not older than \
                         anchor {} ({} slots, bound {})",
                        a.slots_after,
                        a.bound,
                        i - 1,
                        p.slots_after,
                        p.bound
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn check_geometry(ring_bytes: u64, write_pos: u64, window_bytes: u64) -> Result<(), FileError> {
    if ring_bytes == 0 || ring_bytes % 8 != 0 {
        return Err(invalid(
            "ring size",
            alloc::format!("{ring_bytes} is not a positive multiple of 8"),
        ));
    }
    if ring_bytes > MAX_RING_BYTES {
        return Err(invalid(
            "ring size",
            alloc::format!("{ring_bytes} bytes is absurd"),
        ));
    }
    if write_pos % 8 != 0 || write_pos > ring_bytes {
        return Err(invalid(
            "write position",
            alloc::format!("{write_pos} is not a multiple of 8 in 0..={ring_bytes}"),
        ));
    }
    if window_bytes % 8 != 0 || window_bytes > ring_bytes {
        return Err(invalid(
            "window size",
            alloc::format!("{window_bytes} is not a multiple of 8 in 0..={ring_bytes}"),
        ));
    }
    Ok(())
}

/// A parsed header and where the rest of the file lies.
struct Head {
    header: TraceHeader,
    window_offset: usize,
    window_bytes: usize,
    symbol_count: usize,
    anchor_count: usize,
    metadata_count: usize,
}

/// Reads what opens every version's file: the magic, a version among `versions` and the mode.
/// The reader is left after the mode byte.
pub(crate) fn parse_opening(
    bytes: &[u8],
    versions: core::ops::RangeInclusive<u16>,
) -> Result<(Reader<'_>, u16, Mode), FileError> {
    if bytes.len() < 8 {
        return Err(FileError::Truncated { what: "the magic" });
    }
    if bytes[..8] != MAGIC {
        return Err(FileError::BadMagic);
    }
    let mut r = Reader { bytes, pos: 8 };
    let version = r.u16("the header")?;
    if !versions.contains(&version) {
        return Err(FileError::UnsupportedVersion(version));
    }
    let mode_code = r.take(1, "the header")?[0];
    let mode = Mode::from_code(mode_code).ok_or(FileError::BadMode(mode_code))?;
    Ok((r, version, mode))
}

/// Metadata entries as read, (key, value) bytes not yet checked.
pub(crate) type RawMetadata<'a> = Vec<(&'a [u8], &'a [u8])>;

/// Reads `count` metadata entries, structure only: their meaning is checked after the checksum
/// ([`metadata_from`]), so that a flipped bit in a key says "corrupt" rather than "bad key".
pub(crate) fn raw_metadata<'a>(
    r: &mut Reader<'a>,
    count: usize,
) -> Result<RawMetadata<'a>, FileError> {
    let mut raw = Vec::with_capacity(count);
    for _ in 0..count {
        let key_len = usize::from(r.u16("the metadata")?);
        let key = r.take(key_len, "the metadata")?;
        let value_len = usize::from(r.u16("the metadata")?);
        raw.push((key, r.take(value_len, "the metadata")?));
    }
    Ok(raw)
}

/// The entries [`raw_metadata`] read, once the checksum matched: UTF-8, keys strictly
/// increasing.
pub(crate) fn metadata_from(raw: RawMetadata<'_>) -> Result<BTreeMap<String, String>, FileError> {
    let mut metadata = BTreeMap::new();
    for (key, value) in raw {
        let key = core::str::from_utf8(key).map_err(|_| invalid("metadata key", "not UTF-8"))?;
        let value = core::str::from_utf8(value)
            .map_err(|_| invalid("metadata value", alloc::format!("{key}: not UTF-8")))?;
        if metadata
            .last_key_value()
            .is_some_and(|(k, _): (&String, _)| k.as_str() >= key)
        {
            return Err(invalid("metadata", "keys are not strictly increasing"));
        }
        metadata.insert(String::from(key), String::from(value));
    }
    Ok(metadata)
}

/// Parses everything before the window (`bytes` may go on past it).
fn parse_head(bytes: &[u8]) -> Result<Head, FileError> {
    let (mut r, version, mode) = parse_opening(bytes, OLDEST_VERSION..=VERSION)?;
    // Reserved bytes must be zero: a reader that ignored them could not tell a future
    // extension from corruption, and the file would not round-trip.
    let metadata_count = usize::from(r.take(1, "the header")?[0]);
    if version < 3 && metadata_count != 0 {
        return Err(invalid("reserved byte 11", "not zero"));
    }
    if metadata_count > MAX_METADATA {
        return Err(invalid(
            "metadata count",
            alloc::format!("{metadata_count} (at most {MAX_METADATA})"),
        ));
    }
    let window_offset = r.u32("the header")? as usize;
    let timer_hz = r.u64("the header")?;
    let reference_counter = r.u64("the header")?;
    let wall_clock_ns = r.u64("the header")?;
    let ring_bytes = r.u64("the header")?;
    let write_pos = r.u64("the header")?;
    let window_bytes = r.u64("the header")?;
    let pid = r.u32("the header")?;
    let tid = r.u32("the header")?;
    let symbol_count = r.u32("the header")? as usize;
    let anchor_count = r.u32("the header")? as usize;
    if version == 1 && anchor_count != 0 {
        return Err(invalid("reserved bytes 76..80", "not zero"));
    }
    if timer_hz == 0 {
        return Err(invalid("timer frequency", "0 Hz"));
    }
    check_geometry(ring_bytes, write_pos, window_bytes)?;
    let thread_name = r.string("the thread name")?;
    let process_name = r.string("the process name")?;
    let reason = r.string("the trigger reason")?;
    let padded = (r.pos + 7) & !7;
    if window_offset != padded {
        return Err(invalid(
            "window offset",
            alloc::format!("{window_offset}, but the header ends at {padded}"),
        ));
    }
    if r.take(padded - r.pos, "the header padding")?
        .iter()
        .any(|&b| b != 0)
    {
        return Err(invalid("header padding", "not zero"));
    }
    // Symbols name the pointers in the window, so there cannot be (many) more of them than
    // slots. A larger count is corruption and must not drive a long loop; a plausible count
    // the file cannot hold means the file was cut short.
    let window_bytes = window_bytes as usize;
    if symbol_count > window_bytes / 8 + MAX_EXTRA_SYMBOLS {
        return Err(invalid(
            "symbol count",
            alloc::format!(
                "{symbol_count} symbols for a window of {} slots",
                window_bytes / 8
            ),
        ));
    }
    if anchor_count > window_bytes / 8 + 1 {
        return Err(invalid(
            "anchor count",
            alloc::format!(
                "{anchor_count} anchors for a window of {} slots",
                window_bytes / 8
            ),
        ));
    }
    Ok(Head {
        header: TraceHeader {
            mode,
            timer_hz,
            reference_counter,
            wall_clock_ns,
            ring_bytes,
            write_pos,
            pid,
            tid,
            thread_name,
            process_name,
            reason,
            anchors: Vec::new(),
            metadata: BTreeMap::new(),
        },
        window_offset,
        window_bytes,
        symbol_count,
        anchor_count,
        metadata_count,
    })
}

impl Head {
    /// The file from its window and `tail`, the bytes after the window. `crc` has seen
    /// everything before the tail.
    fn finish(
        self,
        window: Vec<u64>,
        mut crc: crc32fast::Hasher,
        tail: &[u8],
    ) -> Result<TraceFile, FileError> {
        let mut r = Reader {
            bytes: tail,
            pos: 0,
        };
        // Collected in order and built in bulk: the pointers are sorted, so `BTreeMap` fills its
        // nodes left to right instead of searching for every key.
        let mut symbols = Vec::with_capacity(self.symbol_count.min(tail.len() / 10));
        let mut previous = None;
        for _ in 0..self.symbol_count {
            let pointer = r.u64("the symbol table")?;
            let len = usize::from(r.u16("the symbol table")?);
            let name = core::str::from_utf8(r.take(len, "the symbol table")?)
                .map_err(|_| invalid("symbol name", alloc::format!("{pointer:#x} is not UTF-8")))?;
            symbol_in_order(&mut previous, pointer)?;
            symbols.push((pointer, String::from(name)));
        }
        let symbols = BTreeMap::from_iter(symbols);
        let mut header = self.header;
        for _ in 0..self.anchor_count {
            header.anchors.push(TimeAnchor {
                slots_after: r.u64("the anchors")?,
                bound: r.u64("the anchors")?,
            });
        }
        // Structure only before the checksum; meaning after it (as for the anchors).
        let raw_metadata = raw_metadata(&mut r, self.metadata_count)?;
        let stored = u32::from_le_bytes(r.take(4, "the checksum")?.try_into().expect("4 bytes"));
        crc.update(&tail[..r.pos - 4]);
        let computed = crc.finalize();
        if stored != computed {
            return Err(FileError::ChecksumMismatch { stored, computed });
        }
        if r.pos < tail.len() {
            return Err(FileError::TrailingBytes(tail.len() - r.pos));
        }
        // After the checksum: a flipped bit in an anchor says "corrupt", like anywhere else.
        check_anchors(&header.anchors, self.window_bytes / 8)?;
        header.metadata = metadata_from(raw_metadata)?;
        check_metadata(&header.metadata)?;
        Ok(TraceFile {
            header,
            window,
            symbols,
        })
    }
}

/// Writes the concatenation of `parts` to `path` atomically (temporary name, 0600, fsync,
/// rename, directory fsync), without building it in memory (a flush writes a 32 MiB window
/// between a header and a symbol table).
#[cfg(feature = "std")]
pub fn write_atomic_parts(path: &std::path::Path, parts: &[&[u8]]) -> std::io::Result<()> {
    let file = AtomicFile::create(path)?;
    let mut offset = 0u64;
    for part in parts {
        file.write_at(offset, part)?;
        offset += part.len() as u64;
    }
    file.commit()
}

/// A file written atomically in pieces at any offsets, from any thread (the window can be
/// written while the symbols are still being resolved): `.<name>.tmp` in the same directory
/// (mode 0600) until [`AtomicFile::commit`] fsyncs it, renames it to its name and fsyncs the
/// directory. Dropped without a commit, the temporary file is removed: nothing ever appears
/// under the name half-written.
#[cfg(feature = "std")]
#[derive(Debug)]
pub struct AtomicFile {
    file: std::fs::File,
    tmp: std::path::PathBuf,
    path: std::path::PathBuf,
    committed: bool,
}

#[cfg(feature = "std")]
impl AtomicFile {
    /// Creates (or truncates) the temporary file for `path`.
    pub fn create(path: &std::path::Path) -> std::io::Result<AtomicFile> {
        use std::os::unix::fs::OpenOptionsExt;
        let name = path
            .file_name()
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "no file name"))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(".tmp");
        let tmp = Self::dir_of(path).join(tmp_name);
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        Ok(AtomicFile {
            file,
            tmp,
            path: path.to_path_buf(),
            committed: false,
        })
    }

    fn dir_of(path: &std::path::Path) -> &std::path::Path {
        match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        }
    }

    /// Writes all of `bytes` at `offset` (a hole before it reads as zeros until written).
    pub fn write_at(&self, offset: u64, bytes: &[u8]) -> std::io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.write_all_at(bytes, offset)
    }

    /// The open temporary file (for hints such as early writeback).
    pub fn file(&self) -> &std::fs::File {
        &self.file
    }

    /// fsync, rename to the final name, fsync of the directory.
    pub fn commit(mut self) -> std::io::Result<()> {
        self.file.sync_all()?;
        std::fs::rename(&self.tmp, &self.path)?;
        self.committed = true;
        std::fs::File::open(Self::dir_of(&self.path))?.sync_all()
    }
}

#[cfg(feature = "std")]
impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

impl TraceFile {
    /// Decodes the window and recovers every timestamp from the reference counter and anchors.
    pub fn decode_events(&self) -> Result<crate::DecodedTrace, crate::EventsError> {
        crate::decode_events(
            &crate::RingView::linear(&self.window),
            self.header.mode,
            self.header.time_base(),
        )
    }

    /// Wall-clock nanoseconds (Unix epoch) of a timer value, from the flush-time reference pair.
    pub fn counter_to_wall_ns(&self, counter: u64) -> i128 {
        let h = &self.header;
        let delta = i128::from(counter) - i128::from(h.reference_counter);
        i128::from(h.wall_clock_ns) + delta * 1_000_000_000 / i128::from(h.timer_hz.max(1))
    }
}
