//! The provider-neutral LLM conversation: what every caller builds and reads, with no async
//! runtime, no HTTP and no tokenizer, so that crates which only reason about a conversation
//! (governance's rules, context's producers) can name its types without compiling a client.
//! llm-core re-exports all of it as `llm_core::types` and at its root.
//!
//! These types derive serde because they cross boundaries: `merkle llm complete --request`
//! reads a [`Request`] from JSON, `--json` prints a [`Response`], and the simulator records
//! both. Their JSON shape is ours (close to Anthropic's), not any provider's wire format; the
//! providers translate in their own modules.
//!
//! [`schema`] checks an answer against a response schema (the strict subset providers accept).
//! llm-core's `structured.rs` reads a structured answer back from either provider's form and
//! checks it there.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::AddAssign;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod schema;

pub use schema::ResponseSchema;

/// One call to a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Request {
    /// Model name as the provider spells it. Empty means the client's default model.
    pub model: String,
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub tools: Vec<Tool>,
    pub tool_choice: Option<ToolChoice>,
    /// Extended thinking; `None` leaves it off. Only Anthropic takes a token budget; for
    /// OpenAI reasoning models set `reasoning_effort` through `extra`.
    pub thinking: Option<Thinking>,
    /// Upper bound on output tokens; 0 means the client's default (4096).
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub stop_sequences: Vec<String>,
    /// Free-form metadata. The key `user_id` is sent as Anthropic's `metadata.user_id` and as
    /// OpenAI's `user`; other keys stay local (for logs and recordings), since providers
    /// reject metadata they do not know. Use `extra` to send provider fields.
    pub metadata: BTreeMap<String, String>,
    /// Provider-specific top-level fields merged into the wire body last, so they may add or
    /// override anything (e.g. an `allowed_tools` tool choice, `reasoning_effort`, `top_k`).
    /// This keeps provider features expressible without widening the common types.
    pub extra: BTreeMap<String, Value>,
    /// Where the provider may cache the prompt's prefix (Anthropic's `cache_control`
    /// breakpoints, at most [`MAX_CACHE_MARKS`] sent); none by default.
    #[serde(skip_serializing_if = "CacheMarks::is_empty")]
    pub cache: CacheMarks,
    /// A key that stays the same for requests sharing a prefix, such as one conversation's
    /// (OpenAI's `prompt_cache_key`, which routes them to the same cache).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_key: Option<String>,
    /// The JSON Schema the answer must follow (structured outputs): OpenAI's strict
    /// `response_format`, Anthropic's forced tool; check the answer with [`schema::validate`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<ResponseSchema>,
    /// The processing tier to ask for (OpenAI's `service_tier`); `None` sends none, and the
    /// provider uses its default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<ServiceTier>,
}

/// A processing tier: OpenAI's Flex answers synchronously at batch prices, more slowly, and
/// refuses with 429 "resource unavailable" (unbilled) when its capacity is short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ServiceTier {
    Default,
    Flex,
}

impl ServiceTier {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ServiceTier::Default => "default",
            ServiceTier::Flex => "flex",
        }
    }

    /// The tier a wire name means, if it is one of these.
    pub fn parse(name: &str) -> Option<ServiceTier> {
        match name {
            "default" => Some(ServiceTier::Default),
            "flex" => Some(ServiceTier::Flex),
            _ => None,
        }
    }
}

/// The most cache breakpoints one request may carry (Anthropic's limit).
pub const MAX_CACHE_MARKS: usize = 4;

