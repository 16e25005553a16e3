//! Reading `mapping.txt` (ProGuard's format, with R8's extensions):
//!
//! ```text
//! com.example.Foo -> a.b:                        class line: original -> obfuscated
//! # {"id":"sourceFile","fileName":"Foo.kt"}      R8 metadata (JSON in a comment)
//!     int count -> a                             field line
//!     1:3:void run(a.c,int):10:12 -> a           method line: [a:b:]type name(args)[:c[:d]] -> obf
//!     4:4:void com.x.Y.inlined():7:7 -> b        an inline group: one minified range, the
//!     4:4:int caller():20 -> b                   innermost frame first, the outermost last
//!     # {"id":"com.android.tools.r8.residualsignature","signature":"(La/c;I)V"}
//! ```
//!
//! Two passes ([`crate::model`] says why): reading the file finds and checks the class lines
//! (and the lines before the first class, and version declarations); a class's own lines are
//! parsed when it is first used. Either way a line that does not parse is an error naming the
//! file and line. Metadata R8 defines is checked where it matters; ids this crate does not
//! know are counted and ignored, and so is known metadata the file's declared version
//! predates (R8's rule, doc/retrace.md).

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use crate::error::{BodyError, MappingError};
use crate::hash::{self, FxBuild};
use crate::json::{self, Value};
use crate::model::{
    Body, Candidate, Class, Mapping, MethodLine, Named, ParseInfo, Section, Source, Span,
    SpanIndex, KNOWN_VERSION,
};
use crate::pretty::{
    field_descriptor, is_ascii_space, is_type, method_descriptor, split_array, trim,
};

const VERSION_ID: &str = "com.android.tools.r8.mapping";

