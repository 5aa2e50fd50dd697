//! The Anthropic Messages API: building its requests, reading its answers and its SSE stream.

mod batch;

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::client::{LlmClient, StatsCell, UsageStats};
use crate::count::{CountCache, CountSource, TokenCount};
use crate::error::{Error, Result};
use crate::http::{
    HttpConfig, Outgoing, StreamParser, Transport, ask_provider, body_excerpt, classify_status,
    event_stream, headers_of_interest, json_body, merge_extra,
};
use crate::key::ApiKey;
use crate::retry::RetryHints;
use crate::sse::SseEvent;
use crate::stream::{Event, EventStream, parse_arguments};
use crate::types::{
    ContentBlock, ImageSource, MAX_CACHE_MARKS, Message, Request, Response, Role, StopReason,
    ToolCall, ToolChoice, Usage,
};
use crate::wire::anthropic::{
    BlockDelta, BlockParam, COUNT_TOKENS_FIELDS, CacheControl, ContentBlockParam,
    CountTokensResponse, ErrorBody, ErrorObject, ImageSourceParam, MessageParam, MessagesRequest,
    MessagesResponse, Metadata, ResponseBlock, RoleParam, StreamEvent, TextBlockParam,
    TextOrBlocks, TextType, ThinkingParam, ToolChoiceParam, ToolParam, WireUsage,
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
    /// The provider's counts of requests already counted.
    counted: CountCache,
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
            counted: CountCache::default(),
        })
    }

    fn outgoing(&self, request: &Request, stream: bool) -> Result<Outgoing<'_>> {
        let body = request_body(request, self.default_model.as_deref(), stream)?;
        Ok(self.outgoing_body(request, body))
    }

    fn outgoing_body(&self, request: &Request, body: Value) -> Outgoing<'_> {
        Outgoing {
            method: reqwest::Method::POST,
            url: &self.url,
            headers: self.headers.clone(),
            body: Bytes::from(body.to_string()),
            estimated_tokens: self
                .transport
                .token_estimate(|| crate::tokens::estimate_request(request)),
            classify,
        }
    }

    async fn complete_inner(&self, request: &Request) -> Result<Response> {
        let outgoing = self.outgoing(request, false)?;
        self.send_whole(request, &outgoing).await
    }

    /// A pre-warming call: the request's body with `max_tokens: 0`, which writes its prompt to
    /// the cache and generates nothing.
    async fn prewarm_inner(&self, request: &Request) -> Result<Response> {
        let mut body = request_body(request, self.default_model.as_deref(), false)?;
        body["max_tokens"] = Value::from(0);
        let outgoing = self.outgoing_body(request, body);
        self.send_whole(request, &outgoing).await
    }

    /// Sends `outgoing` for `request` and reads the whole answer.
    async fn send_whole(&self, request: &Request, outgoing: &Outgoing<'_>) -> Result<Response> {
        let (response, started) = self.transport.send(outgoing).await?;
        let headers = headers_of_interest(response.headers());
        let body = self
            .transport
            .read_body(response, &self.url, started)
            .await?;
        let response = parse_response(&body, headers)?;
        self.transport
            .calibrate(self.model_of(request), request, &response);
        Ok(response)
    }

    /// The model that answers `request`: its own, else the client's default.
    fn model_of<'a>(&'a self, request: &'a Request) -> &'a str {
        match request.model.as_str() {
            "" => self.default_model.as_deref().unwrap_or_default(),
            model => model,
        }
    }

    /// `POST /v1/messages/count_tokens`, once per distinct body.
    async fn count_input_inner(&self, request: &Request) -> Result<TokenCount> {
        let body = count_body(request, self.default_model.as_deref())?;
        let url = format!("{}/count_tokens", self.url);
        let decode = |provider, answer: &[u8]| {
            json_body::<CountTokensResponse>(provider, answer, "the token count")
                .map(|counted| counted.input_tokens)
        };
        let endpoint = (url.as_str(), self.headers.clone());
        let tokens = ask_provider(
            &self.transport,
            &self.counted,
            endpoint,
            &body,
            classify,
            decode,
        )
        .await?;
        Ok(TokenCount::new(tokens, CountSource::Provider))
    }
}

