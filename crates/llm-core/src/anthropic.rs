//! The Anthropic Messages API: building its requests, reading its answers and its SSE stream.

mod batch;

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::client::{LlmClient, StatsCell, UsageStats};
use crate::error::{Error, Result};
use crate::http::{
    HttpConfig, Outgoing, StreamParser, Transport, body_excerpt, classify_status, event_stream,
    headers_of_interest, merge_extra,
};
use crate::key::ApiKey;
use crate::retry::RetryHints;
use crate::sse::SseEvent;
use crate::stream::{Event, EventStream, parse_arguments};
use crate::types::{
    ContentBlock, ImageSource, MAX_CACHE_MARKS, Message, Request, Response, Role, StopReason,
    ToolCall, ToolChoice, Usage,
};

const PROVIDER: &str = "anthropic";
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
const DEFAULT_MAX_TOKENS: u32 = 4096;

#[derive(Debug, Clone)]
pub struct AnthropicConfig {
    pub api_key: ApiKey,
    /// Scheme and host, without `/v1`.
    pub base_url: String,
    /// Sent as `anthropic-version`.
    pub version: String,
    /// Beta features, sent as `anthropic-beta` (e.g. `interleaved-thinking-2025-05-14`).
    pub beta: Vec<String>,
    /// Used when a request names no model.
    pub default_model: Option<String>,
    pub http: HttpConfig,
}

impl AnthropicConfig {
    pub fn new(api_key: ApiKey) -> Self {
        Self {
            api_key,
            base_url: ANTHROPIC_BASE_URL.to_owned(),
            version: ANTHROPIC_VERSION.to_owned(),
            beta: Vec::new(),
            default_model: None,
            http: HttpConfig::default(),
        }
    }
}

pub struct AnthropicClient {
    /// `<base>/v1/messages`; the batch API lives under it (`/batches`).
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    pub(crate) default_model: Option<String>,
    pub(crate) transport: Transport,
}

impl std::fmt::Debug for AnthropicClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The headers hold the key; show neither.
        f.debug_struct("AnthropicClient")
            .field("url", &self.url)
            .field("default_model", &self.default_model)
            .finish_non_exhaustive()
    }
}

impl AnthropicClient {
    pub fn new(config: AnthropicConfig) -> Result<Self> {
        let mut key =
            HeaderValue::from_str(config.api_key.expose()).map_err(|_| Error::Config {
                details: "the anthropic api key holds characters not allowed in a header"
                    .to_owned(),
            })?;
        key.set_sensitive(true);
        let version = HeaderValue::from_str(&config.version).map_err(|_| Error::Config {
            details: format!("invalid anthropic version {:?}", config.version),
        })?;
        let mut headers = HeaderMap::new();
        headers.insert(HeaderName::from_static("x-api-key"), key);
        headers.insert(HeaderName::from_static("anthropic-version"), version);
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        if !config.beta.is_empty() {
            let beta = config.beta.join(",");
            let value = HeaderValue::from_str(&beta).map_err(|_| Error::Config {
                details: format!("invalid anthropic beta list {beta:?}"),
            })?;
            headers.insert(HeaderName::from_static("anthropic-beta"), value);
        }
        Ok(Self {
            url: format!("{}/v1/messages", config.base_url.trim_end_matches('/')),
            headers,
            default_model: config.default_model,
            transport: Transport::new(PROVIDER, config.http)?,
        })
    }

    fn outgoing(&self, request: &Request, stream: bool) -> Result<Outgoing<'_>> {
        let body = request_body(request, self.default_model.as_deref(), stream)?;
        Ok(Outgoing {
            method: reqwest::Method::POST,
            url: &self.url,
            headers: self.headers.clone(),
            body: Bytes::from(body.to_string()),
            estimated_tokens: self
                .transport
                .token_estimate(|| crate::tokens::estimate_request(request)),
            classify,
        })
    }

    async fn complete_inner(&self, request: &Request) -> Result<Response> {
        let outgoing = self.outgoing(request, false)?;
        let (response, started) = self.transport.send(&outgoing).await?;
        let headers = headers_of_interest(response.headers());
        let body = self
            .transport
            .read_body(response, &self.url, started)
            .await?;
        parse_response(&body, headers)
    }
}

