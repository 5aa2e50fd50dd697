//! C and C++ attribute macros blanked before the grammar reads a file: names in capitals
//! that expand to an attribute, a storage class or nothing (`FMT_API`, `FMT_CONSTEXPR20`,
//! `JSON_HEDLEY_RETURNS_NON_NULL`, `NLOHMANN_BASIC_JSON_TPL_DECLARATION`). No grammar knows
//! what they expand to; read as a type, they make the declaration after them an error, and
//! tree-sitter's recovery can lose a whole class (fmt's `basic_memory_buffer`, whose members
//! begin `FMT_CONSTEXPR20 void` and `FMT_NO_UNIQUE_ADDRESS Allocator alloc_;`). Each is
//! replaced by as many spaces, so every node's bytes and rows stay the file's.
use std::collections::HashSet;

/// `source` with its attribute macros blanked, or `None` where it has none:
/// - a line holding only such a macro, with or without arguments (`FMT_BEGIN_EXPORT`,
///   `JSON_HEDLEY_NON_NULL(1)`), before a line (blank lines, comments, directives and other
///   such lines aside) that goes on with a declaration or closes a block: one starting with a
///   name, `~`, `[[` or `}` (not `{` or `(`: `TEST_F(a, b)` and then its body is a
///   definition);
/// - within a line, one starting a declaration ([`inline_macros`]).
pub(super) fn blank_attribute_macros(source: &str) -> Option<String> {
    let mut out: Option<String> = None;
    // From the end: whether the next code line goes on with a declaration, and whether it
    // starts with a name and its parameters (then a capitals word alone above it is the
    // function's return type: EDK2's `EFI_STATUS` over `InternalFoo (`).
    let (mut before_code, mut before_name) = (false, false);
    // The next code line, trimmed: where a class head's base list or body begins.
    let mut next_code = "";
    let mut end = source.len();
    // `word` (ASCII, no longer than the range) then spaces over ASCII bytes: the length,
    // and every offset after, stay the same.
    let put = |out: &mut Option<String>, from: usize, to: usize, word: &str| {
        let text = out.get_or_insert_with(|| source.to_owned());
        text.replace_range(from..to, &format!("{word:<0$}", to - from));
    };
    let blank = |out: &mut Option<String>, from: usize, to: usize| put(out, from, to, "");
    let lines: Vec<&str> = source.split_inclusive('\n').collect();
    let prose = in_block_comments(&lines);
    // The macros seen starting a declaration somewhere in the file are attribute macros
    // wherever they start one, a constructor's too (`FMT_CONSTEXPR write_int_data(int n)`).
    let known: HashSet<&str> = lines
        .iter()
        .zip(&prose)
        .filter(|(_, prose)| !**prose)
        .flat_map(|(line, _)| {
            inline_macros(line, &HashSet::new())
                .into_iter()
                .map(|(from, to)| macro_name(&line[from..to]))
        })
        .collect();
    let statements = macro_statements(&lines, &prose);
    for (i, line) in lines.iter().enumerate().rev() {
        let start = end - line.len();
        end = start;
        let trimmed = line.trim();
        let directive =
            trimmed.starts_with('#') || (i > 0 && lines[i - 1].trim_end().ends_with('\\'));
        if trimmed.is_empty() || directive || prose[i] || is_comment(trimmed) {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        if statements[i]
            || (before_code && !before_name && is_attribute_macro(without_comment(trimmed)))
        {
            blank(&mut out, start + indent, start + indent + trimmed.len());
            continue;
        }
        if let Some(name) = access_macro(trimmed) {
            // `JSON_PRIVATE_UNLESS_TESTED:`, an access specifier (`private` or `public`).
            put(
                &mut out,
                start + indent,
                start + indent + name.len(),
                "public",
            );
            continue;
        }
        if extern_template(trimmed) {
            // `extern template auto f<char>(int) -> R;`: an explicit instantiation's
            // declaration, which the grammar does not know; without `extern` it reads it.
            blank(&mut out, start + indent, start + indent + "extern".len());
        }
        for (from, to, word) in keyword_macros(line) {
            put(&mut out, start + from, start + to, word);
        }
        for (from, to) in inline_macros(line, &known)
            .into_iter()
            .chain(class_macros(line, next_code))
        {
            blank(&mut out, start + from, start + to);
        }
        before_code = trimmed
            .starts_with(|c: char| c.is_ascii_alphabetic() || c == '_' || c == '~' || c == '}')
            || trimmed.starts_with("[[");
        let first = word_end(trimmed, 0);
        before_name = first > 0 && trimmed[first..].trim_start().starts_with('(');
        next_code = trimmed;
    }
    out
}

/// Whether a (trimmed) line begins an explicit instantiation's declaration: `extern
/// template` and no template head (`extern template class C<int>;`).
fn extern_template(line: &str) -> bool {
    line.strip_prefix("extern").is_some_and(|rest| {
        rest.starts_with(char::is_whitespace)
            && rest
                .trim_start()
                .strip_prefix("template")
                .is_some_and(|r| r.starts_with(char::is_whitespace))
    })
}

/// A (trimmed) line without the `//` comment after its code, where its code ends with `)` or
/// `;` (doctest's `DOCTEST_DO_BINARY_EXPRESSION_COMPARISON(==, " == ", EQ) //!OCLINT ...`).
fn without_comment(line: &str) -> &str {
    match line.rfind("//") {
        Some(at) if line[..at].trim_end().ends_with([')', ';']) => line[..at].trim_end(),
        _ => line,
    }
}

/// Whether a macro call's arguments (`(...)`) are no expressions the grammar can read: one
/// holds a type's keyword (`unsigned char`, `const char*`, `void`) or is an operator alone
/// (`==`). Calls of expressions (`EXPECT_EQ(validate(x), 1);`) stay, so that what they call
/// is read as called.
fn unreadable_arguments(args: &str) -> bool {
    let inner = args.trim().trim_start_matches('(').trim_end_matches(')');
    let typed = words(inner)
        .iter()
        .any(|&(from, to)| TYPE_WORDS.contains(&&inner[from..to]));
    let operator = inner.split(',').any(|a| {
        let a = a.trim();
        !a.is_empty() && !a.contains(|c: char| c.is_alphanumeric() || "'\"_".contains(c))
    });
    typed || operator
}

/// The keywords that only a type holds.
const TYPE_WORDS: &[&str] = &[
    "void", "bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
    "const",
];

/// For each line, whether it is a macro's invocation standing as a statement of its own:
/// `NAME(args);` alone on its line after a statement's or a block's end, where `NAME` is named
/// as a macro ([`is_macro_name`]) or `#define`d with parameters in the file and its arguments
/// are no expressions ([`unreadable_arguments`]). Its arguments may
/// be types or operators (gmock's `GMOCK_DEFINE_DEFAULT_ACTION_FOR_RETURN_TYPE_(unsigned char,
/// '\0');`) and its expansion is unknown: the grammar read one as a function running on over
/// the definitions after it. Within a function's body, where such calls are common, it is a
/// statement the outline never reads.
fn macro_statements(lines: &[&str], prose: &[bool]) -> Vec<bool> {
    let defined: HashSet<&str> = lines
        .iter()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix('#')?.trim_start();
            let rest = rest.strip_prefix("define")?.trim_start();
            let end = word_end(rest, 0);
            rest[end..].starts_with('(').then(|| &rest[..end])
        })
        .collect();
    let mut ended = true;
    let mut found = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let directive =
            trimmed.starts_with('#') || (i > 0 && lines[i - 1].trim_end().ends_with('\\'));
        if trimmed.is_empty() || directive || prose[i] || is_comment(trimmed) {
            found.push(false);
            continue;
        }
        let code = without_comment(trimmed);
        let name = &code[..word_end(code, 0)];
        let called = code.strip_suffix(';').is_some_and(|call| {
            !name.is_empty()
                && past_group(call, skip_spaces(call, name.len()), '(', ')') == Some(call.len())
        });
        let unreadable = called && unreadable_arguments(&code[name.len()..code.len() - 1]);
        found.push(ended && unreadable && (is_macro_name(name) || defined.contains(name)));
        ended = code.ends_with([';', '{', '}', ':']);
    }
    found
}

