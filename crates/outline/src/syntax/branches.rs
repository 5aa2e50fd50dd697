//! C and C++ `#if` groups the grammar cannot read as they stand, read through their first
//! branch before it reads a file: groups whose branches are alternative heads of one statement,
//!
//! ```c
//! #if (FLT_EVAL_METHOD != 1) && (FLT_EVAL_METHOD != 0)
//!   if (0 <= power && power <= 10)
//! #else
//!   if (-10 <= power && power <= 10)
//! #endif
//!   {
//! ```
//!
//! groups opened within a declaration or an expression (a `constexpr` between a template's
//! head and its function, an item of a template's arguments), and groups whose first branch
//! opens a block that a later group closes (`f() {` in one branch, `f() try {` in the other). The grammar reads a
//! group's branches as declarations or statements of their own; one ending in a head without
//! its body, or one that is part of a declaration, is an error, and tree-sitter's recovery
//! can run a function on to the end of the next group, taking the definitions between with it
//! (simdjson's `compute_float_32` held a dozen; nlohmann's `basic_json` was lost whole). The
//! directives and the other branches are blanked (same length, so every node's bytes and
//! rows stay the file's), as a compiler reads the file with each first branch taken
//! (universal-ctags reads conditionals so too).

use super::macros::in_block_comments;

/// `source` with the alternative heads' groups read through their first branch, or `None`
/// where it has none: an innermost group (no directive inside but its own `#elif` and `#else`)
/// whose first branch's last line of code ends a head without its body ([`ends_head`]), that
/// opens within a declaration or an expression ([`goes_on`]), or with another branch whose
/// first branch opens or closes a block it does not hold ([`braces`]).
pub(super) fn blank_alternative_heads(source: &str) -> Option<String> {
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let groups = alternative_heads(&lines);
    if groups.is_empty() {
        return None;
    }
    let mut starts = Vec::with_capacity(lines.len());
    let mut at = 0;
    for line in &lines {
        starts.push(at);
        at += line.len();
    }
    let mut out = source.as_bytes().to_vec();
    let mut blank = |line: usize| {
        let text = lines[line].trim_end_matches(['\n', '\r']);
        for b in &mut out[starts[line]..starts[line] + text.len()] {
            *b = b' ';
        }
    };
    for group in groups {
        for line in group.directive_lines.0..group.directive_lines.1 {
            blank(line);
        }
        for line in group.others..=group.end {
            blank(line);
        }
    }
    // Whole lines were replaced byte for byte by spaces: the text is UTF-8 still.
    String::from_utf8(out).ok()
}

/// One group read through its first branch: the lines of its opening directive (with their
/// continuations), the line where the other branches begin (its `#endif`'s where it has one
/// branch), and its `#endif`'s line.
struct Group {
    directive_lines: (usize, usize),
    others: usize,
    end: usize,
}

/// A group being read: its opening directive's lines, where its second branch begins, and
/// whether a group opens inside it.
struct Open {
    directive_lines: (usize, usize),
    others: Option<usize>,
    nested: bool,
    /// Whether it opens within a declaration or an expression ([`goes_on`]).
    within: bool,
}

/// The groups of `lines` to read through their first branch ([`blank_alternative_heads`]).
fn alternative_heads(lines: &[&str]) -> Vec<Group> {
    let prose = in_block_comments(lines);
    let mut found = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    // The last line of code before the line read, comments and directives aside.
    let mut last_code: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let start = i;
        // A directive goes on over lines ending in `\`.
        while i + 1 < lines.len() && lines[i].trim_end().ends_with('\\') {
            i += 1;
        }
        i += 1;
        let Some(keyword) = directive(lines[start]).filter(|_| !prose[start]) else {
            if let Some(code) = code_of(lines[start]).filter(|_| !prose[start]) {
                last_code = Some(code);
            }
            continue;
        };
        match keyword {
            "if" | "ifdef" | "ifndef" => {
                if let Some(parent) = open.last_mut() {
                    parent.nested = true;
                }
                open.push(Open {
                    directive_lines: (start, i),
                    others: None,
                    nested: false,
                    within: last_code.as_deref().is_some_and(goes_on),
                });
            }
            "elif" | "elifdef" | "elifndef" | "else" => {
                if let Some(group) = open.last_mut() {
                    group.others.get_or_insert(start);
                }
            }
            "endif" => {
                let Some(group) = open.pop() else { continue };
                let first = &lines[group.directive_lines.1..group.others.unwrap_or(start)];
                let head = first
                    .iter()
                    .rev()
                    .find_map(|l| code_of(l))
                    .is_some_and(|code| ends_head(&code));
                let code = (group.directive_lines.1..group.others.unwrap_or(start))
                    .filter(|&l| !prose[l])
                    .filter_map(|l| code_of(lines[l]));
                let unbalanced = braces(code) != 0;
                if !group.nested && (group.within || head || unbalanced) {
                    found.push(Group {
                        directive_lines: group.directive_lines,
                        others: group.others.unwrap_or(start),
                        end: start,
                    });
                }
            }
            _ => {}
        }
    }
    found
}

