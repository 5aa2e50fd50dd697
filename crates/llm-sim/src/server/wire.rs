//! Pieces the wire formats share (whose bodies decode into and encode from llm-core's `wire`
//! types): JSON out of those types, server-sent events, and retry headers.

use std::time::Duration;

use llm_core::{ContentBlock, ImageSource, Message};
use serde::Serialize;
use serde_json::Value;

use crate::reply::half_way;

/// The JSON of a wire value. Through a `Value`, whose keys serde_json keeps sorted, so the
/// bytes sent do not depend on the order of the struct's fields.
pub(crate) fn to_json(wire: &impl Serialize) -> Value {
    serde_json::to_value(wire).expect("the server builds no variant that cannot be encoded")
}

/// One server-sent event.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sse {
    pub event: Option<&'static str>,
    pub data: String,
}

impl Sse {
    pub fn named(event: &'static str, data: Value) -> Self {
        Self {
            event: Some(event),
            data: data.to_string(),
        }
    }

    pub fn data(data: Value) -> Self {
        Self {
            event: None,
            data: data.to_string(),
        }
    }

    pub fn done() -> Self {
        Self {
            event: None,
            data: "[DONE]".to_owned(),
        }
    }

    /// The event as framed on the wire: `event:` line (if named), `data:` line, blank line.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut text = String::new();
        if let Some(event) = self.event {
            text.push_str("event: ");
            text.push_str(event);
            text.push('\n');
        }
        text.push_str("data: ");
        text.push_str(&self.data);
        text.push_str("\n\n");
        text.into_bytes()
    }
}

/// The content events an interrupted stream still sends: those up to the first half of
/// its deltas (Anthropic's `content_block_delta` events, or every OpenAI chunk).
pub(crate) fn events_before_interruption(body: Vec<Sse>) -> Vec<Sse> {
    let is_delta = |event: &Sse| event.event.is_none_or(|name| name == "content_block_delta");
    half_way(body, is_delta)
}

/// `retry-after` in whole seconds, rounded up, and `retry-after-ms` when that rounds.
pub(crate) fn retry_after(after: Duration) -> Vec<(String, String)> {
    let millis = after.as_millis();
    let mut headers = vec![("retry-after".to_owned(), millis.div_ceil(1000).to_string())];
    if !millis.is_multiple_of(1000) {
        headers.push(("retry-after-ms".to_owned(), millis.to_string()));
    }
    headers
}

/// Whether a user message holds tool results (a later tool result or text joins it).
pub(crate) fn holds_tool_results(message: &Message) -> bool {
    message
        .content
        .iter()
        .any(|block| matches!(block, ContentBlock::ToolResult { .. }))
}

/// An error of the object at `path` in a request body: a missing field as the API says it,
/// `path.field: field required`.
pub(crate) fn at(path: &str, err: &serde_json::Error) -> String {
    match missing_field(err) {
        Some(field) => format!("{path}.{field}: field required"),
        None => format!("{path}: {err}"),
    }
}

/// The field a serde "missing field" error names.
pub(crate) fn missing_field(err: &serde_json::Error) -> Option<String> {
    let message = err.to_string();
    let (field, _) = message.strip_prefix("missing field `")?.split_once('`')?;
    Some(field.to_owned())
}

/// An image both OpenAI APIs sent by URL: the data of a `data:` URL, else the URL.
pub(crate) fn image_source(url: String) -> ImageSource {
    match url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
    {
        Some((media_type, data)) => ImageSource::Base64 {
            media_type: media_type.to_owned(),
            data: data.to_owned(),
        },
        None => ImageSource::Url { url },
    }
}

/// A tool call's input as both OpenAI APIs send it, as a JSON string: the JSON, or the
/// string itself when it is not JSON.
pub(crate) fn tool_arguments(arguments: String) -> Value {
    serde_json::from_str(&arguments).unwrap_or(Value::String(arguments))
}
