//! Prompt caching as the providers bill it, so that tests and benchmarks can count what a
//! caching client saves without a network.
//!
//! A request's prefix up to a cache breakpoint ([`Request::cache`]: after the tools, the system
//! prompt or a message) that was written in the last five minutes is read from the cache; the
//! prefix up to its last breakpoint is written when it was not. Usage then reports the read
//! tokens as `cache_read_input_tokens`, the written ones as `cache_creation_input_tokens` and
//! the rest as `input_tokens`, the three adding up to the input the answer's usage had. A read
//! or a write refreshes the entry's five minutes, as Anthropic's cache does. Prefixes shorter
//! than [`MIN_CACHED_TOKENS`] are never cached (Anthropic's minimum for its larger models).
//!
//! A request with no breakpoint but a [`Request::cache_key`] is cached as OpenAI caches: every
//! message boundary is a candidate, the longest one seen before is read, and nothing is billed
//! for writing.
//!
//! Tokens are counted by the tokenizer that billed the whole request (llm-core's estimate, as
//! [`crate::script::estimated_usage`] gives it, or the fake Anthropic service's own
//! [`crate::tokenizer`]), so that the parts stay within the whole.
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use llm_core::types::MAX_CACHE_MARKS;
use llm_core::{Clock, Request, SystemClock, Usage};

/// How long a cached prefix lives after it was last written or read.
pub const CACHE_TTL: Duration = Duration::from_secs(5 * 60);

/// The shortest prefix a provider caches.
pub const MIN_CACHED_TOKENS: u64 = 1024;

/// The prefixes seen, by a hash of their content, with when each was last used.
#[derive(Debug)]
pub struct PromptCache {
    clock: Arc<dyn Clock>,
    entries: HashMap<u64, Instant>,
}

impl Default for PromptCache {
    fn default() -> Self {
        Self::new(Arc::new(SystemClock))
    }
}

/// One prefix a request could be cached up to.
struct Prefix {
    hash: u64,
    tokens: u64,
}

impl PromptCache {
    /// A cache whose five minutes are measured by `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        Self {
            clock,
            entries: HashMap::new(),
        }
    }

    /// How many prefixes are cached now.
    pub fn len(&self) -> usize {
        let now = self.clock.now();
        self.entries
            .values()
            .filter(|seen| now.duration_since(**seen) < CACHE_TTL)
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Splits `usage`'s input for `request` into uncached, written and read tokens, and
    /// remembers the request's prefixes. A request without breakpoints or a cache key is left
    /// as it is.
    pub fn apply(&mut self, request: &Request, usage: &mut Usage) {
        self.apply_counted(request, usage, llm_core::tokens::estimate_request);
    }

    /// [`PromptCache::apply`] with prefixes measured by `count`, the tokenizer that billed
    /// the whole request.
    pub fn apply_counted(
        &mut self,
        request: &Request,
        usage: &mut Usage,
        count: fn(&Request) -> u64,
    ) {
        let automatic = request.cache.is_empty();
        if automatic && request.cache_key.is_none() {
            return;
        }
        let now = self.clock.now();
        self.entries
            .retain(|_, seen| now.duration_since(*seen) < CACHE_TTL);
        let prefixes: Vec<Prefix> = prefixes(request, automatic, count)
            .into_iter()
            .filter(|p| p.tokens >= MIN_CACHED_TOKENS)
            .collect();
        let total =
            usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens;
        let read = prefixes
            .iter()
            .rev()
            .find(|p| self.entries.contains_key(&p.hash))
            .map_or(0, |p| p.tokens)
            .min(total);
        let write = if automatic {
            0
        } else {
            prefixes
                .last()
                .map_or(0, |p| p.tokens.saturating_sub(read))
                .min(total - read)
        };
        *usage = Usage {
            input_tokens: total - read - write,
            cache_read_input_tokens: read,
            cache_creation_input_tokens: write,
            ..*usage
        };
        for p in prefixes {
            self.entries.insert(p.hash, now);
        }
    }
}

/// The prefixes of `request` that end at a breakpoint (or, `automatic`, at every message),
/// shortest first.
fn prefixes(request: &Request, automatic: bool, count: fn(&Request) -> u64) -> Vec<Prefix> {
    let marks = request.cache.limited(MAX_CACHE_MARKS);
    let mut ends: Vec<PrefixEnd> = Vec::new();
    if automatic {
        ends.extend((0..request.messages.len()).map(PrefixEnd::Message));
    } else {
        if marks.tools && !request.tools.is_empty() {
            ends.push(PrefixEnd::Tools);
        }
        if marks.system && request.system.is_some() {
            ends.push(PrefixEnd::System);
        }
        ends.extend(
            marks
                .messages
                .iter()
                .filter(|&&i| i < request.messages.len())
                .map(|&i| PrefixEnd::Message(i)),
        );
    }
    ends.into_iter()
        .map(|end| {
            let part = end.of(request);
            let mut hasher = DefaultHasher::new();
            // The model is part of what a cache entry is for.
            part.model.hash(&mut hasher);
            serde_json::to_string(&(&part.tools, &part.system, &part.messages))
                .unwrap_or_default()
                .hash(&mut hasher);
            Prefix {
                hash: hasher.finish(),
                tokens: count(&part),
            }
        })
        .collect()
}

/// Where a prefix ends.
#[derive(Clone, Copy)]
enum PrefixEnd {
    Tools,
    System,
    Message(usize),
}

impl PrefixEnd {
    /// The part of `request` up to here, as a request of its own.
    fn of(self, request: &Request) -> Request {
        let mut part = Request::new(request.model.clone());
        part.tools = request.tools.clone();
        if matches!(self, PrefixEnd::Tools) {
            return part;
        }
        part.system = request.system.clone();
        if let PrefixEnd::Message(i) = self {
            part.messages = request.messages[..=i].to_vec();
        }
        part
    }
}
