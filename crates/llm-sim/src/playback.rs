//! Playback of a recording: requests are matched against the recorded ones by canonical
//! JSON after scrubbing, and a miss names the closest recorded request and the first field
//! that differs.

use std::path::Path;

use llm_core::Request;
use regex::Regex;
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::reply::Reply;
use crate::script::{Script, Step};
use crate::strategy::Strategy;

/// Rewrites volatile text (temporary paths, dates, ids) to fixed placeholders, in
/// recordings and in the requests matched against them, so that a replay matches a
/// recording made on another day or machine.
#[derive(Debug, Clone, Default)]
pub struct Scrubber {
    rules: Vec<(Regex, String)>,
}

impl Scrubber {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a rule: every match of `pattern` becomes `replacement` (`$1` names a group).
    pub fn rule(mut self, pattern: &str, replacement: &str) -> Result<Self> {
        let regex = Regex::new(pattern).map_err(|err| Error::InvalidPattern {
            pattern: pattern.to_owned(),
            details: err.to_string(),
        })?;
        self.rules.push((regex, replacement.to_owned()));
        Ok(self)
    }

    /// Adds a rule: every occurrence of `text`, taken literally, becomes `replacement`.
    pub fn literal(self, text: &str, replacement: &str) -> Result<Self> {
        self.rule(&regex::escape(text), &replacement.replace('$', "$$"))
    }

    pub fn scrub_str(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (regex, replacement) in &self.rules {
            if regex.is_match(&text) {
                text = regex.replace_all(&text, replacement.as_str()).into_owned();
            }
        }
        text
    }

    /// Scrubs every string in `value`, keys included.
    pub fn scrub_value(&self, value: &mut Value) {
        if self.rules.is_empty() {
            return;
        }
        match value {
            Value::String(text) => *text = self.scrub_str(text),
            Value::Array(items) => items.iter_mut().for_each(|item| self.scrub_value(item)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (key, mut item) in entries {
                    self.scrub_value(&mut item);
                    map.insert(self.scrub_str(&key), item);
                }
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }
}

/// What playback compares: the request's model, system prompt, messages and tools, as
/// JSON, scrubbed. Sampling settings, metadata and provider extras do not take part.
pub fn canonical_request(request: &Request, scrubber: &Scrubber) -> Value {
    let mut value = json!({
        "model": request.model,
        "system": request.system,
        "messages": request.messages,
        "tools": request.tools,
    });
    scrubber.scrub_value(&mut value);
    value
}

/// How recorded requests are matched to calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PlaybackOrder {
    /// Call N must match recorded step N.
    #[default]
    InOrder,
    /// A call takes the first unused recorded step that matches, for callers that send
    /// independent requests concurrently.
    AnyOrder,
}

/// Replays a recording.
#[derive(Debug, Clone)]
pub struct Playback {
    origin: String,
    steps: Vec<(Value, Step)>,
    used: Vec<bool>,
    next: usize,
    order: PlaybackOrder,
    scrubber: Scrubber,
}

impl Playback {
    /// A playback of `script`, every step of which must carry its recorded `request`.
    pub fn new(script: Script, origin: &str) -> Result<Self> {
        let mut steps = Vec::with_capacity(script.responses.len());
        for (index, step) in script.responses.into_iter().enumerate() {
            let Some(request) = step.request.clone() else {
                return Err(Error::Script {
                    origin: origin.to_owned(),
                    line: None,
                    column: None,
                    message: format!(
                        "responses[{index}] has no request, expected a recording: every step of a \
                         playback script carries the request it answered"
                    ),
                });
            };
            steps.push((request, step));
        }
        Ok(Self {
            origin: origin.to_owned(),
            used: vec![false; steps.len()],
            steps,
            next: 0,
            order: PlaybackOrder::default(),
            scrubber: Scrubber::default(),
        })
    }

    pub fn load(path: &Path) -> Result<Self> {
        Self::new(Script::load(path)?, &path.display().to_string())
    }

    pub fn with_order(mut self, order: PlaybackOrder) -> Self {
        self.order = order;
        self
    }

    /// The rules the recording was scrubbed with, applied to live requests before matching.
    pub fn with_scrubber(mut self, scrubber: Scrubber) -> Self {
        self.scrubber = scrubber;
        self
    }

    /// Recorded steps not yet replayed.
    pub fn remaining(&self) -> usize {
        self.used.iter().filter(|used| !**used).count()
    }

