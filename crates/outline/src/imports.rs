//! What a parsed file imports: the raw specifiers of its `mod`/`use`, `import`, `require`,
//! `#include "..."` and Go import declarations, read from the same syntax tree as its outline.
//!
//! These are specifiers as written, not files: resolving them against a workspace is the
//! caller's business (it knows the paths; this crate never does). What is kept is what a
//! resolver can use: Rust `use` paths that start at `crate`, `self`, `super` or another
//! crate's name (a workspace crate, found by name; never `std`, `core`, `alloc`), each brace
//! group expanded to one path; C and C++ includes in
//! quotes (angle brackets name system headers); every other language's specifiers whole.
//!
//! A skimmed parse ([`crate::Parser::skim`]) has no nodes in the function bodies it skipped;
//! the imports there (a Python function's `import` and `from ... import`, a script's
//! `require('x')` and `import('x')`) are read by hand at the places the skimming lexer noted,
//! as the walk would have read them from a whole parse.
use crate::{Kind, Parsed};

/// How a specifier was written, which decides how it resolves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ImportKind {
    /// Rust `mod x;`: `spec` is the module's path below the file's module (`x`, or `a::x`
    /// inside an inline `mod a { }`).
    RustMod,
    /// Rust `use`: a path from `crate::`, `self::` or `super::`, relative to the file's module
    /// (a `super::` that leaves an inline module is already taken off), or from another
    /// crate's name (`deno_core::x`; not `std`, `core` or `alloc`).
    RustUse,
    /// Python `import a.b`: `spec` is the dotted module.
    Python,
    /// Python `from M import name`: `spec` is `M` (with its leading dots), `name` the imported
    /// name, which may be a submodule.
    PythonFrom,
    /// JavaScript or TypeScript `import ... from 'x'`, `export ... from 'x'`, `require('x')`
    /// or `import('x')`.
    Script,
    /// A Go import path.
    Go,
    /// C or C++ `#include "x.h"`.
    Include,
    /// Java `import a.b.C;` (or `a.b.*`).
    Java,
}

impl ImportKind {
    /// Its name in stored records and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            ImportKind::RustMod => "rust-mod",
            ImportKind::RustUse => "rust-use",
            ImportKind::Python => "python",
            ImportKind::PythonFrom => "python-from",
            ImportKind::Script => "script",
            ImportKind::Go => "go",
            ImportKind::Include => "include",
            ImportKind::Java => "java",
        }
    }

    /// The kind [`ImportKind::as_str`] names.
    pub fn parse(s: &str) -> Option<ImportKind> {
        Some(match s {
            "rust-mod" => ImportKind::RustMod,
            "rust-use" => ImportKind::RustUse,
            "python" => ImportKind::Python,
            "python-from" => ImportKind::PythonFrom,
            "script" => ImportKind::Script,
            "go" => ImportKind::Go,
            "include" => ImportKind::Include,
            "java" => ImportKind::Java,
            _ => return None,
        })
    }
}

/// One import specifier.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Import {
    pub kind: ImportKind,
    /// The specifier as written (quotes taken off; for Rust, one expanded path).
    pub spec: String,
    /// For [`ImportKind::PythonFrom`], the name imported from the module.
    pub name: Option<String>,
    /// The 1-based line it is on.
    pub line: usize,
}

impl Kind {
    /// The kind whose [`Kind::noun`] is `noun`.
    pub fn from_noun(noun: &str) -> Option<Kind> {
        const ALL: [Kind; 20] = [
            Kind::Module,
            Kind::Namespace,
            Kind::Package,
            Kind::Struct,
            Kind::Enum,
            Kind::Union,
            Kind::Type,
            Kind::Trait,
            Kind::Interface,
            Kind::Class,
            Kind::Impl,
            Kind::Function,
            Kind::Method,
            Kind::Constant,
            Kind::Variable,
            Kind::Field,
            Kind::Variant,
            Kind::Macro,
            Kind::Heading,
            Kind::Key,
        ];
        ALL.into_iter().find(|k| k.noun() == noun)
    }
}

