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
            walk.node(tree.tree.root_node(), &mut Vec::new(), 0, &mut out);
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
mod syntax {
    use tree_sitter::Node;

    use super::{Import, ImportKind};
    use crate::Language;

    /// Nesting deeper than this is not walked (a guard against pathological input).
    const MAX_DEPTH: usize = 256;

    pub(super) struct Walk<'s> {
        pub(super) lang: Language,
        pub(super) src: &'s str,
    }

    impl Walk<'_> {
        fn text(&self, n: Node<'_>) -> &str {
            self.src.get(n.byte_range()).unwrap_or("")
        }

        fn push(&self, out: &mut Vec<(usize, Import)>, kind: ImportKind, spec: &str, n: Node<'_>) {
            if !spec.is_empty() {
                out.push((
                    n.start_byte(),
                    Import {
                        kind,
                        spec: spec.to_owned(),
                        name: None,
                        line: n.start_position().row + 1,
                    },
                ));
            }
        }

        /// The imports at or below `n`; `mods` is the path of inline Rust modules around it.
        pub(super) fn node(
            &self,
            n: Node<'_>,
            mods: &mut Vec<String>,
            depth: usize,
            out: &mut Vec<(usize, Import)>,
        ) {
            if depth > MAX_DEPTH {
                return;
            }
            match (self.lang, n.kind()) {
                (Language::Rust, "mod_item") => return self.rust_mod(n, mods, depth, out),
                (Language::Rust, "use_declaration") => return self.rust_use(n, mods, out),
                // Function bodies hold no `mod` and rarely a `use` that names another file.
                (Language::Rust, "function_item") => return,
                (Language::Python, "import_statement") => return self.python_import(n, out),
                (Language::Python, "import_from_statement") => return self.python_from(n, out),
                (
                    Language::JavaScript | Language::TypeScript | Language::Tsx,
                    "import_statement" | "export_statement",
                ) => {
                    let source = script_source(n);
                    if let Some(s) = source {
                        self.push(out, ImportKind::Script, unquote(self.text(s)), n);
                        return;
                    }
                }
                (
                    Language::JavaScript | Language::TypeScript | Language::Tsx,
                    "call_expression",
                ) => self.script_call(n, out),
                (Language::Go, "import_spec") => {
                    if let Some(p) = n.child_by_field_name("path") {
                        self.push(out, ImportKind::Go, unquote(self.text(p)), n);
                    }
                    return;
                }
                // Go and Java imports come before any declaration; bodies hold none.
                (
                    Language::Go,
                    "function_declaration" | "method_declaration" | "type_declaration",
                ) => return,
                (Language::C | Language::Cpp, "preproc_include") => {
                    if let Some(p) = n.child_by_field_name("path")
                        && p.kind() == "string_literal"
                    {
                        self.push(out, ImportKind::Include, unquote(self.text(p)), n);
                    }
                    return;
                }
                (Language::C | Language::Cpp, "function_definition") => return,
                (Language::Java, "import_declaration") => return self.java_import(n, out),
                (Language::Java, "class_declaration" | "interface_declaration") => return,
                _ => {}
            }
            if may_hold_imports(self.lang, n.kind()) {
                self.children(n, mods, depth, out);
            }
        }

        /// A Rust `mod`: a declared one (`mod x;`) is an import of its file; an inline one
        /// (`mod x { }`) is walked with its name added to `mods`.
        fn rust_mod(
            &self,
            n: Node<'_>,
            mods: &mut Vec<String>,
            depth: usize,
            out: &mut Vec<(usize, Import)>,
        ) {
            let name = n.child_by_field_name("name").map(|c| self.text(c));
            match (name, n.child_by_field_name("body")) {
                (Some(name), None) => {
                    let mut path = mods.clone();
                    path.push(name.to_owned());
                    self.push(out, ImportKind::RustMod, &path.join("::"), n);
                }
                (Some(name), Some(body)) => {
                    mods.push(name.to_owned());
                    self.children(body, mods, depth, out);
                    mods.pop();
                }
                _ => {}
            }
        }

        /// A Rust `use`: each path its tree expands to that a resolver can follow.
        fn rust_use(&self, n: Node<'_>, mods: &[String], out: &mut Vec<(usize, Import)>) {
            if let Some(arg) = n.child_by_field_name("argument") {
                let mut paths = Vec::new();
                expand_use(&compact(self.text(arg)), "", &mut paths);
                for p in paths {
                    if let Some(p) = rust_relative(&p, mods) {
                        self.push(out, ImportKind::RustUse, &p, n);
                    }
                }
            }
        }

        /// A Python `import a.b, c as d`: one import per module named (an alias's module).
        fn python_import(&self, n: Node<'_>, out: &mut Vec<(usize, Import)>) {
            let mut cursor = n.walk();
            for name in n.children_by_field_name("name", &mut cursor) {
                let module = match name.kind() {
                    "aliased_import" => name.child_by_field_name("name"),
                    _ => Some(name),
                };
                if let Some(m) = module {
                    self.push(out, ImportKind::Python, self.text(m), n);
                }
            }
        }

        /// A Python `from M import a, b`: one import per name, or the module alone when no
        /// name is read (`import *`).
        fn python_from(&self, n: Node<'_>, out: &mut Vec<(usize, Import)>) {
            let Some(module) = n.child_by_field_name("module_name") else {
                return;
            };
            let spec = compact(self.text(module));
            let mut cursor = n.walk();
            let mut any = false;
            for name in n.children_by_field_name("name", &mut cursor) {
                let name = match name.kind() {
                    "aliased_import" => name.child_by_field_name("name"),
                    _ => Some(name),
                };
                if let Some(name) = name {
                    any = true;
                    out.push((
                        n.start_byte(),
                        Import {
                            kind: ImportKind::PythonFrom,
                            spec: spec.clone(),
                            name: Some(self.text(name).to_owned()),
                            line: n.start_position().row + 1,
                        },
                    ));
                }
            }
            if !any {
                self.push(out, ImportKind::PythonFrom, &spec, n);
            }
        }

        /// A script's `require('x')` or `import('x')` with a string literal argument.
        fn script_call(&self, n: Node<'_>, out: &mut Vec<(usize, Import)>) {
            let callee = n.child_by_field_name("function");
            let is_import = callee.is_some_and(|f| {
                f.kind() == "import" || (f.kind() == "identifier" && self.text(f) == "require")
            });
            if is_import
                && let Some(arg) = n
                    .child_by_field_name("arguments")
                    .and_then(|a| a.named_child(0))
                    .filter(|a| a.kind() == "string")
            {
                self.push(out, ImportKind::Script, unquote(self.text(arg)), n);
            }
        }

        /// A Java `import a.b.C;` or `import static a.b.C.m;`: the path, `static` taken off.
        fn java_import(&self, n: Node<'_>, out: &mut Vec<(usize, Import)>) {
            let t = self.text(n);
            let t = t.trim_start_matches("import").trim_end_matches(';');
            let t = compact(t);
            let t = t.strip_prefix("static ").unwrap_or(&t);
            self.push(out, ImportKind::Java, t, n);
        }

        fn children(
            &self,
            n: Node<'_>,
            mods: &mut Vec<String>,
            depth: usize,
            out: &mut Vec<(usize, Import)>,
        ) {
            let mut cursor = n.walk();
            for c in n.named_children(&mut cursor) {
                self.node(c, mods, depth + 1, out);
            }
        }
    }

    /// The source string a script's `import`/`export ... from 'x'` (or `import x =
    /// require('x')`) names; `None` for a statement that names none (`export const x = 1`).
    fn script_source(n: Node<'_>) -> Option<Node<'_>> {
        n.child_by_field_name("source").or_else(|| {
            let mut cursor = n.walk();
            n.named_children(&mut cursor)
                .find(|c| c.kind() == "import_require_clause")
                .and_then(|c| c.child_by_field_name("source"))
        })
    }

    /// Whether an import may sit below a node of this kind (one that is not an import itself).
    /// Where imports are statements (Python, Rust, Go, Java), only statements and declaration
    /// lists hold them, never expressions, which are most of a tree; a script's `require` and
    /// `import()` are calls, anywhere, and a C `#include` may sit in a struct or enum body.
    fn may_hold_imports(lang: Language, kind: &str) -> bool {
        match lang {
            // Items of a file or an inline module; a `use` in a block (a function's, a const
            // initializer's) is not read.
            Language::Rust => matches!(kind, "source_file" | "declaration_list"),
            Language::Python => matches!(
                kind,
                "module"
                    | "block"
                    | "if_statement"
                    | "elif_clause"
                    | "else_clause"
                    | "try_statement"
                    | "except_clause"
                    | "except_group_clause"
                    | "finally_clause"
                    | "with_statement"
                    | "for_statement"
                    | "while_statement"
                    | "match_statement"
                    | "case_clause"
                    | "function_definition"
                    | "class_definition"
                    | "decorated_definition"
            ),
            Language::Go => matches!(
                kind,
                "source_file" | "import_declaration" | "import_spec_list"
            ),
            Language::Java => kind == "program",
            _ => true,
        }
    }

    /// `s` with whitespace kept only between two words, as one space: `crate :: a as b` ->
    /// `crate::a as b`.
    fn compact(s: &str) -> String {
        let word = |c: char| c.is_alphanumeric() || c == '_';
        let mut out = String::with_capacity(s.len());
        let mut gap = false;
        for c in s.chars() {
            if c.is_whitespace() {
                gap = true;
                continue;
            }
            if gap && out.chars().next_back().is_some_and(word) && word(c) {
                out.push(' ');
            }
            gap = false;
            out.push(c);
        }
        out
    }

    /// A string literal's content: quotes (and Go's backticks) taken off.
    fn unquote(s: &str) -> &str {
        s.trim_matches(|c| c == '"' || c == '\'' || c == '`')
    }

    /// Every path a Rust use tree names, with `prefix` before it: `a::{b, c::{d, e}}` gives
    /// `a::b`, `a::c::d`, `a::c::e`; `as` renames and globs end the path.
    fn expand_use(tree: &str, prefix: &str, out: &mut Vec<String>) {
        let join = |p: &str| {
            if prefix.is_empty() {
                p.to_owned()
            } else if p.is_empty() {
                prefix.to_owned()
            } else {
                format!("{prefix}::{p}")
            }
        };
        match tree.find('{') {
            Some(open) if tree.ends_with('}') => {
                let head = tree[..open].trim_end_matches("::");
                let head = join(head);
                let inner = &tree[open + 1..tree.len() - 1];
                for part in split_top(inner) {
                    expand_use(part, &head, out);
                }
            }
            _ => {
                let path = tree.split(" as ").next().unwrap_or(tree);
                let path = path.trim_end_matches("::*").trim_end_matches("::self");
                let path = if path == "*" || path == "self" {
                    ""
                } else {
                    path
                };
                out.push(join(path));
            }
        }
    }

    /// The comma-separated parts of a brace group's inside, at brace depth 0.
    fn split_top(s: &str) -> Vec<&str> {
        let mut parts = Vec::new();
        let mut depth = 0usize;
        let mut start = 0;
        for (i, c) in s.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    parts.push(&s[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&s[start..]);
        parts.into_iter().filter(|p| !p.is_empty()).collect()
    }

    /// A use path relative to the file's module, when it starts at the crate or a module of
    /// this crate: `super::` inside an inline module steps out of it, `self::` inside one steps
    /// into it.
    fn rust_relative(path: &str, mods: &[String]) -> Option<String> {
        let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        match segs.first() {
            Some(&"crate") => return Some(segs.join("::")),
            Some(&"self") | Some(&"super") => {}
            // The standard library names no workspace file; another crate may be one of the
            // workspace's (`use deno_core::x`), which the resolver knows by name.
            Some(&("std" | "core" | "alloc")) | None => return None,
            Some(first) if first.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                return Some(segs.join("::"));
            }
            _ => return None,
        }
        let mut here: Vec<&str> = mods.iter().map(String::as_str).collect();
        if segs[0] == "self" {
            segs.remove(0);
        }
        while segs.first() == Some(&"super") && !here.is_empty() {
            segs.remove(0);
            here.pop();
        }
        let mut full: Vec<&str> = Vec::with_capacity(here.len() + segs.len() + 1);
        if segs.first() != Some(&"super") {
            full.push("self");
        }
        full.extend(here);
        full.extend(segs);
        Some(full.join("::"))
    }
}

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
