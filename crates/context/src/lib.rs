//! Bounded, deterministic context views over merkle-store frames, bottom-up branch synthesis and
//! incremental regeneration.
//!
//! The crate owns the policies (selection, ordering, synthesis); it does no IO of its own beyond
//! the store's API and knows nothing of LLM providers.