/// Cache breakpoints of a request, each the end of a prefix a provider may cache and read
/// back: after the tools, after the system prompt, after the message at an index. The prefix
/// runs in the order the provider reads a request: tools, system, messages.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheMarks {
    pub tools: bool,
    pub system: bool,
    /// Indexes into [`Request::messages`], ascending.
    pub messages: Vec<usize>,
    /// How long what the marks write stays cached.
    #[serde(skip_serializing_if = "CacheTtl::is_default")]
    pub ttl: CacheTtl,
    /// Let the provider also place a breakpoint of its own at the end of the request, moving
    /// it forward as a conversation grows: Anthropic's automatic caching (a top-level
    /// `cache_control`, which takes one of the four breakpoints), OpenAI GPT-5.6's implicit
    /// breakpoint. GPT-5.6 places that one unless told not to; merkle tells it not to
    /// (`prompt_cache_options.mode: explicit`) when the request has marks and this is false,
    /// so a request's unshared tail (a file to summarize) is not written at 1.25x.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub automatic: bool,
}

/// How long a cache write lives after its last use: five minutes (the default, Anthropic's
/// 1.25x write) or an hour (`ttl: "1h"`, a 2x write) for prefixes read again after a pause a
/// person takes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheTtl {
    #[default]
    FiveMinutes,
    OneHour,
}

impl CacheTtl {
    pub fn is_default(&self) -> bool {
        *self == CacheTtl::FiveMinutes
    }

    /// The lifetime.
    pub fn duration(self) -> std::time::Duration {
        match self {
            CacheTtl::FiveMinutes => std::time::Duration::from_secs(5 * 60),
            CacheTtl::OneHour => std::time::Duration::from_secs(60 * 60),
        }
    }
}

impl CacheMarks {
    /// No mark of the caller's ([`CacheMarks::automatic`] aside).
    pub fn is_empty(&self) -> bool {
        !self.tools && !self.system && self.messages.is_empty()
    }

    /// How many breakpoints there are.
    pub fn len(&self) -> usize {
        usize::from(self.tools) + usize::from(self.system) + self.messages.len()
    }

    /// At most `max` of the marks (`automatic` untouched), the latest kept: a later breakpoint's prefix holds every
    /// earlier one's, so the earliest (the tools, then the system prompt, then the oldest
    /// messages) are the ones to drop. Message marks are sorted and deduplicated.
    pub fn limited(&self, max: usize) -> CacheMarks {
        let mut messages = self.messages.clone();
        messages.sort_unstable();
        messages.dedup();
        let mut out = CacheMarks {
            tools: self.tools,
            system: self.system,
            messages,
            ttl: self.ttl,
            automatic: self.automatic,
        };
        while out.len() > max {
            if out.tools {
                out.tools = false;
            } else if out.system {
                out.system = false;
            } else {
                out.messages.remove(0);
            }
        }
        out
    }
}

