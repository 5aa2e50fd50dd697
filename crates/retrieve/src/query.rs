//! Reading task text (an issue, a traceback, a question, a symbol name) into what a search
//! looks for, once: what kind of text it is, its title, weighted words, the code identifiers
//! it names, the file paths and lines it points at, the dotted module names it mentions and
//! the error messages it quotes.
//!
//! Everything here is a linear pass over the text, so a megabyte of query costs milliseconds;
//! what is kept is bounded ([`MAX_IDENTS`], [`MAX_PATHS`]) so the search after it is too.
use std::collections::{HashMap, HashSet};

use crate::phrases::Fences;
use crate::tokenize::{self, MAX_TOKEN};

mod words;

pub use words::is_stop_word;
use words::{EXTENSIONS, is_keyword};

/// The most distinct identifiers kept, first seen first.
pub const MAX_IDENTS: usize = 256;
/// The most path references kept.
pub const MAX_PATHS: usize = 64;
/// The most messages, options among them ([`options`]), a query keeps.
const MAX_OPTION_MESSAGES: usize = 16;

/// A file a query points at: a path (or the tail of one: `requests/models.py`, or an absolute
/// path from someone's machine) and the line, when one was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathRef {
    pub path: String,
    pub line: Option<usize>,
}

/// The most words of a question ([`QueryKind::Question`]): longer, one line is a text.
pub const QUESTION_WORDS: usize = 12;

/// What kind of text a query is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QueryKind {
    /// A name or two rather than a task: one word, or two or three of which one is written
    /// as code (`TestReporter`, `fmt_markdown`, `std::fs`, `open()`); plain lowercase words
    /// (`deno fmt markdown`) are a topic, a question.
    Lookup,
    /// One line of at most [`QUESTION_WORDS`] words (`how is the LSP started`, `test runner
    /// reporter`), each of them meant, unlike an issue's body.
    Question,
    /// A title and more lines: an issue, a commit message.
    Task,
    /// Anything else: one long line.
    #[default]
    Text,
}

/// A query as read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskQuery {
    /// What kind of text it is.
    pub kind: QueryKind,
    /// Its first non-blank line, when a non-blank line follows it: an issue's title, a
    /// commit's subject.
    pub title: Option<String>,
    /// The error messages it quotes ([`crate::phrases::messages`]), then the options it writes
    /// with hyphens ([`options`]): each found as written.
    pub messages: Vec<String>,
    /// Tokens (as the identifier tokenizer makes them) with their weight in the query: how
    /// often they occur, damped, and doubled for a token that is a code identifier or a part
    /// of one. English stop words are left out. Sorted by token.
    pub words: Vec<(String, f32)>,
    /// Code identifiers as written (`resolve_redirects`, `HTTPServer`, a name before `(` or
    /// around a `.`, in backticks, or in a code block), first seen first, with how often.
    pub idents: Vec<(String, usize)>,
    /// Those of [`Self::idents`] written as a call somewhere (`latex(expr)`), first seen first.
    pub called: Vec<String>,
    /// Files the text points at.
    pub paths: Vec<PathRef>,
    /// Dotted names turned into path fragments: `sympy.printing.latex` is
    /// `sympy/printing/latex`, `io.fits` is `io/fits`.
    pub modules: Vec<String>,
    /// Methods an error message names by their type (`TypeError: RST.__init__() got an
    /// unexpected keyword argument`, [`named_in_prose`]), as (type, method): the call the
    /// deepest frame made, into the function whose signature or behaviour is at fault.
    pub blamed: Vec<(String, String)>,
}

/// Whether the identifier ending at `end` is written `name()` and then prose (`TypeError:
/// f() got an unexpected keyword argument`, `f() returns None`): the function named, as an
/// error message or a reader names it, not a call the task makes. On the dev set: function
/// acc@5 51.0 -> 52.1%, line recall at 4k tokens +1.0 (sympy-21171's
/// `_print_SingularityFunction() got an unexpected keyword argument`, 9th -> 1st).
fn named_in_prose(bytes: &[u8], end: usize) -> bool {
    bytes.get(end + 1) == Some(&b')')
        && bytes.get(end + 2) == Some(&b' ')
        && bytes.get(end + 3).is_some_and(u8::is_ascii_lowercase)
}

