//! A content-addressed Merkle tree of a workspace, immutable attributed frames, a durable store.
//!
//! This crate is the storage heart of merkle, and deliberately small in what it knows: files,
//! directories, hashes, frames, agents and an embedded key-value engine. It knows nothing of LLMs,
//! async runtimes, networks or command lines; everything above it (context views, synthesis,
//! agents) works through [`Store`].
//!
//! - A scan ([`Store::scan`]) walks the workspace honouring .gitignore and commits a Merkle tree
//!   in one transaction: every file and directory gets a NodeID (see [`hash`] for the exact
//!   encodings), and unchanged files are not hashed again.
//! - Frames ([`Store::put_frame`]) are append-only: identified by their content, attributed to a
//!   registered agent, with a head per (node, frame type) and a basis index moved in the same
//!   transaction.
//! - The engine is redb by default, or sled with the `sled` feature; see [`engine`].
pub mod agent;
mod codec;
pub mod diff;
pub mod engine;
pub mod error;
pub mod frame;
pub mod hash;
mod keys;
mod kind;
pub mod node;
mod role;
mod scan;
pub mod store;
pub use merkle_hash::time;
mod validate;

pub use agent::{Agent, Role};
pub use diff::{PathTree, TreeDiff, diff_trees, tree_of_leaves};
pub use engine::EngineKind;
pub use error::{Error, Result};
pub use frame::{Frame, FrameMetadata, NewFrame, PutOutcome};
pub use hash::{FrameId, Hash, NodeId};
pub use node::{Child, NodeKind, NodeRecord};
pub use scan::Progress;
pub use store::{
    Change, FrameSummary, Import, ImportOptions, ImportReport, OpenOptions, Problem, Refusal,
    ScanOptions, ScanPlan, ScanReport, StatusReport, Store, TreeFile, TreeNode, is_id_prefix,
    lexical_path, normalize_path, pushed_marker, store_dir,
};
