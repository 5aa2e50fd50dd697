//! The OpenAI Responses API as the fake server speaks it: reading `POST /v1/responses` bodies
//! (instructions and input items) and writing response objects and their named event streams,
//! sequence numbers included, as OpenAI frames them, all with llm-core's
//! `wire::responses` types. Errors are chat completions' objects.
//!
//! The server stores nothing, as with `store: false`: a conversation comes whole in `input`,
//! and an `item_reference` or `previous_response_id` is nothing it can resolve. A thinking
//! block goes out as a reasoning item whose id and encrypted content come from its signature
//! when llm-core made it ([`ReasoningItem`]), else are minted, so the item a client sends
//! back reads as the same block.

use llm_core::wire::responses::{
    ContentAt, EchoedReasoning, IncompleteDetails, InputContent, InputItem, InputRole,
    InputTokensDetails, ItemAt, OutputContent, OutputItem, OutputTokensDetails, ResponseEvent,
    ResponseObject, ResponseUsage, ResponsesRequest, StreamEvent, SummaryAt, SummaryText,
    TextFormat, TextOptions, TextOrBlocks, ToolChoiceParam, ToolParam,
};
use llm_core::{
    ContentBlock, Message, ReasoningItem, Request, ResponseSchema, Role, StopReason, Tool,
    ToolCall, ToolChoice, Usage,
};
use serde::Deserialize;
use serde_json::{Value, json};

use super::breakpoints::Marked;
use super::openai::{Options, arguments, error_object};
use super::wire::{Sse, at, holds_tool_results, image_source, to_json, tool_arguments};
use crate::reply::{Answer, byte_pieces, half_way, word_pieces};

/// Reads a Responses API body, as sent. Instructions and system or developer messages become
/// the system prompt; function call outputs become tool results of the user message they
/// start.
pub(crate) fn parse_body(body: &[u8]) -> Result<(Request, Options), String> {
    let value: Value =
        serde_json::from_slice(body).map_err(|err| format!("the body is not json: {err}"))?;
    let wire = ResponsesRequest::deserialize(&value).map_err(|err| fault(body, &value, &err))?;
    let marked = Marked::read(&value, "input");
    let mut request = Request::new(wire.model);
    request.max_tokens = wire.max_output_tokens.unwrap_or(0);
    let mut system: Vec<String> = wire.instructions.into_iter().collect();
    match wire.input {
        None => {}
        Some(TextOrBlocks::Text(text)) => request.messages.push(Message::user(text)),
        Some(TextOrBlocks::Blocks(items)) => {
            for (at, item) in items.into_iter().enumerate() {
                let systems = system.len();
                read_item(item, &mut request.messages, &mut system);
                marked.note(at, system.len() > systems, &mut request);
            }
        }
    }
    marked.finish(&mut request);
    if !system.is_empty() {
        request.system = Some(system.join("\n\n"));
    }
    request.tools = wire
        .tools
        .into_iter()
        .filter_map(|tool| match tool {
            ToolParam::Function {
                name,
                description,
                parameters,
                ..
            } => Some(Tool {
                name,
                description: description.unwrap_or_default(),
                input_schema: parameters.unwrap_or_else(|| json!({"type": "object"})),
            }),
            // Built-in tools (web search, file search, ...) are nothing the simulation runs.
            ToolParam::Other => None,
        })
        .collect();
    request.tool_choice = wire.tool_choice.map(|choice| match choice {
        ToolChoiceParam::Auto => ToolChoice::Auto,
        ToolChoiceParam::Required => ToolChoice::Any,
        ToolChoiceParam::None => ToolChoice::None,
        ToolChoiceParam::Function { name } => ToolChoice::Tool { name },
    });
    request.temperature = wire.temperature;
    request.top_p = wire.top_p;
    if let Some(TextFormat::JsonSchema { name, schema, .. }) =
        wire.text.and_then(|text| text.format)
    {
        request.response_schema = Some(ResponseSchema { name, schema });
    }
    request.cache_key = wire.prompt_cache_key;
    request.service_tier = super::openai::service_tier(wire.service_tier.as_deref())?;
    if let Some(user) = wire.user {
        request.metadata.insert("user_id".into(), user);
    }
    // A stream always ends with the whole response, usage included.
    let options = Options {
        stream: wire.stream,
        include_usage: true,
    };
    Ok((request, options))
}

