//! The scan for key-like strings that runs before a recording is written.
//!
//! Recordings copy only allowlisted fields (no headers, no keys), but a conversation can
//! still carry a secret, say a `.env` file an agent read. Rather than guess how to redact
//! it, saving refuses and names the line, so the caller adds a scrub rule. The patterns
//! follow the published formats of common providers; generic ones (bearer tokens, key
//! headers) count only values holding both letters and digits, so identifiers such as
//! `api_key = read_api_key_from_env()` do not trip them.

use std::sync::LazyLock;

use regex::Regex;

/// One key-like string found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretHit {
    /// 1-based.
    pub line: usize,
    pub kind: &'static str,
    /// The first characters only.
    pub preview: String,
}

struct Rule {
    kind: &'static str,
    regex: Regex,
    /// The match must hold a digit and a letter (generic rules).
    mixed: bool,
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |kind, pattern: &str, mixed| Rule {
        kind,
        regex: Regex::new(pattern).expect("the secret patterns are valid regexes"),
        mixed,
    };
    vec![
        rule("an anthropic api key", r"sk-ant-[A-Za-z0-9_\-]{16,}", false),
        rule(
            "an openai api key",
            r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
            false,
        ),
        rule(
            "an aws access key id",
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            false,
        ),
        rule(
            "a github token",
            r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
            false,
        ),
        rule("a slack token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", false),
        rule("a google api key", r"\bAIza[0-9A-Za-z_\-]{35}", false),
        rule(
            "a private key",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
            false,
        ),
        rule(
            "a bearer token",
            r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{20,}",
            true,
        ),
        rule(
            "an api key or authorization value",
            r#"(?i)\b(?:x-api-key|api[_-]?key|authorization|secret[_-]?key|access[_-]?token)\b["']?\s*[:=]\s*["']?[A-Za-z0-9._~+/=\-]{16,}"#,
            true,
        ),
    ]
});

/// Every key-like string in `text`, at most one per line.
pub fn scan(text: &str) -> Vec<SecretHit> {
    let mut hits = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let found = RULES.iter().find_map(|rule| {
            rule.regex
                .find_iter(line)
                .find(|found| !rule.mixed || is_mixed(found.as_str()))
                .map(|found| (rule.kind, found.as_str()))
        });
        if let Some((kind, secret)) = found {
            hits.push(SecretHit {
                line: index + 1,
                kind,
                preview: format!("{}...", secret.chars().take(6).collect::<String>()),
            });
        }
    }
    hits
}

fn is_mixed(text: &str) -> bool {
    // The value is what follows the last separator of the match.
    let value = text
        .rsplit(|c: char| c.is_whitespace() || matches!(c, ':' | '=' | '"' | '\''))
        .next()
        .unwrap_or(text);
    value.chars().any(|c| c.is_ascii_digit()) && value.chars().any(|c| c.is_ascii_alphabetic())
}
