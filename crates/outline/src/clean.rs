//! Turning source text into outline text: signatures on one line, doc comments without their
//! markers, everything cut to a bound on a character boundary.

/// `s` cut to at most `max` bytes on a character boundary, with `…` when cut.
pub(crate) fn cap(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let end = s.floor_char_boundary(max.saturating_sub('…'.len_utf8()));
    format!("{}…", s[..end].trim_end())
}

/// A declaration's text as one line: whitespace runs collapsed, leading attributes, decorators
/// and annotations dropped, trailing punctuation that opens a body trimmed (never a comma
/// inside brackets), cut to
/// [`crate::MAX_SIGNATURE`], and always naming `name`.
pub(crate) fn signature(raw: &str, name: &str) -> String {
    let mut one = String::with_capacity(raw.len().min(256));
    for word in raw.split_whitespace() {
        if !one.is_empty() {
            one.push(' ');
        }
        one.push_str(word);
        if one.len() > 4 * crate::MAX_SIGNATURE {
            break;
        }
    }
    let mut s = one.as_str();
    loop {
        let before = s.len();
        if let Some(rest) = s.strip_prefix('@') {
            s = skip_attribute(rest);
        } else if let Some(rest) = s.strip_prefix("#[") {
            s = skip_balanced(rest, '[', ']');
        }
        s = s.trim_start();
        if s.len() == before || s.is_empty() {
            break;
        }
    }
    if s.is_empty() {
        s = one.as_str();
    }
    let s = s.trim_end_matches([' ', ';', ',', ':', '=', '{']);
    let tidied;
    // A comma before a closing bracket stays: in Python `("serializer",)` is a tuple and
    // `("serializer")` a string.
    let s = if s.contains("( ") || s.contains(" )") {
        tidied = s.replace("( ", "(").replace(" )", ")");
        tidied.as_str()
    } else {
        s
    };
    let mut sig = cap(s, crate::MAX_SIGNATURE);
    if !name.is_empty() && !names(&sig, name) {
        // A name the grammar took from a broken parse may span lines: on one line, capped.
        let one_line = name.split_whitespace().collect::<Vec<_>>().join(" ");
        let name = cap(&one_line, crate::MAX_SIGNATURE);
        // The separator ` … ` is 5 bytes.
        sig = cap(
            &format!("{sig} … {name}"),
            crate::MAX_SIGNATURE + name.len() + 5,
        );
    }
    sig
}

/// A definition's name as the grammar gave it, or, where a broken parse gave a run of text
/// (`template <typename C> class basic_string_view { ...`, in a C++ header whose macros it
/// could not follow), the name that text declares: the identifier after its first `class`,
/// `struct`, `union`, `enum` or `namespace`, else its last identifier.
#[cfg(feature = "syntax")]
pub(crate) fn declared_name(name: &str) -> &str {
    // Only a run of declaration text: `operator new` and `hash<std::pair<A, B>>` are names.
    let run = name.contains(['\n', '{', ';']) || name.starts_with("template");
    if !run {
        return name;
    }
    let ident = |w: &str| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
            && w.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let words: Vec<&str> = name
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .find(|w| {
            matches!(w[0], "class" | "struct" | "union" | "enum" | "namespace") && ident(w[1])
        })
        .map(|w| w[1])
        .or_else(|| words.iter().rev().find(|w| ident(w)).copied())
        .unwrap_or(name)
}

/// After `@`: the annotation's (dotted) name and its parenthesized arguments, if any.
fn skip_attribute(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .unwrap_or(s.len());
    let rest = s[end..].trim_start();
    match rest.strip_prefix('(') {
        Some(args) => skip_balanced(args, '(', ')'),
        None => rest,
    }
}

/// What follows the `close` that balances an `open` already consumed.
fn skip_balanced(s: &str, open: char, close: char) -> &str {
    let mut depth = 1usize;
    for (i, c) in s.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return &s[i + c.len_utf8()..];
            }
        }
    }
    ""
}

