//! Governance tests through the public API: the policy, the governor, the loop governor and the
//! audit log. One test binary, as in `crates/cli/tests/it`.
mod audit;
mod governor;
mod loop_guard;
mod policy;

use llm_types::{Tool, ToolCall};
use serde_json::{Value, json};

/// A tool call as the model would make it.
pub fn call(name: &str, input: Value) -> ToolCall {
    ToolCall {
        id: format!("call_{name}"),
        name: name.to_owned(),
        input,
    }
}

/// A `select_active_intent` call.
pub fn select(intent: &str) -> ToolCall {
    call(
        "select_active_intent",
        json!({"intent": intent, "justification": "the task needs it"}),
    )
}

/// A tool definition with an empty object schema.
pub fn tool(name: &str) -> Tool {
    Tool {
        name: name.to_owned(),
        description: format!("the {name} tool"),
        input_schema: json!({"type": "object"}),
    }
}
