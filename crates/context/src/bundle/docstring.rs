//! A Python definition's docstring past its first paragraph: prose and examples that a fix
//! rarely changes (sympy's run to dozens of lines of doctests), weighed apart from its
//! definition's code at [`DOC_SHARE`] of its score, so that a bundle shows the code ranked next
//! first. The first paragraph, which says what the definition does,
//! stays; so does the code after the docstring. Other languages write their docs above a
//! definition, where a bundle already shows no more of them than the definition's own lines
//! (`lead.rs`).
use super::Section;

/// How much of its definition's score the rest of a docstring weighs: it comes after the code
/// of the definitions ranked next, and before those far below (a fix documents what it changes
/// there often enough: flask's `from_file` gains a parameter, sympy's `partitions` its
/// examples). On the dev set, line recall at 4k/8k/16k tokens +2.1/+0.1/+1.6 points; before a
/// long definition's window was put on its code (0.5: +2.1/0.0/+1.5), 0.35: +2.1/-0.6/+0.7;
/// 0.75: +0.9/+0.2/+1.0; left out altogether: +2.1/-1.1/-0.1.
pub(super) const DOC_SHARE: f64 = 0.5;

/// How much of its definition's score the rest of a docstring weighs for `task`: its
/// definition's whole where the task speaks of docstrings (sympy's `partitions`: "There is a
/// caveat about it in the docstring"; the fix removes it), else [`DOC_SHARE`].
pub(super) fn doc_share(task: &str) -> f64 {
    let speaks = task
        .split(|c: char| !c.is_ascii_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("docstring") || w.eq_ignore_ascii_case("docstrings"));
    if speaks { 1.0 } else { DOC_SHARE }
}
/// The fewest lines of a docstring worth weighing apart: fewer cost about what the second
/// section's label and fence do.
const DOC_REST_MIN: usize = 6;
/// The most lines of a docstring's first paragraph a bundle shows.
const DOC_SUMMARY_LINES: usize = 8;
/// The most lines a definition's signature may run over before its body starts.
const SIGNATURE_LINES: usize = 30;

/// The 1-based lines `(from, to)` of the docstring of the Python definition starting at
/// `start` and ending at `end` that a bundle weighs apart: from after its first paragraph (at
/// most [`DOC_SUMMARY_LINES`] lines) through its closing quotes; `None` where it has no
/// docstring, a one-line one, or fewer than [`DOC_REST_MIN`] lines to weigh apart. `line(n)` is
/// the file's line `n`.
pub(super) fn docstring_rest<'a>(
    line: &dyn Fn(usize) -> Option<&'a str>,
    start: usize,
    end: usize,
) -> Option<(usize, usize)> {
    // The signature's last line: the first ending in `:` (a comment after it aside).
    let mut at = start;
    while !ends_block_header(line(at)?) {
        at += 1;
        if at > end || at - start > SIGNATURE_LINES {
            return None;
        }
    }
    let mut first = at + 1;
    while first <= end && line(first)?.trim().is_empty() {
        first += 1;
    }
    if first > end {
        return None;
    }
    let quote = opening_quote(line(first)?)?;
    let mut close = first + 1;
    while close <= end && !line(close)?.contains(quote) {
        close += 1;
    }
    if close > end {
        return None;
    }
    // Its first paragraph: up to its first blank line.
    let mut kept = first;
    while kept + 1 < close
        && kept + 1 - first < DOC_SUMMARY_LINES
        && !line(kept + 1)?.trim().is_empty()
    {
        kept += 1;
    }
    let from = kept + 1;
    (close + 1 - from >= DOC_REST_MIN).then_some((from, close))
}

/// Whether `line` ends a `def` or `class` header: its code ends in `:`, before a comment if
/// it has one (a `#` in a string before it, `sep="#"`, is tried as a comment's start too).
fn ends_block_header(line: &str) -> bool {
    let ends = |s: &str| s.trim_end().ends_with(':');
    match line.find('#') {
        None => ends(line),
        Some(_) => line.match_indices('#').any(|(i, _)| ends(&line[..i])),
    }
}

/// The quotes a docstring opening on `line` and closing on a later one ends with: `"""` or
/// `'''`, after at most a two-letter prefix (`r`, `u`, `rb`); `None` where the line does not
/// open one, or closes it too.
fn opening_quote(line: &str) -> Option<&'static str> {
    let t = line.trim_start();
    let body = t.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
    if t.len() - body.len() > 2 {
        return None;
    }
    let quote = ["\"\"\"", "'''"]
        .into_iter()
        .find(|q| body.starts_with(q))?;
    (!body[3..].contains(quote)).then_some(quote)
}

