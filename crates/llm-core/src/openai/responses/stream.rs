//! The Responses API's stream: named server-sent events read into our [`Event`]s, so that
//! collecting them gives what [`super::parse_response`] reads from a whole response.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::super::mint_id;
use super::{ReasoningItem, WireFailure, WireResponse, WireSummary, summary_text, tool_input};
use crate::clock::Rng;
use crate::error::{Error, Result};
use crate::http::{StreamParser, body_excerpt};
use crate::sse::SseEvent;
use crate::stream::Event;
use crate::stream::parse_arguments;

/// A function call being streamed.
struct StreamTool {
    /// Ours: 0, 1, ... in the order the calls started.
    index: usize,
    id: String,
    name: String,
    arguments: String,
    ended: bool,
}

/// Reads the named events of a streamed response. Text, reasoning summaries and call
/// arguments arrive as deltas; a reasoning item's encrypted content and a call's final
/// arguments with `response.output_item.done`; usage and the status with
/// `response.completed` (or `response.incomplete`), which ends the stream.
pub(crate) struct ResponsesStream {
    provider: &'static str,
    headers: BTreeMap<String, String>,
    rng: Arc<dyn Rng>,
    started: bool,
    /// By output index.
    tools: BTreeMap<u64, StreamTool>,
    /// The reasoning summary part deltas last came for, as (output index, summary index):
    /// a new part of the same item starts after a blank line, as [`summary_text`] joins them.
    summary_part: Option<(u64, u64)>,
    refused: bool,
}

impl ResponsesStream {
    pub(crate) fn new(
        provider: &'static str,
        headers: BTreeMap<String, String>,
        rng: Arc<dyn Rng>,
    ) -> Self {
        Self {
            provider,
            headers,
            rng,
            started: false,
            tools: BTreeMap::new(),
            summary_part: None,
            refused: false,
        }
    }

    fn invalid(&self, what: &str, data: &str) -> Error {
        Error::invalid_response(
            self.provider,
            format!("stream event {what}: {}", body_excerpt(data)),
        )
    }

    fn start(&mut self, response: Option<&Value>, out: &mut VecDeque<Event>) {
        self.started = true;
        let field = |name: &str| {
            response
                .and_then(|response| response[name].as_str())
                .map(str::to_owned)
        };
        out.push_back(Event::Start {
            id: field("id"),
            model: field("model").unwrap_or_default(),
            request_id: self.headers.get("x-request-id").cloned(),
            headers: std::mem::take(&mut self.headers),
        });
    }

    fn start_tool(&mut self, output_index: u64, item: &Value, out: &mut VecDeque<Event>) {
        let index = self.tools.len();
        let id = match item["call_id"].as_str() {
            Some(id) if !id.is_empty() => id.to_owned(),
            _ => mint_id(&*self.rng),
        };
        let name = item["name"].as_str().unwrap_or_default().to_owned();
        out.push_back(Event::ToolCallStart {
            index,
            id: id.clone(),
            name: name.clone(),
        });
        self.tools.insert(
            output_index,
            StreamTool {
                index,
                id,
                name,
                arguments: String::new(),
                ended: false,
            },
        );
    }

