//! Deobfuscating names: class by obfuscated name, method by obfuscated name *and* residual
//! signature, types through the class mapping.

use std::collections::BTreeMap;

use crate::error::MappingError;
use crate::hash;
use crate::model::{Mapping, MethodLine};
use crate::pretty::{is_primitive, split_array, PrettyMethod};

/// How a name was resolved, from harmless to worth a warning (the order combines the parts
/// of an aliased name `A | B`: the worst part counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    /// Not a Java method name (a pointer, a runtime method): left as it is.
    NotAMethod,
    /// Its class is not in the mapping and does not look obfuscated (framework and library
    /// classes, which the shrinker never sees): left as it is but for its types.
    NotInMapping,
    /// Mapped to exactly one original method.
    Deobfuscated,
    /// Several original methods fit its class, name and signature: every one printed,
    /// `A | B`.
    Ambiguous,
    /// Its class is in the mapping, its method name is not: class and types mapped, the
    /// method name kept.
    MemberUnknown,
    /// Its class and name are in the mapping but no candidate has its signature (a
    /// signature-changing optimization the mapping does not record, or another build's
    /// mapping): class and types mapped, the method name kept.
    SignatureMismatch,
    /// Its class looks obfuscated but is not in the mapping (another build's mapping?): left
    /// exactly as it is.
    ClassUnknown,
}

impl Kind {
    /// Every kind, in order.
    pub const ALL: [Kind; KINDS] = [
        Kind::NotAMethod,
        Kind::NotInMapping,
        Kind::Deobfuscated,
        Kind::Ambiguous,
        Kind::MemberUnknown,
        Kind::SignatureMismatch,
        Kind::ClassUnknown,
    ];

    /// Whether the name was kept (partly) obfuscated for a reason a user should hear about.
    pub fn is_warning(self) -> bool {
        matches!(
            self,
            Kind::MemberUnknown | Kind::SignatureMismatch | Kind::ClassUnknown
        )
    }

    /// Whether its class was found in the mapping.
    pub fn class_found(self) -> bool {
        matches!(
            self,
            Kind::Deobfuscated | Kind::Ambiguous | Kind::MemberUnknown | Kind::SignatureMismatch
        )
    }
}

/// A deobfuscated name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolution {
    /// The name to print.
    pub name: String,
    pub kind: Kind,
    /// R8 marks the method (or its class) as made by the compiler: not in the source.
    pub synthesized: bool,
    /// R8 marks the method as an outline (code shared by several methods).
    pub outline: bool,
}

/// Counts of how the names of a trace (or many) were resolved, with one example of each kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    counts: [usize; KINDS],
    /// The first name (as in the trace) of each kind.
    examples: [Option<String>; KINDS],
}

/// Number of [`Kind`]s.
const KINDS: usize = Kind::ClassUnknown as usize + 1;

impl Report {
    /// Counts one resolution of `original`.
    pub fn add(&mut self, original: &str, r: &Resolution) {
        let k = r.kind as usize;
        self.counts[k] += 1;
        if self.examples[k].is_none() {
            self.examples[k] = Some(original.to_owned());
        }
    }

    /// Names of this kind.
    pub fn count(&self, kind: Kind) -> usize {
        self.counts[kind as usize]
    }

    /// The first name of this kind, as in the trace.
    pub fn example(&self, kind: Kind) -> Option<&str> {
        self.examples[kind as usize].as_deref()
    }

    /// All names counted.
    pub fn names(&self) -> usize {
        self.counts.iter().sum()
    }

    /// Names whose class the mapping has.
    pub fn class_found(&self) -> usize {
        self.kinds(Kind::class_found)
    }

    /// Names kept (partly) obfuscated for a reason worth a warning.
    pub fn warnings(&self) -> usize {
        self.kinds(Kind::is_warning)
    }

    fn kinds(&self, f: fn(Kind) -> bool) -> usize {
        Kind::ALL
            .iter()
            .filter(|&&k| f(k))
            .map(|&k| self.count(k))
            .sum()
    }