/// The count-tokens body for `request`: its Messages body without the fields that shape only
/// the answer, which the endpoint refuses.
pub(crate) fn count_body(request: &Request, default_model: Option<&str>) -> Result<Value> {
    let mut body = request_body(request, default_model, false)?;
    if let Value::Object(fields) = &mut body {
        fields.retain(|name, _| COUNT_TOKENS_FIELDS.contains(&name.as_str()));
    }
    Ok(body)
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
        self.transport
            .estimate(self.model_of(request), request)
            .tokens
    }

    fn count_offline(&self, request: &Request) -> TokenCount {
        self.transport.estimate(self.model_of(request), request)
    }

    fn prewarm<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Option<Usage>>> {
        Box::pin(async move {
            let response = self.transport.recorded(self.prewarm_inner(request)).await?;
            Ok(Some(response.usage))
        })
    }

    fn count_input<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<TokenCount>> {
        Box::pin(self.count_input_inner(request))
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
    if request.service_tier == Some(crate::types::ServiceTier::Flex) {
        return Err(Error::Config {
            details: format!(
                "model {model:?}: anthropic has no flex tier (it is openai's); send the calls \
                 as a batch for half the price"
            ),
        });
    }
    let max_tokens = match request.max_tokens {
        0 => DEFAULT_MAX_TOKENS,
        n => n,
    };
    // Automatic caching takes one of the breakpoints.
    let automatic = request.cache.automatic;
    let marks = request
        .cache
        .limited(MAX_CACHE_MARKS - usize::from(automatic));
    let mut messages: Vec<MessageParam> = request.messages.iter().map(wire_message).collect();
    for &i in &marks.messages {
        // The breakpoint goes on the message's last block (one that thinking left empty has
        // none to carry it).
        if let Some(MessageParam {
            content: TextOrBlocks::Blocks(blocks),
            ..
        }) = messages.get_mut(i)
            && let Some(block) = blocks.last_mut()
        {
            block.cache_control = Some(CacheControl::with_ttl(marks.ttl));
        }
    }
    let system = wire_system(request, &marks);
    let custom_tool = |name: &str, description: &str, schema: &Value| ToolParam {
        kind: None,
        name: name.to_owned(),
        description: Some(description.to_owned()),
        input_schema: Some(schema.clone()),
        cache_control: None,
    };
    // Structured outputs: one more tool whose input is the answer, forced.
    let answer_tool = request.response_schema.as_ref().map(|schema| {
        custom_tool(
            &schema.name,
            "Give the answer as this tool's input, which follows the schema.",
            &schema.schema,
        )
    });
    let mut tools: Vec<ToolParam> = request
        .tools
        .iter()
        .map(|tool| custom_tool(&tool.name, &tool.description, &tool.input_schema))
        .chain(answer_tool)
        .collect();
    if marks.tools
        && let Some(last) = tools.last_mut()
    {
        last.cache_control = Some(CacheControl::with_ttl(marks.ttl));
    }
    let tool_choice = match (&request.response_schema, &request.tool_choice) {
        (Some(schema), _) => Some(ToolChoiceParam::Tool {
            name: schema.name.clone(),
        }),
        (None, choice) => choice.as_ref().map(|choice| match choice {
            ToolChoice::Auto => ToolChoiceParam::Auto,
            ToolChoice::Any => ToolChoiceParam::Any,
            ToolChoice::None => ToolChoiceParam::None,
            ToolChoice::Tool { name } => ToolChoiceParam::Tool { name: name.clone() },
        }),
    };
    let body = MessagesRequest {
        model: model.to_owned(),
        max_tokens,
        system,
        messages,
        tools,
        tool_choice,
        thinking: request.thinking.map(|thinking| ThinkingParam::Enabled {
            budget_tokens: thinking.budget_tokens,
        }),
        temperature: request.temperature,
        top_p: request.top_p,
        stop_sequences: request.stop_sequences.clone(),
        metadata: request.metadata.get("user_id").map(|user_id| Metadata {
            user_id: Some(user_id.clone()),
        }),
        cache_control: automatic.then(|| CacheControl::with_ttl(marks.ttl)),
        stream,
    };
    // Through a `Value`, whose keys serde_json keeps sorted, so the bytes sent do not
    // depend on the order of the struct's fields; `extra` then overrides any of them.
    let mut body = serde_json::to_value(&body).map_err(|err| Error::Config {
        details: format!("the anthropic request for model {model:?} does not encode: {err}"),
    })?;
    if let Value::Object(body) = &mut body {
        merge_extra(body, &request.extra);
    }
    Ok(body)
}

fn wire_message(message: &Message) -> MessageParam {
    let role = match message.role {
        Role::User => RoleParam::User,
        Role::Assistant => RoleParam::Assistant,
    };
    let content = message
        .content
        .iter()
        .filter_map(wire_block)
        .map(ContentBlockParam::from)
        .collect();
    MessageParam {
        role,
        content: TextOrBlocks::Blocks(content),
    }
}

