//! Outlines from tree-sitter syntax trees: a walk over the nodes that can hold definitions,
//! one function per grammar saying which node kinds define what.
//!
//! The walk starts at the root and enters only containers: a definition's body when it holds
//! members (a class, an impl, a module, a namespace), and transparent wrappers (`export`,
//! decorators, `#ifdef`, `extern "C"`, `template<...>`, Python's module-level `if`/`try`).
//! Function bodies are never entered, so the cost after the parse is proportional to the
//! number of definitions, not to the size of the file.
use tree_sitter::{Node, Tree};

use crate::clean;
use crate::error::{Error, Result};
use crate::skim;
use crate::{Kind, Language, Symbol};

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
        let mut prev = anchor.prev_named_sibling();
        while let Some(p) = prev {
            let kind = p.kind();
            if matches!(
                kind,
                "attribute_item" | "attribute_declaration" | "decorator"
            ) {
                row = p.start_position().row;
                prev = p.prev_named_sibling();
                continue;
            }
            if !kind.contains("comment") || p.end_position().row + 1 < row {
                break;
            }
            let text = self.text(p);
            if (self.lang == Language::Rust && !is_rust_outer_doc(text)) || clean::is_licence(text)
            {
                break;
            }
            run.push(text);
            row = p.start_position().row;
            prev = p.prev_named_sibling();
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

    fn rust(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        let body = n.child_by_field_name("body");
        let function = if scope == Scope::Type {
            Kind::Method
        } else {
            Kind::Function
        };
        let kind = match n.kind() {
            "function_item" | "function_signature_item" => function,
            "struct_item" => Kind::Struct,
            "union_item" => Kind::Union,
            "enum_item" => Kind::Enum,
            "type_item" | "associated_type" => Kind::Type,
            "const_item" => Kind::Constant,
            "static_item" => Kind::Variable,
            "macro_definition" => Kind::Macro,
            "trait_item" => {
                if let Some(name) = n.child_by_field_name("name") {
                    let sym =
                        self.symbol(Kind::Trait, n, self.text(name), Some(name), body, anchor);
                    out.push(self.container(sym, body, Scope::Type, depth));
                }
                return;
            }
            "mod_item" => {
                if let Some(name) = n.child_by_field_name("name") {
                    let sym =
                        self.symbol(Kind::Module, n, self.text(name), Some(name), body, anchor);
                    out.push(self.container(sym, body, Scope::Top, depth));
                }
                return;
            }
            "impl_item" => {
                let ty = self.field_text(n, "type").unwrap_or("");
                let name = ty.split('<').next().unwrap_or(ty).trim();
                let sym = self.symbol(Kind::Impl, n, name, None, body, anchor);
                out.push(self.container(sym, body, Scope::Type, depth));
                return;
            }
            "foreign_mod_item" => {
                if let Some(b) = body {
                    self.items(b, scope, depth + 1, out);
                }
                return;
            }
            _ => return,
        };
        self.named(kind, n, anchor, out);
    }

    fn python(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        match n.kind() {
            "function_definition" => {
                let kind = if scope == Scope::Type {
                    Kind::Method
                } else {
                    Kind::Function
                };
                self.named(kind, n, anchor, out);
            }
            "class_definition" => {
                self.named_with_members(Kind::Class, n, anchor, Scope::Type, depth, out);
            }
            "decorated_definition" => {
                if let Some(def) = n.child_by_field_name("definition") {
                    self.python(def, anchor, scope, depth, out);
                }
            }
            "expression_statement" => {
                let Some(a) = n.named_child(0).filter(|a| a.kind() == "assignment") else {
                    return;
                };
                let Some(left) = a.child_by_field_name("left") else {
                    return;
                };
                let mut names = Vec::new();
                identifiers(left, &mut names);
                for name in names {
                    let text = self.text(name);
                    let kind = if scope == Scope::Type {
                        Kind::Field
                    } else if is_upper(text) {
                        Kind::Constant
                    } else {
                        Kind::Variable
                    };
                    out.push(self.symbol(kind, a, text, Some(name), None, anchor));
                }
            }
            "type_alias_statement" => {
                if let Some(name) = n.named_child(0) {
                    out.push(self.symbol(Kind::Type, n, self.text(name), Some(name), None, anchor));
                }
            }
            "if_statement" | "try_statement" | "with_statement" | "elif_clause" | "else_clause"
            | "except_clause" | "finally_clause" | "block" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    self.python(c, c, scope, depth + 1, out);
                }
            }
            _ => {}
        }
    }

    fn script(&self, n: Node<'_>, anchor: Node<'_>, depth: usize, out: &mut Vec<Symbol>) {
        if depth > MAX_DEPTH {
            return;
        }
        let kind = match n.kind() {
            "function_declaration" | "generator_function_declaration" | "function_signature" => {
                Kind::Function
            }
            "method_definition" | "method_signature" | "abstract_method_signature" => Kind::Method,
            "public_field_definition" | "field_definition" | "property_signature" => Kind::Field,
            "type_alias_declaration" => Kind::Type,
            "enum_declaration" => Kind::Enum,
            "class_declaration"
            | "abstract_class_declaration"
            | "class"
            | "interface_declaration" => {
                let kind = if n.kind() == "interface_declaration" {
                    Kind::Interface
                } else {
                    Kind::Class
                };
                self.named_with_members(kind, n, anchor, Scope::Type, depth, out);
                return;
            }
            "internal_module" | "module" => {
                self.named_with_members(Kind::Namespace, n, anchor, Scope::Top, depth, out);
                return;
            }
            "export_statement" => {
                if let Some(d) = n.child_by_field_name("declaration") {
                    self.script(d, anchor, depth + 1, out);
                }
                return;
            }
            // An immediately invoked function (`((module) => { ... })(...)`, `(function () {
            // ... })()`): a bundle's or a UMD file's module scope, whose definitions are the
            // file's own.
            "call_expression" => {
                let callee = n
                    .child_by_field_name("function")
                    .filter(|f| f.kind() == "parenthesized_expression")
                    .and_then(|f| f.named_child(0))
                    .filter(|f| {
                        matches!(
                            f.kind(),
                            "arrow_function" | "function_expression" | "function"
                        )
                    });
                if let Some(body) = callee
                    .and_then(|f| f.child_by_field_name("body"))
                    .filter(|b| b.kind() == "statement_block")
                {
                    self.script(body, anchor, depth + 1, out);
                }
                return;
            }
            "ambient_declaration" | "expression_statement" | "statement_block" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    let inner_anchor = if n.kind() == "statement_block" {
                        c
                    } else {
                        anchor
                    };
                    self.script(c, inner_anchor, depth + 1, out);
                }
                return;
            }
            "lexical_declaration" | "variable_declaration" => {
                let constant = self.text(n).starts_with("const");
                let mut cursor = n.walk();
                for d in n.named_children(&mut cursor) {
                    let Some(name) = d.child_by_field_name("name") else {
                        continue;
                    };
                    let mut names = Vec::new();
                    identifiers(name, &mut names);
                    let value = d.child_by_field_name("value").map(|v| v.kind());
                    let kind = match value {
                        Some(
                            "arrow_function"
                            | "function_expression"
                            | "function"
                            | "generator_function",
                        ) => Kind::Function,
                        Some("class") => Kind::Class,
                        _ if constant => Kind::Constant,
                        _ => Kind::Variable,
                    };
                    for name in names {
                        let sig = if names_count(d) == 1 { n } else { d };
                        out.push(self.symbol(kind, sig, self.text(name), Some(name), None, anchor));
                    }
                }
                return;
            }
            _ => return,
        };
        self.named(kind, n, anchor, out);
    }

    fn go(&self, n: Node<'_>, anchor: Node<'_>, out: &mut Vec<Symbol>) {
        match n.kind() {
            "package_clause" => {
                if let Some(name) = n.named_child(0) {
                    // Its comment is the file's doc, shown once above.
                    let mut sym =
                        self.symbol(Kind::Package, n, self.text(name), Some(name), None, anchor);
                    sym.doc = None;
                    out.push(sym);
                }
            }
            "function_declaration" => {
                self.named(Kind::Function, n, anchor, out);
            }
            "method_declaration" => {
                self.named(Kind::Method, n, anchor, out);
            }
            "type_declaration" | "const_declaration" | "var_declaration" | "var_spec_list" => {
                let mut cursor = n.walk();
                let specs: Vec<Node<'_>> = n.named_children(&mut cursor).collect();
                let single = specs.len() == 1 && n.kind() != "var_spec_list";
                for spec in specs {
                    // A lone spec reads best with its keyword (`type Store struct`); one of a
                    // group with its own line.
                    let (sig, anchor) = if single { (n, anchor) } else { (spec, spec) };
                    let kind = match spec.kind() {
                        "type_spec" | "type_alias" => {
                            match spec.child_by_field_name("type").map(|t| t.kind()) {
                                Some("struct_type") => Kind::Struct,
                                Some("interface_type") => Kind::Interface,
                                _ => Kind::Type,
                            }
                        }
                        "const_spec" => Kind::Constant,
                        "var_spec" => Kind::Variable,
                        "var_spec_list" => {
                            self.go(spec, spec, out);
                            continue;
                        }
                        _ => continue,
                    };
                    let mut c = spec.walk();
                    for name in spec.children_by_field_name("name", &mut c) {
                        if name.kind() == "," {
                            continue;
                        }
                        out.push(self.symbol(kind, sig, self.text(name), Some(name), None, anchor));
                    }
                }
            }
            _ => {}
        }
    }

    fn java(
        &self,
        n: Node<'_>,
        anchor: Node<'_>,
        scope: Scope,
        depth: usize,
        out: &mut Vec<Symbol>,
    ) {
        let kind = match n.kind() {
            "package_declaration" => {
                if let Some(name) = n.named_child(0) {
                    out.push(self.symbol(
                        Kind::Package,
                        n,
                        self.text(name),
                        Some(name),
                        None,
                        anchor,
                    ));
                }
                return;
            }
            "class_declaration"
            | "record_declaration"
            | "enum_declaration"
            | "interface_declaration"
            | "annotation_type_declaration" => {
                let kind = match n.kind() {
                    "enum_declaration" => Kind::Enum,
                    "interface_declaration" | "annotation_type_declaration" => Kind::Interface,
                    _ => Kind::Class,
                };
                self.named_with_members(kind, n, anchor, Scope::Type, depth, out);
                return;
            }
            "enum_body_declarations" => {
                self.items(n, scope, depth + 1, out);
                return;
            }
            "method_declaration"
            | "constructor_declaration"
            | "compact_constructor_declaration"
            | "annotation_type_element_declaration" => Kind::Method,
            "field_declaration" | "constant_declaration" => {
                let modifiers = n
                    .named_child(0)
                    .filter(|m| m.kind() == "modifiers")
                    .map_or("", |m| self.text(m));
                let constant = n.kind() == "constant_declaration"
                    || (modifiers.contains("static") && modifiers.contains("final"));
                let kind = if constant {
                    Kind::Constant
                } else {
                    Kind::Field
                };
                let mut cursor = n.walk();
                for d in n.children_by_field_name("declarator", &mut cursor) {
                    if let Some(name) = d.child_by_field_name("name") {
                        out.push(self.symbol(kind, n, self.text(name), Some(name), None, anchor));
                    }
                }
                return;
            }
            _ => return,
        };
        self.named(kind, n, anchor, out);
    }

    fn c(&self, n: Node<'_>, anchor: Node<'_>, scope: Scope, depth: usize, out: &mut Vec<Symbol>) {
        if depth > MAX_DEPTH {
            return;
        }
        let function = if scope == Scope::Type {
            Kind::Method
        } else {
            Kind::Function
        };
        match n.kind() {
            "preproc_def" | "preproc_function_def" => {
                // One entry per macro: the branches of an `#if` define it again. An include
                // guard (`#define FMT_FORMAT_H_`, no value) defines nothing to look for.
                let name = self.field_text(n, "name").unwrap_or_default();
                let guard = n.kind() == "preproc_def"
                    && n.child_by_field_name("value").is_none()
                    && ["_H", "_H_", "_HPP", "_HPP_", "_INCLUDED", "_INCLUDED_"]
                        .iter()
                        .any(|s| name.ends_with(s));
                let again = out.iter().any(|s| s.kind == Kind::Macro && s.name == name);
                if !guard && !again {
                    self.named(Kind::Macro, n, anchor, out);
                }
            }
            // An ERROR node holds what parsed around what did not: a header whose macros the
            // grammar cannot follow (fmt's `FMT_BEGIN_NAMESPACE`) can be one ERROR from its
            // first declaration to its last, with every definition inside.
            "preproc_if" | "preproc_ifdef" | "preproc_else" | "preproc_elif"
            | "preproc_elifdef" | "declaration_list" | "ERROR" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    self.c(c, c, scope, depth + 1, out);
                }
            }
            "linkage_specification" => {
                if let Some(b) = n.child_by_field_name("body") {
                    self.c(
                        b,
                        if b.kind() == "declaration_list" {
                            b
                        } else {
                            anchor
                        },
                        scope,
                        depth + 1,
                        out,
                    );
                }
            }
            "template_declaration" => {
                let mut cursor = n.walk();
                for c in n.named_children(&mut cursor) {
                    if c.kind() != "template_parameter_list" {
                        self.c(c, anchor, scope, depth + 1, out);
                    }
                }
            }
            "namespace_definition" => {
                let name = n.child_by_field_name("name");
                let text = name.map_or("(anonymous)", |x| self.text(x));
                let body = n.child_by_field_name("body");
                let sym = self.symbol(Kind::Namespace, n, text, name, body, anchor);
                out.push(self.container(sym, body, Scope::Top, depth));
            }
            "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
                self.tagged(n, anchor, depth, out);
            }
            "function_definition" => {
                if let Some(name) = n
                    .child_by_field_name("declarator")
                    .and_then(declarator_name)
                {
                    let body = n.child_by_field_name("body");
                    out.push(self.symbol(function, n, self.text(name), Some(name), body, anchor));
                }
            }
            "declaration" | "field_declaration" | "type_definition" => {
                if let Some(t) = n.child_by_field_name("type") {
                    self.tagged(t, anchor, depth, out);
                }
                let mut cursor = n.walk();
                for d in n.children_by_field_name("declarator", &mut cursor) {
                    let Some(name) = declarator_name(d) else {
                        continue;
                    };
                    let kind = if n.kind() == "type_definition" {
                        Kind::Type
                    } else if is_function_declarator(d) {
                        function
                    } else if n.kind() == "field_declaration" {
                        // Data members are the class's business; its methods are its interface.
                        continue;
                    } else {
                        Kind::Variable
                    };
                    out.push(self.symbol(kind, n, self.text(name), Some(name), None, anchor));
                }
            }
            "alias_declaration" => {
                self.named(Kind::Type, n, anchor, out);
            }
            "concept_definition" => {
                self.named(Kind::Type, n, anchor, out);
            }
            _ => {}
        }
    }

    /// A struct, union, enum or class specifier that has a name and a body: a definition.
    fn tagged(&self, n: Node<'_>, anchor: Node<'_>, depth: usize, out: &mut Vec<Symbol>) {
        let kind = match n.kind() {
            "struct_specifier" => Kind::Struct,
            "union_specifier" => Kind::Union,
            "enum_specifier" => Kind::Enum,
            "class_specifier" => Kind::Class,
            _ => return,
        };
        let (Some(name), Some(body)) =
            (n.child_by_field_name("name"), n.child_by_field_name("body"))
        else {
            return;
        };
        let sym = self.symbol(kind, n, self.text(name), Some(name), Some(body), anchor);
        let members = self.lang == Language::Cpp && kind != Kind::Enum;
        out.push(if members {
            self.container(sym, Some(body), Scope::Type, depth)
        } else {
            sym
        });
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

fn is_upper(name: &str) -> bool {
    name.chars().any(|c| c.is_ascii_uppercase()) && !name.chars().any(|c| c.is_ascii_lowercase())
}

/// The identifiers a pattern binds (`a`, `a, b`, `[a, b]`, `{ a, b: c }`).
fn identifiers<'t>(n: Node<'t>, out: &mut Vec<Node<'t>>) {
    match n.kind() {
        "identifier" | "shorthand_property_identifier_pattern" => out.push(n),
        "pattern_list" | "tuple_pattern" | "list_pattern" | "array_pattern" | "object_pattern"
        | "pair_pattern" | "assignment_pattern" | "rest_pattern" => {
            let mut cursor = n.walk();
            let children: Vec<Node<'t>> = if n.kind() == "pair_pattern" {
                n.child_by_field_name("value").into_iter().collect()
            } else if n.kind() == "assignment_pattern" {
                n.child_by_field_name("left").into_iter().collect()
            } else {
                n.named_children(&mut cursor).collect()
            };
            for c in children {
                identifiers(c, out);
            }
        }
        _ => {}
    }
}

