//! What governance decides about one tool call, and the names of its built-in rules.
use std::fmt;

use serde::{Deserialize, Serialize};

/// Control tools are always allowed.
pub const RULE_CONTROL: &str = "control";
/// No tool but control tools runs until an intent is selected in the current request.
pub const RULE_INTENT_REQUIRED: &str = "intent-required";
/// A `select_active_intent` call whose arguments are not a valid selection.
pub const RULE_INTENT_INVALID: &str = "intent-invalid";
/// An agent's role caps the intents it may select.
pub const RULE_ROLE_CAP: &str = "role-cap";

/// The name of the matrix rule of `intent`: `intents.CODE`, the key of its list in the file.
pub fn matrix_rule(intent: crate::Intent) -> String {
    format!("intents.{intent}")
}

/// The decision on one call, with the rule that made it. Every decision names a rule, allows
/// included, so the audit log can say why anything ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run the tool.
    Allow { rule: String },
    /// Ask the user first; run the tool only on a yes.
    Ask { rule: String },
    /// Do not run the tool; return [`Decision::error_text`] to the model as an error result.
    Deny { rule: String, message: String },
}

impl Decision {
    pub fn kind(&self) -> DecisionKind {
        match self {
            Decision::Allow { .. } => DecisionKind::Allow,
            Decision::Ask { .. } => DecisionKind::Ask,
            Decision::Deny { .. } => DecisionKind::Deny,
        }
    }

    pub fn rule(&self) -> &str {
        match self {
            Decision::Allow { rule } | Decision::Ask { rule } | Decision::Deny { rule, .. } => rule,
        }
    }

    /// The error tool result of a denied call: it names the rule, so the model (and whoever
    /// reads the transcript) knows what to change. `None` for allow and ask.
    pub fn error_text(&self) -> Option<String> {
        match self {
            Decision::Deny { rule, message } => {
                Some(format!("blocked by governance rule {rule}: {message}"))
            }
            Decision::Allow { .. } | Decision::Ask { .. } => None,
        }
    }
}

/// A decision without its rule: what a policy rule or an example says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    Allow,
    Ask,
    Deny,
}

impl DecisionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionKind::Allow => "allow",
            DecisionKind::Ask => "ask",
            DecisionKind::Deny => "deny",
        }
    }
}

impl fmt::Display for DecisionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
