//! Skimming: which bytes of a file an outline needs parsed. Function bodies hold no
//! definitions an outline shows, yet they are most of a file's bytes, and tree-sitter lexes and
//! parses every byte it is given. A hand-written lexer (strings, comments, brackets; a few
//! hundred MB/s) finds the bodies first, and the parser is then given everything else as its
//! included ranges: the tree keeps the file's own byte offsets and lines, and a skipped body
//! reads to the parser as an empty one (`{}`; in Python, a body of its first statement, so a
//! docstring stays).
//!
//! A skipped block is one whose head (the tokens since the previous `;`, `{` or `}` at its
//! level) names no container: a function, method, closure or initializer body. Containers
//! (`impl`, `trait`, `mod`, `class`, `namespace`, ...) are entered and their members skimmed in
//! turn. Misreading a head costs only speed when it walks a body, so every doubt walks. Where
//! the lexer loses its way (unbalanced brackets at the end: a preprocessor branch, a regex it
//! took for a division), it skips nothing; and the caller parses the whole file again when the
//! skimmed tree has an error, so skimming never changes an outline.
//!
//! Imports hide in bodies too (a Python function's `import`, a script's `require(...)` or
//! `import(...)`): the lexer notes where one may start in the bytes it skips ([`Hidden`]), and
//! `imports.rs` reads them there by hand, so a skimmed file's imports are the whole parse's.
//! Rust, Go and Java bodies hold none that the import walk reads.
use tree_sitter::{Point, Range};

use crate::Language;

/// Bodies shorter than this are parsed: a range costs more than the bytes it saves.
const MIN_SKIP: usize = 32;

/// Where an import may start inside the skipped bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Hidden {
    /// A script's `require` or `import` word at this byte (not after a `.`): perhaps a call
    /// with a string.
    Call(usize),
    /// A Python logical line whose code runs from `start` (after its indentation) to `end` and
    /// holds the word `import`: perhaps an import statement, or several, or a compound
    /// statement's one-line body.
    PythonLine { start: usize, end: usize },
}

impl Hidden {
    fn at(self) -> usize {
        match self {
            Hidden::Call(at) => at,
            Hidden::PythonLine { start, .. } => start,
        }
    }
}

/// What a skim parses, and where imports may hide in what it does not.
pub(crate) struct Skim {
    /// The ranges to parse.
    pub(crate) ranges: Vec<Range>,
    /// Places in the skipped bytes where an import may start, in byte order.
    pub(crate) hidden: Vec<Hidden>,
}

/// The ranges to parse, or `None` to parse everything (nothing worth skipping, or a file the
/// lexer cannot follow).
pub(crate) fn included_ranges(language: Language, src: &str) -> Option<Skim> {
    let mut hidden = Vec::new();
    let skipped = match language {
        Language::Python => python(src, &mut hidden)?,
        Language::Rust
        | Language::JavaScript
        | Language::TypeScript
        | Language::Tsx
        | Language::Go
        | Language::Java => braces(language, src.as_bytes(), &mut hidden)?,
        // C and C++ are parsed whole: the preprocessor's branches (`#ifdef` around a function's
        // head) and its macros make braces an unreliable guide, and on /usr/include/c++ the
        // parses it made again cost more than skimming saved.
        _ => return None,
    };
    if skipped.is_empty() {
        return None;
    }
    // Only what the parser does not see: a place in a body too short to skip is in the tree.
    let mut k = 0;
    hidden.retain(|h| {
        let at = h.at();
        while k < skipped.len() && skipped[k].1 <= at {
            k += 1;
        }
        k < skipped.len() && skipped[k].0 <= at
    });
    Some(Skim {
        ranges: complement(src.as_bytes(), &skipped),
        hidden,
    })
}

/// The ranges between `skipped` (sorted, disjoint byte ranges) with their points.
fn complement(src: &[u8], skipped: &[(usize, usize)]) -> Vec<Range> {
    let mut lines = Lines {
        src,
        at: 0,
        row: 0,
        line_start: 0,
    };
    let mut out = Vec::with_capacity(skipped.len() + 1);
    let mut start = 0;
    for &(a, b) in skipped {
        let start_point = lines.point(start);
        let end_point = lines.point(a);
        out.push(Range {
            start_byte: start,
            end_byte: a,
            start_point,
            end_point,
        });
        start = b;
    }
    let start_point = lines.point(start);
    let end_point = lines.point(src.len());
    out.push(Range {
        start_byte: start,
        end_byte: src.len(),
        start_point,
        end_point,
    });
    out
}

