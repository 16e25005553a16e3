//! A mapping file indexed by class: its class lines are kept; a class's member lines are read
//! and parsed the first time a name of that class is looked up.
//!
//! Why lazily: a large app's mapping is tens of MB (hundreds of thousands of member lines)
//! while a trace names a few thousand methods of a few hundred classes. Parsing every member
//! line, or even holding them all, would cost more than exporting a 32 MiB ring
//! (docs/deobfuscation.md, "Cost"); finding the class lines costs a scan for line ends. Every
//! class line and every line before the first class is checked when the file is read; a
//! member line when its class is first used ([`Mapping::check`] checks them all).

use std::collections::BTreeMap;
use std::hash::Hasher;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::error::BodyError;
use crate::hash::Fx;

/// The newest mapping-file version whose additional information this crate knows (R8's
/// `# {"id":"com.android.tools.r8.mapping","version":"2.2"}`). A file declaring a newer one
/// is read (its unknown metadata ignored) and [`ParseInfo::newer_version`] says so.
pub const KNOWN_VERSION: &str = "2.2";

/// A byte range of a text (a class's lines, [`Mapping::names`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: u32,
    pub len: u32,
}

impl Span {
    /// The span of `part`, a subslice of `text`.
    pub fn of(text: &str, part: &str) -> Span {
        let start = part.as_ptr() as usize - text.as_ptr() as usize;
        debug_assert!(start + part.len() <= text.len());
        Span {
            start: start as u32,
            len: part.len() as u32,
        }
    }

    #[inline]
    pub fn get(self, text: &str) -> &str {
        &text[self.start as usize..(self.start + self.len) as usize]
    }
}

/// A ProGuard / R8 mapping file, ready for lookups.
pub struct Mapping {
    /// The file's name, for errors.
    pub(crate) file: String,
    /// The classes' original and obfuscated names, which their spans index.
    pub(crate) names: String,
    /// Where the classes' member lines are.
    pub(crate) source: Source,
    /// The text's size in bytes.
    pub(crate) size: u64,
    pub(crate) classes: Vec<Class>,
    /// Obfuscated class name → index into `classes`.
    pub(crate) by_obfuscated: SpanIndex,
    /// What the index pass found (class lines, versions, metadata before the first class).
    pub(crate) info: ParseInfo,
}

/// Where a mapping's member lines are read from.
#[derive(Debug)]
pub(crate) enum Source {
    /// The whole text (given as text, or read from a pipe).
    Text(String),
    /// The file, read again for a class's lines when the class is first used, and its size and
    /// modification time when it was indexed: a file rewritten in place since then is refused
    /// (its offsets would name other lines), one replaced by a rename is still the open one.
    #[cfg(unix)]
    File {
        file: std::fs::File,
        path: std::path::PathBuf,
        stamp: (u64, Option<std::time::SystemTime>),
    },
}

/// A byte range of the mapping file.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Section {
    pub start: u64,
    pub len: u32,
}

/// A class line and the lines under it.
#[derive(Debug)]
pub(crate) struct Class {
    /// Its names, in [`Mapping::names`].
    pub original: Span,
    pub obfuscated: Span,
    /// 1-based line number of the class line.
    pub line: u32,
    /// The lines under it: from the next line to the next class line.
    pub section: Section,
    /// The mapping version in effect at the class line.
    pub version: (u32, u32),
    /// Its members, parsed on first use (boxed: most classes never are).
    pub body: OnceLock<Result<Box<Body>, BodyError>>,
    /// A name was looked up in it: [`Mapping::info`] counts its lines (a class parsed ahead,
    /// [`Mapping::prefetch`], is not counted until then).
    pub used: AtomicBool,
}