impl LlmClient for AnthropicClient {
    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response>> {
        Box::pin(self.transport.recorded(self.complete_inner(request)))
    }

    fn stream<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<EventStream>> {
        Box::pin(async move {
            let (response, started) = self
                .transport
                .open_stream(self.outgoing(request, true))
                .await?;
            let parser = AnthropicStream::new(headers_of_interest(response.headers()));
            Ok(event_stream(&self.transport, response, parser, started))
        })
    }

    fn usage_stats(&self) -> UsageStats {
        self.transport.stats.snapshot()
    }

    fn reset_usage_stats(&self) {
        StatsCell::reset(&self.transport.stats);
    }

    fn count_tokens(&self, request: &Request) -> u64 {
        crate::tokens::estimate_request(request)
    }

    fn batches(&self) -> Option<&dyn crate::batch::BatchApi> {
        Some(self)
    }
}

/// The Messages API body for `request`.
pub(crate) fn request_body(
    request: &Request,
    default_model: Option<&str>,
    stream: bool,
) -> Result<Value> {
    let model = match (request.model.as_str(), default_model) {
        ("", Some(model)) => model,
        ("", None) => {
            return Err(Error::Config {
                details: "the request names no model and the anthropic client has no default"
                    .to_owned(),
            });
        }
        (model, _) => model,
    };
    let max_tokens = match request.max_tokens {
        0 => DEFAULT_MAX_TOKENS,
        n => n,
    };
    let marks = request.cache.limited(MAX_CACHE_MARKS);
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(max_tokens));
    let mut messages: Vec<Value> = request.messages.iter().map(wire_message).collect();
    for &i in &marks.messages {
        // The breakpoint goes on the message's last block (one that thinking left empty has
        // none to carry it).
        if let Some(block) = messages
            .get_mut(i)
            .and_then(|m| m["content"].as_array_mut())
            .and_then(|blocks| blocks.last_mut())
        {
            block["cache_control"] = ephemeral();
        }
    }
    body.insert("messages".into(), Value::Array(messages));
    if let Some(system) = &request.system {
        let system = if marks.system {
            json!([{"type": "text", "text": system, "cache_control": ephemeral()}])
        } else {
            json!(system)
        };
        body.insert("system".into(), system);
    }
    // Structured outputs: one more tool whose input is the answer, forced.
    let answer_tool = request.response_schema.as_ref().map(|schema| {
        json!({
            "name": schema.name,
            "description": "Give the answer as this tool's input, which follows the schema.",
            "input_schema": schema.schema,
        })
    });
    if !request.tools.is_empty() || answer_tool.is_some() {
        let mut tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                })
            })
            .chain(answer_tool)
            .collect();
        if marks.tools
            && let Some(last) = tools.last_mut()
        {
            last["cache_control"] = ephemeral();
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    if let Some(schema) = &request.response_schema {
        body.insert(
            "tool_choice".into(),
            json!({"type": "tool", "name": schema.name}),
        );
    } else if let Some(choice) = &request.tool_choice {
        let choice = match choice {
            ToolChoice::Auto => json!({"type": "auto"}),
            ToolChoice::Any => json!({"type": "any"}),
            ToolChoice::None => json!({"type": "none"}),
            ToolChoice::Tool { name } => json!({"type": "tool", "name": name}),
        };
        body.insert("tool_choice".into(), choice);
    }
    if let Some(thinking) = request.thinking {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": thinking.budget_tokens}),
        );
    }
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(top_p) = request.top_p {
        body.insert("top_p".into(), json!(top_p));
    }
    if !request.stop_sequences.is_empty() {
        body.insert("stop_sequences".into(), json!(request.stop_sequences));
    }
    if let Some(user_id) = request.metadata.get("user_id") {
        body.insert("metadata".into(), json!({"user_id": user_id}));
    }
    if stream {
        body.insert("stream".into(), json!(true));
    }
    merge_extra(&mut body, &request.extra);
    Ok(Value::Object(body))
}

/// A cache breakpoint's `cache_control`: the default five-minute cache.
fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