/// Rows and columns of increasing byte offsets.
struct Lines<'s> {
    src: &'s [u8],
    at: usize,
    row: usize,
    line_start: usize,
}

impl Lines<'_> {
    fn point(&mut self, to: usize) -> Point {
        for (i, &b) in self.src[self.at..to].iter().enumerate() {
            if b == b'\n' {
                self.row += 1;
                self.line_start = self.at + i + 1;
            }
        }
        self.at = to;
        Point::new(self.row, to - self.line_start)
    }
}

/// Words that make a braced block a container, whose members are definitions: those an
/// outline shows, and the variants and fields a search finds (`members.rs`).
fn containers(language: Language) -> &'static [&'static [u8]] {
    match language {
        Language::Rust => &[
            b"impl", b"trait", b"mod", b"extern", b"enum", b"struct", b"union",
        ],
        Language::JavaScript | Language::TypeScript | Language::Tsx => &[
            b"class",
            b"interface",
            b"namespace",
            b"module",
            b"declare",
            b"global",
            b"enum",
        ],
        Language::Java => &[b"class", b"interface", b"enum", b"record"],
        Language::Go => &[b"struct"],
        _ => &[],
    }
}

/// What the head of the block being read says so far.
#[derive(Default)]
struct Head {
    /// Any token since the head began.
    tokens: bool,
    /// A container word, outside brackets.
    container: bool,
    /// Rust's `fn`, which makes any head a function's.
    function: bool,
    /// An `=` outside brackets: what follows is a value, whose `[...]` holds no definition.
    assigned: bool,
    /// The head's first byte: a top-level block whose head opens with `(` is an immediately
    /// invoked function's (`((module) => {`, `(function () {`), a bundle's module scope.
    first: u8,
}