impl Mapping {
    /// Reads a mapping file: its class lines are checked now, each class's member lines when
    /// the class is first used ([`Mapping::check`] checks every line).
    ///
    /// A regular file is read through a small buffer and only its class lines are kept; a
    /// class's member lines are read again from the file when the class is first used. A large
    /// app's mapping is tens of MB of which a trace needs a few hundred classes: holding it all
    /// would cost more (fresh memory for every page) than reading it. The file must not change
    /// while the mapping is in use. Anything else (a pipe) is read whole.
    pub fn read(path: &Path) -> Result<Mapping, MappingError> {
        let io = |source| MappingError::Io {
            path: path.to_owned(),
            source,
        };
        let name = path.display().to_string();
        let mut file = std::fs::File::open(path).map_err(io)?;
        #[cfg(unix)]
        if file.metadata().map_err(io)?.is_file() {
            return Mapping::stream(name, path, file);
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let before = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            not_utf8(&name, lines(before) + 1)
        })?;
        Mapping::index(name, text)
    }

    /// Parses the text of a mapping file and checks every line; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Mapping, MappingError> {
        let m = Mapping::index(file.to_owned(), text.to_owned())?;
        m.check()?;
        Ok(m)
    }

    /// Parses every class's member lines not parsed yet: the first bad line is an error.
    pub fn check(&self) -> Result<(), MappingError> {
        for i in 0..self.classes.len() {
            self.body(i)?;
        }
        Ok(())
    }

    /// Parses the member lines of the classes not parsed yet, in file order, until `stop` is
    /// set or `budget` bytes of them are parsed: work for an idle core while the traces are
    /// read, so that the classes they name are ready (all of them, for a mapping of about the
    /// budget's size; for a large app's, mostly classes no trace names, hence the budget). A
    /// class parsed here counts in [`Mapping::info`] (and its error is reported) only once a
    /// name is looked up in it, as if it had been parsed then.
    pub fn prefetch(&self, stop: &AtomicBool, budget: u64) {
        let mut parsed = 0;
        for class in &self.classes {
            if stop.load(Ordering::Relaxed) || parsed >= budget {
                return;
            }
            class.body.get_or_init(|| self.parse_class(class));
            parsed += u64::from(class.section.len);
        }
    }

    /// Class `i`'s members, parsed on first use.
    pub(crate) fn body(&self, i: usize) -> Result<&Body, MappingError> {
        let class = &self.classes[i];
        if !class.used.load(Ordering::Relaxed) {
            class.used.store(true, Ordering::Relaxed);
        }
        match class.body.get_or_init(|| self.parse_class(class)) {
            Ok(body) => Ok(body),
            Err(BodyError::Syntax(line, what)) => Err(MappingError::Syntax {
                file: self.file.clone(),
                line: *line,
                what: what.clone(),
            }),
            Err(BodyError::Io(kind, what)) => Err(MappingError::Io {
                path: match &self.source {
                    #[cfg(unix)]
                    Source::File { path, .. } => path.clone(),
                    Source::Text(_) => self.file.clone().into(),
                },
                source: std::io::Error::new(*kind, what.clone()),
            }),
        }
    }

    /// A class's member lines, read (from the file, if they are not at hand) and parsed.
    fn parse_class(&self, class: &Class) -> Result<Box<Body>, BodyError> {
        let (start, len) = (class.section.start, class.section.len as usize);
        let text: Box<str> = match &self.source {
            Source::Text(text) => text[start as usize..start as usize + len].into(),
            #[cfg(unix)]
            Source::File { file, stamp, .. } => {
                use std::os::unix::fs::FileExt;
                let changed = || {
                    BodyError::Io(
                        std::io::ErrorKind::InvalidData,
                        "the file changed while it was in use".into(),
                    )
                };
                let now = file
                    .metadata()
                    .map_err(|e| BodyError::Io(e.kind(), e.to_string()))?;
                if (now.len(), now.modified().ok()) != *stamp {
                    return Err(changed());
                }
                let mut bytes = vec![0; len];
                file.read_exact_at(&mut bytes, start)
                    .map_err(|e| BodyError::Io(e.kind(), e.to_string()))?;
                String::from_utf8(bytes).map_err(|_| changed())?.into()
            }
        };
        parse_body(text, class).map(Box::new)
    }

    /// The first pass over a whole text: class lines, and everything before the first class.
    fn index(file: String, text: String) -> Result<Mapping, MappingError> {
        if text.len() > u32::MAX as usize {
            return Err(too_large(&file));
        }
        let mut ix = Indexer::new(file, text.len());
        let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
        ix.lines(&text, bom, 0, true)?;
        Ok(ix.finish(text.len() as u64, Source::Text(text)))
    }

    /// [`Mapping::index`] of a file read through a small buffer, keeping its class lines
    /// only. Errors are those of the whole text: first text that is not UTF-8 anywhere, then
    /// the size, then the first bad line.
    #[cfg(unix)]
    fn stream(name: String, path: &Path, mut file: std::fs::File) -> Result<Mapping, MappingError> {
        let io = |source| MappingError::Io {
            path: path.to_owned(),
            source,
        };
        let meta = file.metadata().map_err(io)?;
        let (size, modified) = (meta.len(), meta.modified().ok());
        let mut ix = Indexer::new(name.clone(), size as usize);
        let mut buf = vec![0u8; 1 << 18];
        // Bytes in `buf`, and the file offset of `buf[0]`.
        let (mut filled, mut offset) = (0, 0u64);
        // Lines before `buf[0]`, while indexing has stopped at a bad line.
        let mut failed: Option<(MappingError, usize)> = None;
        loop {
            if filled == buf.len() {
                // A line longer than the buffer.
                buf.resize(buf.len() * 2, 0);
            }
            let n = match file.read(&mut buf[filled..]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io(e)),
            };
            filled += n;
            let eof = n == 0;
            // Whole lines only (a line end is never inside a UTF-8 character).
            let upto = match memchr::memrchr(b'\n', &buf[..filled]) {
                _ if eof => filled,
                Some(i) => i + 1,
                None => continue,
            };
            let before = match &failed {
                Some((_, before)) => *before,
                None => ix.lines,
            };
            let chunk = std::str::from_utf8(&buf[..upto])
                .map_err(|e| not_utf8(&name, before + lines(&buf[..e.valid_up_to()]) + 1))?;
            match &mut failed {
                Some((_, before)) => *before += lines(chunk.as_bytes()),
                None => {
                    let bom = if offset == 0 && chunk.starts_with('\u{feff}') {
                        3
                    } else {
                        0
                    };
                    if let Err(e) = ix.lines(chunk, bom, offset, eof) {
                        // The lines before the bad one, and the line ends from it on.
                        let after = lines(&chunk.as_bytes()[ix.at..]);
                        failed = Some((e, ix.lines - 1 + after));
                    }
                }
            }
            buf.copy_within(upto..filled, 0);
            filled -= upto;
            offset += upto as u64;
            if eof {
                break;
            }
        }
        if offset > u64::from(u32::MAX) {
            return Err(too_large(&name));
        }
        if let Some((e, _)) = failed {
            return Err(e);
        }
        let path = path.to_owned();
        let stamp = (size, modified);
        Ok(ix.finish(offset, Source::File { file, path, stamp }))
    }
}

