//! The workspace's leaf crate: what every other crate may need and that needs nothing of the
//! workspace itself, no IO, no async (its one dependency is blake3): [`hash`], hashes and the
//! one domain-separated [`Encoder`] every identity and derived key is made with, [`NodeKind`],
//! [`time`], the one date formatter (so that the LLM simulator prints a batch's times without
//! depending on the store), [`Role`], what an agent may do, and [`lexical_path`], the one
//! lexical path normalisation (so that governance caps intents and matches paths without the
//! store).
//!
//! Boundary: pure functions of their arguments; callers inject clocks.

pub mod hash;
pub mod kind;
pub mod path;
pub mod role;
pub mod time;

pub use hash::{Encoder, Hash};
pub use kind::NodeKind;
pub use path::lexical_path;
pub use role::Role;