fn wire_message(message: &Message) -> Value {
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    let content: Vec<Value> = message.content.iter().filter_map(wire_block).collect();
    json!({"role": role, "content": content})
}

fn wire_block(block: &ContentBlock) -> Option<Value> {
    Some(match block {
        ContentBlock::Text { text } => json!({"type": "text", "text": text}),
        ContentBlock::Image { source } => {
            let source = match source {
                ImageSource::Base64 { media_type, data } => {
                    json!({"type": "base64", "media_type": media_type, "data": data})
                }
                ImageSource::Url { url } => json!({"type": "url", "url": url}),
            };
            json!({"type": "image", "source": source})
        }
        ContentBlock::ToolUse(call) => {
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input})
        }
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => {
            let mut result = json!({
                "type": "tool_result",
                "tool_use_id": tool_use_id,
                "content": content,
            });
            if *is_error {
                result["is_error"] = json!(true);
            }
            result
        }
        // Anthropic rejects thinking it did not sign (e.g. another provider's reasoning).
        ContentBlock::Thinking {
            signature: None, ..
        } => return None,
        ContentBlock::Thinking {
            text,
            signature: Some(signature),
        } => json!({"type": "thinking", "thinking": text, "signature": signature}),
        ContentBlock::RedactedThinking { data } => {
            json!({"type": "redacted_thinking", "data": data})
        }
    })
}

#[derive(Deserialize)]
struct WireMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: String,
    #[serde(default)]
    content: Vec<WireBlock>,
    #[serde(default)]
    stop_reason: Option<String>,
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        #[serde(default)]
        signature: Option<String>,
    },
    RedactedThinking {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
    },
    /// Server tools and block types newer than this code: not ours to interpret.
    #[serde(other)]
    Unknown,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
}

impl WireUsage {
    /// Overwrites the counts this report carries; message_delta repeats only some.
    fn merge_into(&self, usage: &mut Usage) {
        let fields = [
            (self.input_tokens, &mut usage.input_tokens),
            (self.output_tokens, &mut usage.output_tokens),
            (
                self.cache_creation_input_tokens,
                &mut usage.cache_creation_input_tokens,
            ),
            (
                self.cache_read_input_tokens,
                &mut usage.cache_read_input_tokens,
            ),
        ];
        for (reported, total) in fields {
            if let Some(reported) = reported {
                *total = reported;
            }
        }
    }
}

pub(crate) fn parse_response(body: &[u8], headers: BTreeMap<String, String>) -> Result<Response> {
    let message: WireMessage = serde_json::from_slice(body).map_err(|err| {
        Error::invalid_response(
            PROVIDER,
            format!(
                "message body is not a message ({err}): {}",
                body_excerpt(&String::from_utf8_lossy(body))
            ),
        )
    })?;
    let content = message
        .content
        .into_iter()
        .filter_map(|block| match block {
            WireBlock::Text { text } => Some(ContentBlock::Text { text }),
            WireBlock::Thinking {
                thinking,
                signature,
            } => Some(ContentBlock::Thinking {
                text: thinking,
                signature,
            }),
            WireBlock::RedactedThinking { data } => Some(ContentBlock::RedactedThinking { data }),
            WireBlock::ToolUse { id, name, input } => {
                Some(ContentBlock::ToolUse(ToolCall { id, name, input }))
            }
            WireBlock::Unknown => None,
        })
        .collect();
    let mut usage = Usage::default();
    message.usage.merge_into(&mut usage);
    Ok(Response {
        content,
        stop_reason: message
            .stop_reason
            .map_or(StopReason::EndTurn, |reason| StopReason::parse(&reason)),
        usage,
        model: message.model,
        id: message.id,
        request_id: headers.get("request-id").cloned(),
        headers,
    })
}

/// Anthropic's error body: `{"type": "error", "error": {"type": ..., "message": ...}}`.
#[derive(Deserialize)]
struct WireErrorBody {
    error: WireError,
}

#[derive(Deserialize)]
struct WireError {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: String,
}

