//! One async client for Anthropic and every OpenAI-compatible LLM server.
//!
//! Every other crate talks to models only through this crate's `LlmClient` trait, so that the
//! simulator in `llm-sim` can answer the same calls without a network. This is a leaf crate: it
//! knows nothing of workspaces, frames or agents. The client itself lands with issue 4; until
//! then the crate only reserves its place in the layering.