/// Whether an identifier looks like code on its own: a `_` inside it, or a capital after a
/// lowercase letter (`getUser`, `DataFrame`), or digits and letters mixed after a letter.
fn looks_like_code(id: &str) -> bool {
    let trimmed = id.trim_matches('_');
    if trimmed.len() < 2 {
        return false;
    }
    if trimmed.contains('_') {
        return true;
    }
    let b = trimmed.as_bytes();
    b.windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
}

impl TaskQuery {
    /// Reads `text`.
    pub fn parse(text: &str) -> TaskQuery {
        let code = code_spans(text);
        let bytes = text.as_bytes();
        let mut idents: Vec<(String, usize)> = Vec::new();
        let mut ident_at: HashMap<&str, usize> = HashMap::new();
        let mut code_tokens: HashSet<String> = HashSet::new();
        let mut called_idents: Vec<String> = Vec::new();
        let mut blamed: Vec<(String, String)> = Vec::new();
        // The identifier before, with where it ends: a method's type where `.` joins them.
        let mut last: Option<(&str, usize)> = None;
        for id in tokenize::identifiers(text) {
            let qualifier = last
                .filter(|&(_, e)| e + 1 == id.offset && bytes[e] == b'.')
                .map(|(q, _)| q);
            last = Some((id.text, id.offset + id.text.len()));
            if id.text.len() > MAX_TOKEN || id.text.chars().all(|c| c.is_ascii_digit()) {
                continue;
            }
            let end = id.offset + id.text.len();
            let before = id.offset.checked_sub(1).map(|i| bytes[i]);
            let after = bytes.get(end).copied();
            let in_code = code.iter().any(|&(s, e)| s <= id.offset && end <= e);
            let called = after == Some(b'(');
            let dotted = before == Some(b'.')
                || (after == Some(b'.')
                    && bytes
                        .get(end + 1)
                        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_'));
            let first_upper = id.text.starts_with(|c: char| c.is_ascii_uppercase());
            let is_code = !is_keyword(id.text)
                && id.text.chars().next().is_some_and(|c| !c.is_ascii_digit())
                && (looks_like_code(id.text)
                    || ((in_code || called || dotted) && id.text.len() > 1)
                    || (first_upper
                        && id.text[1..].contains(|c: char| c.is_ascii_lowercase())
                        && id.text.len() > 2
                        && before != Some(b' ')
                        && after == Some(b'.')));
            if is_code {
                if let Some(ty) = qualifier.filter(|_| called && named_in_prose(bytes, end))
                    && blamed.len() < MAX_IDENTS
                    && !blamed.iter().any(|(t, m)| t == ty && m == id.text)
                {
                    blamed.push((ty.to_owned(), id.text.to_owned()));
                }
                if called
                    && !named_in_prose(bytes, end)
                    && called_idents.len() < MAX_IDENTS
                    && !called_idents.iter().any(|c| c == id.text)
                {
                    called_idents.push(id.text.to_owned());
                }
                match ident_at.get(id.text) {
                    Some(&i) => idents[i].1 += 1,
                    None if idents.len() < MAX_IDENTS => {
                        ident_at.insert(id.text, idents.len());
                        idents.push((id.text.to_owned(), 1));
                    }
                    None => {}
                }
                tokenize::tokens(id.text, |t, _, _, _| {
                    code_tokens.insert(t.to_owned());
                });
            }
        }
        let options = options(text);
        for name in option_names(&options) {
            if idents.len() < MAX_IDENTS && !ident_at.contains_key(name.as_str()) {
                idents.push((name, 1));
            }
        }
        let mut counts: HashMap<String, usize> = HashMap::new();
        tokenize::tokens(text, |t, _, _, _| {
            if !is_stop_word(t) && !t.chars().all(|c| c.is_ascii_digit()) {
                *counts.entry(t.to_owned()).or_default() += 1;
            }
        });
        let mut words: Vec<(String, f32)> = counts
            .into_iter()
            .map(|(t, n)| {
                let w = 1.0 + (n as f32).ln();
                let w = if code_tokens.contains(&t) { 2.0 * w } else { w };
                (t, w)
            })
            .collect();
        words.sort_by(|a, b| a.0.cmp(&b.0));
        let title = title_of(text);
        // An option is declared as written (`"--collect-only"`, `long("map-syntax")`): found
        // as a quoted message is, in the function that declares it.
        let mut messages = crate::phrases::messages(text);
        for option in options {
            if messages.len() < MAX_OPTION_MESSAGES && !messages.iter().any(|m| m == option) {
                messages.push(option.to_owned());
            }
        }
        TaskQuery {
            kind: kind_of(text, title.is_some()),
            title: title.map(str::to_owned),
            messages,
            words,
            idents,
            called: called_idents,
            paths: path_refs(text),
            modules: modules(text),
            blamed,
        }
    }
}

/// The command-line options and settings a text writes with hyphens, as written without the
/// dashes before them (`collect-only` of `--collect-only`, `import-mode` of
/// `import-mode=importlib`): a compound of words of two characters or more after `--` or
/// before `=`. Prose compounds (`non-member`) are not options.
fn options(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric();
    let mut out: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphabetic()
            || (i > 0 && (is_word(bytes[i - 1]) || bytes[i - 1] == b'_'))
        {
            i += 1;
            continue;
        }
        let start = i;
        let mut parts = 0;
        let mut short = false;
        let mut end = i;
        loop {
            let from = end;
            while end < bytes.len() && is_word(bytes[end]) {
                end += 1;
            }
            parts += 1;
            short |= end - from < 2;
            let next_starts_word = bytes.get(end + 1).is_some_and(u8::is_ascii_alphabetic);
            if bytes.get(end) == Some(&b'-') && next_starts_word {
                end += 1;
            } else {
                break;
            }
        }
        i = end.max(start + 1);
        let flagged = start >= 2 && &bytes[start - 2..start] == b"--";
        // `=` but not `==`, a version pin (`pytest-cov==4.1`).
        let set = bytes.get(end) == Some(&b'=') && bytes.get(end + 1) != Some(&b'=');
        if parts >= 2 && !short && (flagged || set) && !out.contains(&&text[start..end]) {
            out.push(&text[start..end]);
        }
    }
    out
}

