//! Where a source file's definitions begin and end, read from its text alone: what the
//! localisation bench maps the gold patch's changed lines to (`bench_localize_gold`).
//!
//! merkle's own outline would be the natural source, but it cannot serve here: the outline
//! frame (`merkle get-node`) gives no last lines and keeps within 4 KiB by leaving out the
//! deeper definitions of a long file (a large class's methods), and a search names only the
//! definitions it matched. So the spans are read here by the same rules merkle's skimmed
//! parse follows: the definitions at file level and inside types (classes, structs, traits,
//! namespaces and impl blocks passed through), never inside a function's body (merkle skips
//! bodies); a definition starts on its name's line, as merkle's facts count it (a decorator,
//! an annotation or a return type on an earlier line is outside it).
//!
//! - Python, exactly: `def`, `async def` and `class` by indentation over logical lines
//!   (brackets, strings, backslashes), ending at the last line of their last statement.
//! - Brace languages (Rust, C, C++, Java, Go, JavaScript, TypeScript), closely: strings,
//!   comments and (C family) preprocessor lines skipped, a block's header (what comes before
//!   its `{`) classified as a function (a name before a parameter list), a type (`class`,
//!   `struct`, `enum`, `trait`, ...), a scope passed through (`namespace`, `mod`, `impl`,
//!   `extern`) or an opaque block; a function ends on its closing brace, a declaration without
//!   a body (`int g();`) on its semicolon.
//! - Anything else has no definitions.

/// A definition: its name and the 1-based lines of its name and its end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub line: usize,
    pub end: usize,
    /// Python: the indentation of its line, for telling a line inserted after its last line
    /// that belongs to it (indented deeper) from one after it; `None` elsewhere.
    pub indent: Option<usize>,
}

/// How a brace language's text is read: which strings it has, whether `#` starts a
/// preprocessor line (C family) and `'` a lifetime (Rust).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    C,
    Rust,
    Java,
    /// JavaScript and TypeScript: backquoted strings.
    Script,
    /// Go: backquoted strings, and a line break outside brackets ends a statement as a `;`
    /// does (Go's semicolon insertion), so `package`, `import (...)` and `var x = 1` lines
    /// never join the next function's header (`import` is no function).
    Go,
}

/// The definitions of the file at `path` holding `text`, by its extension (none for a
/// language not read).
pub fn definitions(path: &str, text: &str) -> Vec<Definition> {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    let dialect = match ext {
        "py" | "pyi" => return python_definitions(text),
        "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" | "ipp" | "inl" => Dialect::C,
        "rs" => Dialect::Rust,
        "java" | "kt" | "cs" | "scala" => Dialect::Java,
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Dialect::Script,
        "go" => Dialect::Go,
        _ => return Vec::new(),
    };
    brace_definitions(text, dialect)
}

/// A Python logical line that is not blank or a comment: its first and last physical lines,
/// its indentation and its first physical line's text.
struct Logical<'a> {
    first: usize,
    last: usize,
    indent: usize,
    head: &'a str,
}

/// Python's logical lines: physical lines joined while a bracket, a string or a backslash
/// is open.
fn logical_lines(text: &str) -> Vec<Logical<'_>> {
    let mut out: Vec<Logical<'_>> = Vec::new();
    let (mut depth, mut string, mut open) = (0usize, None::<(u8, bool)>, false);
    for (i, line) in text.lines().enumerate() {
        let b = line.trim_end_matches('\r').as_bytes();
        if !open {
            let rest = line.trim_start();
            if rest.is_empty() || rest.starts_with('#') {
                continue;
            }
            let indent = line[..line.len() - rest.len()].chars().fold(0, |col, c| {
                if c == '\t' { col / 8 * 8 + 8 } else { col + 1 }
            });
            out.push(Logical {
                first: i + 1,
                last: i + 1,
                indent,
                head: rest,
            });
        } else if let Some(l) = out.last_mut() {
            l.last = i + 1;
        }
        let mut backslash = false;
        let mut j = 0;
        while j < b.len() {
            backslash = false;
            if let Some((q, triple)) = string {
                if b[j] == b'\\' {
                    backslash = j + 1 == b.len();
                    j += 2;
                    continue;
                }
                if triple && b[j..].starts_with(&[q, q, q]) {
                    string = None;
                    j += 3;
                    continue;
                }
                if !triple && b[j] == q {
                    string = None;
                }
                j += 1;
                continue;
            }
            match b[j] {
                b'#' => break,
                q @ (b'\'' | b'"') => {
                    let triple = b[j..].starts_with(&[q, q, q]);
                    string = Some((q, triple));
                    j += if triple { 3 } else { 1 };
                    continue;
                }
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' | b'}' => depth = depth.saturating_sub(1),
                b'\\' => backslash = j + 1 == b.len(),
                _ => {}
            }
            j += 1;
        }
        // A one-quote string ends with its line unless a backslash carries it on.
        if string.is_some_and(|(_, triple)| !triple) && !backslash {
            string = None;
        }
        open = depth > 0 || string.is_some() || backslash;
    }
    out
}

