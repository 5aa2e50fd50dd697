//! Simulated LLM clients: scripted YAML, pattern matching, record and playback, a fake HTTP API.
//!
//! The rule the project lives by is that every workflow runs without a model or an API key; this
//! crate is how. It answers `llm-core`'s trait and depends on nothing above it: its workspace
//! dependencies are `llm-core` (the trait and the wire types) and `merkle-hash` (the one date
//! formatter, for the fake batch API's times), never the store.
//!
//! - [`SimulatedClient`] implements [`llm_core::LlmClient`] from a [`Strategy`]: [`Scripted`]
//!   follows a YAML [`Script`] step by step, [`Patterns`] matches requests, [`Playback`]
//!   replays a recording. Scripts can inject failures ([`FailureSpec`]): 429 with
//!   retry-after, 529, 5xx, timeouts, errors in mid-stream, malformed tool-call arguments.
//!   Streams are cut into deltas the way providers send them. Usage is billed as the
//!   providers bill cached prompts ([`PromptCache`]): a prefix written in the last five
//!   minutes up to a cache breakpoint is read, the rest written (or, with only an OpenAI cache
//!   key, the longest message boundary seen before is read), so tests can count what caching
//!   saves.
//! - [`RecordingClient`] wraps a real client and writes what it saw as a playback script,
//!   keeping only allowlisted fields and refusing to write anything key-like ([`secrets`]).
//! - [`build`] is the mode switch (`MERKLE_LLM_MODE=real|simulated|record|playback`), reading
//!   the environment through a lookup the caller passes; [`for_testing`] builds a scripted
//!   client from inline steps.
//! - [`FakeServer`] ([`server`]: a hand-written HTTP/1.1 server on tokio) serves the same
//!   strategies as the Anthropic Messages API, OpenAI chat completions and OpenAI's Responses API,
//!   whole and as server-sent events, through llm-core's `wire` types, and the batch APIs with
//!   their files (`server/batch.rs`; a test can hold batches in progress), so clients in any
//!   language can be tested against a script.
//! - [`structured`]: an answer to a request with a response schema, or a forced tool, made to
//!   follow it (the smallest value the schema allows), as a model held to a schema would.
//!
//! Boundary: no network but loopback, no runtime of its own (the server runs on the caller's
//! tokio runtime), no environment reads except through the lookup given to [`build`].
//!
//! # Invariants
//!
//! - The mode wraps the provider the settings name, the simulator included
//!   (`Settings::simulator`): record records it, playback replaces it; the simulator never falls
//!   back to a real provider.
//! - Scripts reject unknown fields; errors name file, line and what was expected.
//! - The server's parser checks every length a client sends before using it (head, lines and
//!   trailers capped at 64 KiB, bodies at 64 MiB, no arithmetic that can overflow); hyper would
//!   bring its server features and two more crates for what this small parser does.
//! - Recordings keep allowlisted fields only, and the secret scan refuses to write a file with
//!   anything key-like.
//! - Playback matches requests by canonical JSON; a miss names the closest recorded request and
//!   the first differing field.
//! - The server is checked against the official Python SDKs (`tests/sdk`, run by `.ci/run`).

pub mod cache;
pub mod client;
pub mod error;
pub mod factory;
pub mod playback;
pub mod record;
pub mod reply;
pub mod script;
pub mod secrets;
pub mod server;
pub mod source;
pub mod strategy;
pub mod structured;
pub mod tokenizer;

pub use cache::PromptCache;
pub use client::{Call, PROVIDER, SimulatedClient};
pub use error::{Error, Result};
pub use factory::{Mode, Settings, Setup, build, for_testing};
pub use playback::{Playback, PlaybackOrder, Scrubber, canonical_request};
pub use record::RecordingClient;
pub use reply::{Answer, Failure, Reply};
pub use script::{FailureSpec, Metadata, MidStreamError, Script, Step, ToolCallSpec, UsageSpec};
pub use server::{Api, DEFAULT_BATCH_POLLS, FakeServer, Served};
pub use source::{load_strategy, parse_strategy};
pub use strategy::{Digest, Matcher, Pattern, Patterns, Scripted, Strategy};
