//! The governor of one conversation: the selected intent, the decision on every call before it
//! runs, the tool list offered to the model, and the loop governor's counters.
use std::sync::Arc;

use llm_types::{Tool, ToolCall, Usage};
use merkle_hash::Role;

use crate::audit::{Entry, Outcome};
use crate::canonical::args_hash;
use crate::decision::{Decision, DecisionKind};
use crate::intent::{
    Intent, SELECT_ACTIVE_INTENT, Selection, is_control_tool, select_active_intent_tool,
};
use crate::loop_guard::{LoopGuard, LoopStop};
use crate::policy::Policy;

/// Who is talking, in which conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Session {
    pub conversation: String,
    pub agent: String,
    pub role: Role,
}

/// What an ask becomes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AskMode {
    /// An interactive run: the decision stays an ask and the caller asks the user.
    Prompt,
    /// A run started with pre-approval: an ask is allowed, named by the ask rule.
    PreApproved,
    /// A non-interactive run without pre-approval: an ask is denied. No answer is never a yes.
    #[default]
    Refuse,
}

/// How a governor runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GovernorConfig {
    pub ask: AskMode,
}

/// Why the intent is cleared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reset {
    /// The user sent a new request: the intent and the loop governor's counters reset.
    NewRequest,
    /// The model request is retried: the intent resets, the counters do not (a retry must not
    /// buy a looping model a fresh budget).
    Retry,
    /// The request was aborted: the intent and the counters reset.
    Abort,
}

/// The tools to offer the model.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolOffer {
    /// The tools the model may call now, `select_active_intent` included: for providers whose
    /// tool list can change between calls.
    pub tools: Vec<Tool>,
    /// Every tool, `select_active_intent` appended: for providers that need the full schema
    /// visible and take the allowed names separately (Gemini's `allowed_function_names`).
    pub all_tools: Vec<Tool>,
    /// The names of [`ToolOffer::tools`].
    pub allowed: Vec<String>,
}

/// Governance state of one conversation. Synchronous and pure but for its own state: the
/// caller runs the tools, asks the user and writes the audit log.
///
/// The dispatcher's hook, per call: [`Governor::before_call`] (a stop ends the request),
/// [`Governor::decide`], run or block accordingly ([`Decision::error_text`] is the error result
/// of a denied call), then [`Governor::after_call`] with the error text if any; per model call
/// [`Governor::after_model_call`]; and [`Governor::reset`] on a new request, a retry or an abort.
#[derive(Clone, Debug)]
pub struct Governor {
    policy: Arc<Policy>,
    session: Session,
    config: GovernorConfig,
    intent: Option<Intent>,
    justification: Option<String>,
    guard: LoopGuard,
}

impl Governor {
    pub fn new(policy: Arc<Policy>, session: Session, config: GovernorConfig) -> Governor {
        let guard = LoopGuard::new(policy.limits.clone());
        Governor {
            policy,
            session,
            config,
            intent: None,
            justification: None,
            guard,
        }
    }