/// How many names a JavaScript declarator binds.
fn names_count(declarator: Node<'_>) -> usize {
    let mut names = Vec::new();
    if let Some(n) = declarator.child_by_field_name("name") {
        identifiers(n, &mut names);
    }
    names.len()
}

/// The name a C or C++ declarator declares, through pointers, arrays, parentheses and
/// function parameter lists.
fn declarator_name(mut d: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..MAX_DEPTH {
        match d.kind() {
            "identifier"
            | "field_identifier"
            | "type_identifier"
            | "qualified_identifier"
            | "destructor_name"
            | "operator_name"
            | "primitive_type" => return Some(d),
            _ => {
                d = d
                    .child_by_field_name("declarator")
                    .or_else(|| d.named_child(0))?;
            }
        }
    }
    None
}

/// Whether a declarator declares a function (a prototype), not a variable.
fn is_function_declarator(mut d: Node<'_>) -> bool {
    for _ in 0..MAX_DEPTH {
        match d.kind() {
            "function_declarator" => return true,
            "pointer_declarator" | "reference_declarator" | "attributed_declarator" => {
                match d
                    .child_by_field_name("declarator")
                    .or_else(|| d.named_child(0))
                {
                    Some(inner) => d = inner,
                    None => return false,
                }
            }
            _ => return false,
        }
    }
    false
}