/// `spans` (1-based, inclusive, in order) without the lines `cut` covers.
pub(super) fn without(spans: &[(usize, usize)], (a, b): (usize, usize)) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(spans.len() + 1);
    for &(s, e) in spans {
        if e < a || s > b {
            out.push((s, e));
            continue;
        }
        if s < a {
            out.push((s, a - 1));
        }
        if b < e {
            out.push((b + 1, e));
        }
    }
    out
}

/// The lines of `spans` (1-based, inclusive, in order) within `cut`.
pub(super) fn within(spans: &[(usize, usize)], (a, b): (usize, usize)) -> Vec<(usize, usize)> {
    spans
        .iter()
        .map(|&(s, e)| (s.max(a), e.min(b)))
        .filter(|(s, e)| s <= e)
        .collect()
}

/// `sections` (in line order) with a definition's code and the rest of its docstring joined
/// into one section where both were taken and meet: a section joins the one before it where
/// they are of one definition, the one ends where the other starts, and the boundary is one
/// of `docs` (the docstrings weighed apart).
pub(super) fn joined(sections: Vec<Section>, docs: &[(usize, usize)]) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::with_capacity(sections.len());
    for s in sections {
        match out.last_mut() {
            Some(last)
                if last.kind == s.kind
                    && last.kind == "definition"
                    && last.name == s.name
                    && last.line_end + 1 == s.line_start
                    && docs
                        .iter()
                        .any(|&(a, b)| s.line_start == a || s.line_start == b + 1) =>
            {
                last.line_end = s.line_end;
                last.text.push('\n');
                last.text.push_str(&s.text);
            }
            _ => out.push(s),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rest(text: &str) -> Option<(usize, usize)> {
        let lines: Vec<&str> = text.lines().collect();
        let n = lines.len();
        docstring_rest(&|i: usize| lines.get(i - 1).copied(), 1, n)
    }

    #[test]
    fn a_long_docstring_keeps_its_first_paragraph_and_the_code() {
        let text = "def f(x,\n      y):  # note\n    \"\"\"Adds.\n\n    Examples\n    ========\n\n    >>> f(1, 2)\n    3\n    \"\"\"\n    return x + y\n";
        assert_eq!(rest(text), Some((4, 10)));
        let summary = "def f(x):\n    r'''One\n    two.\n\n    a\n    b\n    c\n    d\n    '''\n    return x\n";
        assert_eq!(rest(summary), Some((4, 9)));
    }

    #[test]
    fn short_one_line_or_missing_docstrings_stay() {
        assert_eq!(rest("def f():\n    \"\"\"One.\"\"\"\n    return 1\n"), None);
        assert_eq!(
            rest("def f():\n    \"\"\"One.\n\n    two\n    \"\"\"\n"),
            None
        );
        assert_eq!(rest("def f():\n    return '''a\n\n\n\n\n\n\n'''\n"), None);
        assert_eq!(rest("def f():\n    x = 1\n"), None);
        let unclosed = "def f():\n    \"\"\"a\n\n    b\n    c\n    d\n    e\n    f\n";
        assert_eq!(rest(unclosed), None);
    }

    #[test]
    fn a_header_ends_before_its_comment_even_past_a_hash_in_a_string() {
        assert!(ends_block_header("def f(sep=\"#\"):  # noqa"));
        assert!(ends_block_header("def f(x):"));
        assert!(!ends_block_header("         a,  # one of:"));
        assert!(!ends_block_header("def f(x,"));
    }

    #[test]
    fn spans_keep_the_lines_within_a_cut() {
        assert_eq!(within(&[(1, 12), (40, 60)], (5, 45)), [(5, 12), (40, 45)]);
        assert_eq!(within(&[(1, 3)], (5, 9)), []);
    }

    #[test]
    fn spans_lose_the_cut_lines() {
        assert_eq!(without(&[(1, 20)], (5, 9)), [(1, 4), (10, 20)]);
        assert_eq!(without(&[(1, 4), (10, 20)], (3, 12)), [(1, 2), (13, 20)]);
        assert_eq!(without(&[(5, 9)], (5, 9)), []);
        assert_eq!(without(&[(1, 3)], (5, 9)), [(1, 3)]);
    }
}
