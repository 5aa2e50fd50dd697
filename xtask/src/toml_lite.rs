//! A reader for the subset of TOML that Cargo manifests use, enough for tidy's checks.
//!
//! Why not the `toml` crate: xtask must compile in seconds, and manifests use only table headers,
//! dotted keys, strings, booleans, numbers, arrays and inline tables. Anything outside that subset
//! is an error naming the line, so a check never silently misreads a manifest. Values that tidy
//! never looks at (numbers, dates) are kept as their raw text.

use anyhow::{Result, anyhow, bail};

/// A TOML value; numbers and dates stay as raw text because no check reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Str(String),
    Bool(bool),
    Array(Vec<Value>),
    /// An inline table, in source order; dotted keys inside it are joined with `.`.
    Table(Vec<(String, Value)>),
    Other(String),
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// One `key = value` line, with the table header it sits under and its 1-based line number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub table: Vec<String>,
    pub key: Vec<String>,
    pub value: Value,
    pub line: usize,
}

/// Parses a whole document into its entries, in source order. Errors name the line at fault.
pub fn parse(text: &str) -> Result<Vec<Entry>> {
    let mut c = Cursor {
        b: text.as_bytes(),
        pos: 0,
    };
    let mut table = Vec::new();
    let mut entries = Vec::new();
    loop {
        c.skip_blank();
        match c.peek() {
            None => break,
            Some(b'[') => {
                let close: &[u8] = if c.starts_with(b"[[") { b"]]" } else { b"]" };
                c.pos += close.len();
                c.skip_ws();
                table = c.key()?;
                c.skip_ws();
                if !c.starts_with(close) {
                    return Err(c.err("unterminated table header"));
                }
                c.pos += close.len();
                c.end_of_line()?;
            }
            Some(_) => {
                let line = c.line();
                let key = c.key()?;
                c.skip_ws();
                c.expect(b'=')?;
                c.skip_ws();
                let value = c.value()?;
                c.end_of_line()?;
                entries.push(Entry {
                    table: table.clone(),
                    key,
                    value,
                    line,
                });
            }
        }
    }
    Ok(entries)
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn starts_with(&self, s: &[u8]) -> bool {
        self.b[self.pos..].starts_with(s)
    }

    fn line(&self) -> usize {
        self.b[..self.pos].iter().filter(|&&c| c == b'\n').count() + 1
    }

    fn err(&self, msg: &str) -> anyhow::Error {
        anyhow!("line {}: {msg}", self.line())
    }

    fn expect(&mut self, want: u8) -> Result<()> {
        if self.peek() != Some(want) {
            return Err(self.err(&format!("expected `{}`", want as char)));
        }
        self.pos += 1;
        Ok(())
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    fn skip_comment(&mut self) {
        if self.peek() == Some(b'#') {
            while !matches!(self.peek(), None | Some(b'\n')) {
                self.pos += 1;
            }
        }
    }

    /// Skips whitespace, newlines and comments: what may sit between entries or array items.
    fn skip_blank(&mut self) {
        loop {
            match self.peek() {
                Some(b' ' | b'\t' | b'\r' | b'\n') => self.pos += 1,
                Some(b'#') => self.skip_comment(),
                _ => break,
            }
        }
    }

    fn end_of_line(&mut self) -> Result<()> {
        self.skip_ws();
        self.skip_comment();
        if self.starts_with(b"\r\n") {
            self.pos += 2;
        } else if self.peek() == Some(b'\n') {
            self.pos += 1;
        } else if self.peek().is_some() {
            return Err(self.err("expected the end of the line"));
        }
        Ok(())
    }

    /// A dotted key: bare or quoted parts separated by `.`.
    fn key(&mut self) -> Result<Vec<String>> {
        let mut parts = Vec::new();
        loop {
            self.skip_ws();
            let part = match self.peek() {
                Some(b'"') => self.basic_string()?,
                Some(b'\'') => self.literal_string()?,
                _ => {
                    let start = self.pos;
                    while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
                    {
                        self.pos += 1;
                    }
                    if start == self.pos {
                        return Err(self.err("expected a key"));
                    }
                    self.text(start)
                }
            };
            parts.push(part);
            self.skip_ws();
            if self.peek() == Some(b'.') {
                self.pos += 1;
            } else {
                return Ok(parts);
            }
        }
    }

    fn text(&self, start: usize) -> String {
        // Slices start and end at ASCII delimiters, so they are valid UTF-8 whenever the
        // input was; lossy conversion only guards the impossible case.
        String::from_utf8_lossy(&self.b[start..self.pos]).into_owned()
    }

    fn value(&mut self) -> Result<Value> {
        match self.peek() {
            Some(b'"') if self.starts_with(b"\"\"\"") => self.multiline_basic().map(Value::Str),
            Some(b'"') => self.basic_string().map(Value::Str),
            Some(b'\'') if self.starts_with(b"'''") => self.multiline_literal().map(Value::Str),
            Some(b'\'') => self.literal_string().map(Value::Str),
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                loop {
                    self.skip_blank();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        return Ok(Value::Array(items));
                    }
                    items.push(self.value()?);
                    self.skip_blank();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {}
                        _ => return Err(self.err("expected `,` or `]` in an array")),
                    }
                }
            }
            Some(b'{') => {
                self.pos += 1;
                let mut pairs = Vec::new();
                loop {
                    self.skip_blank();
                    if self.peek() == Some(b'}') {
                        self.pos += 1;
                        return Ok(Value::Table(pairs));
                    }
                    let key = self.key()?.join(".");
                    self.skip_ws();
                    self.expect(b'=')?;
                    self.skip_ws();
                    pairs.push((key, self.value()?));
                    self.skip_blank();
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b'}') => {}
                        _ => return Err(self.err("expected `,` or `}` in an inline table")),
                    }
                }
            }
            _ => {
                let start = self.pos;
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b']' | b'}' | b'#' | b'\n' | b'\r' | b' ' | b'\t')
                ) {
                    self.pos += 1;
                }
                match &self.b[start..self.pos] {
                    b"" => Err(self.err("expected a value")),
                    b"true" => Ok(Value::Bool(true)),
                    b"false" => Ok(Value::Bool(false)),
                    _ => Ok(Value::Other(self.text(start))),
                }
            }
        }
    }

    fn literal_string(&mut self) -> Result<String> {
        self.pos += 1;
        let start = self.pos;
        loop {
            match self.peek() {
                Some(b'\'') => break,
                None | Some(b'\n') => return Err(self.err("unterminated string")),
                Some(_) => self.pos += 1,
            }
        }
        let s = self.text(start);
        self.pos += 1;
        Ok(s)
    }

    fn multiline_literal(&mut self) -> Result<String> {
        self.pos += 3;
        if self.starts_with(b"\n") {
            self.pos += 1;
        }
        let start = self.pos;
        while !self.starts_with(b"'''") {
            if self.peek().is_none() {
                return Err(self.err("unterminated string"));
            }
            self.pos += 1;
        }
        let s = self.text(start);
        self.pos += 3;
        Ok(s)
    }

    fn basic_string(&mut self) -> Result<String> {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            match self.peek() {
                Some(b'"') => break,
                Some(b'\\') => self.escape(&mut out)?,
                None | Some(b'\n') => return Err(self.err("unterminated string")),
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        self.pos += 1;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn multiline_basic(&mut self) -> Result<String> {
        self.pos += 3;
        if self.starts_with(b"\n") {
            self.pos += 1;
        }
        let mut out = Vec::new();
        while !self.starts_with(b"\"\"\"") {
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'\\') if matches!(self.b.get(self.pos + 1), Some(b'\n' | b'\r' | b' ')) => {
                    // A line-ending backslash swallows the newline and the next line's indent.
                    self.pos += 1;
                    while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
                        self.pos += 1;
                    }
                }
                Some(b'\\') => self.escape(&mut out)?,
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        self.pos += 3;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn escape(&mut self, out: &mut Vec<u8>) -> Result<()> {
        self.pos += 1;
        let simple = match self.peek() {
            Some(b'b') => Some(b'\x08'),
            Some(b't') => Some(b'\t'),
            Some(b'n') => Some(b'\n'),
            Some(b'f') => Some(b'\x0c'),
            Some(b'r') => Some(b'\r'),
            Some(b'"') => Some(b'"'),
            Some(b'\\') => Some(b'\\'),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            self.pos += 1;
            return Ok(());
        }
        let digits = match self.peek() {
            Some(b'u') => 4,
            Some(b'U') => 8,
            _ => bail!("line {}: unknown escape in a string", self.line()),
        };
        let hex = self
            .b
            .get(self.pos + 1..self.pos + 1 + digits)
            .ok_or_else(|| self.err("short unicode escape"))?;
        let code = std::str::from_utf8(hex)
            .ok()
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .and_then(char::from_u32)
            .ok_or_else(|| self.err("bad unicode escape"))?;
        out.extend_from_slice(code.encode_utf8(&mut [0; 4]).as_bytes());
        self.pos += 1 + digits;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn s(v: &str) -> Value {
        Value::Str(v.to_owned())
    }

    /// Parses `text` and compares `(table.key, value)` pairs, dotted, with `expected`.
    fn check(text: &str, expected: &[(&str, Value)]) {
        let got: Vec<(String, Value)> = parse(text)
            .expect("parses")
            .into_iter()
            .map(|e| {
                let mut path = e.table;
                path.extend(e.key);
                (path.join("."), e.value)
            })
            .collect();
        let expected: Vec<(String, Value)> = expected
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        assert_eq!(got, expected);
    }

    #[test]
    fn the_subset_cargo_manifests_use() {
        check(
            r#"
# comment = "not an entry"
[package]
name = "a#b" # trailing comment
"quoted.key" = 'C:\path'
description = """
one \
  two"""
license = '''raw \n'''
version = 1.0

[target.'cfg(unix)'.dependencies]
x = { version = "1", features = ["a", "b",], optional = true }
y.workspace = true

[[bin]]
list = [
  "one", # comment inside an array
  [2, "nested"],
]
esc = "tab\there \u00e9"
"#,
            &[
                ("package.name", s("a#b")),
                ("package.quoted.key", s("C:\\path")),
                ("package.description", s("one two")),
                ("package.license", s("raw \\n")),
                ("package.version", Value::Other("1.0".to_owned())),
                (
                    "target.cfg(unix).dependencies.x",
                    Value::Table(vec![
                        ("version".to_owned(), s("1")),
                        ("features".to_owned(), Value::Array(vec![s("a"), s("b")])),
                        ("optional".to_owned(), Value::Bool(true)),
                    ]),
                ),
                (
                    "target.cfg(unix).dependencies.y.workspace",
                    Value::Bool(true),
                ),
                (
                    "bin.list",
                    Value::Array(vec![
                        s("one"),
                        Value::Array(vec![Value::Other("2".to_owned()), s("nested")]),
                    ]),
                ),
                ("bin.esc", s("tab\there é")),
            ],
        );
    }

    #[test]
    fn errors_name_the_line() {
        for (text, message) in [
            ("a = 1\nb = \"open\n", "line 2: unterminated string"),
            ("[a\nb = 1\n", "line 1: unterminated table header"),
            ("a = [1 2]\n", "line 1: expected `,` or `]` in an array"),
            ("a = 1 b = 2\n", "line 1: expected the end of the line"),
            ("\n\n= 3\n", "line 3: expected a key"),
        ] {
            let err = parse(text).expect_err(text);
            assert_eq!(err.to_string(), message, "{text:?}");
        }
    }
}