/// A comment's or docstring's lines without their markers (`///`, `//!`, `/**`, ` * `, `#`,
/// quotes).
pub(crate) fn doc_lines(raw: &str) -> impl Iterator<Item = &str> {
    raw.lines().map(|line| {
        let mut l = line.trim();
        for prefix in ["///", "//!", "//", "/**", "/*!", "/*", "*/", "#", "*"] {
            if let Some(rest) = l.strip_prefix(prefix) {
                l = rest;
                break;
            }
        }
        let l = l.strip_suffix("*/").unwrap_or(l);
        l.trim().trim_matches(['"', '\'']).trim()
    })
}

/// Whether a comment line is a directive to a tool (a linter, a formatter, a compiler, an
/// editor) or a byline, rather than prose: `deno-lint-ignore-file`, `eslint-disable`,
/// `@ts-check`, `go:build`, `-*- coding -*-`, `Author: ...`. Never a description.
pub fn is_directive(line: &str) -> bool {
    let l = line.trim();
    let lower = l.to_ascii_lowercase();
    const PREFIXES: [&str; 27] = [
        "@",
        "deno-lint-",
        "deno-fmt-",
        "eslint-",
        "eslint ",
        "prettier-ignore",
        "tslint:",
        "jshint",
        "global ",
        "istanbul ignore",
        "c8 ignore",
        "biome-ignore",
        "go:",
        "+build",
        "nolint",
        "pylint:",
        "noqa",
        "type: ignore",
        "fmt: off",
        "clang-format",
        "-*-",
        "vim:",
        "author:",
        "authors:",
        "created by",
        "written by",
        "<reference ",
    ];
    // A doc tag that introduces prose (`@brief`, `@file`, `@fileoverview`) is not a directive.
    const PROSE_TAGS: [&str; 5] = [
        "@brief",
        "@file",
        "@fileoverview",
        "@description",
        "@summary",
    ];
    if PROSE_TAGS.iter().any(|t| lower.starts_with(t)) {
        return false;
    }
    // `global a, b` is ESLint's only in lowercase; "Global state for..." is prose.
    if lower.starts_with("global ") {
        return l.starts_with("global ");
    }
    PREFIXES.iter().any(|p| lower.starts_with(p))
        || l.starts_with("#!")
        || (l.starts_with("/ <") && l.contains("reference"))
}

/// The first non-empty line of a doc comment, cut to [`crate::MAX_DOC`].
#[cfg_attr(
    not(feature = "syntax"),
    expect(dead_code, reason = "only grammars read doc comments")
)]
pub(crate) fn first_doc_line(raw: &str) -> Option<String> {
    doc_lines(raw)
        .find(|l| !l.is_empty() && !is_directive(l))
        .map(|l| cap(l, crate::MAX_DOC))
}

/// The first paragraph of a doc comment on one line, cut to [`crate::MAX_FILE_DOC`].
pub(crate) fn first_paragraph(raw: &str) -> Option<String> {
    let mut out = String::new();
    for line in doc_lines(raw).filter(|l| !is_directive(l)) {
        if line.is_empty() {
            if out.is_empty() {
                continue;
            }
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
        if out.len() > crate::MAX_FILE_DOC {
            break;
        }
    }
    (!out.is_empty()).then(|| cap(&out, crate::MAX_FILE_DOC))
}

/// Whether a comment is a licence header rather than documentation.
#[cfg_attr(
    not(feature = "syntax"),
    expect(dead_code, reason = "only grammars read comments")
)]
pub(crate) fn is_licence(raw: &str) -> bool {
    let head: String = raw.chars().take(400).collect::<String>().to_lowercase();
    ["copyright", "license", "licence", "spdx-"]
        .iter()
        .any(|w| head.contains(w))
}

/// Whether `text` holds `name` as a whole word (not inside a longer identifier).
pub(crate) fn names(text: &str, name: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name).any(|(i, _)| {
        !text[..i].chars().next_back().is_some_and(ident)
            && !text[i + name.len()..].chars().next().is_some_and(ident)
    })
}
