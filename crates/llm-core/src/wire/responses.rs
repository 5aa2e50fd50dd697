//! The OpenAI Responses API's JSON, as serde types: the request body with its input items,
//! the response object with its output items, and the named events of its stream.
//!
//! What a client sends and what a server answers are kept apart ([`InputItem`] and
//! [`OutputItem`], [`InputContent`] and [`OutputContent`]), as the API's reference keeps
//! them: they share names, but a request is read strictly (by the fake server: a field the
//! API requires is required), while a response is read leniently (by the client: any field
//! may be missing, `null` reads as absent, item, part and event types newer than this code
//! decode as `Other` or `Unknown`), since compatible servers answer with less than OpenAI.
//!
//! Fields only the fake server writes and no client reads (the settings a response echoes,
//! `object`, `created_at`, item ids and statuses, the text a `.done` event repeats) are not
//! decoded at all, so that a server sending odd values there is not refused for them.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

pub use super::TextOrBlocks;
use super::{ChoiceMode, nullable, tool_choice};

/// The body of `POST /responses`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponsesRequest {
    pub model: String,
    /// The system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// The conversation; a lone string is one user message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<TextOrBlocks<InputItem>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Whether the server keeps the response for later requests to refer to; a client that
    /// sends the whole conversation each turn sets it false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<bool>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "nullable"
    )]
    pub tools: Vec<ToolParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoiceParam>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_p: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// How the answer's text is shaped: a JSON schema for structured outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<TextOptions>,
    /// Keeps a conversation on one prefix cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key: Option<String>,
    /// `flex` for batch prices on a synchronous call; none: the default tier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_tier: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<ReasoningOptions>,
    /// Output the response leaves out unless asked, e.g. `reasoning.encrypted_content`.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "nullable"
    )]
    pub include: Vec<String>,
    #[serde(
        default,
        skip_serializing_if = "std::ops::Not::not",
        deserialize_with = "nullable"
    )]
    pub stream: bool,
}

/// The fields of a Responses body that `POST /v1/responses/input_tokens` takes (it counts the
/// input a response would read, so the answer's own settings are not among them).
pub const INPUT_TOKENS_FIELDS: [&str; 7] = [
    "model",
    "instructions",
    "input",
    "tools",
    "tool_choice",
    "text",
    "reasoning",
];

/// The answer to `POST /v1/responses/input_tokens`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputTokens {
    /// Always `response.input_tokens`.
    pub object: String,
    pub input_tokens: u64,
}

/// One item of a request's `input`. An item without a `type` is a message (the API's "easy
/// input message"); item references are not here, since a server that stores nothing
/// cannot resolve them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "type", rename_all = "snake_case")]
pub enum InputItem {
    Message {
        role: InputRole,
        content: TextOrBlocks<InputContent>,
    },
    /// A tool call the assistant made, sent back.
    FunctionCall {
        call_id: String,
        name: String,
        /// The arguments as a JSON string.
        arguments: String,
    },
    /// A tool's result, answering the call `call_id`.
    FunctionCallOutput {
        call_id: String,
        output: TextOrBlocks<InputContent>,
    },
    /// A reasoning item sent back: while `store` is false, the model can read it only
    /// through its encrypted content.
    Reasoning {
        id: String,
        summary: Vec<SummaryText>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
}

impl Serialize for InputItem {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The derived encoding (`remote = "Self"` makes it an inherent function).
        InputItem::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for InputItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut item = Map::<String, Value>::deserialize(deserializer)?;
        if item.get("type").is_none_or(Value::is_null) {
            item.insert("type".to_owned(), Value::from("message"));
        }
        InputItem::deserialize(Value::Object(item)).map_err(de::Error::custom)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputRole {
    User,
    Assistant,
    System,
    /// What reasoning models call the system prompt.
    Developer,
}

/// A part of an input message's content (or of a function call's output).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum InputContent {
    InputText {
        text: String,
    },
    /// An image by URL (inline as a `data:` URL) or by the id of an uploaded file.
    InputImage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        image_url: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        file_id: Option<String>,
        /// `auto`, `low` or `high`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    /// The text of an assistant message sent back.
    OutputText {
        text: String,
    },
    /// An assistant's refusal sent back.
    Refusal {
        refusal: String,
    },
    /// Files, audio and types newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// A part of a reasoning item's summary.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryText {
    #[serde(rename = "type", default)]
    pub kind: SummaryType,
    #[serde(default)]
    pub text: String,
}

impl SummaryText {
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            kind: SummaryType::SummaryText,
            text: text.into(),
        }
    }
}