pub(crate) fn classify(
    _provider: &'static str,
    status: u16,
    body: &str,
    hints: &RetryHints,
) -> Error {
    match serde_json::from_str::<WireErrorBody>(body) {
        Ok(parsed) => typed_error(Some(status), &parsed.error, hints),
        Err(_) => classify_status(PROVIDER, status, body_excerpt(body), hints),
    }
}

/// The error an Anthropic error object means; `status` is `None` for one that arrived in
/// the stream after HTTP 200.
fn typed_error(status: Option<u16>, error: &WireError, hints: &RetryHints) -> Error {
    let message = error.message.clone();
    let lower = message.to_ascii_lowercase();
    match error.kind.as_str() {
        "overloaded_error" => Error::Overloaded {
            provider: PROVIDER,
            message,
        },
        "rate_limit_error" => Error::RateLimited {
            provider: PROVIDER,
            retry_after: hints.retry_after,
            message,
        },
        "authentication_error" => Error::Authentication {
            provider: PROVIDER,
            message,
        },
        "permission_error" => Error::Permission {
            provider: PROVIDER,
            message,
        },
        "billing_error" => Error::QuotaExhausted {
            provider: PROVIDER,
            message,
        },
        "invalid_request_error" if lower.contains("credit balance") => Error::QuotaExhausted {
            provider: PROVIDER,
            message,
        },
        "invalid_request_error"
            if lower.contains("prompt is too long") || lower.contains("context limit") =>
        {
            Error::ContextWindowExceeded {
                provider: PROVIDER,
                message,
            }
        }
        "api_error" => Error::Server {
            provider: PROVIDER,
            status: status.unwrap_or(500),
            message,
        },
        _ => match status {
            Some(status) => classify_status(PROVIDER, status, message, hints),
            None => Error::StreamInterrupted {
                provider: PROVIDER,
                details: format!("{}: {message}", error.kind),
            },
        },
    }
}

/// What a content block of the stream is, by its wire index.
enum Block {
    Text,
    Thinking,
    Tool {
        index: usize,
        id: String,
        name: String,
        arguments: String,
    },
    /// Redacted thinking (sent whole at start) and block types we do not read.
    Other,
}

pub(crate) struct AnthropicStream {
    headers: BTreeMap<String, String>,
    blocks: BTreeMap<u64, Block>,
    tools_started: usize,
    usage: Usage,
    stop_reason: Option<StopReason>,
}

impl AnthropicStream {
    pub(crate) fn new(headers: BTreeMap<String, String>) -> Self {
        Self {
            headers,
            blocks: BTreeMap::new(),
            tools_started: 0,
            usage: Usage::default(),
            stop_reason: None,
        }
    }

    fn malformed(event: &str, detail: impl std::fmt::Display) -> Error {
        Error::invalid_response(PROVIDER, format!("malformed {event} event: {detail}"))
    }

    fn block_start(&mut self, data: &Value, out: &mut VecDeque<Event>) -> Result<()> {
        let index = wire_index(data, "content_block_start")?;
        let block = &data["content_block"];
        let text_field = |field: &str| block[field].as_str().unwrap_or_default().to_owned();
        let state = match block["type"].as_str().unwrap_or_default() {
            "text" => {
                let text = text_field("text");
                if !text.is_empty() {
                    out.push_back(Event::TextDelta { text });
                }
                Block::Text
            }
            "thinking" => {
                let text = text_field("thinking");
                if !text.is_empty() {
                    out.push_back(Event::ThinkingDelta { text });
                }
                Block::Thinking
            }
            "redacted_thinking" => {
                out.push_back(Event::RedactedThinking {
                    data: text_field("data"),
                });
                Block::Other
            }
            "tool_use" => {
                let (id, name) = (text_field("id"), text_field("name"));
                let tool_index = self.tools_started;
                self.tools_started += 1;
                out.push_back(Event::ToolCallStart {
                    index: tool_index,
                    id: id.clone(),
                    name: name.clone(),
                });
                Block::Tool {
                    index: tool_index,
                    id,
                    name,
                    arguments: String::new(),
                }
            }
            _ => Block::Other,
        };
        self.blocks.insert(index, state);
        Ok(())
    }

