//! The tools that end a task: `complete` (done, with a summary) and `escalate` (a human must
//! decide, with the reason).
//!
//! Their handlers only acknowledge; what they mean is the turn loop's business: after the
//! model's message is dispatched, a `complete` or `escalate` among its calls ends the turn
//! with that summary or reason, and no further model call is made.

use serde_json::json;

use crate::error::{Error, Result};
use crate::tools::ToolDefinition;
use crate::tools::builtin::str_field;

/// The tool that ends a task as done.
pub const COMPLETE: &str = governance::COMPLETE;
/// The tool that ends a task by handing it to a human.
pub const ESCALATE: &str = governance::ESCALATE;

/// `complete` and `escalate`.
pub fn control_tools() -> Vec<ToolDefinition> {
    vec![
        ToolDefinition::new(
            COMPLETE,
            "End the task as done. Give a short summary of what was done and how it was \
             checked; no tool runs after this.",
            json!({
                "type": "object",
                "properties": {"summary": {"type": "string"}},
                "required": ["summary"],
                "additionalProperties": false,
            }),
            |input| {
                let summary = text_field(input, COMPLETE, "summary")?;
                Ok(format!("task complete: {summary}"))
            },
        ),
        ToolDefinition::new(
            ESCALATE,
            "Stop and hand the task to a human, saying why: when going on would be unsafe, \
             would change behaviour nobody asked to change, or needs a decision you cannot make.",
            json!({
                "type": "object",
                "properties": {"reason": {"type": "string"}},
                "required": ["reason"],
                "additionalProperties": false,
            }),
            |input| {
                let reason = text_field(input, ESCALATE, "reason")?;
                Ok(format!("escalated to a human: {reason}"))
            },
        ),
    ]
}

/// A string field that must say something: an empty summary or reason tells nobody anything.
fn text_field<'a>(input: &'a serde_json::Value, tool: &str, field: &str) -> Result<&'a str> {
    let text = str_field(input, tool, field)?;
    if text.trim().is_empty() {
        return Err(Error::InvalidInput {
            tool: tool.to_owned(),
            reason: format!("{field} is empty"),
        });
    }
    Ok(text)
}
