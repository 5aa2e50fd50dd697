//! Compaction: when a conversation outgrows the context window, its older messages are replaced
//! by one summary message, and the replaced ones are archived whole.
//!
//! The summary has two parts. The model writes the narrative ([`REQUIRED_SECTIONS`], checked:
//! a summary missing one is asked for again once, then compaction falls back to dropping the
//! messages with a note). The [`Ledger`] is built from the messages themselves, never by the
//! model, so it cannot be hallucinated away: files read and modified, tool failures with their
//! errors, the active intent and the pending user request verbatim. Ledgers accumulate across
//! compactions (the conversation's metadata keeps the running one), so a file read before the
//! first compaction is still listed after the third.
//!
//! Everything here is pure; the turn loop makes the model call and writes the result.
//!
//! At most one compaction runs per request, and the replaced messages go to `archive.jsonl`
//! before the transcript is rewritten.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use llm_core::{ContentBlock, Message, Request, Role};
use serde::{Deserialize, Serialize};

/// Headings the model's summary must contain, in any order.
pub const REQUIRED_SECTIONS: [&str; 3] = ["## Goal", "## Progress", "## Next steps"];

/// The first line of every summary message: how a reader (and the next compaction) knows it.
pub const SUMMARY_MARKER: &str = "[merkle: compacted conversation]";

/// Tools whose `path` argument names a file read.
const READ_TOOLS: [&str; 2] = ["read_file", "get_node"];
/// Tools whose `path` argument names a file changed, when they succeed.
const WRITE_TOOLS: [&str; 2] = ["write_file", "edit_file"];
/// A failure's error text is kept to this many bytes in the ledger.
const FAILURE_BYTES: usize = 300;
/// The pending request is kept verbatim up to this many bytes; a longer one is cut with a
/// marker (it is still whole in the kept messages or the archive).
const PENDING_BYTES: usize = 16_000;
/// Failures beyond this many are counted, not listed: the ledger must stay small.
const MAX_FAILURES: usize = 20;

/// What compaction may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionConfig {
    /// The most tokens of old messages sent to the summarizer; older ones are cut first.
    pub max_input_tokens: u64,
    /// The summary's token limit.
    pub max_summary_tokens: u32,
}

impl Default for CompactionConfig {
    fn default() -> Self {
        Self {
            max_input_tokens: 50_000,
            max_summary_tokens: 2_000,
        }
    }
}

/// Facts about a conversation taken from its messages, not from the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub files_read: BTreeSet<String>,
    pub files_modified: BTreeSet<String>,
    /// `tool: error`, oldest first, at most [`MAX_FAILURES`].
    pub tool_failures: Vec<String>,
    /// Failures not listed because the list was full.
    #[serde(default)]
    pub more_failures: u64,
}

impl Ledger {
    /// Adds what `messages` show: successful reads and writes by path, failed calls with their
    /// errors.
    pub fn record(&mut self, messages: &[Message]) {
        for (index, message) in messages.iter().enumerate() {
            if message.role != Role::Assistant {
                continue;
            }
            let results = messages.get(index + 1).map_or(&[][..], |m| &m.content[..]);
            for block in &message.content {
                let ContentBlock::ToolUse(call) = block else {
                    continue;
                };
                let result = results.iter().find_map(|b| match b {
                    ContentBlock::ToolResult {
                        tool_use_id,
                        content,
                        is_error,
                    } if *tool_use_id == call.id => Some((content, *is_error)),
                    _ => None,
                });
                let Some((content, is_error)) = result else {
                    continue;
                };
                if is_error {
                    if self.tool_failures.len() < MAX_FAILURES {
                        let mut error = content.clone();
                        truncate(&mut error, FAILURE_BYTES);
                        self.tool_failures.push(format!(
                            "{}: {}",
                            call.name,
                            error.replace('\n', " ")
                        ));
                    } else {
                        self.more_failures += 1;
                    }
                    continue;
                }
                let path = call.input.get("path").and_then(|p| p.as_str());
                if let Some(path) = path {
                    if READ_TOOLS.contains(&call.name.as_str()) {
                        self.files_read.insert(path.to_owned());
                    } else if WRITE_TOOLS.contains(&call.name.as_str()) {
                        self.files_modified.insert(path.to_owned());
                    }
                }
            }
        }
    }

    /// The ledger as the summary message shows it, with the active intent and the pending
    /// request.
    pub fn render(&self, active_intent: Option<&str>, pending_request: Option<&str>) -> String {
        let mut out = String::from("## Ledger (recorded by merkle from the transcript)\n");
        let list = |out: &mut String, title: &str, items: &mut dyn Iterator<Item = &String>| {
            let _ = writeln!(out, "\n### {title}");
            let mut any = false;
            for item in items {
                let _ = writeln!(out, "- {item}");
                any = true;
            }
            if !any {
                out.push_str("- none\n");
            }
        };
        list(&mut out, "Files read", &mut self.files_read.iter());
        list(&mut out, "Files modified", &mut self.files_modified.iter());
        list(&mut out, "Tool failures", &mut self.tool_failures.iter());
        if self.more_failures > 0 {
            let _ = writeln!(out, "- and {} more", self.more_failures);
        }
        let _ = write!(
            out,
            "\n### Active intent\n{}\n\n### Pending request\n",
            active_intent.unwrap_or("none selected")
        );
        match pending_request {
            Some(request) => {
                let mut request = request.to_owned();
                truncate(&mut request, PENDING_BYTES);
                out.push_str(&request);
                if !request.ends_with('\n') {
                    out.push('\n');
                }
            }
            None => out.push_str("none\n"),
        }
        out
    }
}

