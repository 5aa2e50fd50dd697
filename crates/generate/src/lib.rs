//! Model-backed generation: frames written by a model (or the offline outline) over a whole
//! tree, directly or as provider batches, as one operation for every front end.
//!
//! It sits above context and llm-core, and beside the agent rather than inside it: the agent
//! runtime (agent-loop) neither calls it nor depends on it. Bottom up:
//! - [`agent_model`]: an agent's own model as the store keeps it in the agent's settings (the
//!   keys, the checks a new one passes, its JSON and its line of text), for `agent add`,
//!   `agent list` and the model a generation or a run asks for;
//! - [`producer`]: frames written by a model, for `generate` and `synthesize`, through context's
//!   `FrameProducer` and `SynthesisPolicy` traits;
//! - [`batch`]: a generation's model calls sent as provider batches (`generate --batch`): the
//!   producers answer from a `BatchQueue` or queue the call and answer `context::DEFERRED`;
//!   `BatchRun` repeats generate, submit, wait, answer until nothing is queued, keeping the batch
//!   in flight as a store note so that a killed run resumes it;
//! - the operation itself (`generate.rs`, re-exported here): a [`Generator`] built once from a
//!   [`GenerateConfig`] (the offline outline, or a model's client on a runtime handle the caller
//!   owns); [`generate()`] rescans, runs directly, in batches or as a dry run
//!   (`generate/batched.rs`), retries files that changed under the run, and answers with the
//!   counts as `merkle --json generate`'s document ([`Answer`]); progress and interruption are
//!   the caller's, through the [`Progress`] trait and an interrupt flag.
//!
//! It is not in `context::ops` because a model's producers need llm-core, which context does
//! not know. What a call costs is llm-core's [`llm_core::Price`].
//!
//! Boundary: no async runtime of its own. The producers block on a handle of the caller's
//! runtime from context's worker threads; the binary builds the runtime.
//!
//! # Invariants
//!
//! - **Model-written frames go through context's traits** (`producer.rs`), and their ids name
//!   the model and a hash of the prompt template, so the same ones are memoized: a renamed,
//!   duplicated or reverted file costs no call.
//! - **A batched generation writes the frames a direct one would**: same prompts, producer ids
//!   and memo keys; each call's custom id is a hash of its request.
//! - **A batch in flight is a store note until its frames are put**, so a killed run picks the
//!   same batch up and submits nothing twice.
//! - **An interrupted generation keeps what finished**: calls in flight end and their frames
//!   are put; the same command run again resumes.
//! - **A dry run sends nothing**; it counts and prices the calls a batched run would make.
pub mod agent_model;
pub mod batch;
pub mod error;
mod generate;
pub mod producer;

pub use error::{Error, Result};
pub use generate::{
    Answer, Batching, Cost, Counts, DEFAULT_AGENT, DirPolicy, Estimate, EstimatedCalls,
    GenerateConfig, Generation, Generator, LlmTotals, ModelConfig, Progress, Quiet, Request,
    generate,
};
