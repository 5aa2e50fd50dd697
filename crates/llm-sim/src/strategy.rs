//! How a simulated model chooses its answer: the [`Strategy`] trait, the scripted strategy
//! that follows a YAML script step by step, and the pattern strategy that matches requests.

use std::fmt;
use std::path::Path;

use llm_core::{ContentBlock, Request, Role};
use regex::Regex;
use serde::{Deserialize, Deserializer};
use serde_json::json;

use crate::error::Result;
use crate::reply::Reply;
use crate::script::{Metadata, Script, Step, from_yaml, read};

/// Chooses the reply to each call. Strategies keep their own position (a script's next
/// step, a recording's cursor); the simulated client and the fake server serialize calls.
pub trait Strategy: Send + fmt::Debug {
    /// The reply to call number `call` (from 1, counted since the client or server started)
    /// carrying `request`. An error is a fault of the simulation itself (a playback miss),
    /// not a simulated failure: those are [`Reply::Failure`].
    fn reply(&mut self, call: u64, request: &Request) -> Result<Reply>;
}

/// Follows a script, one step per call. When the steps run out it answers with a `complete`
/// tool call and says so, so that an agent loop ends instead of hanging.
#[derive(Debug, Clone)]
pub struct Scripted {
    script: Script,
    next: usize,
}

impl Scripted {
    pub fn new(script: Script) -> Self {
        Self { script, next: 0 }
    }

    pub fn load(path: &Path) -> Result<Self> {
        Ok(Self::new(Script::load(path)?))
    }

    /// Steps answered so far.
    pub fn position(&self) -> usize {
        self.next
    }

    pub fn exhausted(&self) -> bool {
        self.next >= self.script.responses.len()
    }

    /// Starts again from the first step.
    pub fn reset(&mut self) {
        self.next = 0;
    }

    /// The answer once the script has run out.
    pub fn script_ended() -> Step {
        Step::text("No more scripted responses")
            .with_tool_call("complete", json!({"summary": "Script ended"}))
    }
}

impl Strategy for Scripted {
    fn reply(&mut self, call: u64, request: &Request) -> Result<Reply> {
        let Some(step) = self.script.responses.get(self.next) else {
            return Ok(Self::script_ended().reply(call, request));
        };
        self.next += 1;
        Ok(step.reply(call, request))
    }
}

/// Answers by the first pattern that matches the request; with no match, the default answer,
/// or an `escalate` tool call with the reason "no pattern match".
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Patterns {
    #[serde(default)]
    pub metadata: Option<Metadata>,
    #[serde(default)]
    pub patterns: Vec<Pattern>,
    #[serde(default)]
    pub default: Option<Step>,
}

/// One matcher and its answer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pattern {
    pub when: Matcher,
    pub respond: Step,
}

/// Conditions on a request, all of which must hold; an empty matcher matches every request.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    /// A regex searched in the last user message: its text and its tool results' content.
    #[serde(default)]
    pub last_user_message: Option<TextRegex>,
    /// Tools that must all be offered.
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default)]
    pub system_contains: Option<String>,
    /// The call number, from 1.
    #[serde(default)]
    pub call: Option<u64>,
}

/// A compiled regex that deserializes from its source, failing at the line that holds it.
#[derive(Debug, Clone)]
pub struct TextRegex(pub Regex);

impl<'de> Deserialize<'de> for TextRegex {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let source = String::deserialize(deserializer)?;
        Regex::new(&source)
            .map(TextRegex)
            .map_err(|err| serde::de::Error::custom(format!("invalid regex {source:?}: {err}")))
    }
}

impl Matcher {
    pub fn matches(&self, call: u64, request: &Request) -> bool {
        if self.call.is_some_and(|wanted| wanted != call) {
            return false;
        }
        if let Some(needle) = &self.system_contains
            && !request
                .system
                .as_deref()
                .is_some_and(|system| system.contains(needle.as_str()))
        {
            return false;
        }
        if !self
            .tools
            .iter()
            .all(|name| request.tools.iter().any(|tool| &tool.name == name))
        {
            return false;
        }
        match &self.last_user_message {
            Some(regex) => last_user_text(request).is_some_and(|text| regex.0.is_match(&text)),
            None => true,
        }
    }
}

/// The text of the last user message: text blocks and tool results, one per line.
pub fn last_user_text(request: &Request) -> Option<String> {
    let message = request
        .messages
        .iter()
        .rev()
        .find(|message| message.role == Role::User)?;
    let parts: Vec<&str> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            ContentBlock::ToolResult { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    Some(parts.join("\n"))
}

impl Patterns {
    pub fn load(path: &Path) -> Result<Self> {
        let text = read(path)?;
        Self::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, origin: &str) -> Result<Self> {
        from_yaml(text, origin)
    }

    /// Adds a pattern after the existing ones.
    pub fn push(&mut self, when: Matcher, respond: Step) {
        self.patterns.push(Pattern { when, respond });
    }

    /// The answer when no pattern matches and no default is set.
    pub fn no_match() -> Step {
        Step::text("No matching pattern found")
            .with_tool_call("escalate", json!({"reason": "no pattern match"}))
    }
}

impl Strategy for Patterns {
    fn reply(&mut self, call: u64, request: &Request) -> Result<Reply> {
        let step = self
            .patterns
            .iter()
            .find(|pattern| pattern.when.matches(call, request))
            .map(|pattern| pattern.respond.clone())
            .or_else(|| self.default.clone())
            .unwrap_or_else(Self::no_match);
        Ok(step.reply(call, request))
    }
}

/// Answers every call with a digest of its request's system prompt and messages (usage as
/// estimated, or as the fake service counts it): an answer depends on the request alone, never on the call number, so
/// runs that make the same calls in another order (a batch, more threads) get the same
/// answers. For comparing such runs, not for driving an agent.
#[derive(Debug, Clone, Copy, Default)]
pub struct Digest;

impl Strategy for Digest {
    fn reply(&mut self, _call: u64, request: &Request) -> Result<Reply> {
        let prompt = serde_json::to_string(&(&request.system, &request.messages))
            .expect("a request is plain data");
        // FNV-1a: stable across runs and platforms, and enough to tell prompts apart.
        let digest = prompt.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
        });
        // The usage is left to whoever bills the call (the fake service counts the input
        // with its own tokenizer and splits it by its prompt cache).
        let step = Step::text(format!("summary {digest:016x}"));
        Ok(step.reply(0, request))
    }
}