    pub fn session(&self) -> &Session {
        &self.session
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The intent selected in the current request, if any.
    pub fn intent(&self) -> Option<Intent> {
        self.intent
    }

    /// Why the model selected the current intent.
    pub fn justification(&self) -> Option<&str> {
        self.justification.as_deref()
    }

    pub fn reset(&mut self, why: Reset) {
        self.intent = None;
        self.justification = None;
        match why {
            Reset::NewRequest | Reset::Abort => self.guard.reset(),
            Reset::Retry => {}
        }
    }

    /// Decides a call before it runs. A `select_active_intent` that is allowed selects its
    /// intent; a refused one leaves the current intent as it was. An ask is resolved by the
    /// configured [`AskMode`].
    pub fn decide(&mut self, call: &ToolCall) -> Decision {
        let decision =
            self.policy
                .evaluate(self.session.role, self.intent, &call.name, &call.input);
        if call.name == SELECT_ACTIVE_INTENT
            && let Decision::Allow { .. } = decision
            && let Ok(selection) = Selection::parse(&call.input)
        {
            self.intent = Some(selection.intent);
            self.justification = Some(selection.justification);
        }
        match decision {
            Decision::Ask { rule } => match self.config.ask {
                AskMode::Prompt => Decision::Ask { rule },
                AskMode::PreApproved => Decision::Allow { rule },
                AskMode::Refuse => Decision::Deny {
                    message: format!(
                        "rule {rule} asks the user first, and this run is non-interactive \
                         without pre-approval"
                    ),
                    rule,
                },
            },
            decision => decision,
        }
    }

    /// The result text of an allowed `select_active_intent` call.
    pub fn selection_text(&self) -> String {
        match self.intent {
            Some(intent) => {
                let allowed = self
                    .policy
                    .intent_lines()
                    .into_iter()
                    .find(|(i, _)| *i == intent)
                    .map(|(_, text)| text)
                    .unwrap_or_default();
                format!("intent {intent} selected; it allows {allowed}")
            }
            None => "no intent is selected".to_owned(),
        }
    }

    /// The tool list to offer the model now: `tools` (the caller's, control tools included)
    /// with `select_active_intent` appended, filtered to what the current intent can allow.
    /// Before an intent is selected that is only the control tools.
    pub fn allowed_tools(&self, tools: &[Tool]) -> ToolOffer {
        let select = select_active_intent_tool(self.session.role, &self.policy.intent_lines());
        let all_tools: Vec<Tool> = tools
            .iter()
            .filter(|t| t.name != SELECT_ACTIVE_INTENT)
            .cloned()
            .chain(std::iter::once(select))
            .collect();
        let ask_is_deny = self.config.ask == AskMode::Refuse;
        let offered = |tool: &Tool| {
            is_control_tool(&tool.name)
                || self
                    .intent
                    .is_some_and(|i| self.policy.offers(i, &tool.name, ask_is_deny))
        };
        let tools: Vec<Tool> = all_tools.iter().filter(|t| offered(t)).cloned().collect();
        ToolOffer {
            allowed: tools.iter().map(|t| t.name.clone()).collect(),
            tools,
            all_tools,
        }
    }

    /// Counts a call before it is decided; `Some` means do not run it and end the request.
    pub fn before_call(&mut self, call: &ToolCall) -> Option<LoopStop> {
        self.guard.before_call(call)
    }

    /// Counts a call's result: the error result's text, a denial's included, or `None`.
    pub fn after_call(&mut self, error: Option<&str>) -> Option<LoopStop> {
        self.guard.after_call(error)
    }

    /// Counts a model call's token usage and cost (0 when the caller does not price it).
    pub fn after_model_call(&mut self, usage: &Usage, cost_usd: f64) -> Option<LoopStop> {
        self.guard.after_model_call(usage, cost_usd)
    }

    pub fn loop_guard(&self) -> &LoopGuard {
        &self.guard
    }

    /// The audit entry of a decided call and what became of it.
    pub fn audit_entry(&self, call: &ToolCall, decision: &Decision, outcome: Outcome) -> Entry {
        self.entry(call, decision.kind(), decision.rule(), outcome)
    }

    /// The audit entry of a call the loop governor stopped.
    pub fn audit_stop(&self, call: &ToolCall, stop: &LoopStop) -> Entry {
        self.entry(call, DecisionKind::Deny, stop.rule(), Outcome::Stopped)
    }

    fn entry(
        &self,
        call: &ToolCall,
        decision: DecisionKind,
        rule: &str,
        outcome: Outcome,
    ) -> Entry {
        Entry {
            conversation: self.session.conversation.clone(),
            agent: self.session.agent.clone(),
            role: self.session.role,
            intent: self.intent,
            tool: call.name.clone(),
            args_hash: args_hash(&call.input),
            decision,
            rule: rule.to_owned(),
            outcome,
        }
    }
}
