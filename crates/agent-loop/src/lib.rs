//! The agent runtime: a crash-safe conversation store, identity files in the system prompt,
//! workspace-confined tools, the turn loop and compaction.
//!
//! What is here so far, bottom up:
//! - [`storage`]: durable JSON and JSON Lines files, with recovery from torn and corrupt
//!   lines that always reports what it did;
//! - [`conversation`]: [`ConversationStore`], one folder per conversation under
//!   `<workspace>/.merkle/conversations/<id>/` (`metadata.json`, `transcript.jsonl`,
//!   `archive.jsonl`), messages in memory and on disk, repaired on load;
//! - [`prompt`]: identity files from the agent's home folder assembled into a byte-stable
//!   system prompt;
//! - [`window`]: token estimates and the budget, and `context::select_messages` over llm-core
//!   messages;
//! - [`tools`]: the tool registry (with schema checks) and the built-in tools, confined to the
//!   workspace: file, search and command tools; `tools/context.rs` (get_node, put_frame,
//!   synthesize, search_symbols, task_context, related_files and refs on the store as the run's
//!   agent) and `tools/control.rs` (complete, escalate);
//! - [`time`]: UTC timestamps as text, from an injected clock;
//! - [`compaction`]: the summary message and its ledger ([`Ledger`]), built from data, when a
//!   conversation outgrows the window;
//! - [`agent`]: the turn loop, [`Agent::process_turn`] (and `retry`, `abort`; [`AgentConfig`];
//!   [`Governance`]: a governor, an audit log and an [`Approver`] for asks), with governance
//!   deciding every call;
//! - [`session`]: [`Session::open`], a run set up from a front end's checked flags (the
//!   conversation, the tools, the governance and its audit record of the policy).
//!
//! What a call costs, for the cost cap, is llm-core's [`Price`] (re-exported here, as
//! [`AgentConfig::price`] names it). Model-backed generation (`generate`, its producers and
//! batches) and an agent's stored model are the `merkle-generate` crate's: the agent neither
//! calls them nor depends on them.
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
//!
//! # Invariants
//!
//! - **A message is in memory only after it is on disk**; a crash loses at most the message in
//!   flight; a torn last line is cut back before the next append; a corrupt line in the middle is
//!   never dropped silently (the file is quarantined to `.corrupt` and the user told).
//! - **The model's message is durable before any of its calls runs, and the results are durable
//!   (one user message) before the next model call.** On load, and before a turn, a tool call
//!   without a result gets an `interrupted` error result, so the next request is valid.
//! - **Each request marks its stable prefix for the provider's cache** (`cache_marks`: tools,
//!   system prompt, the previous request's last message, the newest; at most four sent) and
//!   carries the conversation id as its cache key, unless `AgentConfig::prompt_cache` is off.
//! - **Compaction is data-first**: the ledger comes from the transcript, the model writes only
//!   the narrative, and replaced messages are archived first.
//! - **File tools are confined by file descriptors, not string prefixes**: each path component
//!   is opened beneath the workspace without following symlinks (`O_NOFOLLOW`, `..` refused at
//!   the root); `.git` and `.merkle` are never writable by tools.
//! - **Tool failures are results, never crashes**: unknown tools, schema-invalid arguments,
//!   handler errors and panics come back to the model as error results, capped in size.
//! - **Context tools rescan first** (incremental), so a frame attaches to the node as the file
//!   tools left it.
pub mod agent;
pub mod compaction;
pub mod conversation;
pub mod error;
pub mod prompt;
pub mod session;
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
pub use llm_core::Price;
pub use prompt::{
    IDENTITY_FILES, IdentityContent, IdentityFile, IdentityFiles, PromptLimits, RuntimeInfo,
    build_system_prompt, load_identity_files,
};
pub use session::{PolicySource, Session, SessionSpec};
pub use storage::{Damage, Jsonl, Quarantine, TornTail};
pub use tools::{ToolConfig, ToolDefinition, ToolOutcome, ToolRegistry, Workspace, builtin_tools};
pub use window::{estimate_message_tokens, estimate_text_tokens, token_budget};
