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

mod python;

pub(crate) use python::py_string;
use python::python;

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
    let mut lex = Braces {
        s,
        language,
        words: containers(language),
        rust: language == Language::Rust,
        script: matches!(
            language,
            Language::JavaScript | Language::TypeScript | Language::Tsx
        ),
        hidden,
        skipped: Vec::new(),
        blocks: Vec::new(),
        skip_depth: 0,
        skip_from: 0,
        head: Head::default(),
        parens: 0,
        last: b';',
        i: 0,
    };
    while lex.i < s.len() {
        lex.step()?;
    }
    lex.blocks.is_empty().then_some(lex.skipped)
}

/// Where [`braces`] is in a file, and what it has found.
struct Braces<'s, 'h> {
    s: &'s [u8],
    language: Language,
    /// The language's container words.
    words: &'static [&'static [u8]],
    rust: bool,
    script: bool,
    hidden: &'h mut Vec<Hidden>,
    /// The bodies found so far.
    skipped: Vec<(usize, usize)>,
    /// Open blocks: whether each is skipped; a template literal's `${` is a skipped block too.
    blocks: Vec<Block>,
    /// How many skipped blocks are open (the outermost one's start is `skip_from`).
    skip_depth: usize,
    skip_from: usize,
    head: Head,
    parens: i32,
    /// The last significant byte, for telling a regex from a division in scripts.
    last: u8,
    /// The next byte to read.
    i: usize,
}

impl Braces<'_, '_> {
    /// Reads what starts at `i`: whitespace and comments are passed over; a token counts in
    /// the head (outside skipped blocks) and is read by [`Braces::token`].
    fn step(&mut self) -> Option<()> {
        let (s, i) = (self.s, self.i);
        let b = s[i];
        if matches!(b, b'\n' | b' ' | b'\t' | b'\r') {
            self.i += 1;
            return Some(());
        }
        if b == b'/' && s.get(i + 1) == Some(&b'/') {
            while self.i < s.len() && s[self.i] != b'\n' {
                self.i += 1;
            }
            return Some(());
        }
        if b == b'/' && s.get(i + 1) == Some(&b'*') {
            self.i = block_comment(s, i, self.rust)?;
            return Some(());
        }
        if self.skip_depth == 0 && !matches!(b, b'{' | b'}' | b';') {
            if !self.head.tokens {
                self.head.first = b;
            }
            self.head.tokens = true;
        }
        self.last = self.token(b)?;
        Some(())
    }

    /// Reads the token that starts with the significant byte `b` at `i`, and returns what the
    /// next token is to see as the last significant byte.
    fn token(&mut self, b: u8) -> Option<u8> {
        let (s, i) = (self.s, self.i);
        let top = self.skip_depth == 0 && self.parens <= 0;
        match b {
            b'"' => self.i = quoted(s, i, b'"')?,
            b'\'' if self.rust => self.i = rust_quote(s, i),
            b'\'' => self.i = quoted(s, i, b'\'')?,
            b'`' if self.script => self.template_text(i + 1)?,
            b'`' if self.language == Language::Go => self.i = quoted(s, i, b'`')?,
            b'/' if self.script && regex_may_follow(self.last) => self.i = regex(s, i)?,
            b'{' => self.open(),
            b'}' => return self.close(),
            b';' => {
                if top {
                    self.head = Head::default();
                }
                self.i += 1;
            }
            b'[' if top && self.head.assigned => return self.value_array(),
            b'=' if top
                && !matches!(s.get(i + 1), Some(b'=' | b'>'))
                && !matches!(self.last, b'=' | b'!' | b'<' | b'>') =>
            {
                self.head.assigned = true;
                self.i += 1;
            }
            b'(' | b'[' => {
                self.parens += 1;
                self.i += 1;
            }
            b')' | b']' => {
                self.parens -= 1;
                self.i += 1;
            }
            b if b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b >= 0x80 => {
                return self.word();
            }
            b if b.is_ascii_digit() => {
                let mut j = i;
                while j < s.len() && (s[j].is_ascii_alphanumeric() || s[j] == b'.' || s[j] == b'_')
                {
                    j += 1;
                }
                self.i = j;
                return Some(b'0');
            }
            _ => self.i += 1,
        }
        Some(b)
    }