/// A class's parsed member lines, indexed for lookups by obfuscated name and signature.
#[derive(Debug, Default)]
pub(crate) struct Body {
    /// The lines, which the spans of its candidates index.
    pub text: Box<str>,
    /// The candidates of each obfuscated name ([`Named`]), contiguous, in file order.
    pub candidates: Vec<Candidate>,
    /// Parallel to `candidates`: per name, (the hash a fitting printed signature has, index
    /// into `candidates`), sorted. A name's overloads (ProGuard gives hundreds of methods of a
    /// class the name `a`) are then found by a binary search instead of a scan.
    pub keyed: Vec<(u64, u32)>,
    /// The obfuscated names, each with its candidates.
    pub named: Vec<Named>,
    /// Obfuscated name → index into `named`.
    pub names: SpanIndex,
    /// Valid residual signatures (parameter types, return type), Java source names: what
    /// [`Candidate::residual`] indexes.
    pub residuals: Vec<(Vec<String>, String)>,
    /// R8's `synthesized` under the class line.
    pub synthesized: bool,
    /// What its lines held besides members.
    pub info: ParseInfo,
}

/// The candidates behind one obfuscated name: `lo..hi` of [`Body::candidates`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Named {
    pub name: Span,
    pub lo: u32,
    pub hi: u32,
    /// Some candidate has a residual signature: its key is the printed signature's hash, not
    /// the original types'.
    pub residual: bool,
}

/// An original method a residual method may be: the outermost frame of one or more inline
/// groups, with the metadata of its lines.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Candidate {
    pub frame: MethodLine,
    /// R8's residual signature: an index into [`Body::residuals`].
    pub residual: Option<u32>,
    pub synthesized: bool,
    pub outline: bool,
}

/// One method line, as spans of the text, and the metadata under it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct MethodLine {
    pub obfuscated: Span,
    pub ret: Span,
    /// The class of a qualified (inlined or moved) method; empty when not qualified.
    pub class: Span,
    pub name: Span,
    /// The arguments as written, comma-separated, without parentheses.
    pub args: Span,
    pub range: Option<(u32, u32)>,
    /// [`crate::hash::signature`] of its original return and argument types.
    pub signature: u64,
    /// R8's `residualsignature`, if valid: an index into [`Body::residuals`].
    pub residual: Option<u32>,
    pub synthesized: bool,
    pub outline: bool,
}

/// What reading the file found besides classes and members (for member lines and the
/// metadata among them: in the classes parsed so far). Callers report it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ParseInfo {
    /// Class lines.
    pub classes: usize,
    /// Method lines (each line of an inline group counts).
    pub method_lines: usize,
    /// Field lines.
    pub fields: usize,
    /// The last `com.android.tools.r8.mapping` version declared, if any.
    pub version: Option<String>,
    /// A declared version newer than [`KNOWN_VERSION`]: its new metadata is not understood.
    pub newer_version: Option<String>,
    /// Metadata comments understood, by id.
    pub metadata: BTreeMap<String, usize>,
    /// Metadata comments with an id this crate does not know (or none), by id: ignored.
    pub unknown_ids: BTreeMap<String, usize>,
    /// Known metadata ignored because the file's declared version predates it (R8's rule:
    /// information of a later version than declared is a plain comment).
    pub ignored_for_version: usize,
    /// `residualsignature` comments whose signature is malformed or of the wrong kind (a field
    /// type under a method): ignored as R8 ignores them; the signature is then computed.
    pub invalid_residual: usize,
}

impl ParseInfo {
    /// Adds the counts of `other` (versions: `self`'s kept).
    pub(crate) fn add(&mut self, other: &ParseInfo) {
        self.classes += other.classes;
        self.method_lines += other.method_lines;
        self.fields += other.fields;
        for (k, n) in &other.metadata {
            *self.metadata.entry(k.clone()).or_default() += n;
        }
        for (k, n) in &other.unknown_ids {
            *self.unknown_ids.entry(k.clone()).or_default() += n;
        }
        self.ignored_for_version += other.ignored_for_version;
        self.invalid_residual += other.invalid_residual;
    }
}

/// Names → indices into a list whose items' names are spans of the mapping's text (classes by
/// obfuscated name, a class's obfuscated member names): an open-addressing table of indices.
/// Neither a large app's tens of thousands of class names nor member names are copied, and a
/// lookup compares bytes in place.
#[derive(Debug, Default)]
pub(crate) struct SpanIndex {
    /// A power of two of slots, at most half full: the high half of the name's hash, and
    /// item + 1 (0 for an empty slot). Probes compare names only when the hashes agree, and
    /// growing hashes nothing again.
    slots: Vec<(u32, u32)>,
    len: usize,
}

