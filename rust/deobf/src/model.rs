//! A mapping file held as read, indexed by class: a class's member lines are parsed the first
//! time a name of that class is looked up.
//!
//! Why lazily: a large app's mapping is tens of MB (hundreds of thousands of member lines)
//! while a trace names a few thousand methods of a few hundred classes. Parsing every member
//! line would cost more than exporting a 32 MiB ring (docs/deobfuscation.md, "Cost"); finding
//! the class lines costs a scan for line ends. Every class line and every line before the
//! first class is checked when the file is read; a member line when its class is first used
//! ([`Mapping::check`] checks them all).

use std::collections::{BTreeMap, HashMap};
use std::sync::OnceLock;

use crate::hash::FxBuild;

/// The newest mapping-file version whose additional information this crate knows (R8's
/// `# {"id":"com.android.tools.r8.mapping","version":"2.2"}`). A file declaring a newer one
/// is read (its unknown metadata ignored) and [`ParseInfo::newer_version`] says so.
pub const KNOWN_VERSION: &str = "2.2";

/// A byte range of the mapping's text.
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

    pub fn get(self, text: &str) -> &str {
        &text[self.start as usize..(self.start + self.len) as usize]
    }
}

/// A ProGuard / R8 mapping file, ready for lookups.
pub struct Mapping {
    /// The file's name, for errors.
    pub(crate) file: String,
    pub(crate) text: String,
    pub(crate) classes: Vec<Class>,
    /// Obfuscated class name → index into `classes`.
    pub(crate) by_obfuscated: HashMap<Box<str>, u32, FxBuild>,
    /// What the index pass found (class lines, versions, metadata before the first class).
    pub(crate) info: ParseInfo,
}

/// A class line and the lines under it.
#[derive(Debug)]
pub(crate) struct Class {
    pub original: Span,
    /// 1-based line number of the class line.
    pub line: u32,
    /// The lines under it: from the next line to the next class line.
    pub section: Span,
    /// The mapping version in effect at the class line.
    pub version: (u32, u32),
    /// Its members, parsed on first use (boxed: most classes never are); an error is
    /// (line, what).
    pub body: OnceLock<Result<Box<Body>, (usize, String)>>,
}

/// A class's parsed member lines.
#[derive(Debug, Default)]
pub(crate) struct Body {
    /// Method lines in file order.
    pub methods: Vec<MethodLine>,
    /// Indices into `methods`, sorted by obfuscated name, file order within a name.
    pub by_name: Vec<u32>,
    /// Obfuscated name → its range of `by_name`.
    pub names: HashMap<Box<str>, (u32, u32), FxBuild>,
    /// Valid residual signatures (parameter types, return type), Java source names: what
    /// [`MethodLine::residual`] indexes.
    pub residuals: Vec<(Vec<String>, String)>,
    /// R8's `synthesized` under the class line.
    pub synthesized: bool,
    /// What its lines held besides members.
    pub info: ParseInfo,
}

/// One method line, as spans of the text, and the metadata under it.
#[derive(Clone, Copy, Debug)]
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

impl std::fmt::Debug for Mapping {
    /// The file and its size, not its text (tens of MB for a large app).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapping")
            .field("file", &self.file)
            .field("bytes", &self.text.len())
            .field("classes", &self.classes.len())
            .finish_non_exhaustive()
    }
}

impl Mapping {
    /// What the parser found besides the names (member lines: of the classes used so far, or
    /// of all after [`Mapping::check`]).
    pub fn info(&self) -> ParseInfo {
        let mut info = self.info.clone();
        for c in &self.classes {
            if let Some(Ok(body)) = c.body.get() {
                info.add(&body.info);
            }
        }
        info
    }

    /// The original name of an obfuscated class, if the mapping has the class.
    pub fn class(&self, obfuscated: &str) -> Option<&str> {
        self.by_obfuscated
            .get(obfuscated)
            .map(|&i| self.classes[i as usize].original.get(&self.text))
    }

    /// Number of classes.
    pub fn classes(&self) -> usize {
        self.classes.len()
    }
}