    /// Adds another report's counts (examples: the first kept).
    pub fn merge(&mut self, other: &Report) {
        for k in 0..KINDS {
            self.counts[k] += other.counts[k];
            if self.examples[k].is_none() {
                self.examples[k] = other.examples[k].clone();
            }
        }
    }
}

/// Whether a class name looks like a shrinker's: its top-level simple name (after the last
/// `.`, before any `$`) is at most three letters or digits, starting with a letter (`a`, `Ab`,
/// `a0b`; ProGuard and R8 name classes `a`, `b`, … `aa`, … in that style). A heuristic, used
/// only to tell "not in the mapping because it is framework code" from "not in the mapping
/// because the mapping is another build's": it decides warnings, never a name.
pub fn looks_obfuscated(class: &str) -> bool {
    let simple = class.rsplit('.').next().unwrap_or(class);
    let top = simple.split('$').next().unwrap_or(simple);
    (1..=3).contains(&top.len())
        && top.starts_with(|c: char| c.is_ascii_alphabetic())
        && top.chars().all(|c| c.is_ascii_alphanumeric())
}

impl Mapping {
    /// Deobfuscates one name as ART prints it. Names the runtime could not tell apart
    /// (`A | B`) are deobfuscated part by part. An error only for a bad line among the member
    /// lines of the name's class, read now for the first time.
    pub fn deobfuscate(&self, name: &str) -> Result<Resolution, MappingError> {
        if !name.contains('|') || !name.contains(" | ") {
            return self.one(name);
        }
        let mut out = Resolution {
            name: String::with_capacity(name.len()),
            kind: Kind::NotAMethod,
            synthesized: false,
            outline: false,
        };
        for (i, part) in name.split(" | ").enumerate() {
            let r = self.one(part)?;
            if i > 0 {
                out.name.push_str(" | ");
            }
            out.name.push_str(&r.name);
            out.kind = out.kind.max(r.kind);
            out.synthesized |= r.synthesized;
            out.outline |= r.outline;
        }
        Ok(out)
    }

    /// Deobfuscates every name of a trace's symbol table in place.
    pub fn deobfuscate_symbols(
        &self,
        symbols: &mut BTreeMap<u64, String>,
    ) -> Result<Report, MappingError> {
        let mut report = Report::default();
        for name in symbols.values_mut() {
            let r = self.deobfuscate(name)?;
            report.add(name, &r);
            *name = r.name;
        }
        Ok(report)
    }

    /// Writes the original name of a type as the runtime prints it (`a.b[]` → `com.x.Y[]`).
    fn original_type(&self, t: &str, out: &mut String) {
        let (base, dims) = split_array(t);
        match self.by_obfuscated.get(base) {
            Some(&i) if !is_primitive(base) => {
                out.push_str(self.classes[i as usize].original.get(&self.text));
                out.push_str(dims);
            }
            _ => out.push_str(t),
        }
    }

