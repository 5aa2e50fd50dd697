//! The Anthropic Messages API as the fake server speaks it: reading `POST /v1/messages`
//! bodies and writing messages, event streams and errors framed as the real service frames
//! them.

use llm_core::types::MAX_CACHE_MARKS;
use llm_core::{
    ContentBlock, ImageSource, Message, Request, Role, Thinking, Tool, ToolCall, ToolChoice, Usage,
};
use serde_json::{Value, json};

use super::wire::{Field, Sse, events_before_interruption, string_list};
use crate::reply::{Answer, Failure, byte_pieces, word_pieces};

/// Reads a Messages API body: the request and whether it asks for a stream.
pub(crate) fn parse_request(body: &Value) -> Result<(Request, bool), String> {
    let body = Field::root(body)?;
    let mut request = Request::new(body.required("model")?.string()?);
    request.max_tokens = body.required("max_tokens")?.u32()?;
    // Blocks (and tools) that carry a cache breakpoint.
    let mut marked = 0;
    if let Some(system) = body.optional("system") {
        request.system = Some(match system.value {
            Value::String(text) => text.clone(),
            _ => {
                let blocks = system.array()?;
                marked += blocks.iter().filter(|b| cached(b)).count();
                request.cache.system = blocks.iter().any(cached);
                blocks
                    .into_iter()
                    .map(|block| block.required("text")?.string())
                    .collect::<Result<Vec<_>, _>>()?
                    .join("\n\n")
            }
        });
    }
    for message in body.required("messages")?.array()? {
        let role = match message.required("role")?.string()?.as_str() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            other => {
                return Err(message.error(&format!("role `{other}`, expected user or assistant")));
            }
        };
        let content_field = message.required("content")?;
        let content = match content_field.value {
            Value::String(text) => vec![ContentBlock::text(text.clone())],
            _ => {
                let blocks = content_field.array()?;
                marked += blocks.iter().filter(|b| cached(b)).count();
                if blocks.iter().any(cached) {
                    request.cache.messages.push(request.messages.len());
                }
                blocks
                    .into_iter()
                    .filter_map(|block| parse_block(&block).transpose())
                    .collect::<Result<_, _>>()?
            }
        };
        request.messages.push(Message { role, content });
    }
    if let Some(tools) = body.optional("tools") {
        for tool in tools.array()? {
            // Server tools (web search, ...) have a `type` and no schema: nothing to simulate.
            marked += usize::from(cached(&tool));
            request.cache.tools |= cached(&tool);
            let Some(schema) = tool.optional("input_schema") else {
                continue;
            };
            request.tools.push(Tool {
                name: tool.required("name")?.string()?,
                description: tool
                    .optional("description")
                    .map(|d| d.string())
                    .transpose()?
                    .unwrap_or_default(),
                input_schema: schema.value.clone(),
            });
        }
    }
    if let Some(choice) = body.optional("tool_choice") {
        request.tool_choice = Some(match choice.required("type")?.string()?.as_str() {
            "auto" => ToolChoice::Auto,
            "any" => ToolChoice::Any,
            "none" => ToolChoice::None,
            "tool" => ToolChoice::Tool {
                name: choice.required("name")?.string()?,
            },
            other => {
                return Err(
                    choice.error(&format!("type `{other}`, expected auto, any, none or tool"))
                );
            }
        });
    }
    if let Some(thinking) = body.optional("thinking")
        && thinking.required("type")?.string()? == "enabled"
    {
        request.thinking = Some(Thinking {
            budget_tokens: thinking.required("budget_tokens")?.u32()?,
        });
    }
    request.temperature = body.optional("temperature").map(|t| t.f32()).transpose()?;
    request.top_p = body.optional("top_p").map(|t| t.f32()).transpose()?;
    if let Some(stop) = body.optional("stop_sequences") {
        request.stop_sequences = string_list(&stop)?;
    }
    if let Some(user_id) = body
        .optional("metadata")
        .and_then(|metadata| metadata.optional("user_id"))
    {
        request.metadata.insert("user_id".into(), user_id.string()?);
    }
    if marked > MAX_CACHE_MARKS {
        // As the API answers it: every block with a breakpoint counts.
        return Err(format!(
            "A maximum of {MAX_CACHE_MARKS} blocks with cache_control may be provided. Found \
             {marked}."
        ));
    }
    let stream = body
        .optional("stream")
        .map(|s| s.bool())
        .transpose()?
        .unwrap_or(false);
    Ok((request, stream))
}

