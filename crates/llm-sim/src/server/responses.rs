//! The OpenAI Responses API as the fake server speaks it: reading `POST /v1/responses` bodies
//! (instructions and input items) and writing response objects and their named event streams,
//! sequence numbers included, as OpenAI frames them. Errors are chat completions' objects.
//!
//! The server stores nothing, as with `store: false`: a conversation comes whole in `input`,
//! and an `item_reference` or `previous_response_id` is nothing it can resolve. A thinking
//! block goes out as a reasoning item whose id and encrypted content come from its signature
//! when llm-core made it ([`ReasoningItem`]), else are minted, so the item a client sends
//! back reads as the same block.

use llm_core::{
    ContentBlock, ImageSource, Message, ReasoningItem, Request, ResponseSchema, Role, StopReason,
    ToolCall, ToolChoice, Usage,
};
use serde_json::{Value, json};

use super::openai::{Options, arguments, error_body};
use super::wire::{Field, Sse, function_tool, holds_tool_results, text_of, tool_choice_mode};
use crate::reply::{Answer, byte_pieces, half_way, word_pieces};

/// Reads a Responses API body. Instructions and system or developer messages become the
/// system prompt; function call outputs become tool results of the user message they start.
pub(crate) fn parse_request(body: &Value) -> Result<(Request, Options), String> {
    let body = Field::root(body)?;
    let mut request = Request::new(body.required("model")?.string()?);
    request.max_tokens = body
        .optional("max_output_tokens")
        .map(|m| m.u32())
        .transpose()?
        .unwrap_or(0);
    let mut system = Vec::new();
    if let Some(instructions) = body.optional("instructions") {
        system.push(instructions.string()?);
    }
    if let Some(input) = body.optional("input") {
        if let Value::String(text) = input.value {
            request.messages.push(Message::user(text.clone()));
        } else {
            for item in input.array()? {
                read_item(&item, &mut request.messages, &mut system)?;
            }
        }
    }
    if !system.is_empty() {
        request.system = Some(system.join("\n\n"));
    }
    if let Some(tools) = body.optional("tools") {
        for tool in tools.array()? {
            // Built-in tools (web search, file search, ...) are nothing the simulation runs.
            if tool.required("type")?.string()? != "function" {
                continue;
            }
            request.tools.push(function_tool(&tool)?);
        }
    }
    if let Some(choice) = body.optional("tool_choice") {
        request.tool_choice = Some(match choice.value {
            Value::String(mode) => tool_choice_mode(&choice, mode)?,
            _ => match choice.required("type")?.string()?.as_str() {
                "function" => ToolChoice::Tool {
                    name: choice.required("name")?.string()?,
                },
                other => {
                    return Err(choice.error(&format!("tool choice type `{other}`")));
                }
            },
        });
    }
    request.temperature = body.optional("temperature").map(|t| t.f32()).transpose()?;
    request.top_p = body.optional("top_p").map(|t| t.f32()).transpose()?;
    if let Some(format) = body
        .optional("text")
        .and_then(|text| text.optional("format"))
        && format.required("type")?.string()? == "json_schema"
    {
        request.response_schema = Some(ResponseSchema {
            name: format.required("name")?.string()?,
            schema: format.required("schema")?.value.clone(),
        });
    }
    if let Some(key) = body.optional("prompt_cache_key") {
        request.cache_key = Some(key.string()?);
    }
    if let Some(user) = body.optional("user") {
        request.metadata.insert("user_id".into(), user.string()?);
    }
    let stream = body
        .optional("stream")
        .map(|s| s.bool())
        .transpose()?
        .unwrap_or(false);
    // A stream always ends with the whole response, usage included.
    let options = Options {
        stream,
        include_usage: true,
    };
    Ok((request, options))
}