fn not_utf8(file: &str, line: usize) -> MappingError {
    MappingError::Syntax {
        file: file.to_owned(),
        line,
        what: "not UTF-8 text (is this a mapping.txt?)".into(),
    }
}

fn too_large(file: &str) -> MappingError {
    MappingError::Syntax {
        file: file.to_owned(),
        line: 0,
        what: "larger than 4 GiB: not a mapping file".into(),
    }
}

/// Line ends in `b`.
fn lines(b: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', b).count()
}

/// The first pass, over the text in pieces of whole lines: class lines are checked and kept,
/// with where their member lines are; everything before the first class is read.
struct Indexer {
    file: String,
    /// The classes' names, which their spans index.
    names: String,
    classes: Vec<Class>,
    by_obfuscated: SpanIndex,
    info: ParseInfo,
    version: (u32, u32),
    preamble: Metadata,
    /// Lines read.
    lines: usize,
    /// Where in the last piece reading stopped (at a bad line).
    at: usize,
}

impl Indexer {
    /// For a text of about `size` bytes.
    fn new(file: String, size: usize) -> Indexer {
        Indexer {
            file,
            names: String::new(),
            classes: Vec::new(),
            // About one class per 2 KB in the mappings of large apps: grown once or not at all.
            by_obfuscated: SpanIndex::with_capacity((size / 2048).min(1 << 20)),
            info: ParseInfo::default(),
            version: (0, 0),
            preamble: Metadata::default(),
            lines: 0,
            at: 0,
        }
    }

    /// The lines of `text` from `pos`, which is at file offset `offset`; the last one without
    /// its line end if `last`.
    fn lines(
        &mut self,
        text: &str,
        mut pos: usize,
        offset: u64,
        last: bool,
    ) -> Result<(), MappingError> {
        // Nearly every line of a large mapping is a member line, skipped here on its first
        // bytes: finding the line ends is most of this pass.
        let bytes = text.as_bytes();
        let from = pos;
        let mut ends = memchr::memchr_iter(b'\n', &bytes[from..]).map(|i| i + from);
        while pos < text.len() {
            let end = match ends.next() {
                Some(end) => end,
                None if last => text.len(),
                None => break,
            };
            self.lines += 1;
            if self.classes.is_empty() || !is_member(&bytes[pos..end]) {
                self.at = pos;
                let next = offset + end as u64 + 1;
                self.line(&text[pos..end], offset + pos as u64, next)?;
            }
            pos = end + 1;
        }
        Ok(())
    }

