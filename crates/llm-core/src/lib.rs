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
//! [`tokens`] counts tokens (exactly for OpenAI models, by a measured estimate otherwise) and
//! [`decode_event_stream`] turns a recorded stream body into events without a network.
//!
//! Boundary: this is a leaf. It knows nothing of workspaces, frames, agents or the CLI; it
//! does not build a tokio runtime (callers bring one, with the time driver enabled) and it
//! reads no environment variables itself ([`ProviderConfig::connect`] takes a lookup).
//! Secrets live in [`ApiKey`], which never prints.

pub mod anthropic;
pub mod batch;
pub mod client;
pub mod clock;
pub mod config;
pub mod error;
pub mod http;
pub mod key;
pub mod openai;
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
pub use error::{Error, ErrorKind, Result, TimeoutPhase};
pub use http::{HttpConfig, fetch_json};
/// The conversation types, from their own leaf crate.
pub use llm_types as types;
pub use openai::responses;
pub use openai::responses::{OpenAiApi, ReasoningItem};
pub use openai::{MaxTokensField, OpenAiClient, OpenAiConfig};
pub use rate_limit::{RateLimit, RateLimiter};
pub use replay::{WireFormat, decode_event_stream};
pub use retry::{RetryHints, RetryPolicy};
pub use stream::{Event, EventStream, ResponseBuilder, collect, events_from_response};
pub use structured::{complete_structured, structured_answer};
pub use types::{
    CacheMarks, ContentBlock, ImageSource, Message, Request, Response, ResponseSchema, Role,
    StopReason, Thinking, Tool, ToolCall, ToolChoice, Usage,
};
