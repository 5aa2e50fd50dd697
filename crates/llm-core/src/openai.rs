//! OpenAI chat completions, and through a base URL every server that speaks it: Ollama,
//! vLLM, LM Studio. Their quirks are absorbed here: tool-call deltas without id or index,
//! tool calls ended with `finish_reason: "stop"`, usage-only final chunks with null choices.
//! The same client speaks the Responses API instead when configured so
//! ([`OpenAiApi::Responses`], in [`responses`]).

mod batch;
mod breakpoints;
mod count;
pub mod responses;
mod stream;

pub(crate) use self::stream::OpenAiStream;

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value};

use self::responses::{OpenAiApi, ResponsesStream};
use crate::client::{LlmClient, UsageStats};
use crate::clock::Rng;
use crate::count::{CountCache, TokenCount};
use crate::error::{Error, Result};
use crate::http::{
    HttpConfig, Outgoing, Transport, body_excerpt, classify_status, event_stream,
    headers_of_interest, merge_extra,
};
use crate::key::ApiKey;
use crate::retry::RetryHints;
use crate::stream::EventStream;
use crate::stream::parse_arguments;
use crate::types::{
    ContentBlock, ImageSource, Message, Request, Response, Role, StopReason, ToolCall, ToolChoice,
    Usage,
};
use crate::wire::openai::{
    ChatCompletion, ChatMessage, ChatRequest, ChatTool, ChatToolChoice, ChatUsage, ContentPart,
    FunctionCall, FunctionDefinition, ImageUrl, JsonSchemaFormat, ResponseFormat, StreamOptions,
    TextOrBlocks, ToolCall as WireToolCall,
};

pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// Which body field carries the output limit: OpenAI's current models take only
/// `max_completion_tokens`; many compatible servers know only `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxTokensField {
    MaxTokens,
    MaxCompletionTokens,
}

#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// Names the provider in errors: `"openai"`, `"ollama"`, ...
    pub name: &'static str,
    /// Sent as a bearer token when present; local servers usually need none.
    pub api_key: Option<ApiKey>,
    /// Up to and including the version segment, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    pub default_model: Option<String>,
    pub max_tokens_field: MaxTokensField,
    /// Chat completions, or the Responses API.
    pub api: OpenAiApi,
    pub http: HttpConfig,
}

impl OpenAiConfig {
    pub fn openai(api_key: ApiKey) -> Self {
        Self {
            name: "openai",
            api_key: Some(api_key),
            base_url: OPENAI_BASE_URL.to_owned(),
            default_model: None,
            max_tokens_field: MaxTokensField::MaxCompletionTokens,
            api: OpenAiApi::default(),
            http: HttpConfig::default(),
        }
    }

    pub fn compatible(base_url: impl Into<String>, api_key: Option<ApiKey>) -> Self {
        Self {
            name: "openai_compatible",
            api_key,
            base_url: base_url.into(),
            default_model: None,
            max_tokens_field: MaxTokensField::MaxTokens,
            api: OpenAiApi::default(),
            http: HttpConfig::default(),
        }
    }
}

pub struct OpenAiClient {
    pub(crate) name: &'static str,
    /// `<base>/chat/completions`; the batch and file APIs live beside it.
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    default_model: Option<String>,
    max_tokens_field: MaxTokensField,
    api: OpenAiApi,
    pub(crate) transport: Transport,
    /// The provider's counts of requests already counted.
    pub(crate) counted: CountCache,
}

impl std::fmt::Debug for OpenAiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers hold the key; show neither.
        f.debug_struct("OpenAiClient")
            .field("name", &self.name)
            .field("url", &self.url)
            .field("default_model", &self.default_model)
            .field("api", &self.api)
            .finish_non_exhaustive()
    }
}

