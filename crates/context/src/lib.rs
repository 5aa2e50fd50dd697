//! Bounded, deterministic context views over merkle-store frames, bottom-up branch synthesis and
//! incremental regeneration.
//!
//! The crate owns the policies (selection, ordering, synthesis, staleness); it does no IO of its
//! own beyond the store's API and knows nothing of LLM providers: an LLM-backed synthesizer or
//! producer plugs in through [`SynthesisPolicy`] or [`FrameProducer`], implemented higher up.
//!
//! - [`get_node`] composes a [`ContextView`]: read-only, bounded, the same result every run.
//! - [`synthesize`] / [`synthesize_recursive`] write directory frames from children's heads,
//!   only when called; [`Map`] is the offline policy that maps a directory's children.
//! - [`regenerate`] recomputes exactly the frames whose basis changed, bottom-up, with early
//!   cutoff, within a declared scope.
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
pub use graph::{Graph, Related, Relation};
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
