//! [`Session::open`]: an agent run set up from what a front end has read of its flags, so that
//! every front end starts a governed agent the same way. The front end checks what the user
//! gave (the policy, the model, the price) and opens the store; the session opens the
//! conversation, registers the tools (built-in, context and control), sets up the governance
//! with the audit log's record of the policy, and makes the [`Agent`].
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use governance::{AskMode, AuditLog, GovernorConfig, Outcome, Policy};
use llm_core::{Clock, LlmClient};
use merkle_store::{Role, Store};

use crate::agent::{Agent, AgentConfig, Approver, Governance};
use crate::conversation::{ConversationStore, LoadReport};
use crate::error::Result;
use crate::tools::context::context_tools;
use crate::tools::control::control_tools;
use crate::tools::{ToolConfig, ToolRegistry, Workspace};

/// The policy that governs a run, with where it came from (`builtin`, or the file's path) and
/// its text, whose hash the audit log records.
pub struct PolicySource {
    pub policy: Policy,
    pub source: String,
    pub text: String,
}

/// What an agent run is made of, once a front end has read its flags and checked them.
pub struct SessionSpec<'a> {
    /// The workspace root.
    pub root: &'a Path,
    /// The workspace's store, scanned.
    pub store: Arc<Store>,
    /// The agent the run acts as, and its role.
    pub agent: &'a str,
    pub role: Role,
    /// The model's client.
    pub client: Arc<dyn LlmClient>,
    /// A conversation to continue (its id), else a new one.
    pub conversation: Option<&'a str>,
    /// The conversation's title where it has none yet (the first request, cut to a line).
    pub title: Option<String>,
    pub policy: PolicySource,
    /// Whether asks go to a person ([`AskMode::Prompt`], answered by `approver`), are
    /// approved ahead ([`AskMode::PreApproved`]) or refused ([`AskMode::Refuse`]).
    pub ask: AskMode,
    pub approver: Option<Box<dyn Approver>>,
    /// The audit log's file.
    pub audit: PathBuf,
    /// How long `run_command` may run unless the model asks for less.
    pub command_timeout: Duration,
    /// The loop's settings (model, budgets, home, price, ...).
    pub config: AgentConfig,
    pub clock: Arc<dyn Clock>,
}

/// An agent run, made ready by [`Session::open`].
pub struct Session {
    pub agent: Agent,
    /// What loading a continued conversation found (damage, calls left without a result),
    /// for the front end to say.
    pub report: LoadReport,
}

impl Session {
    /// The run `spec` describes: its conversation opened (or created) and titled, its tools
    /// registered, its governance set up, and the audit log's first record naming the
    /// policy that governs it, so a permissive file is visible.
    pub fn open(spec: SessionSpec<'_>) -> Result<Session> {
        let (mut conversation, report) = match spec.conversation {
            Some(id) => ConversationStore::initialize(spec.root, id, Arc::clone(&spec.clock))?,
            None => (
                ConversationStore::create(spec.root, Arc::clone(&spec.clock))?,
                LoadReport::default(),
            ),
        };
        let model = spec.config.model.clone();
        conversation.update_metadata(|m| {
            if m.title.is_none() {
                m.title = spec.title.clone();
            }
            m.agent = Some(spec.agent.to_owned());
            if !model.is_empty() {
                m.model = Some(model.clone());
            }
        })?;
        let tools = tools(spec.root, &spec.store, spec.agent, spec.command_timeout)?;
        let session = governance::Session {
            conversation: conversation.id().to_owned(),
            agent: spec.agent.to_owned(),
            role: spec.role,
        };
        let governance = governed(session, spec.policy, spec.ask, spec.approver, &spec.audit)?;
        let agent = Agent::new(spec.client, conversation, tools, spec.config, spec.clock)
            .with_governance(governance);
        Ok(Session { agent, report })
    }
}

/// The run's tools: the built-in ones confined to the workspace at `root`, the context tools
/// acting as `agent` on `store`, and the control tools.
fn tools(
    root: &Path,
    store: &Arc<Store>,
    agent: &str,
    command_timeout: Duration,
) -> Result<ToolRegistry> {
    let workspace = Arc::new(Workspace::open(root)?);
    let config = ToolConfig {
        command_timeout,
        ..ToolConfig::default()
    };
    let mut tools = ToolRegistry::with_builtins(&workspace, &config);
    for tool in context_tools(store, agent)
        .into_iter()
        .chain(control_tools())
    {
        tools.register(tool)?;
    }
    Ok(tools)
}

/// The governance of a run: the policy's governor for `session`, and the audit log at
/// `audit`, which first records which policy governs the run (its source, its text's hash).
fn governed(
    session: governance::Session,
    policy: PolicySource,
    ask: AskMode,
    approver: Option<Box<dyn Approver>>,
    audit: &Path,
) -> Result<Governance> {
    let entry = governance::Entry {
        conversation: session.conversation.clone(),
        agent: session.agent.clone(),
        role: session.role,
        intent: None,
        tool: "(policy)".to_owned(),
        args_hash: blake3::hash(policy.text.as_bytes()).to_hex().to_string(),
        decision: governance::DecisionKind::Allow,
        rule: format!("policy {}", policy.source),
        outcome: Outcome::Ok,
    };
    let governor =
        governance::Governor::new(Arc::new(policy.policy), session, GovernorConfig { ask });
    let audit = AuditLog::open(audit, Box::new(governance::SystemClock))?;
    audit.append(&entry)?;
    Ok(Governance {
        governor,
        audit,
        approver,
    })
}