impl Parsed<'_> {
    /// The file's import specifiers, in source order; empty for languages without imports and
    /// for builds without the language's grammar.
    pub fn imports(&self) -> Vec<Import> {
        #[cfg(feature = "syntax")]
        if let Some(tree) = &self.tree {
            let mut out = Vec::new();
            let walk = syntax::Walk {
                lang: self.language,
                src: self.source,
            };
            walk.file(tree.tree.root_node(), &mut out);
            if !tree.hidden.is_empty() {
                out.extend(by_hand::hidden(self.source, &tree.hidden));
                // Both are in source order; merged by the byte each starts at (stable, so the
                // paths of one `use` or names of one `from` keep theirs).
                out.sort_by_key(|(at, _)| *at);
            }
            return out.into_iter().map(|(_, i)| i).collect();
        }
        Vec::new()
    }
}

#[cfg(feature = "syntax")]
mod syntax;

/// Imports read by hand where the skimming lexer noted one may hide, in bytes no tree covers:
/// what the walk above would read there from a whole parse.
#[cfg(feature = "syntax")]
mod by_hand {
    use super::{Import, ImportKind};
    use crate::skim::{Hidden, py_string};

    /// The imports at the `hidden` places of `src` (in byte order), with the byte each starts
    /// at.
    pub(super) fn hidden(src: &str, hidden: &[Hidden]) -> Vec<(usize, Import)> {
        let mut rows = Rows {
            s: src.as_bytes(),
            at: 0,
            row: 0,
        };
        let mut found = Vec::new();
        for h in hidden {
            match *h {
                Hidden::Call(at) => {
                    if let Some(spec) = script_call(src, at) {
                        found.push((at, ImportKind::Script, spec.to_owned(), None));
                    }
                }
                Hidden::PythonLine { start, end } => {
                    statements(&tokens(src, start, end), &mut found);
                }
            }
        }
        found
            .into_iter()
            .map(|(at, kind, spec, name)| {
                let line = rows.line(at);
                (
                    at,
                    Import {
                        kind,
                        spec,
                        name,
                        line,
                    },
                )
            })
            .collect()
    }

