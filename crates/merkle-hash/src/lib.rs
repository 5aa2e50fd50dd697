//! The workspace's leaf crate: what every other crate may need and that needs nothing itself,
//! no dependency, no IO, no async: [`time`], the one date formatter (so that the LLM
//! simulator prints a batch's times without depending on the store), [`Role`], what an agent
//! may do, and [`lexical_path`], the one lexical path normalisation (so that governance caps
//! intents and matches paths without the store).
//!
//! Boundary: pure functions of their arguments; callers inject clocks.

pub mod path;
pub mod role;
pub mod time;

pub use path::lexical_path;
pub use role::Role;
