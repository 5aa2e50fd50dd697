//! The YAML script format: a list of steps, each one answer (or one failure) of the model.
//!
//! ```yaml
//! metadata:
//!   name: "Fix Violation - Success Path"
//!   task_type: fix_violation
//! responses:
//!   - step: 1
//!     thinking: First read the file.
//!     tool_calls:
//!       - name: read_file
//!         input: {path: src/lib.rs}
//!   - step: 2
//!     failure: {kind: rate_limited, retry_after: 2}
//!   - step: 3
//!     content: Done.
//! ```
//!
//! Every struct denies unknown fields: a misspelt key is an error naming the file, the line and
//! the keys that were expected, never a silently ignored setting. A recording (see
//! [`crate::RecordingClient`]) is a script whose steps also carry the `request` they answered.

use std::path::Path;

use llm_core::{ContentBlock, Request, Response, StopReason, ToolCall, Usage};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::reply::{Answer, Failure, Reply};

/// A whole script file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    #[serde(default)]
    pub responses: Vec<Step>,
}

/// What a script is for; read by people, not by the simulator.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Metadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_type: Option<String>,
}

/// One scripted answer, or one injected failure.
///
/// Without `stop_reason`, a step with tool calls stops with `tool_use`, others with `end_turn`.
/// Without `usage`, tokens are estimated from the request and the answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawStep")]
pub struct Step {
    /// A label for people; when given it must be the step's position, counting from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<u32>,
    /// The request this step answered, in recordings: what playback matches against.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request: Option<Value>,
    /// The response's id (recordings keep the provider's); default `msg_sim_<call>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    /// The signature of `thinking`, passed back unchanged by callers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<StopReason>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageSpec>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureSpec>,
}

/// A tool call the model makes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCallSpec {
    /// Default: `sim_<call>_<position>`, unique within a conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    pub name: String,
    /// The call's arguments; `parameters` is accepted as another name for it.
    #[serde(default, alias = "parameters", skip_serializing_if = "Option::is_none")]
    pub input: Option<Value>,
    /// Argument text sent verbatim instead of `input`: set it to broken JSON to inject a
    /// malformed tool-call payload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<String>,
}

/// Token counts of a step, overriding the estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UsageSpec {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub cache_creation_input_tokens: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub cache_read_input_tokens: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub reasoning_tokens: u64,
}

fn is_zero(value: &u64) -> bool {
    *value == 0
}

impl From<UsageSpec> for Usage {
    fn from(spec: UsageSpec) -> Self {
        Usage {
            input_tokens: spec.input_tokens,
            output_tokens: spec.output_tokens,
            cache_creation_input_tokens: spec.cache_creation_input_tokens,
            cache_read_input_tokens: spec.cache_read_input_tokens,
            reasoning_tokens: spec.reasoning_tokens,
            cache_creation_1h_input_tokens: 0,
        }
    }
}

impl From<Usage> for UsageSpec {
    fn from(usage: Usage) -> Self {
        UsageSpec {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens,
            cache_read_input_tokens: usage.cache_read_input_tokens,
            reasoning_tokens: usage.reasoning_tokens,
        }
    }
}

/// A failure a step injects instead of (or, for `mid_stream`, in the middle of) an answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum FailureSpec {
    /// HTTP 429 with `retry-after` (seconds, default 1).
    RateLimited {
        #[serde(
            default,
            deserialize_with = "seconds",
            skip_serializing_if = "Option::is_none"
        )]
        retry_after: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// HTTP 529 (Anthropic's overloaded; OpenAI-style servers answer 503).
    Overloaded {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// An HTTP 5xx, 500 by default.
    ServerError {
        #[serde(
            default,
            deserialize_with = "server_status",
            skip_serializing_if = "Option::is_none"
        )]
        status: Option<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// No answer at all: the simulated client fails with a request timeout at once, the
    /// server holds the connection open until the client gives up.
    Timeout,
    /// The step's answer starts streaming, then an error event ends it (overloaded by
    /// default). A `complete` call fails with that error outright.
    MidStream {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<MidStreamError>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
}

