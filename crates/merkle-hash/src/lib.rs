//! The workspace's leaf crate: what every other crate may need and that needs nothing itself,
//! no dependency, no IO, no async. Today it holds [`time`], the one date formatter, so that
//! the LLM simulator prints a batch's times without depending on the store.
//!
//! Boundary: pure functions of their arguments; callers inject clocks.

pub mod time;