    fn on_item_done(
        &mut self,
        output_index: u64,
        item: &Value,
        out: &mut VecDeque<Event>,
    ) -> Result<()> {
        match item["type"].as_str() {
            Some("function_call") => {
                if !self.tools.contains_key(&output_index) {
                    self.start_tool(output_index, item, out);
                }
                let tool = self
                    .tools
                    .get_mut(&output_index)
                    .expect("the call was started just above if it was not before");
                let arguments = match &item["arguments"] {
                    Value::String(text) if text.is_empty() => Value::String(tool.arguments.clone()),
                    Value::Null => Value::String(tool.arguments.clone()),
                    arguments => arguments.clone(),
                };
                let input = tool_input(&tool.id, &tool.name, arguments)?;
                tool.ended = true;
                out.push_back(Event::ToolCallEnd {
                    index: tool.index,
                    input,
                });
            }
            Some("reasoning") => {
                let streamed = self
                    .summary_part
                    .take()
                    .is_some_and(|(index, _)| index == output_index);
                let summary: Vec<WireSummary> =
                    serde_json::from_value(item["summary"].clone()).unwrap_or_default();
                let text = summary_text(&summary);
                // A server that sent no summary deltas still said the summary here.
                if !streamed && !text.is_empty() {
                    out.push_back(Event::ThinkingDelta { text: text.clone() });
                }
                // As [`reasoning_block`] decides for a whole response.
                let encrypted_content = item["encrypted_content"].as_str().map(str::to_owned);
                if streamed || !text.is_empty() || encrypted_content.is_some() {
                    let item = ReasoningItem {
                        id: item["id"].as_str().unwrap_or_default().to_owned(),
                        encrypted_content,
                    };
                    out.push_back(Event::ThinkingSignature {
                        signature: item.signature(),
                    });
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn on_summary_delta(&mut self, data: &Value, out: &mut VecDeque<Event>) {
        let Some(delta) = data["delta"].as_str().filter(|delta| !delta.is_empty()) else {
            return;
        };
        let part = (
            data["output_index"].as_u64().unwrap_or(0),
            data["summary_index"].as_u64().unwrap_or(0),
        );
        let text = match self.summary_part {
            Some((item, index)) if item == part.0 && index != part.1 => format!("\n\n{delta}"),
            _ => delta.to_owned(),
        };
        self.summary_part = Some(part);
        out.push_back(Event::ThinkingDelta { text });
    }

    fn finish(&mut self, response: WireResponse, out: &mut VecDeque<Event>) -> Result<()> {
        for tool in self.tools.values_mut().filter(|tool| !tool.ended) {
            let input = parse_arguments(&tool.id, &tool.name, &tool.arguments)?;
            tool.ended = true;
            out.push_back(Event::ToolCallEnd {
                index: tool.index,
                input,
            });
        }
        out.push_back(Event::Usage(response.usage()));
        out.push_back(Event::Stop {
            reason: response.stop_reason(!self.tools.is_empty(), self.refused),
        });
        Ok(())
    }
}

impl StreamParser for ResponsesStream {
    fn on_event(&mut self, event: SseEvent, out: &mut VecDeque<Event>) -> Result<bool> {
        let data: Value = serde_json::from_str(&event.data)
            .map_err(|err| self.invalid(&format!("is not json ({err})"), &event.data))?;
        let kind = match data["type"].as_str() {
            Some(kind) if !kind.is_empty() => kind.to_owned(),
            _ => event.event.clone(),
        };
        if kind == "error" {
            let error = if data["error"].is_object() {
                &data["error"]
            } else {
                &data
            };
            let failure = WireFailure::deserialize(error).map_err(|err| {
                self.invalid(&format!("error is not an error ({err})"), &event.data)
            })?;
            return Err(failure.into_error(self.provider));
        }
        if !self.started {
            let response = (kind == "response.created").then_some(&data["response"]);
            self.start(response, out);
        }
        let output_index = data["output_index"].as_u64().unwrap_or(0);
        match kind.as_str() {
            "response.output_item.added" if data["item"]["type"] == "function_call" => {
                self.start_tool(output_index, &data["item"], out);
            }
            "response.function_call_arguments.delta" => {
                let delta = data["delta"].as_str().unwrap_or_default();
                if let Some(tool) = self.tools.get_mut(&output_index)
                    && !delta.is_empty()
                {
                    tool.arguments.push_str(delta);
                    out.push_back(Event::ToolCallDelta {
                        index: tool.index,
                        arguments: delta.to_owned(),
                    });
                }
            }
            "response.output_text.delta" | "response.refusal.delta" => {
                self.refused |= kind == "response.refusal.delta";
                if let Some(text) = data["delta"].as_str().filter(|text| !text.is_empty()) {
                    out.push_back(Event::TextDelta {
                        text: text.to_owned(),
                    });
                }
            }
            "response.reasoning_summary_text.delta" => self.on_summary_delta(&data, out),
            "response.output_item.done" => self.on_item_done(output_index, &data["item"], out)?,
            "response.completed" | "response.incomplete" => {
                let response = WireResponse::deserialize(&data["response"]).map_err(|err| {
                    self.invalid(&format!("{kind} holds no response ({err})"), &event.data)
                })?;
                self.finish(response, out)?;
                return Ok(true);
            }
            "response.failed" => {
                let failure = WireResponse::deserialize(&data["response"])
                    .ok()
                    .and_then(|response| response.error)
                    .unwrap_or_else(|| WireFailure {
                        code: None,
                        message: "the response failed".to_owned(),
                    });
                return Err(failure.into_error(self.provider));
            }
            // Lifecycle and `.done` events repeat what the deltas said.
            _ => {}
        }
        Ok(false)
    }

    fn on_eof(&mut self, _out: &mut VecDeque<Event>) -> Result<()> {
        Err(Error::StreamInterrupted {
            provider: self.provider,
            details: "the connection closed before response.completed".to_owned(),
        })
    }
}