    /// 1-based lines of increasing byte offsets.
    struct Rows<'s> {
        s: &'s [u8],
        at: usize,
        row: usize,
    }

    impl Rows<'_> {
        fn line(&mut self, to: usize) -> usize {
            if to > self.at {
                self.row += self.s[self.at..to].iter().filter(|&&b| b == b'\n').count();
                self.at = to;
            }
            self.row + 1
        }
    }

    /// The specifier of the `require(...)` or `import(...)` call whose word is at `at`, when
    /// its first argument is a plain string, as the walk reads a `call_expression`.
    fn script_call(src: &str, at: usize) -> Option<&str> {
        let s = src.as_bytes();
        let skip_space = |mut i: usize| {
            while s.get(i).is_some_and(u8::is_ascii_whitespace) {
                i += 1;
            }
            i
        };
        let word = if s[at..].starts_with(b"require") {
            7
        } else {
            6
        };
        let mut i = skip_space(at + word);
        if s.get(i) != Some(&b'(') {
            return None;
        }
        i = skip_space(i + 1);
        let quote = *s.get(i).filter(|&&q| q == b'\'' || q == b'"')?;
        let open = i + 1;
        i = open;
        loop {
            match *s.get(i)? {
                b'\\' => i += 2,
                b'\n' => return None,
                q if q == quote => break,
                _ => i += 1,
            }
        }
        let spec = src.get(open..i)?;
        i = skip_space(i + 1);
        // A string alone, or first: `require('x' + y)` names no file.
        matches!(s.get(i), Some(b',' | b')'))
            .then_some(spec)
            .filter(|s| !s.is_empty())
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum Tok<'s> {
        Word(&'s str),
        Punct(u8),
        Str,
    }

    /// The tokens of the Python code from `start` to `end` (one logical line): names,
    /// punctuation and strings, with the byte each starts at.
    fn tokens(src: &str, start: usize, end: usize) -> Vec<(usize, Tok<'_>)> {
        let s = src.as_bytes();
        let name = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
        let mut out = Vec::new();
        let mut i = start;
        while i < end {
            match s[i] {
                b'#' => {
                    while i < end && s[i] != b'\n' {
                        i += 1;
                    }
                }
                b'"' | b'\'' => {
                    out.push((i, Tok::Str));
                    i = py_string(s, i).unwrap_or(end);
                }
                b if name(b) => {
                    let from = i;
                    while i < end && name(s[i]) {
                        i += 1;
                    }
                    // A string's prefix (`r"..."`) is read as a name before it, harmlessly.
                    out.push((from, Tok::Word(&src[from..i])));
                }
                b if b.is_ascii_whitespace() || b == b'\\' => i += 1,
                b => {
                    out.push((i, Tok::Punct(b)));
                    i += 1;
                }
            }
        }
        out
    }

    /// Where a compound statement's header ends and its body may follow on the same line.
    const COMPOUND: &[&str] = &[
        "if", "elif", "else", "try", "except", "finally", "with", "for", "while", "def", "class",
        "async",
    ];

    type Found = Vec<(usize, ImportKind, String, Option<String>)>;

    /// The imports of the simple statements of a line, split at its `;`s.
    fn statements(t: &[(usize, Tok<'_>)], out: &mut Found) {
        for part in split_top(t, b';') {
            statement(part, out);
        }
    }

    fn statement(t: &[(usize, Tok<'_>)], out: &mut Found) {
        let Some(&(at, Tok::Word(first))) = t.first() else {
            return;
        };
        match first {
            "import" => {
                for part in split_top(&t[1..], b',') {
                    if let Some(module) = dotted(part) {
                        out.push((at, ImportKind::Python, module, None));
                    }
                }
            }
            "from" => {
                let Some(k) = t.iter().position(|(_, x)| *x == Tok::Word("import")) else {
                    return;
                };
                let mut module = String::new();
                for (_, x) in &t[1..k] {
                    match x {
                        Tok::Word(w) => module.push_str(w),
                        Tok::Punct(b'.') => module.push('.'),
                        _ => return,
                    }
                }
                // `from __future__` is a statement of its own, not an import of a module.
                if module.is_empty() || module == "__future__" {
                    return;
                }
                let mut names = &t[k + 1..];
                if let [(_, Tok::Punct(b'(')), inner @ .., (_, Tok::Punct(b')'))] = names {
                    names = inner;
                }
                let mut any = false;
                for part in split_top(names, b',') {
                    if let Some(name) = dotted(part) {
                        any = true;
                        out.push((at, ImportKind::PythonFrom, module.clone(), Some(name)));
                    }
                }
                if !any {
                    out.push((at, ImportKind::PythonFrom, module, None));
                }
            }
            // `if x: import y`: the body after the header's colon.
            w if COMPOUND.contains(&w) => {
                if let Some(colon) = split_top(t, b':').next().map(<[_]>::len)
                    && colon < t.len()
                {
                    statements(&t[colon + 1..], out);
                }
            }
            _ => {}
        }
    }

    /// `a.b.c` (before an `as`), when the tokens are a dotted name.
    fn dotted(t: &[(usize, Tok<'_>)]) -> Option<String> {
        let end = t
            .iter()
            .position(|(_, x)| *x == Tok::Word("as"))
            .unwrap_or(t.len());
        let mut out = String::new();
        for (_, x) in &t[..end] {
            match x {
                Tok::Word(w) => out.push_str(w),
                Tok::Punct(b'.') => out.push('.'),
                _ => return None,
            }
        }
        (!out.is_empty()).then_some(out)
    }

    /// The parts of `t` between `sep`s outside brackets.
    fn split_top<'t, 's>(
        t: &'t [(usize, Tok<'s>)],
        sep: u8,
    ) -> impl Iterator<Item = &'t [(usize, Tok<'s>)]> {
        let mut depth = 0i32;
        t.split(move |(_, x)| match x {
            Tok::Punct(b'(' | b'[' | b'{') => {
                depth += 1;
                false
            }
            Tok::Punct(b')' | b']' | b'}') => {
                depth -= 1;
                false
            }
            Tok::Punct(b) => *b == sep && depth <= 0,
            _ => false,
        })
    }
}
