//! The library behind `cargo xtask`, split from the binary so tests can call each task directly.
//!
//! - [`tidy`]: repository rules (dependency layering, heavy-dependency owners, module circles
//!   ([`modules`]), `//!` lines, file and function lengths ([`functions`])).
//! - [`bench`], [`bench_context`]: benchmarks that run real binaries on a generated [`tree`];
//!   [`bench_outline`]: the offline outline against universal-ctags on a real checkout, with
//!   [`bench_index`]: the recall of `merkle search` and `merkle related` there;
//!   [`bench_localize`]: finding the files real issues' fixes changed (SWE-bench Lite), and
//!   with [`bench_localize_figures`] the functions and lines of their gold patches
//!   ([`bench_localize_gold`], [`bench_localize_defs`]).

pub mod bench;
pub mod bench_context;
pub mod bench_index;
pub mod bench_localize;
pub mod bench_localize_defs;
pub mod bench_localize_figures;
pub mod bench_localize_gold;
pub mod bench_localize_plain;
pub mod bench_outline;
pub mod bench_proc;
pub mod bench_scale;
pub mod bench_search;
mod ctags;
pub mod functions;
mod manifest;
pub mod modules;
pub mod tidy;
pub mod tree;
