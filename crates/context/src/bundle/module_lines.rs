//! A file's module-level lines as a bundle shows them: its imports and constants, not its
//! preamble, the prose before its first line of code (a licence, the module's documentation),
//! which a fix rarely touches.
use outline::Language;

use super::{MODULE_LINES, Section, Spans};

/// The most lines of a file (its preamble counted) a bundle shows whole, past its preamble,
/// once it shows one of its definitions (at [`super::MODULE_SHARE`] of it, as module-level
/// lines): all of it costs about what one long function does, and a fix to a small module
/// changes its other definitions as often as the one matched (astropy's `rst.py`: a class
/// attribute and `write` beside the `__init__` the error names). On the dev set, line recall
/// at 8k tokens 74.6 -> 75.1%, on the held-out sets at 4k/8k/16k +0.1/+0.1/+0.2,
/// Multi-SWE-bench at 4k -0.4 (nlohmann-1821); 80 lines: the same; 150: dev at 8k 74.1%
/// (sympy-17630's gold out).
pub const SMALL_FILE_LINES: usize = 100;

/// The module-level lines of a file a bundle shows (`lines` its text, in `language`, its
/// first definition but a package clause at `first_def`), and whether they are the whole file
/// past its preamble ([`SMALL_FILE_LINES`]).
pub(super) fn shown(
    lines: &[&str],
    first_def: Option<usize>,
    language: Option<Language>,
) -> (Spans, bool) {
    let n = lines.len();
    if n <= SMALL_FILE_LINES {
        let start = code_start(lines, n, language);
        return if start <= n {
            (vec![(start, n)], true)
        } else {
            (Vec::new(), false)
        };
    }
    match first_def.filter(|&l| l > 1) {
        Some(line) => (
            module_spans(code_start(lines, line - 1, language), line - 1),
            false,
        ),
        None => (Vec::new(), false),
    }
}

/// The spans of a file's module-level lines `start..=end` (those before its first definition
/// but a package clause, past its preamble: [`code_start`]) a bundle shows: all of them, or
/// for more than [`MODULE_LINES`], the first and the last half of that many: a fix adds an
/// import at the top of the imports as often as beside the definitions, and changes a
/// constant just above them. Before, a Java or Go file's module level ended at its package
/// clause (its licence alone) and began at line 1: line recall at 4k/8k/16k tokens on
/// Multi-SWE-bench 50.3/56.0/62.3 -> 51.1/57.6/64.3%, on the held-out sets 57.6/66.0/72.0 ->
/// 57.9/67.3/73.0%, dev the same (the package clause alone: Multi-SWE-bench 50.0/56.0/62.8%).
fn module_spans(start: usize, end: usize) -> Vec<(usize, usize)> {
    if start > end {
        return Vec::new();
    }
    if end + 1 - start <= MODULE_LINES {
        return vec![(start, end)];
    }
    let half = MODULE_LINES / 2;
    vec![(start, start + half - 1), (end + 1 - half, end)]
}

/// The 1-based line of the first `end` lines of `lines` (a file in `language`) where its code
/// starts: after its leading blank lines, line comments (`//`; `#` in Python only), block
/// comments (`/* */`) and (Python) its docstring; one past the last line read (`end`, at most
/// the file's length) where they are all prose. A line a comment shares with code is code.
pub(super) fn code_start(lines: &[&str], end: usize, language: Option<Language>) -> usize {
    let end = end.min(lines.len());
    let python = language == Some(Language::Python);
    // The text that closes the block comment or docstring the line before left open.
    let mut open: Option<&str> = None;
    for (i, line) in lines[..end].iter().enumerate() {
        let t = line.trim();
        if let Some(close) = open {
            if let Some(at) = t.find(close) {
                open = None;
                if !t[at + close.len()..].trim().is_empty() {
                    return i + 1;
                }
            }
            continue;
        }
        if t.is_empty() || (python && t.starts_with('#')) || t.starts_with("//") {
            continue;
        }
        let opener = if t.starts_with("/*") {
            Some(("/*", "*/"))
        } else if python {
            let body = t.trim_start_matches(['r', 'R', 'u', 'U']);
            ["\"\"\"", "'''"]
                .into_iter()
                .find(|q| body.starts_with(q))
                .map(|q| (&t[..t.len() - body.len() + 3], q))
        } else {
            None
        };
        let Some((start, close)) = opener else {
            return i + 1;
        };
        match t[start.len()..].find(close) {
            Some(at) if !t[start.len() + at + close.len()..].trim().is_empty() => return i + 1,
            Some(_) => {}
            None => open = Some(close),
        }
    }
    end + 1
}

