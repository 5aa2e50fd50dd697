//! Bounded, deterministic context views over merkle-store frames, bottom-up branch synthesis and
//! incremental regeneration, and the files and definitions a task needs, found without a model.
//!
//! The crate owns the policies (selection, ordering, synthesis, staleness, ranking) and knows
//! nothing of LLM providers: an LLM-backed synthesizer or producer plugs in through
//! [`SynthesisPolicy`] or [`FrameProducer`], implemented higher up (merkle-generate).
//!
//! **What it reads and writes.** A workspace file's content comes only through the store
//! (`Store::read_content`, which checks it against the node's content hash). Beyond the store's
//! API it touches its own files in the store folder and `.merkle/`: the full-text index
//! ([`index_dir`], through `retrieve`), the git-history cache (`search/history.rs`), the named
//! views ([`ViewsFile`], `.merkle/views.yaml`) and the remotes file (read to count unpushed
//! frames); file watching is merkle-watch's, above it, through [`ops::Watcher`]. It runs one program, git, read-only and never reaching a remote:
//! `ops/report.rs` (`git ls-tree`, `git cat-file --batch`: a revision's tree hashed with
//! merkle-store's NodeID functions) and `search/history.rs` (`git rev-parse`, `git log`,
//! `git merge-base`). Without git, `report --since` a git revision is an error, and a search
//! leaves out its history signal.
//!
//! - [`get_node`] composes a [`ContextView`] (`view.rs`): read-only, bounded, the same result
//!   every run.
//! - [`synthesize`] / [`synthesize_recursive`] write directory frames from children's heads,
//!   only when called; [`Map`] is the offline policy that maps a directory's children.
//! - [`regenerate`] recomputes exactly the frames whose basis changed, bottom-up, with early
//!   cutoff, within a declared scope; [`stale_frames`] lists what it would redo, and
//!   [`invalidate`] marks a node's frames stale by hand.
//! - `generate` (`generate.rs`): frames where missing or stale, then synthesis.
//! - [`ViewsFile`] and `ViewRequest` (`views_file.rs`): named views, and the one view request the
//!   CLI, MCP and the agent make.
//! - [`ops`]: the operations the front ends share, each with its one JSON shape (`synthesize_dir`,
//!   `put_frame`, `status`, `report`, ...; `ops/find.rs`: a search's `type` checked, and
//!   `related_in` with its errors), and [`ops::Workspace`] (`ops/workspace.rs`), the one way to
//!   open a workspace's store (a writer waits up to 2 s for another process's) and the freshness
//!   rule of every read (`ops/fresh.rs`: `read`, `read_facts`, `read_facts_as`, `write`;
//!   ARCHITECTURE.md, "Freshness").
//! - [`select_messages`] (`window.rs`): the conversation window, a pure function over token
//!   estimates that never splits a tool call from its result; agent-loop describes its messages
//!   through a small trait ([`Estimator`]), so context does not depend on llm-core.
//! - The related-files graph and search: [`TreeFacts`] (`facts.rs`: every file's symbols and
//!   import specifiers; [`FactsSink`]: those the outline producer derived, waiting for the cache),
//!   `resolve.rs` (specifiers to workspace paths per language: pure, table-tested in
//!   `tests/it/resolve.rs`), [`Graph`] (`graph.rs`: imports and importers), `search.rs` (files
//!   ranked for a query, each with its definitions weighed; `search_functions`: those definitions
//!   ranked across files), `bundle.rs` (a task's definitions by function score across files,
//!   module-level lines and outlines, within a token budget estimated at 4 bytes a token;
//!   `Bundle::markdown` is the text the CLI and the agent tool give), `refs.rs` (a definition's
//!   callers and callees from outline's `Parsed::references`, resolved by name through the
//!   index's `defs` and the importing file's imports).
//!
//! # Invariants
//!
//! - **Facts are derived once per content, from the outline's parse** (`facts.rs`), keyed by
//!   content in the derived table, so a rescan after a one-file edit parses that file only; the
//!   graph is kept beside the root it was built for, and a search takes its few dozen files'
//!   edges from that record in one pass (`KeptEdges`) rather than decoding it. Both are caches.
//! - **Search fuses a full-text index with the facts** (`search.rs`): the index follows the tree
//!   document by document; the order is a function of query and tree (and, for a task, of the
//!   git history HEAD reaches: `search/history.rs` reads it once per HEAD into the store folder,
//!   a cache like the index), with named weights tuned on `cargo xtask bench localize` against
//!   `search::Ranking::Plain`.
//! - **Composition is read-only and deterministic** (`view.rs`): only the store's read API, every
//!   ordering ends on (NodeID, FrameID), never more than `max_frames`, missing sources reported.
//! - **Frames follow paths across versions.** A file's NodeID changes with its content and a
//!   directory's with anything below it, so "the context of src/lib.rs" is the latest frame at
//!   that path on any version of its node (the store's path heads, `current.rs`). A child
//!   contributes that frame to its parent's synthesis even before it is regenerated.
//! - **Synthesis is explicit**: nothing calls it implicitly, and a synthesized frame's basis
//!   hashes the directory, type, policy and child FrameIDs (`synthesis.rs`).
//! - **Staleness is computed, never stored as state**: a file frame is stale when it is on an
//!   older version of the file; a synthesized frame when the basis it would have now differs;
//!   either when an invalidation record (a `merkle.invalidate` frame, append-only) is newer. The
//!   list of stale frames is kept only as a cache, under the root and a hash of the heads:
//!   all it is a function of (`stale_frames`); under the same heads, a later tree's list is the
//!   kept one with the paths whose node changed worked out again (`regenerate/stale_list.rs`).
//! - **The offline directory frame is a map** (`map.rs`): it reads its children's frames, never
//!   their files, ranks them by the import graph's weights, and names what did not fit; the
//!   weights are part of the policy id, so directories are made again exactly when one changes.
//! - **A policy may read the tree** (`SynthesisPolicy::with_tree`), and what it returns depends on
//!   the tree alone (`generate.rs`).
//! - **Produced frames are bounded by bytes**, not only by lines (`cut_to_bytes` in
//!   `synthesis/policies.rs`: on a char boundary, with a marker saying how much was cut): the
//!   outline keeps lines of at most `MAX_LINE_BYTES` and 2 KiB in all, `Summary` lines of at most
//!   `MAX_LINE_BYTES`, `Concat` an equal share of `CONCAT_MAX_BYTES` per child, so one huge file
//!   cannot crowd out its siblings.
//! - **Regeneration is minimal and bottom-up** within its declared scope, with early cutoff
//!   (`regenerate.rs`); frames put by hand have no producer and are never overwritten.
//! - **Generation is memoized by what a frame was derived from**, wherever it is attached
//!   (`memo.rs`): a renamed, duplicated or reverted file costs no producer run. A memo key covers
//!   what the producer reads of a path (`FrameProducer::path_input`: the outline reads the
//!   language an extension names and the grammar it parses with, the model's default prompt too,
//!   a template with `{path}` the whole path), so a reused frame is exactly what the producer
//!   would have written there; neither default names the file, and a rename that keeps the
//!   language is free. A policy that reads no names (`SynthesisPolicy::reads_names`) is memoized
//!   without them: renaming or moving unchanged files costs it no run.
//! - **Every key it derives is merkle-hash's `Encoder`** under a kind tag of its own (`memo`,
//!   `producer-input`, `regenerated`, `invalidate`, `replaced`, `retrieve-doc`, `retrieve-tree`,
//!   `graph`, `import-weights`); moving them there from hand-rolled hashers was one deliberate
//!   bump: memos, the index's keys and the kept graph are derived again once.
//! - **A whole-tree generation starts from a checkpoint** and looks only at what changed since,
//!   unless a frame was created meanwhile (`generate.rs`).
pub mod bundle;
pub mod current;
pub mod error;
pub mod facts;
pub mod generate;
pub mod graph;
pub mod invalidation;
pub mod map;
pub mod memo;
pub mod ops;
pub mod refs;
pub mod regenerate;
pub mod resolve;
pub mod search;
pub mod synthesis;
pub mod view;
pub mod views_file;
pub mod window;

