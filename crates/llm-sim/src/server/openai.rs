//! OpenAI chat completions as the fake server speaks them: reading `POST
//! /v1/chat/completions` bodies and writing completions, chunk streams (with the final usage
//! chunk when `stream_options.include_usage` asks) and errors framed as OpenAI frames them.

use llm_core::{
    ContentBlock, ImageSource, Message, Request, Role, StopReason, ToolCall, ToolChoice, Usage,
};
use serde_json::{Value, json};

use super::wire::{
    Field, Sse, events_before_interruption, function_tool, holds_tool_results, retry_after,
    string_list, text_of, tool_choice_mode,
};
use crate::reply::{Answer, Failure, byte_pieces, word_pieces};

/// What a request asks of the answer besides its content.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    pub stream: bool,
    pub include_usage: bool,
}

/// Reads a chat completions body. System and developer messages become the system prompt;
/// `tool` messages become tool results of the user message they start.
pub(crate) fn parse_request(body: &Value) -> Result<(Request, Options), String> {
    let body = Field::root(body)?;
    let mut request = Request::new(body.required("model")?.string()?);
    let max_tokens = body
        .optional("max_completion_tokens")
        .or_else(|| body.optional("max_tokens"));
    request.max_tokens = max_tokens.map(|m| m.u32()).transpose()?.unwrap_or(0);
    let mut system: Vec<String> = Vec::new();
    for message in body.required("messages")?.array()? {
        let role = message.required("role")?.string()?;
        match role.as_str() {
            "system" | "developer" => system.push(text_of(&message.required("content")?)?),
            "user" => {
                let content = user_content(&message.required("content")?)?;
                match request.messages.last_mut() {
                    // Text after tool results belongs to the same turn.
                    Some(last) if last.role == Role::User && holds_tool_results(last) => {
                        last.content.extend(content);
                    }
                    _ => request.messages.push(Message {
                        role: Role::User,
                        content,
                    }),
                }
            }
            "assistant" => {
                let mut content = Vec::new();
                if let Some(text) = message.optional("content") {
                    let text = text_of(&text)?;
                    if !text.is_empty() {
                        content.push(ContentBlock::text(text));
                    }
                }
                if let Some(calls) = message.optional("tool_calls") {
                    for call in calls.array()? {
                        let function = call.required("function")?;
                        let arguments = function.required("arguments")?.string()?;
                        content.push(ContentBlock::ToolUse(ToolCall {
                            id: call.required("id")?.string()?,
                            name: function.required("name")?.string()?,
                            input: serde_json::from_str(&arguments)
                                .unwrap_or(Value::String(arguments)),
                        }));
                    }
                }
                request.messages.push(Message {
                    role: Role::Assistant,
                    content,
                });
            }
            "tool" => {
                let result = ContentBlock::ToolResult {
                    tool_use_id: message.required("tool_call_id")?.string()?,
                    content: text_of(&message.required("content")?)?,
                    is_error: false,
                };
                match request.messages.last_mut() {
                    Some(last) if last.role == Role::User && holds_tool_results(last) => {
                        last.content.push(result);
                    }
                    _ => request.messages.push(Message {
                        role: Role::User,
                        content: vec![result],
                    }),
                }
            }
            other => {
                return Err(message.error(&format!(
                    "role `{other}`, expected system, developer, user, assistant or tool"
                )));
            }
        }
    }
    if !system.is_empty() {
        request.system = Some(system.join("\n\n"));
    }
    if let Some(tools) = body.optional("tools") {
        for tool in tools.array()? {
            let function = tool.required("function")?;
            request.tools.push(function_tool(&function)?);
        }
    }
    if let Some(choice) = body.optional("tool_choice") {
        request.tool_choice = Some(match choice.value {
            Value::String(mode) => tool_choice_mode(&choice, mode)?,
            _ => ToolChoice::Tool {
                name: choice.required("function")?.required("name")?.string()?,
            },
        });
    }
    request.temperature = body.optional("temperature").map(|t| t.f32()).transpose()?;
    request.top_p = body.optional("top_p").map(|t| t.f32()).transpose()?;
    if let Some(stop) = body.optional("stop") {
        request.stop_sequences = string_list(&stop)?;
    }
    if let Some(format) = body.optional("response_format")
        && format.required("type")?.string()? == "json_schema"
    {
        let spec = format.required("json_schema")?;
        request.response_schema = Some(llm_core::ResponseSchema {
            name: spec.required("name")?.string()?,
            schema: spec.required("schema")?.value.clone(),
        });
    }
    if let Some(key) = body.optional("prompt_cache_key") {
        request.cache_key = Some(key.string()?);
    }
    if let Some(user) = body.optional("user") {
        request.metadata.insert("user_id".into(), user.string()?);
    }
    let options = Options {
        stream: body
            .optional("stream")
            .map(|s| s.bool())
            .transpose()?
            .unwrap_or(false),
        include_usage: body
            .optional("stream_options")
            .and_then(|options| options.optional("include_usage"))
            .map(|include| include.bool())
            .transpose()?
            .unwrap_or(false),
    };
    Ok((request, options))
}

