//! The Anthropic Messages API's JSON, as serde types: the request body, the message it
//! answers with, its error body and its stream events.
//!
//! These types mirror the wire and nothing else; translating them to and from the
//! provider-neutral [`crate::types`] is the client's job (and the simulator's, which reads
//! requests and writes answers with these same types, so the two cannot drift apart).
//!
//! Decoding is lenient where the service is known to grow: unknown fields are ignored,
//! block, delta and event types newer than this code decode as an `Unknown` variant, and
//! `null` reads as an absent field. Encoding leaves out every optional field that is unset,
//! so a body holds exactly the fields a caller filled in.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::TextOrBlocks;
use super::{nullable, one_or_many};

/// The body of `POST /v1/messages`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesRequest {
    pub model: String,
    pub max_tokens: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<TextOrBlocks<TextBlockParam>>,
    pub messages: Vec<MessageParam>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "nullable"
    )]
    pub tools: Vec<ToolParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoiceParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<ThinkingParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// The API takes a list; a lone string is read as a list of one, as lenient servers do.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub stop_sequences: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// Automatic caching: the service places the breakpoint on the request's last cacheable
    /// block, moving forward as a conversation grows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
    #[serde(
        default,
        skip_serializing_if = "std::ops::Not::not",
        deserialize_with = "nullable"
    )]
    pub stream: bool,
}

/// The fields of a Messages body that `POST /v1/messages/count_tokens` takes: it counts the
/// input a message would read, and refuses the fields that shape only the answer
/// (`max_tokens`, `stream`, sampling, stop sequences, metadata).
pub const COUNT_TOKENS_FIELDS: [&str; 6] = [
    "model",
    "system",
    "messages",
    "tools",
    "tool_choice",
    "thinking",
];

/// The answer to `POST /v1/messages/count_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CountTokensResponse {
    pub input_tokens: u64,
}

/// A text block of a system prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextBlockParam {
    /// Always `text`; a body may leave it out.
    #[serde(rename = "type", default)]
    pub kind: TextType,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

/// The one `type` a system block may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextType {
    #[default]
    Text,
}

/// A cache breakpoint: the prompt up to and including the block that carries it is cached.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheControl {
    /// `ephemeral`, the only kind the API has.
    #[serde(rename = "type")]
    pub kind: String,
    /// `5m` (the default) or `1h`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
}

impl CacheControl {
    /// The default five-minute cache.
    pub fn ephemeral() -> Self {
        Self {
            kind: "ephemeral".to_owned(),
            ttl: None,
        }
    }

    /// A breakpoint whose write lives `ttl`; the five-minute default is not spelled out.
    pub fn with_ttl(ttl: crate::types::CacheTtl) -> Self {
        Self {
            ttl: (ttl == crate::types::CacheTtl::OneHour).then(|| "1h".to_owned()),
            ..Self::ephemeral()
        }
    }