/// Whether a (trimmed) line is only an upper-case macro name with an underscore, with or
/// without arguments: `NLOHMANN_BASIC_JSON_TPL_DECLARATION`, `JSON_HEDLEY_NON_NULL(1)`.
fn is_attribute_macro(line: &str) -> bool {
    let end = line
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(line.len());
    let (name, rest) = line.split_at(end);
    let rest = rest.trim_start();
    is_macro_name(name) && (rest.is_empty() || (rest.starts_with('(') && rest.ends_with(')')))
}

/// Whether `word` is named as a macro: capitals and digits, at least one `_` joining them
/// (`FMT_API`, `JSON_HEDLEY_NON_NULL`; not `FILE`, `DWORD`).
fn is_macro_name(word: &str) -> bool {
    word.len() > 2 && word.contains('_') && !word.ends_with('_') && shouting(word)
}

/// The macro of a (trimmed) line that is only a macro name and `:`, used as an access
/// specifier in a class (nlohmann/json's `JSON_PRIVATE_UNLESS_TESTED:`), if it is one long
/// enough to hold `public`.
fn access_macro(line: &str) -> Option<&str> {
    let name = line.strip_suffix(':')?.trim_end();
    (is_macro_name(name) && name.len() >= "public".len()).then_some(name)
}

