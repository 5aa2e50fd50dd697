//! Integration tests of llm-sim through its public interface: the simulated client and its
//! strategies, record and playback, the factory, and the fake server driven by llm-core's
//! real providers over loopback.

mod batch;
mod cache;
mod cache_rules;
mod count;
mod factory;
mod failures;
mod flex;
mod patterns;
mod playback;
mod responses;
mod roundtrip;
mod script_errors;
mod scripted;
mod secrets;
mod server;
mod structured;
mod support;
mod wire;
