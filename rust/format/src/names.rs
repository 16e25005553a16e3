//! Method names: display names and the class / method / signature split `.trace` wants.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::format;
// The crate is no_std; this module is in its `std` feature.
use std::prelude::rust_2021::*;

/// The name given to frames entered before the window (their entry slot was overwritten).
pub const BEFORE_WINDOW: &str = "<entered before the window>";

/// How `.trace` names the frames entered before the window: class and method.
pub const BEFORE_WINDOW_SPLIT: (&str, &str) = ("hubble", "<entered-before-the-window>");

/// The name of a frame's method: the symbol, the pointer in hex if unresolved, or
/// [`BEFORE_WINDOW`].
pub fn display(symbols: &BTreeMap<u64, String>, method: Option<u64>) -> Cow<'_, str> {
    match method {
        None => Cow::Borrowed(BEFORE_WINDOW),
        Some(m) => match symbols.get(&m) {
            Some(name) => Cow::Borrowed(name.as_str()),
            None => Cow::Owned(format!("{m:#x}")),
        },
    }
}

/// A method name split as Android's method-trace key section lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitName {
    /// Dotted class name (`java.lang.String`).
    pub class: String,
    /// Method name (`valueOf`, `<init>`).
    pub method: String,
    /// JVM descriptor (`(I)Ljava/lang/String;`), or `()` plus nothing when unknown.
    pub signature: String,
}

/// Splits a pretty method name as ART's `ArtMethod::PrettyMethod` writes it —
/// `[return-type ]pkg.Class.method[(arg, arg)]` — into class, method and JVM signature.
/// Names without a class (unresolved pointers, synthetic frames) get the class `hubble`.
pub fn split(name: &str) -> SplitName {
    let name = name.trim();
    let (head, args) = match name.find('(') {
        Some(open) if name.ends_with(')') => (&name[..open], Some(&name[open + 1..name.len() - 1])),
        _ => (name, None),
    };
    let (ret, qualified) = match head.rsplit_once(' ') {
        Some((ret, q)) => (Some(ret.trim()), q),
        None => (None, head),
    };
    let (class, method) = match qualified.rsplit_once('.') {
        Some((c, m)) if !c.is_empty() && !m.is_empty() => (c.to_owned(), m.to_owned()),
        _ => ("hubble".to_owned(), qualified.to_owned()),
    };
    let signature = match args {
        Some(args) => {
            let mut sig = String::from("(");
            for arg in args.split(',').map(str::trim).filter(|a| !a.is_empty()) {
                sig.push_str(&descriptor(arg));
            }
            sig.push(')');
            if let Some(ret) = ret {
                sig.push_str(&descriptor(ret));
            }
            sig
        }
        None => match ret {
            Some(ret) => format!("(){}", descriptor(ret)),
            None => String::from("()"),
        },
    };
    SplitName {
        class,
        method,
        signature,
    }
}

/// The JVM descriptor of a Java type name (`int[]` → `[I`, `java.lang.String` → `Ljava/lang/String;`).
pub fn descriptor(java: &str) -> String {
    let mut base = java.trim();
    let mut dims = 0;
    while let Some(b) = base.strip_suffix("[]") {
        base = b.trim_end();
        dims += 1;
    }
    let mut out = "[".repeat(dims);
    match base {
        "void" => out.push('V'),
        "boolean" => out.push('Z'),
        "byte" => out.push('B'),
        "char" => out.push('C'),
        "short" => out.push('S'),
        "int" => out.push('I'),
        "long" => out.push('J'),
        "float" => out.push('F'),
        "double" => out.push('D'),
        class => {
            out.push('L');
            out.push_str(&class.replace('.', "/"));
            out.push(';');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_pretty_methods() {
        let s =
            split("java.lang.String com.example.Foo$Bar.run(int, java.lang.Object[], long[][])");
        assert_eq!(s.class, "com.example.Foo$Bar");
        assert_eq!(s.method, "run");
        assert_eq!(s.signature, "(I[Ljava/lang/Object;[[J)Ljava/lang/String;");
        let s = split("void android.app.Activity.<init>()");
        assert_eq!(
            (s.class.as_str(), s.method.as_str()),
            ("android.app.Activity", "<init>")
        );
        assert_eq!(s.signature, "()V");
        let s = split("com.example.Main.main");
        assert_eq!(
            (s.class.as_str(), s.method.as_str(), s.signature.as_str()),
            ("com.example.Main", "main", "()")
        );
        let s = split("0x7f001234");
        assert_eq!(
            (s.class.as_str(), s.method.as_str()),
            ("hubble", "0x7f001234")
        );
    }
}
