//! Names as ART prints them (`ArtMethod::PrettyMethod`: `void com.a.B.c(int, com.a.D[])`) and
//! as mapping files write types (Java source names; R8's residual signatures use JVM
//! descriptors, `(ILcom/a/D;)V`).

/// A method name split into its parts: `ret class.name(params)`. Borrowed from the name.
#[derive(Debug, PartialEq, Eq)]
pub struct PrettyMethod<'a> {
    /// Return type; `None` for a name printed without its signature.
    pub ret: Option<&'a str>,
    pub class: &'a str,
    pub name: &'a str,
    /// What is between the parentheses; `None` for a name printed without its signature.
    pub params: Option<&'a str>,
}

impl<'a> PrettyMethod<'a> {
    /// Splits `name`; `None` when it is not a Java method name (an unresolved pointer, a
    /// runtime method such as `<runtime internal method>`, a name without a class).
    pub fn parse(name: &'a str) -> Option<PrettyMethod<'a>> {
        let name = trim(name);
        let (head, params) = match name.bytes().position(|b| b == b'(') {
            Some(open) => {
                let inner = name[open + 1..].strip_suffix(')')?;
                if !trim(inner).is_empty() && commas(inner).any(|p| !is_type(trim(p))) {
                    return None;
                }
                (&name[..open], Some(inner))
            }
            None => (name, None),
        };
        let (ret, qualified) = match head.bytes().rposition(|b| b == b' ') {
            Some(i) => (Some(trim(&head[..i])), &head[i + 1..]),
            None => (None, head),
        };
        if ret.is_some_and(|r| !is_type(r)) || (ret.is_none() && params.is_some()) {
            return None;
        }
        let dot = qualified.bytes().rposition(|b| b == b'.')?;
        let (class, method) = (&qualified[..dot], &qualified[dot + 1..]);
        if class.is_empty()
            || method.is_empty()
            || !is_type(class)
            || method.bytes().any(|b| b == b' ')
        {
            return None;
        }
        Some(PrettyMethod {
            ret,
            class,
            name: method,
            params,
        })
    }

    /// The parameter types (none for a name without its signature).
    pub fn param_types(&self) -> impl Iterator<Item = &'a str> {
        commas(self.params.unwrap_or(""))
            .map(trim)
            .filter(|p| !p.is_empty())
    }
}

