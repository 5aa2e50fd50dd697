//! The members of types that an outline leaves out but a search should find: enum variants and
//! the fields of structs and unions. An outline names a type and its methods within a byte
//! budget; `merkle search ExpectedDoubleQuote` should still land on the enum that has it.
//!
//! Read from the same (skimmed) tree as the outline, never inside a function: what a function
//! defines for itself is not part of a file's surface, and a skimmed tree has no bodies anyway.
use tree_sitter::Node;

use crate::{Kind, Language, Symbol, clean};

/// Every enum variant and struct, union or class field outside functions, in source order.
pub(crate) fn members(lang: Language, root: Node<'_>, src: &str) -> Vec<Symbol> {
    let mut out = Vec::new();
    visit(lang, root, src, &mut out);
    out
}

/// Collects the members in `n`, entering only what can hold a type (a module, a namespace, a
/// type's body, a preprocessor branch): a file's trees are mostly signatures, values and
/// statements, and walking all of them cost more than the parse.
fn visit(lang: Language, n: Node<'_>, src: &str, out: &mut Vec<Symbol>) {
    let mut cursor = n.walk();
    for child in n.named_children(&mut cursor) {
        if let Some(kind) = member_kind(lang, child, n.kind()) {
            push(lang, kind, child, src, out);
        } else if enters(lang, child.kind()) {
            visit(lang, child, src, out);
        }
    }
}

fn push(lang: Language, kind: Kind, n: Node<'_>, src: &str, out: &mut Vec<Symbol>) {
    for name in names(lang, n) {
        let text = src.get(name.start_byte()..name.end_byte()).unwrap_or("");
        if text.is_empty() {
            continue;
        }
        let raw = src.get(n.start_byte()..n.end_byte()).unwrap_or(text);
        let first = raw.lines().next().unwrap_or(raw);
        out.push(Symbol {
            kind,
            name: text.to_owned(),
            signature: clean::signature(first.trim_end_matches(','), text),
            doc: None,
            line: name.start_position().row + 1,
            end_line: n.end_position().row + 1,
            children: Vec::new(),
        });
    }
}

/// The nodes that can hold a type with members, and the bodies that hold the members: what
/// [`visit`] enters. No function is among them.
fn enters(lang: Language, kind: &str) -> bool {
    match lang {
        Language::Rust => matches!(
            kind,
            "mod_item"
                | "declaration_list"
                | "enum_item"
                | "enum_variant_list"
                | "struct_item"
                | "union_item"
                | "field_declaration_list"
        ),
        Language::C | Language::Cpp => matches!(
            kind,
            "declaration"
                | "type_definition"
                | "enum_specifier"
                | "enumerator_list"
                | "namespace_definition"
                | "declaration_list"
                | "linkage_specification"
                | "class_specifier"
                | "struct_specifier"
                | "field_declaration_list"
                | "field_declaration"
                | "template_declaration"
                | "preproc_if"
                | "preproc_ifdef"
                | "preproc_else"
                | "preproc_elif"
        ),
        Language::Java => matches!(
            kind,
            "class_declaration"
                | "class_body"
                | "interface_declaration"
                | "interface_body"
                | "enum_declaration"
                | "enum_body"
                | "record_declaration"
        ),
        Language::Go => matches!(
            kind,
            "type_declaration" | "type_spec" | "struct_type" | "field_declaration_list"
        ),
        Language::JavaScript | Language::TypeScript | Language::Tsx => matches!(
            kind,
            "export_statement"
                | "enum_declaration"
                | "enum_body"
                | "internal_module"
                | "module"
                | "ambient_declaration"
                | "statement_block"
        ),
        _ => false,
    }
}

/// What `n`, a child of a node of kind `parent`, is when it is a member this module collects.
/// The parent is passed, not asked of `n`: tree-sitter finds a node's parent by descending
/// from the root, once for every child of a long enum.
fn member_kind(lang: Language, n: Node<'_>, parent: &str) -> Option<Kind> {
    match (lang, n.kind()) {
        (Language::Rust, "enum_variant") => Some(Kind::Variant),
        (Language::Rust, "field_declaration") if parent == "field_declaration_list" => {
            Some(Kind::Field)
        }
        (Language::C | Language::Cpp, "enumerator") => Some(Kind::Variant),
        (Language::Java, "enum_constant") => Some(Kind::Variant),
        (Language::Go, "field_declaration") => Some(Kind::Field),
        (Language::TypeScript | Language::Tsx, "enum_assignment") => Some(Kind::Variant),
        (Language::TypeScript | Language::Tsx, "property_identifier") if parent == "enum_body" => {
            Some(Kind::Variant)
        }
        _ => None,
    }
}

/// The name nodes of member `n` (a Go field declaration may name several).
fn names<'t>(lang: Language, n: Node<'t>) -> Vec<Node<'t>> {
    if n.kind() == "property_identifier" {
        return vec![n];
    }
    if lang == Language::Go {
        let mut cursor = n.walk();
        return n.children_by_field_name("name", &mut cursor).collect();
    }
    n.child_by_field_name("name").into_iter().collect()
}