/// The macros of `line` standing for `try` and `catch` where a statement starts (`JSON_TRY`,
/// `} JSON_CATCH(...)`, `BOOST_TRY`; not `i < MAX_TRY`): their ranges and the keyword each
/// stands for. Read as calls, they leave a
/// function's body an error that can end its class early.
fn keyword_macros(line: &str) -> Vec<(usize, usize, &'static str)> {
    if !line.contains("_TRY") && !line.contains("_CATCH") {
        return Vec::new();
    }
    words(line)
        .into_iter()
        .filter_map(|(from, to)| {
            let word = &line[from..to];
            // Where a statement starts: the line's start, or after a block (`} JSON_CATCH`).
            let before = line[..from].trim_end();
            if !is_macro_name(word) || !(before.is_empty() || before.ends_with('}')) {
                return None;
            }
            if word.ends_with("_TRY") {
                Some((from, to, "try"))
            } else if word.ends_with("_CATCH") && line[to..].trim_start().starts_with('(') {
                Some((from, to, "catch"))
            } else {
                None
            }
        })
        .collect()
}

/// Whether a (trimmed) line starts a comment.
fn is_comment(line: &str) -> bool {
    line.starts_with("//") || line.starts_with("/*")
}

/// For each line, whether it starts inside a `/* */` comment (prose, whose capitals words
/// are no macros). Strings and `//` comments are skipped as C reads them.
pub(super) fn in_block_comments(lines: &[&str]) -> Vec<bool> {
    let mut inside = false;
    lines
        .iter()
        .map(|line| {
            let started = inside;
            let bytes = line.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                if inside {
                    if bytes[i..].starts_with(b"*/") {
                        inside = false;
                        i += 1;
                    }
                } else if bytes[i..].starts_with(b"/*") {
                    inside = true;
                    i += 1;
                } else if bytes[i..].starts_with(b"//") {
                    break;
                } else if bytes[i] == b'"' || bytes[i] == b'\'' {
                    let quote = bytes[i];
                    i += 1;
                    while i < bytes.len() && bytes[i] != quote {
                        i += 1 + usize::from(bytes[i] == b'\\');
                    }
                }
                i += 1;
            }
            started
        })
        .collect()
}