impl OpenAiClient {
    pub fn new(config: OpenAiConfig) -> Result<Self> {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if let Some(key) = &config.api_key {
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", key.expose())).map_err(|_| {
                    Error::Config {
                        details: format!(
                            "the {} api key holds characters not allowed in a header",
                            config.name
                        ),
                    }
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let path = match config.api {
            OpenAiApi::ChatCompletions => "chat/completions",
            OpenAiApi::Responses => "responses",
        };
        Ok(Self {
            name: config.name,
            url: format!("{}/{path}", config.base_url.trim_end_matches('/')),
            headers,
            default_model: config.default_model,
            max_tokens_field: config.max_tokens_field,
            api: config.api,
            transport: Transport::new(config.name, config.http)?,
            counted: CountCache::default(),
        })
    }

    fn outgoing(&self, request: &Request, stream: bool) -> Result<Outgoing<'_>> {
        let body = self.request_body(request, stream)?;
        Ok(Outgoing {
            method: reqwest::Method::POST,
            url: &self.url,
            headers: self.headers.clone(),
            body: Bytes::from(body.to_string()),
            estimated_tokens: self.transport.token_estimate(|| self.count_tokens(request)),
            classify,
        })
    }

    pub(crate) fn request_body(&self, request: &Request, stream: bool) -> Result<Value> {
        let model = match (request.model.as_str(), self.default_model.as_deref()) {
            ("", Some(model)) => model,
            ("", None) => {
                return Err(Error::Config {
                    details: format!(
                        "the request names no model and the {} client has no default",
                        self.name
                    ),
                });
            }
            (model, _) => model,
        };
        if self.api == OpenAiApi::Responses {
            return self::responses::request_body(request, model, stream);
        }
        let mut messages = Vec::new();
        if let Some(system) = &request.system {
            messages.push(ChatMessage::System {
                content: TextOrBlocks::Text(system.clone()),
            });
        }
        let mut ends = Vec::with_capacity(request.messages.len());
        for message in &request.messages {
            let before = messages.len();
            wire_messages(message, &mut messages);
            ends.push((messages.len() > before).then(|| messages.len() - 1));
        }
        let max_tokens = match request.max_tokens {
            0 => DEFAULT_MAX_TOKENS,
            n => n,
        };
        let (max_tokens, max_completion_tokens) = match self.max_tokens_field {
            MaxTokensField::MaxTokens => (Some(max_tokens), None),
            MaxTokensField::MaxCompletionTokens => (None, Some(max_tokens)),
        };
        let body = ChatRequest {
            model: model.to_owned(),
            messages,
            max_tokens,
            max_completion_tokens,
            tools: request
                .tools
                .iter()
                .map(|tool| ChatTool {
                    kind: "function".to_owned(),
                    function: FunctionDefinition {
                        name: tool.name.clone(),
                        description: Some(tool.description.clone()),
                        parameters: Some(tool.input_schema.clone()),
                    },
                })
                .collect(),
            tool_choice: request.tool_choice.as_ref().map(|choice| match choice {
                ToolChoice::Auto => ChatToolChoice::Auto,
                ToolChoice::Any => ChatToolChoice::Required,
                ToolChoice::None => ChatToolChoice::None,
                ToolChoice::Tool { name } => ChatToolChoice::Function { name: name.clone() },
            }),
            temperature: request.temperature,
            top_p: request.top_p,
            stop: request.stop_sequences.clone(),
            user: request.metadata.get("user_id").cloned(),
            response_format: request.response_schema.as_ref().map(|schema| {
                ResponseFormat::JsonSchema {
                    json_schema: JsonSchemaFormat {
                        name: schema.name.clone(),
                        schema: schema.schema.clone(),
                        strict: Some(true),
                    },
                }
            }),
            // OpenAI caches prefixes by itself; a stable key keeps a conversation on one cache.
            prompt_cache_key: request.cache_key.clone(),
            service_tier: request.service_tier.map(|tier| tier.as_str().to_owned()),
            stream,
            stream_options: stream.then_some(StreamOptions {
                include_usage: true,
            }),
        };
        // Through a `Value`, whose keys serde_json keeps sorted, so the bytes sent do not
        // depend on the order of the struct's fields; `extra` then overrides any of them.
        let mut body = serde_json::to_value(&body).map_err(|err| Error::Config {
            details: format!(
                "the {} request for model {model:?} does not encode: {err}",
                self.name
            ),
        })?;
        let places = breakpoints::Places {
            list: "messages",
            system: request.system.as_ref().map(|_| 0),
            ends: &ends,
            text_type: |_| "text",
        };
        breakpoints::mark(&mut body, request, model, &places);
        if let Value::Object(body) = &mut body {
            merge_extra(body, &request.extra);
        }
        Ok(body)
    }

