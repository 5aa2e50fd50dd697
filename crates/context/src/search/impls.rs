//! Trait implementations a task names by their heads, as Rust writes them: a task titled "Bug
//! in Drop for Drain<'data, T>" is about the methods of `impl Drop for Drain`, whose own names
//! (`drop`) it need not write; those methods then count as named (`lines.rs`).
use std::collections::HashSet;

use outline::Kind;

use crate::facts::FileFacts;

/// The trait implementations `query` names as Rust writes their heads: `Drop for Drain`,
/// `Display for Error<T>` (two capitalized names with `for` between them and nothing but
/// spaces around it), as (trait, type).
pub(super) fn impls_named(query: &str) -> HashSet<(String, String)> {
    let ids: Vec<retrieve::tokenize::Ident<'_>> = retrieve::tokenize::identifiers(query).collect();
    let typed = |t: &str| t.starts_with(|c: char| c.is_ascii_uppercase());
    let spaced = |a: &retrieve::tokenize::Ident<'_>, b: &retrieve::tokenize::Ident<'_>| {
        query[a.offset + a.text.len()..b.offset]
            .chars()
            .all(|c| c == ' ')
    };
    ids.windows(3)
        .filter(|w| {
            w[1].text == "for"
                && typed(w[0].text)
                && typed(w[2].text)
                && spaced(&w[0], &w[1])
                && spaced(&w[1], &w[2])
        })
        .map(|w| (w[0].text.to_owned(), w[2].text.to_owned()))
        .collect()
}

/// The line spans of the implementations of `f` that `impls` names, (first, last).
pub(super) fn spans_named(f: &FileFacts, impls: &HashSet<(String, String)>) -> Vec<(usize, usize)> {
    if impls.is_empty() {
        return Vec::new();
    }
    f.symbols
        .iter()
        .filter(|s| s.kind == Kind::Impl)
        .filter(|s| {
            impl_trait(&s.signature)
                .is_some_and(|t| impls.contains(&(t.to_owned(), type_name(&s.name).to_owned())))
        })
        .map(|s| (s.line, s.end_line))
        .collect()
}

/// The trait a Rust implementation's head implements, as its last path segment without
/// arguments (`Drop` of `impl<'a, T> std::ops::Drop for Drain<'a, T>`); `None` for an inherent
/// implementation.
pub(crate) fn impl_trait(signature: &str) -> Option<&str> {
    let head = signature
        .trim_start_matches("unsafe ")
        .strip_prefix("impl")?
        .trim_start();
    // Past the implementation's own parameters, if any (a `->` in them closes nothing).
    let mut start = 0;
    if head.starts_with('<') {
        let mut depth = 0usize;
        let mut before = ' ';
        for (i, c) in head.char_indices() {
            match c {
                '<' => depth += 1,
                '>' if before != '-' => depth = depth.saturating_sub(1),
                _ => {}
            }
            before = c;
            if depth == 0 {
                start = i + 1;
                break;
            }
        }
    }
    // Its head only: a `where` clause's `for<'a>` names no trait.
    let head = &head[start..];
    let head = head.split_once(" where ").map_or(head, |(h, _)| h);
    let (path, _) = head.split_once(" for ")?;
    let path = path.trim().trim_start_matches('!');
    let path = path.split('<').next().unwrap_or(path);
    let last = path.rsplit("::").next().unwrap_or(path).trim();
    (!last.is_empty()).then_some(last)
}

/// The name a task writes for an implementation's type as the outline names it (the type's
/// text up to its arguments): its last path segment, with any reference, lifetime, `mut` and
/// `dyn` before it left out (`Drain` of `&'a mut vec::Drain`).
fn type_name(name: &str) -> &str {
    let last = name.rsplit("::").next().unwrap_or(name);
    last.rsplit([' ', '&']).next().unwrap_or(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_names_an_implementation_by_its_head() {
        let named =
            impls_named("Bug in Drop for Drain<'data, T>\nIf you try: `Display for  Error`");
        let want: HashSet<(String, String)> = [("Drop", "Drain"), ("Display", "Error")]
            .into_iter()
            .map(|(a, b)| (a.to_owned(), b.to_owned()))
            .collect();
        assert_eq!(named, want);
        // A lower-case name, or anything but spaces around `for`: none. (Capitalized prose,
        // "Wait for Godot", reads as a pair, which names no implementation there is.)
        for text in [
            "drop for Drain",
            "Drop for drain",
            "Drop, for Drain",
            "Drop for\nDrain",
        ] {
            assert_eq!(impls_named(text), HashSet::new(), "{text}");
        }
    }

    #[test]
    fn the_methods_of_a_named_implementation_are_found_by_its_span() {
        let symbol = |name: &str, kind, line, end_line, signature: &str| crate::facts::FactSymbol {
            name: name.to_owned(),
            kind,
            line,
            end_line,
            signature: signature.to_owned(),
        };
        let f = FileFacts {
            symbols: vec![
                symbol(
                    "Drain",
                    Kind::Impl,
                    10,
                    20,
                    "impl<'a, T> Iterator for Drain<'a, T>",
                ),
                symbol("next", Kind::Method, 11, 19, "fn next(&mut self)"),
                symbol(
                    "Drain",
                    Kind::Impl,
                    30,
                    40,
                    "impl<'a, T: Send> Drop for Drain<'a, T>",
                ),
                symbol("drop", Kind::Method, 31, 39, "fn drop(&mut self)"),
                symbol("Drop", Kind::Struct, 50, 52, "struct Drop"),
            ],
            imports: Vec::new(),
        };
        let asked = impls_named("Bug in Drop for Drain<'data, T>");
        assert_eq!(spans_named(&f, &asked), [(30, 40)]);
        // The outline names an implementation by its type's text: a path, a reference.
        for name in ["vec::Drain", "&'a mut Drain", "&Drain", "dyn Drain"] {
            let mut g = f.clone();
            g.symbols[2].name = name.to_owned();
            assert_eq!(spans_named(&g, &asked), [(30, 40)], "{name}");
        }
        assert_eq!(spans_named(&f, &impls_named("Wait for Godot")), []);
    }

    #[test]
    fn an_implementation_s_trait_is_read_from_its_head() {
        for (signature, want) in [
            (
                "impl<'data, T: Send> Drop for Drain<'data, T>",
                Some("Drop"),
            ),
            (
                "impl<T: Iterator<Item = u8>> std::fmt::Display for Wrap<T>",
                Some("Display"),
            ),
            ("unsafe impl<T> Send for Ptr<T>", Some("Send")),
            ("impl !Sync for Cell", Some("Sync")),
            ("impl From<u8> for Byte", Some("From")),
            ("impl<T> Drain<T>", None),
            ("fn for_each(self)", None),
            ("impl<F: Fn() -> u8> Tr for W<F>", Some("Tr")),
            ("impl <T> Clone for Box<T>", Some("Clone")),
            ("impl<F> Foo<F> where for<'a> F: Fn(&'a u8)", None),
        ] {
            assert_eq!(impl_trait(signature), want, "{signature}");
        }
    }
}
