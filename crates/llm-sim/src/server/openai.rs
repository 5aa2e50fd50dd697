//! OpenAI chat completions as the fake server speaks them: reading `POST
//! /v1/chat/completions` bodies and writing completions, chunk streams (with the final usage
//! chunk when `stream_options.include_usage` asks) and errors framed as OpenAI frames them.

use llm_core::wire::openai::{
    ChatChunk, ChatCompletion, ChatMessage, ChatRequest, ChatToolChoice, ChatUsage, Choice,
    ChunkChoice, CompletionTokensDetails, ContentPart, Delta, ErrorBody, ErrorObject, FunctionCall,
    FunctionDelta, PromptTokensDetails, ResponseFormat, ResponseMessage, TextOrBlocks,
    ToolCall as WireToolCall, ToolCallDelta,
};
use llm_core::{
    ContentBlock, Message, Request, Role, StopReason, Tool, ToolCall, ToolChoice, Usage,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::breakpoints::Marked;
use super::wire::{
    Sse, events_before_interruption, holds_tool_results, image_source, retry_after, to_json,
    tool_arguments,
};
use crate::reply::{Answer, Failure, byte_pieces, word_pieces};

/// What a request asks of the answer besides its content.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    pub stream: bool,
    pub include_usage: bool,
}

/// Reads a chat completions body, as sent. System and developer messages become the system
/// prompt; `tool` messages become tool results of the user message they start.
pub(crate) fn parse_body(body: &[u8]) -> Result<(Request, Options), String> {
    let wire = serde_json::from_slice(body).map_err(|err| match err.classify() {
        serde_json::error::Category::Data => err.to_string(),
        _ => format!("the body is not json: {err}"),
    })?;
    let value = serde_json::from_slice(body).unwrap_or(Value::Null);
    from_wire(wire, &Marked::read(&value, "messages"))
}

/// Reads a chat completions body already parsed, as a batch holds one.
pub(crate) fn parse_request(body: &Value) -> Result<(Request, Options), String> {
    let wire = ChatRequest::deserialize(body).map_err(|err| err.to_string())?;
    from_wire(wire, &Marked::read(body, "messages"))
}

