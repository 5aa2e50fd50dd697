//! Decoding a whole recorded event-stream body without a network: for recordings,
//! fixtures and the SSE throughput benchmark. It runs the same decoder and provider parsers
//! as a live stream, minus the timeouts.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use crate::anthropic::AnthropicStream;
use crate::clock::SplitMix64;
use crate::error::{Error, Result};
use crate::http::StreamParser;
use crate::openai::OpenAiStream;
use crate::sse::SseDecoder;
use crate::stream::Event;

/// Which provider's stream protocol a body speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    Anthropic,
    /// OpenAI chat completions and compatible servers.
    OpenAi,
}

/// All events of a recorded body, or the first error a live stream would have reported.
/// Tool-call ids an OpenAI-compatible server left out are minted from a fixed seed, so the
/// result is reproducible.
pub fn decode_event_stream(format: WireFormat, body: &[u8]) -> Result<Vec<Event>> {
    match format {
        WireFormat::Anthropic => decode("anthropic", AnthropicStream::new(BTreeMap::new()), body),
        WireFormat::OpenAi => decode(
            "openai",
            OpenAiStream::new("openai", BTreeMap::new(), Arc::new(SplitMix64::seeded(0))),
            body,
        ),
    }
}

fn decode(
    provider: &'static str,
    mut parser: impl StreamParser,
    body: &[u8],
) -> Result<Vec<Event>> {
    let not_utf8 = |invalid: crate::sse::InvalidUtf8| {
        Error::invalid_response(
            provider,
            format!("stream line is not utf-8: {}", invalid.line),
        )
    };
    let mut decoder = SseDecoder::default();
    let mut sse_events = Vec::new();
    decoder.feed(body, &mut sse_events).map_err(not_utf8)?;
    decoder.finish(&mut sse_events).map_err(not_utf8)?;
    let mut events = VecDeque::new();
    for sse_event in sse_events {
        if parser.on_event(sse_event, &mut events)? {
            return Ok(events.into());
        }
    }
    parser.on_eof(&mut events)?;
    Ok(events.into())
}
