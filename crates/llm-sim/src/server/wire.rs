//! Pieces the wire formats share: reading JSON bodies with errors that name the field (the
//! Responses API; Anthropic and chat completions bodies decode into llm-core's `wire` types),
//! server-sent events, and retry headers.

use std::time::Duration;

use llm_core::{ContentBlock, Message, Tool, ToolChoice};
use serde_json::{Value, json};

use crate::reply::half_way;

/// A value inside a request body, with its path for error messages.
#[derive(Debug, Clone)]
pub(crate) struct Field<'a> {
    pub value: &'a Value,
    path: String,
}

impl<'a> Field<'a> {
    pub fn root(value: &'a Value) -> Result<Self, String> {
        if !value.is_object() {
            return Err("the body must be a json object".to_owned());
        }
        Ok(Self {
            value,
            path: String::new(),
        })
    }

    fn child(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// A field that must be present and not null.
    pub fn required(&self, key: &str) -> Result<Field<'a>, String> {
        self.optional(key)
            .ok_or_else(|| format!("{}: field required", self.child(key)))
    }

    /// A field that may be absent; null counts as absent.
    pub fn optional(&self, key: &str) -> Option<Field<'a>> {
        let value = self.value.get(key).filter(|value| !value.is_null())?;
        Some(Field {
            value,
            path: self.child(key),
        })
    }

    pub fn error(&self, what: &str) -> String {
        let path = if self.path.is_empty() {
            "body"
        } else {
            &self.path
        };
        format!("{path}: unexpected {what}")
    }

    fn expected(&self, kind: &str) -> String {
        let path = if self.path.is_empty() {
            "body"
        } else {
            &self.path
        };
        format!("{path}: expected {kind}, got {}", self.value)
    }

    pub fn string(&self) -> Result<String, String> {
        self.value
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| self.expected("a string"))
    }

    pub fn u32(&self) -> Result<u32, String> {
        self.value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| self.expected("a positive integer"))
    }

    pub fn f32(&self) -> Result<f32, String> {
        self.value
            .as_f64()
            .map(|n| n as f32)
            .ok_or_else(|| self.expected("a number"))
    }

    pub fn bool(&self) -> Result<bool, String> {
        self.value
            .as_bool()
            .ok_or_else(|| self.expected("true or false"))
    }

    pub fn array(&self) -> Result<Vec<Field<'a>>, String> {
        let items = self
            .value
            .as_array()
            .ok_or_else(|| self.expected("an array"))?;
        Ok(items
            .iter()
            .enumerate()
            .map(|(index, value)| Field {
                value,
                path: format!("{}[{index}]", self.path),
            })
            .collect())
    }
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

/// Text content: a string, or the text of a list of parts.
pub(crate) fn text_of(field: &Field<'_>) -> Result<String, String> {
    match field.value {
        Value::String(text) => Ok(text.clone()),
        _ => Ok(field
            .array()?
            .into_iter()
            .filter_map(|part| part.optional("text").map(|text| text.string()))
            .collect::<Result<Vec<_>, _>>()?
            .join("\n")),
    }
}

/// A function tool as both OpenAI formats write it: `name`, `description`, `parameters`.
pub(crate) fn function_tool(function: &Field<'_>) -> Result<Tool, String> {
    Ok(Tool {
        name: function.required("name")?.string()?,
        description: function
            .optional("description")
            .map(|d| d.string())
            .transpose()?
            .unwrap_or_default(),
        input_schema: function
            .optional("parameters")
            .map_or_else(|| json!({"type": "object"}), |p| p.value.clone()),
    })
}

/// A tool choice both OpenAI formats give as a string: `auto`, `required` or `none`.
pub(crate) fn tool_choice_mode(choice: &Field<'_>, mode: &str) -> Result<ToolChoice, String> {
    Ok(match mode {
        "auto" => ToolChoice::Auto,
        "required" => ToolChoice::Any,
        "none" => ToolChoice::None,
        other => {
            return Err(choice.error(&format!(
                "tool choice `{other}`, expected auto, required or none"
            )));
        }
    })
}