fn from_wire(body: ChatRequest, marked: &Marked) -> Result<(Request, Options), String> {
    let mut request = Request::new(body.model);
    request.max_tokens = body.max_completion_tokens.or(body.max_tokens).unwrap_or(0);
    let mut system: Vec<String> = Vec::new();
    for (item, message) in body.messages.into_iter().enumerate() {
        let is_system = matches!(
            message,
            ChatMessage::System { .. } | ChatMessage::Developer { .. }
        );
        match message {
            ChatMessage::System { content } | ChatMessage::Developer { content } => {
                system.push(text_of(content));
            }
            ChatMessage::User { content } => {
                let content = user_content(content);
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
            ChatMessage::Assistant {
                content: text,
                tool_calls,
            } => {
                let mut content = Vec::new();
                if let Some(text) = text.map(text_of).filter(|text| !text.is_empty()) {
                    content.push(ContentBlock::text(text));
                }
                for call in tool_calls {
                    let input = match call.function.arguments {
                        Value::String(arguments) => tool_arguments(arguments),
                        other => other,
                    };
                    content.push(ContentBlock::ToolUse(ToolCall {
                        id: call.id.unwrap_or_default(),
                        name: call.function.name,
                        input,
                    }));
                }
                request.messages.push(Message {
                    role: Role::Assistant,
                    content,
                });
            }
            ChatMessage::Tool {
                tool_call_id,
                content,
            } => {
                let result = ContentBlock::ToolResult {
                    tool_use_id: tool_call_id,
                    content: text_of(content),
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
        }
        marked.note(item, is_system, &mut request);
    }
    marked.finish(&mut request);
    if !system.is_empty() {
        request.system = Some(system.join("\n\n"));
    }
    request.tools = body
        .tools
        .into_iter()
        .map(|tool| Tool {
            name: tool.function.name,
            description: tool.function.description.unwrap_or_default(),
            input_schema: tool
                .function
                .parameters
                .unwrap_or_else(|| json!({"type": "object"})),
        })
        .collect();
    request.tool_choice = body.tool_choice.map(|choice| match choice {
        ChatToolChoice::Auto => ToolChoice::Auto,
        ChatToolChoice::Required => ToolChoice::Any,
        ChatToolChoice::None => ToolChoice::None,
        ChatToolChoice::Function { name } => ToolChoice::Tool { name },
    });
    request.temperature = body.temperature;
    request.top_p = body.top_p;
    request.stop_sequences = body.stop;
    if let Some(ResponseFormat::JsonSchema { json_schema }) = body.response_format {
        request.response_schema = Some(llm_core::ResponseSchema {
            name: json_schema.name,
            schema: json_schema.schema,
        });
    }
    request.cache_key = body.prompt_cache_key;
    request.service_tier = service_tier(body.service_tier.as_deref())?;
    if let Some(user) = body.user {
        request.metadata.insert("user_id".into(), user);
    }
    let options = Options {
        stream: body.stream,
        include_usage: body
            .stream_options
            .is_some_and(|options| options.include_usage),
    };
    Ok((request, options))
}

/// Text content: a string, or the text of its text parts, one per line.
fn text_of(content: TextOrBlocks<ContentPart>) -> String {
    content.joined_text(|part| match part {
        ContentPart::Text { text } => Some(text),
        _ => None,
    })
}

fn user_content(content: TextOrBlocks<ContentPart>) -> Vec<ContentBlock> {
    let parts = match content {
        TextOrBlocks::Text(text) => return vec![ContentBlock::text(text)],
        TextOrBlocks::Blocks(parts) => parts,
    };
    parts
        .into_iter()
        .filter_map(|part| match part {
            ContentPart::Text { text } => Some(ContentBlock::text(text)),
            ContentPart::ImageUrl { image_url } => Some(ContentBlock::Image {
                source: image_source(image_url.url),
            }),
            // Audio and files: nothing the simulation reads.
            ContentPart::Unknown => None,
        })
        .collect()
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

fn wire_usage(usage: &Usage) -> ChatUsage {
    // OpenAI counts cached input inside prompt_tokens.
    let prompt =
        usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
    ChatUsage {
        prompt_tokens: prompt,
        completion_tokens: usage.output_tokens,
        total_tokens: prompt + usage.output_tokens,
        prompt_tokens_details: Some(PromptTokensDetails {
            cached_tokens: Some(usage.cache_read_input_tokens),
            cache_write_tokens: Some(usage.cache_creation_input_tokens),
            audio_tokens: Some(0),
        }),
        completion_tokens_details: Some(CompletionTokensDetails {
            reasoning_tokens: Some(usage.reasoning_tokens),
            audio_tokens: Some(0),
            accepted_prediction_tokens: Some(0),
            rejected_prediction_tokens: Some(0),
        }),
    }
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
    let tool_calls: Vec<WireToolCall> = response
        .tool_calls()
        .iter()
        .enumerate()
        .map(|(position, tool)| WireToolCall {
            id: Some(tool.id.clone()),
            kind: "function".to_owned(),
            function: FunctionCall {
                name: tool.name.clone(),
                arguments: Value::String(arguments(answer, position, &tool.input)),
            },
        })
        .collect();
    let content = if text.is_empty() && !tool_calls.is_empty() {
        None
    } else {
        Some(text)
    };
    to_json(&ChatCompletion {
        id: Some(completion_id(call)),
        object: "chat.completion".to_owned(),
        created,
        model: Some(response.model.clone()),
        choices: vec![Choice {
            index: 0,
            message: ResponseMessage {
                role: "assistant".to_owned(),
                content,
                refusal: None,
                annotations: Vec::new(),
                tool_calls,
                reasoning_content: response.thinking(),
            },
            logprobs: None,
            finish_reason: Some(finish_reason(&response.stop_reason).to_owned()),
        }],
        usage: Some(wire_usage(&response.usage)),
        service_tier: Some(tier_of(response)),
        system_fingerprint: None,
    })
}

/// The chunk stream of a completion, ending with `[DONE]`; an interrupted answer ends with
/// an error object half way through its content instead.
pub(crate) fn stream(answer: &Answer, call: u64, created: u64, options: Options) -> Vec<Sse> {
    let response = &answer.response;
    let chunk = |choices: Vec<ChunkChoice>, usage: Option<ChatUsage>| {
        Sse::data(to_json(&ChatChunk {
            id: Some(completion_id(call)),
            object: "chat.completion.chunk".to_owned(),
            created,
            model: Some(response.model.clone()),
            service_tier: Some(tier_of(response)),
            system_fingerprint: None,
            choices,
            usage: options.include_usage.then_some(usage),
        }))
    };
    let delta = |delta: Delta, finish: Option<&str>| {
        chunk(
            vec![ChunkChoice {
                index: 0,
                delta: Some(delta),
                logprobs: None,
                finish_reason: finish.map(str::to_owned),
            }],
            None,
        )
    };
    let mut events = vec![delta(
        Delta {
            role: Some("assistant".to_owned()),
            content: Some(String::new()),
            refusal: Some(None),
            ..Delta::default()
        },
        None,
    )];
    let mut body = Vec::new();
    let mut position = 0;
    for block in &response.content {
        match block {
            ContentBlock::Text { text } => body.extend(word_pieces(text).map(|piece| {
                delta(
                    Delta {
                        content: Some(piece.to_owned()),
                        ..Delta::default()
                    },
                    None,
                )
            })),
            ContentBlock::Thinking { text, .. } => body.extend(word_pieces(text).map(|piece| {
                delta(
                    Delta {
                        reasoning_content: Some(piece.to_owned()),
                        ..Delta::default()
                    },
                    None,
                )
            })),
            ContentBlock::ToolUse(tool) => {
                let index = position;
                position += 1;
                let tool_delta = |call: ToolCallDelta| {
                    delta(
                        Delta {
                            tool_calls: vec![call],
                            ..Delta::default()
                        },
                        None,
                    )
                };
                body.push(tool_delta(ToolCallDelta {
                    index: Some(index as u64),
                    id: Some(tool.id.clone()),
                    kind: Some("function".to_owned()),
                    function: Some(FunctionDelta {
                        name: Some(tool.name.clone()),
                        arguments: Some(String::new()),
                    }),
                }));
                let arguments = arguments(answer, index, &tool.input);
                body.extend(byte_pieces(&arguments, 16).map(|piece| {
                    tool_delta(ToolCallDelta {
                        index: Some(index as u64),
                        function: Some(FunctionDelta {
                            name: None,
                            arguments: Some(piece.to_owned()),
                        }),
                        ..ToolCallDelta::default()
                    })
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
    events.push(delta(
        Delta::default(),
        Some(finish_reason(&response.stop_reason)),
    ));
    if options.include_usage {
        events.push(chunk(Vec::new(), Some(wire_usage(&response.usage))));
    }
    events.push(Sse::done());
    events
}

/// Status, extra headers and body of a failed call. Overloaded is 503 here: OpenAI has no 529.
pub(crate) fn error_body(failure: &Failure) -> (u16, Vec<(String, String)>, Value) {
    let (status, headers, error) = error_object(failure);
    (status, headers, to_json(&ErrorBody { error }))
}

/// Status, extra headers and error object of a failed call (the Responses API's stream
/// sends the object's fields in its `error` event).
pub(crate) fn error_object(failure: &Failure) -> (u16, Vec<(String, String)>, ErrorObject) {
    match failure {
        Failure::RateLimited {
            retry_after: after,
            message,
        } => (
            429,
            retry_after(*after),
            error(message, "requests", Some("rate_limit_exceeded")),
        ),
        Failure::Overloaded { message } => (503, Vec::new(), error(message, "server_error", None)),
        Failure::Server { status, message } => {
            (*status, Vec::new(), error(message, "server_error", None))
        }
        Failure::Timeout => (
            504,
            Vec::new(),
            error("request timed out", "server_error", None),
        ),
    }
}

/// The tier an answer reports: the one that processed it, `default` unless set.
pub(crate) fn tier_of(response: &llm_core::Response) -> String {
    response
        .service_tier
        .clone()
        .unwrap_or_else(|| "default".to_owned())
}

/// The tier a request's `service_tier` asks for, as the API reads the names it takes; the
/// simulation has one speed besides Flex, so `auto`, `scale` and `priority` are its default.
pub(crate) fn service_tier(name: Option<&str>) -> Result<Option<llm_core::ServiceTier>, String> {
    match name {
        None => Ok(None),
        Some("flex") => Ok(Some(llm_core::ServiceTier::Flex)),
        Some("auto" | "default" | "scale" | "priority") => Ok(Some(llm_core::ServiceTier::Default)),
        Some(other) => Err(format!(
            "Invalid value: '{other}'. Supported values are: 'auto', 'default', 'flex', 'scale' \
             and 'priority'."
        )),
    }
}

pub(crate) fn error_json(message: &str, kind: &str, code: Option<&str>) -> Value {
    to_json(&ErrorBody {
        error: error(message, kind, code),
    })
}

fn error(message: &str, kind: &str, code: Option<&str>) -> ErrorObject {
    ErrorObject {
        message: message.to_owned(),
        kind: Some(kind.to_owned()),
        param: None,
        code: code.map(|code| Value::String(code.to_owned())),
    }
}

/// Response headers every answer carries.
pub(crate) fn headers(call: u64) -> Vec<(String, String)> {
    vec![("x-request-id".to_owned(), format!("req_sim_{call}"))]
}
