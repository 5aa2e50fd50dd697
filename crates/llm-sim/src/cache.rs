//! Prompt caching as the providers bill it, so that tests and benchmarks can count what a
//! caching client saves without a network.
//!
//! A request's prefix up to a cache breakpoint ([`Request::cache`]: after the tools, the system
//! prompt or a message) is written when the request's last breakpoint was not cached; a later
//! request reads the longest cached prefix that ends at one of its breakpoints or at most
//! [`LOOKBACK_BLOCKS`] content blocks before one (Anthropic's lookback). Usage then reports the
//! read tokens as `cache_read_input_tokens`, the written ones as `cache_creation_input_tokens`
//! (and those written for an hour as `cache_creation_1h_input_tokens`) and the rest as
//! `input_tokens`, the three adding up to the input the answer's usage had. A write lives for
//! the request's [`CacheTtl`] (five minutes or an hour), and a read refreshes it, as
//! Anthropic's cache does. Prefixes shorter than the model's minimum
//! ([`min_cacheable_tokens`]: 4,096 tokens on Opus 4.5 and later, 2,048 on Sonnet 4.6, 1,024
//! before) are never cached.
//!
//! With [`llm_core::CacheMarks::automatic`] (Anthropic's top-level `cache_control`) the last
//! block is one more breakpoint, taking one of the four.
//!
//! A request with no breakpoint but a [`Request::cache_key`] is cached as OpenAI caches: every
//! message boundary is a candidate, the longest one seen before is read, and nothing is billed
//! for writing (the fake service bills every OpenAI request so, keyed or not). On GPT-5.6 and
//! later ([`openai_breakpoints`]) every request is cached: it writes its explicit breakpoints
//! and, unless it has marks and is not automatic (`prompt_cache_options.mode: explicit`), an
//! implicit one at its end, paid, each living 30 minutes; it reads the longest prefix written at
//! an earlier breakpoint, however far back.
//!
//! Tokens are counted by the tokenizer that billed the whole request (llm-core's estimate, as
//! [`crate::script::estimated_usage`] gives it, or the fake Anthropic service's own
//! [`crate::tokenizer`]), so that the parts stay within the whole.
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::{Duration, Instant};

use llm_core::cache_rules::{
    LOOKBACK_BLOCKS, OPENAI_BREAKPOINT_TTL, min_cacheable_tokens, openai_breakpoints,
};
use llm_core::types::MAX_CACHE_MARKS;
use llm_core::{CacheTtl, Clock, Request, SystemClock, Usage};

/// A cached prefix: when it was last used and how long it lives after that.
#[derive(Debug, Clone, Copy)]
struct Entry {
    seen: Instant,
    ttl: Duration,
}

/// The prefixes seen, by a hash of their content, with when each was last used.
#[derive(Debug)]
pub struct PromptCache {
    clock: Arc<dyn Clock>,
    entries: HashMap<u64, Entry>,
}

impl Default for PromptCache {
    fn default() -> Self {
        Self::new(Arc::new(SystemClock))
    }
}

/// Where a prefix of a request ends, in the order the provider reads a request.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PrefixEnd {
    Tools,
    System,
    Message(usize),
}

/// One place a prefix of the request could end: where, the hash of what precedes it, and how
/// many content blocks it spans from the start.
struct Boundary {
    end: PrefixEnd,
    hash: u64,
    blocks: usize,
}

impl PromptCache {
    /// A cache whose lifetimes are measured by `clock`.
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
            .filter(|entry| now.duration_since(entry.seen) < entry.ttl)
            .count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Splits `usage`'s input for `request` into uncached, written and read tokens, and
    /// remembers the request's prefixes. A request without breakpoints or a cache key is left
    /// as it is.
    pub fn apply(&mut self, request: &Request, usage: &mut Usage) {
        self.apply_counted(request, usage, llm_core::tokens::estimate_request, false);
    }

    /// [`PromptCache::apply`] with prefixes measured by `count`, the tokenizer that billed
    /// the whole request; `openai`: the request came through OpenAI's API, whose automatic
    /// prefix cache takes it keyed or not (the key only routes).
    pub fn apply_counted(
        &mut self,
        request: &Request,
        usage: &mut Usage,
        count: fn(&Request) -> u64,
        openai: bool,
    ) {
        let Some(rules) = Rules::of(request, openai) else {
            return;
        };
        let now = self.clock.now();
        self.entries
            .retain(|_, entry| now.duration_since(entry.seen) < entry.ttl);
        let min = min_cacheable_tokens(&request.model);
        let boundaries = boundaries(request);
        let marks = breakpoints(request, &boundaries, rules);
        let total = usage.total_input();
        let found = self.longest_cached(&boundaries, &marks, rules != Rules::Anthropic);
        let read = found
            .map(|b| count(&b.end.of(request)))
            .filter(|&tokens| tokens >= min)
            .unwrap_or(0)
            .min(total);
        let last = marks
            .last()
            .map(|&i| count(&boundaries[i].end.of(request)))
            .filter(|&tokens| tokens >= min)
            .unwrap_or(0);
        let write = if rules == Rules::OpenAiAutomatic {
            0
        } else {
            last.saturating_sub(read).min(total - read)
        };
        let ttl = request.cache.ttl;
        let lifetime = match rules {
            Rules::OpenAiBreakpoints => OPENAI_BREAKPOINT_TTL,
            _ => ttl.duration(),
        };
        *usage = Usage {
            input_tokens: total - read - write,
            cache_read_input_tokens: read,
            cache_creation_input_tokens: write,
            cache_creation_1h_input_tokens: if ttl == CacheTtl::OneHour && rules == Rules::Anthropic
            {
                write
            } else {
                0
            },
            ..*usage
        };
        if let Some(found) = found
            && let Some(entry) = self.entries.get_mut(&found.hash)
        {
            entry.seen = now;
        }
        if last > 0 {
            for &i in &marks {
                let entry = self.entries.entry(boundaries[i].hash).or_insert(Entry {
                    seen: now,
                    ttl: lifetime,
                });
                // A prefix already cached keeps the lifetime it was written with: a longer one
                // is a write, billed, not a free upgrade.
                entry.seen = now;
            }
        }
    }

