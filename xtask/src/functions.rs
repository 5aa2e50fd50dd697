//! `tidy`'s function rule: how long each function of a Rust file is, read from the source
//! alone, so that no function outside the tests runs past [`crate::tidy::MAX_FUNCTION_LINES`].
//!
//! A function's length is its lines from the one holding `fn` to the one holding its body's
//! closing brace, both counted (its doc comment and attributes are not). The text is cut into
//! tokens first, so braces inside comments, strings, raw strings and character literals do not
//! count, and a lifetime (`'a`) is not taken for a character. Test code is left out: a
//! `#[cfg(test)]` item (most often `mod tests { ... }`) and a `#[test]` function.

/// A function found, with its first line (1-based) and its length in lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub line: usize,
    pub lines: usize,
}

/// Every function with a body in `text` outside its test code, nested ones included (a
/// function inside another counts in its own length and in the outer one's).
pub fn functions(text: &str) -> Vec<Function> {
    let tokens = tokens(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if let Some(after) = test_item_end(&tokens, i) {
            i = after;
            continue;
        }
        if tokens[i].text == "fn"
            && let Some(name) = tokens.get(i + 1).filter(|t| is_ident(&t.text))
            && let Some(close) = body_end(&tokens, i + 2)
        {
            out.push(Function {
                name: name.text.clone(),
                line: tokens[i].line,
                lines: tokens[close].line - tokens[i].line + 1,
            });
        }
        i += 1;
    }
    out
}

/// A token of code: an identifier or keyword, a number, or one punctuation character; with
/// its 1-based line.
#[derive(Debug)]
struct Token {
    text: String,
    line: usize,
}

/// The tokens of `text`, comments, strings and character literals left out.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        let start_line = line;
        let next = literal_end(&chars, i).unwrap_or_else(|| {
            if c.is_alphanumeric() || c == '_' {
                let mut j = i;
                while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                    j += 1;
                }
                out.push(Token {
                    text: chars[i..j].iter().collect(),
                    line: start_line,
                });
                j
            } else {
                if !c.is_whitespace() {
                    out.push(Token {
                        text: c.to_string(),
                        line: start_line,
                    });
                }
                i + 1
            }
        });
        line += chars[i..next].iter().filter(|&&c| c == '\n').count();
        i = next;
    }
    out
}

/// Where a comment, string, raw string or character literal starting at `i` ends (the index
/// after it); `None` where none starts there.
fn literal_end(chars: &[char], i: usize) -> Option<usize> {
    let at = |k: usize| chars.get(k).copied();
    let prev_ident = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
    match (chars[i], at(i + 1)) {
        ('/', Some('/')) => Some(
            chars[i..]
                .iter()
                .position(|&c| c == '\n')
                .map_or(chars.len(), |p| i + p),
        ),
        ('/', Some('*')) => Some(block_comment_end(chars, i)),
        ('"', _) => Some(string_end(chars, i + 1)),
        ('b', Some('"')) if !prev_ident => Some(string_end(chars, i + 2)),
        ('r' | 'b', Some('#' | '"' | 'r')) if !prev_ident => raw_string_end(chars, i),
        ('\'', _) => char_end(chars, i),
        _ => None,
    }
}

/// The index after a (nested) block comment starting at `i`.
fn block_comment_end(chars: &[char], i: usize) -> usize {
    let (mut depth, mut j) = (0usize, i);
    while j + 1 < chars.len() {
        match (chars[j], chars[j + 1]) {
            ('/', '*') => {
                depth += 1;
                j += 2;
            }
            ('*', '/') => {
                depth -= 1;
                j += 2;
                if depth == 0 {
                    return j;
                }
            }
            _ => j += 1,
        }
    }
    chars.len()
}

/// The index after the closing quote of a string whose text starts at `j`.
fn string_end(chars: &[char], mut j: usize) -> usize {
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 2,
            '"' => return j + 1,
            _ => j += 1,
        }
    }
    chars.len()
}

