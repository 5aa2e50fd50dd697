//! Where a file names an identifier: the identifier leaves of a whole parse (`identifier`,
//! `field_identifier`, `property_identifier`, `type_identifier`, ... in every grammar), not
//! their declarations, never inside a comment or a string.
use tree_sitter::Node;

use crate::Reference;

/// The kinds of node that declare the name they hold in their `name` field: that leaf is a
/// definition, not a reference.
fn declares(parent: Node<'_>, leaf: Node<'_>) -> bool {
    parent
        .child_by_field_name("name")
        .is_some_and(|n| n.id() == leaf.id())
        && !matches!(
            parent.kind(),
            // A call's or an access's `name` field names what it uses.
            "method_invocation" | "field_access" | "scoped_identifier" | "generic_function"
        )
}

/// The node of `parent`'s field `field` is `n`.
fn is_field(parent: Node<'_>, field: &str, n: Node<'_>) -> bool {
    parent
        .child_by_field_name(field)
        .is_some_and(|f| f.id() == n.id())
}

/// Whether `leaf` is the member of an access (`a.f`, `a->f`, `obj.m()` in Java).
fn is_member(leaf: Node<'_>) -> bool {
    leaf.parent().is_some_and(|p| match p.kind() {
        "field_expression"
        | "member_expression"
        | "attribute"
        | "selector_expression"
        | "field_access" => {
            is_field(p, "field", leaf)
                || is_field(p, "property", leaf)
                || is_field(p, "attribute", leaf)
        }
        "method_invocation" => {
            p.child_by_field_name("object").is_some() && is_field(p, "name", leaf)
        }
        _ => false,
    })
}

/// Whether `leaf` names what a call calls: the function of a call (`f(x)`, `a.b.f(x)`,
/// `T::f(x)`, `obj.f()` in Java, `f!(x)`, `new F()`), through the accesses whose member it is.
fn is_call(leaf: Node<'_>) -> bool {
    let mut n = leaf;
    while let Some(p) = n.parent() {
        match p.kind() {
            "call_expression" | "call" => return is_field(p, "function", n),
            "method_invocation" => return is_field(p, "name", n),
            "macro_invocation" => return is_field(p, "macro", n),
            // Inside a macro's arguments (`assert_eq!(f(x), y)`) there is no syntax tree, only
            // tokens: a name followed by a parenthesized group is called.
            "token_tree" => {
                return n.id() == leaf.id()
                    && n.next_sibling().is_some_and(|s| {
                        s.kind() == "token_tree" && s.start_byte() == n.end_byte()
                            || s.kind() == "("
                    });
            }
            "new_expression" => return is_field(p, "constructor", n),
            "object_creation_expression" => return is_field(p, "type", n),
            "generic_function" if is_field(p, "function", n) => n = p,
            "template_function" if is_field(p, "name", n) => n = p,
            "field_expression"
            | "attribute"
            | "member_expression"
            | "scoped_identifier"
            | "selector_expression"
            | "qualified_identifier"
            | "field_access" => {
                // Only the member, the last part, is what is called.
                let last = p.named_child(p.named_child_count().saturating_sub(1) as _);
                if last.is_none_or(|l| l.id() != n.id()) {
                    return false;
                }
                n = p;
            }
            _ => return false,
        }
    }
    false
}

/// The references under `root` in `source` whose text is one of `names` (all when `names` is
/// empty), in source order.
pub(crate) fn references(root: Node<'_>, source: &str, names: &[&str]) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut cursor = root.walk();
    let mut descend = true;
    loop {
        let node = cursor.node();
        if descend && node.child_count() == 0 && node.kind().ends_with("identifier") {
            let text = &source[node.byte_range()];
            let wanted = names.is_empty() || names.contains(&text);
            if wanted && !node.parent().is_some_and(|p| declares(p, node)) {
                out.push(Reference {
                    name: text.to_owned(),
                    line: node.start_position().row + 1,
                    column: node.start_position().column + 1,
                    call: is_call(node),
                    member: is_member(node),
                });
            }
        }
        let skip = node.kind().contains("comment") || node.kind().contains("string");
        if descend && !skip && cursor.goto_first_child() {
            continue;
        }
        if cursor.goto_next_sibling() {
            descend = true;
            continue;
        }
        if !cursor.goto_parent() {
            break;
        }
        descend = false;
    }
    out
}