/// The one `type` a summary part has.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryType {
    #[default]
    SummaryText,
}

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolParam {
    Function {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The JSON schema of the arguments; none means any object.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parameters: Option<Value>,
        /// Whether the arguments must follow the schema exactly (the API's default).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        strict: Option<bool>,
    },
    /// Built-in tools (web search, file search, ...) and types newer than this code.
    #[serde(other, skip_serializing)]
    Other,
}

/// `tool_choice`: a mode as a string, or `{"type": "function", "name": ...}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoiceParam {
    Auto,
    /// Some tool must be called.
    Required,
    None,
    Function {
        name: String,
    },
}

/// The object form of [`ToolChoiceParam`]; built-in tools' choices are not read.
#[derive(Serialize, Deserialize)]
struct NamedToolChoice {
    #[serde(rename = "type")]
    kind: FunctionType,
    name: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FunctionType {
    Function,
}

impl Serialize for ToolChoiceParam {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Auto => serializer.serialize_str("auto"),
            Self::Required => serializer.serialize_str("required"),
            Self::None => serializer.serialize_str("none"),
            Self::Function { name } => NamedToolChoice {
                kind: FunctionType::Function,
                name: name.clone(),
            }
            .serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ToolChoiceParam {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(match tool_choice::<_, NamedToolChoice>(deserializer)? {
            Ok(ChoiceMode::Auto) => Self::Auto,
            Ok(ChoiceMode::Required) => Self::Required,
            Ok(ChoiceMode::None) => Self::None,
            Err(named) => Self::Function { name: named.name },
        })
    }
}

/// `text`: the shape of the answer's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextOptions {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<TextFormat>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TextFormat {
    Text,
    JsonObject,
    /// Structured outputs; unlike chat completions, the schema's fields sit in the format
    /// itself.
    JsonSchema {
        name: String,
        schema: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        strict: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// Formats newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// `reasoning` in a request: each setting left out unless set.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasoningOptions {
    /// `minimal`, `low`, `medium` or `high`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// `auto`, `concise` or `detailed`: asks for reasoning summaries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

/// `reasoning` as a response object echoes it: both settings, `null` when unset.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EchoedReasoning {
    pub effort: Option<String>,
    pub summary: Option<String>,
}

/// The response object: whole, as `POST /responses` answers, or as a stream's lifecycle
/// events carry it (empty while in progress, whole at the end).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseObject {
    #[serde(default)]
    pub id: Option<String>,
    /// `response`.
    #[serde(skip_deserializing)]
    pub object: String,
    /// Unix seconds.
    #[serde(skip_deserializing)]
    pub created_at: u64,
    /// `in_progress`, `completed`, `incomplete`, `failed`, ...
    #[serde(default)]
    pub status: Option<String>,
    /// Why the response failed, when it did.
    #[serde(default)]
    pub error: Option<ResponseError>,
    /// Why the response stopped short, when it did.
    #[serde(default)]
    pub incomplete_details: Option<IncompleteDetails>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub output: Vec<OutputItem>,
    /// `null` until the response is done.
    #[serde(default)]
    pub usage: Option<ResponseUsage>,
    /// The tier that processed the call, which is what it bills at.
    #[serde(default, deserialize_with = "super::lenient_string")]
    pub service_tier: Option<String>,
    // The request's settings, echoed.
    #[serde(skip_deserializing)]
    pub instructions: Option<String>,
    #[serde(skip_deserializing)]
    pub max_output_tokens: Option<u32>,
    #[serde(skip_deserializing)]
    pub metadata: BTreeMap<String, String>,
    #[serde(skip_deserializing)]
    pub parallel_tool_calls: bool,
    #[serde(skip_deserializing)]
    pub previous_response_id: Option<String>,
    #[serde(skip_deserializing)]
    pub reasoning: EchoedReasoning,
    #[serde(skip_deserializing)]
    pub store: bool,
    #[serde(skip_deserializing)]
    pub temperature: f32,
    #[serde(skip_deserializing)]
    pub text: Option<TextOptions>,
    #[serde(skip_deserializing)]
    pub tool_choice: Option<ToolChoiceParam>,
    #[serde(skip_deserializing)]
    pub tools: Vec<ToolParam>,
    #[serde(skip_deserializing)]
    pub top_p: f32,
    /// `disabled` or `auto`.
    #[serde(skip_deserializing)]
    pub truncation: String,
}

