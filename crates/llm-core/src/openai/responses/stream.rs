//! The Responses API's stream: named server-sent events read into our [`Event`]s, so that
//! collecting them gives what [`super::parse_response`] reads from a whole response.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::Value;

use super::super::mint_id;
use super::{ReasoningItem, failure_error, stop_reason, summary_text, tool_input, usage};
use crate::clock::Rng;
use crate::error::{Error, Result};
use crate::http::{StreamParser, body_excerpt};
use crate::sse::SseEvent;
use crate::stream::Event;
use crate::stream::parse_arguments;
use crate::wire::responses::{
    ItemAt, OutputItem, ResponseError, ResponseEvent, ResponseObject, StreamEvent, SummaryAt,
};

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

    fn start(&mut self, response: Option<&ResponseObject>, out: &mut VecDeque<Event>) {
        self.started = true;
        out.push_back(Event::Start {
            id: response.and_then(|response| response.id.clone()),
            model: response
                .and_then(|response| response.model.clone())
                .unwrap_or_default(),
            request_id: self.headers.get("x-request-id").cloned(),
            headers: std::mem::take(&mut self.headers),
        });
    }

    fn start_tool(
        &mut self,
        output_index: u64,
        call_id: &str,
        name: &str,
        out: &mut VecDeque<Event>,
    ) {
        let index = self.tools.len();
        let id = match call_id {
            "" => mint_id(&*self.rng),
            id => id.to_owned(),
        };
        out.push_back(Event::ToolCallStart {
            index,
            id: id.clone(),
            name: name.to_owned(),
        });
        self.tools.insert(
            output_index,
            StreamTool {
                index,
                id,
                name: name.to_owned(),
                arguments: String::new(),
                ended: false,
            },
        );
    }

    fn on_item_done(
        &mut self,
        output_index: u64,
        item: OutputItem,
        out: &mut VecDeque<Event>,
    ) -> Result<()> {
        match item {
            OutputItem::FunctionCall {
                call_id,
                name,
                arguments,
                ..
            } => {
                if !self.tools.contains_key(&output_index) {
                    self.start_tool(output_index, &call_id, &name, out);
                }
                let tool = self
                    .tools
                    .get_mut(&output_index)
                    .expect("the call was started just above if it was not before");
                let arguments = match arguments {
                    Value::String(text) if text.is_empty() => Value::String(tool.arguments.clone()),
                    Value::Null => Value::String(tool.arguments.clone()),
                    arguments => arguments,
                };
                let input = tool_input(&tool.id, &tool.name, arguments)?;
                tool.ended = true;
                out.push_back(Event::ToolCallEnd {
                    index: tool.index,
                    input,
                });
            }
            OutputItem::Reasoning {
                id,
                summary,
                encrypted_content,
            } => {
                let streamed = self
                    .summary_part
                    .take()
                    .is_some_and(|(index, _)| index == output_index);
                let text = summary_text(&summary);
                // A server that sent no summary deltas still said the summary here.
                if !streamed && !text.is_empty() {
                    out.push_back(Event::ThinkingDelta { text: text.clone() });
                }
                // As [`super::reasoning_block`] decides for a whole response.
                if streamed || !text.is_empty() || encrypted_content.is_some() {
                    let item = ReasoningItem {
                        id,
                        encrypted_content,
                    };
                    out.push_back(Event::ThinkingSignature {
                        signature: item.signature(),
                    });
                }
            }
            OutputItem::Message { .. } | OutputItem::Other => {}
        }
        Ok(())
    }

    fn on_summary_delta(&mut self, at: &SummaryAt, delta: &str, out: &mut VecDeque<Event>) {
        if delta.is_empty() {
            return;
        }
        let part = (at.output_index, at.summary_index);
        let text = match self.summary_part {
            Some((item, index)) if item == part.0 && index != part.1 => format!("\n\n{delta}"),
            _ => delta.to_owned(),
        };
        self.summary_part = Some(part);
        out.push_back(Event::ThinkingDelta { text });
    }

    fn finish(&mut self, response: &ResponseObject, out: &mut VecDeque<Event>) -> Result<()> {
        for tool in self.tools.values_mut().filter(|tool| !tool.ended) {
            let input = parse_arguments(&tool.id, &tool.name, &tool.arguments)?;
            tool.ended = true;
            out.push_back(Event::ToolCallEnd {
                index: tool.index,
                input,
            });
        }
        out.push_back(Event::Usage(usage(response)));
        if let Some(tier) = &response.service_tier {
            out.push_back(Event::ServiceTier(tier.clone()));
        }
        out.push_back(Event::Stop {
            reason: stop_reason(response, !self.tools.is_empty(), self.refused),
        });
        Ok(())
    }
}

impl StreamParser for ResponsesStream {
    fn on_event(&mut self, event: SseEvent, out: &mut VecDeque<Event>) -> Result<bool> {
        let mut data: Value = serde_json::from_str(&event.data)
            .map_err(|err| self.invalid(&format!("is not json ({err})"), &event.data))?;
        // The type names the event; a server that leaves it out names it in the SSE line.
        if let Value::Object(fields) = &mut data
            && fields
                .get("type")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        {
            fields.insert("type".to_owned(), Value::from(event.event.as_str()));
        }
        let StreamEvent { event: data, .. } = serde_json::from_value(data)
            .map_err(|err| self.invalid(&format!("is malformed ({err})"), &event.data))?;
        if let ResponseEvent::Error {
            code,
            message,
            error,
            ..
        } = data
        {
            let failure = error.unwrap_or(ResponseError { code, message });
            return Err(failure_error(self.provider, failure));
        }
        if !self.started {
            let response = match &data {
                ResponseEvent::Created { response } => Some(response),
                _ => None,
            };
            self.start(response, out);
        }
        match data {
            ResponseEvent::OutputItemAdded {
                output_index,
                item: OutputItem::FunctionCall { call_id, name, .. },
            } => self.start_tool(output_index, &call_id, &name, out),
            ResponseEvent::FunctionCallArgumentsDelta {
                at: ItemAt { output_index, .. },
                delta,
            } => {
                if let Some(tool) = self.tools.get_mut(&output_index)
                    && !delta.is_empty()
                {
                    tool.arguments.push_str(&delta);
                    out.push_back(Event::ToolCallDelta {
                        index: tool.index,
                        arguments: delta,
                    });
                }
            }
            ResponseEvent::OutputTextDelta { delta, .. } => text_delta(delta, out),
            ResponseEvent::RefusalDelta { delta, .. } => {
                self.refused = true;
                text_delta(delta, out);
            }
            ResponseEvent::ReasoningSummaryTextDelta { at, delta } => {
                self.on_summary_delta(&at, &delta, out);
            }
            ResponseEvent::OutputItemDone { output_index, item } => {
                self.on_item_done(output_index, item, out)?;
            }
            ResponseEvent::Completed { response } | ResponseEvent::Incomplete { response } => {
                self.finish(&response, out)?;
                return Ok(true);
            }
            ResponseEvent::Failed { response } => {
                let failure = response.error.unwrap_or_else(|| ResponseError {
                    code: None,
                    message: "the response failed".to_owned(),
                });
                return Err(failure_error(self.provider, failure));
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

/// Text or refusal text, as the answer's text.
fn text_delta(text: String, out: &mut VecDeque<Event>) {
    if !text.is_empty() {
        out.push_back(Event::TextDelta { text });
    }
}