/// The name a Python logical line defines (`def`, `async def`, `class`) and whether it is a
/// function.
fn python_header(head: &str) -> Option<(String, bool)> {
    fn after<'a>(s: &'a str, keyword: &str) -> Option<&'a str> {
        s.strip_prefix(keyword)
            .filter(|r| r.starts_with([' ', '\t']))
            .map(str::trim_start)
    }
    let head = after(head, "async").unwrap_or(head);
    let (rest, function) = match (after(head, "def"), after(head, "class")) {
        (Some(r), _) => (r, true),
        (None, Some(r)) => (r, false),
        (None, None) => return None,
    };
    let name: String = rest
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some((name, function))
}

/// Python's definitions (see the module documentation).
pub fn python_definitions(text: &str) -> Vec<Definition> {
    let mut defs: Vec<Definition> = Vec::new();
    // Open definitions: (index in defs, whether a function).
    let mut open: Vec<(usize, bool)> = Vec::new();
    let mut last = 0;
    for l in logical_lines(text) {
        while let Some(&(d, _)) = open.last() {
            if defs[d].indent.is_some_and(|i| l.indent > i) {
                break;
            }
            defs[d].end = last;
            open.pop();
        }
        let in_function = open.iter().any(|&(_, f)| f);
        if let Some((name, function)) = python_header(l.head).filter(|_| !in_function) {
            open.push((defs.len(), function));
            defs.push(Definition {
                name,
                line: l.first,
                end: l.last,
                indent: Some(l.indent),
            });
        }
        last = l.last;
    }
    for (d, _) in open {
        defs[d].end = last;
    }
    defs
}

/// A token of a brace language's block header.
#[derive(Debug, Clone)]
struct Tok {
    text: String,
    line: usize,
    /// Brackets around it within the header.
    nest: usize,
}

impl Tok {
    fn ident(&self) -> bool {
        self.text
            .chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
    }
    fn is(&self, s: &str) -> bool {
        self.nest == 0 && self.text == s
    }
}

/// What a block's header makes of the block.
#[derive(Debug, PartialEq, Eq)]
enum Block {
    /// A function (or macro) named by this token: its body is skipped.
    Function(usize),
    /// A type named by this token: definitions inside it are read.
    Type(usize),
    /// A scope whose definitions are read, itself none (`namespace`, `mod`, `impl`).
    Through,
    /// Anything else: skipped.
    Opaque,
}

/// Words that open a statement's block, not a definition's.
const CONTROL: &[&str] = &[
    "if", "else", "for", "while", "do", "switch", "try", "catch", "finally", "loop", "match",
];
/// Scopes whose definitions are read, themselves none.
const THROUGH: &[&str] = &["namespace", "mod", "impl", "module"];
/// The same, where nothing else names the block (`extern "C" {`, `export {`).
const THROUGH_LAST: &[&str] = &["extern", "export"];
const TYPES: &[&str] = &[
    "class",
    "struct",
    "union",
    "enum",
    "interface",
    "trait",
    "record",
];
/// Words before a parameter list that are not what it belongs to.
const NOT_NAMES: &[&str] = &[
    "if",
    "for",
    "while",
    "switch",
    "catch",
    "return",
    "sizeof",
    "alignof",
    "alignas",
    "decltype",
    "noexcept",
    "typeof",
    "new",
    "delete",
    "throw",
    "static_assert",
    "requires",
    "func",
    "function",
    "pub",
    // Go's groups: `import (...)`, `var (...)`, `const (...)`.
    "import",
    "var",
    "const",
    "__attribute__",
    "__declspec",
    "explicit",
];