    /// One line (without its line end) that starts at file offset `start`; the next starts
    /// at `next`.
    fn line(&mut self, raw: &str, start: u64, next: u64) -> Result<(), MappingError> {
        let n = self.lines;
        let error = |line: usize, what: String| MappingError::Syntax {
            file: self.file.clone(),
            line,
            what,
        };
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        match line.as_bytes().first() {
            None => {}
            Some(b' ' | b'\t') if !self.classes.is_empty() && !is_comment(line) => {
                // A member line: read with its class.
            }
            Some(b' ' | b'\t' | b'#') => {
                let trimmed = line.trim();
                if let Some(comment) = trimmed.strip_prefix('#') {
                    let comment = comment.trim_start();
                    if self.classes.is_empty() {
                        // Before any class: read now (nothing later would).
                        if comment.starts_with('{') {
                            self.preamble
                                .line(
                                    comment,
                                    &mut self.version,
                                    Last::Nothing,
                                    &mut Members::default(),
                                )
                                .map_err(|w| error(n, w))?;
                        }
                    } else if comment.starts_with('{') && comment.contains(VERSION_ID) {
                        // Applies to the classes that follow; the class's own pass sees it
                        // again for the lines under it.
                        let v = json::parse(comment)
                            .map_err(|e| error(n, format!("metadata comment: {e}")))?;
                        if v.get("id").and_then(Value::as_str) == Some(VERSION_ID) {
                            self.version =
                                declared_version(&v, &mut self.info).map_err(|w| error(n, w))?;
                        }
                    }
                } else if self.classes.is_empty() && !trimmed.is_empty() {
                    return Err(error(n, "a member line before any class line".into()));
                }
            }
            Some(_) => {
                let (original, obfuscated) = class_line(line).map_err(|w| error(n, w))?;
                let index = self.classes.len() as u32;
                if let Some(last) = self.classes.last_mut() {
                    last.section.len = (start - last.section.start) as u32;
                }
                let mut keep = |name: &str| {
                    let span = Span {
                        start: self.names.len() as u32,
                        len: name.len() as u32,
                    };
                    self.names.push_str(name);
                    span
                };
                let (original, obfuscated) = (keep(original), keep(obfuscated));
                self.classes.push(Class {
                    original,
                    obfuscated,
                    line: n as u32,
                    section: Section {
                        start: next,
                        len: 0,
                    },
                    version: self.version,
                    body: OnceLock::new(),
                    used: AtomicBool::new(false),
                });
                let (names, classes) = (&self.names, &self.classes);
                let key = |i: u32| classes[i as usize].obfuscated.get(names);
                if let Err(first) = self.by_obfuscated.insert(index, key) {
                    let first = &classes[first as usize];
                    return Err(MappingError::DuplicateClass {
                        file: self.file.clone(),
                        line: n,
                        obfuscated: obfuscated.get(names).to_owned(),
                        first: first.original.get(names).to_owned(),
                        first_line: first.line as usize,
                    });
                }
            }
        }
        Ok(())
    }

    /// The mapping of a text of `size` bytes, its member lines in `source`.
    fn finish(mut self, size: u64, source: Source) -> Mapping {
        for c in &mut self.classes {
            // A last class line without a line end.
            c.section.start = c.section.start.min(size);
        }
        if let Some(last) = self.classes.last_mut() {
            last.section.len = (size - last.section.start) as u32;
        }
        let mut info = self.info;
        info.classes = self.classes.len();
        // The preamble's counts and versions (its metadata describes no class).
        info.add(&self.preamble.info);
        if info.version.is_none() {
            info.version = self.preamble.info.version.clone();
            info.newer_version = self.preamble.info.newer_version.clone();
        }
        Mapping {
            file: self.file,
            names: self.names,
            source,
            size,
            classes: self.classes,
            by_obfuscated: self.by_obfuscated,
            info,
        }
    }
}

/// Whether a line is plainly a member line: indented, and its first other character plain
/// ASCII and no `#` (anything else is left to [`is_comment`]).
#[inline]
fn is_member(line: &[u8]) -> bool {
    match line.first() {
        Some(b' ' | b'\t') => {}
        _ => return false,
    }
    match line.iter().find(|&&c| c != b' ' && c != b'\t') {
        Some(&c) => c.is_ascii() && !is_ascii_space(c) && c != b'#',
        None => false,
    }
}

