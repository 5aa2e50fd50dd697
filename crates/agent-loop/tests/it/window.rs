//! The context window over llm-core messages: estimates, the budget, and selection that keeps
//! tool calls with their results (gaps 2 and 6 of the integration spec).
use agent_loop::window::select;
use agent_loop::{estimate_message_tokens, estimate_text_tokens, token_budget};
use context::Overflow;
use llm_core::{ContentBlock, Message, Role, ToolCall};
use pretty_assertions::assert_eq;
use serde_json::json;

fn call(id: &str) -> Message {
    Message {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse(ToolCall {
            id: id.to_owned(),
            name: "read_file".to_owned(),
            input: json!({"path": "src/lib.rs"}),
        })],
    }
}

fn result(id: &str, content: &str) -> Message {
    Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: id.to_owned(),
            content: content.to_owned(),
            is_error: false,
        }],
    }
}

#[test]
fn estimates_are_about_four_bytes_a_token() {
    assert_eq!(estimate_text_tokens(""), 0);
    assert_eq!(estimate_text_tokens("abcd"), 1);
    assert_eq!(estimate_text_tokens("abcde"), 2);
    // Framing (4) + 40 bytes of text.
    assert_eq!(estimate_message_tokens(&Message::user("x".repeat(40))), 14);
    // Framing + id "t1" + name "read_file" + input {"path":"src/lib.rs"}: 2 + 9 + 21 bytes.
    assert_eq!(estimate_message_tokens(&call("t1")), 4 + 8);
}

#[test]
fn the_budget_is_the_window_less_system_prompt_and_reserve() {
    assert_eq!(token_budget(200_000, 3_000, 8_192), 188_808);
    assert_eq!(token_budget(1_000, 800, 500), 0);
}

#[test]
fn selection_keeps_a_tool_call_with_its_result() {
    let messages = [
        Message::user("x".repeat(400)),
        call("t1"),
        result("t1", &"y".repeat(400)),
        Message::assistant("done"),
    ];
    let costs: Vec<u64> = messages.iter().map(estimate_message_tokens).collect();
    assert_eq!(costs, [104, 12, 105, 5]);

    // Room for the result but not its call: both go.
    let selection = select(&messages, 120);
    assert_eq!(selection.selected, &messages[3..]);
    assert_eq!(
        selection.overflow,
        Some(Overflow {
            dropped: 3,
            dropped_tokens: 221
        })
    );
    // Room for both.
    let selection = select(&messages, 122);
    assert_eq!(selection.selected, &messages[1..]);
    assert_eq!(selection.tokens, 122);
    assert_eq!(select(&messages, 226).overflow, None);
    assert_eq!(select(&messages, 225).selected, &messages[1..]);
}