    /// A type as the runtime prints it, as the mapping writes it: its class mapped back (the
    /// original name, or itself if not in the mapping) and its array suffix. Comparing these
    /// with a candidate's original types is comparing residual types: a build never renames
    /// a class to a name its signatures use for another.
    fn back<'a>(&'a self, printed: &'a str) -> (&'a str, &'a str) {
        let (base, dims) = split_array(printed);
        if is_primitive(base) {
            return (base, dims);
        }
        match self.by_obfuscated.get(base) {
            Some(&i) => (self.classes[i as usize].original.get(&self.text), dims),
            None => (base, dims),
        }
    }

    /// `ret class.name(params)` with every type mapped back, the method name kept.
    fn types_only(&self, m: &PrettyMethod<'_>, class: &str) -> String {
        let mut out = String::with_capacity(m.class.len() * 2 + 32);
        if let Some(ret) = m.ret {
            self.original_type(ret, &mut out);
            out.push(' ');
        }
        out.push_str(class);
        out.push('.');
        out.push_str(m.name);
        if m.params.is_some() {
            out.push('(');
            for (i, p) in m.param_types().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                self.original_type(p, &mut out);
            }
            out.push(')');
        }
        out
    }

    fn one(&self, name: &str) -> Result<Resolution, MappingError> {
        let resolution = |name: String, kind: Kind, synthesized: bool| Resolution {
            name,
            kind,
            synthesized,
            outline: false,
        };
        let Some(m) = PrettyMethod::parse(name) else {
            return Ok(resolution(name.to_owned(), Kind::NotAMethod, false));
        };
        let Some(&ci) = self.by_obfuscated.get(m.class) else {
            if looks_obfuscated(m.class) {
                // Probably another build's mapping: its types would be as wrong as its
                // classes, so nothing is touched.
                return Ok(resolution(name.to_owned(), Kind::ClassUnknown, false));
            }
            return Ok(resolution(
                self.types_only(&m, m.class),
                Kind::NotInMapping,
                false,
            ));
        };
        let text = self.text.as_str();
        let class = self.classes[ci as usize].original.get(text);
        let body = self.body(ci as usize)?;
        let lines = &body.methods;
        let Some(&(lo, hi)) = body.names.get(m.name) else {
            // Constructors and static initializers keep their names; ProGuard and R8 list
            // them, but a mapping without them is no mismatch.
            let kind = if matches!(m.name, "<init>" | "<clinit>") {
                Kind::Deobfuscated
            } else {
                Kind::MemberUnknown
            };
            return Ok(resolution(
                self.types_only(&m, class),
                kind,
                body.synthesized,
            ));
        };
        let named = &body.by_name[lo as usize..hi as usize];
        // With the whole signature printed, a candidate whose original signature hashes
        // otherwise cannot fit (unless R8 gave its residual signature): most are turned down
        // by comparing two numbers, the printed types mapped back once for all.
        let back: Option<Vec<(&str, &str)>> = match (m.ret, m.params) {
            (Some(r), Some(_)) => Some(
                std::iter::once(r)
                    .chain(m.param_types())
                    .map(|t| self.back(t))
                    .collect(),
            ),
            _ => None,
        };
        let signature = back
            .as_ref()
            .map(|types| hash::signature(types.iter().copied()));
        let mut fits: Vec<Candidate> = Vec::new();
        each_candidate(text, lines, named, signature, |c| {
            if !self.fits(&m, &c, &body.residuals, back.as_deref()) {
                return;
            }
            match fits
                .iter_mut()
                .find(|o| same_frame(text, &o.frame, &c.frame))
            {
                Some(o) => {
                    o.synthesized |= c.synthesized;
                    o.outline |= c.outline;
                }
                None => fits.push(c),
            }
        });
        if fits.is_empty() {
            return Ok(resolution(
                self.types_only(&m, class),
                Kind::SignatureMismatch,
                body.synthesized,
            ));
        }
        let mut out = String::with_capacity(name.len() + 32);
        for (i, c) in fits.iter().enumerate() {
            if i > 0 {
                out.push_str(" | ");
            }
            let f = &c.frame;
            if m.ret.is_some() {
                out.push_str(f.ret.get(text));
                out.push(' ');
            }
            out.push_str(if f.class.len > 0 {
                f.class.get(text)
            } else {
                class
            });
            out.push('.');
            out.push_str(f.name.get(text));
            if m.params.is_some() {
                out.push('(');
                for (k, a) in args(f.args.get(text)).enumerate() {
                    if k > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(a);
                }
                out.push(')');
            }
        }
        Ok(Resolution {
            kind: if fits.len() == 1 {
                Kind::Deobfuscated
            } else {
                Kind::Ambiguous
            },
            name: out,
            synthesized: body.synthesized || fits.iter().any(|c| c.synthesized),
            outline: fits.iter().any(|c| c.outline),
        })
    }

    /// Whether candidate `c` is the method the runtime printed as `m`: its residual signature
    /// (R8's, or its original types mapped forward) is the printed one. `back` is the printed
    /// return and parameter types mapped back, if `m` has a whole signature.
    fn fits(
        &self,
        m: &PrettyMethod<'_>,
        c: &Candidate,
        residuals: &[(Vec<String>, String)],
        back: Option<&[(&str, &str)]>,
    ) -> bool {
        let text = self.text.as_str();
        if let Some(r) = c.residual {
            let (rparams, rret) = &residuals[r as usize];
            let mut printed = m.param_types();
            return m.ret.map_or(true, |t| t == rret)
                && (m.params.is_none()
                    || rparams.iter().all(|r| printed.next() == Some(r.as_str()))
                        && printed.next().is_none());
        }
        let mut original = args(c.frame.args.get(text));
        if let Some(types) = back {
            // The signature hashes alike (`each_candidate`); compared type by type.
            return types[0] == split_array(c.frame.ret.get(text))
                && types[1..]
                    .iter()
                    .all(|&t| original.next().is_some_and(|o| t == split_array(o)))
                && original.next().is_none();
        }
        let same = |printed: &str, original: &str| self.back(printed) == split_array(original);
        m.ret.map_or(true, |t| same(t, c.frame.ret.get(text)))
            && (m.params.is_none()
                || m.param_types()
                    .all(|p| original.next().is_some_and(|o| same(p, o)))
                    && original.next().is_none())
    }
}

