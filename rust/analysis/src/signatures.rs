//! `hubble match`: signature files ("performance bug models", Hubble §7).
//!
//! A signature file is UTF-8 text, one signature per line; `#` starts a comment:
//!
//! ```text
//! # kind   name                  [min=DURATION]  pattern
//! method   sleep-anywhere                        java.lang.Thread.sleep*
//! method   slow-inflate          min=16ms        *LayoutInflater.inflate*
//! chain    binder-under-click                    *.onClick(* > android.os.BinderProxy.transact*
//! chain    sleep-after-audio     min=2ms         *.onClick(* > *AudioManager.* > *Thread.sleep*
//! ```
//!
//! * A pattern element is a glob over the method's pretty name (as `hubble decode` prints it):
//!   `*` matches any run of characters, `?` one character; everything else is literal.
//! * `method` matches every frame whose name matches the glob.
//! * `chain` matches a frame that matches the last element and whose ancestors contain the
//!   other elements in order, outermost first (`a > b > c`: `c` called, directly or not, from
//!   `b`, itself called from `a`). Elements are separated by ` > ` (spaces required).
//! * `min=` (`ns`, `us`, `ms` or `s`) ignores matching frames shorter than that.
//! * A name is `[A-Za-z0-9._-]+` and unique in the file.
//!
//! The report gives, per signature: the number of matching frames and their total and longest
//! duration (the matched frame's inclusive time).

use std::collections::HashMap;

use serde::Serialize;

use crate::walk::walk;
use crate::{AnalysisError, Input, Result};

/// What a signature matches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// One method.
    Method,
    /// A call chain.
    Chain,
}

/// One signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Its name.
    pub name: String,
    /// What it matches.
    pub kind: Kind,
    /// Globs, outermost first (one for `method`).
    pub pattern: Vec<String>,
    /// Shortest matching frame counted, ns.
    pub min_ns: u64,
}

/// Parses a signature file; `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Vec<Signature>> {
    let mut out: Vec<Signature> = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let err = |problem: String| AnalysisError::Signature {
            file: file.to_owned(),
            line: n + 1,
            problem,
        };
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut rest = line;
        let mut word = || -> Option<&str> {
            let t = rest.trim_start();
            let end = t.find(char::is_whitespace).unwrap_or(t.len());
            let (w, r) = t.split_at(end);
            rest = r;
            if w.is_empty() {
                None
            } else {
                Some(w)
            }
        };
        let kind = match word() {
            Some("method") => Kind::Method,
            Some("chain") => Kind::Chain,
            Some(other) => return Err(err(format!("unknown kind '{other}' (method or chain)"))),
            None => unreachable!("line is not empty"),
        };
        let name = word()
            .ok_or_else(|| err("missing signature name".into()))?
            .to_owned();
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(err(format!("bad name '{name}' (letters, digits, . _ -)")));
        }
        if out.iter().any(|s| s.name == name) {
            return Err(err(format!("duplicate signature name '{name}'")));
        }
        let mut min_ns = 0;
        let mut pattern_text = rest.trim();
        if let Some(m) = pattern_text.strip_prefix("min=") {
            let end = m.find(char::is_whitespace).unwrap_or(m.len());
            min_ns = parse_duration(&m[..end]).ok_or_else(|| {
                err(format!(
                    "bad duration '{}' (e.g. 500us, 16ms, 1s)",
                    &m[..end]
                ))
            })?;
            pattern_text = m[end..].trim();
        }
        if pattern_text.is_empty() {
            return Err(err("missing pattern".into()));
        }
        let pattern: Vec<String> = match kind {
            Kind::Method => vec![pattern_text.to_owned()],
            Kind::Chain => pattern_text
                .split(" > ")
                .map(|p| p.trim().to_owned())
                .collect(),
        };
        if pattern.iter().any(|p| p.is_empty()) {
            return Err(err("empty element in chain pattern".into()));
        }
        if kind == Kind::Method && pattern_text.contains(" > ") {
            return Err(err("a method pattern has no ' > ' (use chain)".into()));
        }
        out.push(Signature {
            name,
            kind,
            pattern,
            min_ns,
        });
    }
    Ok(out)
}

