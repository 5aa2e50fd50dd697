//! Outlines from tree-sitter syntax trees: a walk over the nodes that can hold definitions,
//! one function per grammar saying which node kinds define what.
//!
//! The walk starts at the root and enters only containers: a definition's body when it holds
//! members (a class, an impl, a module, a namespace), and transparent wrappers (`export`,
//! decorators, `#ifdef`, `extern "C"`, `template<...>`, Python's module-level `if`/`try`).
//! Function bodies are never entered, so the cost after the parse is proportional to the
//! number of definitions, not to the size of the file.
use std::cell::RefCell;
use std::collections::HashMap;

use tree_sitter::{Node, Tree};

use crate::clean;
use crate::error::{Error, Result};
use crate::skim;
use crate::{Kind, Language, Symbol};

mod branches;
mod declarators;
mod languages;
mod macros;

use branches::blank_alternative_heads;
use macros::{blank_attribute_macros, recovered_name};

/// Nesting deeper than this is not walked (a guard against pathological input).
const MAX_DEPTH: usize = 24;

/// The tree-sitter parser and the language it is set to.
#[derive(Default)]
pub(crate) struct TsParser {
    parser: Option<(tree_sitter::Parser, Language)>,
}

fn grammar(language: Language) -> Option<tree_sitter::Language> {
    Some(match language {
        #[cfg(feature = "rust")]
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        #[cfg(feature = "python")]
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        #[cfg(feature = "javascript")]
        Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        #[cfg(feature = "typescript")]
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        #[cfg(feature = "typescript")]
        Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        #[cfg(feature = "go")]
        Language::Go => tree_sitter_go::LANGUAGE.into(),
        #[cfg(feature = "java")]
        Language::Java => tree_sitter_java::LANGUAGE.into(),
        #[cfg(feature = "c")]
        Language::C => tree_sitter_c::LANGUAGE.into(),
        #[cfg(feature = "cpp")]
        Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        _ => return None,
    })
}

impl TsParser {
    /// The tree of `source`, or `None` when this build has no grammar for `language`. With
    /// `skim`, only what [`skim::included_ranges`] keeps is parsed, unless that tree has an
    /// error: then the whole file is.
    pub(crate) fn parse(
        &mut self,
        language: Language,
        source: &str,
        skim: bool,
    ) -> Result<Option<Skimmed>> {
        let Some(grammar) = grammar(language) else {
            return Ok(None);
        };
        let parser = match &mut self.parser {
            Some((parser, current)) if *current == language => parser,
            slot => {
                let mut parser = slot
                    .take()
                    .map_or_else(tree_sitter::Parser::new, |(p, _)| p);
                parser.set_language(&grammar).map_err(|e| Error::Grammar {
                    language: language.name(),
                    message: e.to_string(),
                })?;
                &mut slot.insert((parser, language)).0
            }
        };
        let no_tree = || Error::Parse {
            language: language.name(),
        };
        // The grammar is given the text with C/C++ attribute macros blanked and `#if` groups of
        // alternative heads read through their first branch (same length, so every node's
        // bytes and rows are the file's); names and signatures are read from the file itself.
        let blanked = if matches!(language, Language::C | Language::Cpp) {
            let branched = blank_alternative_heads(source);
            blank_attribute_macros(branched.as_deref().unwrap_or(source)).or(branched)
        } else {
            None
        };
        let source = blanked.as_deref().unwrap_or(source);
        if skim && let Some(skim) = skim::included_ranges(language, source) {
            // Ranges from the lexer are ordered and disjoint; should tree-sitter refuse them
            // all the same, the whole file is parsed below.
            if parser.set_included_ranges(&skim.ranges).is_ok() {
                let tree = parser.parse(source, None).ok_or_else(no_tree)?;
                if !tree.root_node().has_error() {
                    let gaps = skim
                        .ranges
                        .windows(2)
                        .map(|w| (w[0].end_byte, w[1].start_point.row))
                        .collect();
                    return Ok(Some(Skimmed {
                        tree,
                        gaps,
                        hidden: skim.hidden,
                    }));
                }
            }
        }
        parser
            .set_included_ranges(&[])
            .expect("an empty list of ranges means the whole file");
        let tree = parser.parse(source, None).ok_or_else(no_tree)?;
        Ok(Some(Skimmed {
            tree,
            gaps: Vec::new(),
            hidden: Vec::new(),
        }))
    }
}