/// The index just past the bracketed group that opens at `header[i]`.
fn past_group(header: &[Tok], i: usize) -> usize {
    let level = header[i].nest;
    let mut j = i + 1;
    while j < header.len() && header[j].nest > level {
        j += 1;
    }
    // The closing bracket sits at the opening one's level.
    j + usize::from(j < header.len())
}

/// The header's tokens without attributes, annotations and template parameter lists
/// (`#[...]`, `#![...]`, `[[...]]`, `@Name(...)`, `template <...>`; a Java `@interface` is
/// kept).
fn strip_attributes(header: &[Tok]) -> Vec<&Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    let text = |j: usize| header.get(j).map_or("", |t| t.text.as_str());
    while i < header.len() {
        let t = &header[i];
        if t.text == "#" {
            i += 1 + usize::from(text(i + 1) == "!");
            if text(i) == "[" {
                i = past_group(header, i);
            }
        } else if t.text == "[" && text(i + 1) == "[" {
            i = past_group(header, i);
        } else if t.text == "@" && text(i + 1) != "interface" {
            // `@Name`, `@a.b.Name`, then its arguments if any.
            i += 2;
            while text(i) == "." && header.get(i + 1).is_some_and(Tok::ident) {
                i += 2;
            }
            if text(i) == "(" {
                i = past_group(header, i);
            }
        } else if t.text == "template" && text(i + 1) == "<" {
            let mut depth = 0usize;
            i += 1;
            while i < header.len() {
                match text(i) {
                    "<" => depth += 1,
                    ">" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                i += 1;
                if depth == 0 {
                    break;
                }
            }
        } else {
            out.push(t);
            i += 1;
        }
    }
    out
}

/// Whether `name` looks like a macro (all capitals), which a function's name seldom is.
fn shouting(name: &str) -> bool {
    name.len() > 1 && !name.chars().any(|c| c.is_lowercase())
}

/// The index (in `toks`) of the name a parameter list follows: the first one that is not a
/// keyword, preferring one that is not in capitals (a macro before the function's name).
fn function_name(toks: &[&Tok]) -> Option<usize> {
    if let Some(op) = toks.iter().position(|t| t.is("operator")) {
        return Some(op);
    }
    let candidates: Vec<usize> = (1..toks.len())
        .filter(|&i| toks[i].is("(") && toks[i - 1].nest == 0 && toks[i - 1].ident())
        .map(|i| i - 1)
        .filter(|&i| !NOT_NAMES.contains(&toks[i].text.as_str()))
        .collect();
    candidates
        .iter()
        .copied()
        .find(|&i| !shouting(&toks[i].text))
        .or(candidates.first().copied())
}

/// The name of the type whose keyword is `toks[k]`: the last word after it before a base
/// list, generics or a where clause (Go names it before: `type T struct`); `None` when a
/// parameter list follows the name (a C function returning a struct, a template function
/// with a `class` parameter), unless it is a Java record's.
fn type_name(toks: &[&Tok], k: usize) -> Option<usize> {
    let stop = toks[k + 1..]
        .iter()
        .position(|t| {
            t.nest == 0
                && matches!(
                    t.text.as_str(),
                    ":" | "<" | "(" | "extends" | "implements" | "where" | "final"
                )
        })
        .map_or(toks.len(), |p| k + 1 + p);
    if toks.get(stop).is_some_and(|t| t.text == "(") && toks[k].text != "record" {
        return None;
    }
    let after = toks[k + 1..stop]
        .iter()
        .rposition(|t| t.ident() && !TYPES.contains(&t.text.as_str()))
        .map(|i| k + 1 + i);
    let before = (k > 0 && toks[k - 1].ident() && toks[k - 1].text != "type").then(|| k - 1);
    after.or(before)
}