impl Request {
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            model: model.into(),
            ..Self::default()
        }
    }

    /// Appends a user message holding one text block.
    pub fn user(mut self, text: impl Into<String>) -> Self {
        self.messages.push(Message::user(text));
        self
    }

    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.system = Some(text.into());
        self
    }

    pub fn max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    pub fn user(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: vec![ContentBlock::text(text)],
        }
    }

    pub fn assistant(text: impl Into<String>) -> Self {
        Self {
            role: Role::Assistant,
            content: vec![ContentBlock::text(text)],
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Image {
        source: ImageSource,
    },
    ToolUse(ToolCall),
    ToolResult {
        tool_use_id: String,
        content: String,
        #[serde(default)]
        is_error: bool,
    },
    /// Model reasoning. The signature must be passed back unchanged with the next request.
    Thinking {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    /// Reasoning the provider encrypted; passed back unchanged like a signature.
    RedactedThinking {
        data: String,
    },
}

impl ContentBlock {
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSource {
    Base64 { media_type: String, data: String },
    Url { url: String },
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// JSON schema of the tool's input object.
    pub input_schema: Value,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolChoice {
    /// The model decides whether to call a tool.
    Auto,
    /// The model must call some tool (OpenAI: `required`).
    Any,
    /// The model must not call a tool.
    None,
    /// The model must call this tool.
    Tool { name: String },
}

/// Extended thinking with a budget of reasoning tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thinking {
    pub budget_tokens: u32,
}

/// A tool call the model made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum StopReason {
    #[default]
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    Refusal,
    PauseTurn,
    Other(String),
}

impl StopReason {
    /// Reads Anthropic's spelling, which is also ours.
    pub fn parse(value: &str) -> Self {
        match value {
            "end_turn" => Self::EndTurn,
            "tool_use" => Self::ToolUse,
            "max_tokens" => Self::MaxTokens,
            "stop_sequence" => Self::StopSequence,
            "refusal" => Self::Refusal,
            "pause_turn" => Self::PauseTurn,
            other => Self::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::EndTurn => "end_turn",
            Self::ToolUse => "tool_use",
            Self::MaxTokens => "max_tokens",
            Self::StopSequence => "stop_sequence",
            Self::Refusal => "refusal",
            Self::PauseTurn => "pause_turn",
            Self::Other(other) => other,
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<String> for StopReason {
    fn from(value: String) -> Self {
        Self::parse(&value)
    }
}

impl From<StopReason> for String {
    fn from(value: StopReason) -> Self {
        value.as_str().to_owned()
    }
}

/// Token counts of one response, or summed over many.
///
/// `input_tokens` counts only uncached input, as Anthropic does; OpenAI's `prompt_tokens`
/// includes cached tokens, so the OpenAI provider subtracts them. `reasoning_tokens` is a
/// part of `output_tokens`, not an addition to it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
    pub reasoning_tokens: u64,
    /// The part of `cache_creation_input_tokens` written with a one-hour lifetime (Anthropic's
    /// `ttl: "1h"`), which bills at twice the input price rather than 1.25 times.
    #[serde(skip_serializing_if = "is_zero")]
    pub cache_creation_1h_input_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    /// Every input token: uncached, written to the cache and read from it.
    pub fn total_input(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }

    pub fn total(&self) -> u64 {
        self.input_tokens
            + self.cache_creation_input_tokens
            + self.cache_read_input_tokens
            + self.output_tokens
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, rhs: Self) {
        self.input_tokens += rhs.input_tokens;
        self.output_tokens += rhs.output_tokens;
        self.cache_creation_input_tokens += rhs.cache_creation_input_tokens;
        self.cache_read_input_tokens += rhs.cache_read_input_tokens;
        self.reasoning_tokens += rhs.reasoning_tokens;
        self.cache_creation_1h_input_tokens += rhs.cache_creation_1h_input_tokens;
    }
}

/// A model's complete answer, the same whether it came from `complete` or a collected stream.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Response {
    /// The answer's blocks in the order the model produced them: thinking, text and tool
    /// calls. [`Response::into_message`] passes them back unchanged.
    pub content: Vec<ContentBlock>,
    pub stop_reason: StopReason,
    pub usage: Usage,
    pub model: String,
    /// The provider's id for this message (`msg_...`, `chatcmpl-...`).
    pub id: Option<String>,
    /// The provider's id for the HTTP request (`request-id` / `x-request-id`), for support.
    pub request_id: Option<String>,
    /// Response headers of interest: rate-limit state, request ids, retry hints.
    pub headers: BTreeMap<String, String>,
    /// The tier that processed the call, as the provider reports it (`default`, `flex`):
    /// what it bills at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
}

impl Response {
    /// All text blocks, concatenated.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    pub fn tool_calls(&self) -> Vec<&ToolCall> {
        self.content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::ToolUse(call) => Some(call),
                _ => None,
            })
            .collect()
    }

    /// All thinking text, concatenated; signatures stay in [`Response::content`].
    pub fn thinking(&self) -> Option<String> {
        let mut out: Option<String> = None;
        for block in &self.content {
            if let ContentBlock::Thinking { text, .. } = block {
                out.get_or_insert_with(String::new).push_str(text);
            }
        }
        out
    }

    /// The assistant message to append to the conversation for the next request.
    pub fn into_message(self) -> Message {
        Message {
            role: Role::Assistant,
            content: self.content,
        }
    }
}