    async fn complete_inner(&self, request: &Request) -> Result<Response> {
        let outgoing = self.outgoing(request, false)?;
        let (response, started) = self.transport.send(&outgoing).await?;
        let headers = headers_of_interest(response.headers());
        let body = self
            .transport
            .read_body(response, &self.url, started)
            .await?;
        let rng = &*self.transport.config.rng;
        let response = match self.api {
            OpenAiApi::ChatCompletions => parse_response(self.name, &body, headers, rng),
            OpenAiApi::Responses => self::responses::parse_response(self.name, &body, headers, rng),
        }?;
        let model = self.model_of(request);
        // A model counted by its published tokenizer needs no calibration.
        if crate::tokens::Encoding::for_model(model).is_none() {
            self.transport.calibrate(model, request, &response);
        }
        Ok(response)
    }
}

impl LlmClient for OpenAiClient {
    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response>> {
        Box::pin(self.transport.recorded(self.complete_inner(request)))
    }

    fn stream<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<EventStream>> {
        Box::pin(async move {
            let (response, started) = self
                .transport
                .open_stream(self.outgoing(request, true))
                .await?;
            let headers = headers_of_interest(response.headers());
            let rng = Arc::clone(&self.transport.config.rng);
            Ok(match self.api {
                OpenAiApi::ChatCompletions => {
                    let parser = OpenAiStream::new(self.name, headers, rng);
                    event_stream(&self.transport, response, parser, started)
                }
                OpenAiApi::Responses => {
                    let parser = ResponsesStream::new(self.name, headers, rng);
                    event_stream(&self.transport, response, parser, started)
                }
            })
        })
    }

    fn usage_stats(&self) -> UsageStats {
        self.transport.stats.snapshot()
    }

    fn reset_usage_stats(&self) {
        self.transport.stats.reset();
    }

    /// Exact for OpenAI models (see [`crate::tokens::count_request`]), estimated (and
    /// calibrated) for the models of compatible servers.
    fn count_tokens(&self, request: &Request) -> u64 {
        self.local_count(request).tokens
    }

    fn count_offline(&self, request: &Request) -> TokenCount {
        self.local_count(request)
    }

    fn count_input<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<TokenCount>> {
        Box::pin(self.count_input_inner(request))
    }

    /// OpenAI's Batch API; a compatible server answers for itself whether it has one.
    fn batches(&self) -> Option<&dyn crate::batch::BatchApi> {
        Some(self)
    }
}

