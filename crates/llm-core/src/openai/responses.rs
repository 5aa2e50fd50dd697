//! The OpenAI Responses API (`POST /v1/responses`), the second mode of [`OpenAiClient`]
//! ([`OpenAiApi::Responses`]): a [`Request`] as input items, and the response object and its
//! stream of named events read back into our types, all through the wire types of
//! [`crate::wire::responses`], which the fake server in `llm-sim` reads and writes too.
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

use super::{WireError, image_url, mint_id, tool_output, typed_error};
use crate::clock::Rng;
use crate::error::{Error, Result};
use crate::http::{body_excerpt, merge_extra};
use crate::retry::RetryHints;
use crate::stream::parse_arguments;
use crate::types::{
    ContentBlock, Message, Request, Response, Role, StopReason, ToolCall, ToolChoice, Usage,
};
use crate::wire::responses::{
    InputContent, InputItem, InputRole, OutputContent, OutputItem, ReasoningOptions, ResponseError,
    ResponseObject, ResponseUsage, ResponsesRequest, SummaryText, TextFormat, TextOptions,
    TextOrBlocks, ToolChoiceParam, ToolParam,
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
    // A marked system prompt goes first in the input, where a breakpoint can follow it
    // (`instructions` is a bare string), for the models that take breakpoints.
    let system_item = request
        .system
        .as_ref()
        .filter(|_| request.cache.system && crate::cache_rules::openai_breakpoints(model));
    let mut input = Vec::new();
    if let Some(system) = system_item {
        input.push(InputItem::Message {
            role: InputRole::Developer,
            content: TextOrBlocks::Text(system.clone()),
        });
    }
    let mut ends = Vec::with_capacity(request.messages.len());
    for message in &request.messages {
        let before = input.len();
        input_items(message, &mut input);
        ends.push((input.len() > before).then(|| input.len() - 1));
    }
    let max_tokens = match request.max_tokens {
        0 => DEFAULT_MAX_TOKENS,
        n => n,
    };
    // Models that do not reason refuse the include, so only a request for reasoning has it.
    let asks_reasoning = request.thinking.is_some() || request.extra.contains_key("reasoning");
    let body = ResponsesRequest {
        model: model.to_owned(),
        instructions: request.system.clone().filter(|_| system_item.is_none()),
        input: Some(TextOrBlocks::Blocks(input)),
        max_output_tokens: Some(max_tokens),
        store: Some(false),
        // Strict schemas are the API's default here, not chat's; a tool's schema is sent as
        // chat sends it, so the same tools work in both modes.
        tools: request
            .tools
            .iter()
            .map(|tool| ToolParam::Function {
                name: tool.name.clone(),
                description: Some(tool.description.clone()),
                parameters: Some(tool.input_schema.clone()),
                strict: Some(false),
            })
            .collect(),
        tool_choice: request.tool_choice.as_ref().map(|choice| match choice {
            ToolChoice::Auto => ToolChoiceParam::Auto,
            ToolChoice::Any => ToolChoiceParam::Required,
            ToolChoice::None => ToolChoiceParam::None,
            ToolChoice::Tool { name } => ToolChoiceParam::Function { name: name.clone() },
        }),
        temperature: request.temperature,
        top_p: request.top_p,
        user: request.metadata.get("user_id").cloned(),
        text: request.response_schema.as_ref().map(|schema| TextOptions {
            format: Some(TextFormat::JsonSchema {
                name: schema.name.clone(),
                schema: schema.schema.clone(),
                strict: Some(true),
                description: None,
            }),
        }),
        prompt_cache_key: request.cache_key.clone(),
        service_tier: request.service_tier.map(|tier| tier.as_str().to_owned()),
        reasoning: request.thinking.as_ref().map(|_| ReasoningOptions {
            effort: None,
            summary: Some("auto".to_owned()),
        }),
        include: if asks_reasoning {
            vec!["reasoning.encrypted_content".to_owned()]
        } else {
            Vec::new()
        },
        stream,
    };
    // Through a `Value`, whose keys serde_json keeps sorted, so the bytes sent do not depend
    // on the order of the struct's fields; `extra` then overrides any of them.
    let mut body = serde_json::to_value(&body).map_err(|err| Error::Config {
        details: format!("the responses request for model {model:?} does not encode: {err}"),
    })?;
    let places = super::breakpoints::Places {
        list: "input",
        system: system_item.map(|_| 0),
        ends: &ends,
        text_type: |item| match item["role"].as_str() {
            Some("assistant") => "output_text",
            _ => "input_text",
        },
    };
    super::breakpoints::mark(&mut body, request, model, &places);
    if let Value::Object(body) = &mut body {
        merge_extra(body, &request.extra);
    }
    Ok(body)
}

