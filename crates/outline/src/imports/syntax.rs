//! Imports read from a syntax tree: per language, the statements that import, and for
//! scripts, the calls.
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

    /// The imports of a file whose tree's root is `root`, in source order.
    pub(super) fn file(&self, root: Node<'_>, out: &mut Vec<(usize, Import)>) {
        match self.lang {
            Language::JavaScript | Language::TypeScript | Language::Tsx => self.script(root, out),
            _ => self.node(root, &mut Vec::new(), 0, out),
        }
    }

    /// The imports at or below `n`; `mods` is the path of inline Rust modules around it.
    /// Not for scripts, whose imports [`Walk::script`] finds.
    fn node(
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
            (Language::Go, "import_spec") => {
                if let Some(p) = n.child_by_field_name("path") {
                    self.push(out, ImportKind::Go, unquote(self.text(p)), n);
                }
                return;
            }
            // Go and Java imports come before any declaration; bodies hold none.
            (Language::Go, "function_declaration" | "method_declaration" | "type_declaration") => {
                return;
            }
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

    /// A script's imports: a statement or a call may be anywhere, so rather than walk
    /// every node of the tree (most of them types and expressions), each `import`,
    /// `export` and `require` word of the source is followed down from the root through
    /// the nodes that hold it: a statement with a source is an import and holds no other,
    /// and a `require('x')` or `import('x')` call is one wherever it is.
    fn script(&self, root: Node<'_>, out: &mut Vec<(usize, Import)>) {
        let mut cursor = root.walk();
        // Where the last statement with a source was taken: a word inside it is not followed
        // (the statements taken come in order, none inside another).
        let mut taken: Option<(usize, usize)> = None;
        let mut seen_calls = std::collections::HashSet::new();
        for at in script_words(self.src) {
            if taken.is_some_and(|(a, b)| a <= at && at < b) {
                continue;
            }
            cursor.reset(root);
            for depth in 0..=MAX_DEPTH {
                let n = cursor.node();
                if n.start_byte() > at || n.end_byte() <= at {
                    break;
                }
                match n.kind() {
                    "import_statement" | "export_statement" => {
                        if let Some(s) = script_source(n) {
                            self.push(out, ImportKind::Script, unquote(self.text(s)), n);
                            taken = Some((n.start_byte(), n.end_byte()));
                            break;
                        }
                    }
                    // Calls nest (`f(require('x'))`): each looked at once.
                    "call_expression" if seen_calls.insert(n.id()) => self.script_call(n, out),
                    _ => {}
                }
                if depth == MAX_DEPTH || cursor.goto_first_child_for_byte(at).is_none() {
                    break;
                }
            }
        }
        out.sort_by_key(|(at, _)| *at);
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

/// Where `import`, `export` and `require` start in `src` as words of their own, in order.
fn script_words(src: &str) -> impl Iterator<Item = usize> + '_ {
    let b = src.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
    (0..b.len()).filter(move |&i| {
        matches!(b[i], b'i' | b'e' | b'r')
            && (i == 0 || !word(b[i - 1]))
            && [&b"import"[..], b"export", b"require"]
                .iter()
                .any(|w| b[i..].starts_with(w) && b.get(i + w.len()).is_none_or(|&c| !word(c)))
    })
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
/// lists hold them, never expressions, which are most of a tree; a C `#include` may sit in
/// a struct or enum body.
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