/// Whether a block (or a tool) carries a cache breakpoint.
fn cached(block: &Field<'_>) -> bool {
    block.optional("cache_control").is_some()
}

/// One content block; `None` for block types the simulation has no use for.
fn parse_block(block: &Field<'_>) -> Result<Option<ContentBlock>, String> {
    Ok(Some(match block.required("type")?.string()?.as_str() {
        "text" => ContentBlock::text(block.required("text")?.string()?),
        "image" => {
            let source = block.required("source")?;
            ContentBlock::Image {
                source: match source.required("type")?.string()?.as_str() {
                    "base64" => ImageSource::Base64 {
                        media_type: source.required("media_type")?.string()?,
                        data: source.required("data")?.string()?,
                    },
                    _ => ImageSource::Url {
                        url: source.required("url")?.string()?,
                    },
                },
            }
        }
        "tool_use" => ContentBlock::ToolUse(ToolCall {
            id: block.required("id")?.string()?,
            name: block.required("name")?.string()?,
            input: block.required("input")?.value.clone(),
        }),
        "tool_result" => {
            let content = match block.optional("content") {
                None => String::new(),
                Some(content) => match content.value {
                    Value::String(text) => text.clone(),
                    _ => content
                        .array()?
                        .into_iter()
                        .filter_map(|part| part.optional("text").map(|text| text.string()))
                        .collect::<Result<Vec<_>, _>>()?
                        .join("\n"),
                },
            };
            ContentBlock::ToolResult {
                tool_use_id: block.required("tool_use_id")?.string()?,
                content,
                is_error: block
                    .optional("is_error")
                    .map(|e| e.bool())
                    .transpose()?
                    .unwrap_or(false),
            }
        }
        "thinking" => ContentBlock::Thinking {
            text: block.required("thinking")?.string()?,
            signature: block
                .optional("signature")
                .map(|s| s.string())
                .transpose()?,
        },
        "redacted_thinking" => ContentBlock::RedactedThinking {
            data: block.required("data")?.string()?,
        },
        _ => return Ok(None),
    }))
}

fn message_id(answer: &Answer, call: u64) -> String {
    answer
        .response
        .id
        .clone()
        .unwrap_or_else(|| format!("msg_sim_{call}"))
}

/// The signature a thinking block carries on the wire: Anthropic signs every one.
fn signature(signature: Option<&String>) -> String {
    signature
        .cloned()
        .unwrap_or_else(|| "sim-signature".to_owned())
}

fn usage_json(usage: &Usage, output_tokens: u64) -> Value {
    json!({
        "input_tokens": usage.input_tokens,
        "cache_creation_input_tokens": usage.cache_creation_input_tokens,
        "cache_read_input_tokens": usage.cache_read_input_tokens,
        "output_tokens": output_tokens,
    })
}

/// The `input` of a tool call on the wire: raw argument text, when injected, goes out as a
/// string, since a non-streamed message has no other place for text that is not JSON.
fn tool_input(answer: &Answer, position: usize, input: &Value) -> Value {
    match answer.raw_arguments.get(&position) {
        Some(raw) if serde_json::from_str::<Value>(raw).is_err() => Value::String(raw.clone()),
        _ => input.clone(),
    }
}