/// The names code gives the options of [`options`]: `import_mode`, `ImportMode` and
/// `importMode` for `import-mode`, as a parser's destination, an enum or a field holds them.
fn option_names(options: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for option in options {
        let lower: Vec<String> = option.split('-').map(str::to_ascii_lowercase).collect();
        let capital = |p: &String| {
            let mut c = p.clone();
            c[..1].make_ascii_uppercase();
            c
        };
        let pascal: String = lower.iter().map(capital).collect();
        let camel = format!("{}{}", lower[0], &pascal[lower[0].len()..]);
        for name in [lower.join("_"), pascal, camel] {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// A text's title: its first non-blank line, when a non-blank line follows it.
fn title_of(text: &str) -> Option<&str> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next()?;
    lines.next().map(|_| first)
}

/// The kind of `text` ([`QueryKind`]), which has a title or not.
fn kind_of(text: &str, titled: bool) -> QueryKind {
    let words: Vec<&str> = text.split_whitespace().collect();
    let lookup = words.len() == 1
        || (words.len() <= 3
            && words.iter().any(|w| {
                w.chars()
                    .any(|c| c.is_uppercase() || c.is_ascii_digit() || "_.:()$#<>".contains(c))
            }));
    if lookup {
        QueryKind::Lookup
    } else if titled {
        QueryKind::Task
    } else if words.len() <= QUESTION_WORDS {
        QueryKind::Question
    } else {
        QueryKind::Text
    }
}

/// The byte ranges of a text that are code: backticked spans, fenced blocks, lines of an
/// interactive session (`>>> `, `... `, `In [1]:`) and lines indented four spaces or a tab.
fn code_spans(text: &str) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut fences = Fences::default();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim_start();
        if fences.is_fence(line) {
            continue;
        }
        if fences.inside()
            || trimmed.starts_with(">>> ")
            || trimmed.starts_with("... ")
            || trimmed.starts_with("In [")
            || line.starts_with("    ")
            || line.starts_with('\t')
        {
            spans.push((start, offset));
            continue;
        }
        let mut tick: Option<usize> = None;
        for (i, c) in line.char_indices() {
            if c == '`' {
                match tick.take() {
                    Some(s) => spans.push((start + s, start + i)),
                    None => tick = Some(i + 1),
                }
            }
        }
    }
    spans
}