    /// Reads a template literal's text from `from`; a `${` it stops at opens a skipped block.
    fn template_text(&mut self, from: usize) -> Option<()> {
        let opened;
        (self.i, opened) = template(self.s, from)?;
        if opened {
            self.blocks.push(Block::Template);
            self.skip_depth += 1;
        }
        Some(())
    }

    /// A `{`: the block is skipped when inside a skipped one, when its head names no
    /// container (nor is a script's module scope or a Rust macro's block), or when it is a
    /// Rust function's; a new head begins.
    fn open(&mut self) {
        let head = &self.head;
        let module_scope = self.script && self.blocks.is_empty() && head.first == b'(';
        // A Rust macro's block (`cfg_rt! { pub fn spawn() {...} }`) may hold items.
        let macro_block = self.rust && self.last == b'!';
        let skip = self.skip_depth > 0
            || (head.tokens && !head.container && !module_scope && !macro_block)
            || head.function;
        if skip {
            if self.skip_depth == 0 {
                self.skip_from = self.i + 1;
            }
            self.skip_depth += 1;
        }
        self.blocks
            .push(if skip { Block::Skipped } else { Block::Walked });
        self.head = Head::default();
        self.parens = 0;
        self.i += 1;
    }

    /// A `}`: closes its block (noting a skipped outermost body long enough to skip), or
    /// ends a template literal's `${` and reads on in the literal. `None` when no block is
    /// open.
    fn close(&mut self) -> Option<u8> {
        let i = self.i;
        match self.blocks.pop()? {
            Block::Walked => {}
            Block::Skipped => {
                self.skip_depth -= 1;
                if self.skip_depth == 0 && i - self.skip_from >= MIN_SKIP {
                    self.skipped.push((self.skip_from, i));
                }
            }
            Block::Template => {
                // The end of a `${...}`: back into the template literal.
                self.skip_depth -= 1;
                self.template_text(i + 1)?;
                return Some(b'`');
            }
        }
        self.head = Head::default();
        self.parens = 0;
        self.i += 1;
        Some(b'}')
    }

    /// A `[` after a head's `=`: a value's array (a table of data), whose inside is skipped
    /// like a body.
    fn value_array(&mut self) -> Option<u8> {
        let i = self.i;
        let calls = self.script.then_some(&mut *self.hidden);
        let end = group_end(self.s, i, self.rust, calls)?;
        if end - (i + 1) >= MIN_SKIP {
            self.skipped.push((i + 1, end));
        }
        self.i = end + 1;
        Some(b']')
    }

    /// A word: outside skipped blocks and brackets a container word or Rust's `fn` marks the
    /// head; in a script's skipped block a `require` or `import` is noted; a Rust raw string's
    /// prefix reads its string. Returns `=` after a keyword that an expression follows (so a
    /// `/` opens a regex), else `a`.
    fn word(&mut self) -> Option<u8> {
        let s = self.s;
        let start = self.i;
        let mut i = start;
        while i < s.len()
            && (s[i].is_ascii_alphanumeric() || s[i] == b'_' || s[i] == b'$' || s[i] >= 0x80)
        {
            i += 1;
        }
        let word = &s[start..i];
        // Rust's raw strings: a prefix, then `#`s or a quote.
        if self.rust
            && matches!(word, b"r" | b"br" | b"cr")
            && matches!(s.get(i), Some(b'"' | b'#'))
        {
            i = rust_raw(s, i)?;
        } else if self.skip_depth == 0 && self.parens <= 0 {
            if self.words.contains(&word) {
                self.head.container = true;
            }
            if self.rust && word == b"fn" {
                self.head.function = true;
            }
        } else if self.script
            && self.skip_depth > 0
            && self.last != b'.'
            && matches!(word, b"require" | b"import")
        {
            self.hidden.push(Hidden::Call(start));
        }
        self.i = i;
        // After a keyword that an expression follows, a `/` opens a regex.
        let operand = self.script
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
        Some(if operand { b'=' } else { b'a' })
    }
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
