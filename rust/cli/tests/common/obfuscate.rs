//! An obfuscator for tests and the benchmark: turns a trace's symbol table into what an app
//! shrunk by ProGuard would record, with the mapping that undoes it.

use std::collections::BTreeMap;

/// `ret class.name(params)`.
pub fn split(name: &str) -> (&str, &str, &str, Vec<&str>) {
    let open = name.find('(').unwrap();
    let (ret, qualified) = name[..open].rsplit_once(' ').unwrap();
    let (class, method) = qualified.rsplit_once('.').unwrap();
    let inner = &name[open + 1..name.len() - 1];
    let params = if inner.is_empty() {
        vec![]
    } else {
        inner.split(", ").collect()
    };
    (ret, class, method, params)
}

/// Obfuscates the app's (`com.example.*`) names of a symbol table as a shrinker would: classes
/// renamed `o.a`, `o.b`, …, each class's methods all named `a` unless their residual
/// signatures collide (then `b`, …), as ProGuard names overloads; framework names untouched.
/// Returns the mapping (ProGuard's format, with R8's version header, a sourceFile and an
/// inline group whose outermost frame is the method) and the obfuscated table.
pub fn obfuscate(symbols: &BTreeMap<u64, String>, seed: &str) -> (String, BTreeMap<u64, String>) {
    let app = |t: &str| t.starts_with("com.example.");
    let mut classes: BTreeMap<String, String> = BTreeMap::new();
    for name in symbols.values().filter(|n| n.contains('(')) {
        let (ret, class, _, params) = split(name);
        for t in [ret, class].into_iter().chain(params) {
            let base = t.trim_end_matches("[]");
            if app(base) && !classes.contains_key(base) {
                let n = classes.len();
                let obf = format!("o{seed}.{}", short(n));
                classes.insert(base.to_owned(), obf);
            }
        }
    }
    let residual = |t: &str| {
        let base = t.trim_end_matches("[]");
        match classes.get(base) {
            Some(o) => format!("{o}{}", &t[base.len()..]),
            None => t.to_owned(),
        }
    };
    let mut members: BTreeMap<&str, Vec<(String, String)>> = BTreeMap::new();
    let mut used: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut out = BTreeMap::new();
    for (&ptr, name) in symbols {
        if !name.contains('(') || !app(split(name).1) {
            out.insert(ptr, name.clone());
            continue;
        }
        let (ret, class, method, params) = split(name);
        let rparams: Vec<String> = params.iter().map(|p| residual(p)).collect();
        let sig = format!("{}({})", residual(ret), rparams.join(","));
        let n = used.entry((class.to_owned(), sig)).or_default();
        let obf = if method.starts_with('<') {
            method.to_owned()
        } else {
            short(*n)
        };
        *n += 1;
        let line = format!("{ret} {method}({})", params.join(","));
        members.entry(class).or_default().push((line, obf.clone()));
        let obf_name = format!(
            "{} {}.{obf}({})",
            residual(ret),
            classes[class],
            rparams.join(", ")
        );
        out.insert(ptr, obf_name);
    }
    let mut text =
        String::from("# {\"id\":\"com.android.tools.r8.mapping\",\"version\":\"2.2\"}\n");
    for (orig, obf) in &classes {
        text += &format!("{orig} -> {obf}:\n# {{'id':'sourceFile','fileName':'X.java'}}\n");
        for (i, (line, o)) in members.get(orig.as_str()).into_iter().flatten().enumerate() {
            if i == 0 {
                // Something inlined into it: the trace entered the outer method.
                text += &format!("    1:1:void com.example.Util.inlined():9:9 -> {o}\n");
                text += &format!("    1:1:{line}:10 -> {o}\n");
            } else {
                text += &format!("    {line} -> {o}\n");
            }
        }
    }
    (text, out)
}

/// The `n`th short name: `a` … `z`, `aa`, `ab`, … (a shrinker's names).
pub fn short(mut n: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'a' + (n % 26) as u8);
        if n < 26 {
            break;
        }
        n = n / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).unwrap()
}
