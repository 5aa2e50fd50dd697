//! Streamed answers: the provider-neutral [`Event`] and folding events into a [`Response`].

use std::collections::BTreeMap;
use std::pin::Pin;

use futures_util::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::types::{ContentBlock, Response, StopReason, ToolCall, Usage};

/// One step of a streamed answer.
///
/// Every provider emits `Start` first and `Stop` last; everything between arrives in the
/// order the model produced it. Tool calls are numbered by `index` in the order they
/// started (0, 1, ...), whatever the provider's own numbering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Event {
    Start {
        id: Option<String>,
        model: String,
        request_id: Option<String>,
        headers: BTreeMap<String, String>,
    },
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        text: String,
    },
    /// Closes the current thinking block; the next thinking delta starts a new block.
    ThinkingSignature {
        signature: String,
    },
    RedactedThinking {
        data: String,
    },
    ToolCallStart {
        index: usize,
        id: String,
        name: String,
    },
    /// A fragment of the tool call's JSON arguments, as the provider sent it.
    ToolCallDelta {
        index: usize,
        arguments: String,
    },
    /// The tool call is complete; `input` is its parsed arguments.
    ToolCallEnd {
        index: usize,
        input: Value,
    },
    /// Usage so far, cumulative: the last one is the total.
    Usage(Usage),
    /// The tier that processed the call (OpenAI's `service_tier`: `default`, `flex`), once the
    /// provider says; what the call bills at.
    ServiceTier(String),
    Stop {
        reason: StopReason,
    },
}

/// A stream of events as `LlmClient::stream` returns it.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<Event>> + Send>>;

/// Folds a stream into the response `complete` would have returned; stops at the first error.
pub async fn collect(mut stream: EventStream) -> Result<Response> {
    let mut builder = ResponseBuilder::default();
    while let Some(event) = stream.next().await {
        builder.push(event?);
    }
    builder.finish()
}

/// Folds events into a [`Response`] one at a time, for callers that show a stream as it
/// arrives and also want the whole answer at the end.
#[derive(Debug, Default)]
pub struct ResponseBuilder {
    response: Response,
    /// Position in `content` of each tool call, by event index.
    tool_positions: BTreeMap<usize, usize>,
    stopped: bool,
}

impl ResponseBuilder {
    pub fn push(&mut self, event: Event) {
        let content = &mut self.response.content;
        match event {
            Event::Start {
                id,
                model,
                request_id,
                headers,
            } => {
                self.response.id = id;
                self.response.model = model;
                self.response.request_id = request_id;
                self.response.headers = headers;
            }
            Event::TextDelta { text } => match content.last_mut() {
                Some(ContentBlock::Text { text: last }) => last.push_str(&text),
                _ => content.push(ContentBlock::Text { text }),
            },
            Event::ThinkingDelta { text } => match content.last_mut() {
                Some(ContentBlock::Thinking {
                    text: last,
                    signature: None,
                }) => last.push_str(&text),
                _ => content.push(ContentBlock::Thinking {
                    text,
                    signature: None,
                }),
            },
            Event::ThinkingSignature { signature } => match content.last_mut() {
                Some(ContentBlock::Thinking { signature: sig, .. }) if sig.is_none() => {
                    *sig = Some(signature);
                }
                // A signature with no open thinking block signs empty thinking.
                _ => content.push(ContentBlock::Thinking {
                    text: String::new(),
                    signature: Some(signature),
                }),
            },
            Event::RedactedThinking { data } => {
                content.push(ContentBlock::RedactedThinking { data });
            }
            Event::ToolCallStart { index, id, name } => {
                self.tool_positions.insert(index, content.len());
                content.push(ContentBlock::ToolUse(ToolCall {
                    id,
                    name,
                    input: Value::Object(serde_json::Map::new()),
                }));
            }
            // Arguments arrive whole with `ToolCallEnd`; the fragments are for live display.
            Event::ToolCallDelta { .. } => {}
            Event::ToolCallEnd { index, input } => {
                if let Some(ContentBlock::ToolUse(call)) = self
                    .tool_positions
                    .get(&index)
                    .and_then(|&position| content.get_mut(position))
                {
                    call.input = input;
                }
            }
            Event::Usage(usage) => self.response.usage = usage,
            Event::ServiceTier(tier) => self.response.service_tier = Some(tier),
            Event::Stop { reason } => {
                self.response.stop_reason = reason;
                self.stopped = true;
            }
        }
    }

    /// The response so far, for display while the stream runs.
    pub fn response(&self) -> &Response {
        &self.response
    }

    /// The finished response; an error if no `Stop` arrived, because the answer is cut off.
    pub fn finish(self) -> Result<Response> {
        if !self.stopped {
            return Err(Error::StreamInterrupted {
                provider: "stream",
                details: "the stream ended without a stop event".to_owned(),
            });
        }
        Ok(self.response)
    }
}

/// The events that replay `response` as a stream, for clients (like the simulator) that
/// have a whole answer and must also serve `stream`.
pub fn events_from_response(response: &Response) -> Vec<Event> {
    let mut events = vec![Event::Start {
        id: response.id.clone(),
        model: response.model.clone(),
        request_id: response.request_id.clone(),
        headers: response.headers.clone(),
    }];
    let mut tool_index = 0;
    for block in &response.content {
        match block {
            ContentBlock::Text { text } => events.push(Event::TextDelta { text: text.clone() }),
            ContentBlock::Thinking { text, signature } => {
                events.push(Event::ThinkingDelta { text: text.clone() });
                if let Some(signature) = signature {
                    events.push(Event::ThinkingSignature {
                        signature: signature.clone(),
                    });
                }
            }
            ContentBlock::RedactedThinking { data } => {
                events.push(Event::RedactedThinking { data: data.clone() });
            }
            ContentBlock::ToolUse(call) => {
                events.push(Event::ToolCallStart {
                    index: tool_index,
                    id: call.id.clone(),
                    name: call.name.clone(),
                });
                events.push(Event::ToolCallDelta {
                    index: tool_index,
                    arguments: call.input.to_string(),
                });
                events.push(Event::ToolCallEnd {
                    index: tool_index,
                    input: call.input.clone(),
                });
                tool_index += 1;
            }
            // Requests-only blocks never appear in a response; nothing to replay.
            ContentBlock::Image { .. } | ContentBlock::ToolResult { .. } => {}
        }
    }
    events.push(Event::Usage(response.usage));
    if let Some(tier) = &response.service_tier {
        events.push(Event::ServiceTier(tier.clone()));
    }
    events.push(Event::Stop {
        reason: response.stop_reason.clone(),
    });
    events
}

/// Parses complete tool arguments; empty arguments mean an empty object.
pub(crate) fn parse_arguments(id: &str, name: &str, arguments: &str) -> Result<Value> {
    if arguments.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(arguments).map_err(|err| Error::MalformedToolArguments {
        id: id.to_owned(),
        tool: name.to_owned(),
        raw: arguments.to_owned(),
        details: err.to_string(),
    })
}
