//! Integration tests of llm-core through its public interface, against a loopback server.

mod anthropic;
mod fetch;
mod keys;
mod limits;
mod openai;
mod responses;
mod server;
mod sse;
mod support;
mod transport;
mod types;