/// The error that interrupts a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MidStreamError {
    Overloaded,
    ServerError,
}

/// The longest `retry_after` a script may give: a day is far past any client's patience, and
/// far below what a `Duration` can hold.
const MAX_RETRY_AFTER_SECONDS: f64 = 86_400.0;

fn seconds<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<f64>, D::Error> {
    let value = f64::deserialize(deserializer)?;
    if value.is_finite() && (0.0..=MAX_RETRY_AFTER_SECONDS).contains(&value) {
        Ok(Some(value))
    } else {
        Err(serde::de::Error::custom(format!(
            "retry_after is {value}, expected a number of seconds from 0 to {MAX_RETRY_AFTER_SECONDS}"
        )))
    }
}

fn server_status<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u16>, D::Error> {
    let status = u16::deserialize(deserializer)?;
    if (500..=599).contains(&status) {
        Ok(Some(status))
    } else {
        Err(serde::de::Error::custom(format!(
            "status is {status}, expected a server error status from 500 to 599"
        )))
    }
}

fn stop_reason<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<StopReason>, D::Error> {
    const KNOWN: [&str; 6] = [
        "end_turn",
        "tool_use",
        "max_tokens",
        "stop_sequence",
        "refusal",
        "pause_turn",
    ];
    let value = String::deserialize(deserializer)?;
    if KNOWN.contains(&value.as_str()) {
        Ok(Some(StopReason::parse(&value)))
    } else {
        Err(serde::de::Error::custom(format!(
            "unknown stop_reason `{value}`, expected one of {}",
            KNOWN.join(", ")
        )))
    }
}

/// The step as written, before the checks that involve several fields.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    #[serde(default)]
    step: Option<u32>,
    #[serde(default)]
    request: Option<Value>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    signature: Option<String>,
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallSpec>,
    #[serde(default, deserialize_with = "stop_reason")]
    stop_reason: Option<StopReason>,
    #[serde(default)]
    usage: Option<UsageSpec>,
    #[serde(default)]
    failure: Option<FailureSpec>,
}

impl TryFrom<RawStep> for Step {
    type Error = String;

    fn try_from(raw: RawStep) -> Result<Self, String> {
        let label = raw
            .step
            .map_or_else(|| "a step".to_owned(), |step| format!("step {step}"));
        let has_answer =
            raw.content.is_some() || raw.thinking.is_some() || !raw.tool_calls.is_empty();
        if let Some(failure) = &raw.failure
            && !matches!(failure, FailureSpec::MidStream { .. })
            && has_answer
        {
            return Err(format!(
                "{label} has a failure and an answer; only a mid_stream failure streams an answer, \
                 expected either content/thinking/tool_calls or a failure"
            ));
        }
        for call in &raw.tool_calls {
            if call.input.is_some() && call.raw_input.is_some() {
                return Err(format!(
                    "{label}: tool call `{}` has both input and raw_input, expected one of them",
                    call.name
                ));
            }
        }
        Ok(Step {
            step: raw.step,
            request: raw.request,
            id: raw.id,
            model: raw.model,
            thinking: raw.thinking,
            signature: raw.signature,
            content: raw.content,
            tool_calls: raw.tool_calls,
            stop_reason: raw.stop_reason,
            usage: raw.usage,
            failure: raw.failure,
        })
    }
}

impl Step {
    /// A step that answers with text.
    pub fn text(content: impl Into<String>) -> Self {
        Self {
            content: Some(content.into()),
            ..Self::default()
        }
    }

    /// A step that calls one tool.
    pub fn tool_call(name: impl Into<String>, input: Value) -> Self {
        Self::default().with_tool_call(name, input)
    }

    /// A step that fails.
    pub fn failure(failure: FailureSpec) -> Self {
        Self {
            failure: Some(failure),
            ..Self::default()
        }
    }

