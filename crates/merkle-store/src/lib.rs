//! A content-addressed Merkle tree of a workspace, immutable attributed frames, a durable store.
//!
//! This crate is the storage heart of merkle, and deliberately small in what it knows: files,
//! directories, hashes, frames, agents and an embedded key-value engine. It knows nothing of LLMs,
//! async runtimes, networks or command lines; everything above it (context views, synthesis,
//! agents) works through [`Store`]. It is synchronous: callers in async code use it from blocking
//! tasks.
//!
//! - A scan ([`Store::scan`]) walks the workspace honouring .gitignore and commits a Merkle tree
//!   in one transaction (a large scan's new node records, which no tree names yet, go ahead of
//!   it in chunks): every file and directory gets a NodeID (see [`hash`] for the exact
//!   encodings), and unchanged files are not hashed again.
//! - Frames ([`Store::put_frame`]) are append-only: identified by their content, attributed to a
//!   registered agent, with a head per (node, frame type) and a basis index moved in the same
//!   transaction.
//! - The engine is redb by default, or sled with the `sled` feature; see [`engine`].
//!
//! # Where things are
//!
//! `store.rs` is the thin handle (opening, node addressing, agents); behind it three rooms:
//!
//! - the tree: `store/tree.rs` (a scan planned, then applied), `store/build.rs` (the one tree
//!   builder), `store/rescan.rs` ([`Store::scan_paths`]), `store/status.rs`, and the walk in `scan/` (`fsdir.rs`, `ignores.rs`, `verify.rs`);
//! - frames: `store/frames.rs` (frames, heads and memos) and `store/exchange.rs` (import and
//!   export, for the `remote` crate);
//! - caches: `store/derived.rs` (derived data) and `store/caches.rs` (checkpoints and notes);
//! - `store/bodies.rs`: long frame contents and shared derived records, kept once by hash.
//!
//! `keys.rs` holds the record layouts the rooms write, `codec.rs` their bounds-checked binary
//! encoding, and `validate.rs` checks them. [`diff`] reads any recorded root as a path map and
//! compares two. [`time`] is the workspace's one date formatter, re-exported from merkle-hash.
//!
//! # Invariants
//!
//! - **Identities are exact contracts**: NodeIDs, FrameIDs and content hashes as
//!   `docs/node-identity.md` specifies them ([`hash`]), pinned by `tests/golden.rs`; a content
//!   hash is what `b3sum` prints.
//! - **Frames are append-only**: no API mutates or deletes one, an identical put is a no-op, and
//!   heads, history and the basis index move in the append's transaction. Every write names a
//!   registered agent whose role allows it (reader < writer < synthesis).
//! - **A body is removed only by `gc`**, once no frame or derived record names it; it is
//!   written in the commit of the first record that does.
//! - **Durable before acknowledged.** Every commit returns only after the engine synced.
//!   Concurrent `put_frame` callers are group-committed: one transaction for whatever queued up
//!   while the previous one committed.
//! - **A scan's tree is one transaction, and its writes scale with what changed**: unchanged
//!   files are not re-hashed (a stricter-than-git racy rule), unchanged folders not read (git's
//!   untracked cache), and a no-op scan, planned on a read-only handle, writes nothing
//!   (`store/tree.rs`). Whether it would be a no-op is known cheaper still by the same rules:
//!   the recorded tree's stats checked entry by entry, nothing built
//!   ([`Store::unchanged_on_disk`], `scan/verify.rs`).
//! - **A targeted scan builds what a full scan would** ([`Store::scan_paths`]):
//!   `tests/rescan.rs` checks it against full scans over seeded random changes.
//! - **The walk** honours .gitignore like `git ls-files --cached --others --exclude-standard`
//!   (`scan/ignores.rs`); `.git` and the store are never entered; symlinks are recorded by target,
//!   never followed. It reaches the disk relative to open folders (`scan/fsdir.rs`): one name per
//!   system call, never a path from `/`; a listing ends only when the kernel returns nothing.
//! - **The tree table is kept in blocks** (`engine/blocked.rs`): its entries, one per path, in
//!   blocks of a few kilobytes under their first path, each path written as what it does not
//!   share with the one before; everything above the engine reads and writes entries. A
//!   whole-tree read (the listing, the stat check) reads the blocks in two halves side by side.
//! - **Derived data is a cache the store does not read** (`store/derived.rs`): (namespace, key)
//!   -> opaque bytes; context keeps each file's facts there by content.
//! - **Memos are a cache** ([`Store::memo`], `put_memos`): inputs hash -> a frame, written after
//!   the frame, never dangling (frames are never deleted), checked by `validate`.
//! - **Notes are not a cache** ([`Store::note`], `set_note`): a caller's record of work in flight
//!   elsewhere (the batch a `generate --batch` waits for); losing one could pay for the work twice.
//! - **Heads after an import follow one rule** (`store/exchange.rs`, [`Store::import`]): an
//!   imported frame becomes a head only if its (`created_at`, FrameID) is greater; a local put
//!   always does. `validate` checks that no frame appended after a head outranks it. A head is
//!   its history's latest entry, written nowhere else, unless the heads table names another
//!   (an imported frame that did not outrank it was appended after it).
//! - **A damaged store is an error, never a panic or a default**: records decode through `codec`
//!   (`Corrupt` names table and key), redb's panics become `Damaged` (`engine`), and a folder of
//!   the other engine is `EngineMismatch`.
//! - **Engines implement one small trait** (`engine::Engine`: a value read, an ordered scan, an
//!   atomic durable batch commit, a count, a name). redb is the default (single-writer mode:
//!   read-only handles in other processes follow the writer; a second writer gets `StoreInUse`);
//!   sled is behind the `sled` feature. `tests/store.rs` is one conformance suite run against every
//!   engine built in.
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
mod scan;
pub mod store;
pub use merkle_hash::time;
mod validate;

pub use agent::{Agent, Role};
pub use diff::{PathTree, TreeDiff, diff_trees, tree_of_leaves};
pub use engine::EngineKind;
pub use error::{Error, Result};
pub use frame::{Frame, FrameMetadata, NewFrame, PutOutcome};
pub use hash::{Encoder, FrameId, Hash, NodeId};
pub use merkle_hash::lexical_path;
pub use node::{Child, NodeKind, NodeRecord};
pub use scan::Progress;
pub use store::{
    Change, Collected, FrameSummary, Import, ImportOptions, ImportReport, OpenOptions, Problem,
    Refusal, ScanOptions, ScanPlan, ScanReport, Space, StatusReport, Store, TreeFile, TreeNode,
    is_id_prefix, normalize_path, pushed_marker, store_dir,
};
