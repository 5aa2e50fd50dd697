//! Skimming Python: its function bodies are found by indentation, over logical lines that a
//! small lexer reads (strings, brackets, backslash continuations).
use super::{Hidden, MIN_SKIP};

/// One logical line of Python: where its code ends, its indentation, and what it is.
struct Logical {
    /// Its first byte of code (after the indentation).
    start: usize,
    /// Just after its last byte of code (before a comment and the newline).
    code_end: usize,
    indent: usize,
    /// It opens a function (`def`, `async def`) whose block follows on the next lines.
    def_header: bool,
    /// It ends with `:`: a compound statement's header.
    header: bool,
}

/// The bodies of Python functions, after their first statement (a docstring, if any). A body
/// whose first statement is compound is not skipped: its first line alone would not parse.
/// The skipped lines that hold the word `import` are noted in `hidden`.
pub(super) fn python(src: &str, hidden: &mut Vec<Hidden>) -> Option<Vec<(usize, usize)>> {
    let s = src.as_bytes();
    let lines = logical_lines(s)?;
    let mut skipped = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        let line = &lines[k];
        if !line.def_header {
            k += 1;
            continue;
        }
        let Some(first) = lines.get(k + 1).filter(|f| f.indent > line.indent) else {
            k += 1;
            continue;
        };
        if first.header {
            k += 1;
            continue;
        }
        let mut last_code = first.code_end;
        let mut j = k + 2;
        while j < lines.len() && lines[j].indent > line.indent {
            last_code = lines[j].code_end;
            j += 1;
        }
        // From the end of the first statement's code to the end of the block's: the block
        // (and the function) still ends on the line it ends on.
        if last_code > first.code_end && last_code - first.code_end >= MIN_SKIP {
            skipped.push((first.code_end, last_code));
            for l in &lines[k + 2..j] {
                if src
                    .get(l.start..l.code_end)
                    .is_some_and(|code| code.contains("import"))
                {
                    hidden.push(Hidden::PythonLine {
                        start: l.start,
                        end: l.code_end,
                    });
                }
            }
        }
        k = j;
    }
    Some(skipped)
}

/// Python's logical lines (blank and comment-only lines are none), following strings,
/// brackets and backslash continuations.
fn logical_lines(s: &[u8]) -> Option<Vec<Logical>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let mut indent = 0;
        while i < s.len() && (s[i] == b' ' || s[i] == b'\t') {
            indent += if s[i] == b'\t' { 8 - indent % 8 } else { 1 };
            i += 1;
        }
        match s.get(i) {
            None => break,
            Some(b'\n' | b'\r') | Some(b'#') | Some(b'\x0c') => {
                while i < s.len() && s[i] != b'\n' {
                    i += 1;
                }
                i += 1;
                continue;
            }
            _ => {}
        }
        let start = i;
        let word_end = |from: usize| {
            from + s[from..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count()
        };
        let w = word_end(start);
        let mut def_header = &s[start..w] == b"def";
        if &s[start..w] == b"async" {
            let mut k = w;
            while k < s.len() && s[k] == b' ' {
                k += 1;
            }
            def_header = &s[k..word_end(k)] == b"def";
        }
        let mut depth = 0i32;
        let mut code_end = i;
        let mut last = 0u8;
        while i < s.len() {
            let b = s[i];
            match b {
                b'\n' if depth <= 0 => break,
                b'\\' if s.get(i + 1) == Some(&b'\n') => i += 2,
                b'\\' if s.get(i + 1) == Some(&b'\r') => i += 3,
                b'#' => {
                    while i < s.len() && s[i] != b'\n' {
                        i += 1;
                    }
                    continue;
                }
                b'"' | b'\'' => {
                    i = py_string(s, i)?;
                    code_end = i;
                    last = b;
                    continue;
                }
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    i += 1;
                }
                b')' | b']' | b'}' => {
                    depth -= 1;
                    i += 1;
                }
                b' ' | b'\t' | b'\r' | b'\n' => {
                    i += 1;
                    continue;
                }
                _ => i += 1,
            }
            code_end = i;
            last = b;
        }
        i = (i + 1).min(s.len());
        out.push(Logical {
            start,
            code_end,
            indent,
            def_header: def_header && last == b':',
            header: last == b':',
        });
    }
    Some(out)
}

/// The end of the Python string whose quote is at `i` (prefixes are read as names before it,
/// harmlessly).
pub(crate) fn py_string(s: &[u8], i: usize) -> Option<usize> {
    let q = s[i];
    let triple = s.get(i + 1) == Some(&q) && s.get(i + 2) == Some(&q);
    let raw = i > 0 && matches!(s[i - 1], b'r' | b'R');
    let mut j = if triple { i + 3 } else { i + 1 };
    while j < s.len() {
        match s[j] {
            b'\\' if !raw || s.get(j + 1) == Some(&q) || s.get(j + 1) == Some(&b'\\') => j += 2,
            b'\n' if !triple => return Some(j),
            c if c == q => {
                if !triple {
                    return Some(j + 1);
                }
                if s.get(j + 1) == Some(&q) && s.get(j + 2) == Some(&q) {
                    return Some(j + 3);
                }
                j += 1;
            }
            _ => j += 1,
        }
    }
    None
}