impl SpanIndex {
    /// An index for about `n` items.
    pub fn with_capacity(n: usize) -> SpanIndex {
        SpanIndex {
            slots: vec![(0, 0); (n * 2).next_power_of_two().max(8)],
            len: 0,
        }
    }

    #[inline]
    fn hash(name: &str) -> u32 {
        let mut h = Fx::default();
        h.write(name.as_bytes());
        // The multiply leaves its entropy in the high bits.
        (h.finish() >> 32) as u32
    }

    /// The slot of `name` (hashing to `h`): `Ok` with its item, or `Err` with the empty slot
    /// it would take.
    #[inline]
    fn slot<'t>(&self, name: &str, h: u32, key: impl Fn(u32) -> &'t str) -> Result<u32, usize> {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        loop {
            match self.slots[i] {
                (_, 0) => return Err(i),
                (kh, k) if kh == h && same(key(k - 1), name) => return Ok(k - 1),
                _ => i = (i + 1) & mask,
            }
        }
    }

    /// The item named `name`; `key` gives an item's name.
    #[inline]
    pub fn get<'t>(&self, name: &str, key: impl Fn(u32) -> &'t str) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        self.slot(name, Self::hash(name), key).ok()
    }

    /// Adds `item`, named `key(item)`; `Err` with the item that already has its name.
    pub fn insert<'t>(&mut self, item: u32, key: impl Fn(u32) -> &'t str) -> Result<(), u32> {
        if (self.len + 1) * 2 > self.slots.len() {
            let mut grown = SpanIndex::with_capacity(self.slots.len());
            let mask = grown.slots.len() - 1;
            for &(h, k) in self.slots.iter().filter(|s| s.1 != 0) {
                let mut i = h as usize & mask;
                while grown.slots[i].1 != 0 {
                    i = (i + 1) & mask;
                }
                grown.slots[i] = (h, k);
            }
            grown.len = self.len;
            *self = grown;
        }
        let name = key(item);
        let h = Self::hash(name);
        match self.slot(name, h, &key) {
            Ok(first) => Err(first),
            Err(free) => {
                self.slots[free] = (h, item + 1);
                self.len += 1;
                Ok(())
            }
        }
    }
}

/// `a == b` for the short strings names and types are, without a call to `memcmp`: its
/// small-size path (masked vector loads) costs more here than the comparison itself, even for
/// the empty array suffixes most types have.
#[inline]
pub(crate) fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        if x != y {
            return false;
        }
    }
    ca.remainder()
        .iter()
        .zip(cb.remainder())
        .all(|(x, y)| x == y)
}

impl std::fmt::Debug for Mapping {
    /// The file and its size, not its text (tens of MB for a large app).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapping")
            .field("file", &self.file)
            .field("bytes", &self.size)
            .field("classes", &self.classes.len())
            .finish_non_exhaustive()
    }
}

impl Mapping {
    /// What the parser found besides the names (member lines: of the classes used so far, or
    /// of all after [`Mapping::check`]).
    pub fn info(&self) -> ParseInfo {
        let mut info = self.info.clone();
        for c in self
            .classes
            .iter()
            .filter(|c| c.used.load(Ordering::Relaxed))
        {
            if let Some(Ok(body)) = c.body.get() {
                info.add(&body.info);
            }
        }
        info
    }

    /// The original name of an obfuscated class, if the mapping has the class.
    pub fn class(&self, obfuscated: &str) -> Option<&str> {
        self.class_index(obfuscated)
            .map(|i| self.classes[i as usize].original.get(&self.names))
    }

    /// The index of the class whose obfuscated name is `obfuscated`.
    pub(crate) fn class_index(&self, obfuscated: &str) -> Option<u32> {
        self.by_obfuscated.get(obfuscated, |i| {
            self.classes[i as usize].obfuscated.get(&self.names)
        })
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.classes.len()
    }
}
