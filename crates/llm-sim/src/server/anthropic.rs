//! The Anthropic Messages API as the fake server speaks it: reading `POST /v1/messages`
//! bodies and writing messages, event streams and errors framed as the real service frames
//! them.

use llm_core::types::MAX_CACHE_MARKS;
use llm_core::wire::anthropic::{
    BlockDelta, BlockParam, CacheCreation, ErrorBody, ImageSourceParam, MessageDelta,
    MessagesRequest, MessagesResponse, ResponseBlock, RoleParam, StreamEvent, TextOrBlocks,
    ThinkingParam, ToolChoiceParam, WireUsage,
};
use llm_core::{
    ContentBlock, ImageSource, Message, Request, Role, Thinking, Tool, ToolCall, ToolChoice, Usage,
};
use serde::Deserialize;
use serde_json::Value;

use super::wire::{Sse, events_before_interruption, to_json};
use crate::reply::{Answer, Failure, byte_pieces, word_pieces};

/// Reads a Messages API body, as sent: the request and whether it asks for a stream.
pub(crate) fn parse_body(body: &[u8]) -> Result<(Request, bool), String> {
    let wire = serde_json::from_slice(body).map_err(|err| match err.classify() {
        serde_json::error::Category::Data => err.to_string(),
        _ => format!("the body is not json: {err}"),
    })?;
    from_wire(wire)
}

/// Reads a Messages API body already parsed, as a batch holds one: the request and whether
/// it asks for a stream.
pub(crate) fn parse_request(body: &Value) -> Result<(Request, bool), String> {
    from_wire(MessagesRequest::deserialize(body).map_err(|err| err.to_string())?)
}

fn from_wire(body: MessagesRequest) -> Result<(Request, bool), String> {
    let mut request = Request::new(body.model);
    request.max_tokens = body.max_tokens;
    // Blocks (and tools) that carry a cache breakpoint.
    let mut marked = 0;
    if let Some(system) = body.system {
        request.system = Some(match system {
            TextOrBlocks::Text(text) => text,
            TextOrBlocks::Blocks(blocks) => {
                let cached = blocks.iter().filter(|b| b.cache_control.is_some()).count();
                marked += cached;
                request.cache.system = cached > 0;
                longest_ttl(&mut request, blocks.iter().map(|b| &b.cache_control));
                blocks
                    .into_iter()
                    .map(|block| block.text)
                    .collect::<Vec<_>>()
                    .join("\n\n")
            }
        });
    }
    for message in body.messages {
        let role = match message.role {
            RoleParam::User => Role::User,
            RoleParam::Assistant => Role::Assistant,
        };
        let content = match message.content {
            TextOrBlocks::Text(text) => vec![ContentBlock::text(text)],
            TextOrBlocks::Blocks(blocks) => {
                let cached = blocks.iter().filter(|b| b.cache_control.is_some()).count();
                marked += cached;
                longest_ttl(&mut request, blocks.iter().map(|b| &b.cache_control));
                if cached > 0 {
                    request.cache.messages.push(request.messages.len());
                }
                blocks
                    .into_iter()
                    .filter_map(|block| content_block(block.block))
                    .collect()
            }
        };
        request.messages.push(Message { role, content });
    }
    for tool in body.tools {
        marked += usize::from(tool.cache_control.is_some());
        request.cache.tools |= tool.cache_control.is_some();
        longest_ttl(&mut request, [&tool.cache_control]);
        // Server tools (web search, ...) have a `type` and no schema: nothing to simulate.
        let Some(input_schema) = tool.input_schema else {
            continue;
        };
        request.tools.push(Tool {
            name: tool.name,
            description: tool.description.unwrap_or_default(),
            input_schema,
        });
    }
    request.tool_choice = body.tool_choice.map(|choice| match choice {
        ToolChoiceParam::Auto => ToolChoice::Auto,
        ToolChoiceParam::Any => ToolChoice::Any,
        ToolChoiceParam::None => ToolChoice::None,
        ToolChoiceParam::Tool { name } => ToolChoice::Tool { name },
    });
    if let Some(ThinkingParam::Enabled { budget_tokens }) = body.thinking {
        request.thinking = Some(Thinking { budget_tokens });
    }
    request.temperature = body.temperature;
    request.top_p = body.top_p;
    request.stop_sequences = body.stop_sequences;
    if let Some(user_id) = body.metadata.and_then(|metadata| metadata.user_id) {
        request.metadata.insert("user_id".into(), user_id);
    }
    // Automatic caching: one more breakpoint, the service's, on the last block.
    marked += usize::from(body.cache_control.is_some());
    request.cache.automatic = body.cache_control.is_some();
    longest_ttl(&mut request, [&body.cache_control]);
    if marked > MAX_CACHE_MARKS {
        // As the API answers it: every block with a breakpoint counts.
        return Err(format!(
            "A maximum of {MAX_CACHE_MARKS} blocks with cache_control may be provided. Found \
             {marked}."
        ));
    }
    Ok((request, body.stream))
}