const ITEM_TYPES: [&str; 4] = [
    "message",
    "function_call",
    "function_call_output",
    "reasoning",
];
const ROLES: [&str; 4] = ["system", "developer", "user", "assistant"];

/// What is wrong with a body that does not decode, said as the API says it: the input item,
/// content part, tool, tool choice or text format at fault by its path
/// (`input[0].content[1]`), which each decode on their own; else a missing model, else
/// serde's message with its line and column.
fn fault(body: &[u8], value: &Value, err: &serde_json::Error) -> String {
    if !value.is_object() {
        return "the body must be a json object".to_owned();
    }
    let list = |key| {
        value
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
    };
    for (index, item) in list("input").enumerate() {
        if let Err(err) = InputItem::deserialize(item) {
            return item_fault(&format!("input[{index}]"), item, &err);
        }
    }
    for (index, tool) in list("tools").enumerate() {
        if let Err(err) = ToolParam::deserialize(tool) {
            return at(&format!("tools[{index}]"), &err);
        }
    }
    let set = |pointer| value.pointer(pointer).filter(|value| !value.is_null());
    if let Some(Err(err)) = set("/tool_choice").map(ToolChoiceParam::deserialize) {
        return at("tool_choice", &err);
    }
    if let Some(Err(err)) = set("/text/format").map(TextFormat::deserialize) {
        return at("text.format", &err);
    }
    if set("/model").is_none() {
        return "model: field required".to_owned();
    }
    // Decoded again from the bytes, whose errors tell the line and column.
    serde_json::from_slice::<ResponsesRequest>(body)
        .err()
        .map_or_else(|| err.to_string(), |err| err.to_string())
}

/// What is wrong with an input item: a content part (or output part) of it, an item type or
/// role the server does not take, or the item's own error.
fn item_fault(path: &str, item: &Value, err: &serde_json::Error) -> String {
    for key in ["content", "output"] {
        let parts = item
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        for (index, part) in parts.enumerate() {
            if let Err(err) = InputContent::deserialize(part) {
                return at(&format!("{path}.{key}[{index}]"), &err);
            }
        }
    }
    let kind = item.get("type").and_then(Value::as_str);
    if let Some(kind) = kind.filter(|kind| !ITEM_TYPES.contains(kind)) {
        return format!(
            "{path}: unexpected item type `{kind}` (this server stores nothing to refer to), \
             expected message, function_call, function_call_output or reasoning"
        );
    }
    let message = kind.is_none_or(|kind| kind == "message");
    let role = item.get("role").and_then(Value::as_str);
    if let Some(role) = role.filter(|role| message && !ROLES.contains(role)) {
        return format!(
            "{path}: unexpected role `{role}`, expected system, developer, user or assistant"
        );
    }
    at(path, err)
}