/// A tree, and where it skipped bytes: (the byte where a skipped range starts, the row where
/// it ends), so that a definition ending where a skipped body starts ends where the body does;
/// and where imports may hide in those bytes.
pub(crate) struct Skimmed {
    pub(crate) tree: Tree,
    pub(crate) gaps: Vec<(usize, usize)>,
    pub(crate) hidden: Vec<skim::Hidden>,
}

impl Skimmed {
    /// The 0-based row where `n` ends in the file.
    fn end_row(&self, n: Node<'_>) -> usize {
        match self.gaps.binary_search_by_key(&n.end_byte(), |g| g.0) {
            Ok(i) => self.gaps[i].1,
            Err(_) => n.end_position().row,
        }
    }
}

/// The file doc and top-level symbols of a parsed file.
pub(crate) fn outline(
    language: Language,
    skimmed: &Skimmed,
    source: &str,
) -> (Option<String>, Vec<Symbol>) {
    let walk = Walk {
        lang: language,
        src: source,
        skimmed,
        siblings: RefCell::default(),
    };
    let root = skimmed.tree.root_node();
    let mut symbols = Vec::new();
    walk.items(root, Scope::Top, 0, &mut symbols);
    (walk.file_doc(root), symbols)
}

/// Where a definition sits: functions inside a type are methods.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Top,
    Type,
}

struct Walk<'s> {
    lang: Language,
    src: &'s str,
    skimmed: &'s Skimmed,
    siblings: RefCell<Siblings>,
}

/// The named children of the nodes whose definitions looked for a doc comment, so that the
/// comments above a definition are found by looking back from its place: tree-sitter's
/// `prev_named_sibling` finds a node's parent by descending from the root and then walks the
/// parent's children from the first, so asking it for every definition of a file of a few
/// thousand declarations took longer than the parse.
#[derive(Default)]
struct Siblings {
    /// Each parent's named children, one run after another.
    nodes: Vec<Sibling>,
    /// A node's id -> (where its parent's run starts, its own place) in `nodes`.
    place: HashMap<usize, (usize, usize)>,
}

/// What a doc comment's search reads of a node.
#[derive(Clone, Copy)]
struct Sibling {
    kind: &'static str,
    start_row: usize,
    end_row: usize,
    start_byte: usize,
    end_byte: usize,
}

impl Siblings {
    /// The place of `n` among its parent's named children, the parent's children recorded on
    /// the first ask; `None` for the root or a node that is not named.
    fn place(&mut self, n: Node<'_>) -> Option<(usize, usize)> {
        if let Some(p) = self.place.get(&n.id()) {
            return Some(*p);
        }
        let parent = n.parent()?;
        let first = self.nodes.len();
        let mut cursor = parent.walk();
        for c in parent.named_children(&mut cursor) {
            self.place.insert(c.id(), (first, self.nodes.len()));
            self.nodes.push(Sibling {
                kind: c.kind(),
                start_row: c.start_position().row,
                end_row: c.end_position().row,
                start_byte: c.start_byte(),
                end_byte: c.end_byte(),
            });
        }
        self.place.get(&n.id()).copied()
    }