    fn block_delta(&mut self, data: &Value, out: &mut VecDeque<Event>) -> Result<()> {
        let index = wire_index(data, "content_block_delta")?;
        let delta = &data["delta"];
        let field = |name: &str| delta[name].as_str().unwrap_or_default().to_owned();
        match delta["type"].as_str().unwrap_or_default() {
            "text_delta" => out.push_back(Event::TextDelta {
                text: field("text"),
            }),
            "thinking_delta" => out.push_back(Event::ThinkingDelta {
                text: field("thinking"),
            }),
            "signature_delta" => out.push_back(Event::ThinkingSignature {
                signature: field("signature"),
            }),
            "input_json_delta" => {
                let fragment = field("partial_json");
                let Some(Block::Tool {
                    index, arguments, ..
                }) = self.blocks.get_mut(&index)
                else {
                    return Err(Self::malformed(
                        "content_block_delta",
                        format!("input_json_delta for block {index}, which is not a tool call"),
                    ));
                };
                arguments.push_str(&fragment);
                out.push_back(Event::ToolCallDelta {
                    index: *index,
                    arguments: fragment,
                });
            }
            // Citations and delta types newer than this code.
            _ => {}
        }
        Ok(())
    }

    fn block_stop(&mut self, data: &Value, out: &mut VecDeque<Event>) -> Result<()> {
        let index = wire_index(data, "content_block_stop")?;
        if let Some(Block::Tool {
            index,
            id,
            name,
            arguments,
        }) = self.blocks.remove(&index)
        {
            let input = parse_arguments(&id, &name, &arguments)?;
            out.push_back(Event::ToolCallEnd { index, input });
        }
        Ok(())
    }
}

fn wire_index(data: &Value, event: &str) -> Result<u64> {
    data["index"]
        .as_u64()
        .ok_or_else(|| AnthropicStream::malformed(event, "no index"))
}

impl StreamParser for AnthropicStream {
    fn on_event(&mut self, event: SseEvent, out: &mut VecDeque<Event>) -> Result<bool> {
        let data: Value = serde_json::from_str(&event.data).map_err(|err| {
            Error::invalid_response(
                PROVIDER,
                format!(
                    "stream data is not json ({err}): {}",
                    body_excerpt(&event.data)
                ),
            )
        })?;
        let name = match event.event.as_str() {
            "" => data["type"].as_str().unwrap_or_default().to_owned(),
            name => name.to_owned(),
        };
        match name.as_str() {
            "message_start" => {
                let message = &data["message"];
                out.push_back(Event::Start {
                    id: message["id"].as_str().map(str::to_owned),
                    model: message["model"].as_str().unwrap_or_default().to_owned(),
                    request_id: self.headers.get("request-id").cloned(),
                    headers: std::mem::take(&mut self.headers),
                });
                if let Ok(usage) = WireUsage::deserialize(&message["usage"]) {
                    usage.merge_into(&mut self.usage);
                    out.push_back(Event::Usage(self.usage));
                }
            }
            "content_block_start" => self.block_start(&data, out)?,
            "content_block_delta" => self.block_delta(&data, out)?,
            "content_block_stop" => self.block_stop(&data, out)?,
            "message_delta" => {
                if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                    self.stop_reason = Some(StopReason::parse(reason));
                }
                if let Ok(usage) = WireUsage::deserialize(&data["usage"]) {
                    usage.merge_into(&mut self.usage);
                    out.push_back(Event::Usage(self.usage));
                }
            }
            "message_stop" => {
                out.push_back(Event::Stop {
                    reason: self.stop_reason.take().unwrap_or_default(),
                });
                return Ok(true);
            }
            "error" => {
                let error = WireError::deserialize(&data["error"]).unwrap_or(WireError {
                    kind: String::new(),
                    message: body_excerpt(&event.data),
                });
                return Err(typed_error(None, &error, &RetryHints::default()));
            }
            // `ping` keeps the connection alive; unknown events are for newer clients.
            _ => {}
        }
        Ok(false)
    }

    fn on_eof(&mut self, _out: &mut VecDeque<Event>) -> Result<()> {
        Err(Error::StreamInterrupted {
            provider: PROVIDER,
            details: "the connection closed before message_stop".to_owned(),
        })
    }
}