    fn candidates(&self) -> Vec<usize> {
        match self.order {
            PlaybackOrder::InOrder => (self.next..self.steps.len()).collect(),
            PlaybackOrder::AnyOrder => (0..self.steps.len()).filter(|&i| !self.used[i]).collect(),
        }
    }

    fn miss(&self, call: u64, actual: &Value, candidates: &[usize]) -> Error {
        let closest = candidates
            .iter()
            .copied()
            .max_by_key(|&index| (similarity(&self.steps[index].0, actual), usize::MAX - index))
            .expect("a miss is reported only when candidates remain");
        let recorded = &self.steps[closest].0;
        let (field, was, got) = first_difference(recorded, actual)
            .unwrap_or_else(|| (String::new(), "equal".to_owned(), "equal".to_owned()));
        let pretty = serde_json::to_string_pretty(recorded).expect("json values serialize");
        Error::PlaybackMiss {
            call,
            closest_step: closest + 1,
            field,
            recorded: was,
            actual: got,
            closest: excerpt(&pretty, 2000),
        }
    }
}

impl Strategy for Playback {
    fn reply(&mut self, call: u64, request: &Request) -> Result<Reply> {
        let actual = canonical_request(request, &self.scrubber);
        let candidates = self.candidates();
        if candidates.is_empty() {
            return Err(Error::PlaybackExhausted {
                call,
                origin: self.origin.clone(),
                recorded: self.steps.len(),
            });
        }
        let found = match self.order {
            PlaybackOrder::InOrder => candidates
                .first()
                .copied()
                .filter(|&index| self.steps[index].0 == actual),
            PlaybackOrder::AnyOrder => candidates
                .iter()
                .copied()
                .find(|&index| self.steps[index].0 == actual),
        };
        let Some(index) = found else {
            return Err(self.miss(call, &actual, &candidates));
        };
        self.used[index] = true;
        self.next = index + 1;
        Ok(self.steps[index].1.reply(call, request))
    }
}

/// Equal leaves at equal paths: how alike two requests are.
fn similarity(a: &Value, b: &Value) -> usize {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => a
            .iter()
            .filter_map(|(key, value)| Some(similarity(value, b.get(key)?)))
            .sum(),
        (Value::Array(a), Value::Array(b)) => a.iter().zip(b).map(|(a, b)| similarity(a, b)).sum(),
        (a, b) => usize::from(a == b),
    }
}

/// The path of the first field where `actual` differs from `recorded`, with both values
/// as short JSON. Top-level fields are visited in the order a reader scans a request.
pub fn first_difference(recorded: &Value, actual: &Value) -> Option<(String, String, String)> {
    const ORDER: [&str; 4] = ["model", "system", "messages", "tools"];
    if let (Value::Object(r), Value::Object(a)) = (recorded, actual) {
        let mut keys: Vec<&str> = ORDER.to_vec();
        for key in r.keys().chain(a.keys()) {
            if !keys.contains(&key.as_str()) {
                keys.push(key);
            }
        }
        for key in keys {
            if let Some(found) = diff_at(r.get(key), a.get(key), key.to_owned()) {
                return Some(found);
            }
        }
        return None;
    }
    diff_at(Some(recorded), Some(actual), String::new())
}

fn diff_at(
    recorded: Option<&Value>,
    actual: Option<&Value>,
    path: String,
) -> Option<(String, String, String)> {
    match (recorded, actual) {
        (None, None) => None,
        (Some(Value::Object(r)), Some(Value::Object(a))) => {
            let mut keys: Vec<&String> = r.keys().chain(a.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .find_map(|key| diff_at(r.get(key), a.get(key), join(&path, key)))
        }
        (Some(Value::Array(r)), Some(Value::Array(a))) => (0..r.len().max(a.len()))
            .find_map(|i| diff_at(r.get(i), a.get(i), format!("{path}[{i}]"))),
        (r, a) if r == a => None,
        (r, a) => Some((path, show(r), show(a))),
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

fn show(value: Option<&Value>) -> String {
    match value {
        None => "nothing".to_owned(),
        Some(value) => excerpt(&value.to_string(), 200),
    }
}

/// `text` cut to about `limit` bytes at a character boundary.
fn excerpt(text: &str, limit: usize) -> String {
    llm_core::text::excerpt(text, limit)
}