fn user_content(field: &Field<'_>) -> Result<Vec<ContentBlock>, String> {
    if let Value::String(text) = field.value {
        return Ok(vec![ContentBlock::text(text.clone())]);
    }
    let mut blocks = Vec::new();
    for part in field.array()? {
        match part.required("type")?.string()?.as_str() {
            "text" => blocks.push(ContentBlock::text(part.required("text")?.string()?)),
            "image_url" => {
                let url = part.required("image_url")?.required("url")?.string()?;
                let source = match url
                    .strip_prefix("data:")
                    .and_then(|rest| rest.split_once(";base64,"))
                {
                    Some((media_type, data)) => ImageSource::Base64 {
                        media_type: media_type.to_owned(),
                        data: data.to_owned(),
                    },
                    None => ImageSource::Url { url },
                };
                blocks.push(ContentBlock::Image { source });
            }
            // Audio and files: nothing the simulation reads.
            _ => {}
        }
    }
    Ok(blocks)
}

fn finish_reason(reason: &StopReason) -> &'static str {
    match reason {
        StopReason::ToolUse => "tool_calls",
        StopReason::MaxTokens => "length",
        StopReason::Refusal => "content_filter",
        _ => "stop",
    }
}

fn completion_id(call: u64) -> String {
    format!("chatcmpl-sim{call}")
}

fn usage_json(usage: &Usage) -> Value {
    // OpenAI counts cached input inside prompt_tokens.
    let prompt =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    json!({
        "prompt_tokens": prompt,
        "completion_tokens": usage.output_tokens,
        "total_tokens": prompt + usage.output_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_input_tokens, "audio_tokens": 0},
        "completion_tokens_details": {
            "reasoning_tokens": usage.reasoning_tokens,
            "audio_tokens": 0,
            "accepted_prediction_tokens": 0,
            "rejected_prediction_tokens": 0,
        },
    })
}

pub(crate) fn arguments(answer: &Answer, position: usize, input: &Value) -> String {
    answer
        .raw_arguments
        .get(&position)
        .cloned()
        .unwrap_or_else(|| input.to_string())
}

/// A non-streamed completion. Thinking goes out as `reasoning_content`, as DeepSeek and
/// vLLM send it; OpenAI's own models never show it.
pub(crate) fn completion(answer: &Answer, call: u64, created: u64) -> Value {
    let response = &answer.response;
    let text = response.text();
    let tool_calls: Vec<Value> = response
        .tool_calls()
        .iter()
        .enumerate()
        .map(|(position, tool)| {
            json!({
                "id": tool.id,
                "type": "function",
                "function": {"name": tool.name, "arguments": arguments(answer, position, &tool.input)},
            })
        })
        .collect();
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() && !tool_calls.is_empty() { Value::Null } else { Value::String(text) },
        "refusal": null,
        "annotations": [],
    });
    if !tool_calls.is_empty() {
        message["tool_calls"] = Value::Array(tool_calls);
    }
    if let Some(thinking) = response.thinking() {
        message["reasoning_content"] = Value::String(thinking);
    }
    json!({
        "id": completion_id(call),
        "object": "chat.completion",
        "created": created,
        "model": response.model,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(&response.stop_reason),
        }],
        "usage": usage_json(&response.usage),
        "service_tier": "default",
        "system_fingerprint": null,
    })
}

