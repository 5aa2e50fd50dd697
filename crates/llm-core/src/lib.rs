//! One async client for Anthropic and every OpenAI-compatible LLM server.
//!
//! Every other crate talks to models only through the [`LlmClient`] trait, so the simulator
//! in `llm-sim` can answer the same calls without a network. The crate has three layers:
//!
//! - the provider-neutral conversation: [`Request`], [`Message`], [`ContentBlock`],
//!   [`Response`], the streamed [`Event`] and [`collect`], which folds a stream into the
//!   same [`Response`] that `complete` returns;
//! - the providers, each translating those types to and from one wire format over reqwest:
//!   [`AnthropicClient`] (Messages API) and [`OpenAiClient`] (chat completions: OpenAI,
//!   Ollama, vLLM, LM Studio; or OpenAI's Responses API, [`OpenAiApi`]), chosen from stored
//!   settings by [`ProviderConfig`];
//! - the transport they share: timeouts (connect, request, stream idle), caps on a body and
//!   on one streamed event ([`Error::TooLarge`]), retries that honour
//!   the server's hints ([`RetryPolicy`]), a client-side [`RateLimiter`], metrics in
//!   [`UsageStats`], all driven by an injectable [`Clock`] and [`Rng`] so tests never sleep.
//!
//! [`fetch_json`] GETs one JSON document, bounded in time and size, for crates that need a
//! document from the network (the MCP server's OAuth key set) but may not carry reqwest.
//!
//! [`wire`] holds each wire format's JSON as serde types, shared with the simulator in
//! `llm-sim` so that what the client sends and what the fake server reads are one definition.
//!
//! [`Price`] says what a call costs (per million tokens, with the prompt cache's and the batch
//! APIs' discounts) and holds the list prices of common models, for the agent's cost cap and a
//! generation's running cost and estimates.
//!
//! [`tokens`] counts tokens (exactly for OpenAI models, by a measured estimate otherwise);
//! [`count`] says where a count comes from: the provider's count endpoints
//! (`LlmClient::count_input`), a published tokenizer, or the estimate calibrated per model by
//! the usage of earlier answers (the [`Calibrator`] in [`HttpConfig`], which callers keep).
//! [`decode_event_stream`] turns a recorded stream body into events without a network.
//!
//! Boundary: this is a leaf. It knows nothing of workspaces, frames, agents or the CLI; it
//! does not build a tokio runtime (callers bring one, with the time driver enabled) and it
//! reads no environment variables itself ([`ProviderConfig::connect`] takes a lookup).
//! Secrets live in [`ApiKey`], which never prints.
//!
//! # Batches
//!
//! The batch APIs ([`BatchApi`], through `LlmClient::batches`: Anthropic Message Batches, and
//! OpenAI's Batch API over an uploaded JSONL file) submit, poll, read and cancel; they never
//! wait. Every cut of text at a byte budget in the workspace is std's `str::floor_char_boundary`
//! ([`text`] for error excerpts).
//!
//! # Invariants
//!
//! - **A stream collects into exactly what `complete` returns**; a stream that ends without its
//!   terminal event, or an `error` event after HTTP 200, is a typed error, never a short answer.
//! - **Keys never leave their wrapper**: [`ApiKey`] is redacted in Debug and errors, never
//!   serialized (stored settings keep `api_key_env`, the variable's name), and
//!   `ANTHROPIC_API_KEY` / `OPENAI_API_KEY` are sent only to their provider's own host unless
//!   `api_key_env` names them.
//! - **What a server sends is bounded**: a body (`max_body_bytes`), one stream event
//!   (`max_event_bytes`) and an error body are capped, a `retry-after` too long for a `Duration`
//!   is an unbounded wait that is not waited for, and a JSON answer to a stream request is named
//!   for its content type; none of these panics or grows memory without bound.
//! - **Time is injected** ([`Clock`], [`Rng`]): retries (honouring `retry-after`,
//!   `retry-after-ms`, `x-should-retry`), backoff and the token-bucket rate limiter are tested
//!   without sleeping.
//! - **One definition per wire format**: every format is in [`wire`] (Anthropic Messages, OpenAI
//!   chat completions, the Responses API, and the two batch APIs with OpenAI's files), the client
//!   and the fake server encode and decode it with the same types, and a round-trip test
//!   (llm-sim's `tests/it/roundtrip.rs`, the batch types in `roundtrip/batch.rs`) holds them to
//!   it. Answers decode leniently (compatible servers send less than the providers); the
//!   Responses API's input and output items are separate types, as in its reference, so that the
//!   fake server still reads a request's items as strictly as the API does.
//! - No tokio runtime is built here (only the `sync` and `time` features); `cli` builds it.

pub mod anthropic;
pub mod batch;
pub mod cache_rules;
pub mod client;
pub mod clock;
pub mod config;
pub mod count;
pub mod error;
pub mod http;
pub mod key;
pub mod openai;
pub mod price;
pub mod rate_limit;
pub mod replay;
pub mod retry;
pub mod sse;
pub mod stream;
pub mod structured;
pub mod text;
pub mod tokens;
pub mod wire;

pub use anthropic::{AnthropicClient, AnthropicConfig};
pub use batch::{
    BatchApi, BatchCounts, BatchItem, BatchOutcome, BatchResult, BatchState, BatchStatus,
};
pub use client::{LlmClient, UsageStats};
pub use clock::{Clock, ManualClock, Rng, SplitMix64, SystemClock};
pub use config::{ApiKey, Provider, ProviderConfig};
pub use count::{Calibration, Calibrator, CountSource, TextCounter, TokenCount};
pub use error::{Error, ErrorKind, Result, TimeoutPhase};
pub use http::{HttpConfig, fetch_json};
/// The conversation types, from their own leaf crate.
pub use llm_types as types;
pub use openai::responses;
pub use openai::responses::{OpenAiApi, ReasoningItem};
pub use openai::{MaxTokensField, OpenAiClient, OpenAiConfig};
pub use price::Price;
pub use rate_limit::{RateLimit, RateLimiter};
pub use replay::{WireFormat, decode_event_stream};
pub use retry::{RetryHints, RetryPolicy};
pub use stream::{Event, EventStream, ResponseBuilder, collect, events_from_response};
pub use structured::{complete_structured, structured_answer};
pub use types::{
    CacheMarks, CacheTtl, ContentBlock, ImageSource, Message, Request, Response, ResponseSchema,
    Role, ServiceTier, StopReason, Thinking, Tool, ToolCall, ToolChoice, Usage,
};
