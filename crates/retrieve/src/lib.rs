//! Finding the files a task needs: a full-text index of a workspace's files (tantivy, BM25 per
//! field over paths, definition names and text, cut by an identifier-aware tokenizer) and the
//! reading of task text (issues, tracebacks, questions) into weighted words, code identifiers,
//! file references and module names.
//!
//! The crate knows files only as (path, key, names, text): what a file is, where it lives and
//! how the rest of a ranking fuses with BM25 are its caller's (context's `search`). It has no
//! async runtime and no network. The index lives in a folder the caller names (beside the
//! store); merkle-store does not know it.
pub mod error;
pub mod index;
pub mod phrases;
pub mod query;
pub mod tokenize;

pub use error::{Error, Result};
pub use index::{Changes, Doc, Field3, Key, Scored, TextIndex, WeightedTerm};
pub use query::{PathRef, TaskQuery};