fn wire_block(block: &ContentBlock) -> Option<BlockParam> {
    Some(match block {
        ContentBlock::Text { text } => BlockParam::Text { text: text.clone() },
        ContentBlock::Image { source } => BlockParam::Image {
            source: match source {
                ImageSource::Base64 { media_type, data } => ImageSourceParam::Base64 {
                    media_type: media_type.clone(),
                    data: data.clone(),
                },
                ImageSource::Url { url } => ImageSourceParam::Url { url: url.clone() },
            },
        },
        ContentBlock::ToolUse(call) => BlockParam::ToolUse {
            id: call.id.clone(),
            name: call.name.clone(),
            input: call.input.clone(),
        },
        ContentBlock::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => BlockParam::ToolResult {
            tool_use_id: tool_use_id.clone(),
            content: Some(TextOrBlocks::Text(content.clone())),
            is_error: *is_error,
        },
        // Anthropic rejects thinking it did not sign (e.g. another provider's reasoning).
        ContentBlock::Thinking {
            signature: None, ..
        } => return None,
        ContentBlock::Thinking {
            text,
            signature: Some(signature),
        } => BlockParam::Thinking {
            thinking: text.clone(),
            signature: Some(signature.clone()),
        },
        ContentBlock::RedactedThinking { data } => {
            BlockParam::RedactedThinking { data: data.clone() }
        }
    })
}

/// Overwrites the counts `reported` carries; message_delta repeats only some.
fn merge_usage(reported: &WireUsage, usage: &mut Usage) {
    let fields = [
        (reported.input_tokens, &mut usage.input_tokens),
        (reported.output_tokens, &mut usage.output_tokens),
        (
            reported.cache_creation_input_tokens,
            &mut usage.cache_creation_input_tokens,
        ),
        (
            reported.cache_read_input_tokens,
            &mut usage.cache_read_input_tokens,
        ),
    ];
    for (reported, total) in fields {
        if let Some(reported) = reported {
            *total = reported;
        }
    }
    if let Some(creation) = reported.cache_creation {
        usage.cache_creation_1h_input_tokens = creation.ephemeral_1h_input_tokens;
    }
}

pub(crate) fn parse_response(body: &[u8], headers: BTreeMap<String, String>) -> Result<Response> {
    let message: MessagesResponse = serde_json::from_slice(body).map_err(|err| {
        Error::invalid_response(
            PROVIDER,
            format!(
                "message body is not a message ({err}): {}",
                body_excerpt(&String::from_utf8_lossy(body))
            ),
        )
    })?;
    Ok(from_message(message, headers))
}

/// Our response for a message the API answered with, whole or in a batch's results.
pub(crate) fn from_message(
    message: MessagesResponse,
    headers: BTreeMap<String, String>,
) -> Response {
    let content = message
        .content
        .into_iter()
        .filter_map(|block| match block {
            ResponseBlock::Text { text } => Some(ContentBlock::Text { text }),
            ResponseBlock::Thinking {
                thinking,
                signature,
            } => Some(ContentBlock::Thinking {
                text: thinking,
                signature,
            }),
            ResponseBlock::RedactedThinking { data } => {
                Some(ContentBlock::RedactedThinking { data })
            }
            ResponseBlock::ToolUse { id, name, input } => {
                Some(ContentBlock::ToolUse(ToolCall { id, name, input }))
            }
            ResponseBlock::Unknown => None,
        })
        .collect();
    let mut usage = Usage::default();
    merge_usage(&message.usage.unwrap_or_default(), &mut usage);
    Response {
        content,
        stop_reason: message
            .stop_reason
            .map_or(StopReason::EndTurn, |reason| StopReason::parse(&reason)),
        usage,
        model: message.model,
        id: message.id,
        request_id: headers.get("request-id").cloned(),
        headers,
        service_tier: None,
    }
}

/// The system prompt as sent: one block carrying a breakpoint when `marks` mark it.
fn wire_system(
    request: &Request,
    marks: &crate::types::CacheMarks,
) -> Option<TextOrBlocks<TextBlockParam>> {
    request.system.as_ref().map(|system| {
        if marks.system {
            TextOrBlocks::Blocks(vec![TextBlockParam {
                kind: TextType::Text,
                text: system.clone(),
                cache_control: Some(CacheControl::with_ttl(marks.ttl)),
            }])
        } else {
            TextOrBlocks::Text(system.clone())
        }
    })
}