/// An original method a residual method may be: the outermost frame of one or more inline
/// groups, with the metadata of its lines.
struct Candidate {
    frame: MethodLine,
    residual: Option<u32>,
    synthesized: bool,
    outline: bool,
}

/// The candidates behind one obfuscated name (`lines[i]` for `i` in `named`, file order), one
/// call of `f` each: per run of lines with one minified range (an inline group, innermost
/// frame first) its last line, the method the runtime entered; a line without a range alone.
/// An original method met in several groups has the residual signature of its first (R8
/// writes it under the first occurrence only); duplicates are merged after the signature
/// check. With `signature` (the hash of the printed signature in original types), a group
/// whose outermost frame hashes otherwise is skipped at once, unless residual signatures are
/// about.
fn each_candidate(
    text: &str,
    lines: &[MethodLine],
    named: &[u32],
    signature: Option<u64>,
    mut f: impl FnMut(Candidate),
) {
    let any_residual = named.iter().any(|&k| lines[k as usize].residual.is_some());
    let mut all: Vec<Candidate> = Vec::new();
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
        let outer = &lines[named[j - 1] as usize];
        if any_residual || signature.map_or(true, |s| s == outer.signature) {
            let group = || named[i..j].iter().map(|&k| &lines[k as usize]);
            let c = Candidate {
                frame: *outer,
                residual: group().find_map(|l| l.residual),
                synthesized: group().any(|l| l.synthesized),
                outline: group().any(|l| l.outline),
            };
            if any_residual {
                all.push(c);
            } else {
                f(c);
            }
        }
        i = j;
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
    all.into_iter().for_each(f);
}

fn same_frame(text: &str, a: &MethodLine, b: &MethodLine) -> bool {
    [
        (a.ret, b.ret),
        (a.class, b.class),
        (a.name, b.name),
        (a.args, b.args),
    ]
    .iter()
    .all(|(x, y)| x.get(text) == y.get(text))
}

/// The argument types of a member line, as written (`a,b`).
fn args(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|a| !a.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn obfuscated_looking_classes() {
        for yes in ["a", "a.b.c", "com.example.ab", "a.b$c", "a0b", "x.Ab$1"] {
            assert!(looks_obfuscated(yes), "{yes}");
        }
        for no in [
            "android.view.View",
            "java.lang.String",
            "com.example.Main",
            "com.example.Main$1",
            "a.b.Cart",
            "a.b.1ab",
            "",
        ] {
            assert!(!looks_obfuscated(no), "{no}");
        }
    }
}