fn has_extension(word: &str) -> bool {
    word.rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && EXTENSIONS.contains(&ext))
}

/// Paths the text names, with the line a traceback or a `path:line` gives.
fn path_refs(text: &str) -> Vec<PathRef> {
    let mut out: Vec<PathRef> = Vec::new();
    let is_delim = |c: char| c.is_whitespace() || "\"'`()[]{}<>,;|=".contains(c);
    let mut rest = text;
    while let Some(start) = rest.find(|c: char| !is_delim(c)) {
        let tail = &rest[start..];
        let end = tail.find(is_delim).unwrap_or(tail.len());
        let word = &tail[..end];
        rest = &tail[end..];
        // `path:line[:col]` and trailing punctuation.
        let mut parts = word.trim_end_matches(['.', ':']).split(':');
        let path = parts.next().unwrap_or("");
        let mut line = parts.next().and_then(|l| l.parse::<usize>().ok());
        if !has_extension(path) || path.contains("://") {
            continue;
        }
        if line.is_none() {
            // In prose: `line 743 of sympy/printing/latex.py`.
            line = line_before(&text[..text.len() - tail.len()]);
        }
        if line.is_none() {
            // A Python traceback: `File "x.py", line 67, in f`.
            let after = rest
                .trim_start_matches(['"', '\''])
                .trim_start_matches(',')
                .trim_start();
            if let Some(n) = after.strip_prefix("line ") {
                let digits: String = n.chars().take_while(|c| c.is_ascii_digit()).collect();
                line = digits.parse().ok();
            }
        }
        let path = path.trim_start_matches("./").replace('\\', "/");
        if out.len() < MAX_PATHS && !out.iter().any(|p| p.path == path && p.line == line) {
            out.push(PathRef { path, line });
        }
    }
    out
}

/// The line `before` (the text up to a path) ends by naming: `line 743 of `, `line 12 in `
/// (any case, a backtick or quote before the path aside).
fn line_before(before: &str) -> Option<usize> {
    let b = before.trim_end_matches(['`', '"', '\'']).trim_end();
    let b = b
        .strip_suffix(" of")
        .or_else(|| b.strip_suffix(" in"))?
        .trim_end();
    let word = b.trim_end_matches(|c: char| c.is_ascii_digit());
    let n = b[word.len()..].parse().ok()?;
    let word = word.strip_suffix(' ')?;
    let at = word.len().checked_sub(4)?;
    let whole = at == 0 || !word.as_bytes()[at - 1].is_ascii_alphanumeric();
    (word.is_char_boundary(at) && word[at..].eq_ignore_ascii_case("line") && whole).then_some(n)
}

/// Dotted names of two or more identifiers whose first is lowercase, as path fragments (a file
/// name among them too: whether `ascii.rst` is a file or a module, the tree decides).
fn modules(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if !(b[i].is_ascii_lowercase() || b[i] == b'_')
            || (i > 0
                && (b[i - 1].is_ascii_alphanumeric()
                    || b[i - 1] == b'_'
                    || b[i - 1] == b'.'
                    || b[i - 1] == b'/'))
        {
            i += 1;
            continue;
        }
        let start = i;
        let mut segments = 1;
        while i < b.len()
            && (b[i].is_ascii_alphanumeric()
                || b[i] == b'_'
                || (b[i] == b'.'
                    && b.get(i + 1)
                        .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')))
        {
            if b[i] == b'.' {
                segments += 1;
            }
            i += 1;
        }
        let name = &text[start..i];
        // A name that ends like a file (`ascii.rst`) may be a module all the same (astropy's
        // `format="ascii.rst"` is `astropy/io/ascii/rst.py`); as a fragment it only ever
        // matches a module of that path, so `setup.py` names none.
        if segments >= 2 && out.len() < MAX_PATHS {
            let fragment = name.replace('.', "/");
            if !out.contains(&fragment) {
                out.push(fragment);
            }
        }
    }
    out
}

/// The plain tokens of `text` for a baseline: lowercase runs of letters and digits, each
/// occurrence once, as tantivy's default tokenizer cuts them.
pub fn plain_tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty() && t.len() <= 40)
        .map(str::to_lowercase)
        .collect()
}