/// Appends the input items for one of our messages. A user message's tool results come
/// first, as `function_call_output` items right after the calls they answer; an assistant
/// message keeps its order of reasoning, text and calls.
fn input_items(message: &Message, out: &mut Vec<InputItem>) {
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
                        out.push(InputItem::FunctionCallOutput {
                            call_id: tool_use_id.clone(),
                            output: TextOrBlocks::Text(tool_output(content, *is_error)),
                        });
                    }
                    ContentBlock::Text { text } => {
                        parts.push(InputContent::InputText { text: text.clone() });
                    }
                    ContentBlock::Image { source } => {
                        parts.push(InputContent::InputImage {
                            image_url: Some(image_url(source)),
                            file_id: None,
                            detail: Some("auto".to_owned()),
                        });
                    }
                    // Reasoning and tool calls are the assistant's; a user message has none.
                    _ => {}
                }
            }
            if !parts.is_empty() {
                out.push(InputItem::Message {
                    role: InputRole::User,
                    content: TextOrBlocks::Blocks(parts),
                });
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
                        .map(|(id, encrypted)| InputItem::Reasoning {
                            id,
                            summary: [summary]
                                .into_iter()
                                .filter(|text| !text.is_empty())
                                .map(|text| SummaryText::new(text.as_str()))
                                .collect(),
                            encrypted_content: Some(encrypted),
                        }),
                    ContentBlock::ToolUse(call) => Some(InputItem::FunctionCall {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: call.input.to_string(),
                    }),
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
fn flush_text(text: &mut String, out: &mut Vec<InputItem>) {
    if !text.is_empty() {
        let text = std::mem::take(text);
        out.push(InputItem::Message {
            role: InputRole::Assistant,
            content: TextOrBlocks::Blocks(vec![InputContent::OutputText { text }]),
        });
    }
}

/// Ours counts cached input apart from `input_tokens`; OpenAI's includes it.
fn to_usage(usage: &ResponseUsage) -> Usage {
    let details = usage.input_tokens_details.unwrap_or_default();
    let cached = details.cached_tokens.unwrap_or(0);
    let written = details.cache_write_tokens.unwrap_or(0);
    Usage {
        input_tokens: usage.input_tokens.saturating_sub(cached + written),
        output_tokens: usage.output_tokens,
        cache_creation_input_tokens: written,
        cache_creation_1h_input_tokens: 0,
        cache_read_input_tokens: cached,
        reasoning_tokens: usage
            .output_tokens_details
            .and_then(|details| details.reasoning_tokens)
            .unwrap_or(0),
    }
}

/// The usage a response object reports, none when it has none.
fn usage(response: &ResponseObject) -> Usage {
    response.usage.as_ref().map(to_usage).unwrap_or_default()
}

/// Our stop reason for a finished response: its status, and why it is incomplete.
fn stop_reason(response: &ResponseObject, has_tool_calls: bool, refused: bool) -> StopReason {
    if refused {
        return StopReason::Refusal;
    }
    let incomplete = response
        .incomplete_details
        .as_ref()
        .and_then(|details| details.reason.as_deref());
    match response.status.as_deref() {
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

/// The error a failed response's `error` (or an `error` event) means; the code doubles as
/// the kind OpenAI's error objects carry, which is what [`typed_error`] reads.
fn failure_error(provider: &'static str, failure: ResponseError) -> Error {
    let error = WireError {
        message: failure.message,
        kind: failure.code.clone(),
        code: failure.code.map(Value::String),
    };
    typed_error(provider, None, error, &RetryHints::default())
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
fn summary_text(summary: &[SummaryText]) -> String {
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
    let response: ResponseObject = serde_json::from_slice(body).map_err(|err| {
        Error::invalid_response(
            provider,
            format!(
                "body is not a response object ({err}): {}",
                body_excerpt(&String::from_utf8_lossy(body))
            ),
        )
    })?;
    if response.status.as_deref() == Some("failed") {
        return Err(failure_error(provider, response.error.unwrap_or_default()));
    }
    let mut content = Vec::new();
    let (mut refused, mut has_tool_calls) = (false, false);
    for item in &response.output {
        match item {
            OutputItem::Message { content: parts, .. } => {
                for part in parts {
                    match part {
                        OutputContent::OutputText { text, .. } => {
                            push_text(&mut content, text.clone());
                        }
                        OutputContent::Refusal { refusal } => {
                            refused = true;
                            push_text(&mut content, refusal.clone());
                        }
                        OutputContent::Other => {}
                    }
                }
            }
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
                ..
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
            OutputItem::Reasoning {
                id,
                summary,
                encrypted_content,
            } => content.extend(reasoning_block(
                id.clone(),
                summary_text(summary),
                encrypted_content.clone(),
            )),
            OutputItem::Other => {}
        }
    }
    Ok(Response {
        content,
        stop_reason: stop_reason(&response, has_tool_calls, refused),
        usage: usage(&response),
        model: response.model.unwrap_or_default(),
        id: response.id,
        request_id: headers.get("x-request-id").cloned(),
        headers,
        service_tier: response.service_tier,
    })
}