/// Keeps on `request` the longest lifetime its breakpoints ask for.
fn longest_ttl<'a>(
    request: &mut Request,
    controls: impl IntoIterator<Item = &'a Option<llm_core::wire::anthropic::CacheControl>>,
) {
    for control in controls.into_iter().flatten() {
        if control.lifetime() == llm_core::CacheTtl::OneHour {
            request.cache.ttl = llm_core::CacheTtl::OneHour;
        }
    }
}

/// One content block; `None` for block types the simulation has no use for.
fn content_block(block: BlockParam) -> Option<ContentBlock> {
    Some(match block {
        BlockParam::Text { text } => ContentBlock::text(text),
        BlockParam::Image { source } => ContentBlock::Image {
            source: match source {
                ImageSourceParam::Base64 { media_type, data } => {
                    ImageSource::Base64 { media_type, data }
                }
                ImageSourceParam::Url { url } => ImageSource::Url { url },
            },
        },
        BlockParam::ToolUse { id, name, input } => {
            ContentBlock::ToolUse(ToolCall { id, name, input })
        }
        BlockParam::ToolResult {
            tool_use_id,
            content,
            is_error,
        } => ContentBlock::ToolResult {
            tool_use_id,
            // Blocks count by their text; images and documents have none to give.
            content: match content {
                None => String::new(),
                Some(TextOrBlocks::Text(text)) => text,
                Some(TextOrBlocks::Blocks(blocks)) => blocks
                    .into_iter()
                    .filter_map(|block| match block.block {
                        BlockParam::Text { text } => Some(text),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            },
            is_error,
        },
        BlockParam::Thinking {
            thinking,
            signature,
        } => ContentBlock::Thinking {
            text: thinking,
            signature,
        },
        BlockParam::RedactedThinking { data } => ContentBlock::RedactedThinking { data },
        BlockParam::Unknown => return None,
    })
}

/// The signature a thinking block carries on the wire: Anthropic signs every one.
fn signature(signature: Option<&String>) -> String {
    signature
        .cloned()
        .unwrap_or_else(|| "sim-signature".to_owned())
}

/// Usage as a message reports it; `message_start` reports one output token so far.
fn wire_usage(usage: &Usage, output_tokens: u64) -> WireUsage {
    WireUsage {
        input_tokens: Some(usage.input_tokens),
        cache_creation_input_tokens: Some(usage.cache_creation_input_tokens),
        cache_read_input_tokens: Some(usage.cache_read_input_tokens),
        output_tokens: Some(output_tokens),
        cache_creation: Some(CacheCreation {
            ephemeral_5m_input_tokens: usage.cache_creation_input_tokens
                - usage.cache_creation_1h_input_tokens,
            ephemeral_1h_input_tokens: usage.cache_creation_1h_input_tokens,
        }),
    }
}

/// The `input` of a tool call on the wire: raw argument text, when injected, goes out as a
/// string, since a non-streamed message has no other place for text that is not JSON.
fn tool_input(answer: &Answer, position: usize, input: &Value) -> Value {
    match answer.raw_arguments.get(&position) {
        Some(raw) if serde_json::from_str::<Value>(raw).is_err() => Value::String(raw.clone()),
        _ => input.clone(),
    }
}

fn event(event: &StreamEvent) -> Sse {
    Sse::named(event.name(), to_json(event))
}

/// A message as a whole answer has it (`stop_reason` set) or as `message_start` announces it.
fn wire_message(answer: &Answer, call: u64, content: Vec<ResponseBlock>) -> MessagesResponse {
    let response = &answer.response;
    MessagesResponse {
        id: Some(
            response
                .id
                .clone()
                .unwrap_or_else(|| format!("msg_sim_{call}")),
        ),
        kind: "message".to_owned(),
        role: "assistant".to_owned(),
        model: response.model.clone(),
        content,
        stop_reason: None,
        stop_sequence: None,
        usage: None,
    }
}

/// A non-streamed message, whole or in a batch's results.
pub(crate) fn message(answer: &Answer, call: u64) -> MessagesResponse {
    let response = &answer.response;
    let mut position = 0;
    let content = response
        .content
        .iter()
        .filter_map(|block| {
            Some(match block {
                ContentBlock::Text { text } => ResponseBlock::Text { text: text.clone() },
                ContentBlock::Thinking {
                    text,
                    signature: signed,
                } => ResponseBlock::Thinking {
                    thinking: text.clone(),
                    signature: Some(signature(signed.as_ref())),
                },
                ContentBlock::RedactedThinking { data } => {
                    ResponseBlock::RedactedThinking { data: data.clone() }
                }
                ContentBlock::ToolUse(call) => {
                    let input = tool_input(answer, position, &call.input);
                    position += 1;
                    ResponseBlock::ToolUse {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        input,
                    }
                }
                ContentBlock::Image { .. } | ContentBlock::ToolResult { .. } => return None,
            })
        })
        .collect();
    MessagesResponse {
        stop_reason: Some(response.stop_reason.as_str().to_owned()),
        usage: Some(wire_usage(&response.usage, response.usage.output_tokens)),
        ..wire_message(answer, call, content)
    }
}

/// The event stream of a message, as `event:` / `data:` pairs; an interrupted answer ends
/// with an `error` event half way through its content.
pub(crate) fn stream(answer: &Answer, call: u64) -> Vec<Sse> {
    let response = &answer.response;
    let mut events = vec![event(&StreamEvent::MessageStart {
        message: MessagesResponse {
            usage: Some(wire_usage(&response.usage, 1)),
            ..wire_message(answer, call, Vec::new())
        },
    })];
    let mut body = Vec::new();
    let mut position = 0;
    let mut index = 0;
    for block in &response.content {
        let start = |content_block| {
            event(&StreamEvent::ContentBlockStart {
                index,
                content_block,
            })
        };
        let delta = |delta| event(&StreamEvent::ContentBlockDelta { index, delta });
        match block {
            ContentBlock::Text { text } => {
                body.push(start(ResponseBlock::Text {
                    text: String::new(),
                }));
                body.extend(word_pieces(text).map(|piece| {
                    delta(BlockDelta::TextDelta {
                        text: piece.to_owned(),
                    })
                }));
            }
            ContentBlock::Thinking {
                text,
                signature: signed,
            } => {
                body.push(start(ResponseBlock::Thinking {
                    thinking: String::new(),
                    signature: Some(String::new()),
                }));
                body.extend(word_pieces(text).map(|piece| {
                    delta(BlockDelta::ThinkingDelta {
                        thinking: piece.to_owned(),
                    })
                }));
                body.push(delta(BlockDelta::SignatureDelta {
                    signature: signature(signed.as_ref()),
                }));
            }
            ContentBlock::RedactedThinking { data } => {
                body.push(start(ResponseBlock::RedactedThinking {
                    data: data.clone(),
                }));
            }
            ContentBlock::ToolUse(tool) => {
                body.push(start(ResponseBlock::ToolUse {
                    id: tool.id.clone(),
                    name: tool.name.clone(),
                    input: Value::Object(serde_json::Map::new()),
                }));
                let arguments = answer
                    .raw_arguments
                    .get(&position)
                    .cloned()
                    .unwrap_or_else(|| tool.input.to_string());
                position += 1;
                body.push(delta(BlockDelta::InputJsonDelta {
                    partial_json: String::new(),
                }));
                body.extend(byte_pieces(&arguments, 16).map(|piece| {
                    delta(BlockDelta::InputJsonDelta {
                        partial_json: piece.to_owned(),
                    })
                }));
            }
            ContentBlock::Image { .. } | ContentBlock::ToolResult { .. } => continue,
        }
        body.push(event(&StreamEvent::ContentBlockStop { index }));
        index += 1;
    }
    // Anthropic pings once early, after the first block starts.
    if !body.is_empty() {
        body.insert(1, event(&StreamEvent::Ping));
    }
    if let Some(failure) = &answer.interrupted {
        events.extend(events_before_interruption(body));
        let (_, _, error) = error_body(failure);
        events.push(Sse::named("error", error));
        return events;
    }
    events.extend(body);
    events.push(event(&StreamEvent::MessageDelta {
        delta: MessageDelta {
            stop_reason: Some(response.stop_reason.as_str().to_owned()),
            stop_sequence: None,
        },
        usage: Some(WireUsage {
            output_tokens: Some(response.usage.output_tokens),
            ..WireUsage::default()
        }),
    }));
    events.push(event(&StreamEvent::MessageStop));
    events
}

/// Status, extra headers and body of a failed call.
pub(crate) fn error_body(failure: &Failure) -> (u16, Vec<(String, String)>, Value) {
    let (status, headers, body) = failure_body(failure);
    (status, headers, to_json(&body))
}

/// [`error_body`] with the body as its wire type (a batch's errored result holds it).
pub(crate) fn failure_body(failure: &Failure) -> (u16, Vec<(String, String)>, ErrorBody) {
    let (status, kind, message, headers) = match failure {
        Failure::RateLimited {
            retry_after,
            message,
        } => (
            429,
            "rate_limit_error",
            message.as_str(),
            super::wire::retry_after(*retry_after),
        ),
        Failure::Overloaded { message } => (529, "overloaded_error", message.as_str(), Vec::new()),
        Failure::Server { status, message } => (*status, "api_error", message.as_str(), Vec::new()),
        Failure::Timeout => (504, "timeout_error", "request timed out", Vec::new()),
    };
    (status, headers, ErrorBody::new(kind, message))
}

pub(crate) fn error_json(kind: &str, message: &str) -> Value {
    to_json(&ErrorBody::new(kind, message))
}

/// Response headers every answer carries.
pub(crate) fn headers(call: u64) -> Vec<(String, String)> {
    vec![("request-id".to_owned(), format!("req_sim_{call}"))]
}