/// The keyword of a preprocessor directive line (`if`, `ifdef`, `else`, `endif`...).
fn directive(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('#')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(rest.len());
    Some(&rest[..end])
}

/// A line's code, its comments aside (one within it read as a space): `None` for a blank
/// line or a comment.
fn code_of(line: &str) -> Option<String> {
    let mut code = String::with_capacity(line.len());
    scan(line, |c, _| code.push(c));
    let code = code.trim();
    (!code.is_empty() && !code.starts_with('*')).then(|| code.to_owned())
}

/// How many more `{` than `}` the lines of `code` hold, those in literals aside: a branch
/// that opens a block another closes (a function's head `{` in one branch, `try {` in the
/// other, their `}` and `} catch (...) {}` in a group after) leaves the grammar no branch to
/// read as a whole.
fn braces(code: impl Iterator<Item = String>) -> i64 {
    let mut depth = 0;
    for line in code {
        scan(&line, |c, literal| match c {
            '{' if !literal => depth += 1,
            '}' if !literal => depth -= 1,
            _ => {}
        });
    }
    depth
}

/// Hands `each` the characters of `line` that are no comment's, with whether each is within
/// a string or character literal (a URL's `//` in a string is no comment; a digit
/// separator's `'`, `1'024`, opens no literal); a `/* */` comment within the line is handed
/// as one space. Stops at a `//` comment or a `/*` going on past the line.
fn scan(line: &str, mut each: impl FnMut(char, bool)) {
    let mut chars = line.char_indices().peekable();
    let mut quote: Option<char> = None;
    let mut number = false;
    let mut before = ' ';
    while let Some((at, c)) = chars.next() {
        if let Some(q) = quote {
            each(c, true);
            if c == '\\' {
                if let Some((_, escaped)) = chars.next() {
                    each(escaped, true);
                }
            } else if c == q {
                quote = None;
            }
            before = c;
            continue;
        }
        match (c, chars.peek().map(|&(_, n)| n)) {
            ('/', Some('/')) => return,
            ('/', Some('*')) => {
                let Some(close) = line[at + 2..].find("*/") else {
                    return;
                };
                while chars.peek().is_some_and(|&(i, _)| i < at + 2 + close + 2) {
                    chars.next();
                }
                each(' ', false);
                before = ' ';
                continue;
            }
            ('\'', _) if number => each(c, false),
            ('"' | '\'', _) => {
                quote = Some(c);
                each(c, true);
            }
            _ => each(c, false),
        }
        // A number begins with a digit where no name goes on, and holds letters (`0x1F`,
        // `10u`), digits, `.` and separators.
        number = if number {
            c.is_ascii_alphanumeric() || c == '.' || c == '\''
        } else {
            c.is_ascii_digit() && !(before.is_alphanumeric() || before == '_')
        };
        before = c;
    }
}

/// Whether a line of code ends a head without its body: `)` (`if (...)`, `while (...)`, a
/// function's parameters) or `&&` and `||` (a condition going on after the group).
fn ends_head(code: &str) -> bool {
    code.ends_with(')') || code.ends_with("&&") || code.ends_with("||")
}

/// Whether a line of code ends within a declaration or an expression, which then goes on in
/// the group after it: a list's `,`, an open `(` or `<`, a template's head (`>`), `=`, `&&`
/// and `||`.
fn goes_on(code: &str) -> bool {
    code.ends_with([',', '(', '<', '>', '=']) || code.ends_with("&&") || code.ends_with("||")
}

#[cfg(test)]
mod tests {
    use super::blank_alternative_heads;

    #[test]
    fn alternative_heads_are_read_through_the_first_branch() {
        let source = "int f(int p) {\n#if A\n  if (p < 1)\n#else\n  if (p < 2) // two\n#endif\n  {\n    return 1;\n  }\n  return 0;\n}\n";
        let blanked = blank_alternative_heads(source).expect("one group");
        assert_eq!(blanked.len(), source.len());
        let lines: Vec<&str> = blanked.lines().collect();
        assert_eq!(lines[1].trim(), "");
        assert_eq!(lines[2], "  if (p < 1)");
        assert!(lines[3..6].iter().all(|l| l.trim().is_empty()), "{lines:?}");
        assert_eq!(lines[6], "  {");
    }