/// The chunk stream of a completion, ending with `[DONE]`; an interrupted answer ends with
/// an error object half way through its content instead.
pub(crate) fn stream(answer: &Answer, call: u64, created: u64, options: Options) -> Vec<Sse> {
    let response = &answer.response;
    let chunk = |delta: Value, finish: Option<&str>| {
        let mut chunk = json!({
            "id": completion_id(call),
            "object": "chat.completion.chunk",
            "created": created,
            "model": response.model,
            "service_tier": "default",
            "system_fingerprint": null,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if options.include_usage {
            chunk["usage"] = Value::Null;
        }
        Sse::data(chunk)
    };
    let mut events = vec![chunk(
        json!({"role": "assistant", "content": "", "refusal": null}),
        None,
    )];
    let mut body = Vec::new();
    let mut position = 0;
    for block in &response.content {
        match block {
            ContentBlock::Text { text } => {
                body.extend(word_pieces(text).map(|piece| chunk(json!({"content": piece}), None)))
            }
            ContentBlock::Thinking { text, .. } => body.extend(
                word_pieces(text).map(|piece| chunk(json!({"reasoning_content": piece}), None)),
            ),
            ContentBlock::ToolUse(tool) => {
                let index = position;
                position += 1;
                body.push(chunk(
                    json!({"tool_calls": [{
                        "index": index,
                        "id": tool.id,
                        "type": "function",
                        "function": {"name": tool.name, "arguments": ""},
                    }]}),
                    None,
                ));
                let arguments = arguments(answer, index, &tool.input);
                body.extend(byte_pieces(&arguments, 16).map(|piece| {
                    chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        None,
                    )
                }));
            }
            _ => {}
        }
    }
    if let Some(failure) = &answer.interrupted {
        events.extend(events_before_interruption(body));
        let (_, _, error) = error_body(failure);
        events.push(Sse::data(error));
        return events;
    }
    events.extend(body);
    events.push(chunk(json!({}), Some(finish_reason(&response.stop_reason))));
    if options.include_usage {
        events.push(Sse::data(json!({
            "id": completion_id(call),
            "object": "chat.completion.chunk",
            "created": created,
            "model": response.model,
            "service_tier": "default",
            "system_fingerprint": null,
            "choices": [],
            "usage": usage_json(&response.usage),
        })));
    }
    events.push(Sse::done());
    events
}

/// Status, extra headers and body of a failed call. Overloaded is 503 here: OpenAI has no 529.
pub(crate) fn error_body(failure: &Failure) -> (u16, Vec<(String, String)>, Value) {
    match failure {
        Failure::RateLimited {
            retry_after: after,
            message,
        } => (
            429,
            retry_after(*after),
            error_json(message, "requests", Some("rate_limit_exceeded")),
        ),
        Failure::Overloaded { message } => {
            (503, Vec::new(), error_json(message, "server_error", None))
        }
        Failure::Server { status, message } => (
            *status,
            Vec::new(),
            error_json(message, "server_error", None),
        ),
        Failure::Timeout => (
            504,
            Vec::new(),
            error_json("request timed out", "server_error", None),
        ),
    }
}

pub(crate) fn error_json(message: &str, kind: &str, code: Option<&str>) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

/// Response headers every answer carries.
pub(crate) fn headers(call: u64) -> Vec<(String, String)> {
    vec![("x-request-id".to_owned(), format!("req_sim_{call}"))]
}