/// A non-streamed message.
pub(crate) fn message(answer: &Answer, call: u64) -> Value {
    let response = &answer.response;
    let mut position = 0;
    let content: Vec<Value> = response
        .content
        .iter()
        .filter_map(|block| {
            Some(match block {
                ContentBlock::Text { text } => json!({"type": "text", "text": text}),
                ContentBlock::Thinking {
                    text,
                    signature: signed,
                } => json!({
                    "type": "thinking", "thinking": text, "signature": signature(signed.as_ref()),
                }),
                ContentBlock::RedactedThinking { data } => {
                    json!({"type": "redacted_thinking", "data": data})
                }
                ContentBlock::ToolUse(call) => {
                    let input = tool_input(answer, position, &call.input);
                    position += 1;
                    json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input})
                }
                ContentBlock::Image { .. } | ContentBlock::ToolResult { .. } => return None,
            })
        })
        .collect();
    json!({
        "id": message_id(answer, call),
        "type": "message",
        "role": "assistant",
        "model": response.model,
        "content": content,
        "stop_reason": response.stop_reason.as_str(),
        "stop_sequence": null,
        "usage": usage_json(&response.usage, response.usage.output_tokens),
    })
}

/// The event stream of a message, as `event:` / `data:` pairs; an interrupted answer ends
/// with an `error` event half way through its content.
pub(crate) fn stream(answer: &Answer, call: u64) -> Vec<Sse> {
    let response = &answer.response;
    let mut events = vec![Sse::named(
        "message_start",
        json!({"type": "message_start", "message": {
            "id": message_id(answer, call),
            "type": "message",
            "role": "assistant",
            "model": response.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": usage_json(&response.usage, 1),
        }}),
    )];
    let mut body = Vec::new();
    let mut position = 0;
    let mut index = 0;
    for block in &response.content {
        let start = |content_block: Value| {
            Sse::named(
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": content_block}),
            )
        };
        let delta = |delta: Value| {
            Sse::named(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            )
        };
        match block {
            ContentBlock::Text { text } => {
                body.push(start(json!({"type": "text", "text": ""})));
                body.extend(
                    word_pieces(text)
                        .map(|piece| delta(json!({"type": "text_delta", "text": piece}))),
                );
            }
            ContentBlock::Thinking {
                text,
                signature: signed,
            } => {
                body.push(start(
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                ));
                body.extend(
                    word_pieces(text)
                        .map(|piece| delta(json!({"type": "thinking_delta", "thinking": piece}))),
                );
                body.push(delta(json!({
                    "type": "signature_delta", "signature": signature(signed.as_ref()),
                })));
            }
            ContentBlock::RedactedThinking { data } => {
                body.push(start(json!({"type": "redacted_thinking", "data": data})));
            }
            ContentBlock::ToolUse(tool) => {
                body.push(start(json!({
                    "type": "tool_use", "id": tool.id, "name": tool.name, "input": {},
                })));
                let arguments = answer
                    .raw_arguments
                    .get(&position)
                    .cloned()
                    .unwrap_or_else(|| tool.input.to_string());
                position += 1;
                body.push(delta(
                    json!({"type": "input_json_delta", "partial_json": ""}),
                ));
                body.extend(byte_pieces(&arguments, 16).map(|piece| {
                    delta(json!({"type": "input_json_delta", "partial_json": piece}))
                }));
            }
            ContentBlock::Image { .. } | ContentBlock::ToolResult { .. } => continue,
        }
        body.push(Sse::named(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        index += 1;
    }
    // Anthropic pings once early, after the first block starts.
    if !body.is_empty() {
        body.insert(1, Sse::named("ping", json!({"type": "ping"})));
    }
    if let Some(failure) = &answer.interrupted {
        events.extend(events_before_interruption(body));
        let (_, _, error) = error_body(failure);
        events.push(Sse::named("error", error));
        return events;
    }
    events.extend(body);
    events.push(Sse::named(
        "message_delta",
        json!({
            "type": "message_delta",
            "delta": {"stop_reason": response.stop_reason.as_str(), "stop_sequence": null},
            "usage": {"output_tokens": response.usage.output_tokens},
        }),
    ));
    events.push(Sse::named("message_stop", json!({"type": "message_stop"})));
    events
}

/// Status, extra headers and body of a failed call.
pub(crate) fn error_body(failure: &Failure) -> (u16, Vec<(String, String)>, Value) {
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
    (status, headers, error_json(kind, message))
}

pub(crate) fn error_json(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// Response headers every answer carries.
pub(crate) fn headers(call: u64) -> Vec<(String, String)> {
    vec![("request-id".to_owned(), format!("req_sim_{call}"))]
}