    pub fn with_tool_call(mut self, name: impl Into<String>, input: Value) -> Self {
        self.tool_calls.push(ToolCallSpec {
            id: None,
            name: name.into(),
            input: Some(input),
            raw_input: None,
        });
        self
    }

    pub fn with_thinking(mut self, thinking: impl Into<String>) -> Self {
        self.thinking = Some(thinking.into());
        self
    }

    /// The reply this step gives to call number `call` (from 1) carrying `request`.
    pub fn reply(&self, call: u64, request: &Request) -> Reply {
        let answer = || self.answer(call, request);
        match &self.failure {
            None => Reply::Answer(answer()),
            Some(FailureSpec::RateLimited {
                retry_after,
                message,
            }) => Reply::Failure(Failure::RateLimited {
                retry_after: std::time::Duration::from_secs_f64(retry_after.unwrap_or(1.0)),
                message: message
                    .clone()
                    .unwrap_or_else(|| "simulated rate limit".to_owned()),
            }),
            Some(FailureSpec::Overloaded { message }) => Reply::Failure(Failure::Overloaded {
                message: message.clone().unwrap_or_else(|| "Overloaded".to_owned()),
            }),
            Some(FailureSpec::ServerError { status, message }) => Reply::Failure(Failure::Server {
                status: status.unwrap_or(500),
                message: message
                    .clone()
                    .unwrap_or_else(|| "simulated server error".to_owned()),
            }),
            Some(FailureSpec::Timeout) => Reply::Failure(Failure::Timeout),
            Some(FailureSpec::MidStream { error, message }) => {
                let message = message.clone();
                let failure = match error.unwrap_or(MidStreamError::Overloaded) {
                    MidStreamError::Overloaded => Failure::Overloaded {
                        message: message.unwrap_or_else(|| "Overloaded".to_owned()),
                    },
                    MidStreamError::ServerError => Failure::Server {
                        status: 500,
                        message: message.unwrap_or_else(|| "simulated server error".to_owned()),
                    },
                };
                let mut answer = answer();
                answer.interrupted = Some(failure);
                Reply::Answer(answer)
            }
        }
    }

    fn answer(&self, call: u64, request: &Request) -> Answer {
        let mut content = Vec::new();
        if self.thinking.is_some() || self.signature.is_some() {
            content.push(ContentBlock::Thinking {
                text: self.thinking.clone().unwrap_or_default(),
                signature: self.signature.clone(),
            });
        }
        if let Some(text) = self.content.as_ref().filter(|text| !text.is_empty()) {
            content.push(ContentBlock::text(text.clone()));
        }
        let mut raw_arguments = std::collections::BTreeMap::new();
        for (position, spec) in self.tool_calls.iter().enumerate() {
            let id = spec
                .id
                .clone()
                .unwrap_or_else(|| format!("sim_{call}_{position}"));
            let input = match (&spec.raw_input, &spec.input) {
                (Some(raw), _) => {
                    raw_arguments.insert(position, raw.clone());
                    serde_json::from_str(raw).unwrap_or(Value::Null)
                }
                (None, Some(input)) => input.clone(),
                (None, None) => Value::Object(Map::new()),
            };
            content.push(ContentBlock::ToolUse(ToolCall {
                id,
                name: spec.name.clone(),
                input,
            }));
        }
        let stop_reason = self
            .stop_reason
            .clone()
            .unwrap_or(if self.tool_calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            });
        let model = match (&self.model, request.model.as_str()) {
            (Some(model), _) => model.clone(),
            (None, "") => "simulated".to_owned(),
            (None, model) => model.to_owned(),
        };
        let mut response = Response {
            content,
            stop_reason,
            usage: Usage::default(),
            model,
            id: Some(self.id.clone().unwrap_or_else(|| format!("msg_sim_{call}"))),
            request_id: None,
            headers: Default::default(),
            service_tier: request.service_tier.map(|tier| tier.as_str().to_owned()),
        };
        response.usage = match self.usage {
            Some(usage) => usage.into(),
            None => estimated_usage(request, &response),
        };
        Answer {
            response,
            raw_arguments,
            interrupted: None,
            usage_estimated: self.usage.is_none(),
        }
    }
}