/// `s.split(',')`, for the short lists of types names have.
#[inline]
pub fn commas(s: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(s);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.bytes().position(|b| b == b',') {
            Some(i) => {
                rest = Some(&r[i + 1..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// The ASCII characters `char::is_whitespace` takes (`u8::is_ascii_whitespace` leaves out
/// the vertical tab).
#[inline]
pub fn is_ascii_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `s.trim()`, decided on the first and last bytes when they are plain ASCII.
#[inline]
pub fn trim(s: &str) -> &str {
    let b = s.as_bytes();
    let Some(start) = b.iter().position(|&c| !is_ascii_space(c)) else {
        // Empty, but still a part of `s` (spans are taken of it).
        return &s[..0];
    };
    let end = b
        .iter()
        .rposition(|&c| !is_ascii_space(c))
        .map_or(0, |e| e + 1);
    if !b[start].is_ascii() || !b[end - 1].is_ascii() {
        return s.trim();
    }
    &s[start..end]
}

/// A plausible type or class name: no blanks (ASCII), parentheses or commas.
#[inline]
pub fn is_type(t: &str) -> bool {
    !t.is_empty()
        && !t
            .bytes()
            .any(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'(' | b')' | b','))
}

/// Splits `com.a.B[][]` into `com.a.B` and its array suffix `[][]`.
#[inline]
pub fn split_array(t: &str) -> (&str, &str) {
    match t.bytes().position(|b| b == b'[') {
        Some(i) => (&t[..i], &t[i..]),
        None => (t, ""),
    }
}

/// Java's primitive type names (and `void`): never in a mapping.
#[inline]
pub fn is_primitive(t: &str) -> bool {
    matches!(
        t,
        "void" | "boolean" | "byte" | "char" | "short" | "int" | "long" | "float" | "double"
    )
}

/// A method descriptor `(params)ret` in Java source form.
pub fn method_descriptor(d: &str) -> Option<(Vec<String>, String)> {
    let rest = d.strip_prefix('(')?;
    let (mut params, mut rest) = (Vec::new(), rest);
    loop {
        if let Some(r) = rest.strip_prefix(')') {
            let (ret, tail) = field_type(r, true)?;
            return tail.is_empty().then_some((params, ret));
        }
        let (t, tail) = field_type(rest, false)?;
        params.push(t);
        rest = tail;
    }
}

/// A field descriptor (`I`, `[Lcom/a/B;`) in Java source form, if it is all of `d`.
pub fn field_descriptor(d: &str) -> Option<String> {
    match field_type(d, false)? {
        (t, "") => Some(t),
        _ => None,
    }
}

/// One type at the start of `d`, and the rest.
fn field_type(d: &str, void_ok: bool) -> Option<(String, &str)> {
    let dims = d.bytes().take_while(|&b| b == b'[').count();
    let d = &d[dims..];
    let (base, rest) = match d.as_bytes().first()? {
        b'Z' => ("boolean".to_owned(), &d[1..]),
        b'B' => ("byte".to_owned(), &d[1..]),
        b'C' => ("char".to_owned(), &d[1..]),
        b'S' => ("short".to_owned(), &d[1..]),
        b'I' => ("int".to_owned(), &d[1..]),
        b'J' => ("long".to_owned(), &d[1..]),
        b'F' => ("float".to_owned(), &d[1..]),
        b'D' => ("double".to_owned(), &d[1..]),
        b'V' if void_ok && dims == 0 => ("void".to_owned(), &d[1..]),
        b'L' => {
            let end = d.find(';')?;
            let name = &d[1..end];
            if name.is_empty() || name.contains(['.', '[', '(', ')']) {
                return None;
            }
            (name.replace('/', "."), &d[end + 1..])
        }
        _ => return None,
    };
    Some((base + &"[]".repeat(dims), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_art_names() {
        let m =
            PrettyMethod::parse("void com.a.B$C.d(int, com.e.F[][], java.lang.String)").unwrap();
        assert_eq!(m.ret, Some("void"));
        assert_eq!(m.class, "com.a.B$C");
        assert_eq!(m.name, "d");
        assert_eq!(
            m.param_types().collect::<Vec<_>>(),
            ["int", "com.e.F[][]", "java.lang.String"]
        );
        let m = PrettyMethod::parse("int[] a.<init>()").unwrap();
        assert_eq!((m.name, m.params), ("<init>", Some("")));
        let m = PrettyMethod::parse("com.a.B.c").unwrap();
        assert_eq!((m.ret, m.params), (None, None));
        for not_java in [
            "0x7000beef",
            "<runtime internal method>",
            "void nodot()",
            "c(int)",
            "void a.b(int",
            "void a.b(, int)",
        ] {
            assert_eq!(PrettyMethod::parse(not_java), None, "{not_java}");
        }
    }

    #[test]
    fn descriptors() {
        assert_eq!(
            method_descriptor("(Lfoo/StringConsumer;[[IZ)Lfoo/internal/MapConsumer;"),
            Some((
                vec![
                    "foo.StringConsumer".into(),
                    "int[][]".into(),
                    "boolean".into()
                ],
                "foo.internal.MapConsumer".into()
            ))
        );
        assert_eq!(method_descriptor("()V"), Some((vec![], "void".into())));
        assert_eq!(
            field_descriptor("[Ljava/lang/Object;"),
            Some("java.lang.Object[]".into())
        );
        for bad in [
            "I", "(V)V", "(I", "()", "()VX", "(L;)V", "(Lfoo)V", "VOLAPYK", "()[V",
        ] {
            assert_eq!(method_descriptor(bad), None, "{bad}");
        }
        for bad in ["()Ljava/lang/Object;", "V", "Lx", ""] {
            assert_eq!(field_descriptor(bad), None, "{bad}");
        }
    }
}