/// Appends the chat messages for one of ours: tool results become `tool` messages, which
/// must directly follow the assistant message that called the tools.
fn wire_messages(message: &Message, out: &mut Vec<ChatMessage>) {
    match message.role {
        Role::User => {
            let mut parts = Vec::new();
            let mut text_only = true;
            for block in &message.content {
                match block {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } => {
                        out.push(ChatMessage::Tool {
                            tool_call_id: tool_use_id.clone(),
                            content: TextOrBlocks::Text(tool_output(content, *is_error)),
                        });
                    }
                    ContentBlock::Text { text } => {
                        parts.push(ContentPart::Text { text: text.clone() });
                    }
                    ContentBlock::Image { source } => {
                        text_only = false;
                        parts.push(ContentPart::ImageUrl {
                            image_url: ImageUrl {
                                url: image_url(source),
                                detail: None,
                            },
                        });
                    }
                    // Reasoning and tool calls are the assistant's; a user message has none.
                    _ => {}
                }
            }
            if parts.is_empty() {
                return;
            }
            let content = if text_only {
                TextOrBlocks::Text(
                    parts
                        .iter()
                        .filter_map(|part| match part {
                            ContentPart::Text { text } => Some(text.as_str()),
                            _ => None,
                        })
                        .collect::<Vec<_>>()
                        .join("\n"),
                )
            } else {
                TextOrBlocks::Blocks(parts)
            };
            out.push(ChatMessage::User { content });
        }
        Role::Assistant => {
            let mut text = String::new();
            let mut tool_calls = Vec::new();
            for block in &message.content {
                match block {
                    ContentBlock::Text { text: part } => text.push_str(part),
                    ContentBlock::ToolUse(call) => tool_calls.push(WireToolCall {
                        id: Some(call.id.clone()),
                        kind: "function".to_owned(),
                        function: FunctionCall {
                            name: call.name.clone(),
                            arguments: Value::String(call.input.to_string()),
                        },
                    }),
                    // Chat completions take no reasoning back.
                    _ => {}
                }
            }
            let content = if text.is_empty() && !tool_calls.is_empty() {
                None
            } else {
                Some(TextOrBlocks::Text(text))
            };
            out.push(ChatMessage::Assistant {
                content,
                tool_calls,
            });
        }
    }
}

/// A tool result's text as both OpenAI APIs take it: they have no error flag, so an error
/// says so in the text.
pub(crate) fn tool_output(content: &str, is_error: bool) -> String {
    if is_error {
        format!("error: {content}")
    } else {
        content.to_owned()
    }
}

/// An image as both OpenAI APIs take it: its URL, or its data as a `data:` URL.
pub(crate) fn image_url(source: &ImageSource) -> String {
    match source {
        ImageSource::Base64 { media_type, data } => format!("data:{media_type};base64,{data}"),
        ImageSource::Url { url } => url.clone(),
    }
}

/// Our usage for the wire's: `prompt_tokens` counts cached tokens too, ours does not.
fn to_usage(usage: &ChatUsage) -> Usage {
    let details = usage.prompt_tokens_details.unwrap_or_default();
    let cached = details.cached_tokens.unwrap_or(0);
    let written = details.cache_write_tokens.unwrap_or(0);
    Usage {
        input_tokens: usage.prompt_tokens.saturating_sub(cached + written),
        output_tokens: usage.completion_tokens,
        cache_creation_input_tokens: written,
        cache_creation_1h_input_tokens: 0,
        cache_read_input_tokens: cached,
        reasoning_tokens: usage
            .completion_tokens_details
            .and_then(|details| details.reasoning_tokens)
            .unwrap_or(0),
    }
}

/// Our stop reason for a `finish_reason`; servers that end tool calls with "stop" still
/// mean tool use.
fn stop_reason(finish_reason: Option<&str>, has_tool_calls: bool, refused: bool) -> StopReason {
    if refused {
        return StopReason::Refusal;
    }
    match finish_reason {
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        _ if has_tool_calls => StopReason::ToolUse,
        None | Some("stop") => StopReason::EndTurn,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::Refusal,
        Some(other) => StopReason::Other(other.to_owned()),
    }
}

pub(crate) fn mint_id(rng: &dyn Rng) -> String {
    format!("call_{:016x}", rng.next_u64())
}