/// Whether an indented line (its `\r` stripped) is a comment: `line.trim_start()` starts with
/// `#`, decided on the first bytes unless they are not plain ASCII.
fn is_comment(line: &str) -> bool {
    let b = line.as_bytes();
    let i = b.iter().position(|&c| c != b' ' && c != b'\t');
    match i.map(|i| b[i]) {
        None => false,
        Some(c) if c.is_ascii() && !is_ascii_space(c) => c == b'#',
        Some(_) => line.trim_start().starts_with('#'),
    }
}

/// `left -> right`, split at the first ` -> `.
fn split_first_arrow(line: &str) -> Option<(&str, &str)> {
    let b = line.as_bytes();
    let mut from = 0;
    while let Some(i) = b[from..].iter().position(|&c| c == b'>').map(|i| from + i) {
        if i >= 2 && i + 1 < b.len() && &b[i - 2..i + 2] == b" -> " {
            return Some((&line[..i - 2], &line[i + 2..]));
        }
        from = i + 1;
    }
    None
}

/// `original -> obfuscated:`.
fn class_line(line: &str) -> Result<(&str, &str), String> {
    line.trim_end()
        .strip_suffix(':')
        .and_then(split_first_arrow)
        .map(|(o, r)| (o.trim(), r.trim()))
        .filter(|(o, r)| is_type(o) && is_type(r))
        .ok_or_else(|| {
            format!(
                "expected a class line `original.Name -> obfuscated.Name:` or an indented \
                 member line, found `{}`",
                clip(line)
            )
        })
}