/// `sections` (in line order) with a small file's `file` section that lies between two
/// sections of one definition, meeting both (the rest of its docstring or body, taken at the
/// file's share before the definition's own piece of it), joined with them into that
/// definition's one section.
pub(super) fn rejoined(sections: Vec<Section>) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::with_capacity(sections.len());
    let mut rest = sections.into_iter().peekable();
    while let Some(s) = rest.next() {
        let inside = |last: &Section, next: &Section| {
            s.kind == "file"
                && last.kind == "definition"
                && next.kind == "definition"
                && last.name == next.name
                && last.line_end + 1 == s.line_start
                && s.line_end + 1 == next.line_start
        };
        match (out.last_mut(), rest.peek()) {
            (Some(last), Some(next)) if inside(last, next) => {
                let next = rest.next().expect("peeked");
                last.line_end = next.line_end;
                for text in [&s.text, &next.text] {
                    last.text.push('\n');
                    last.text.push_str(text);
                }
            }
            _ => out.push(s),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(text: &str, language: Language) -> usize {
        let lines: Vec<&str> = text.lines().collect();
        code_start(&lines, lines.len(), Some(language))
    }

    #[test]
    fn the_code_starts_past_a_python_module_s_comments_and_docstring() {
        let text = "#!/usr/bin/env python\n# coding: utf-8\n\"\"\"Module for compiling.\n\n\
                    More prose.\n\"\"\"\n\nimport os\n";
        assert_eq!(start(text, Language::Python), 8);
        assert_eq!(start("r'''One line.'''\nimport os\n", Language::Python), 2);
        assert_eq!(start("import os\n\"\"\"late\"\"\"\n", Language::Python), 1);
        // A string that is a statement's start is code.
        assert_eq!(start("\"\"\"a\"\"\".join(x)\n", Language::Python), 1);
    }

    #[test]
    fn a_file_section_inside_a_definition_joins_it() {
        let section = |kind, name: Option<&str>, a, b| Section {
            kind,
            name: name.map(str::to_owned),
            line_start: a,
            line_end: b,
            text: format!("{a}-{b}"),
        };
        let split = vec![
            section("file", None, 1, 2),
            section("definition", Some("f"), 3, 4),
            section("file", None, 5, 9),
            section("definition", Some("f"), 10, 12),
            section("file", None, 13, 14),
        ];
        let joined = rejoined(split);
        assert_eq!(joined.len(), 3, "{joined:?}");
        assert_eq!((joined[1].line_start, joined[1].line_end), (3, 12));
        assert_eq!(joined[1].text, "3-4\n5-9\n10-12");
        assert_eq!(joined[2].kind, "file");
    }

    #[test]
    fn the_code_starts_past_a_licence_comment() {
        let text = "/*\n * Copyright 2024\n * Licensed under MIT\n */\n\n#include <vector>\n";
        assert_eq!(start(text, Language::Cpp), 6);
        assert_eq!(
            start("//! Crate docs.\n\nuse std::fs;\n", Language::Rust),
            3
        );
        // `#` starts a C preprocessor line, not a comment.
        assert_eq!(start("#include <a.h>\n", Language::C), 1);
        assert_eq!(start("/* a */ int x;\n", Language::C), 1);
        assert_eq!(start("// only prose\n\n", Language::Go), 3);
    }
}