    /// The lifetime this breakpoint asks for.
    pub fn lifetime(&self) -> crate::types::CacheTtl {
        match self.ttl.as_deref() {
            Some("1h") => crate::types::CacheTtl::OneHour,
            _ => crate::types::CacheTtl::FiveMinutes,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageParam {
    pub role: RoleParam,
    pub content: TextOrBlocks<ContentBlockParam>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoleParam {
    User,
    Assistant,
}

/// A block of a request's message: what the block is, and the breakpoint any block type
/// may carry (kept apart so that blocks this code does not know still count as marked).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContentBlockParam {
    #[serde(flatten)]
    pub block: BlockParam,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

impl From<BlockParam> for ContentBlockParam {
    fn from(block: BlockParam) -> Self {
        Self {
            block,
            cache_control: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockParam {
    Text {
        text: String,
    },
    Image {
        source: ImageSourceParam,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        /// A string, or blocks (text, images, documents) of which a text reader takes the text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<TextOrBlocks<ContentBlockParam>>,
        #[serde(
            default,
            skip_serializing_if = "std::ops::Not::not",
            deserialize_with = "nullable"
        )]
        is_error: bool,
    },
    Thinking {
        thinking: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    /// Documents, search results, server tool blocks and types newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ImageSourceParam {
    Base64 { media_type: String, data: String },
    Url { url: String },
}

/// A tool: a custom one has an `input_schema`; a server tool (web search, code execution)
/// has a `type` and no schema, since the service runs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolParam {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control: Option<CacheControl>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolChoiceParam {
    Auto,
    Any,
    None,
    Tool { name: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ThinkingParam {
    Enabled {
        budget_tokens: u32,
    },
    Disabled,
    /// Modes newer than this code (`adaptive`), which leave the budget to the service.
    #[serde(other, skip_serializing)]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_id: Option<String>,
}

/// A message the API answers with, whole or (empty, at `message_start`) in a stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessagesResponse {
    #[serde(default)]
    pub id: Option<String>,
    /// Always `message`.
    #[serde(rename = "type", default = "message_type")]
    pub kind: String,
    /// Always `assistant`.
    #[serde(default = "assistant_role")]
    pub role: String,
    #[serde(default)]
    pub model: String,
    #[serde(default, deserialize_with = "nullable")]
    pub content: Vec<ResponseBlock>,
    /// `null` until the message is done (at `message_start`).
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<WireUsage>,
}

fn message_type() -> String {
    "message".to_owned()
}

fn assistant_role() -> String {
    "assistant".to_owned()
}

/// A block of an answer, whole or as a stream's `content_block_start` announces it (with
/// empty text, to be filled by deltas). Fields default to empty, as a stream's start may
/// leave them out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    ToolUse {
        #[serde(default)]
        id: String,
        #[serde(default)]
        name: String,
        /// The arguments; a string when they were not JSON.
        #[serde(default)]
        input: Value,
    },
    /// Server tools, their results and block types newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// Token counts. A stream's `message_delta` repeats only some, so each may be absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireUsage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read_input_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// `cache_creation_input_tokens` by lifetime.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation: Option<CacheCreation>,
}

/// The cache writes of a message by lifetime: five minutes and one hour.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheCreation {
    #[serde(default)]
    pub ephemeral_5m_input_tokens: u64,
    #[serde(default)]
    pub ephemeral_1h_input_tokens: u64,
}

/// The body of a failed call: `{"type": "error", "error": {"type": ..., "message": ...}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// Always `error`.
    #[serde(rename = "type", default = "error_type")]
    pub kind: String,
    pub error: ErrorObject,
}

fn error_type() -> String {
    "error".to_owned()
}

impl ErrorBody {
    pub fn new(kind: &str, message: &str) -> Self {
        Self {
            kind: error_type(),
            error: ErrorObject {
                kind: kind.to_owned(),
                message: message.to_owned(),
            },
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// `overloaded_error`, `rate_limit_error`, `invalid_request_error`, ...
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub message: String,
}

/// One server-sent event's data; its `type` is also the SSE event name ([`Self::name`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    MessageStart {
        message: MessagesResponse,
    },
    ContentBlockStart {
        index: u64,
        content_block: ResponseBlock,
    },
    ContentBlockDelta {
        index: u64,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: u64,
    },
    MessageDelta {
        delta: MessageDelta,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<WireUsage>,
    },
    MessageStop,
    /// Keeps the connection alive.
    Ping,
    /// A failure after the HTTP 200; the stream ends with it.
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ErrorObject>,
    },
    /// Events newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

impl StreamEvent {
    /// The SSE `event:` name the API sends with this event.
    pub fn name(&self) -> &'static str {
        match self {
            Self::MessageStart { .. } => "message_start",
            Self::ContentBlockStart { .. } => "content_block_start",
            Self::ContentBlockDelta { .. } => "content_block_delta",
            Self::ContentBlockStop { .. } => "content_block_stop",
            Self::MessageDelta { .. } => "message_delta",
            Self::MessageStop => "message_stop",
            Self::Ping => "ping",
            Self::Error { .. } => "error",
            Self::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockDelta {
    TextDelta {
        #[serde(default)]
        text: String,
    },
    /// A fragment of a tool call's JSON arguments.
    InputJsonDelta {
        #[serde(default)]
        partial_json: String,
    },
    ThinkingDelta {
        #[serde(default)]
        thinking: String,
    },
    /// Closes a thinking block.
    SignatureDelta {
        #[serde(default)]
        signature: String,
    },
    /// Citations and delta types newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// What `message_delta` changes: why the message stopped. Both fields are sent, `null` or
/// not.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageDelta {
    #[serde(default)]
    pub stop_reason: Option<String>,
    #[serde(default)]
    pub stop_sequence: Option<String>,
}