/// The index after a raw string (`r"..."`, `r#"..."#`, `br"..."`) starting at `i`; `None`
/// where the letters start an identifier instead.
fn raw_string_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    if chars[j] == 'b' {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    j += hashes;
    if chars.get(j) != Some(&'"') {
        return None;
    }
    j += 1;
    while j < chars.len() {
        if chars[j] == '"' && chars[j + 1..].iter().take_while(|&&c| c == '#').count() >= hashes {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}

/// The index after a character literal starting at `i` (`'{'`, `'\''`, `'\u{7b}'`); `None`
/// for a lifetime or a label (`'a`, `'outer:`).
fn char_end(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i + 1) {
        Some('\\') => {
            let close = chars[i + 2..].iter().skip(1).position(|&c| c == '\'')?;
            Some(i + 2 + 1 + close + 1)
        }
        Some(_) if chars.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
}

/// Where test code starting at token `i` ends (the token after it): a `#[cfg(test)]` item or
/// a `#[test]` function, attributes and all; `None` where `i` starts no such attribute.
fn test_item_end(tokens: &[Token], i: usize) -> Option<usize> {
    let texts = |from: usize, n: usize| -> Vec<&str> {
        tokens
            .iter()
            .skip(from)
            .take(n)
            .map(|t| t.text.as_str())
            .collect()
    };
    let is_test = texts(i, 7) == ["#", "[", "cfg", "(", "test", ")", "]"]
        || texts(i, 4) == ["#", "[", "test", "]"];
    if !is_test {
        return None;
    }
    // The item after the attribute: up to its first `;` outside brackets, or its body.
    let mut depth = 0usize;
    let mut j = i;
    while j < tokens.len() {
        match tokens[j].text.as_str() {
            "(" | "[" => depth += 1,
            ")" | "]" => depth = depth.saturating_sub(1),
            ";" if depth == 0 => return Some(j + 1),
            "{" if depth == 0 => return Some(matching(tokens, j).map_or(tokens.len(), |c| c + 1)),
            _ => {}
        }
        j += 1;
    }
    Some(tokens.len())
}

/// The token closing the body of a function whose signature starts at token `i`; `None` for
/// a declaration without a body (`fn f();` in a trait or an `extern` block).
fn body_end(tokens: &[Token], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, t) in tokens.iter().enumerate().skip(i) {
        match t.text.as_str() {
            "(" | "[" => depth += 1,
            ")" | "]" => depth = depth.saturating_sub(1),
            ";" if depth == 0 => return None,
            "{" if depth == 0 => return matching(tokens, j),
            _ => {}
        }
    }
    None
}

/// The `}` matching the `{` at token `open`.
fn matching(tokens: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        match t.text.as_str() {
            "{" => depth += 1,
            "}" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lengths(text: &str) -> Vec<(String, usize, usize)> {
        functions(text)
            .into_iter()
            .map(|f| (f.name, f.line, f.lines))
            .collect()
    }

    #[test]
    fn braces_in_literals_and_comments_do_not_count() {
        let text = "/// f { \nfn f<'a>(x: &'a str) -> char {\n    let _ = \"}\"; // }\n    /* { /* } */ */\n    let _ = r#\"}\"#;\n    let _ = b\"}\";\n    '}'\n}\n\nfn g() { '\\'' ; 'x' }\n";
        assert_eq!(
            lengths(text),
            vec![("f".to_owned(), 2, 7), ("g".to_owned(), 10, 1)]
        );
    }

    #[test]
    fn tests_declarations_and_fn_types_are_left_out() {
        let text = "trait T { fn decl(&self); }\nfn h(f: fn(u32) -> u32) -> u32 {\n    f(1)\n}\n#[test]\nfn t() {\n}\n#[cfg(test)]\nmod tests {\n    fn inner() {\n    }\n}\nfn last() { 'outer: loop { break 'outer; } }\n";
        assert_eq!(
            lengths(text),
            vec![("h".to_owned(), 2, 3), ("last".to_owned(), 13, 1)]
        );
    }
}