/// The newest user request in `messages`, verbatim: the text of the last user message that
/// answers no tool call (the loop's own notes ride with tool results) and is not a compaction
/// summary.
pub fn pending_request(messages: &[Message]) -> Option<String> {
    messages.iter().rev().find_map(|message| {
        let answers_calls = message
            .content
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult { .. }));
        if message.role != Role::User || answers_calls {
            return None;
        }
        let text: Vec<&str> = message
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let text = text.join("\n");
        (!text.is_empty() && !text.starts_with(SUMMARY_MARKER)).then_some(text)
    })
}

/// The request that asks the model to summarize `messages`.
pub fn summary_request(model: &str, messages: &[Message], config: &CompactionConfig) -> Request {
    let system = format!(
        "You compact the history of a coding agent's conversation so the agent can continue \
         the task without it. Write a concise summary in Markdown with exactly these sections: \
         {}. Under Goal: what the user asked for. Under Progress: what was done, found and \
         decided, with file names. Under Next steps: what remains. Do not invent facts; a \
         ledger of files and failures is added separately.",
        REQUIRED_SECTIONS.join(", ")
    );
    let transcript = render_transcript(messages, config.max_input_tokens.saturating_mul(4));
    Request {
        model: model.to_owned(),
        system: Some(system),
        messages: vec![Message::user(format!(
            "Summarize this conversation history:\n\n{transcript}"
        ))],
        max_tokens: config.max_summary_tokens,
        ..Request::default()
    }
}

/// The required sections `summary` lacks; empty when it has them all.
pub fn missing_sections(summary: &str) -> Vec<&'static str> {
    REQUIRED_SECTIONS
        .into_iter()
        .filter(|section| !summary.lines().any(|line| line.trim_end() == *section))
        .collect()
}

/// The message that replaces the `dropped` oldest messages: the model's summary, or when there
/// is none the note saying why, then the ledger.
pub fn summary_message(dropped: usize, summary: Result<&str, &str>, ledger: &str) -> Message {
    let mut text = format!(
        "{SUMMARY_MARKER} The {dropped} oldest messages were replaced by this summary; they are \
         kept in the conversation's archive.jsonl.\n\n"
    );
    match summary {
        Ok(summary) => {
            text.push_str(summary.trim());
            text.push_str("\n\n");
        }
        Err(why) => {
            let _ = write!(
                text,
                "No summary could be made ({why}); the messages were dropped. The ledger below \
                 still lists what they did.\n\n"
            );
        }
    }
    text.push_str(ledger);
    Message::user(text)
}

/// `messages` as plain text for the summarizer, at most about `max_bytes`: each block cut to a
/// share, and the oldest blocks left out first when the whole is still too long.
fn render_transcript(messages: &[Message], max_bytes: u64) -> String {
    const BLOCK_BYTES: usize = 4_000;
    let mut blocks: Vec<String> = Vec::new();
    for message in messages {
        let who = match message.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        for block in &message.content {
            let mut line = match block {
                ContentBlock::Text { text } => format!("{who}: {text}"),
                ContentBlock::ToolUse(call) => {
                    format!("{who} called {} {}", call.name, call.input)
                }
                // A failed tool's result already starts with "error: ".
                ContentBlock::ToolResult {
                    content, is_error, ..
                } => match (*is_error, content.strip_prefix("error: ")) {
                    (true, Some(message)) => format!("tool error: {message}"),
                    (true, None) => format!("tool error: {content}"),
                    (false, _) => format!("tool result: {content}"),
                },
                ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => continue,
                ContentBlock::Image { .. } => format!("{who}: [image]"),
            };
            truncate(&mut line, BLOCK_BYTES);
            blocks.push(line);
        }
    }
    let mut total = 0u64;
    let mut start = blocks.len();
    while start > 0 {
        let next = blocks[start - 1].len() as u64 + 2;
        if total + next > max_bytes {
            break;
        }
        total += next;
        start -= 1;
    }
    let mut out = String::new();
    if start > 0 {
        let _ = writeln!(out, "[{start} older entries left out]\n");
    }
    out.push_str(&blocks[start..].join("\n\n"));
    out
}

fn truncate(text: &mut String, max: usize) {
    if text.len() > max {
        text.truncate(text.floor_char_boundary(max));
        text.push_str(" [...]");
    }
}