    /// The named siblings before `n`, nearest first.
    fn before(&mut self, n: Node<'_>) -> impl Iterator<Item = Sibling> + '_ {
        // Anchors are named: the children of a parent recorded here are its named ones.
        debug_assert!(n.is_named(), "a definition's anchor is a named node");
        let (first, at) = self.place(n).unwrap_or((0, 0));
        self.nodes[first..at].iter().rev().copied()
    }
}

impl<'s> Walk<'s> {
    fn text(&self, n: Node<'_>) -> &'s str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    fn field_text(&self, n: Node<'_>, field: &str) -> Option<&'s str> {
        n.child_by_field_name(field).map(|c| self.text(c))
    }

    /// Every definition among `container`'s children.
    fn items(&self, container: Node<'_>, scope: Scope, depth: usize, out: &mut Vec<Symbol>) {
        if depth > MAX_DEPTH {
            return;
        }
        let mut cursor = container.walk();
        for child in container.named_children(&mut cursor) {
            self.item(child, child, scope, depth, out);
        }
    }

    /// The definitions `n` makes; `anchor` is the outermost node of the declaration (an
    /// `export`, a decorator list), whose preceding comment is its doc.
    fn item(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        match self.lang {
            Language::Rust => self.rust(n, anchor, scope, depth, out),
            Language::Python => self.python(n, anchor, scope, depth, out),
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                self.script(n, anchor, depth, out)
            }
            Language::Go => self.go(n, anchor, out),
            Language::Java => self.java(n, anchor, scope, depth, out),
            Language::C | Language::Cpp => self.c(n, anchor, scope, depth, out),
            _ => {}
        }
    }

    /// A symbol for definition `n`, named by `name` (a node, whose line it takes), whose
    /// signature runs up to `body` when that is a braced or indented block.
    fn symbol(
        &self,
        kind: Kind,
        n: Node<'_>,
        name: &str,
        name_node: Option<Node<'_>>,
        body: Option<Node<'_>>,
        anchor: Node<'_>,
    ) -> Symbol {
        let name = clean::declared_name(name);
        Symbol {
            kind,
            name: name.to_owned(),
            signature: clean::signature(self.signature_text(n, body), name),
            doc: self.doc(n, body, anchor),
            line: name_node.unwrap_or(n).start_position().row + 1,
            end_line: self.skimmed.end_row(n) + 1,
            children: Vec::new(),
        }
    }

    /// A definition's text up to its body; without a body, its first line (continued while a
    /// parenthesis is open) up to a `{`.
    fn signature_text(&self, n: Node<'_>, body: Option<Node<'_>>) -> &'s str {
        let start = n.start_byte();
        if let Some(b) = body {
            let braced = self.src.as_bytes().get(b.start_byte()) == Some(&b'{');
            if b.start_byte() > start && braced {
                return self.src.get(start..b.start_byte()).unwrap_or("");
            }
            if self.lang == Language::Python {
                // Up to the `:` that opens the block, leaving out comments after it.
                let mut cursor = n.walk();
                let colon = n
                    .children(&mut cursor)
                    .filter(|c| c.kind() == ":" && c.start_byte() < b.start_byte())
                    .last();
                let end = colon.map_or(b.start_byte(), |c| c.start_byte());
                return self.src.get(start..end).unwrap_or("");
            }
        }
        let text = self.src.get(start..n.end_byte()).unwrap_or("");
        let mut depth = 0i32;
        for (i, c) in text.char_indices() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '{' if depth <= 0 && i > 0 => return &text[..i],
                '\n' if depth <= 0 => return &text[..i],
                _ => {}
            }
            if i > 4 * crate::MAX_SIGNATURE {
                return &text[..i];
            }
        }
        text
    }

    /// The first line of the doc comment above `anchor`, or of a Python docstring in `body`.
    fn doc(&self, n: Node<'_>, body: Option<Node<'_>>, anchor: Node<'_>) -> Option<String> {
        if let Some(doc) = body
            .filter(|_| self.lang == Language::Python)
            .and_then(|b| self.docstring(b))
        {
            return clean::first_doc_line(doc);
        }
        let _ = n;
        let mut row = anchor.start_position().row;
        let mut run = Vec::new();
        let mut siblings = self.siblings.borrow_mut();
        for p in siblings.before(anchor) {
            if matches!(
                p.kind,
                "attribute_item" | "attribute_declaration" | "decorator"
            ) {
                row = p.start_row;
                continue;
            }
            if !p.kind.contains("comment") || p.end_row + 1 < row {
                break;
            }
            let text = self.src.get(p.start_byte..p.end_byte).unwrap_or("");
            if (self.lang == Language::Rust && !is_rust_outer_doc(text)) || clean::is_licence(text)
            {
                break;
            }
            run.push(text);
            row = p.start_row;
        }
        run.iter().rev().find_map(|c| clean::first_doc_line(c))
    }

    /// The string that opens a Python block, if it does.
    fn docstring(&self, block: Node<'_>) -> Option<&'s str> {
        let first = block.named_child(0)?;
        if first.kind() != "expression_statement" {
            return None;
        }
        let s = first.named_child(0)?;
        (s.kind() == "string").then(|| self.text(s))
    }

    /// The module's doc: Rust's `//!` comments, Python's docstring, the comment above Go's
    /// `package`, else the file's first comment that is not a licence.
    fn file_doc(&self, root: Node<'_>) -> Option<String> {
        match self.lang {
            Language::Rust => {
                let mut lines = String::new();
                let mut cursor = root.walk();
                for c in root.named_children(&mut cursor) {
                    let t = self.text(c);
                    if c.kind().contains("comment")
                        && (t.starts_with("//!") || t.starts_with("/*!"))
                    {
                        lines.push_str(t);
                        lines.push('\n');
                    } else if !c.kind().contains("comment") && c.kind() != "inner_attribute_item" {
                        break;
                    }
                }
                clean::first_paragraph(&lines)
            }
            Language::Python => root
                .named_child(0)
                .filter(|c| c.kind() == "expression_statement")
                .and_then(|c| c.named_child(0))
                .filter(|s| s.kind() == "string")
                .and_then(|s| clean::first_paragraph(unquote(self.text(s)))),
            Language::Go => {
                let mut cursor = root.walk();
                let package = root
                    .named_children(&mut cursor)
                    .find(|c| c.kind() == "package_clause")?;
                let mut run = Vec::new();
                let mut row = package.start_position().row;
                let mut prev = package.prev_named_sibling();
                while let Some(p) = prev.filter(|p| p.kind() == "comment") {
                    if p.end_position().row + 1 < row {
                        break;
                    }
                    run.push(self.text(p));
                    row = p.start_position().row;
                    prev = p.prev_named_sibling();
                }
                run.reverse();
                clean::first_paragraph(&run.join("\n"))
            }
            _ => {
                let mut cursor = root.walk();
                // Line comments on adjacent lines are one comment (a licence header written
                // with `//` is one block); the first that says something: not a licence, not
                // only directives.
                let mut blocks: Vec<(usize, String)> = Vec::new();
                for c in root
                    .named_children(&mut cursor)
                    .take_while(|c| c.kind().contains("comment"))
                {
                    let text = self.text(c);
                    match blocks.last_mut() {
                        Some((end, block)) if *end + 1 == c.start_position().row => {
                            block.push('\n');
                            block.push_str(text);
                            *end = c.end_position().row;
                        }
                        _ => blocks.push((c.end_position().row, text.to_owned())),
                    }
                }
                blocks
                    .iter()
                    .map(|(_, t)| t.as_str())
                    .filter(|t| !clean::is_licence(t))
                    .find_map(clean::first_paragraph)
            }
        }
    }

    /// `symbol` with the definitions of `body` as its children.
    fn container(
        &self,
        mut sym: Symbol,
        body: Option<Node<'_>>,
        scope: Scope,
        depth: usize,
    ) -> Symbol {
        if let Some(b) = body {
            self.items(b, scope, depth + 1, &mut sym.children);
        }
        sym
    }

    fn named(
        &self,
        kind: Kind,
        n: Node<'_>,
        anchor: Node<'_>,
        out: &mut Vec<Symbol>,
    ) -> Option<usize> {
        let name = n.child_by_field_name("name")?;
        out.push(self.symbol(
            kind,
            n,
            self.text(name),
            Some(name),
            n.child_by_field_name("body"),
            anchor,
        ));
        Some(out.len() - 1)
    }

    /// A named definition whose body's definitions are its children, in `scope`.
    fn named_with_members(
        &self,
        kind: Kind,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        if let Some(i) = self.named(kind, n, anchor, out) {
            let body = n.child_by_field_name("body");
            if let Some(b) = body {
                self.items(b, scope, depth + 1, &mut out[i].children);
            }
        }
    }
}

/// Whether a Rust comment is an outer doc comment (`///` or `/** */`).
fn is_rust_outer_doc(text: &str) -> bool {
    (text.starts_with("///") && !text.starts_with("////"))
        || (text.starts_with("/**") && !text.starts_with("/**/"))
}

/// A Python string literal without its prefix and quotes.
fn unquote(s: &str) -> &str {
    let s = s.trim_start_matches(|c: char| c.is_ascii_alphabetic());
    for q in ["\"\"\"", "'''", "\"", "'"] {
        if let Some(inner) = s.strip_prefix(q) {
            return inner.strip_suffix(q).unwrap_or(inner);
        }
    }
    s
}