/// Whether `word` may be an attribute macro written in lower case (simdjson's
/// `simdjson_inline`, `simdjson_warn_unused`, `really_inline`): lower-case letters and digits
/// with an `_` joining them, no keyword and no `_t` type (`size_t`, `uint8_t`). Such a word
/// is one only where what follows begins a declaration without it ([`begins_declaration`]):
/// two types never stand side by side.
fn lower_macro_name(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_lowercase())
        && word.contains('_')
        && !word.ends_with('_')
        && !word.ends_with("_t")
        && word
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !matches!(
            word,
            "static_assert"
                | "static_cast"
                | "const_cast"
                | "dynamic_cast"
                | "reinterpret_cast"
                | "thread_local"
                | "co_await"
                | "co_return"
                | "co_yield"
        )
}

/// Words that may come before a declaration's attribute macro on its line.
const BEFORE: &[&str] = &[
    "explicit",
    "static",
    "inline",
    "virtual",
    "friend",
    "constexpr",
    "extern",
    // An explicit instantiation's (`extern template FMT_API auto f<char>(...) -> T;`).
    "template",
];

/// Words after which an attribute macro begins a declaration: a type, a specifier or a
/// qualifier.
const AFTER: &[&str] = &[
    "void",
    "bool",
    "char",
    "short",
    "int",
    "long",
    "float",
    "double",
    "signed",
    "unsigned",
    "auto",
    "const",
    "constexpr",
    "consteval",
    "constinit",
    "static",
    "inline",
    "virtual",
    "explicit",
    "extern",
    "friend",
    "typename",
    "template",
    "class",
    "struct",
    "union",
    "enum",
    "volatile",
    "mutable",
    "thread_local",
    "operator",
];

/// The byte ranges, within `line`, of the attribute macros that begin a declaration there:
/// a macro name ([`is_macro_name`]), with its arguments if it has any, at the line's start,
/// after a specifier ([`BEFORE`]), after a template's parameters (`template <typename T>
/// FMT_CONSTEXPR auto f()`) or after another such macro; and followed by a type or a
/// specifier ([`AFTER`]), a destructor (`~`), another such macro, or a type and then a name
/// (`FMT_API uint128_fallback get_cached_power(int)`, `FMT_NO_UNIQUE_ADDRESS Allocator
/// alloc_;`, `CURL_EXTERN CURL *curl_easy_init(void)`), or by anything where it is one of
/// `known` (seen so elsewhere in the file). A capitals type before a single name
/// (`LARGE_INTEGER li;`, `SSL_CTX *ctx`, `MY_TYPE f(int)`) is a type, and stays.
pub(super) fn inline_macros(line: &str, known: &HashSet<&str>) -> Vec<(usize, usize)> {
    // Most lines name no macro: no `_`.
    if !line.as_bytes().contains(&b'_') {
        return Vec::new();
    }
    let words = words(line);
    let mut found = Vec::new();
    let mut after_macro = false;
    for (k, &(from, to)) in words.iter().enumerate() {
        let word = &line[from..to];
        let before = line[..from].trim_end();
        let placed = before.is_empty()
            || after_macro
            || before.ends_with('>')
            || BEFORE.iter().any(|b| {
                before
                    .strip_suffix(b)
                    .is_some_and(|r| r.is_empty() || r.ends_with(char::is_whitespace))
            });
        after_macro = false;
        if !placed || !(is_macro_name(word) || lower_macro_name(word)) {
            continue;
        }
        // Its arguments, if any: balanced parentheses right after it.
        let end = past_arguments(line, to);
        // A lower-case type before an operator is its return type (`vec_type operator+(...)`).
        let typed_operator =
            !is_macro_name(word) && line[end..].trim_start().starts_with("operator");
        if known.contains(word)
            || (!typed_operator && begins_declaration(line, end, &words[k + 1..]))
        {
            found.push((from, end));
            after_macro = true;
        }
    }
    found
}