/// The bodies of a brace language: the inside of every block whose head names no container.
/// In scripts, every `require` and `import` word inside a block or value array it may skip is
/// noted in `hidden` (the caller keeps those that end up skipped).
fn braces(language: Language, s: &[u8], hidden: &mut Vec<Hidden>) -> Option<Vec<(usize, usize)>> {
    let words = containers(language);
    let rust = language == Language::Rust;
    let script = matches!(
        language,
        Language::JavaScript | Language::TypeScript | Language::Tsx
    );
    let mut skipped = Vec::new();
    // Open blocks: whether each is skipped; a template literal's `${` is a skipped block too.
    let mut blocks: Vec<Block> = Vec::new();
    // How many skipped blocks are open (the outermost one's start is `skip_from`).
    let mut skip_depth = 0usize;
    let mut skip_from = 0usize;
    let mut head = Head::default();
    let mut parens = 0i32;
    // The last significant byte, for telling a regex from a division in scripts.
    let mut last = b';';
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        match b {
            b'\n' | b' ' | b'\t' | b'\r' => {
                i += 1;
                continue;
            }
            _ => {}
        }
        if b == b'/' && s.get(i + 1) == Some(&b'/') {
            while i < s.len() && s[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if b == b'/' && s.get(i + 1) == Some(&b'*') {
            i = block_comment(s, i, rust)?;
            continue;
        }
        if skip_depth == 0 && !matches!(b, b'{' | b'}' | b';') {
            if !head.tokens {
                head.first = b;
            }
            head.tokens = true;
        }
        match b {
            b'"' => i = quoted(s, i, b'"')?,
            b'\'' if rust => i = rust_quote(s, i),
            b'\'' => i = quoted(s, i, b'\'')?,
            b'`' if script => {
                let opened;
                (i, opened) = template(s, i + 1)?;
                if opened {
                    blocks.push(Block::Template);
                    skip_depth += 1;
                }
            }
            b'`' if language == Language::Go => i = quoted(s, i, b'`')?,
            b'/' if script && regex_may_follow(last) => i = regex(s, i)?,
            b'{' => {
                let module_scope = script && blocks.is_empty() && head.first == b'(';
                // A Rust macro's block (`cfg_rt! { pub fn spawn() {...} }`) may hold items.
                let macro_block = rust && last == b'!';
                let skip = skip_depth > 0
                    || (head.tokens && !head.container && !module_scope && !macro_block)
                    || head.function;
                if skip {
                    if skip_depth == 0 {
                        skip_from = i + 1;
                    }
                    skip_depth += 1;
                }
                blocks.push(if skip { Block::Skipped } else { Block::Walked });
                head = Head::default();
                parens = 0;
                i += 1;
            }
            b'}' => {
                match blocks.pop()? {
                    Block::Walked => {}
                    Block::Skipped => {
                        skip_depth -= 1;
                        if skip_depth == 0 && i - skip_from >= MIN_SKIP {
                            skipped.push((skip_from, i));
                        }
                    }
                    Block::Template => {
                        // The end of a `${...}`: back into the template literal.
                        skip_depth -= 1;
                        let opened;
                        (i, opened) = template(s, i + 1)?;
                        if opened {
                            blocks.push(Block::Template);
                            skip_depth += 1;
                        }
                        last = b'`';
                        continue;
                    }
                }
                head = Head::default();
                parens = 0;
                i += 1;
            }
            b';' => {
                if skip_depth == 0 && parens <= 0 {
                    head = Head::default();
                }
                i += 1;
            }
            b'[' if skip_depth == 0 && parens <= 0 && head.assigned => {
                // A value's array (a table of data): its inside is skipped like a body.
                let end = group_end(s, i, rust, script.then_some(&mut *hidden))?;
                if end - (i + 1) >= MIN_SKIP {
                    skipped.push((i + 1, end));
                }
                i = end + 1;
                last = b']';
                continue;
            }
            b'=' if skip_depth == 0
                && parens <= 0
                && !matches!(s.get(i + 1), Some(b'=' | b'>'))
                && !matches!(last, b'=' | b'!' | b'<' | b'>') =>
            {
                head.assigned = true;
                i += 1;
            }
            b'(' | b'[' => {
                parens += 1;
                i += 1;
            }
            b')' | b']' => {
                parens -= 1;
                i += 1;
            }
            b if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80 => {
                let start = i;
                while i < s.len()
                    && (s[i].is_ascii_alphanumeric()
                        || s[i] == b'_'
                        || s[i] == b'$'
                        || s[i] >= 0x80)
                {
                    i += 1;
                }
                let word = &s[start..i];
                // Rust's raw strings: a prefix, then `#`s or a quote.
                if rust
                    && matches!(word, b"r" | b"br" | b"cr")
                    && matches!(s.get(i), Some(b'"' | b'#'))
                {
                    i = rust_raw(s, i)?;
                } else if skip_depth == 0 && parens <= 0 {
                    if words.contains(&word) {
                        head.container = true;
                    }
                    if rust && word == b"fn" {
                        head.function = true;
                    }
                } else if script
                    && skip_depth > 0
                    && last != b'.'
                    && matches!(word, b"require" | b"import")
                {
                    hidden.push(Hidden::Call(start));
                }
                // After a keyword that an expression follows, a `/` opens a regex.
                let operand = script
                    && matches!(
                        word,
                        b"return"
                            | b"typeof"
                            | b"case"
                            | b"in"
                            | b"of"
                            | b"instanceof"
                            | b"new"
                            | b"delete"
                            | b"void"
                            | b"throw"
                            | b"yield"
                            | b"await"
                            | b"else"
                            | b"do"
                    );
                last = if operand { b'=' } else { b'a' };
                continue;
            }
            b if b.is_ascii_digit() => {
                while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == b'.' || s[i] == b'_')
                {
                    i += 1;
                }
                last = b'0';
                continue;
            }
            _ => i += 1,
        }
        last = b;
    }
    blocks.is_empty().then_some(skipped)
}

/// The `]` that closes the `[` at `i`, past strings, chars and comments; with `calls`, the
/// `require` and `import` words on the way are noted there.
fn group_end(
    s: &[u8],
    mut i: usize,
    rust: bool,
    mut calls: Option<&mut Vec<Hidden>>,
) -> Option<usize> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80;
    let mut depth = 0usize;
    while i < s.len() {
        if let Some(calls) = calls.as_deref_mut()
            && matches!(s[i], b'r' | b'i')
            && i > 0
            && !word(s[i - 1])
            && s[i - 1] != b'.'
        {
            let rest = &s[i..];
            let len = if rest.starts_with(b"require") {
                7
            } else if rest.starts_with(b"import") {
                6
            } else {
                0
            };
            if len > 0 && !s.get(i + len).is_some_and(|&b| word(b)) {
                calls.push(Hidden::Call(i));
            }
        }
        match s[i] {
            b'[' => {
                depth += 1;
                i += 1;
            }
            b']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
                i += 1;
            }
            b'"' => i = quoted(s, i, b'"')?,
            b'\'' if rust => i = rust_quote(s, i),
            b'\'' => i = quoted(s, i, b'\'')?,
            b'/' if s.get(i + 1) == Some(&b'/') => {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if s.get(i + 1) == Some(&b'*') => i = block_comment(s, i, rust)?,
            _ => i += 1,
        }
    }
    None
}

