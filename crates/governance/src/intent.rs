//! Intents, the control tools and the `select_active_intent` tool the model calls to declare one.
use std::fmt;

use llm_types::Tool;
use merkle_hash::Role;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The tool the model calls to declare its intent; nothing but control tools runs before.
pub const SELECT_ACTIVE_INTENT: &str = "select_active_intent";
/// The tool that ends a turn with an answer (defined by the agent loop).
pub const COMPLETE: &str = "complete";
/// The tool that hands a turn to a human (defined by the agent loop).
pub const ESCALATE: &str = "escalate";
/// Tools that are always allowed: no policy lists, denies or asks for them.
pub const CONTROL_TOOLS: [&str; 3] = [SELECT_ACTIVE_INTENT, COMPLETE, ESCALATE];

/// Whether `tool` is a control tool.
pub fn is_control_tool(tool: &str) -> bool {
    CONTROL_TOOLS.contains(&tool)
}

/// What the model declares it is about to do in this request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Intent {
    Plan,
    Code,
    Analyze,
    Debug,
    WriteFile,
    ReadFile,
    Execute,
}

impl Intent {
    /// Every intent, in the order of the spec's enum (and of `policy show`'s columns).
    pub const ALL: [Intent; 7] = [
        Intent::Plan,
        Intent::Code,
        Intent::Analyze,
        Intent::Debug,
        Intent::WriteFile,
        Intent::ReadFile,
        Intent::Execute,
    ];

    /// The intent's name, as the model and the policy file spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Intent::Plan => "PLAN",
            Intent::Code => "CODE",
            Intent::Analyze => "ANALYZE",
            Intent::Debug => "DEBUG",
            Intent::WriteFile => "WRITE_FILE",
            Intent::ReadFile => "READ_FILE",
            Intent::Execute => "EXECUTE",
        }
    }

    pub fn parse(s: &str) -> Option<Intent> {
        Intent::ALL.into_iter().find(|i| i.as_str() == s)
    }

    /// The least role that may select the intent. Built in, not policy: a reader can never
    /// select an intent that changes the workspace, whatever file a run is given.
    pub fn min_role(self) -> Role {
        match self {
            Intent::Code | Intent::WriteFile | Intent::Execute => Role::Writer,
            Intent::Plan | Intent::Analyze | Intent::Debug | Intent::ReadFile => Role::Reader,
        }
    }

    /// The intents an agent of `role` may select.
    pub fn selectable_by(role: Role) -> Vec<Intent> {
        Intent::ALL
            .into_iter()
            .filter(|i| role >= i.min_role())
            .collect()
    }
}

impl fmt::Display for Intent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A valid `select_active_intent` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    pub intent: Intent,
    pub justification: String,
}

impl Selection {
    /// Reads the arguments of a `select_active_intent` call; the error says what is wrong in
    /// words the model can act on.
    pub fn parse(args: &Value) -> Result<Selection, String> {
        let names = || {
            Intent::ALL
                .iter()
                .map(|i| i.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let Some(map) = args.as_object() else {
            return Err(format!(
                "select_active_intent takes an object {{\"intent\", \"justification\"}}, got {args}"
            ));
        };
        if let Some(key) = map.keys().find(|k| *k != "intent" && *k != "justification") {
            return Err(format!("select_active_intent has no argument {key:?}"));
        }
        let intent = match map.get("intent") {
            Some(Value::String(s)) => Intent::parse(s)
                .ok_or_else(|| format!("unknown intent {s:?}: expected one of {}", names()))?,
            Some(other) => return Err(format!("intent must be a string, got {other}")),
            None => return Err(format!("intent is missing: expected one of {}", names())),
        };
        let justification = match map.get("justification") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) | None => {
                return Err("justification is missing: say why this intent".to_owned());
            }
            Some(other) => return Err(format!("justification must be a string, got {other}")),
        };
        Ok(Selection {
            intent,
            justification,
        })
    }
}

/// The `select_active_intent` tool as offered to an agent of `role`: its `intent` enum lists only
/// the intents the role may select, and its description says which tools each allows
/// (`allowed`, one line per intent, as [`crate::Policy::intent_lines`] writes them).
pub fn select_active_intent_tool(role: Role, allowed: &[(Intent, String)]) -> Tool {
    let intents = Intent::selectable_by(role);
    let mut description = String::from(
        "Declare what you are about to do in this request. Call it before any other tool: no \
         other tool runs until an intent is selected, and only the tools of the selected intent \
         run. Select again to change intent; the intent resets with every new request.\n",
    );
    for (intent, tools) in allowed {
        if intents.contains(intent) {
            description.push_str(&format!("{intent}: {tools}\n"));
        }
    }
    Tool {
        name: SELECT_ACTIVE_INTENT.to_owned(),
        description: description.trim_end().to_owned(),
        input_schema: json!({
            "type": "object",
            "properties": {
                "intent": {
                    "type": "string",
                    "enum": intents.iter().map(|i| i.as_str()).collect::<Vec<_>>(),
                    "description": "The operational intent for the tools that follow",
                },
                "justification": {
                    "type": "string",
                    "description": "Why this intent, in one sentence",
                },
            },
            "required": ["intent", "justification"],
            "additionalProperties": false,
        }),
    }
}
