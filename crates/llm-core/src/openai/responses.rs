//! The OpenAI Responses API (`POST /v1/responses`), the second mode of [`OpenAiClient`]
//! ([`OpenAiApi::Responses`]): a [`Request`] as input items, and the response object and its
//! stream of named events read back into our types.
//!
//! Requests are stateless (`store: false`): the whole conversation goes out each turn, as it
//! does with chat completions, and what the API would otherwise keep on its side travels in
//! our content blocks:
//!
//! - A reasoning item becomes a [`ContentBlock::Thinking`] whose text is its summary (parts
//!   joined by a blank line) and whose signature is [`ReasoningItem::signature`], the item's
//!   id and encrypted content as a small JSON object. A thinking block signed that way goes
//!   back as the same reasoning item on the next request; any other (Anthropic's, the
//!   unsigned reasoning of a compatible server) is left out, since the API cannot read it.
//! - Encrypted reasoning is asked for (`include: ["reasoning.encrypted_content"]`) only when
//!   the request asks for reasoning ([`Request::thinking`], which also asks for a summary, or
//!   a `reasoning` field in [`Request::extra`]): models that do not reason refuse that
//!   include. A reasoning item that came without encrypted content cannot be referenced while
//!   `store` is false, so it is not sent back.
//! - A `function_call` item becomes a [`ContentBlock::ToolUse`] under its `call_id`, and a
//!   tool result goes back as a `function_call_output` (an error's output starts with
//!   `error: `: the API has no error flag).
//!
//! The Responses API takes no stop sequences; a request with some is refused before sending.
//!
//! [`OpenAiClient`]: crate::OpenAiClient

mod stream;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{WireError, mint_id, typed_error};
use crate::clock::Rng;
use crate::error::{Error, Result};
use crate::http::{body_excerpt, merge_extra};
use crate::retry::RetryHints;
use crate::stream::parse_arguments;
use crate::types::{
    ContentBlock, ImageSource, Message, Request, Response, Role, StopReason, ToolCall, ToolChoice,
    Usage,
};

pub(crate) use self::stream::ResponsesStream;

const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Which OpenAI API a client speaks. Stored with an agent's provider settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum OpenAiApi {
    /// `POST /chat/completions`: OpenAI and every compatible server.
    #[default]
    #[serde(rename = "chat", alias = "chat_completions")]
    ChatCompletions,
    /// `POST /responses`, with reasoning carried between turns.
    #[serde(rename = "responses")]
    Responses,
}

impl OpenAiApi {
    /// Reads `chat` (or `chat_completions`) and `responses`.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "chat" | "chat_completions" | "chat-completions" => Ok(Self::ChatCompletions),
            "responses" => Ok(Self::Responses),
            other => Err(Error::Config {
                details: format!("unknown openai api {other:?}: expected chat or responses"),
            }),
        }
    }

    /// The name [`OpenAiApi::parse`] reads and stored settings hold.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ChatCompletions => "chat",
            Self::Responses => "responses",
        }
    }

    /// The default, which stored settings leave out.
    pub fn is_chat(&self) -> bool {
        *self == Self::ChatCompletions
    }
}

/// A reasoning item's identity, kept as the signature of the thinking block it becomes so
/// that the next request can send the item back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReasoningItem {
    pub id: String,
    /// The reasoning itself, encrypted by the provider; without it the item cannot be sent
    /// back to a server that stores nothing.
    pub encrypted_content: Option<String>,
}

impl ReasoningItem {
    /// `{"type":"reasoning","id":...,"encrypted_content":...}`: a JSON object, so it is never
    /// mistaken for another provider's signature (Anthropic's are base64).
    pub fn signature(&self) -> String {
        let mut signature = json!({"type": "reasoning", "id": self.id});
        if let Some(content) = &self.encrypted_content {
            signature["encrypted_content"] = json!(content);
        }
        signature.to_string()
    }