/// Adds one input item to the conversation: the assistant's items join its last message, a
/// user's text joins the tool results just before it.
fn read_item(item: InputItem, messages: &mut Vec<Message>, system: &mut Vec<String>) {
    let (role, blocks) = match item {
        InputItem::Message { role, content } => match role {
            InputRole::System | InputRole::Developer => {
                system.push(text_of(content));
                return;
            }
            InputRole::User => (Role::User, user_content(content)),
            InputRole::Assistant => {
                let text = text_of(content);
                let blocks = if text.is_empty() {
                    Vec::new()
                } else {
                    vec![ContentBlock::text(text)]
                };
                (Role::Assistant, blocks)
            }
        },
        InputItem::FunctionCall {
            call_id,
            name,
            arguments,
        } => {
            let call = ToolCall {
                id: call_id,
                name,
                input: tool_arguments(arguments),
            };
            (Role::Assistant, vec![ContentBlock::ToolUse(call)])
        }
        InputItem::FunctionCallOutput { call_id, output } => {
            let result = ContentBlock::ToolResult {
                tool_use_id: call_id,
                content: text_of(output),
                is_error: false,
            };
            (Role::User, vec![result])
        }
        InputItem::Reasoning {
            id,
            summary,
            encrypted_content,
        } => {
            let summary: Vec<String> = summary.into_iter().map(|part| part.text).collect();
            let reasoning = ReasoningItem {
                id,
                encrypted_content,
            };
            let thinking = ContentBlock::Thinking {
                text: summary.join("\n\n"),
                signature: Some(reasoning.signature()),
            };
            (Role::Assistant, vec![thinking])
        }
    };
    match messages.last_mut() {
        Some(last) if last.role == Role::Assistant && role == Role::Assistant => {
            last.content.extend(blocks);
        }
        Some(last) if last.role == Role::User && role == Role::User && holds_tool_results(last) => {
            last.content.extend(blocks);
        }
        _ => messages.push(Message {
            role,
            content: blocks,
        }),
    }
}

/// Text content: a string, or the text of its text parts, one per line.
fn text_of(content: TextOrBlocks<InputContent>) -> String {
    content.joined_text(|part| match part {
        InputContent::InputText { text } | InputContent::OutputText { text } => Some(text),
        _ => None,
    })
}

fn user_content(content: TextOrBlocks<InputContent>) -> Vec<ContentBlock> {
    let parts = match content {
        TextOrBlocks::Text(text) => return vec![ContentBlock::text(text)],
        TextOrBlocks::Blocks(parts) => parts,
    };
    parts
        .into_iter()
        .filter_map(|part| match part {
            InputContent::InputText { text } => Some(ContentBlock::text(text)),
            // An image by file id is nothing the simulation reads.
            InputContent::InputImage {
                image_url: Some(url),
                ..
            } => Some(ContentBlock::Image {
                source: image_source(url),
            }),
            // Files, audio, and the assistant's parts: nothing the simulation reads here.
            _ => None,
        })
        .collect()
}

/// One output item of an answer, before it is framed whole or streamed.
enum Item {
    Reasoning {
        id: String,
        summary: String,
        encrypted_content: String,
    },
    Message {
        id: String,
        text: String,
        refusal: bool,
    },
    Call {
        id: String,
        call_id: String,
        name: String,
        arguments: String,
    },
}

impl Item {
    /// The item as `response.output_item.added` shows it (`done` false: nothing generated
    /// yet) or as the finished response holds it.
    fn wire(&self, done: bool) -> OutputItem {
        let status = if done { "completed" } else { "in_progress" };
        match self {
            Self::Reasoning {
                id,
                summary,
                encrypted_content,
            } => OutputItem::Reasoning {
                id: id.clone(),
                summary: if done && !summary.is_empty() {
                    vec![SummaryText::new(summary.as_str())]
                } else {
                    Vec::new()
                },
                encrypted_content: done.then(|| encrypted_content.clone()),
            },
            Self::Message { id, text, refusal } => OutputItem::Message {
                id: id.clone(),
                status: status.to_owned(),
                role: "assistant".to_owned(),
                content: if done {
                    vec![part(text, *refusal)]
                } else {
                    Vec::new()
                },
            },
            Self::Call {
                id,
                call_id,
                name,
                arguments,
            } => OutputItem::FunctionCall {
                id: id.clone(),
                call_id: call_id.clone(),
                name: name.clone(),
                arguments: Value::String(if done {
                    arguments.clone()
                } else {
                    String::new()
                }),
                status: status.to_owned(),
            },
        }
    }
}

/// A message's content part: its text, or a refusal.
fn part(text: &str, refusal: bool) -> OutputContent {
    if refusal {
        OutputContent::Refusal {
            refusal: text.to_owned(),
        }
    } else {
        OutputContent::OutputText {
            text: text.to_owned(),
            annotations: Vec::new(),
            logprobs: Vec::new(),
        }
    }
}

