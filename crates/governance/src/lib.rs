//! Runtime governance for tool-using agents: intents, roles, a hash-chained audit log and a loop
//! governor, all decided in code before a tool runs.
//!
//! The difference between a prompt-governed agent and a runtime-governed one: here no model
//! output can run a tool the policy does not allow. The model must first declare an intent with
//! the `select_active_intent` tool; every later call is checked against the intent -> tools
//! matrix and the rules of a [`Policy`] (data: YAML, with a built-in default); an agent's
//! [`merkle_hash::Role`] caps the intents it may select; every decision can be written to an
//! append-only, hash-chained [`AuditLog`]; and a [`LoopGuard`] ends a request that repeats itself
//! or outgrows its caps with a typed [`LoopStop`].
//!
//! It knows nothing of LLM providers, HTTP or storage engines: it reads `llm-types`' [`Tool`]
//! and [`ToolCall`] types and `merkle-hash`'s roles (never the store), and does no IO but
//! reading a policy file and the audit log's own files. Everything else is synchronous and
//! pure, so the agent loop's dispatcher calls it inline:
//!
//! ```
//! use std::sync::Arc;
//! use governance::{Decision, Governor, GovernorConfig, Policy, Reset, Session};
//! use llm_types::ToolCall;
//! use merkle_hash::Role;
//! use serde_json::json;
//!
//! let session = Session { conversation: "c1".into(), agent: "alice".into(), role: Role::Writer };
//! let mut gov = Governor::new(Arc::new(Policy::builtin()), session, GovernorConfig::default());
//! gov.reset(Reset::NewRequest);
//! let call = |name: &str, input| ToolCall { id: "t".into(), name: name.into(), input };
//!
//! let read = call("read_file", json!({"path": "src/lib.rs"}));
//! let blocked = gov.decide(&read);
//! assert_eq!(blocked.rule(), "intent-required");
//! assert!(blocked.error_text().is_some()); // the error result returned to the model
//!
//! let select = call("select_active_intent", json!({"intent": "ANALYZE", "justification": "read"}));
//! assert!(matches!(gov.decide(&select), Decision::Allow { .. }));
//! assert!(matches!(gov.decide(&read), Decision::Allow { .. }));
//! ```
//!
//! Where things are: `intent.rs` (the seven intents, the `select_active_intent` tool),
//! `policy.rs` (the YAML policy; the built-in default is `src/default.yaml`, the same as
//! `fixtures/policy/default.yaml`), `governor.rs` ([`Governor::decide`], resets,
//! `allowed_tools`), `loop_guard.rs` (typed [`LoopStop`]s), [`audit`], and [`table`] (the text
//! tables of the policy grid and of the CLI's audit log).
//!
//! # Invariants
//!
//! - **No tool but the control tools runs before an intent is selected** in the current request;
//!   the intent resets on a new request, a retry and an abort.
//! - **Deny beats ask beats allow**, whatever order rules are written in; an `ask` without an
//!   interactive prompt or a pre-approval is a denial.
//! - **Role caps are built in**: a reader can never select CODE, WRITE_FILE or EXECUTE, whatever
//!   the policy says.
//! - **A policy's examples are checked when it loads**; a contradiction is a load error naming
//!   the example.
//! - **The audit log is hash-chained** (each record hashes the previous hash and its canonical
//!   JSON), and a head file (`audit.head`, replaced atomically after each durable append) makes
//!   truncation at the end detectable; `verify` names the first bad record.
//!
//! [`Tool`]: llm_types::Tool
//! [`ToolCall`]: llm_types::ToolCall

pub mod audit;
mod canonical;
mod decision;
mod error;
mod governor;
mod intent;
mod loop_guard;
mod pattern;
mod policy;
pub mod table;

pub use audit::{
    AuditLog, Clock, Entry, ManualClock, Outcome, Record, SystemClock, VerifyReport, unfinished,
};
pub use canonical::{args_hash, canonical_json};
pub use decision::{
    Decision, DecisionKind, RULE_CONTROL, RULE_INTENT_INVALID, RULE_INTENT_REQUIRED, RULE_ROLE_CAP,
    matrix_rule,
};
pub use error::{Error, Result};
pub use governor::{AskMode, Governor, GovernorConfig, Reset, Session, ToolOffer};
pub use intent::{
    COMPLETE, CONTROL_TOOLS, ESCALATE, Intent, SELECT_ACTIVE_INTENT, Selection, is_control_tool,
    select_active_intent_tool,
};
pub use loop_guard::{LoopGuard, LoopStop};
pub use policy::{DEFAULT_POLICY_YAML, Example, Limits, Policy, Rule};
