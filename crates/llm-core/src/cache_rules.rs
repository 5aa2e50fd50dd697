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

/// The shortest life of a cache write on OpenAI's GPT-5.6 and later (`prompt_cache_options.ttl`
/// is `30m`, its only value).
pub const OPENAI_BREAKPOINT_TTL: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Whether `model` caches by OpenAI's GPT-5.6 rules: explicit breakpoints
/// (`prompt_cache_breakpoint`, which merkle's client sends for its cache marks) and, unless
/// `prompt_cache_options.mode` is `explicit`, one implicit breakpoint at the end of each
/// request; matched later exactly at a breakpoint written before, with no lookback limit;
/// writes billed at 1.25x, kept 30 minutes.
pub fn openai_breakpoints(model: &str) -> bool {
    const FAMILIES: [&str; 2] = ["gpt-5.6", "gpt-6"];
    FAMILIES.iter().any(|prefix| model.starts_with(prefix))
}

/// Whether `model`'s provider has a pre-warming call (Anthropic's `max_tokens: 0`); OpenAI's
/// models have none.
pub fn can_prewarm(model: &str) -> bool {
    !(model.starts_with("gpt-") || crate::tokens::Encoding::for_model(model).is_some())
}

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
        assert!(super::openai_breakpoints("gpt-5.6-terra"));
        assert!(!super::openai_breakpoints("gpt-5.4"));
        assert!(super::can_prewarm("claude-sonnet-4-6") && !super::can_prewarm("gpt-5.6-luna"));
    }
}