fn parse_duration(s: &str) -> Option<u64> {
    let split = s.find(|c: char| !c.is_ascii_digit() && c != '.')?;
    let (num, unit) = s.split_at(split);
    let value: f64 = num.parse().ok()?;
    let scale = match unit {
        "ns" => 1.0,
        "us" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return None,
    };
    (value >= 0.0).then(|| (value * scale).round() as u64)
}

/// `*` any run, `?` one character, the rest literal.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    // The last star seen: the pattern position after it, and the text position it would take
    // next. Backtracking only ever moves the last star (the earlier ones' runs cannot help).
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            pi += 1;
            star = Some((pi, ti));
        } else if let Some((after, taken)) = star {
            // The star takes one more character; what follows it is tried from there.
            let next = taken + 1;
            star = Some((after, next));
            pi = after;
            ti = next;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// One signature's matches.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Match {
    /// The signature's name.
    pub name: String,
    /// Its kind.
    pub kind: Kind,
    /// Matching frames.
    pub count: u64,
    /// Their total inclusive time, ns.
    pub total_ns: u64,
    /// The longest, ns.
    pub max_ns: u64,
}

/// Matches `signatures` against every frame of `inputs`.
pub fn matches(inputs: &[Input<'_>], signatures: &[Signature]) -> Result<Vec<Match>> {
    let mut out: Vec<Match> = signatures
        .iter()
        .map(|s| Match {
            name: s.name.clone(),
            kind: s.kind.clone(),
            count: 0,
            total_ns: 0,
            max_ns: 0,
        })
        .collect();
    // Every distinct glob, once.
    let mut globs: Vec<&str> = Vec::new();
    let elements: Vec<Vec<usize>> = signatures
        .iter()
        .map(|s| {
            s.pattern
                .iter()
                .map(|p| match globs.iter().position(|g| *g == p.as_str()) {
                    Some(i) => i,
                    None => {
                        globs.push(p);
                        globs.len() - 1
                    }
                })
                .collect()
        })
        .collect();
    for input in inputs {
        // Which globs each method's name matches, computed once per method.
        let mut cache: HashMap<Option<u64>, Vec<bool>> = HashMap::new();
        let symbols = &input.file.symbols;
        let matched = |m: Option<u64>, g: usize, cache: &mut HashMap<Option<u64>, Vec<bool>>| {
            cache.entry(m).or_insert_with(|| {
                let name = hubble_format::names::display(symbols, m);
                globs.iter().map(|p| glob(p, &name)).collect()
            })[g]
        };
        let clock = hubble_format::clock::WallClock::new(&input.file.header);
        walk(*input, |ancestors, frame| {
            for (s, elems) in elements.iter().enumerate() {
                let last = *elems.last().expect("non-empty pattern");
                if !matched(frame.method, last, &mut cache) {
                    continue;
                }
                // Earlier elements: an ordered subsequence of the ancestors (greedy from the
                // innermost outwards finds one whenever one exists).
                let mut need = elems.len() - 1;
                for a in ancestors.iter().rev() {
                    if need == 0 {
                        break;
                    }
                    if matched(a.method, elems[need - 1], &mut cache) {
                        need -= 1;
                    }
                }
                if need > 0 {
                    continue;
                }
                let ns = clock.ticks_to_ns(frame.ticks()) as u64;
                if ns < signatures[s].min_ns {
                    continue;
                }
                let m = &mut out[s];
                m.count += 1;
                m.total_ns += ns;
                m.max_ns = m.max_ns.max(ns);
            }
        })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("*Thread.sleep*", "void java.lang.Thread.sleep(long)"));
        assert!(glob("a?c", "abc"));
        assert!(!glob("a?c", "abbc"));
        assert!(glob("*", ""));
        assert!(!glob("x*", "yx"));
        assert!(glob(
            "*.onClick(*",
            "void com.app.Main.onClick(android.view.View)"
        ));
    }

    #[test]
    fn parses_and_rejects() {
        let s = parse(
            "sig",
            "# c\nmethod a *x*\nchain b min=2ms *a* > *b*  # trailing\n\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[1].pattern, vec!["*a*", "*b*"]);
        assert_eq!(s[1].min_ns, 2_000_000);
        for bad in [
            "fn a x",
            "method",
            "method a",
            "method a min=3 x",
            "chain a x >  > y",
            "method a x\nmethod a y",
            "method a b > c",
        ] {
            let e = parse("sig", bad).unwrap_err().to_string();
            assert!(e.starts_with("sig:"), "{bad}: {e}");
        }
    }
}