/// One item of a response's `output`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputItem {
    /// The assistant's text (or refusal).
    Message {
        #[serde(skip_deserializing)]
        id: String,
        /// `in_progress` while streamed, then `completed`.
        #[serde(skip_deserializing)]
        status: String,
        /// `assistant`.
        #[serde(skip_deserializing)]
        role: String,
        #[serde(default, deserialize_with = "nullable")]
        content: Vec<OutputContent>,
    },
    FunctionCall {
        #[serde(skip_deserializing)]
        id: String,
        /// What the call's output answers to; some servers leave it out.
        #[serde(default)]
        call_id: String,
        #[serde(default)]
        name: String,
        /// A JSON string per the spec (empty while streamed); some servers send the object
        /// itself.
        #[serde(default)]
        arguments: Value,
        #[serde(skip_deserializing)]
        status: String,
    },
    Reasoning {
        #[serde(default)]
        id: String,
        #[serde(default, deserialize_with = "nullable")]
        summary: Vec<SummaryText>,
        /// Once the item is done, when the request included it.
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    /// Built-in tools' items (web search, code interpreter, ...) and types newer than this
    /// code.
    #[serde(other, skip_serializing)]
    Other,
}

/// A part of an output message's content.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutputContent {
    OutputText {
        #[serde(default)]
        text: String,
        #[serde(skip_deserializing)]
        annotations: Vec<Value>,
        #[serde(skip_deserializing)]
        logprobs: Vec<Value>,
    },
    /// What the model said instead of answering.
    Refusal {
        #[serde(default)]
        refusal: String,
    },
    /// Types newer than this code.
    #[default]
    #[serde(other, skip_serializing)]
    Other,
}

/// Token counts. `input_tokens` includes the cached ones, `output_tokens` the reasoning.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseUsage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens_details: Option<InputTokensDetails>,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens_details: Option<OutputTokensDetails>,
    #[serde(default)]
    pub total_tokens: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputTokensDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Tokens written to the prompt cache at an explicit breakpoint (GPT-5.6 and later); a
    /// part of `input_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputTokensDetails {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncompleteDetails {
    /// `max_output_tokens` or `content_filter`.
    #[serde(default)]
    pub reason: Option<String>,
}

/// A failed response's `error`, and what an `error` event says.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseError {
    /// `server_error`, `rate_limit_exceeded`, ...
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: String,
}

/// One event of a streamed response: its data, whose `type` is also the SSE event's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEvent {
    /// 0, 1, ... in the order the server sent the events.
    #[serde(default)]
    pub sequence_number: u64,
    #[serde(flatten)]
    pub event: ResponseEvent,
}

/// Where in the output an event about an item is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ItemAt {
    pub item_id: String,
    pub output_index: u64,
}

/// Where in the output an event about a message's content part is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ContentAt {
    pub item_id: String,
    pub output_index: u64,
    pub content_index: u64,
}

/// Where in the output an event about a reasoning summary's part is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SummaryAt {
    pub item_id: String,
    pub output_index: u64,
    pub summary_index: u64,
}