enum Block {
    Walked,
    Skipped,
    /// A template literal's `${`.
    Template,
}

/// The end of the block comment at `i` (nested in Rust).
fn block_comment(s: &[u8], mut i: usize, nested: bool) -> Option<usize> {
    let mut depth = 0;
    while i + 1 < s.len() {
        if s[i] == b'/' && s[i + 1] == b'*' {
            depth += 1;
            i += 2;
            if !nested {
                break;
            }
        } else if s[i] == b'*' && s[i + 1] == b'/' {
            depth -= 1;
            i += 2;
            if depth == 0 {
                return Some(i);
            }
        } else {
            i += 1;
        }
    }
    if !nested {
        while i + 1 < s.len() {
            if s[i] == b'*' && s[i + 1] == b'/' {
                return Some(i + 2);
            }
            i += 1;
        }
    }
    None
}

/// The end of the string opened by `q` at `i`, with backslash escapes.
fn quoted(s: &[u8], mut i: usize, q: u8) -> Option<usize> {
    i += 1;
    while i < s.len() {
        match s[i] {
            b'\\' if q != b'`' => i += 2,
            c if c == q => return Some(i + 1),
            // A newline ends an unterminated one-line string (C's `'` in a `#error`, say).
            b'\n' if q != b'`' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

/// A Rust `'`: a char literal (`'{'`, `'\''`, `'\u{7b}'`) or a lifetime (`'a`).
fn rust_quote(s: &[u8], i: usize) -> usize {
    match s.get(i + 1) {
        Some(b'\\') => {
            let mut j = i + 2;
            while j < s.len() && s[j] != b'\'' && s[j] != b'\n' {
                j += 1;
            }
            j + 1
        }
        Some(_) => {
            // One char (of up to 4 bytes) then a quote is a literal; anything else a lifetime.
            let len = s[i + 1..]
                .iter()
                .skip(1)
                .take_while(|&&b| b & 0xC0 == 0x80)
                .count()
                + 1;
            if s.get(i + 1 + len) == Some(&b'\'') {
                i + 2 + len
            } else {
                i + 1
            }
        }
        None => i + 1,
    }
}

/// The end of a Rust raw string whose `#`s or quote start at `i`.
fn rust_raw(s: &[u8], mut i: usize) -> Option<usize> {
    let hashes = s[i..].iter().take_while(|&&b| b == b'#').count();
    i += hashes;
    if s.get(i) != Some(&b'"') {
        return Some(i);
    }
    i += 1;
    while i < s.len() {
        if s[i] == b'"'
            && s[i + 1..]
                .iter()
                .take(hashes)
                .filter(|&&b| b == b'#')
                .count()
                == hashes
        {
            return Some(i + 1 + hashes);
        }
        i += 1;
    }
    None
}

/// Reads a template literal from `i` (after its opening backtick or a `}` that closed a
/// `${`) to its end, or to a `${`: where it stopped, and whether at a `${`.
fn template(s: &[u8], mut i: usize) -> Option<(usize, bool)> {
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'`' => return Some((i + 1, false)),
            b'$' if s.get(i + 1) == Some(&b'{') => return Some((i + 2, true)),
            _ => i += 1,
        }
    }
    None
}

/// Whether a `/` after the significant byte `last` starts a regex literal rather than a
/// division: after an operator or an opening bracket, not after a value.
fn regex_may_follow(last: u8) -> bool {
    !matches!(last, b'a' | b'0' | b')' | b']' | b'}' | b'"' | b'\'' | b'`')
}

/// The end of the regex literal at `i` (character classes may hold `/`).
fn regex(s: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    let mut class = false;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'[' => {
                class = true;
                i += 1;
            }
            b']' => {
                class = false;
                i += 1;
            }
            b'/' if !class => return Some(i + 1),
            b'\n' => return None,
            _ => i += 1,
        }
    }
    None
}

/// One logical line of Python: where its code ends, its indentation, and what it is.
struct Logical {
    /// Its first byte of code (after the indentation).
    start: usize,
    /// Just after its last byte of code (before a comment and the newline).
    code_end: usize,
    indent: usize,
    /// It opens a function (`def`, `async def`) whose block follows on the next lines.
    def_header: bool,
    /// It ends with `:`: a compound statement's header.
    header: bool,
}

