//! The identifier tokenizer: text as a programmer reads it. Each identifier (a maximal run of
//! letters, digits and `_`) is one token, lowercased, and when it has several parts
//! (`resolve_redirects`, `HTTPServer`, `getUserId`) each part is a token too, at the same
//! position, so a query for `redirects` finds `resolve_redirects` and a query for the whole
//! name prefers the files that spell it whole.
//!
//! One function ([`identifiers`]) serves the index (through [`IdentTokenizer`], tantivy's
//! tokenizer trait) and the query reader, so both sides cut text the same way.
use tantivy::tokenizer::{Token, TokenStream, Tokenizer};

/// Tokens longer than this are dropped: base64 blobs and hashes are not words anyone searches.
pub const MAX_TOKEN: usize = 48;

/// One identifier of a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ident<'a> {
    /// As written.
    pub text: &'a str,
    /// Its byte offset in the text.
    pub offset: usize,
}

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifiers of `text` in order, as written.
pub fn identifiers(text: &str) -> impl Iterator<Item = Ident<'_>> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        loop {
            let (start, c) = rest.next()?;
            if !is_ident_char(c) {
                continue;
            }
            let mut end = start + c.len_utf8();
            while let Some(&(i, c)) = rest.peek() {
                if !is_ident_char(c) {
                    break;
                }
                end = i + c.len_utf8();
                rest.next();
            }
            return Some(Ident {
                text: &text[start..end],
                offset: start,
            });
        }
    })
}

/// The byte ranges of an identifier's parts: split at `_`, where a lowercase letter or digit
/// meets an uppercase one (`getUser`), and before the last capital of a run of capitals that
/// a lowercase letter follows (`HTTPServer` is `HTTP`, `Server`). One range when it has one part.
pub fn parts(ident: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    parts_into(ident, &mut out);
    out
}

/// [`parts`] into `out` (cleared first), without allocating when `out` has room.
fn parts_into(ident: &str, out: &mut Vec<(usize, usize)>) {
    out.clear();
    let mut start: Option<usize> = None;
    let mut chars = ident.char_indices().peekable();
    let mut prev = '_';
    while let Some((i, c)) = chars.next() {
        if c == '_' {
            if let Some(s) = start.take() {
                out.push((s, i));
            }
            prev = c;
            continue;
        }
        if let Some(s) = start {
            let next_lower = chars.peek().is_some_and(|&(_, n)| n.is_lowercase());
            let boundary = c.is_uppercase()
                && (prev.is_lowercase()
                    || prev.is_ascii_digit()
                    || (prev.is_uppercase() && next_lower));
            if boundary {
                out.push((s, i));
                start = Some(i);
            }
        } else {
            start = Some(i);
        }
        prev = c;
    }
    if let Some(s) = start {
        out.push((s, ident.len()));
    }
}

/// `text` lowercased into `out` (cleared first).
fn lowercase_into(text: &str, out: &mut String) {
    out.clear();
    if text.is_ascii() {
        out.push_str(text);
        out.make_ascii_lowercase();
    } else {
        out.extend(text.chars().flat_map(char::to_lowercase));
    }
}

/// Calls `emit(token, position)` for each token of `text`: each identifier of two characters
/// or more, lowercased, then its parts of two characters or more when there are several, all
/// at the identifier's position.
pub fn tokens(text: &str, mut emit: impl FnMut(&str, usize, usize, usize)) {
    let mut lower = String::new();
    let mut ps = Vec::new();
    for (position, id) in identifiers(text).enumerate() {
        if id.text.len() > MAX_TOKEN {
            continue;
        }
        lowercase_into(id.text, &mut lower);
        if lower.chars().nth(1).is_some() {
            emit(&lower, id.offset, id.offset + id.text.len(), position);
        }
        parts_into(id.text, &mut ps);
        if ps.len() > 1 || ps.first().is_some_and(|&(s, e)| e - s < id.text.len()) {
            for &(s, e) in &ps {
                let part = &id.text[s..e];
                if part.chars().nth(1).is_none() {
                    continue;
                }
                lowercase_into(part, &mut lower);
                emit(&lower, id.offset + s, id.offset + e, position);
            }
        }
    }
}

/// The tokens of `text` as strings, in order (the query side of [`tokens`]).
pub fn token_strings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    tokens(text, |t, _, _, _| out.push(t.to_owned()));
    out
}

/// [`tokens`] as a tantivy tokenizer, registered under [`crate::index::IDENT`].
#[derive(Clone, Debug, Default)]
pub struct IdentTokenizer;

/// The tokens of one text, made up front.
#[derive(Debug)]
pub struct IdentStream {
    tokens: Vec<Token>,
    next: usize,
    /// What `token` answers before the first `advance` or after the last (tantivy asks only
    /// between them).
    none: Token,
}

impl Tokenizer for IdentTokenizer {
    type TokenStream<'a> = IdentStream;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> IdentStream {
        let mut out = Vec::new();
        tokens(text, |t, from, to, position| {
            out.push(Token {
                offset_from: from,
                offset_to: to,
                position,
                text: t.to_owned(),
                position_length: 1,
            });
        });
        IdentStream {
            tokens: out,
            next: 0,
            none: Token::default(),
        }
    }
}

impl TokenStream for IdentStream {
    fn advance(&mut self) -> bool {
        if self.next < self.tokens.len() {
            self.next += 1;
            true
        } else {
            false
        }
    }

    fn token(&self) -> &Token {
        self.next
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .unwrap_or(&self.none)
    }

    fn token_mut(&mut self) -> &mut Token {
        match self.next.checked_sub(1) {
            Some(i) if i < self.tokens.len() => &mut self.tokens[i],
            _ => &mut self.none,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn check(text: &str, expected: &[&str]) {
        assert_eq!(token_strings(text), expected, "{text:?}");
    }

    #[test]
    fn identifiers_are_whole_then_parts() {
        check(
            "resolve_redirects",
            &["resolve_redirects", "resolve", "redirects"],
        );
        check(
            "HTTPServer.getUserId()",
            &[
                "httpserver",
                "http",
                "server",
                "getuserid",
                "get",
                "user",
                "id",
            ],
        );
        check("a is the x", &["is", "the"]);
        check(
            "utf8 Latin1Codec",
            &["utf8", "latin1codec", "latin1", "codec"],
        );
        check("__init__ _x", &["__init__", "init", "_x"]);
        check("Ünïcode_naïve", &["ünïcode_naïve", "ünïcode", "naïve"]);
        check(&"z".repeat(MAX_TOKEN + 1), &[]);
    }
}