pub use error::{Error, Result};
pub use facts::{FactsSink, TreeFacts};
pub use generate::{GenerateRequest, Generated, generate, generate_paths};
pub use graph::{Graph, Kept, Related, Relation};
pub use invalidation::invalidate;
pub use map::{ChildWeights, ImportWeights, Map, Ranking};
pub use regenerate::{
    DEFERRED, FrameProducer, Outline, Producers, Provenance, RegenerateRequest, RegenerateScope,
    Regenerated, Stale, StaleKey, keep_stale_frames, language, produce, regenerate, stale_frames,
    stale_frames_keyed, staleness,
};
pub use retrieve::TextIndex;
pub use search::{
    FunctionHit, Hit, SearchRequest, SymbolHit, index_dir, search, search_functions,
    search_functions_tree, search_tree, sync_index,
};
pub use synthesis::{
    ChildFrame, Concat, Filter, Summary, SynthesisInput, SynthesisPolicy, SynthesisRequest,
    Synthesized, synthesize, synthesize_each, synthesize_recursive,
};
pub use view::{
    Candidate, ComposedFrame, ContextView, Filters, FrameScorer, NodeContext, Ordering, Source,
    SourceKind, get_node,
};
pub use views_file::ViewsFile;
pub use window::{Estimator, Overflow, Selection, newest_that_fit, select_messages};

/// `there` on a thread of its own (not the pool's: the pool may be busy with a rescan, and a
/// job sent there waits for all of it) beside `here` on this one; both answers.
pub(crate) fn beside<A: Send, B>(
    there: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> B,
) -> (A, B) {
    std::thread::scope(|scope| {
        let there = scope.spawn(there);
        let here = here();
        (joined(there), here)
    })
}

/// What a scoped thread returned; its panic, if it panicked, goes on in the caller.
pub(crate) fn joined<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    match handle.join() {
        Ok(value) => value,
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