/// Classifies a block's (or a declaration's) header.
fn classify(toks: &[&Tok]) -> Block {
    let top = |s: &str| toks.iter().position(|t| t.is(s));
    if toks
        .first()
        .is_some_and(|t| CONTROL.contains(&t.text.as_str()))
    {
        return Block::Opaque;
    }
    let word_after = |i: usize| match toks.get(i) {
        Some(n) if n.ident() => Block::Function(i),
        _ => Block::Opaque,
    };
    if let Some(f) = top("fn") {
        return word_after(f + 1);
    }
    if let Some(m) = top("macro_rules") {
        return word_after(m + 2);
    }
    if THROUGH.iter().any(|k| top(k).is_some()) {
        return Block::Through;
    }
    // An initializer (`int a[] = {`, `const f = () => {`); an operator's `=` is its name's.
    let paren = top("(");
    let assigned = toks
        .iter()
        .take_while(|t| !t.is("operator"))
        .position(|t| t.is("="));
    if assigned.is_some_and(|e| paren.is_none_or(|p| e < p)) {
        return Block::Opaque;
    }
    if let Some(name) = TYPES
        .iter()
        .find_map(|k| top(k))
        .and_then(|k| type_name(toks, k))
    {
        return Block::Type(name);
    }
    if let Some(name) = function_name(toks) {
        return Block::Function(name);
    }
    if THROUGH_LAST.iter().any(|k| top(k).is_some()) {
        return Block::Through;
    }
    Block::Opaque
}

/// A definition's name from the header's tokens: the word, with what C++ writes beside it
/// (`~Name`, `operator==`).
fn name_of(toks: &[&Tok], i: usize) -> String {
    let t = &toks[i];
    if t.text == "operator" {
        let rest: String = toks[i + 1..]
            .iter()
            .take_while(|t| t.text != "(" || t.nest > 0)
            .map(|t| t.text.as_str())
            .collect();
        return format!("operator{rest}");
    }
    if i > 0 && toks[i - 1].text == "~" {
        return format!("~{}", t.text);
    }
    t.text.clone()
}

/// Brace-language definitions (see the module documentation).
pub fn brace_definitions(text: &str, dialect: Dialect) -> Vec<Definition> {
    let mut defs: Vec<Definition> = Vec::new();
    // Open blocks: whether skipped (a function's body, an opaque block), and the definition
    // each closes.
    let mut open: Vec<(bool, Option<usize>)> = Vec::new();
    let mut header: Vec<Tok> = Vec::new();
    let mut nest = 0usize;
    let define = |header: &[Tok], end: usize, body: bool, defs: &mut Vec<Definition>| {
        let toks = strip_attributes(header);
        let block = classify(&toks);
        let named = match block {
            Block::Function(i) | Block::Type(i) => Some(i),
            Block::Through | Block::Opaque => None,
        };
        // A declaration without a body defines a function only, and one not named in
        // capitals: a macro's use (`FOO(x);`) or a Java enum's constants (`A(1), B(2);`).
        let declared = matches!(block, Block::Function(i) if !shouting(&toks[i].text));
        if !body && !declared {
            return (true, None);
        }
        let def = named.map(|i| {
            defs.push(Definition {
                name: name_of(&toks, i),
                line: toks[i].line,
                end,
                indent: None,
            });
            defs.len() - 1
        });
        (!matches!(block, Block::Type(_) | Block::Through), def)
    };
    let mut last_line = 0;
    for (tok, line) in Scanner::new(text, dialect) {
        let skipping = open.last().is_some_and(|o| o.0);
        if dialect == Dialect::Go && line > last_line && nest == 0 && !skipping {
            if !header.is_empty() {
                define(&header, last_line, false, &mut defs);
            }
            header.clear();
        }
        last_line = line;
        match tok.as_str() {
            "{" if skipping => open.push((true, None)),
            "}" if skipping || nest == 0 => {
                if let Some((_, Some(d))) = open.pop() {
                    defs[d].end = line;
                }
                header.clear();
            }
            _ if skipping => {}
            "(" | "[" | "{" => {
                if tok == "{" && nest == 0 {
                    let block = define(&header, line, true, &mut defs);
                    open.push(block);
                    header.clear();
                    continue;
                }
                header.push(Tok {
                    text: tok,
                    line,
                    nest,
                });
                nest += 1;
            }
            ")" | "]" | "}" => {
                nest = nest.saturating_sub(1);
                header.push(Tok {
                    text: tok,
                    line,
                    nest,
                });
            }
            ";" if nest == 0 => {
                define(&header, line, false, &mut defs);
                header.clear();
            }
            _ => header.push(Tok {
                text: tok,
                line,
                nest,
            }),
        }
    }
    let last = text.lines().count().max(1);
    for d in open.into_iter().filter_map(|o| o.1) {
        defs[d].end = last;
    }
    defs
}

