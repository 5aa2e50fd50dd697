//! The secret scan: what it finds, what it leaves alone, and that saving refuses.

use llm_sim::secrets::{SecretHit, scan};
use pretty_assertions::assert_eq;

fn hit(line: usize, kind: &'static str, preview: &str) -> SecretHit {
    SecretHit {
        line,
        kind,
        preview: preview.to_owned(),
    }
}

#[test]
fn key_like_strings_are_found_and_never_shown_whole() {
    let text = [
        "content: use sk-ant-api03-abcdefghijklmnopqrstuvwx to call",
        "OPENAI_API_KEY=sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ123456",
        "aws: AKIAIOSFODNN7EXAMPLE",
        "token ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        "-----BEGIN RSA PRIVATE KEY-----",
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.abc123def456",
        "x-api-key: 0123456789abcdef0123",
        "google AIzaSyA-abcdefghijklmnopqrstuvwxyz0123456",
        "slack xoxb-1234567890-abcdefghij",
    ]
    .join("\n");
    assert_eq!(
        scan(&text),
        vec![
            hit(1, "an anthropic api key", "sk-ant..."),
            hit(2, "an openai api key", "sk-pro..."),
            hit(3, "an aws access key id", "AKIAIO..."),
            hit(4, "a github token", "ghp_ab..."),
            hit(5, "a private key", "-----B..."),
            hit(6, "a bearer token", "Bearer..."),
            hit(7, "an api key or authorization value", "x-api-..."),
            hit(8, "a google api key", "AIzaSy..."),
            hit(9, "a slack token", "xoxb-1..."),
        ]
    );
}

#[test]
fn ordinary_text_and_code_pass() {
    let text = [
        "api_key = read_api_key_from_environment()",
        "the authorization header is set by the client",
        "ask-anything-you-like is a slug, not a key",
        "sk-short",
        "Bearer tokens are described in RFC 6750",
        "path: src/agentforge/core/executor.py",
    ]
    .join("\n");
    assert_eq!(scan(&text), Vec::new());
}