    #[test]
    fn groups_within_a_declaration_are_read_through_their_first_branch() {
        // nlohmann's `get`: a specifier between a template's head and the declaration.
        let source = "  template <typename T>\n#if defined(CPP14)\n  constexpr\n#endif\n  auto get() const {}\n";
        let blanked = blank_alternative_heads(source).expect("one group");
        let lines: Vec<&str> = blanked.lines().collect();
        assert_eq!(lines[0], "  template <typename T>");
        assert!(
            lines[1].trim().is_empty() && lines[3].trim().is_empty(),
            "{lines:?}"
        );
        assert_eq!(lines[2], "  constexpr");
        // An item of a list, in a comment's prose the line before does not count.
        let list = "f(a,\n#ifdef X\n  b,\n#else\n  c,\n#endif\n  d);\n";
        let blanked = blank_alternative_heads(list).expect("one group");
        assert_eq!(blanked.lines().filter(|l| !l.trim().is_empty()).count(), 3);
        let prose = "/* a,\n b, */\n#ifdef X\n  g();\n#endif\n";
        assert_eq!(blank_alternative_heads(prose), None);
    }

    #[test]
    fn branches_opening_a_block_another_group_closes_are_read_through_the_first() {
        // cpp-httplib's parse_range_header: `{` in one branch, `try {` in the other.
        let source = "#ifdef NO_EXC\ninline bool f(int s) {\n#else\ninline bool f(int s) try {\n#endif\n  return s == '{';\n#ifdef NO_EXC\n}\n#else\n} catch (...) { return \"}\"; }\n#endif\nstruct After {};\n";
        let blanked = blank_alternative_heads(source).expect("both groups");
        let kept: Vec<&str> = blanked.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(
            kept,
            [
                "inline bool f(int s) {",
                "  return s == '{';",
                "}",
                "struct After {};"
            ]
        );
        // Branches each holding whole blocks stay; a single branch opening one is read as a
        // compiler defining its macro reads it.
        let whole = "#if A\nvoid f() { g(); }\n#else\nvoid f() {}\n#endif\n";
        assert_eq!(blank_alternative_heads(whole), None);
        let single = "#ifdef __cplusplus\nextern \"C\" {\n#endif\nint g(void);\n";
        let blanked = blank_alternative_heads(single).expect("one group");
        let kept: Vec<&str> = blanked.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(kept, ["extern \"C\" {", "int g(void);"]);
    }

    #[test]
    fn groups_of_whole_statements_and_nested_ones_stay() {
        // Whole statements in each branch: the grammar reads them.
        let whole = "void f() {\n#if A\n  g();\n#else\n  h();\n#endif\n}\n";
        assert_eq!(blank_alternative_heads(whole), None);
        // One branch of whole statements, in a block.
        let single = "void f() {\n#if A\n  g();\n#endif\n  {}\n}\n";
        assert_eq!(blank_alternative_heads(single), None);
        // A group with a group inside: only innermost ones are read so.
        let nested = "#if A\n#if B\n  if (x)\n#endif\n  if (y)\n#else\n  if (z)\n#endif\n  {}\n";
        let blanked = blank_alternative_heads(nested).expect("the inner group");
        let kept: Vec<&str> = blanked.lines().filter(|l| !l.trim().is_empty()).collect();
        assert_eq!(
            kept,
            [
                "#if A", "  if (x)", "  if (y)", "#else", "  if (z)", "#endif", "  {}"
            ]
        );
        // A directive's continuation is part of it, not the branch.
        let continued = "#if defined(A) && \\\n    defined(B)\n  while (a &&\n#else\n  while (b &&\n#endif\n    c) {}\n";
        let blanked = blank_alternative_heads(continued).expect("one group");
        let lines: Vec<&str> = blanked.lines().collect();
        assert!(
            lines[0].trim().is_empty() && lines[1].trim().is_empty(),
            "{lines:?}"
        );
        assert_eq!(lines[2], "  while (a &&");
    }

    #[test]
    fn literals_and_comments_hide_no_braces_and_no_code() {
        // Whole blocks in each branch, with a URL in a string, a digit separator and an
        // apostrophe in a comment: the branches balance and the group stays.
        for line in [
            "  if (u == \"http://x\") {\n  }",
            "  int n = 1'024; char c = '}';",
            "  g(); /* don't } */",
            "  f(/* { */ 1);",
        ] {
            let source = format!("#if A\nvoid f() {{\n{line}\n}}\n#else\nvoid f() {{}}\n#endif\n");
            assert_eq!(blank_alternative_heads(&source), None, "{line}");
        }
        // A head with a comment after it is a head; one in a comment is none.
        let code = |line| super::code_of(line);
        assert_eq!(code("  if (x) // why").as_deref(), Some("if (x)"));
        assert_eq!(code("  if (x) /* a\n").as_deref(), Some("if (x)"));
        assert_eq!(code("  if (x) /* a */").as_deref(), Some("if (x)"));
        assert_eq!(code("  /* if (x) */"), None);
        let literals = "u8'{' + s(\"//\\\"\") + 1'000";
        assert_eq!(code(literals).as_deref(), Some(literals));
    }
}