pub(crate) fn parse_response(
    provider: &'static str,
    body: &[u8],
    headers: BTreeMap<String, String>,
    rng: &dyn Rng,
) -> Result<Response> {
    let completion: ChatCompletion = serde_json::from_slice(body).map_err(|err| {
        Error::invalid_response(
            provider,
            format!(
                "body is not a chat completion ({err}): {}",
                body_excerpt(&String::from_utf8_lossy(body))
            ),
        )
    })?;
    let choice = completion
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| Error::invalid_response(provider, "the completion has no choices"))?;
    let message = choice.message;
    let mut content = Vec::new();
    if let Some(reasoning) = message.reasoning_content.filter(|text| !text.is_empty()) {
        content.push(ContentBlock::Thinking {
            text: reasoning,
            signature: None,
        });
    }
    let refused = message.refusal.is_some();
    if let Some(text) = message
        .content
        .or(message.refusal)
        .filter(|text| !text.is_empty())
    {
        content.push(ContentBlock::Text { text });
    }
    let tool_calls = message.tool_calls;
    let has_tool_calls = !tool_calls.is_empty();
    for call in tool_calls {
        let id = call
            .id
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| mint_id(rng));
        let input = match call.function.arguments {
            Value::String(arguments) => parse_arguments(&id, &call.function.name, &arguments)?,
            Value::Null => Value::Object(Map::new()),
            object => object,
        };
        content.push(ContentBlock::ToolUse(ToolCall {
            id,
            name: call.function.name,
            input,
        }));
    }
    Ok(Response {
        content,
        stop_reason: stop_reason(choice.finish_reason.as_deref(), has_tool_calls, refused),
        usage: completion.usage.as_ref().map(to_usage).unwrap_or_default(),
        model: completion.model.unwrap_or_default(),
        id: completion.id,
        request_id: headers.get("x-request-id").cloned(),
        headers,
        service_tier: completion.service_tier,
    })
}

/// The error object OpenAI sends, and the flatter ones of some compatible servers.
#[derive(Deserialize, Default)]
pub(crate) struct WireError {
    #[serde(default)]
    pub(crate) message: String,
    #[serde(rename = "type", default)]
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) code: Option<Value>,
}

impl WireError {
    /// Reads `{"error": {...}}`, `{"error": "text"}` or a bare `{"message": ...}`.
    fn from_body(body: &Value) -> Option<Self> {
        match &body["error"] {
            Value::Object(_) => WireError::deserialize(&body["error"]).ok(),
            Value::String(message) => Some(WireError {
                message: message.clone(),
                ..WireError::default()
            }),
            _ if body["message"].is_string() => WireError::deserialize(body).ok(),
            _ => None,
        }
    }

    fn code(&self) -> &str {
        self.code
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or_default()
    }
}

pub(crate) fn classify(
    provider: &'static str,
    status: u16,
    body: &str,
    hints: &RetryHints,
) -> Error {
    let parsed = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|body| WireError::from_body(&body));
    match parsed {
        Some(error) => typed_error(provider, Some(status), error, hints),
        None => classify_status(provider, status, body_excerpt(body), hints),
    }
}

/// The error an error object means; `status` is `None` for one that arrived mid-stream.
pub(crate) fn typed_error(
    provider: &'static str,
    status: Option<u16>,
    error: WireError,
    hints: &RetryHints,
) -> Error {
    let code = error.code().to_owned();
    let kind = error.kind.clone().unwrap_or_default();
    let message = error.message;
    let lower = message.to_ascii_lowercase();
    if code == "insufficient_quota" || kind == "insufficient_quota" {
        return Error::QuotaExhausted { provider, message };
    }
    if code == "resource_unavailable"
        || kind == "resource_unavailable"
        || lower.starts_with("resource unavailable")
    {
        return Error::CapacityUnavailable { provider, message };
    }
    if code == "context_length_exceeded"
        || lower.contains("maximum context length")
        || lower.contains("context length exceeded")
    {
        return Error::ContextWindowExceeded { provider, message };
    }
    match status {
        Some(status) => classify_status(provider, status, message, hints),
        None => match (code.as_str(), kind.as_str()) {
            ("rate_limit_exceeded", _) | (_, "rate_limit_exceeded") => Error::RateLimited {
                provider,
                retry_after: None,
                message,
            },
            (_, "server_error") => Error::Server {
                provider,
                status: 500,
                message,
            },
            _ => Error::StreamInterrupted {
                provider,
                details: format!("the server sent an error: {message}"),
            },
        },
    }
}
