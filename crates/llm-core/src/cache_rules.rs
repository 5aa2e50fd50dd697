//! The prompt-cache rules the providers published for their models (late 2026), shared by the
//! clients, which place breakpoints by them, and the simulator, which bills by them.
//!
//! - A prefix shorter than the model's minimum is never cached, so a breakpoint there is
//!   wasted: 4,096 tokens on Claude Opus 4.5 and later and Haiku 4.5, 2,048 on Sonnet 4.6 and
//!   later, 1,024 on older Claude models and on OpenAI's.
//! - Anthropic looks for a cached prefix at each breakpoint and at most [`LOOKBACK_BLOCKS`]
//!   content blocks before it; a conversation that grows by more than that between two calls
//!   needs a breakpoint in between to keep reading its cache.

/// How many content blocks before a breakpoint Anthropic looks back for a cached prefix.
pub const LOOKBACK_BLOCKS: usize = 20;

/// The shortest prefix `model` caches, in tokens.
pub fn min_cacheable_tokens(model: &str) -> u64 {
    const LONG: [&str; 6] = [
        "claude-opus-4-5",
        "claude-opus-4-6",
        "claude-opus-4-7",
        "claude-opus-4-8",
        "claude-opus-5",
        "claude-haiku-4-5",
    ];
    const MEDIUM: [&str; 2] = ["claude-sonnet-4-6", "claude-sonnet-5"];
    if LONG.iter().any(|prefix| model.starts_with(prefix)) {
        4096
    } else if MEDIUM.iter().any(|prefix| model.starts_with(prefix)) {
        2048
    } else {
        1024
    }
}

#[cfg(test)]
mod tests {
    use super::min_cacheable_tokens;

    #[test]
    fn each_model_has_its_published_minimum() {
        assert_eq!(min_cacheable_tokens("claude-opus-4-6"), 4096);
        assert_eq!(min_cacheable_tokens("claude-haiku-4-5-20251001"), 4096);
        assert_eq!(min_cacheable_tokens("claude-sonnet-4-6"), 2048);
        assert_eq!(min_cacheable_tokens("claude-sonnet-4-5-20250929"), 1024);
        assert_eq!(min_cacheable_tokens("gpt-5.6-terra"), 1024);
    }
}