/// The version a `com.android.tools.r8.mapping` comment declares, recorded in `info`.
fn declared_version(v: &Value, info: &mut ParseInfo) -> Result<(u32, u32), String> {
    let s = v
        .get("version")
        .and_then(Value::as_str)
        .ok_or("the mapping version has no \"version\"")?;
    let parsed =
        parse_version(s).ok_or_else(|| format!("mapping version '{s}' is not MAJOR.MINOR"))?;
    info.version = Some(s.to_owned());
    if parsed > parse_version(KNOWN_VERSION).expect("a valid version") {
        info.newer_version = Some(s.to_owned());
    }
    Ok(parsed)
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    if v == "experimental" {
        // R8's in-development format: newer than any numbered version.
        return Some((u32::MAX, 0));
    }
    let (major, minor) = v.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The version each R8 metadata id was introduced at (doc/retrace.md).
fn introduced(id: &str) -> Option<(u32, u32)> {
    Some(match id {
        "com.android.tools.r8.synthesized" => (1, 0),
        "com.android.tools.r8.rewriteFrame"
        | "com.android.tools.r8.outline"
        | "com.android.tools.r8.outlineCallsite" => (2, 0),
        "com.android.tools.r8.residualsignature" => (2, 2),
        _ => return None,
    })
}

/// What the last class or member line was: metadata comments describe it.
#[derive(Clone, Copy)]
enum Last {
    Nothing,
    Class,
    /// Index into the class's method lines.
    Method(usize),
    Field,
}

/// A class's member lines as read, before they are indexed into a [`Body`].
#[derive(Default)]
struct Members {
    methods: Vec<MethodLine>,
    residuals: Vec<(Vec<String>, String)>,
    synthesized: bool,
}

/// Reads metadata comments, counting what it finds.
#[derive(Default)]
struct Metadata {
    info: ParseInfo,
}

impl Metadata {
    /// One `# {...}` comment (the text after `#`) at line `n`, describing `last`.
    fn line(
        &mut self,
        text: &str,
        version: &mut (u32, u32),
        last: Last,
        body: &mut Members,
    ) -> Result<(), String> {
        let value = json::parse(text).map_err(|e| format!("metadata comment: {e}"))?;
        let info = &mut self.info;
        let Some(id) = value.get("id").and_then(Value::as_str) else {
            *info.unknown_ids.entry("(no id)".into()).or_default() += 1;
            return Ok(());
        };
        if let Some(since) = introduced(id) {
            if *version < since {
                info.ignored_for_version += 1;
                return Ok(());
            }
        }
        let string = |key: &str| value.get(key).and_then(Value::as_str);
        match id {
            VERSION_ID => *version = declared_version(&value, info)?,
            "sourceFile" => {
                if !matches!(last, Last::Class) {
                    return Err("sourceFile must come right under its class line".into());
                }
                string("fileName").ok_or("sourceFile without a \"fileName\"")?;
            }
            "com.android.tools.r8.synthesized" => match last {
                Last::Class => body.synthesized = true,
                Last::Method(i) => body.methods[i].synthesized = true,
                Last::Field => {}
                Last::Nothing => return Err("synthesized must come under a class or member".into()),
            },
            "com.android.tools.r8.residualsignature" => {
                let signature = string("signature");
                match last {
                    Last::Method(i) => match signature.and_then(method_descriptor) {
                        Some(sig) => {
                            body.methods[i].residual = Some(body.residuals.len() as u32);
                            body.residuals.push(sig);
                        }
                        None => info.invalid_residual += 1,
                    },
                    Last::Field => {
                        if signature.and_then(field_descriptor).is_none() {
                            info.invalid_residual += 1;
                        }
                    }
                    _ => return Err("residualsignature must come under a member line".into()),
                }
            }
            "com.android.tools.r8.outline" => match last {
                Last::Method(i) => body.methods[i].outline = true,
                _ => return Err("outline must come under a method line".into()),
            },
            "com.android.tools.r8.outlineCallsite" => {
                // Maps positions in an outline to positions of its caller: lines, which method
                // traces do not have. Checked, then without effect.
                if !matches!(last, Last::Method(_)) {
                    return Err("outlineCallsite must come under a method line".into());
                }
                if !matches!(value.get("positions"), Some(Value::Object(_))) {
                    return Err("outlineCallsite without a \"positions\" object".into());
                }
            }
            "com.android.tools.r8.rewriteFrame" => {
                // Rewrites retraced stacks under a thrown exception: no exception here.
                if !matches!(last, Last::Method(_)) {
                    return Err("rewriteFrame must come under a method line".into());
                }
                for key in ["conditions", "actions"] {
                    if !matches!(value.get(key), Some(Value::Array(_))) {
                        return Err(format!("rewriteFrame without a \"{key}\" list"));
                    }
                }
            }
            other => {
                *info.unknown_ids.entry(other.to_owned()).or_default() += 1;
                return Ok(());
            }
        }
        *info.metadata.entry(id.to_owned()).or_default() += 1;
        Ok(())
    }
}

/// The second pass, for one class: its member lines and their metadata.
fn parse_body(section: Box<str>, class: &Class) -> Result<Body, BodyError> {
    let mut members = Members::default();
    let mut meta = Metadata::default();
    let mut version = class.version;
    let mut last = Last::Class;
    let text = &*section;
    let mut n = class.line as usize;
    let mut pos = 0;
    let mut ends = memchr::memchr_iter(b'\n', text.as_bytes());
    while pos <= text.len() {
        let end = ends.next().unwrap_or(text.len());
        n += 1;
        let line = trim(&text[pos..end]);
        pos = end + 1;
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim_start();
            if comment.starts_with('{') {
                meta.line(comment, &mut version, last, &mut members)
                    .map_err(|w| BodyError::Syntax(n, w))?;
            }
            continue;
        }
        match parse_member(text, line).map_err(|w| BodyError::Syntax(n, w))? {
            Some(m) => {
                meta.info.method_lines += 1;
                members.methods.push(m);
                last = Last::Method(members.methods.len() - 1);
            }
            None => {
                meta.info.fields += 1;
                last = Last::Field;
            }
        }
    }
    let mut body = index_members(text, &members);
    body.text = section;
    body.residuals = members.residuals;
    body.synthesized = members.synthesized;
    body.info = meta.info;
    Ok(body)
}