fn items(answer: &Answer, call: u64) -> Vec<Item> {
    let response = &answer.response;
    let refusal = response.stop_reason == StopReason::Refusal;
    let mut tools = 0;
    let mut items = Vec::new();
    for (position, block) in response.content.iter().enumerate() {
        let minted = |prefix: &str| format!("{prefix}_sim{call}_{position}");
        items.push(match block {
            ContentBlock::Thinking { text, signature } => {
                let known = signature.as_deref().and_then(ReasoningItem::from_signature);
                let (id, encrypted_content) = match known {
                    Some(item) => (item.id, item.encrypted_content),
                    None => (minted("rs"), signature.clone()),
                };
                Item::Reasoning {
                    id,
                    summary: text.clone(),
                    encrypted_content: encrypted_content
                        .unwrap_or_else(|| format!("sim-encrypted-reasoning-{call}-{position}")),
                }
            }
            ContentBlock::Text { text } => Item::Message {
                id: minted("msg"),
                text: text.clone(),
                refusal,
            },
            ContentBlock::ToolUse(tool) => {
                tools += 1;
                Item::Call {
                    id: minted("fc"),
                    call_id: tool.id.clone(),
                    name: tool.name.clone(),
                    arguments: arguments(answer, tools - 1, &tool.input),
                }
            }
            _ => continue,
        });
    }
    items
}

fn wire_usage(usage: &Usage) -> ResponseUsage {
    // OpenAI counts cached input inside input_tokens.
    let input = usage.total_input();
    ResponseUsage {
        input_tokens: input,
        input_tokens_details: Some(InputTokensDetails {
            cached_tokens: Some(usage.cache_read_input_tokens),
            cache_write_tokens: Some(usage.cache_creation_input_tokens),
        }),
        output_tokens: usage.output_tokens,
        output_tokens_details: Some(OutputTokensDetails {
            reasoning_tokens: Some(usage.reasoning_tokens),
        }),
        total_tokens: input + usage.output_tokens,
    }
}

/// The response object: `done` with its output and usage, else as it starts.
fn object(answer: &Answer, call: u64, created: u64, done: bool) -> ResponseObject {
    let response = &answer.response;
    let incomplete = response.stop_reason == StopReason::MaxTokens;
    let (status, incomplete_details) = match (done, incomplete) {
        (false, _) => ("in_progress", None),
        (true, true) => (
            "incomplete",
            Some(IncompleteDetails {
                reason: Some("max_output_tokens".to_owned()),
            }),
        ),
        (true, false) => ("completed", None),
    };
    let (output, usage) = if done {
        let output = items(answer, call).iter().map(|i| i.wire(true)).collect();
        (output, Some(wire_usage(&response.usage)))
    } else {
        (Vec::new(), None)
    };
    ResponseObject {
        id: Some(format!("resp_sim{call}")),
        object: "response".to_owned(),
        created_at: created,
        status: Some(status.to_owned()),
        error: None,
        incomplete_details,
        model: Some(response.model.clone()),
        output,
        usage,
        service_tier: Some(super::openai::tier_of(response)),
        instructions: None,
        max_output_tokens: None,
        metadata: Default::default(),
        parallel_tool_calls: true,
        previous_response_id: None,
        reasoning: EchoedReasoning::default(),
        store: false,
        temperature: 1.0,
        text: Some(TextOptions {
            format: Some(TextFormat::Text),
        }),
        tool_choice: Some(ToolChoiceParam::Auto),
        tools: Vec::new(),
        top_p: 1.0,
        truncation: "disabled".to_owned(),
    }
}

/// A whole response object.
pub(crate) fn response(answer: &Answer, call: u64, created: u64) -> Value {
    to_json(&object(answer, call, created, true))
}