/// The byte ranges, within `line`, of the macros between `class`, `struct` or `union` and
/// the name of a class defined there (`class GTEST_API_ Test {`, `class FMT_API format_error
/// : public std::runtime_error`, `struct JSON_API Value final {`): an export or visibility
/// macro, with its arguments if it has any. Two names never stand there otherwise; a name
/// and then a declarator (`struct stat st;`) does not go on with a body or a base list. A
/// head ending its line goes on with the next line of code (`next`, trimmed: `: public Base`).
fn class_macros(line: &str, next: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    // Most lines name no class head.
    if !["class", "struct", "union"]
        .iter()
        .any(|k| line.contains(k))
    {
        return found;
    }
    for (from, to) in words(line) {
        if !matches!(&line[from..to], "class" | "struct" | "union") {
            continue;
        }
        // The names (and their arguments) up to the head's end.
        let mut names = Vec::new();
        let mut at = to;
        loop {
            let from = skip_spaces(line, at);
            let end = word_end(line, from);
            if end == from {
                break;
            }
            at = past_group(line, skip_spaces(line, end), '(', ')').unwrap_or(end);
            names.push((from, at));
        }
        let rest = match line[at..].trim() {
            "" => next,
            rest => rest,
        };
        let body = rest.starts_with('{') || (rest.starts_with(':') && !rest.starts_with("::"));
        // `Name final {`: the name is the one before `final`.
        let keep = match names.last() {
            Some(&(from, to)) if line[from..to] == *"final" => 2,
            _ => 1,
        };
        if !body || names.len() <= keep {
            continue;
        }
        let (macros, kept) = names.split_at(names.len() - keep);
        // The class's name is a bare word (`struct foo make_foo(int) {` is a function).
        let bare = |&(from, to): &(usize, usize)| word_end(line, from) == to;
        let keyword =
            |&(from, _): &(usize, usize)| AFTER.contains(&&line[from..word_end(line, from)]);
        if bare(&kept[0]) && !macros.iter().any(keyword) {
            found.extend_from_slice(macros);
        }
    }
    found
}

/// A blanked macro's name, without its arguments.
fn macro_name(text: &str) -> &str {
    text.split('(').next().unwrap_or(text).trim_end()
}

/// Where the arguments of a macro ending at `at` end (`at` where it has none).
fn past_arguments(line: &str, at: usize) -> usize {
    past_group(line, at, '(', ')').unwrap_or(at)
}

/// Where the bracket `open` at `at` closes (nested ones counted), past its `close`; `None`
/// where `line` holds no bracket there or it does not close.
fn past_group(line: &str, at: usize, open: char, close: char) -> Option<usize> {
    if !line[at..].starts_with(open) {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in line[at..].char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(at + i + 1);
            }
        }
    }
    None
}

/// Whether what follows `at` on `line` (its words from `next` on) begins a declaration: a
/// word of [`AFTER`], `~`, another macro name, or a type (with `::`, template arguments, `*`
/// and `&`) and then a name.
fn begins_declaration(line: &str, at: usize, next: &[(usize, usize)]) -> bool {
    let rest = line[at..].trim_start();
    if rest.starts_with('~') {
        return true;
    }
    let Some(k) = next.iter().position(|w| w.0 >= at) else {
        return false;
    };
    let (from, to) = next[k];
    if line[at..from].trim() != "" {
        return false;
    }
    let word = &line[from..to];
    let after = &next[k + 1..];
    if matches!(word, "const" | "volatile") {
        // A qualifier then a type and a name (`RETURNS_NON_NULL const char* name()`), not a
        // capitals type's east const (`FOO_T const *get_foo(void)`).
        return type_then_name(line, to, after);
    }
    if AFTER.contains(&word) {
        return true;
    }
    if shouting(word) {
        // Another macro, one beginning a declaration itself (`FMT_EXPORT FMT_INLINE void`), or
        // a capitals type pointed to (`CURL_EXTERN CURL *curl_easy_init`); not a type before a
        // calling convention (`INT_PTR CALLBACK DlgProc(...)`).
        let pointed = matches!(
            line.as_bytes().get(skip_spaces(line, to)),
            Some(b'*' | b'&')
        );
        return begins_declaration(line, to, after)
            || (pointed && type_then_name(line, from, &next[k..]));
    }
    // Another macro in lower case, one beginning a declaration itself (`simdjson_unused
    // simdjson_inline bool`), else a lower-case type and a name (`simdjson_inline error_code
    // f()`).
    (lower_macro_name(word) && begins_declaration(line, to, after))
        || type_then_name(line, from, next)
}