    /// The item a signature made by [`ReasoningItem::signature`] names; `None` for any other.
    pub fn from_signature(signature: &str) -> Option<Self> {
        if !signature.starts_with('{') {
            return None;
        }
        let value: Value = serde_json::from_str(signature).ok()?;
        if value["type"] != "reasoning" {
            return None;
        }
        Some(Self {
            id: value["id"].as_str()?.to_owned(),
            encrypted_content: value["encrypted_content"].as_str().map(str::to_owned),
        })
    }
}

/// The Responses API body for `request`, whose model the caller has resolved.
pub(crate) fn request_body(request: &Request, model: &str, stream: bool) -> Result<Value> {
    if !request.stop_sequences.is_empty() {
        return Err(Error::Config {
            details: format!(
                "stop sequences {:?}: the openai responses api takes none (the chat api does)",
                request.stop_sequences
            ),
        });
    }
    let mut input = Vec::new();
    for message in &request.messages {
        input_items(message, &mut input);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    if let Some(system) = &request.system {
        body.insert("instructions".into(), json!(system));
    }
    body.insert("input".into(), Value::Array(input));
    let max_tokens = match request.max_tokens {
        0 => DEFAULT_MAX_TOKENS,
        n => n,
    };
    body.insert("max_output_tokens".into(), json!(max_tokens));
    body.insert("store".into(), json!(false));
    if !request.tools.is_empty() {
        // Strict schemas are the API's default here, not chat's; a tool's schema is sent as
        // chat sends it, so the same tools work in both modes.
        let tools = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.input_schema,
                    "strict": false,
                })
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(choice) = &request.tool_choice {
        let choice = match choice {
            ToolChoice::Auto => json!("auto"),
            ToolChoice::Any => json!("required"),
            ToolChoice::None => json!("none"),
            ToolChoice::Tool { name } => json!({"type": "function", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = request.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if let Some(user_id) = request.metadata.get("user_id") {
        body.insert("user".into(), json!(user_id));
    }
    if let Some(schema) = &request.response_schema {
        body.insert(
            "text".into(),
            json!({"format": {
                "type": "json_schema", "name": schema.name, "schema": schema.schema, "strict": true,
            }}),
        );
    }
    if let Some(key) = &request.cache_key {
        body.insert("prompt_cache_key".into(), json!(key));
    }
    if request.thinking.is_some() {
        body.insert("reasoning".into(), json!({"summary": "auto"}));
    }
    if request.thinking.is_some() || request.extra.contains_key("reasoning") {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    merge_extra(&mut body, &request.extra);
    Ok(Value::Object(body))
}

/// Appends the input items for one of our messages. A user message's tool results come
/// first, as `function_call_output` items right after the calls they answer; an assistant
/// message keeps its order of reasoning, text and calls.
fn input_items(message: &Message, out: &mut Vec<Value>) {
    match message.role {
        Role::User => {
            let mut parts = Vec::new();
            for block in &message.content {
                match block {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => {
                        let output = if *is_error {
                            format!("error: {content}")
                        } else {
                            content.clone()
                        };
                        out.push(json!({
                            "type": "function_call_output", "call_id": tool_use_id, "output": output,
                        }));
                    }
                    ContentBlock::Text { text } => {
                        parts.push(json!({"type": "input_text", "text": text}));
                    }
                    ContentBlock::Image { source } => {
                        let url = match source {
                            ImageSource::Base64 { media_type, data } => {
                                format!("data:{media_type};base64,{data}")
                            }
                            ImageSource::Url { url } => url.clone(),
                        };
                        parts.push(
                            json!({"type": "input_image", "image_url": url, "detail": "auto"}),
                        );
                    }
                    // Reasoning and tool calls are the assistant's; a user message has none.
                    _ => {}
                }
            }
            if !parts.is_empty() {
                out.push(json!({"type": "message", "role": "user", "content": parts}));
            }
        }
        Role::Assistant => {
            let mut text = String::new();
            for block in &message.content {
                let item = match block {
                    ContentBlock::Text { text: part } => {
                        text.push_str(part);
                        continue;
                    }
                    ContentBlock::Thinking {
                        text: summary,
                        signature: Some(signature),
                    } => ReasoningItem::from_signature(signature)
                        .and_then(|item| Some((item.id, item.encrypted_content?)))
                        .map(|(id, encrypted)| {
                            let summary: Vec<Value> = [summary]
                                .into_iter()
                                .filter(|text| !text.is_empty())
                                .map(|text| json!({"type": "summary_text", "text": text}))
                                .collect();
                            json!({
                                "type": "reasoning", "id": id, "summary": summary,
                                "encrypted_content": encrypted,
                            })
                        }),
                    ContentBlock::ToolUse(call) => Some(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.input.to_string(),
                    })),
                    _ => None,
                };
                if let Some(item) = item {
                    flush_text(&mut text, out);
                    out.push(item);
                }
            }
            flush_text(&mut text, out);
        }
    }
}

/// The assistant's text so far as one message item, if there is any.
fn flush_text(text: &mut String, out: &mut Vec<Value>) {
    if !text.is_empty() {
        let text = std::mem::take(text);
        out.push(json!({
            "type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }));
    }
}

#[derive(Deserialize, Default)]
struct WireResponse {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    output: Vec<WireItem>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    incomplete_details: Option<WireIncomplete>,
    #[serde(default)]
    error: Option<WireFailure>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireItem {
    Message {
        #[serde(default)]
        content: Vec<WirePart>,
    },
    FunctionCall {
        #[serde(default)]
        call_id: String,
        #[serde(default)]
        name: String,
        /// A JSON string per the spec; some servers send the object itself.
        #[serde(default)]
        arguments: Value,
    },
    Reasoning {
        #[serde(default)]
        id: String,
        #[serde(default)]
        summary: Vec<WireSummary>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    /// Built-in tools' items (web search, code interpreter, ...): nothing we model.
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart {
    OutputText {
        #[serde(default)]
        text: String,
    },
    Refusal {
        #[serde(default)]
        refusal: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct WireSummary {
    #[serde(default)]
    text: String,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    input_tokens_details: Option<WireInputDetails>,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    output_tokens_details: Option<WireOutputDetails>,
}

#[derive(Deserialize)]
struct WireInputDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireOutputDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct WireIncomplete {
    #[serde(default)]
    reason: Option<String>,
}

/// A failed response's `error`, and the body of an `error` event.
#[derive(Deserialize, Default)]
struct WireFailure {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    message: String,
}

impl WireUsage {
    /// Ours counts cached input apart from `input_tokens`; OpenAI's includes it.
    fn to_usage(&self) -> Usage {
        let cached = self
            .input_tokens_details
            .as_ref()
            .and_then(|details| details.cached_tokens)
            .unwrap_or(0);
        Usage {
            input_tokens: self.input_tokens.saturating_sub(cached),
            output_tokens: self.output_tokens,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: cached,
            reasoning_tokens: self
                .output_tokens_details
                .as_ref()
                .and_then(|details| details.reasoning_tokens)
                .unwrap_or(0),
        }
    }
}

impl WireResponse {
    fn stop_reason(&self, has_tool_calls: bool, refused: bool) -> StopReason {
        if refused {
            return StopReason::Refusal;
        }
        let incomplete = self
            .incomplete_details
            .as_ref()
            .and_then(|details| details.reason.as_deref());
        match self.status.as_deref() {
            Some("incomplete") => match incomplete {
                Some("max_output_tokens") => StopReason::MaxTokens,
                Some("content_filter") => StopReason::Refusal,
                other => StopReason::Other(other.unwrap_or("incomplete").to_owned()),
            },
            None | Some("completed") if has_tool_calls => StopReason::ToolUse,
            None | Some("completed") => StopReason::EndTurn,
            Some(other) => StopReason::Other(other.to_owned()),
        }
    }

    fn usage(&self) -> Usage {
        self.usage
            .as_ref()
            .map(WireUsage::to_usage)
            .unwrap_or_default()
    }
}

impl WireFailure {
    /// The error this failure means; the code doubles as the kind OpenAI's error objects
    /// carry, which is what [`typed_error`] reads.
    fn into_error(self, provider: &'static str) -> Error {
        let error = WireError {
            message: self.message,
            kind: self.code.clone(),
            code: self.code.map(Value::String),
        };
        typed_error(provider, None, error, &RetryHints::default())
    }
}

/// The thinking block a reasoning item becomes: none when it holds neither summary nor
/// encrypted content, since there is nothing to show or send back.
fn reasoning_block(
    id: String,
    summary: String,
    encrypted_content: Option<String>,
) -> Option<ContentBlock> {
    if summary.is_empty() && encrypted_content.is_none() {
        return None;
    }
    let item = ReasoningItem {
        id,
        encrypted_content,
    };
    Some(ContentBlock::Thinking {
        text: summary,
        signature: Some(item.signature()),
    })
}

/// A reasoning item's summary parts, joined by a blank line.
fn summary_text(summary: &[WireSummary]) -> String {
    summary
        .iter()
        .map(|part| part.text.as_str())
        .filter(|text| !text.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// Appends text, joining it to text just before it as a stream's deltas would be.
fn push_text(content: &mut Vec<ContentBlock>, text: String) {
    if text.is_empty() {
        return;
    }
    match content.last_mut() {
        Some(ContentBlock::Text { text: last }) => last.push_str(&text),
        _ => content.push(ContentBlock::Text { text }),
    }
}

fn tool_input(id: &str, name: &str, arguments: Value) -> Result<Value> {
    match arguments {
        Value::String(arguments) => parse_arguments(id, name, &arguments),
        Value::Null => Ok(Value::Object(Map::new())),
        object => Ok(object),
    }
}

pub(crate) fn parse_response(
    provider: &'static str,
    body: &[u8],
    headers: BTreeMap<String, String>,
    rng: &dyn Rng,
) -> Result<Response> {
    let wire: WireResponse = serde_json::from_slice(body).map_err(|err| {
        Error::invalid_response(
            provider,
            format!(
                "body is not a response object ({err}): {}",
                body_excerpt(&String::from_utf8_lossy(body))
            ),
        )
    })?;
    if wire.status.as_deref() == Some("failed") {
        return Err(wire.error.unwrap_or_default().into_error(provider));
    }
    let mut content = Vec::new();
    let (mut refused, mut has_tool_calls) = (false, false);
    for item in &wire.output {
        match item {
            WireItem::Message { content: parts } => {
                for part in parts {
                    match part {
                        WirePart::OutputText { text } => push_text(&mut content, text.clone()),
                        WirePart::Refusal { refusal } => {
                            refused = true;
                            push_text(&mut content, refusal.clone());
                        }
                        WirePart::Other => {}
                    }
                }
            }
            WireItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                has_tool_calls = true;
                let id = match call_id.as_str() {
                    "" => mint_id(rng),
                    id => id.to_owned(),
                };
                let input = tool_input(&id, name, arguments.clone())?;
                content.push(ContentBlock::ToolUse(ToolCall {
                    id,
                    name: name.clone(),
                    input,
                }));
            }
            WireItem::Reasoning {
                id,
                summary,
                encrypted_content,
            } => content.extend(reasoning_block(
                id.clone(),
                summary_text(summary),
                encrypted_content.clone(),
            )),
            WireItem::Other => {}
        }
    }
    Ok(Response {
        content,
        stop_reason: wire.stop_reason(has_tool_calls, refused),
        usage: wire.usage(),
        model: wire.model.unwrap_or_default(),
        id: wire.id,
        request_id: headers.get("x-request-id").cloned(),
        headers,
    })
}
