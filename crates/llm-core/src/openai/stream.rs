//! OpenAI chat completions' event stream: chunks into [`Event`]s, absorbing the quirks of
//! compatible servers (tool-call deltas without id or index, usage-only final chunks).
use std::collections::VecDeque;

use super::*;
use crate::http::StreamParser;
use crate::sse::SseEvent;
use crate::stream::Event;
use crate::wire::openai::{ChatChunk, ToolCallDelta};

struct StreamTool {
    /// The server's id, or a minted one once the call starts without one.
    id: Option<String>,
    name: String,
    arguments: String,
    /// The server's `index` for this call, if it sent one.
    wire_index: Option<u64>,
    /// `ToolCallStart` was emitted; it waits for the name, which may come late.
    started: bool,
}

pub(crate) struct OpenAiStream {
    provider: &'static str,
    headers: BTreeMap<String, String>,
    rng: Arc<dyn Rng>,
    started: bool,
    tools: Vec<StreamTool>,
    finish_reason: Option<String>,
    refused: bool,
    usage: Option<Usage>,
    /// The tier the chunks report; the last one said is kept.
    service_tier: Option<String>,
}

impl OpenAiStream {
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
            tools: Vec::new(),
            finish_reason: None,
            refused: false,
            usage: None,
            service_tier: None,
        }
    }

    /// Which of our tool calls a delta continues, or a new one.
    fn tool_position(&mut self, delta: &ToolCallDelta) -> usize {
        let new_id_differs = |tool: &StreamTool| match (&delta.id, &tool.id) {
            (Some(new), Some(old)) => new != old,
            _ => false,
        };
        let existing = match delta.index {
            Some(index) => self
                .tools
                .iter()
                .rposition(|tool| tool.wire_index == Some(index)),
            // Without an index, a delta continues the last call unless it brings a new id.
            None => self.tools.len().checked_sub(1),
        };
        match existing {
            Some(position) if !new_id_differs(&self.tools[position]) => position,
            _ => {
                self.tools.push(StreamTool {
                    id: None,
                    name: String::new(),
                    arguments: String::new(),
                    wire_index: delta.index,
                    started: false,
                });
                self.tools.len() - 1
            }
        }
    }

    fn on_tool_delta(&mut self, delta: ToolCallDelta, out: &mut VecDeque<Event>) {
        let position = self.tool_position(&delta);
        let rng = Arc::clone(&self.rng);
        let tool = &mut self.tools[position];
        if tool.id.is_none() {
            tool.id = delta.id.filter(|id| !id.is_empty());
        }
        let (name, arguments) = match delta.function {
            Some(function) => (function.name, function.arguments),
            None => (None, None),
        };
        if let Some(name) = name {
            tool.name.push_str(&name);
        }
        if !tool.started && !tool.name.is_empty() {
            Self::start_tool(position, tool, &*rng, out);
        }
        if let Some(arguments) = arguments.filter(|arguments| !arguments.is_empty()) {
            tool.arguments.push_str(&arguments);
            if tool.started {
                out.push_back(Event::ToolCallDelta {
                    index: position,
                    arguments,
                });
            }
        }
    }

    fn start_tool(
        position: usize,
        tool: &mut StreamTool,
        rng: &dyn Rng,
        out: &mut VecDeque<Event>,
    ) {
        tool.started = true;
        let id = tool.id.get_or_insert_with(|| mint_id(rng)).clone();
        out.push_back(Event::ToolCallStart {
            index: position,
            id,
            name: tool.name.clone(),
        });
        // Arguments that arrived before the name are sent now, in one piece.
        if !tool.arguments.is_empty() {
            out.push_back(Event::ToolCallDelta {
                index: position,
                arguments: tool.arguments.clone(),
            });
        }
    }

    fn finish(&mut self, out: &mut VecDeque<Event>) -> Result<()> {
        if !self.started {
            self.emit_start(None, None, out);
        }
        for (position, tool) in self.tools.iter_mut().enumerate() {
            if !tool.started {
                Self::start_tool(position, tool, &*self.rng, out);
            }
            let id = tool.id.clone().unwrap_or_default();
            let input = parse_arguments(&id, &tool.name, &tool.arguments)?;
            out.push_back(Event::ToolCallEnd {
                index: position,
                input,
            });
        }
        if let Some(usage) = self.usage {
            out.push_back(Event::Usage(usage));
        }
        if let Some(tier) = self.service_tier.take() {
            out.push_back(Event::ServiceTier(tier));
        }
        out.push_back(Event::Stop {
            reason: stop_reason(
                self.finish_reason.as_deref(),
                !self.tools.is_empty(),
                self.refused,
            ),
        });
        Ok(())
    }

    fn emit_start(&mut self, id: Option<String>, model: Option<String>, out: &mut VecDeque<Event>) {
        self.started = true;
        out.push_back(Event::Start {
            id,
            model: model.unwrap_or_default(),
            request_id: self.headers.get("x-request-id").cloned(),
            headers: std::mem::take(&mut self.headers),
        });
    }
}

impl StreamParser for OpenAiStream {
    fn on_event(&mut self, event: SseEvent, out: &mut VecDeque<Event>) -> Result<bool> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finish(out)?;
            return Ok(true);
        }
        let value: Value = serde_json::from_str(data).map_err(|err| {
            Error::invalid_response(
                self.provider,
                format!("stream data is not json ({err}): {}", body_excerpt(data)),
            )
        })?;
        if let Some(error) = WireError::from_body(&value).filter(|_| !value["error"].is_null()) {
            return Err(typed_error(
                self.provider,
                None,
                error,
                &RetryHints::default(),
            ));
        }
        let chunk = ChatChunk::deserialize(&value).map_err(|err| {
            Error::invalid_response(
                self.provider,
                format!(
                    "stream chunk is not a completion chunk ({err}): {}",
                    body_excerpt(data)
                ),
            )
        })?;
        if !self.started {
            self.emit_start(chunk.id, chunk.model, out);
        }
        if chunk.service_tier.is_some() {
            self.service_tier = chunk.service_tier;
        }
        if let Some(usage) = chunk.usage.flatten() {
            self.usage = Some(to_usage(&usage));
        }
        let Some(choice) = chunk.choices.into_iter().next() else {
            return Ok(false);
        };
        if let Some(delta) = choice.delta {
            if let Some(text) = delta.reasoning_content.filter(|text| !text.is_empty()) {
                out.push_back(Event::ThinkingDelta { text });
            }
            if let Some(text) = delta.content.filter(|text| !text.is_empty()) {
                out.push_back(Event::TextDelta { text });
            }
            if let Some(text) = delta.refusal.flatten().filter(|text| !text.is_empty()) {
                self.refused = true;
                out.push_back(Event::TextDelta { text });
            }
            for tool_delta in delta.tool_calls {
                self.on_tool_delta(tool_delta, out);
            }
        }
        if let Some(reason) = choice.finish_reason {
            self.finish_reason = Some(reason);
        }
        Ok(false)
    }

    fn on_eof(&mut self, out: &mut VecDeque<Event>) -> Result<()> {
        // Some servers close after the last chunk without `[DONE]`; a finish reason says
        // the answer itself was complete.
        if self.finish_reason.is_some() {
            return self.finish(out);
        }
        Err(Error::StreamInterrupted {
            provider: self.provider,
            details: "the connection closed before a finish reason or [DONE]".to_owned(),
        })
    }
}