/// A brace language's tokens with their 1-based lines: words, and single punctuation
/// characters; strings, characters, comments and preprocessor lines left out.
struct Scanner {
    chars: Vec<char>,
    i: usize,
    line: usize,
    dialect: Dialect,
    /// Whether only whitespace came before on this line (a `#` there starts a directive).
    line_start: bool,
}

impl Scanner {
    fn new(text: &str, dialect: Dialect) -> Scanner {
        Scanner {
            chars: text.chars().collect(),
            i: 0,
            line: 1,
            dialect,
            line_start: true,
        }
    }

    fn at(&self, k: usize) -> char {
        self.chars.get(self.i + k).copied().unwrap_or('\0')
    }

    /// Moves past one character, counting lines.
    fn bump(&mut self) {
        if self.at(0) == '\n' {
            self.line += 1;
            self.line_start = true;
        }
        self.i += 1;
    }

    /// Moves to just past `end` (escapes skipped where `escapes`), or to the end of the text.
    fn skip_to(&mut self, end: &str, escapes: bool) {
        let end: Vec<char> = end.chars().collect();
        while self.i < self.chars.len() {
            if escapes && self.at(0) == '\\' {
                self.bump();
                self.bump();
                continue;
            }
            if self.chars[self.i..].starts_with(&end) {
                for _ in 0..end.len() {
                    self.bump();
                }
                return;
            }
            self.bump();
        }
    }

    /// The keyword of the directive whose `#` is here (`if`, `else`, `endif`...).
    fn directive(&self) -> String {
        self.chars[self.i + 1..]
            .iter()
            .skip_while(|c| **c == ' ' || **c == '\t')
            .take_while(|c| c.is_ascii_alphabetic())
            .collect()
    }

    /// Moves past the `#endif` closing the group whose branch starts here (groups opened
    /// within counted), line by line, each directive with the lines a backslash carries on.
    fn skip_to_endif(&mut self) {
        let mut depth = 0usize;
        while self.i < self.chars.len() {
            while matches!(self.at(0), ' ' | '\t') {
                self.bump();
            }
            if self.at(0) == '#' {
                let keyword = self.directive();
                self.skip_to("\n", true);
                match keyword.as_str() {
                    "if" | "ifdef" | "ifndef" => depth += 1,
                    "endif" if depth == 0 => return,
                    "endif" => depth -= 1,
                    _ => {}
                }
            } else {
                self.skip_code_line();
            }
        }
    }

    /// Moves past the line of code here with the lines a `/* */` comment it opens spans (a
    /// directive in a comment is prose); a string's `/*` or `//` is no comment.
    fn skip_code_line(&mut self) {
        let mut quote = None;
        while self.i < self.chars.len() && self.at(0) != '\n' {
            match (quote, self.at(0), self.at(1)) {
                (Some(_), '\\', _) => self.bump(),
                (Some(q), c, _) if c == q => quote = None,
                (Some(_), _, _) => {}
                (None, '/', '/') => break,
                (None, '/', '*') => {
                    self.i += 2;
                    self.skip_to("*/", false);
                    continue;
                }
                (None, '"', _) => quote = Some('"'),
                _ => {}
            }
            self.bump();
        }
        self.skip_to("\n", false);
    }

