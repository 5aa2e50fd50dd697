//! OpenAI chat completions' JSON, as serde types: the request body, the completion, its
//! stream chunks and the error body. Compatible servers (Ollama, vLLM, DeepSeek, LM Studio)
//! speak the same format with quirks, which decoding absorbs: unknown fields are ignored,
//! `null` reads as absent, reasoning comes as `reasoning_content` or `reasoning`, and tool
//! arguments may come as an object rather than a JSON string.
//!
//! Fields only the fake server writes and no client reads (`object`, `created`, ...) are not
//! decoded at all, so that a server sending odd values there is not refused for them; a
//! response's `service_tier` is read, but an odd value there reads as absent.

use serde::de::Deserializer;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

pub use super::TextOrBlocks;
use super::{ChoiceMode, lenient_string, nullable, one_or_many, tool_choice};

/// The body of `POST /chat/completions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// The older name of the limit, which compatible servers still expect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// OpenAI's name for the limit since reasoning models.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_completion_tokens: Option<u32>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "nullable"
    )]
    pub tools: Vec<ChatTool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ChatToolChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    /// A string or a list of strings.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "one_or_many"
    )]
    pub stop: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    /// Keeps a conversation on one prefix cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<String>,
    /// `flex` for batch prices on a synchronous call; none: the default tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "std::ops::Not::not",
        deserialize_with = "nullable"
    )]
    pub stream: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
}

/// One message of a request, by its `role`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum ChatMessage {
    System {
        content: TextOrBlocks<ContentPart>,
    },
    /// What reasoning models call the system prompt.
    Developer {
        content: TextOrBlocks<ContentPart>,
    },
    User {
        content: TextOrBlocks<ContentPart>,
    },
    Assistant {
        /// `null` when the message holds only tool calls.
        #[serde(default)]
        content: Option<TextOrBlocks<ContentPart>>,
        #[serde(
            default,
            skip_serializing_if = "Vec::is_empty",
            deserialize_with = "nullable"
        )]
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's result, answering the assistant's call `tool_call_id`.
    Tool {
        tool_call_id: String,
        content: TextOrBlocks<ContentPart>,
    },
}

/// A part of a message's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    Text {
        text: String,
    },
    /// An image by URL, or inline as a `data:` URL.
    ImageUrl {
        image_url: ImageUrl,
    },
    /// Audio, files and types newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageUrl {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// A tool call, in an assistant message of a request or of a completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Some compatible servers leave it out; the client then makes one up.
    #[serde(default)]
    pub id: Option<String>,
    /// Always `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionCall,
}

fn function_type() -> String {
    "function".to_owned()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    #[serde(default)]
    pub name: String,
    /// A JSON string per the spec; some servers send the object itself.
    #[serde(default)]
    pub arguments: Value,
}

/// A function the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatTool {
    /// Always `function`.
    #[serde(rename = "type", default = "function_type")]
    pub kind: String,
    pub function: FunctionDefinition,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionDefinition {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The JSON schema of the arguments; none means any object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameters: Option<Value>,
}

/// `tool_choice`: a mode as a string, or `{"type": "function", "function": {"name": ...}}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChatToolChoice {
    Auto,
    /// Some tool must be called.
    Required,
    None,
    Function {
        name: String,
    },
}

/// The object form of [`ChatToolChoice`].
#[derive(Serialize, Deserialize)]
struct NamedToolChoice {
    #[serde(rename = "type", default = "function_type")]
    kind: String,
    function: NamedFunction,
}

#[derive(Serialize, Deserialize)]
struct NamedFunction {
    name: String,
}

impl Serialize for ChatToolChoice {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Auto => serializer.serialize_str("auto"),
            Self::Required => serializer.serialize_str("required"),
            Self::None => serializer.serialize_str("none"),
            Self::Function { name } => NamedToolChoice {
                kind: function_type(),
                function: NamedFunction { name: name.clone() },
            }
            .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ChatToolChoice {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match tool_choice::<_, NamedToolChoice>(deserializer)? {
            Ok(ChoiceMode::Auto) => Self::Auto,
            Ok(ChoiceMode::Required) => Self::Required,
            Ok(ChoiceMode::None) => Self::None,
            Err(named) => Self::Function {
                name: named.function.name,
            },
        })
    }
}

