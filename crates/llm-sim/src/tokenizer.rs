//! The simulator's own tokenizer for the Anthropic Messages API, whose real tokenizer is not
//! published: cl100k's byte-pair encoding over the request's text as the API lays it out,
//! plus an eighth (Claude's tokenizers split the same English and code finer than OpenAI's),
//! with a few tokens for each message, block and tool around it.
//!
//! It is not Claude's tokenizer, but it is a real one that llm-core's clients do not use for
//! Claude models; so tests can hold a client's counts (its `count_tokens` calls, its
//! calibrated estimate) to a figure the client cannot compute itself. The fake server answers
//! `POST /v1/messages/count_tokens` with it and bills a request's input by it, as the service
//! bills by its own count.

use llm_core::{ContentBlock, Request};

/// Tokens the API's prompt format adds: before the first message, around each message, each
/// content block and each tool definition.
const PROMPT: u64 = 7;
const PER_MESSAGE: u64 = 3;
const PER_BLOCK: u64 = 2;
const PER_TOOL: u64 = 12;
/// Images are billed by size, which the simulation does not decode: a mid-sized image.
const PER_IMAGE: u64 = 1_500;

/// Tokens of `text` under the simulator's encoding.
pub fn count_text(text: &str) -> u64 {
    let pieces = tiktoken_rs::cl100k_base_singleton().count_ordinary(text) as u64;
    (pieces * 9).div_ceil(8)
}

/// The input tokens of `request` as the simulated Anthropic service counts them.
pub fn count_request(request: &Request) -> u64 {
    let mut tokens = PROMPT;
    if let Some(system) = &request.system {
        tokens += PER_MESSAGE + count_text(system);
    }
    for message in &request.messages {
        tokens += PER_MESSAGE;
        for block in &message.content {
            tokens += PER_BLOCK
                + match block {
                    ContentBlock::Text { text } | ContentBlock::Thinking { text, .. } => {
                        count_text(text)
                    }
                    ContentBlock::Image { .. } => PER_IMAGE,
                    ContentBlock::ToolUse(call) => {
                        count_text(&call.name) + count_text(&call.input.to_string())
                    }
                    ContentBlock::ToolResult { content, .. } => count_text(content),
                    ContentBlock::RedactedThinking { data } => (data.len() as u64).div_ceil(4),
                };
        }
    }
    for tool in &request.tools {
        tokens += PER_TOOL
            + count_text(&tool.name)
            + count_text(&tool.description)
            + count_text(&tool.input_schema.to_string());
    }
    tokens
}