/// Other forms of an English word, by its endings alone (no dictionary): its plural or
/// singular, and its stem without `-ed` or `-ing` (with and without an `e`): `started` gives
/// `start` and `starte`, `reporter` gives `reporters`. Only for words of four lowercase ASCII
/// letters or more; forms shorter than three letters are left out. A search keeps those the
/// index holds.
pub fn word_forms(word: &str) -> Vec<String> {
    if word.len() < 4 || !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return Vec::new();
    }
    let mut out = vec![format!("{word}s")];
    for suffix in ["s", "es"] {
        if let Some(stem) = word.strip_suffix(suffix) {
            out.push(stem.to_owned());
        }
    }
    for suffix in ["ed", "ing"] {
        if let Some(stem) = word.strip_suffix(suffix) {
            out.push(stem.to_owned());
            out.push(format!("{stem}e"));
        }
    }
    out.retain(|f| f.len() >= 3);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_query_is_read_once_for_its_kind_title_and_messages() {
        let kind = |text: &str| TaskQuery::parse(text).kind;
        assert_eq!(kind("resolve_redirects"), QueryKind::Lookup);
        assert_eq!(kind("TestReporter run"), QueryKind::Lookup);
        assert_eq!(kind("deno fmt markdown"), QueryKind::Question);
        assert_eq!(kind("how is the LSP started"), QueryKind::Question);
        let long = "word ".repeat(QUESTION_WORDS + 1);
        assert_eq!(kind(&long), QueryKind::Text);
        let issue = TaskQuery::parse(
            "\n  Session drops the proxy  \n\nValueError: the proxy URL has no scheme here\n",
        );
        assert_eq!(issue.kind, QueryKind::Task);
        assert_eq!(issue.title.as_deref(), Some("Session drops the proxy"));
        assert_eq!(issue.messages, ["the proxy URL has no scheme here"]);
        assert_eq!(TaskQuery::parse("one line only").title, None);
    }

    #[test]
    fn word_forms_are_plurals_singulars_and_stems() {
        assert_eq!(word_forms("started"), ["starteds", "start", "starte"]);
        assert_eq!(word_forms("reporter"), ["reporters"]);
        assert_eq!(word_forms("matches"), ["matchess", "matche", "match"]);
        assert_eq!(word_forms("parsing"), ["parsings", "pars", "parse"]);
        // Short words, code and other scripts have none.
        assert!(word_forms("run").is_empty());
        assert!(word_forms("HTTPServer").is_empty());
        assert!(word_forms("año").is_empty());
    }

    #[test]
    fn stop_words_are_sorted_for_the_binary_search() {
        use super::words::STOP_WORDS;
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn options_written_with_hyphens_name_what_code_calls_them() {
        let q = TaskQuery::parse(
            "Module imported twice under import-mode=importlib\n\nRun `pytest --no-header \
             -p no:cacheprovider` with a non-member x-y and a-b=1, pytest-cov==4.1.\n",
        );
        let named: Vec<&str> = q.idents.iter().map(|(i, _)| i.as_str()).collect();
        for name in [
            "import_mode",
            "ImportMode",
            "importMode",
            "no_header",
            "NoHeader",
        ] {
            assert!(named.contains(&name), "{name}: {named:?}");
        }
        // Prose compounds, and parts of one letter, are not options.
        for name in ["non_member", "NonMember", "x_y", "a_b", "pytest_cov"] {
            assert!(!named.contains(&name), "{name}: {named:?}");
        }
        assert_eq!(
            option_names(&options("--a-b- c --ab-Cd-ef=")),
            ["ab_cd_ef", "AbCdEf", "abCdEf"]
        );
        // Found as written where they are declared, as a quoted message is.
        for option in ["import-mode", "no-header"] {
            assert!(q.messages.iter().any(|m| m == option), "{:?}", q.messages);
        }
    }

    #[test]
    fn identifiers_written_as_calls_are_told_apart() {
        let q = TaskQuery::parse(
            "`render` is wrong\n\n>>> latex(acsc(x))\n>>> latex(y)\n>>> clear()\n\
             TypeError: _print_Sin() got an unexpected keyword argument 'exp'\n",
        );
        // `_print_Sin()` then prose: an error message naming the function, not a call.
        assert_eq!(q.called, ["latex", "acsc", "clear"]);
        let named: Vec<&str> = q.idents.iter().map(|(i, _)| i.as_str()).collect();
        assert_eq!(
            named,
            [
                "render",
                "latex",
                "acsc",
                "clear",
                "TypeError",
                "_print_Sin"
            ]
        );
    }

    #[test]
    fn prose_naming_a_line_of_a_file_gives_it() {
        let lines = |text: &str| -> Vec<(String, Option<usize>)> {
            TaskQuery::parse(text)
                .paths
                .into_iter()
                .map(|p| (p.path, p.line))
                .collect()
        };
        assert_eq!(
            lines("change line 743 of sympy/printing/latex.py from"),
            [("sympy/printing/latex.py".to_owned(), Some(743))]
        );
        assert_eq!(
            lines("Line 12 in `src/a.rs` and pipeline 3 of b.py; line 4 near c.py"),
            [
                ("src/a.rs".to_owned(), Some(12)),
                ("b.py".to_owned(), None),
                ("c.py".to_owned(), None)
            ]
        );
    }

    #[test]
    fn a_traceback_gives_paths_lines_and_identifiers() {
        let q = TaskQuery::parse(
            "`Session.resolve_redirects` copies the request\n\
             Traceback (most recent call last):\n  \
             File \"/home/me/site-packages/requests/models.py\", line 67, in dir_parse\n    \
             root = ElementTree.fromstring(response.text)\n\
             see sympy.printing.latex and src/lib.rs:12 or foo.py.",
        );
        assert_eq!(
            q.paths,
            vec![
                PathRef {
                    path: "/home/me/site-packages/requests/models.py".into(),
                    line: Some(67)
                },
                PathRef {
                    path: "src/lib.rs".into(),
                    line: Some(12)
                },
                PathRef {
                    path: "foo.py".into(),
                    line: None
                },
            ]
        );
        // `foo.py` is also read as a module fragment, which only a module `foo/py` would match.
        assert_eq!(
            q.modules,
            ["response/text", "sympy/printing/latex", "foo/py"]
        );
        let rst = TaskQuery::parse("tbl.write(sys.stdout, format=\"ascii.rst\")");
        assert!(
            rst.modules.contains(&"ascii/rst".to_owned()),
            "{:?}",
            rst.modules
        );
        let idents: Vec<&str> = q.idents.iter().map(|(i, _)| i.as_str()).collect();
        assert!(idents.contains(&"resolve_redirects"), "{idents:?}");
        assert!(idents.contains(&"Session"), "{idents:?}");
        assert!(idents.contains(&"dir_parse"), "{idents:?}");
        assert!(idents.contains(&"fromstring"), "{idents:?}");
        assert!(!idents.contains(&"copies"), "{idents:?}");
        let weight = |w: &str| q.words.iter().find(|(t, _)| t == w).map(|(_, x)| *x);
        assert_eq!(weight("the"), None);
        assert!(weight("resolve_redirects") > weight("copies"));
    }

    #[test]
    fn an_error_naming_a_method_by_its_type_blames_it() {
        let q = TaskQuery::parse(
            "Traceback:\n  File \"core.py\", line 3, in get\n\
             TypeError: RST.__init__() got an unexpected keyword argument 'header_rows'\n\
             Calling `Table.write(x)` and fits() returns None.",
        );
        assert_eq!(q.blamed, vec![("RST".to_owned(), "__init__".to_owned())]);
    }

    #[test]
    fn odd_input_reads_as_nothing_much() {
        // A few words or none are a question, with nothing to look for.
        let nothing = TaskQuery {
            kind: QueryKind::Question,
            ..TaskQuery::default()
        };
        assert_eq!(TaskQuery::parse(""), nothing);
        assert_eq!(TaskQuery::parse("the is a of"), nothing);
        let binary = String::from_utf8_lossy(&[0, 159, 146, 150, 255, 1, 2]).into_owned();
        assert_eq!(TaskQuery::parse(&binary).idents, vec![]);
    }
}