/// Adds one input item to the conversation: the assistant's items join its last message, a
/// user's text joins the tool results just before it.
fn read_item(
    item: &Field<'_>,
    messages: &mut Vec<Message>,
    system: &mut Vec<String>,
) -> Result<(), String> {
    // An item without a type is a message (the API's "easy" input message).
    let kind = match item.optional("type") {
        Some(kind) => kind.string()?,
        None => "message".to_owned(),
    };
    let (role, blocks) = match kind.as_str() {
        "message" => {
            let content = item.required("content")?;
            match item.required("role")?.string()?.as_str() {
                "system" | "developer" => {
                    system.push(text_of(&content)?);
                    return Ok(());
                }
                "user" => (Role::User, user_content(&content)?),
                "assistant" => {
                    let text = text_of(&content)?;
                    let blocks = if text.is_empty() {
                        Vec::new()
                    } else {
                        vec![ContentBlock::text(text)]
                    };
                    (Role::Assistant, blocks)
                }
                other => {
                    return Err(item.error(&format!(
                        "role `{other}`, expected system, developer, user or assistant"
                    )));
                }
            }
        }
        "function_call" => {
            let arguments = item.required("arguments")?.string()?;
            let call = ToolCall {
                id: item.required("call_id")?.string()?,
                name: item.required("name")?.string()?,
                input: serde_json::from_str(&arguments).unwrap_or(Value::String(arguments)),
            };
            (Role::Assistant, vec![ContentBlock::ToolUse(call)])
        }
        "function_call_output" => {
            let result = ContentBlock::ToolResult {
                tool_use_id: item.required("call_id")?.string()?,
                content: text_of(&item.required("output")?)?,
                is_error: false,
            };
            (Role::User, vec![result])
        }
        "reasoning" => {
            let summary = item
                .required("summary")?
                .array()?
                .iter()
                .map(|part| part.required("text")?.string())
                .collect::<Result<Vec<_>, _>>()?;
            let reasoning = ReasoningItem {
                id: item.required("id")?.string()?,
                encrypted_content: item
                    .optional("encrypted_content")
                    .map(|content| content.string())
                    .transpose()?,
            };
            let thinking = ContentBlock::Thinking {
                text: summary.join("\n\n"),
                signature: Some(reasoning.signature()),
            };
            (Role::Assistant, vec![thinking])
        }
        other => {
            return Err(item.error(&format!(
                "item type `{other}` (this server stores nothing to refer to), expected \
                 message, function_call, function_call_output or reasoning"
            )));
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
    Ok(())
}

fn user_content(field: &Field<'_>) -> Result<Vec<ContentBlock>, String> {
    if let Value::String(text) = field.value {
        return Ok(vec![ContentBlock::text(text.clone())]);
    }
    let mut blocks = Vec::new();
    for part in field.array()? {
        match part.required("type")?.string()?.as_str() {
            "input_text" => blocks.push(ContentBlock::text(part.required("text")?.string()?)),
            "input_image" => {
                // An image by file id is nothing the simulation reads.
                let Some(url) = part.optional("image_url") else {
                    continue;
                };
                let url = url.string()?;
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
            // Files and audio: nothing the simulation reads.
            _ => {}
        }
    }
    Ok(blocks)
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
    fn json(&self, done: bool) -> Value {
        let status = if done { "completed" } else { "in_progress" };
        match self {
            Self::Reasoning {
                id,
                summary,
                encrypted_content,
            } => {
                let summary = if done && !summary.is_empty() {
                    json!([{"type": "summary_text", "text": summary}])
                } else {
                    json!([])
                };
                let encrypted = if done {
                    json!(encrypted_content)
                } else {
                    Value::Null
                };
                json!({"type": "reasoning", "id": id, "summary": summary,
                    "encrypted_content": encrypted})
            }
            Self::Message { id, text, refusal } => {
                let content = if done {
                    vec![part(text, *refusal)]
                } else {
                    Vec::new()
                };
                json!({"type": "message", "id": id, "status": status, "role": "assistant",
                    "content": content})
            }
            Self::Call {
                id,
                call_id,
                name,
                arguments,
            } => json!({
                "type": "function_call", "id": id, "call_id": call_id, "name": name,
                "arguments": if done { arguments.as_str() } else { "" }, "status": status,
            }),
        }
    }
}

/// A message's content part: its text, or a refusal.
fn part(text: &str, refusal: bool) -> Value {
    if refusal {
        json!({"type": "refusal", "refusal": text})
    } else {
        json!({"type": "output_text", "text": text, "annotations": [], "logprobs": []})
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

fn usage_json(usage: &Usage) -> Value {
    // OpenAI counts cached input inside input_tokens.
    let input = usage.total_input();
    json!({
        "input_tokens": input,
        "input_tokens_details": {"cached_tokens": usage.cache_read_input_tokens},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": input + usage.output_tokens,
    })
}

/// The response object: `done` with its output and usage, else as it starts.
fn object(answer: &Answer, call: u64, created: u64, done: bool) -> Value {
    let response = &answer.response;
    let incomplete = response.stop_reason == StopReason::MaxTokens;
    let (status, details) = match (done, incomplete) {
        (false, _) => ("in_progress", Value::Null),
        (true, true) => ("incomplete", json!({"reason": "max_output_tokens"})),
        (true, false) => ("completed", Value::Null),
    };
    let (output, usage) = if done {
        let output: Vec<Value> = items(answer, call).iter().map(|i| i.json(true)).collect();
        (json!(output), usage_json(&response.usage))
    } else {
        (json!([]), Value::Null)
    };
    json!({
        "id": format!("resp_sim{call}"),
        "object": "response",
        "created_at": created,
        "status": status,
        "error": null,
        "incomplete_details": details,
        "instructions": null,
        "max_output_tokens": null,
        "model": response.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": null,
        "reasoning": {"effort": null, "summary": null},
        "store": false,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": usage,
        "metadata": {},
    })
}

/// A whole response object.
pub(crate) fn response(answer: &Answer, call: u64, created: u64) -> Value {
    object(answer, call, created, true)
}

/// The named events of a streamed response, ending with `response.completed` (or
/// `response.incomplete`); an interrupted answer ends with an `error` event half way through
/// its deltas instead.
pub(crate) fn stream(answer: &Answer, call: u64, created: u64) -> Vec<Sse> {
    let mut events = vec![
        (
            "response.created",
            json!({"response": object(answer, call, created, false)}),
        ),
        (
            "response.in_progress",
            json!({"response": object(answer, call, created, false)}),
        ),
    ];
    let mut body = Vec::new();
    for (index, item) in items(answer, call).iter().enumerate() {
        item_events(item, index, &mut body);
    }
    if let Some(failure) = &answer.interrupted {
        events.extend(half_way(body, |(name, _)| name.ends_with(".delta")));
        let (_, _, error) = error_body(failure);
        let error = &error["error"];
        let code = if error["code"].is_null() {
            &error["type"]
        } else {
            &error["code"]
        };
        events.push((
            "error",
            json!({"code": code, "message": error["message"], "param": null}),
        ));
    } else {
        events.extend(body);
        let last = if answer.response.stop_reason == StopReason::MaxTokens {
            "response.incomplete"
        } else {
            "response.completed"
        };
        events.push((
            last,
            json!({"response": object(answer, call, created, true)}),
        ));
    }
    events
        .into_iter()
        .enumerate()
        .map(|(sequence, (name, mut data))| {
            data["type"] = json!(name);
            data["sequence_number"] = json!(sequence);
            Sse::named(name, data)
        })
        .collect()
}

/// The events that build one output item: added, its parts and deltas, done.
fn item_events(item: &Item, index: usize, out: &mut Vec<(&'static str, Value)>) {
    out.push((
        "response.output_item.added",
        json!({"output_index": index, "item": item.json(false)}),
    ));
    match item {
        Item::Reasoning { id, summary, .. } if !summary.is_empty() => {
            let at = json!({"item_id": id, "output_index": index, "summary_index": 0});
            let empty = json!({"type": "summary_text", "text": ""});
            out.push((
                "response.reasoning_summary_part.added",
                with(&at, "part", empty),
            ));
            for piece in word_pieces(summary) {
                let delta = with(&at, "delta", json!(piece));
                out.push(("response.reasoning_summary_text.delta", delta));
            }
            let done = with(&at, "text", json!(summary));
            out.push(("response.reasoning_summary_text.done", done));
            let whole = json!({"type": "summary_text", "text": summary});
            out.push((
                "response.reasoning_summary_part.done",
                with(&at, "part", whole),
            ));
        }
        Item::Reasoning { .. } => {}
        Item::Message { id, text, refusal } => {
            let at = json!({"item_id": id, "output_index": index, "content_index": 0});
            out.push((
                "response.content_part.added",
                with(&at, "part", part("", *refusal)),
            ));
            let (delta, done, key) = if *refusal {
                ("response.refusal.delta", "response.refusal.done", "refusal")
            } else {
                (
                    "response.output_text.delta",
                    "response.output_text.done",
                    "text",
                )
            };
            for piece in word_pieces(text) {
                let mut event = with(&at, "delta", json!(piece));
                if !refusal {
                    event["logprobs"] = json!([]);
                }
                out.push((delta, event));
            }
            out.push((done, with(&at, key, json!(text))));
            out.push((
                "response.content_part.done",
                with(&at, "part", part(text, *refusal)),
            ));
        }
        Item::Call {
            id,
            name,
            arguments,
            ..
        } => {
            let at = json!({"item_id": id, "output_index": index});
            for piece in byte_pieces(arguments, 16) {
                let delta = with(&at, "delta", json!(piece));
                out.push(("response.function_call_arguments.delta", delta));
            }
            let done = with(
                &with(&at, "arguments", json!(arguments)),
                "name",
                json!(name),
            );
            out.push(("response.function_call_arguments.done", done));
        }
    }
    out.push((
        "response.output_item.done",
        json!({"output_index": index, "item": item.json(true)}),
    ));
}

/// `at` with one more field.
fn with(at: &Value, key: &str, value: Value) -> Value {
    let mut value_at = at.clone();
    value_at[key] = value;
    value_at
}
