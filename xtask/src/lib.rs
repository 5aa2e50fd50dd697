//! The library behind `cargo xtask`, split from the binary so tests can call each task directly.
//!
//! - [`tidy`]: repository rules (dependency layering, heavy-dependency owners, `//!` lines).
//! - [`bench`]: benchmarks that run real binaries on a generated [`tree`].

pub mod bench;
mod manifest;
pub mod tidy;
mod toml_lite;
pub mod tree;
