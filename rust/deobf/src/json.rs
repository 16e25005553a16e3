//! The JSON of R8's `# {...}` metadata comments, read leniently: R8 parses them with a lenient
//! JSON reader and its own files and documentation use single-quoted strings and unquoted keys
//! (`# { id: 'com.android.tools.r8.mapping', version: '2.2' }`), which strict JSON rejects.

/// A JSON value (objects keep their keys in file order).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Parses one value that must span all of `text` (whitespace aside).
pub fn parse(text: &str) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        at: 0,
        depth: 0,
    };
    let v = p.value()?;
    p.space();
    if p.at != p.s.len() {
        return Err(format!("text after the JSON value at column {}", p.at + 1));
    }
    Ok(v)
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    at: usize,
    depth: usize,
}

/// Nesting deeper than this is not metadata (and would risk the stack on hostile input).
const MAX_DEPTH: usize = 32;

impl Parser<'_> {
    fn space(&mut self) {
        while self.at < self.s.len() && self.s[self.at].is_ascii_whitespace() {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        self.space();
        if self.peek() == Some(c) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{}'", c as char)))
        }
    }

    fn unexpected(&self, wanted: &str) -> String {
        match self.text[self.at..].chars().next() {
            Some(c) => format!("expected {wanted} at column {}, found '{c}'", self.at + 1),
            None => format!("expected {wanted}, found the end of the line"),
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.space();
        match self.peek() {
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"' | b'\'') => Ok(Value::String(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(c) if is_word(c) => match self.word() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                "null" => Ok(Value::Null),
                w => Err(format!("'{w}' is not a JSON value")),
            },
            _ => Err(self.unexpected("a JSON value")),
        }
    }

    fn nested(&mut self, f: fn(&mut Self) -> Result<Value, String>) -> Result<Value, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(format!("JSON nested deeper than {MAX_DEPTH}"));
        }
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn object(&mut self) -> Result<Value, String> {
        self.expect(b'{')?;
        let mut members = Vec::new();
        self.space();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Value::Object(members));
        }
        loop {
            self.space();
            let key = match self.peek() {
                Some(b'"' | b'\'') => self.string()?,
                Some(c) if is_word(c) => self.word().to_owned(),
                _ => return Err(self.unexpected("a key")),
            };
            self.expect(b':')?;
            let value = self.value()?;
            members.push((key, value));
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.unexpected("',' or '}'")),
            }
        }
    }

    fn array(&mut self) -> Result<Value, String> {
        self.expect(b'[')?;
        let mut items = Vec::new();
        self.space();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value()?);
            self.space();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.unexpected("',' or ']'")),
            }
        }
    }

    fn word(&mut self) -> &str {
        let start = self.at;
        while self.peek().is_some_and(is_word) {
            self.at += 1;
        }
        &self.text[start..self.at]
    }

    fn number(&mut self) -> Result<Value, String> {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.' | b'e' | b'E'))
        {
            self.at += 1;
        }
        let t = &self.text[start..self.at];
        t.parse()
            .map(Value::Number)
            .map_err(|_| format!("'{t}' is not a number"))
    }

    fn string(&mut self) -> Result<String, String> {
        let quote = self.s[self.at];
        self.at += 1;
        let mut out = String::new();
        loop {
            let rest = &self.text[self.at..];
            let Some(c) = rest.chars().next() else {
                return Err("a string is not closed".into());
            };
            self.at += c.len_utf8();
            match c {
                _ if c as u32 == u32::from(quote) => return Ok(out),
                '\\' => {
                    let Some(e) = self.text[self.at..].chars().next() else {
                        return Err("a string is not closed".into());
                    };
                    self.at += e.len_utf8();
                    out.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'b' => '\u{8}',
                        'f' => '\u{c}',
                        'u' => self.unicode()?,
                        other => other,
                    });
                }
                c => out.push(c),
            }
        }
    }

    fn unicode(&mut self) -> Result<char, String> {
        let hex = self
            .text
            .get(self.at..self.at + 4)
            .ok_or("a \\u escape is cut short")?;
        let code = u32::from_str_radix(hex, 16).map_err(|_| format!("\\u{hex} is not hex"))?;
        self.at += 4;
        // Surrogates (a \u pair) are not expected in names; keep them visible, never panic.
        Ok(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER))
    }
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c == b'.'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strict_and_lenient_forms() {
        let strict = parse(r#"{"id":"com.android.tools.r8.mapping","version":"2.2"}"#).unwrap();
        let lenient = parse("{ id: 'com.android.tools.r8.mapping', version: '2.2' }").unwrap();
        assert_eq!(strict, lenient);
        assert_eq!(strict.get("version").and_then(Value::as_str), Some("2.2"));
        let v =
            parse("{'positions': {'1': 4, '2': 5}, 'outline':'La;a()I', x: [true, null, -1.5]}")
                .unwrap();
        assert_eq!(
            v.get("positions").unwrap().get("2"),
            Some(&Value::Number(5.0))
        );
        assert_eq!(
            v.get("x"),
            Some(&Value::Array(vec![
                Value::Bool(true),
                Value::Null,
                Value::Number(-1.5)
            ]))
        );
        assert_eq!(
            parse(r#"'a\'b\u0041'"#).unwrap(),
            Value::String("a'bA".into())
        );
    }

    #[test]
    fn malformed_json_is_an_error_not_a_panic() {
        for bad in [
            "{",
            "{id:}",
            "{'id' 'x'}",
            "{'id':'x'} trailing",
            "'open",
            "[1,",
            "{'a':'\\u12'}",
            "nope",
            "{\"a\":1,}",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let deep = "[".repeat(100) + &"]".repeat(100);
        assert!(parse(&deep).is_err());
    }
}
