//! The agent runtime: a crash-safe conversation store, identity files in the system prompt,
//! workspace-confined tools, the turn loop and compaction.
//!
//! What is here so far, bottom up:
//! - [`storage`]: durable JSON and JSON Lines files, with recovery from torn and corrupt
//!   lines that always reports what it did;
//! - [`conversation`]: [`ConversationStore`], one folder per conversation under
//!   `<workspace>/.merkle/conversations/`, messages in memory and on disk, repaired on load;
//! - [`prompt`]: identity files from the agent's home folder assembled into a byte-stable
//!   system prompt;
//! - [`window`]: token estimates and the budget, and `context::select_messages` over llm-core
//!   messages;
//! - [`tools`]: the tool registry and the built-in tools, confined to the workspace;
//! - [`time`]: UTC timestamps as text, from an injected clock;
//! - [`compaction`]: the summary message and its ledger, built from data, when a conversation
//!   outgrows the window;
//! - [`price`]: what a call costs, and the list prices of common models;
//! - [`agent_model`]: an agent's own model as the store keeps it, checked and shown one way;
//! - [`agent`]: the turn loop, [`Agent::process_turn`], with governance deciding every call;
//! - [`producer`]: frames written by a model, for `generate` and `synthesize`;
//! - [`batch`]: a generation's model calls sent as provider batches (`generate --batch`);
//! - [`generate`]: `generate` as one operation for every front end: the producer and policy
//!   built once, the rescan, direct, batched or dry runs, and the counts as one JSON document.
//!
//! Boundary: no async runtime of its own. Storage and tools block and run on the caller's
//! task, in order; only the model call is awaited. The binary builds the runtime.
//!
//! Governance decides every call in the dispatcher (`agent.rs`), before it runs: the governor
//! counts it (a loop stop ends the request) and decides it (deny: an error result naming the rule; ask: the
//! approver, or a denial when there is none). A tool that runs is on the audit log (`started`)
//! before it runs and with its outcome after, so a call that kills the process is still on
//! record (`audit show` marks it cut off); a call that does not run has one record. A stop is
//! recorded in the transcript as a text block with the typed reason as JSON. The system prompt
//! lists every tool, so it stays byte-stable as the intent changes; a request's tool list is
//! what the intent allows now.
pub mod agent;
pub mod agent_model;
pub mod batch;
pub mod compaction;
pub mod conversation;
pub mod error;
pub mod generate;
pub mod price;
pub mod producer;
pub mod prompt;
pub mod storage;
pub mod time;
pub mod tools;
pub mod window;

pub use agent::{
    Agent, AgentConfig, AgentEvent, Approver, Governance, Observer, ToolOffering, TurnEnd,
    TurnOutcome,
};
pub use compaction::{CompactionConfig, Ledger};
pub use conversation::{
    Compaction, ConversationStore, INTERRUPTED, Listed, LoadReport, Metadata, conversations_dir,
    list_conversations,
};
pub use error::{Error, Result};
pub use price::Price;
pub use prompt::{
    IDENTITY_FILES, IdentityContent, IdentityFile, IdentityFiles, PromptLimits, RuntimeInfo,
    build_system_prompt, load_identity_files,
};
pub use storage::{Damage, Jsonl, Quarantine, TornTail};
pub use tools::{ToolConfig, ToolDefinition, ToolOutcome, ToolRegistry, Workspace, builtin_tools};
pub use window::{estimate_message_tokens, estimate_text_tokens, token_budget};