/// The named events of a streamed response, ending with `response.completed` (or
/// `response.incomplete`); an interrupted answer ends with an `error` event half way through
/// its deltas instead.
pub(crate) fn stream(answer: &Answer, call: u64, created: u64) -> Vec<Sse> {
    let mut events = vec![
        ResponseEvent::Created {
            response: object(answer, call, created, false),
        },
        ResponseEvent::InProgress {
            response: object(answer, call, created, false),
        },
    ];
    let mut body = Vec::new();
    for (index, item) in items(answer, call).iter().enumerate() {
        item_events(item, index as u64, &mut body);
    }
    if let Some(failure) = &answer.interrupted {
        events.extend(half_way(body, |event| event.name().ends_with(".delta")));
        let (_, _, error) = error_object(failure);
        let code = error
            .code
            .as_ref()
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or(error.kind);
        events.push(ResponseEvent::Error {
            code,
            message: error.message,
            param: None,
            error: None,
        });
    } else {
        events.extend(body);
        let response = object(answer, call, created, true);
        events.push(if answer.response.stop_reason == StopReason::MaxTokens {
            ResponseEvent::Incomplete { response }
        } else {
            ResponseEvent::Completed { response }
        });
    }
    events
        .into_iter()
        .enumerate()
        .map(|(sequence, event)| {
            let name = event.name();
            let event = StreamEvent {
                sequence_number: sequence as u64,
                event,
            };
            Sse::named(name, to_json(&event))
        })
        .collect()
}

/// The events that build one output item: added, its parts and deltas, done.
fn item_events(item: &Item, output_index: u64, out: &mut Vec<ResponseEvent>) {
    out.push(ResponseEvent::OutputItemAdded {
        output_index,
        item: item.wire(false),
    });
    match item {
        Item::Reasoning { id, summary, .. } if !summary.is_empty() => {
            let at = SummaryAt {
                item_id: id.clone(),
                output_index,
                summary_index: 0,
            };
            out.push(ResponseEvent::ReasoningSummaryPartAdded {
                at: at.clone(),
                part: SummaryText::new(""),
            });
            out.extend(word_pieces(summary).map(|piece| {
                ResponseEvent::ReasoningSummaryTextDelta {
                    at: at.clone(),
                    delta: piece.to_owned(),
                }
            }));
            out.push(ResponseEvent::ReasoningSummaryTextDone {
                at: at.clone(),
                text: summary.clone(),
            });
            out.push(ResponseEvent::ReasoningSummaryPartDone {
                at,
                part: SummaryText::new(summary.as_str()),
            });
        }
        Item::Reasoning { .. } => {}
        Item::Message { id, text, refusal } => {
            let at = ContentAt {
                item_id: id.clone(),
                output_index,
                content_index: 0,
            };
            out.push(ResponseEvent::ContentPartAdded {
                at: at.clone(),
                part: part("", *refusal),
            });
            for piece in word_pieces(text) {
                let (at, delta) = (at.clone(), piece.to_owned());
                out.push(if *refusal {
                    ResponseEvent::RefusalDelta { at, delta }
                } else {
                    ResponseEvent::OutputTextDelta {
                        at,
                        delta,
                        logprobs: Vec::new(),
                    }
                });
            }
            out.push(if *refusal {
                ResponseEvent::RefusalDone {
                    at: at.clone(),
                    refusal: text.clone(),
                }
            } else {
                ResponseEvent::OutputTextDone {
                    at: at.clone(),
                    text: text.clone(),
                }
            });
            out.push(ResponseEvent::ContentPartDone {
                at,
                part: part(text, *refusal),
            });
        }
        Item::Call {
            id,
            name,
            arguments,
            ..
        } => {
            let at = ItemAt {
                item_id: id.clone(),
                output_index,
            };
            out.extend(byte_pieces(arguments, 16).map(|piece| {
                ResponseEvent::FunctionCallArgumentsDelta {
                    at: at.clone(),
                    delta: piece.to_owned(),
                }
            }));
            out.push(ResponseEvent::FunctionCallArgumentsDone {
                at,
                arguments: arguments.clone(),
                name: name.clone(),
            });
        }
    }
    out.push(ResponseEvent::OutputItemDone {
        output_index,
        item: item.wire(true),
    });
}