/// Whether, from `at`, `line` holds a type (a name, `::` names, template arguments; then
/// `*`s and `&`s) and then a name.
fn type_then_name(line: &str, at: usize, next: &[(usize, usize)]) -> bool {
    let Some(&(from, to)) = next.iter().find(|w| w.0 >= at) else {
        return false;
    };
    if line[at..from].trim() != "" {
        return false;
    }
    // A type: a name, `::` names, template arguments; then `*`s and `&`s; then a name.
    let bytes = line.as_bytes();
    let mut i = to;
    loop {
        let j = skip_spaces(line, i);
        if line[j..].starts_with("::") {
            i = word_end(line, skip_spaces(line, j + 2));
        } else if bytes.get(j) == Some(&b'<') {
            // Template arguments (`<...>`); unclosed, the rest of the line.
            i = past_group(line, j, '<', '>').unwrap_or(line.len());
        } else {
            break;
        }
    }
    let mut j = skip_spaces(line, i);
    while matches!(bytes.get(j), Some(b'*' | b'&')) {
        j = skip_spaces(line, j + 1);
    }
    j > i && word_end(line, j) > j
}

/// Whether `word` is written in capitals (digits and `_` allowed): a macro's or a constant's.
fn shouting(word: &str) -> bool {
    word.len() > 1
        && word.starts_with(|c: char| c.is_ascii_uppercase())
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// The words of `line` (identifiers), as byte ranges.
fn words(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        let part = c.is_ascii_alphanumeric() || c == '_';
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, line.len()));
    }
    out
}

fn skip_spaces(line: &str, at: usize) -> usize {
    at + line[at..].len() - line[at..].trim_start_matches([' ', '\t']).len()
}

/// Where the identifier starting at `at` ends (`at` where none starts there).
fn word_end(line: &str, at: usize) -> usize {
    at + line[at..]
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(line.len() - at)
}

