//! Simulated LLM clients: scripted YAML, pattern matching, record and playback, a fake HTTP API.
//!
//! The rule the project lives by is that every workflow runs without a model or an API key; this
//! crate is how. It answers `llm-core`'s trait and depends on nothing above it.