/// Usage for an answer whose script gave none: llm-core's estimates of the request and of
/// what the answer says, so that budgets and compaction see plausible numbers.
pub fn estimated_usage(request: &Request, response: &Response) -> Usage {
    let mut output = 0;
    for block in &response.content {
        output += match block {
            ContentBlock::Text { text } | ContentBlock::Thinking { text, .. } => {
                llm_core::tokens::estimate_text(text)
            }
            ContentBlock::ToolUse(call) => {
                llm_core::tokens::estimate_text(&call.name)
                    + llm_core::tokens::estimate_text(&call.input.to_string())
            }
            _ => 0,
        };
    }
    Usage {
        input_tokens: llm_core::tokens::estimate_request(request),
        output_tokens: output.max(1),
        ..Usage::default()
    }
}

impl Script {
    /// Reads a script file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = read(path)?;
        parse_yaml(&text, &path.display().to_string())
    }

    /// Parses a script; `origin` names it in errors (a path, or `<inline>`).
    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        parse_yaml(text, origin)
    }

    /// Checks what serde cannot: step labels match positions. `text` is the script's
    /// source, for the line of a wrong label.
    pub(crate) fn check(&self, text: &str, origin: &str) -> Result<()> {
        for (index, step) in self.responses.iter().enumerate() {
            let position = index + 1;
            if let Some(label) = step.step
                && label as usize != position
            {
                let earlier = self.responses[..index]
                    .iter()
                    .filter(|other| other.step == Some(label))
                    .count();
                return Err(Error::Script {
                    origin: origin.to_owned(),
                    line: label_line(text, label, earlier),
                    column: None,
                    message: format!(
                        "responses[{index}]: step is {label}, expected {position}: steps are \
                         numbered by their position, from 1"
                    ),
                });
            }
        }
        Ok(())
    }

    /// The script as YAML, as [`crate::RecordingClient::save`] writes it.
    pub fn to_yaml(&self) -> String {
        serde_yaml::to_string(self).expect("a script holds only strings, numbers, maps and lists")
    }
}

pub(crate) fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })
}

fn parse_yaml(text: &str, origin: &str) -> Result<Script> {
    let script: Script = from_yaml(text, origin)?;
    script.check(text, origin)?;
    Ok(script)
}

/// The line (from 1) of the `skip`-th `step: <label>` key in `text`. serde keeps no
/// positions after parsing, and a label is a plain key, so a line scan finds it.
fn label_line(text: &str, label: u32, skip: usize) -> Option<usize> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let line = line.trim_start().trim_start_matches('-').trim_start();
            line.strip_prefix("step:")
                .and_then(|rest| rest.split('#').next())
                .is_some_and(|value| value.trim() == label.to_string())
        })
        .nth(skip)
        .map(|(index, _)| index + 1)
}

/// Deserializes YAML, turning serde's error into one that names the file and the line.
pub(crate) fn from_yaml<T: serde::de::DeserializeOwned>(text: &str, origin: &str) -> Result<T> {
    serde_yaml::from_str(text).map_err(|err| yaml_error(&err, origin))
}

pub(crate) fn yaml_error(err: &serde_yaml::Error, origin: &str) -> Error {
    let location = err.location();
    let mut message = err.to_string();
    // serde_norway appends the location to its message; ours goes in front, like a
    // compiler's. Other positions inside the message (a scanner's context) stay.
    if let Some(location) = &location {
        let suffix = format!(" at line {} column {}", location.line(), location.column());
        if message.ends_with(&suffix) {
            message.truncate(message.len() - suffix.len());
        }
    }
    Error::Script {
        origin: origin.to_owned(),
        line: location.as_ref().map(|location| location.line()),
        column: location.as_ref().map(|location| location.column()),
        message,
    }
}