    /// Skips a string, character, comment or directive starting here; whether there was one.
    fn skip_literal(&mut self) -> bool {
        let (c, n) = (self.at(0), self.at(1));
        match c {
            '/' if n == '/' => self.skip_to("\n", false),
            '/' if n == '*' => {
                self.i += 2;
                self.skip_to("*/", false);
            }
            '#' if self.line_start && self.dialect == Dialect::C => {
                // To the end of the line, and of each line a backslash carries on; a group's
                // other branches (from `#elif` or `#else` to its `#endif`) are read as a
                // compiler reads them with the first branch taken: not at all.
                let other = matches!(
                    self.directive().as_str(),
                    "else" | "elif" | "elifdef" | "elifndef"
                );
                self.skip_to("\n", true);
                if other {
                    self.skip_to_endif();
                }
            }
            '"' if n == '"' && self.at(2) == '"' => {
                self.i += 3;
                self.skip_to("\"\"\"", true);
            }
            '"' => {
                self.bump();
                self.skip_to("\"", true);
            }
            '`' if matches!(self.dialect, Dialect::Script | Dialect::Go) => {
                self.bump();
                self.skip_to("`", true);
            }
            '\'' if self.dialect == Dialect::Rust => {
                // A character literal, else a lifetime (`'a`), which is left as it is.
                if n == '\\' {
                    self.bump();
                    self.skip_to("'", true);
                } else if self.at(2) == '\'' {
                    self.i += 3;
                } else {
                    self.i += 1;
                }
            }
            '\'' => {
                self.bump();
                self.skip_to("'", true);
            }
            'R' if self.dialect == Dialect::C && n == '"' && self.raw_prefix() => {
                // `R"delim(...)delim"`.
                let open = self.chars[self.i + 2..].iter().position(|&c| c == '(');
                let Some(open) = open.filter(|&k| k <= 16) else {
                    return false;
                };
                let delim: String = self.chars[self.i + 2..self.i + 2 + open].iter().collect();
                self.i += 3 + open;
                self.skip_to(&format!("){delim}\""), false);
            }
            'r' if self.dialect == Dialect::Rust
                && matches!(n, '"' | '#')
                && !self.prev_is_word() =>
            {
                let hashes = self.chars[self.i + 1..]
                    .iter()
                    .take_while(|&&c| c == '#')
                    .count();
                if self.at(1 + hashes) != '"' {
                    return false;
                }
                self.i += 2 + hashes;
                let end = format!("\"{}", "#".repeat(hashes));
                self.skip_to(&end, false);
            }
            _ => return false,
        }
        true
    }

    /// Whether an `R` here starts a raw string: nothing of a word before it but an encoding
    /// prefix (`u8R`, `LR`, `uR`, `UR`).
    fn raw_prefix(&self) -> bool {
        let word: String = self.chars[..self.i]
            .iter()
            .rev()
            .take_while(|c| c.is_alphanumeric() || **c == '_')
            .collect();
        matches!(word.as_str(), "" | "8u" | "L" | "u" | "U")
    }

    fn prev_is_word(&self) -> bool {
        self.i > 0 && {
            let p = self.chars[self.i - 1];
            p.is_alphanumeric() || p == '_'
        }
    }
}

impl Iterator for Scanner {
    type Item = (String, usize);

    fn next(&mut self) -> Option<(String, usize)> {
        loop {
            let c = self.chars.get(self.i).copied()?;
            if c.is_whitespace() {
                self.bump();
                continue;
            }
            if self.skip_literal() {
                continue;
            }
            self.line_start = false;
            let line = self.line;
            let word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
            if word(c) {
                let start = self.i;
                while self.i < self.chars.len() && word(self.chars[self.i]) {
                    self.i += 1;
                }
                return Some((self.chars[start..self.i].iter().collect(), line));
            }
            self.i += 1;
            return Some((c.to_string(), line));
        }
    }
}
