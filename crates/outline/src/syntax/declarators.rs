//! C and C++ declarators: the name one declares, whether it declares a function, and the
//! conversion operators the grammar reads apart.

use tree_sitter::Node;

use super::MAX_DEPTH;

/// The name a C or C++ declarator declares, through pointers, arrays, parentheses and
/// function parameter lists.
pub(super) fn declarator_name(mut d: Node<'_>) -> Option<Node<'_>> {
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
pub(super) fn is_function_declarator(mut d: Node<'_>) -> bool {
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

/// The C++ conversion operator a definition or declaration `n` declares through
/// `declarator`, named with its scope as written (`operator bool`, `element::operator
/// const char*`), and the node its name starts at. The grammar reads one as an
/// `operator_cast` (within a `qualified_identifier` outside its class) or, after a
/// specifier, as a function named by the target type whose return type is
/// `element::operator` (`inline element::operator bool() const`).
pub(super) fn conversion_operator<'t>(
    src: &str,
    n: Node<'t>,
    declarator: Node<'t>,
) -> Option<(Node<'t>, String)> {
    let mut cast = declarator;
    while cast.kind() == "qualified_identifier" {
        cast = cast.child_by_field_name("name")?;
    }
    if cast.kind() == "operator_cast" {
        // Up to its parameters, past the `*` and `&` of the type (`operator const char*`).
        let mut d = cast.child_by_field_name("declarator");
        while let Some(inner) = d.filter(|d| d.kind() != "abstract_function_declarator") {
            d = inner
                .child_by_field_name("declarator")
                .or_else(|| inner.named_child(0));
        }
        let params = d.and_then(|d| d.child_by_field_name("parameters"));
        let end = params.map_or(cast.end_byte(), |p| p.start_byte());
        let name = src.get(declarator.start_byte()..end)?.trim_end();
        return Some((declarator, name.to_owned()));
    }
    // `inline element::operator bool()`: type `element::operator`, function `bool`.
    let ty = n.child_by_field_name("type")?;
    let last = ty.child_by_field_name("name")?;
    if ty.kind() != "qualified_identifier" || text(src, last) != "operator" {
        return None;
    }
    if declarator.kind() != "function_declarator" {
        return None;
    }
    let target = declarator.child_by_field_name("declarator")?;
    let name = format!("{} {}", text(src, ty), text(src, target));
    Some((ty, name))
}

/// A node's text in `src`.
fn text<'s>(src: &'s str, n: Node<'_>) -> &'s str {
    src.get(n.byte_range()).unwrap_or("")
}