/// The bodies of Python functions, after their first statement (a docstring, if any). A body
/// whose first statement is compound is not skipped: its first line alone would not parse.
/// The skipped lines that hold the word `import` are noted in `hidden`.
fn python(src: &str, hidden: &mut Vec<Hidden>) -> Option<Vec<(usize, usize)>> {
    let s = src.as_bytes();
    let lines = logical_lines(s)?;
    let mut skipped = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let line = &lines[k];
        if !line.def_header {
            k += 1;
            continue;
        }
        let Some(first) = lines.get(k + 1).filter(|f| f.indent > line.indent) else {
            k += 1;
            continue;
        };
        if first.header {
            k += 1;
            continue;
        }
        let mut last_code = first.code_end;
        let mut j = k + 2;
        while j < lines.len() && lines[j].indent > line.indent {
            last_code = lines[j].code_end;
            j += 1;
        }
        // From the end of the first statement's code to the end of the block's: the block
        // (and the function) still ends on the line it ends on.
        if last_code > first.code_end && last_code - first.code_end >= MIN_SKIP {
            skipped.push((first.code_end, last_code));
            for l in &lines[k + 2..j] {
                if src
                    .get(l.start..l.code_end)
                    .is_some_and(|code| code.contains("import"))
                {
                    hidden.push(Hidden::PythonLine {
                        start: l.start,
                        end: l.code_end,
                    });
                }
            }
        }
        k = j;
    }
    Some(skipped)
}

/// Python's logical lines (blank and comment-only lines are none), following strings,
/// brackets and backslash continuations.
fn logical_lines(s: &[u8]) -> Option<Vec<Logical>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let mut indent = 0;
        while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
            indent += if s[i] == b'\t' { 8 - indent % 8 } else { 1 };
            i += 1;
        }
        match s.get(i) {
            None => break,
            Some(b'\n' | b'\r') | Some(b'#') | Some(b'\x0c') => {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        let start = i;
        let word_end = |from: usize| {
            from + s[from..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count()
        };
        let w = word_end(start);
        let mut def_header = &s[start..w] == b"def";
        if &s[start..w] == b"async" {
            let mut k = w;
            while k < s.len() && s[k] == b' ' {
                k += 1;
            }
            def_header = &s[k..word_end(k)] == b"def";
        }
        let mut depth = 0i32;
        let mut code_end = i;
        let mut last = 0u8;
        while i < s.len() {
            let b = s[i];
            match b {
                b'\n' if depth <= 0 => break,
                b'\\' if s.get(i + 1) == Some(&b'\n') => i += 2,
                b'\\' if s.get(i + 1) == Some(&b'\r') => i += 3,
                b'#' => {
                    while i < s.len() && s[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'"' | b'\'' => {
                    i = py_string(s, i)?;
                    code_end = i;
                    last = b;
                    continue;
                }
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    i += 1;
                }
                b')' | b']' | b'}' => {
                    depth -= 1;
                    i += 1;
                }
                b' ' | b'\t' | b'\r' | b'\n' => {
                    i += 1;
                    continue;
                }
                _ => i += 1,
            }
            code_end = i;
            last = b;
        }
        i = (i + 1).min(s.len());
        out.push(Logical {
            start,
            code_end,
            indent,
            def_header: def_header && last == b':',
            header: last == b':',
        });
    }
    Some(out)
}

/// The end of the Python string whose quote is at `i` (prefixes are read as names before it,
/// harmlessly).
pub(crate) fn py_string(s: &[u8], i: usize) -> Option<usize> {
    let q = s[i];
    let triple = s.get(i + 1) == Some(&q) && s.get(i + 2) == Some(&q);
    let raw = i > 0 && matches!(s[i - 1], b'r' | b'R');
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < s.len() {
        match s[j] {
            b'\\' if !raw || s.get(j + 1) == Some(&q) || s.get(j + 1) == Some(&b'\\') => j += 2,
            b'\n' if !triple => return Some(j),
            c if c == q => {
                if !triple {
                    return Some(j + 1);
                }
                if s.get(j + 1) == Some(&q) && s.get(j + 2) == Some(&q) {
                    return Some(j + 3);
                }
                j += 1;
            }
            _ => j += 1,
        }
    }
    None
}