    /// The longest cached prefix a request can read: one that ends at a mark or before it,
    /// at most [`LOOKBACK_BLOCKS`] blocks before it unless `unlimited` (OpenAI's rules).
    fn longest_cached<'a>(
        &self,
        boundaries: &'a [Boundary],
        marks: &[usize],
        unlimited: bool,
    ) -> Option<&'a Boundary> {
        marks
            .iter()
            .flat_map(|&mark| {
                let reach = boundaries[mark].blocks;
                boundaries[..=mark]
                    .iter()
                    .rev()
                    .take_while(move |b| unlimited || reach - b.blocks <= LOOKBACK_BLOCKS)
            })
            .filter(|b| self.entries.contains_key(&b.hash))
            .max_by_key(|b| b.blocks)
    }
}

/// Which provider's cache rules bill a request.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rules {
    /// Breakpoints the request marks, a 20-block lookback, paid writes.
    Anthropic,
    /// No marks, a cache key: every message boundary, free writes (OpenAI before GPT-5.6).
    OpenAiAutomatic,
    /// GPT-5.6 and later: one implicit breakpoint at the end, paid writes, 30 minutes.
    OpenAiBreakpoints,
}

impl Rules {
    /// The rules `request` is billed by; `None` when nothing of it is cached (no mark, no
    /// automatic caching, no cache key, not through OpenAI's API, and not a GPT-5.6 model,
    /// which always caches).
    fn of(request: &Request, openai: bool) -> Option<Rules> {
        let cache = &request.cache;
        if openai_breakpoints(&request.model) {
            Some(Rules::OpenAiBreakpoints)
        } else if !cache.is_empty() || cache.automatic {
            Some(Rules::Anthropic)
        } else if openai || request.cache_key.is_some() {
            Some(Rules::OpenAiAutomatic)
        } else {
            None
        }
    }
}

/// The breakpoints of `request` under `rules`, as positions in `boundaries`, in order.
///
/// - Anthropic: its marks (at most four), and with automatic caching the last block too (the
///   automatic one takes one of the four).
/// - OpenAI before GPT-5.6: every message boundary.
/// - GPT-5.6: its explicit marks, and the implicit breakpoint at the end unless the request
///   has marks and is not automatic (`prompt_cache_options.mode: explicit`); at most four
///   written, the implicit one and the latest three explicit ones.
fn breakpoints(request: &Request, boundaries: &[Boundary], rules: Rules) -> Vec<usize> {
    let cache = &request.cache;
    let end = boundaries.len().checked_sub(1);
    let (mut marks, automatic) = match rules {
        Rules::OpenAiAutomatic => return marked(request, boundaries, true),
        Rules::Anthropic => (marked(request, boundaries, false), cache.automatic),
        Rules::OpenAiBreakpoints => (
            marked(request, boundaries, false),
            cache.is_empty() || cache.automatic,
        ),
    };
    let room = MAX_CACHE_MARKS - usize::from(automatic);
    if marks.len() > room {
        marks.drain(..marks.len() - room);
    }
    if automatic && let Some(end) = end {
        marks.push(end);
    }
    marks.sort_unstable();
    marks.dedup();
    marks
}

/// Every place a prefix of `request` can end, in order, each with the hash of its content.
fn boundaries(request: &Request) -> Vec<Boundary> {
    let mut hasher = DefaultHasher::new();
    // The model is part of what a cache entry is for.
    request.model.hash(&mut hasher);
    let mut out = Vec::new();
    let mut blocks = 0;
    let mut push = |hasher: &DefaultHasher, end: PrefixEnd, blocks: usize| {
        out.push(Boundary {
            end,
            hash: hasher.finish(),
            blocks,
        });
    };
    serde_json::to_string(&request.tools)
        .unwrap_or_default()
        .hash(&mut hasher);
    blocks += request.tools.len();
    if !request.tools.is_empty() {
        push(&hasher, PrefixEnd::Tools, blocks);
    }
    serde_json::to_string(&request.system)
        .unwrap_or_default()
        .hash(&mut hasher);
    if request.system.is_some() {
        blocks += 1;
        push(&hasher, PrefixEnd::System, blocks);
    }
    for (i, message) in request.messages.iter().enumerate() {
        serde_json::to_string(message)
            .unwrap_or_default()
            .hash(&mut hasher);
        blocks += message.content.len().max(1);
        push(&hasher, PrefixEnd::Message(i), blocks);
    }
    out
}

/// The boundaries a request marks (every message's, when the cache is automatic), as
/// positions in `boundaries`, in order.
fn marked(request: &Request, boundaries: &[Boundary], automatic: bool) -> Vec<usize> {
    let marks = request.cache.limited(MAX_CACHE_MARKS);
    (0..boundaries.len())
        .filter(|&i| match boundaries[i].end {
            PrefixEnd::Tools => !automatic && marks.tools,
            PrefixEnd::System => !automatic && marks.system,
            PrefixEnd::Message(m) => automatic || marks.messages.contains(&m),
        })
        .collect()
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