/// How the answer must be shaped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseFormat {
    Text,
    JsonObject,
    JsonSchema {
        json_schema: JsonSchemaFormat,
    },
    /// Formats newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonSchemaFormat {
    pub name: String,
    pub schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StreamOptions {
    /// Asks for a last chunk that carries the usage.
    #[serde(default, deserialize_with = "nullable")]
    pub include_usage: bool,
}

/// A whole completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatCompletion {
    #[serde(default)]
    pub id: Option<String>,
    /// `chat.completion`.
    #[serde(skip_deserializing)]
    pub object: String,
    /// Unix seconds.
    #[serde(skip_deserializing)]
    pub created: u64,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub choices: Vec<Choice>,
    #[serde(default)]
    pub usage: Option<ChatUsage>,
    /// The tier that processed the call, which is what it bills at.
    #[serde(default, deserialize_with = "lenient_string")]
    pub service_tier: Option<String>,
    #[serde(skip_deserializing)]
    pub system_fingerprint: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    #[serde(skip_deserializing)]
    pub index: u32,
    pub message: ResponseMessage,
    #[serde(skip_deserializing)]
    pub logprobs: Option<Value>,
    /// `stop`, `length`, `tool_calls`, `content_filter`, or a server's own.
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// The assistant message of a completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseMessage {
    /// `assistant`.
    #[serde(skip_deserializing)]
    pub role: String,
    #[serde(default)]
    pub content: Option<String>,
    /// What the model said instead of answering, when it refused.
    #[serde(default)]
    pub refusal: Option<String>,
    #[serde(skip_deserializing)]
    pub annotations: Vec<Value>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "nullable"
    )]
    pub tool_calls: Vec<ToolCall>,
    /// DeepSeek and vLLM call it `reasoning_content`, Ollama and others `reasoning`; OpenAI's
    /// own models never show it.
    #[serde(default, alias = "reasoning", skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
}

/// Token counts. `prompt_tokens` includes the cached ones.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatUsage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub total_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_tokens_details: Option<PromptTokensDetails>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_tokens_details: Option<CompletionTokensDetails>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptTokensDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Tokens written to the prompt cache at an explicit breakpoint, billed above plain input
    /// (GPT-5.6 and later); a part of `prompt_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_tokens: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletionTokensDetails {
    /// A part of `completion_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audio_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accepted_prediction_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejected_prediction_tokens: Option<u64>,
}

/// One chunk of a streamed completion (the `data:` of an event; the stream ends with
/// `data: [DONE]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatChunk {
    #[serde(default)]
    pub id: Option<String>,
    /// `chat.completion.chunk`.
    #[serde(skip_deserializing)]
    pub object: String,
    #[serde(skip_deserializing)]
    pub created: u64,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default, deserialize_with = "lenient_string")]
    pub service_tier: Option<String>,
    #[serde(skip_deserializing)]
    pub system_fingerprint: Option<String>,
    /// Empty in the last chunk, which carries only the usage.
    #[serde(default, deserialize_with = "nullable")]
    pub choices: Vec<ChunkChoice>,
    /// Absent unless the request asked for usage; then `null` in every chunk but the last.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Option<ChatUsage>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChunkChoice {
    #[serde(skip_deserializing)]
    pub index: u32,
    #[serde(default)]
    pub delta: Option<Delta>,
    #[serde(skip_deserializing)]
    pub logprobs: Option<Value>,
    #[serde(default)]
    pub finish_reason: Option<String>,
}

/// What one chunk adds to the message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// `assistant`, in the first chunk only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Absent, or (in OpenAI's first chunk) `null`, or the refusal's text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Option<String>>,
    #[serde(default, alias = "reasoning", skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "nullable"
    )]
    pub tool_calls: Vec<ToolCallDelta>,
}

/// A piece of a tool call: the first carries its id and name, the rest argument text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallDelta {
    /// Which call this continues; some servers leave it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<FunctionDelta>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionDelta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<String>,
}

/// OpenAI's error body, `{"error": {...}}`, which also arrives as a stream's data. The
/// client reads the flatter shapes of some compatible servers too (`openai.rs`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub error: ErrorObject,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    #[serde(default)]
    pub message: String,
    /// `invalid_request_error`, `server_error`, `requests`, ...
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// The request field at fault, if any.
    #[serde(default)]
    pub param: Option<Value>,
    /// `rate_limit_exceeded`, `context_length_exceeded`, ...; a string, or a number on
    /// some servers.
    #[serde(default)]
    pub code: Option<Value>,
}