/// Indexes a class's method lines by obfuscated name and, within a name, by the hash of the
/// signature the runtime prints for each candidate.
fn index_members(text: &str, members: &Members) -> Body {
    let lines = &members.methods;
    // The lines of each name in file order (which inline groups need): a counting sort by
    // name.
    let mut ids: HashMap<&str, u32, FxBuild> = HashMap::default();
    let mut id_of = Vec::with_capacity(lines.len());
    let mut counts: Vec<u32> = Vec::new();
    for l in lines {
        let next = ids.len() as u32;
        let id = *ids.entry(l.obfuscated.get(text)).or_insert(next);
        if id == next {
            counts.push(0);
        }
        counts[id as usize] += 1;
        id_of.push(id);
    }
    let mut start: Vec<u32> = Vec::with_capacity(counts.len() + 1);
    let mut sum = 0;
    for c in &counts {
        start.push(sum);
        sum += c;
    }
    start.push(sum);
    let mut fill = start.clone();
    let mut by_name = vec![0u32; lines.len()];
    for (i, &id) in id_of.iter().enumerate() {
        by_name[fill[id as usize] as usize] = i as u32;
        fill[id as usize] += 1;
    }
    let mut body = Body {
        names: SpanIndex::with_capacity(ids.len()),
        ..Body::default()
    };
    for (name, id) in ids {
        let named = &by_name[start[id as usize] as usize..start[id as usize + 1] as usize];
        let lo = body.candidates.len();
        let residual = candidates(text, lines, named, &mut body.candidates);
        let hi = body.candidates.len();
        for (k, c) in body.candidates[lo..hi].iter().enumerate() {
            let key = match c.residual {
                // The runtime prints the residual signature itself.
                Some(r) => {
                    let (params, ret) = &members.residuals[r as usize];
                    hash::signature(
                        std::iter::once(ret.as_str())
                            .chain(params.iter().map(String::as_str))
                            .map(split_array),
                    )
                }
                None => c.frame.signature,
            };
            body.keyed.push((key, (lo + k) as u32));
        }
        body.keyed[lo..hi].sort_unstable();
        body.named.push(Named {
            name: Span::of(text, name),
            lo: lo as u32,
            hi: hi as u32,
            residual,
        });
        let named = &body.named;
        // Names are unique here (one entry per name).
        let _ = body
            .names
            .insert(named.len() as u32 - 1, |i| named[i as usize].name.get(text));
    }
    body
}

/// The candidates behind one obfuscated name (`lines[i]` for `i` in `named`, file order),
/// appended to `out` in file order: per run of lines with one minified range (an inline group,
/// innermost frame first) its last line, the method the runtime entered; a line without a
/// range alone. An original method met in several groups has the residual signature of its
/// first (R8 writes it under the first occurrence only). Whether any has a residual signature.
fn candidates(text: &str, lines: &[MethodLine], named: &[u32], out: &mut Vec<Candidate>) -> bool {
    let lo = out.len();
    let mut i = 0;
    while i < named.len() {
        let first = &lines[named[i] as usize];
        let mut j = i + 1;
        while j < named.len()
            && first.range.is_some()
            && lines[named[j] as usize].range == first.range
        {
            j += 1;
        }
        let group = || named[i..j].iter().map(|&k| &lines[k as usize]);
        out.push(Candidate {
            frame: lines[named[j - 1] as usize],
            residual: group().find_map(|l| l.residual),
            synthesized: group().any(|l| l.synthesized),
            outline: group().any(|l| l.outline),
        });
        i = j;
    }
    let all = &mut out[lo..];
    if !all.iter().any(|c| c.residual.is_some()) {
        return false;
    }
    // Rare (R8 2.2 files, signatures R8 changed): share each method's residual signature.
    for k in 0..all.len() {
        if all[k].residual.is_none() {
            all[k].residual = all
                .iter()
                .find(|c| c.residual.is_some() && same_frame(text, &c.frame, &all[k].frame))
                .and_then(|c| c.residual);
        }
    }
    true
}

/// Whether two lines name the same original method.
pub(crate) fn same_frame(text: &str, a: &MethodLine, b: &MethodLine) -> bool {
    [
        (a.ret, b.ret),
        (a.class, b.class),
        (a.name, b.name),
        (a.args, b.args),
    ]
    .iter()
    .all(|(x, y)| x.get(text) == y.get(text))
}

