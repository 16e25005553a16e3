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
use std::path::Path;
use std::sync::OnceLock;

use crate::error::MappingError;
use crate::hash::{self, FxBuild};
use crate::json::{self, Value};
use crate::model::{Body, Class, Mapping, MethodLine, ParseInfo, Span, KNOWN_VERSION};
use crate::pretty::{field_descriptor, is_type, method_descriptor, split_array};

const VERSION_ID: &str = "com.android.tools.r8.mapping";

impl Mapping {
    /// Reads a mapping file: its class lines are checked now, each class's member lines when
    /// the class is first used ([`Mapping::check`] checks every line).
    pub fn read(path: &Path) -> Result<Mapping, MappingError> {
        let bytes = std::fs::read(path).map_err(|source| MappingError::Io {
            path: path.to_owned(),
            source,
        })?;
        let file = path.display().to_string();
        let text = String::from_utf8(bytes).map_err(|e| {
            let before = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            MappingError::Syntax {
                file: file.clone(),
                line: before.iter().filter(|&&b| b == b'\n').count() + 1,
                what: "not UTF-8 text (is this a mapping.txt?)".into(),
            }
        })?;
        Mapping::index(file, text)
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

    /// Class `i`'s members, parsed on first use.
    pub(crate) fn body(&self, i: usize) -> Result<&Body, MappingError> {
        let class = &self.classes[i];
        class
            .body
            .get_or_init(|| parse_body(&self.text, class).map(Box::new))
            .as_ref()
            .map(|b| &**b)
            .map_err(|(line, what)| MappingError::Syntax {
                file: self.file.clone(),
                line: *line,
                what: what.clone(),
            })
    }

    /// The first pass: class lines, and everything before the first class.
    fn index(file: String, text: String) -> Result<Mapping, MappingError> {
        let error = |line: usize, what: String| MappingError::Syntax {
            file: file.clone(),
            line,
            what,
        };
        if text.len() > u32::MAX as usize {
            return Err(error(0, "larger than 4 GiB: not a mapping file".into()));
        }
        let mut classes: Vec<Class> = Vec::new();
        let mut by_obfuscated: HashMap<Box<str>, u32, FxBuild> = HashMap::default();
        let mut info = ParseInfo::default();
        let mut version = (0, 0);
        let mut preamble = Metadata::default();
        let mut pos = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let mut n = 0;
        while pos < text.len() {
            let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
            n += 1;
            let raw = &text[pos..end];
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            let next = end + 1;
            match line.as_bytes().first() {
                None => {}
                Some(b' ' | b'\t')
                    if !classes.is_empty() && !line.trim_start().starts_with('#') =>
                {
                    // A member line: read with its class.
                }
                Some(b' ' | b'\t' | b'#') => {
                    let trimmed = line.trim();
                    if let Some(comment) = trimmed.strip_prefix('#') {
                        let comment = comment.trim_start();
                        if classes.is_empty() {
                            // Before any class: read now (nothing later would).
                            if comment.starts_with('{') {
                                preamble
                                    .line(
                                        comment,
                                        &mut version,
                                        Last::Nothing,
                                        &mut Body::default(),
                                    )
                                    .map_err(|w| error(n, w))?;
                            }
                        } else if comment.starts_with('{') && comment.contains(VERSION_ID) {
                            // Applies to the classes that follow; the class's own pass sees it
                            // again for the lines under it.
                            let v = json::parse(comment)
                                .map_err(|e| error(n, format!("metadata comment: {e}")))?;
                            if v.get("id").and_then(Value::as_str) == Some(VERSION_ID) {
                                version =
                                    declared_version(&v, &mut info).map_err(|w| error(n, w))?;
                            }
                        }
                    } else if classes.is_empty() && !trimmed.is_empty() {
                        return Err(error(n, "a member line before any class line".into()));
                    }
                }
                Some(_) => {
                    let (original, obfuscated) = class_line(line).map_err(|w| error(n, w))?;
                    let index = classes.len() as u32;
                    if let Some(&first) = by_obfuscated.get(obfuscated) {
                        let first = &classes[first as usize];
                        return Err(MappingError::DuplicateClass {
                            file: file.clone(),
                            line: n,
                            obfuscated: obfuscated.to_owned(),
                            first: first.original.get(&text).to_owned(),
                            first_line: first.line as usize,
                        });
                    }
                    if let Some(last) = classes.last_mut() {
                        last.section.len = (pos as u32) - last.section.start;
                    }
                    by_obfuscated.insert(obfuscated.into(), index);
                    classes.push(Class {
                        original: Span::of(&text, original),
                        line: n as u32,
                        section: Span {
                            start: next.min(text.len()) as u32,
                            len: 0,
                        },
                        version,
                        body: OnceLock::new(),
                    });
                }
            }
            pos = next;
        }
        if let Some(last) = classes.last_mut() {
            last.section.len = text.len() as u32 - last.section.start;
        }
        info.classes = classes.len();
        // The preamble's counts and versions (its metadata describes no class).
        info.add(&preamble.info);
        if info.version.is_none() {
            info.version = preamble.info.version.clone();
            info.newer_version = preamble.info.newer_version.clone();
        }
        Ok(Mapping {
            file,
            text,
            classes,
            by_obfuscated,
            info,
        })
    }
}

/// `original -> obfuscated:`.
fn class_line(line: &str) -> Result<(&str, &str), String> {
    line.trim_end()
        .strip_suffix(':')
        .and_then(|l| l.split_once(" -> "))
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
        body: &mut Body,
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
fn parse_body(text: &str, class: &Class) -> Result<Body, (usize, String)> {
    let mut body = Body::default();
    let mut meta = Metadata::default();
    let mut version = class.version;
    let mut last = Last::Class;
    let section = class.section.get(text);
    for (i, raw) in section.split('\n').enumerate() {
        let n = class.line as usize + 1 + i;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim_start();
            if comment.starts_with('{') {
                meta.line(comment, &mut version, last, &mut body)
                    .map_err(|w| (n, w))?;
            }
            continue;
        }
        match parse_member(text, line).map_err(|w| (n, w))? {
            Some(m) => {
                meta.info.method_lines += 1;
                body.methods.push(m);
                last = Last::Method(body.methods.len() - 1);
            }
            None => {
                meta.info.fields += 1;
                last = Last::Field;
            }
        }
    }
    let mut by_name: Vec<u32> = (0..body.methods.len() as u32).collect();
    // Stable: file order within a name, which inline groups need.
    by_name.sort_by(|&a, &b| {
        let name = |i: u32| body.methods[i as usize].obfuscated.get(text);
        name(a).cmp(name(b))
    });
    let mut lo = 0;
    while lo < by_name.len() {
        let name = body.methods[by_name[lo] as usize].obfuscated.get(text);
        let mut hi = lo + 1;
        while hi < by_name.len() && body.methods[by_name[hi] as usize].obfuscated.get(text) == name
        {
            hi += 1;
        }
        body.names.insert(name.into(), (lo as u32, hi as u32));
        lo = hi;
    }
    body.by_name = by_name;
    body.info = meta.info;
    Ok(body)
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
    let (left, obfuscated) = line.rsplit_once(" -> ").ok_or_else(expected)?;
    let obfuscated = obfuscated.trim();
    if !is_type(obfuscated) || obfuscated.contains('.') {
        return Err(format!("'{obfuscated}' is not an obfuscated member name"));
    }
    let mut rest = left.trim();
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
    let Some(open) = rest.find('(') else {
        // A field: `type name`.
        return match rest.rsplit_once(' ') {
            Some((ty, name)) if is_type(ty.trim()) && is_type(name) && range.is_none() => Ok(None),
            _ => Err(expected()),
        };
    };
    let close = rest.rfind(')').filter(|&c| c > open).ok_or_else(expected)?;
    let tail = &rest[close + 1..];
    if !tail.is_empty() && !original_lines(tail) {
        return Err(format!(
            "after the arguments, expected `:line` or `:first:last`, found `{}`",
            clip(tail)
        ));
    }
    let (ret, qualified) = rest[..open].trim().rsplit_once(' ').ok_or_else(expected)?;
    let ret = ret.trim();
    if !is_type(ret) || !is_type(qualified) {
        return Err(expected());
    }
    let (class, name) = match qualified.rsplit_once('.') {
        Some((c, m)) if !c.is_empty() && !m.is_empty() => (c, m),
        Some(_) => return Err(expected()),
        None => (&qualified[..0], qualified),
    };
    let args = rest[open + 1..close].trim();
    if !args.is_empty() && args.split(',').any(|a| !is_type(a.trim())) {
        return Err(expected());
    }
    let types = std::iter::once(ret)
        .chain(args.split(',').map(str::trim).filter(|a| !a.is_empty()))
        .map(split_array);
    Ok(Some(MethodLine {
        signature: hash::signature(types),
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
