//! Finding the files a task needs: a full-text index of a workspace's files (tantivy, BM25 per
//! field over paths, definition names and text, cut by an identifier-aware tokenizer) and the
//! reading of task text (issues, tracebacks, questions) into weighted words, code identifiers,
//! file references and module names.
//!
//! The crate knows files only as (path, key, names, text): what a file is, where it lives and
//! how the rest of a ranking fuses with BM25 are its caller's (context's `search`). It has no
//! async runtime and no network. The index lives in a folder the caller names (beside the
//! store); merkle-store does not know it.
//!
//! - [`index`] ([`TextIndex`]): one tantivy document per file with `path`, `names` and `text`
//!   fields (and `defs`, `slot` and lengths), cut by the identifier tokenizer ([`tokenize`]:
//!   whole identifiers and their `snake`/`Camel` parts at one position); `index/manifest.rs` says
//!   what it holds, in one buffer of paths; an `in-step` mark names the tree it was last found to
//!   hold.
//! - [`query`] ([`TaskQuery`]): task text read into weighted words, code identifiers, path
//!   references with lines and dotted modules; [`phrases`]: the error messages it quotes, cut to
//!   what a source would hold.
//!
//! Invariants:
//!
//! - **The index is a cache, never the only copy**: a crash leaves the last commit and its
//!   manifest; an index that does not check out is built again.
//! - **Search reads no stored documents**: hits map to paths through a fast `slot` field, and
//!   every matching file is scored (a custom collector), so the caller's order never depends on a
//!   top-k cut.
//! - **Query reading is one linear pass** and keeps at most 256 identifiers and 64 paths, so a
//!   megabyte of issue text costs milliseconds.
pub mod error;
pub mod index;
pub mod phrases;
pub mod query;
pub mod tokenize;

pub use error::{Error, Result};
pub use index::{Changes, Doc, Field3, Key, Scored, TextIndex, WeightedTerm};
pub use query::{PathRef, QueryKind, TaskQuery};
