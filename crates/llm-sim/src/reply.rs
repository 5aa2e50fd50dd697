//! What a strategy answers for one call, and how that answer is delivered: as a whole
//! [`Response`], as a stream of realistic deltas, or as the error a real client would raise.
//! The fake HTTP server renders the same [`Reply`] in each provider's wire format.

use std::collections::BTreeMap;
use std::time::Duration;

use llm_core::{ContentBlock, Error as LlmError, Event, Response, TimeoutPhase, Usage};

/// The request timeout a simulated timeout reports: llm-core's default.
pub const SIMULATED_TIMEOUT: Duration = Duration::from_secs(600);

/// One call's outcome, chosen by a strategy.
#[derive(Debug, Clone, PartialEq)]
#[expect(
    clippy::large_enum_variant,
    reason = "one reply per call, consumed at once; boxing would only add an allocation"
)]
pub enum Reply {
    Answer(Answer),
    Failure(Failure),
}

/// A model's answer, with the faults to inject while delivering it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    pub response: Response,
    /// Argument text to send for a tool call instead of its input, by the call's position
    /// among the response's tool calls: how a malformed payload is injected. The call's
    /// `input` holds the parsed text, or null when it does not parse.
    pub raw_arguments: BTreeMap<usize, String>,
    /// The stream fails with this after part of the answer; `complete` fails with it.
    pub interrupted: Option<Failure>,
    /// The usage is an estimate (the script gave none): a fake service bills the input by
    /// its own count instead.
    pub usage_estimated: bool,
}

/// A failed call, as the HTTP layer would report it.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// HTTP 429.
    RateLimited {
        retry_after: Duration,
        message: String,
    },
    /// Anthropic's HTTP 529.
    Overloaded { message: String },
    /// HTTP 5xx.
    Server { status: u16, message: String },
    /// No answer before the client's request timeout.
    Timeout,
}

impl Failure {
    /// The error llm-core's providers raise for this failure.
    pub fn to_error(&self, provider: &'static str) -> LlmError {
        match self {
            Self::RateLimited {
                retry_after,
                message,
            } => LlmError::RateLimited {
                provider,
                retry_after: Some(*retry_after),
                message: message.clone(),
            },
            Self::Overloaded { message } => LlmError::Overloaded {
                provider,
                message: message.clone(),
            },
            Self::Server { status, message } => LlmError::Server {
                provider,
                status: *status,
                message: message.clone(),
            },
            Self::Timeout => LlmError::Timeout {
                provider,
                phase: TimeoutPhase::Request,
                after: SIMULATED_TIMEOUT,
            },
        }
    }
}

impl Answer {
    /// The tool calls whose raw arguments do not parse, with the parse error.
    pub fn malformed_arguments(&self) -> Vec<(usize, &str, String)> {
        self.raw_arguments
            .iter()
            .filter_map(|(&position, raw)| {
                let err = serde_json::from_str::<serde_json::Value>(raw).err()?;
                Some((position, raw.as_str(), err.to_string()))
            })
            .collect()
    }

    /// What `complete` returns: the response, or the error a real client would raise.
    pub fn into_result(self, provider: &'static str) -> llm_core::Result<Response> {
        if let Some(failure) = &self.interrupted {
            return Err(failure.to_error(provider));
        }
        if let Some((position, raw, details)) = self.malformed_arguments().into_iter().next() {
            let call = self.response.tool_calls().get(position).copied().cloned();
            let (id, tool) = call.map(|call| (call.id, call.name)).unwrap_or_default();
            return Err(LlmError::MalformedToolArguments {
                id,
                tool,
                raw: raw.to_owned(),
                details,
            });
        }
        Ok(self.response)
    }

