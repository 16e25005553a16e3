//! Deobfuscating names: class by obfuscated name, method by obfuscated name *and* residual
//! signature, types through the class mapping.

use std::collections::BTreeMap;
use std::hash::Hasher;

use crate::error::MappingError;
use crate::hash::{self, Fx};
use crate::model::{same, Body, Candidate, Mapping};
use crate::parse::same_frame;
use crate::pretty::{commas, is_primitive, split_array, trim, PrettyMethod};

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
        if !name.bytes().any(|b| b == b'|') || !name.contains(" | ") {
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
        let names: Vec<&str> = symbols.values().map(String::as_str).collect();
        let resolved = self.deobfuscate_all(&names, 1)?;
        let mut report = Report::default();
        for (name, r) in symbols.values_mut().zip(resolved) {
            report.add(name, &r);
            *name = r.name;
        }
        Ok(report)
    }

    /// [`Mapping::deobfuscate`] of each of `names` (a trace's symbol table), in order, on up
    /// to `threads` threads; the error is the one of the first name that has one.
    ///
    /// Each thread resolves its share of the names class by class, whatever their order, so
    /// that a class's lines are read (and parsed, by one thread) while they are in cache rather
    /// than fetched again for each name (a symbol table in pointer order is mostly grouped by
    /// class already; names in no particular order cost a third more). Every other thread
    /// takes the classes in the reverse order, so that two threads seldom wait for the same
    /// class's lines to be parsed.
    pub fn deobfuscate_all(
        &self,
        names: &[&str],
        threads: usize,
    ) -> Result<Vec<Resolution>, MappingError> {
        // Fewer names than this per thread cost more to hand out than they save.
        const PER_THREAD: usize = 4096;
        let threads = threads
            .min((names.len() + PER_THREAD - 1) / PER_THREAD)
            .max(1);
        let chunk = ((names.len() + threads - 1) / threads).max(1);
        // Filled in place (an empty name allocates nothing).
        let blank = Resolution {
            name: String::new(),
            kind: Kind::NotAMethod,
            synthesized: false,
            outline: false,
        };
        let mut out = vec![blank; names.len()];
        let resolve = |k: usize, names: &[&str], out: &mut [Resolution]| {
            let mut order = by_class(names);
            if k % 2 == 1 {
                order.reverse();
            }
            for i in order {
                out[i as usize] = self.deobfuscate(names[i as usize])?;
            }
            Ok(())
        };
        let mut shares = names.chunks(chunk).zip(out.chunks_mut(chunk)).enumerate();
        let first = shares.next();
        let results: Vec<Result<(), MappingError>> = std::thread::scope(|s| {
            let spawned: Vec<_> = shares
                .map(|(k, (names, out))| s.spawn(move || resolve(k, names, out)))
                .collect();
            // This thread takes a share too.
            let mut results: Vec<_> = first
                .map(|(k, (names, out))| resolve(k, names, out))
                .into_iter()
                .collect();
            results.extend(
                spawned
                    .into_iter()
                    .map(|t| t.join().unwrap_or_else(|e| std::panic::resume_unwind(e))),
            );
            results
        });
        if let Some(Err(e)) = results.into_iter().find(Result::is_err) {
            // Out of order: the first name's error is found again (a class keeps its error),
            // one by one.
            for name in names {
                self.deobfuscate(name)?;
            }
            return Err(e);
        }
        Ok(out)
    }

    /// Writes the original name of a type as the runtime prints it (`a.b[]` → `com.x.Y[]`).
    fn original_type(&self, t: &str, out: &mut String) {
        let (base, dims) = split_array(t);
        match (!is_primitive(base))
            .then(|| self.class_index(base))
            .flatten()
        {
            Some(i) => {
                out.push_str(self.classes[i as usize].original.get(&self.names));
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
        match self.class_index(base) {
            Some(i) => (self.classes[i as usize].original.get(&self.names), dims),
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
        let Some(ci) = self.class_index(m.class) else {
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
        let class = self.classes[ci as usize].original.get(&self.names);
        let body = self.body(ci as usize)?;
        // The class's lines, which its candidates' spans index.
        let text = &*body.text;
        let found = body
            .names
            .get(m.name, |i| body.named[i as usize].name.get(text));
        let Some(named) = found.map(|i| body.named[i as usize]) else {
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
        let mut params: Small<&str, 8> = Small::default();
        for p in m.param_types() {
            params.push(p);
        }
        let params = params.as_slice();
        // With the whole signature printed, the printed types mapped back once for all.
        let mut back: Small<(&str, &str), 8> = Small::default();
        if let (Some(ret), Some(_)) = (m.ret, m.params) {
            back.push(self.back(ret));
            for p in params {
                back.push(self.back(p));
            }
        }
        let back = (m.ret.is_some() && m.params.is_some()).then_some(back.as_slice());
        // The fitting candidates (index into `body.candidates`, synthesized, outline), one per
        // original method.
        let mut fits: Small<(u32, bool, bool), 4> = Small::default();
        let mut consider = |i: u32| {
            let c = &body.candidates[i as usize];
            if !self.fits(&m, params, c, body, back) {
                return;
            }
            let same = |o: &(u32, bool, bool)| {
                same_frame(text, &body.candidates[o.0 as usize].frame, &c.frame)
            };
            match fits.as_mut_slice().iter_mut().find(|o| same(o)) {
                Some(o) => {
                    o.1 |= c.synthesized;
                    o.2 |= c.outline;
                }
                None => fits.push((i, c.synthesized, c.outline)),
            }
        };
        match (back, m.ret) {
            // A candidate whose signature hashes otherwise cannot fit: the name's candidates
            // are found by their hash.
            (Some(types), Some(ret)) => {
                let keyed = &body.keyed[named.lo as usize..named.hi as usize];
                let original = hash::signature(types.iter().copied());
                let mut hits = with_key(keyed, original);
                // A candidate with R8's residual signature is keyed by it, as printed.
                let mut printed: &[(u64, u32)] = &[];
                if named.residual {
                    let types = std::iter::once(ret).chain(params.iter().copied());
                    let h = hash::signature(types.map(split_array));
                    if h != original {
                        printed = with_key(keyed, h);
                    }
                }
                // Both runs in file order (candidate order), merged.
                loop {
                    let next = match (hits.first(), printed.first()) {
                        (Some(a), Some(b)) if b.1 < a.1 => {
                            printed = &printed[1..];
                            b.1
                        }
                        (Some(a), _) => {
                            hits = &hits[1..];
                            a.1
                        }
                        (None, Some(b)) => {
                            printed = &printed[1..];
                            b.1
                        }
                        (None, None) => break,
                    };
                    consider(next);
                }
            }
            _ => (named.lo..named.hi).for_each(consider),
        }
        let fits = fits.as_slice();
        if fits.is_empty() {
            return Ok(resolution(
                self.types_only(&m, class),
                Kind::SignatureMismatch,
                body.synthesized,
            ));
        }
        let frame = |&(c, ..): &(u32, bool, bool)| &body.candidates[c as usize].frame;
        // Room for the whole name (exactly, with the signature), so that it never grows.
        let len: usize = fits
            .iter()
            .map(|c| {
                let f = frame(c);
                let class = if f.class.len > 0 {
                    f.class.len
                } else {
                    class.len() as u32
                };
                let args = f.args.get(text);
                let commas = args.bytes().filter(|&b| b == b',').count();
                (f.ret.len + 1 + class + 1 + f.name.len + 2) as usize + args.len() + commas
            })
            .sum::<usize>()
            + 3 * (fits.len() - 1);
        let mut out = String::with_capacity(len);
        for (i, c) in fits.iter().enumerate() {
            if i > 0 {
                out.push_str(" | ");
            }
            let f = frame(c);
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
            synthesized: body.synthesized || fits.iter().any(|c| c.1),
            outline: fits.iter().any(|c| c.2),
        })
    }

    /// Whether candidate `c` is the method the runtime printed as `m`: its residual signature
    /// (R8's, or its original types mapped forward) is the printed one. `back` is the printed
    /// return and parameter types mapped back, if `m` has a whole signature.
    fn fits(
        &self,
        m: &PrettyMethod<'_>,
        params: &[&str],
        c: &Candidate,
        body: &Body,
        back: Option<&[(&str, &str)]>,
    ) -> bool {
        let text = &*body.text;
        if let Some(r) = c.residual {
            let (rparams, rret) = &body.residuals[r as usize];
            let mut printed = params.iter();
            return m.ret.map_or(true, |t| same(t, rret))
                && (m.params.is_none()
                    || rparams
                        .iter()
                        .all(|r| printed.next().is_some_and(|p| same(p, r)))
                        && printed.next().is_none());
        }
        let mut original = args(c.frame.args.get(text));
        if let Some(types) = back {
            return same_type(types[0], split_array(c.frame.ret.get(text)))
                && types[1..].iter().all(|&t| {
                    original
                        .next()
                        .is_some_and(|o| same_type(t, split_array(o)))
                })
                && original.next().is_none();
        }
        let same =
            |printed: &str, original: &str| same_type(self.back(printed), split_array(original));
        m.ret.map_or(true, |t| same(t, c.frame.ret.get(text)))
            && (m.params.is_none()
                || params
                    .iter()
                    .all(|p| original.next().is_some_and(|o| same(p, o)))
                    && original.next().is_none())
    }
}

/// A list kept on the stack while short (a name's types, its fitting candidates): a lookup
/// would otherwise allocate for each.
struct Small<T: Copy + Default, const N: usize> {
    inline: [T; N],
    len: usize,
    /// Everything, once there are more than `N`.
    heap: Vec<T>,
}

impl<T: Copy + Default, const N: usize> Default for Small<T, N> {
    fn default() -> Self {
        Small {
            inline: [T::default(); N],
            len: 0,
            heap: Vec::new(),
        }
    }
}

impl<T: Copy + Default, const N: usize> Small<T, N> {
    fn push(&mut self, v: T) {
        if self.len < N {
            self.inline[self.len] = v;
        } else {
            if self.heap.is_empty() {
                self.heap.extend_from_slice(&self.inline);
            }
            self.heap.push(v);
        }
        self.len += 1;
    }

    fn as_slice(&self) -> &[T] {
        if self.len <= N {
            &self.inline[..self.len]
        } else {
            &self.heap
        }
    }

    fn as_mut_slice(&mut self) -> &mut [T] {
        if self.len <= N {
            &mut self.inline[..self.len]
        } else {
            &mut self.heap
        }
    }
}

#[inline]
fn same_type(a: (&str, &str), b: (&str, &str)) -> bool {
    same(a.0, b.0) && same(a.1, b.1)
}

/// The indices of `names`, grouped by (the hash of) their class, in order within a class: a
/// counting sort, cheaper than the cache misses it saves.
fn by_class(names: &[&str]) -> Vec<u32> {
    let bits = (names.len() / 8)
        .max(1)
        .next_power_of_two()
        .trailing_zeros()
        .min(16);
    let buckets = 1usize << bits;
    let bucket = |name: &str| {
        // `ret a.b.C.m(…)`: the class is between the last blank and the last dot before `(`.
        let b = name.as_bytes();
        let head = b.iter().position(|&c| c == b'(').map_or(b, |i| &b[..i]);
        let start = head.iter().rposition(|&c| c == b' ').map_or(0, |i| i + 1);
        let end = head[start..]
            .iter()
            .rposition(|&c| c == b'.')
            .map_or(start, |i| start + i);
        let mut h = Fx::default();
        h.write(&head[start..end]);
        (h.finish() >> (64 - bits.max(1))) as usize & (buckets - 1)
    };
    let keys: Vec<u32> = names.iter().map(|n| bucket(n) as u32).collect();
    let mut start = vec![0u32; buckets + 1];
    for &k in &keys {
        start[k as usize + 1] += 1;
    }
    for b in 0..buckets {
        start[b + 1] += start[b];
    }
    let mut order = vec![0u32; names.len()];
    for (i, &k) in keys.iter().enumerate() {
        order[start[k as usize] as usize] = i as u32;
        start[k as usize] += 1;
    }
    order
}

/// The run of `keyed` (sorted) whose key is `key`.
fn with_key(keyed: &[(u64, u32)], key: u64) -> &[(u64, u32)] {
    let lo = keyed.partition_point(|&(k, _)| k < key);
    let n = keyed[lo..].iter().take_while(|&&(k, _)| k == key).count();
    &keyed[lo..lo + n]
}

/// The argument types of a member line, as written (`a,b`).
fn args(s: &str) -> impl Iterator<Item = &str> {
    commas(s).map(trim).filter(|a| !a.is_empty())
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