/// The events of a stream, by `type`: the response's lifecycle, each output item added and
/// done, and between those its parts and the deltas that build them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ResponseEvent {
    #[serde(rename = "response.created")]
    Created {
        #[serde(default)]
        response: ResponseObject,
    },
    #[serde(rename = "response.in_progress")]
    InProgress {
        #[serde(default)]
        response: ResponseObject,
    },
    /// The last event of a finished response, which it holds whole.
    #[serde(rename = "response.completed")]
    Completed { response: ResponseObject },
    /// The last event of a response cut short.
    #[serde(rename = "response.incomplete")]
    Incomplete { response: ResponseObject },
    #[serde(rename = "response.failed")]
    Failed {
        #[serde(default)]
        response: ResponseObject,
    },
    #[serde(rename = "response.output_item.added")]
    OutputItemAdded {
        #[serde(default)]
        output_index: u64,
        item: OutputItem,
    },
    #[serde(rename = "response.output_item.done")]
    OutputItemDone {
        #[serde(default)]
        output_index: u64,
        item: OutputItem,
    },
    #[serde(rename = "response.content_part.added")]
    ContentPartAdded {
        #[serde(flatten)]
        at: ContentAt,
        #[serde(skip_deserializing)]
        part: OutputContent,
    },
    #[serde(rename = "response.content_part.done")]
    ContentPartDone {
        #[serde(flatten)]
        at: ContentAt,
        #[serde(skip_deserializing)]
        part: OutputContent,
    },
    #[serde(rename = "response.output_text.delta")]
    OutputTextDelta {
        #[serde(flatten)]
        at: ContentAt,
        #[serde(default)]
        delta: String,
        #[serde(skip_deserializing)]
        logprobs: Vec<Value>,
    },
    #[serde(rename = "response.output_text.done")]
    OutputTextDone {
        #[serde(flatten)]
        at: ContentAt,
        #[serde(skip_deserializing)]
        text: String,
    },
    #[serde(rename = "response.refusal.delta")]
    RefusalDelta {
        #[serde(flatten)]
        at: ContentAt,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.refusal.done")]
    RefusalDone {
        #[serde(flatten)]
        at: ContentAt,
        #[serde(skip_deserializing)]
        refusal: String,
    },
    #[serde(rename = "response.reasoning_summary_part.added")]
    ReasoningSummaryPartAdded {
        #[serde(flatten)]
        at: SummaryAt,
        #[serde(skip_deserializing)]
        part: SummaryText,
    },
    #[serde(rename = "response.reasoning_summary_part.done")]
    ReasoningSummaryPartDone {
        #[serde(flatten)]
        at: SummaryAt,
        #[serde(skip_deserializing)]
        part: SummaryText,
    },
    #[serde(rename = "response.reasoning_summary_text.delta")]
    ReasoningSummaryTextDelta {
        #[serde(flatten)]
        at: SummaryAt,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.reasoning_summary_text.done")]
    ReasoningSummaryTextDone {
        #[serde(flatten)]
        at: SummaryAt,
        #[serde(skip_deserializing)]
        text: String,
    },
    #[serde(rename = "response.function_call_arguments.delta")]
    FunctionCallArgumentsDelta {
        #[serde(flatten)]
        at: ItemAt,
        #[serde(default)]
        delta: String,
    },
    #[serde(rename = "response.function_call_arguments.done")]
    FunctionCallArgumentsDone {
        #[serde(flatten)]
        at: ItemAt,
        #[serde(skip_deserializing)]
        arguments: String,
        #[serde(skip_deserializing)]
        name: String,
    },
    /// A failure after the HTTP 200; the stream ends with it. OpenAI puts the error's
    /// fields in the event itself, some servers in an `error` object.
    #[serde(rename = "error")]
    Error {
        #[serde(default)]
        code: Option<String>,
        #[serde(default)]
        message: String,
        #[serde(default)]
        param: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<ResponseError>,
    },
    /// Events newer than this code, and those that name no type.
    #[serde(other, skip_serializing)]
    Unknown,
}

impl ResponseEvent {
    /// The SSE `event:` name the API sends with this event: its `type`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Created { .. } => "response.created",
            Self::InProgress { .. } => "response.in_progress",
            Self::Completed { .. } => "response.completed",
            Self::Incomplete { .. } => "response.incomplete",
            Self::Failed { .. } => "response.failed",
            Self::OutputItemAdded { .. } => "response.output_item.added",
            Self::OutputItemDone { .. } => "response.output_item.done",
            Self::ContentPartAdded { .. } => "response.content_part.added",
            Self::ContentPartDone { .. } => "response.content_part.done",
            Self::OutputTextDelta { .. } => "response.output_text.delta",
            Self::OutputTextDone { .. } => "response.output_text.done",
            Self::RefusalDelta { .. } => "response.refusal.delta",
            Self::RefusalDone { .. } => "response.refusal.done",
            Self::ReasoningSummaryPartAdded { .. } => "response.reasoning_summary_part.added",
            Self::ReasoningSummaryPartDone { .. } => "response.reasoning_summary_part.done",
            Self::ReasoningSummaryTextDelta { .. } => "response.reasoning_summary_text.delta",
            Self::ReasoningSummaryTextDone { .. } => "response.reasoning_summary_text.done",
            Self::FunctionCallArgumentsDelta { .. } => "response.function_call_arguments.delta",
            Self::FunctionCallArgumentsDone { .. } => "response.function_call_arguments.done",
            Self::Error { .. } => "error",
            Self::Unknown => "unknown",
        }
    }
}