    /// The stream `stream` yields: text, thinking and tool arguments cut into deltas of a
    /// few words or bytes, as providers send them, with usage after the start and at the end.
    /// Collecting it gives [`Answer::into_result`]'s response.
    pub fn events(&self, provider: &'static str) -> Vec<llm_core::Result<Event>> {
        let response = &self.response;
        let mut events = vec![
            Ok(Event::Start {
                id: response.id.clone(),
                model: response.model.clone(),
                request_id: response.request_id.clone(),
                headers: response.headers.clone(),
            }),
            Ok(Event::Usage(Usage {
                output_tokens: 0,
                reasoning_tokens: 0,
                ..response.usage
            })),
        ];
        let mut body = Vec::new();
        let mut tool_index = 0;
        let mut failed = None;
        for block in &response.content {
            match block {
                ContentBlock::Text { text } => body.extend(word_pieces(text).map(|text| {
                    Ok(Event::TextDelta {
                        text: text.to_owned(),
                    })
                })),
                ContentBlock::Thinking { text, signature } => {
                    body.extend(word_pieces(text).map(|text| {
                        Ok(Event::ThinkingDelta {
                            text: text.to_owned(),
                        })
                    }));
                    if let Some(signature) = signature {
                        body.push(Ok(Event::ThinkingSignature {
                            signature: signature.clone(),
                        }));
                    }
                }
                ContentBlock::RedactedThinking { data } => {
                    body.push(Ok(Event::RedactedThinking { data: data.clone() }));
                }
                ContentBlock::ToolUse(call) => {
                    let index = tool_index;
                    tool_index += 1;
                    body.push(Ok(Event::ToolCallStart {
                        index,
                        id: call.id.clone(),
                        name: call.name.clone(),
                    }));
                    let raw = self.raw_arguments.get(&index);
                    let arguments = raw.cloned().unwrap_or_else(|| call.input.to_string());
                    body.extend(byte_pieces(&arguments, 16).map(|arguments| {
                        Ok(Event::ToolCallDelta {
                            index,
                            arguments: arguments.to_owned(),
                        })
                    }));
                    if let Some(raw) = raw
                        && let Err(err) = serde_json::from_str::<serde_json::Value>(raw)
                    {
                        failed = Some(LlmError::MalformedToolArguments {
                            id: call.id.clone(),
                            tool: call.name.clone(),
                            raw: raw.clone(),
                            details: err.to_string(),
                        });
                        break;
                    }
                    body.push(Ok(Event::ToolCallEnd {
                        index,
                        input: call.input.clone(),
                    }));
                }
                ContentBlock::Image { .. } | ContentBlock::ToolResult { .. } => {}
            }
        }
        if let Some(failure) = &self.interrupted {
            let is_delta = |event: &llm_core::Result<Event>| {
                matches!(
                    event,
                    Ok(Event::TextDelta { .. }
                        | Event::ThinkingDelta { .. }
                        | Event::ToolCallDelta { .. })
                )
            };
            events.extend(half_way(body, is_delta));
            events.push(Err(failure.to_error(provider)));
            return events;
        }
        events.extend(body);
        if let Some(error) = failed {
            events.push(Err(error));
            return events;
        }
        events.push(Ok(Event::Usage(response.usage)));
        events.push(Ok(Event::Stop {
            reason: response.stop_reason.clone(),
        }));
        events
    }
}

/// `text` in pieces of two words each (a word with the spaces after it), as a model streams
/// a couple of tokens at a time. Empty text gives no piece.
pub fn word_pieces(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut end = 0;
        for _ in 0..2 {
            let tail = &rest[end..];
            let word = tail.find(char::is_whitespace).map_or(tail.len(), |start| {
                let after = &tail[start..];
                start + after.len() - after.trim_start().len()
            });
            end += word;
            if end == rest.len() {
                break;
            }
        }
        let (piece, tail) = rest.split_at(end.max(1).min(rest.len()));
        rest = tail;
        Some(piece)
    })
}

/// `text` in pieces of at most `size` bytes, never splitting a character.
pub fn byte_pieces(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest.ceil_char_boundary(size);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

/// `items` up to and including the first half (rounded up) of those that `is_delta` picks.
pub(crate) fn half_way<T>(items: Vec<T>, is_delta: impl Fn(&T) -> bool) -> Vec<T> {
    let keep = items
        .iter()
        .filter(|item| is_delta(item))
        .count()
        .div_ceil(2);
    let mut seen = 0;
    items
        .into_iter()
        .take_while(|item| {
            if seen == keep {
                return false;
            }
            seen += usize::from(is_delta(item));
            true
        })
        .collect()
}