/// The name a C or C++ declarator's name node declares, where the grammar read it with an
/// error: an attribute macro before the return type (`FMT_API uint128_fallback
/// get_cached_power(int k)`, `explicit FMT_CONSTEXPR precision_checker(...)`) is read as the
/// type, and the real type and the name as one qualified name missing its `::`. The name is
/// then its last word outside template brackets (`get_cached_power`, `element::at_pointer`),
/// or the one before where that word is itself a macro (`localtime_r FMT_NOMACRO(...)`).
/// Without an error the text is the name as written.
pub(super) fn recovered_name(text: &str, has_error: bool) -> &str {
    if !has_error {
        return text;
    }
    let (mut depth, mut words, mut start) = (0i32, Vec::new(), None);
    for (i, c) in text.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if let Some(s) = start.take() {
                words.push(&text[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&text[s..]);
    }
    let is_macro = |w: &str| {
        w.len() > 2
            && w.contains('_')
            && w.chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    };
    match words.as_slice() {
        [.., before, last] if is_macro(last) => before,
        [.., last] => last,
        [] => text,
    }
}

#[cfg(test)]
mod tests {
    use super::inline_macros;
    use std::collections::HashSet;

    fn blanked(line: &str) -> Vec<&str> {
        inline_macros(line, &HashSet::new())
            .into_iter()
            .map(|(a, b)| &line[a..b])
            .collect()
    }

    #[test]
    fn macros_for_an_access_specifier_try_and_catch_are_read_as_those() {
        let src = "class basic_json {\n  JSON_PRIVATE_UNLESS_TESTED:\n    int m;\n  A_B:\n\
                   \x20 void f() {\n    JSON_TRY { g(); }\n    JSON_CATCH(...) {}\n  }\n};\n";
        let read = super::blank_attribute_macros(src).expect("macros read");
        assert_eq!(read.len(), src.len());
        let lines: Vec<&str> = read.lines().collect();
        assert_eq!(lines[1].trim_end(), "  public                    :");
        assert_eq!(lines[3], "  A_B:", "too short for `public`: left");
        assert_eq!(lines[5].trim_end(), "    try      { g(); }");
        assert_eq!(lines[6].trim_end(), "    catch     (...) {}");
        let src = "int f() {\n  if (i < MAX_TRY) {}\n  return 0;\n}\n";
        assert!(super::blank_attribute_macros(src).is_none());
    }

    #[test]
    fn a_return_type_alone_above_its_function_and_comment_prose_stay() {
        for src in [
            "EFI_STATUS\nInternalFoo (\n  IN UINTN X\n  )\n{\n  return 0;\n}\n",
            "/*\n   MAX_SIZE bytes are used\n*/\nint f(int n) {\n  if (n >\n  MAX_SIZE) {}\n}\n",
        ] {
            assert!(super::blank_attribute_macros(src).is_none(), "{src}");
        }
    }

    #[test]
    fn a_macro_before_a_declaration_is_blanked_and_a_capitals_type_stays() {
        assert_eq!(
            blanked("  FMT_CONSTEXPR20 void deallocate() {"),
            ["FMT_CONSTEXPR20"]
        );
        assert_eq!(
            blanked("  FMT_NO_UNIQUE_ADDRESS Allocator alloc_;"),
            ["FMT_NO_UNIQUE_ADDRESS"]
        );
        assert_eq!(
            blanked("FMT_API uint128_fallback get_cached_power(int k) {"),
            ["FMT_API"]
        );
        assert_eq!(
            blanked("template <typename T> FMT_CONSTEXPR auto f(T t) -> int {"),
            ["FMT_CONSTEXPR"]
        );
        assert_eq!(
            blanked("  explicit FMT_CONSTEXPR20 ~buffer() {}"),
            ["FMT_CONSTEXPR20"]
        );
        assert_eq!(
            blanked("FMT_EXPORT FMT_INLINE void f() {}"),
            ["FMT_EXPORT", "FMT_INLINE"]
        );
        assert_eq!(
            blanked(
                "JSON_HEDLEY_DEPRECATED_FOR(3.4.0, basic_json::ordered) static basic_json meta()"
            ),
            ["JSON_HEDLEY_DEPRECATED_FOR(3.4.0, basic_json::ordered)"]
        );
        assert_eq!(
            blanked("CURL_EXTERN CURL *curl_easy_init(void);"),
            ["CURL_EXTERN"]
        );
        assert_eq!(
            blanked("LIB_API std::vector<int> detail::make(int n) {"),
            ["LIB_API"]
        );
        // Seen starting a declaration elsewhere, a constructor's macro goes too.
        let known = HashSet::from(["FMT_CONSTEXPR"]);
        let line = "  FMT_CONSTEXPR write_int_data(int num_digits, unsigned prefix,";
        assert_eq!(inline_macros(line, &known), [(2, 15)]);
        assert!(inline_macros(line, &HashSet::new()).is_empty());
        // A capitals type before a calling convention, or with east const, stays.
        assert!(blanked("INT_PTR CALLBACK DlgProc(HWND h) {").is_empty());
        assert!(blanked("FOO_T const *get_foo(void) {").is_empty());
        assert_eq!(
            blanked("JSON_HEDLEY_RETURNS_NON_NULL const char* type_name() const noexcept"),
            ["JSON_HEDLEY_RETURNS_NON_NULL"]
        );
        for stays in [
            "LARGE_INTEGER li;",
            "SSL_CTX *ctx = SSL_CTX_new(m);",
            "MY_TYPE f(int x) {",
            "  ASSERT_EQ(a, b);",
            "  return FOO_BAR;",
            "typedef FOO_BAR baz;",
            "  MY_TYPE value = get();",
            "void f(FOO_T a, int b);",
            "FMT_BEGIN_NAMESPACE",
        ] {
            assert!(blanked(stays).is_empty(), "{stays}: {:?}", blanked(stays));
        }
    }
}