pub(crate) fn classify(
    _provider: &'static str,
    status: u16,
    body: &str,
    hints: &RetryHints,
) -> Error {
    match serde_json::from_str::<ErrorBody>(body) {
        Ok(parsed) => typed_error(Some(status), &parsed.error, hints),
        Err(_) => classify_status(PROVIDER, status, body_excerpt(body), hints),
    }
}

/// The error an Anthropic error object means; `status` is `None` for one that arrived in
/// the stream after HTTP 200.
fn typed_error(status: Option<u16>, error: &ErrorObject, hints: &RetryHints) -> Error {
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

    fn block_start(&mut self, index: u64, block: ResponseBlock, out: &mut VecDeque<Event>) {
        let state = match block {
            ResponseBlock::Text { text } => {
                if !text.is_empty() {
                    out.push_back(Event::TextDelta { text });
                }
                Block::Text
            }
            ResponseBlock::Thinking { thinking, .. } => {
                if !thinking.is_empty() {
                    out.push_back(Event::ThinkingDelta { text: thinking });
                }
                Block::Thinking
            }
            ResponseBlock::RedactedThinking { data } => {
                out.push_back(Event::RedactedThinking { data });
                Block::Other
            }
            ResponseBlock::ToolUse { id, name, .. } => {
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
            ResponseBlock::Unknown => Block::Other,
        };
        self.blocks.insert(index, state);
    }

    fn block_delta(
        &mut self,
        index: u64,
        delta: BlockDelta,
        out: &mut VecDeque<Event>,
    ) -> Result<()> {
        match delta {
            BlockDelta::TextDelta { text } => out.push_back(Event::TextDelta { text }),
            BlockDelta::ThinkingDelta { thinking } => {
                out.push_back(Event::ThinkingDelta { text: thinking });
            }
            BlockDelta::SignatureDelta { signature } => {
                out.push_back(Event::ThinkingSignature { signature });
            }
            BlockDelta::InputJsonDelta { partial_json } => {
                let Some(Block::Tool {
                    index, arguments, ..
                }) = self.blocks.get_mut(&index)
                else {
                    return Err(Error::invalid_response(
                        PROVIDER,
                        format!(
                            "malformed content_block_delta event: input_json_delta for block \
                             {index}, which is not a tool call"
                        ),
                    ));
                };
                arguments.push_str(&partial_json);
                out.push_back(Event::ToolCallDelta {
                    index: *index,
                    arguments: partial_json,
                });
            }
            // Citations and delta types newer than this code.
            BlockDelta::Unknown => {}
        }
        Ok(())
    }

    fn block_stop(&mut self, index: u64, out: &mut VecDeque<Event>) -> Result<()> {
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

impl StreamParser for AnthropicStream {
    /// Reads the event by its data's `type`, which the API always sends and which matches
    /// the SSE event name.
    fn on_event(&mut self, event: SseEvent, out: &mut VecDeque<Event>) -> Result<bool> {
        let data: StreamEvent = serde_json::from_str(&event.data).map_err(|err| {
            Error::invalid_response(
                PROVIDER,
                format!(
                    "malformed stream event ({err}): {}",
                    body_excerpt(&event.data)
                ),
            )
        })?;
        match data {
            StreamEvent::MessageStart { message } => {
                out.push_back(Event::Start {
                    id: message.id,
                    model: message.model,
                    request_id: self.headers.get("request-id").cloned(),
                    headers: std::mem::take(&mut self.headers),
                });
                if let Some(usage) = message.usage {
                    merge_usage(&usage, &mut self.usage);
                    out.push_back(Event::Usage(self.usage));
                }
            }
            StreamEvent::ContentBlockStart {
                index,
                content_block,
            } => self.block_start(index, content_block, out),
            StreamEvent::ContentBlockDelta { index, delta } => {
                self.block_delta(index, delta, out)?
            }
            StreamEvent::ContentBlockStop { index } => self.block_stop(index, out)?,
            StreamEvent::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(StopReason::parse(&reason));
                }
                if let Some(usage) = usage {
                    merge_usage(&usage, &mut self.usage);
                    out.push_back(Event::Usage(self.usage));
                }
            }
            StreamEvent::MessageStop => {
                out.push_back(Event::Stop {
                    reason: self.stop_reason.take().unwrap_or_default(),
                });
                return Ok(true);
            }
            StreamEvent::Error { error } => {
                let error = error.unwrap_or_else(|| ErrorObject {
                    kind: String::new(),
                    message: body_excerpt(&event.data),
                });
                return Err(typed_error(None, &error, &RetryHints::default()));
            }
            // `ping` keeps the connection alive; unknown events are for newer clients.
            StreamEvent::Ping | StreamEvent::Unknown => {}
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