/// `left -> right`, split at the last ` -> `.
fn split_arrow(line: &str) -> Option<(&str, &str)> {
    let b = line.as_bytes();
    let mut end = b.len();
    while let Some(i) = b[..end].iter().rposition(|&c| c == b'>') {
        if i >= 2 && i + 1 < b.len() && &b[i - 2..i + 2] == b" -> " {
            return Some((&line[..i - 2], &line[i + 2..]));
        }
        end = i;
    }
    None
}

/// Parses a member line (trimmed, a subslice of `text`): a method's spans, or `None` for a
/// field.
fn parse_member(text: &str, line: &str) -> Result<Option<MethodLine>, String> {
    let expected = || {
        format!(
            "expected a member line `[a:b:]type name(args)[:c[:d]] -> obfuscated` or \
             `type name -> obfuscated`, found `{}`",
            clip(line)
        )
    };
    let (left, obfuscated) = split_arrow(line).ok_or_else(expected)?;
    let obfuscated = trim(obfuscated);
    if !is_type(obfuscated) || obfuscated.contains('.') {
        return Err(format!("'{obfuscated}' is not an obfuscated member name"));
    }
    let mut rest = trim(left);
    let mut range = None;
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        let (a, r) = number_colon(rest).ok_or_else(expected)?;
        if r.starts_with(|c: char| c.is_ascii_digit()) {
            let (b, r) = number_colon(r).ok_or_else(expected)?;
            range = Some((a, b));
            rest = r;
        } else {
            range = Some((a, a));
            rest = r;
        }
    }
    let Some(open) = rest.bytes().position(|b| b == b'(') else {
        // A field: `type name`.
        return match rest.rsplit_once(' ') {
            Some((ty, name)) if is_type(ty.trim()) && is_type(name) && range.is_none() => Ok(None),
            _ => Err(expected()),
        };
    };
    let close = rest
        .bytes()
        .rposition(|b| b == b')')
        .filter(|&c| c > open)
        .ok_or_else(expected)?;
    let tail = &rest[close + 1..];
    if !tail.is_empty() && !original_lines(tail) {
        return Err(format!(
            "after the arguments, expected `:line` or `:first:last`, found `{}`",
            clip(tail)
        ));
    }
    let head = trim(&rest[..open]);
    let space = head.bytes().rposition(|b| b == b' ').ok_or_else(expected)?;
    let (ret, qualified) = (&head[..space], &head[space + 1..]);
    let ret = trim(ret);
    if !is_type(ret) || !is_type(qualified) {
        return Err(expected());
    }
    let (class, name) = match qualified.bytes().rposition(|b| b == b'.') {
        Some(dot) if dot > 0 && dot + 1 < qualified.len() => {
            (&qualified[..dot], &qualified[dot + 1..])
        }
        Some(_) => return Err(expected()),
        None => (&qualified[..0], qualified),
    };
    let args = trim(&rest[open + 1..close]);
    let mut bad = false;
    let types = std::iter::once(ret)
        .chain(
            args.split(',')
                .map(|a| {
                    let a = trim(a);
                    bad |= !args.is_empty() && !is_type(a);
                    a
                })
                .filter(|a| !a.is_empty()),
        )
        .map(split_array);
    let signature = hash::signature(types);
    if bad {
        return Err(expected());
    }
    Ok(Some(MethodLine {
        signature,
        obfuscated: Span::of(text, obfuscated),
        ret: Span::of(text, ret),
        class: Span::of(text, class),
        name: Span::of(text, name),
        args: Span::of(text, args),
        range,
        residual: None,
        synthesized: false,
        outline: false,
    }))
}

/// `123:` at the start of `s`: the number and the rest.
fn number_colon(s: &str) -> Option<(u32, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let n = s[..digits].parse().ok()?;
    let rest = s[digits..].strip_prefix(':')?;
    Some((n, rest))
}

/// `:c` or `:c:d` (original line numbers).
fn original_lines(s: &str) -> bool {
    let mut parts = s.split(':');
    parts.next() == Some("")
        && parts.clone().count() <= 2
        && parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// The start of a long line, for an error message.
fn clip(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}
