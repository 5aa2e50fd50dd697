//! The context window for llm-core messages: token estimates, the budget for messages, and
//! [`context::select_messages`] applied to a conversation.
//!
//! The estimate is deliberately cheap (about four bytes a token, the same formula for the
//! system prompt and for messages) because it runs over every message of a conversation on
//! every model call; it is a budget, not a bill, which is why the budget keeps a reserve.

use std::io;

use context::{Estimator, Selection, select_messages};
use llm_core::{ContentBlock, Message};

/// Tokens a provider spends on a message's framing (role, separators), beyond its content.
const PER_MESSAGE: u64 = 4;
/// What an image costs, roughly, at the sizes providers scale images to.
const PER_IMAGE: u64 = 1_600;

/// Estimated tokens of `text`: its length in bytes over four, rounded up.
pub fn estimate_text_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// Estimated tokens of `message`: its text, tool calls (name and JSON input), tool results,
/// reasoning and images, plus framing.
pub fn estimate_message_tokens(message: &Message) -> u64 {
    let bytes: u64 = message
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text } => text.len() as u64,
            ContentBlock::Thinking { text, signature } => {
                (text.len() + signature.as_ref().map_or(0, String::len)) as u64
            }
            ContentBlock::RedactedThinking { data } => data.len() as u64,
            ContentBlock::ToolUse(call) => {
                (call.id.len() + call.name.len()) as u64 + {
                    let mut counter = ByteCounter(0);
                    // Writing to a counter cannot fail, and a Value always serializes.
                    let _ = serde_json::to_writer(&mut counter, &call.input);
                    counter.0
                }
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                ..
            } => (tool_use_id.len() + content.len()) as u64,
            ContentBlock::Image { .. } => PER_IMAGE * 4,
        })
        .sum();
    PER_MESSAGE + bytes.div_ceil(4)
}

/// Estimated tokens of offering `tool` to the model: its description and JSON schema.
pub fn estimate_tool_tokens(tool: &llm_core::Tool) -> u64 {
    estimate_text_tokens(&tool.description) + tool.input_schema.to_string().len() as u64 / 4
}

/// Tokens left for messages: the model's context window less the system prompt and the room
/// reserved for the response; zero if those take it all.
pub fn token_budget(context_window: u64, system_prompt_tokens: u64, response_reserve: u64) -> u64 {
    context_window
        .saturating_sub(system_prompt_tokens)
        .saturating_sub(response_reserve)
}

/// The newest `messages` that fit `budget`, with tool calls and results kept together, by
/// [`estimate_message_tokens`].
pub fn select(messages: &[Message], budget: u64) -> Selection<'_, Message> {
    select_messages(messages, budget, MessageTokens)
}

/// Describes llm-core messages to [`context::select_messages`].
#[derive(Debug, Clone, Copy, Default)]
pub struct MessageTokens;

impl Estimator<Message> for MessageTokens {
    fn tokens(&mut self, message: &Message) -> u64 {
        estimate_message_tokens(message)
    }

    fn tool_uses<'m>(&self, message: &'m Message, found: &mut dyn FnMut(&'m str)) {
        for block in &message.content {
            if let ContentBlock::ToolUse(call) = block {
                found(&call.id);
            }
        }
    }

    fn tool_results<'m>(&self, message: &'m Message, found: &mut dyn FnMut(&'m str)) {
        for block in &message.content {
            if let ContentBlock::ToolResult { tool_use_id, .. } = block {
                found(tool_use_id);
            }
        }
    }
}

/// Counts the bytes written to it, to size JSON without building it.
struct ByteCounter(u64);

impl io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
