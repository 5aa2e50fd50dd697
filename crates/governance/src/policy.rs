//! The policy: which tools each intent allows, rules that refine it, per-request limits and
//! examples, loaded from YAML and checked when it loads.
//!
//! The format is documented by the built-in policy itself, [`DEFAULT_POLICY_YAML`] (shipped as
//! `fixtures/policy/default.yaml`). Evaluation is a pure function of the policy, the agent's
//! role, the selected intent and the call: [`Policy::evaluate`]. Precedence does not depend on
//! the order of rules: any matching deny wins; else a call that neither the intent's list nor an
//! allow rule allows is denied by the intent's rule (`intents.CODE`); else any matching ask
//! makes it an ask; else it is allowed. So deny beats ask beats allow, and an ask rule tightens
//! what is allowed but never allows what the intent does not: the matrix stays the fence.
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use merkle_hash::Role;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::decision::{
    Decision, DecisionKind, RULE_CONTROL, RULE_INTENT_INVALID, RULE_INTENT_REQUIRED, RULE_ROLE_CAP,
    matrix_rule,
};
use crate::error::{Error, Result};
use crate::intent::{CONTROL_TOOLS, Intent, SELECT_ACTIVE_INTENT, Selection, is_control_tool};
use crate::pattern::{normalize_path, wildcard};

/// The built-in policy's source.
pub const DEFAULT_POLICY_YAML: &str = include_str!("default.yaml");

/// The one version of the format this crate reads.
const VERSION: u32 = 1;

/// A loaded policy. Every policy that exists passed its own checks and examples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// The format's version: 1.
    pub version: u32,
    /// The tools each intent allows, as wildcard patterns. An intent left out allows nothing.
    #[serde(default)]
    pub intents: BTreeMap<Intent, Vec<String>>,
    /// Refinements: deny, ask or allow calls by tool, intent and arguments.
    #[serde(default)]
    pub rules: Vec<Rule>,
    /// Per-request limits of the loop governor.
    #[serde(default)]
    pub limits: Limits,
    /// Calls and the decisions they must get, checked when the policy loads.
    #[serde(default)]
    pub examples: Vec<Example>,
}

/// One rule of a policy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Named in decisions, error results and the audit log.
    pub name: String,
    pub decision: DecisionKind,
    /// Tool name patterns; the rule matches a call to any of them.
    pub tools: Vec<String>,
    /// The intents it applies under; empty means every intent.
    #[serde(default)]
    pub intents: Vec<Intent>,
    /// Argument patterns: the rule matches only when every argument named here is a string (or
    /// number or boolean) matching one of its patterns. A `path` argument is normalized first.
    #[serde(default)]
    pub args: BTreeMap<String, Vec<String>>,
    /// What a denied call's error result says after the rule's name.
    #[serde(default)]
    pub message: Option<String>,
}

/// Per-request limits; `None` switches one off. A field left out of the file takes the
/// built-in value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Stop when the same tool is called with the same arguments this many times in a row.
    pub repeat_calls: Option<u32>,
    /// Stop when the same error result comes back this many times in a row.
    pub repeat_errors: Option<u32>,
    /// Stop before the call that would exceed this many tool calls.
    pub max_tool_calls: Option<u32>,
    /// Stop once the request's model calls used this many tokens.
    pub max_tokens: Option<u64>,
    /// Stop once the request cost this many US dollars, as the caller prices it.
    pub max_cost_usd: Option<f64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            repeat_calls: Some(3),
            repeat_errors: Some(3),
            max_tool_calls: Some(50),
            max_tokens: Some(2_000_000),
            max_cost_usd: None,
        }
    }
}

/// A call and the decision the policy must make on it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Example {
    pub name: String,
    /// The calling agent's role [default: writer].
    #[serde(default = "default_role", with = "role_name")]
    pub role: Role,
    /// The selected intent; none means no intent is selected yet.
    #[serde(default)]
    pub intent: Option<Intent>,
    pub tool: String,
    #[serde(default = "empty_object")]
    pub args: Value,
    pub expect: DecisionKind,
    /// The rule that must decide, when given.
    #[serde(default)]
    pub rule: Option<String>,
}

fn default_role() -> Role {
    Role::Writer
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

mod role_name {
    use merkle_hash::Role;
    use serde::{Deserialize, Deserializer, Serializer};

    /// The role names as the file spells them; a derived enum, so an unknown name is reported at
    /// its line with the names that would do.
    #[derive(Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Name {
        Reader,
        Writer,
        Synthesis,
    }

    pub(super) fn serialize<S: Serializer>(role: &Role, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(role.as_str())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Role, D::Error> {
        Ok(match Name::deserialize(d)? {
            Name::Reader => Role::Reader,
            Name::Writer => Role::Writer,
            Name::Synthesis => Role::Synthesis,
        })
    }
}

impl Rule {
    /// Whether the rule is about `tool` under `intent`, whatever the arguments.
    fn applies_to(&self, intent: Intent, tool: &str) -> bool {
        (self.intents.is_empty() || self.intents.contains(&intent))
            && self.tools.iter().any(|p| wildcard(p, tool))
    }

    fn matches(&self, intent: Intent, tool: &str, args: &Value) -> bool {
        self.applies_to(intent, tool)
            && self.args.iter().all(|(name, patterns)| {
                arg_text(name, args.get(name))
                    .is_some_and(|text| patterns.iter().any(|p| wildcard(p, &text)))
            })
    }
}

/// The text an argument pattern is matched against: strings as they are (`path` normalized),
/// numbers and booleans as JSON writes them; anything else never matches.
fn arg_text(name: &str, value: Option<&Value>) -> Option<String> {
    let text = match value? {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null | Value::Array(_) | Value::Object(_) => return None,
    };
    Some(if name == "path" {
        normalize_path(&text)
    } else {
        text
    })
}

impl Policy {
    /// The built-in policy, [`DEFAULT_POLICY_YAML`].
    pub fn builtin() -> Policy {
        Policy::parse("(built-in policy)", DEFAULT_POLICY_YAML)
            .expect("the built-in policy loads: its own tests check it")
    }

    /// Reads and parses a policy file.
    pub fn load(path: &Path) -> Result<Policy> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::ReadPolicy {
            path: path.display().to_string(),
            source,
        })?;
        Policy::parse(&path.display().to_string(), &text)
    }

    /// Parses a policy, checks it and runs its examples; `file` names it in errors, with the
    /// line at fault where it can be found.
    pub fn parse(file: &str, text: &str) -> Result<Policy> {
        let policy = read_yaml(file, text)?;
        let source = Source { file, text };
        source.check_version(&policy)?;
        source.check_intents(&policy)?;
        source.check_rules(&policy.rules)?;
        source.check_limits(&policy.limits)?;
        source.check_examples(&policy)?;
        Ok(policy)
    }

    /// The decision on a call to `tool` with `args` by an agent of `role` while `intent` is
    /// selected (`None`: nothing selected yet in this request). An ask is returned as such;
    /// what it becomes without a user to ask is the governor's business.
    pub fn evaluate(
        &self,
        role: Role,
        intent: Option<Intent>,
        tool: &str,
        args: &Value,
    ) -> Decision {
        if tool == SELECT_ACTIVE_INTENT {
            return match Selection::parse(args) {
                Err(message) => Decision::Deny {
                    rule: RULE_INTENT_INVALID.to_owned(),
                    message,
                },
                Ok(selection) if role < selection.intent.min_role() => Decision::Deny {
                    rule: RULE_ROLE_CAP.to_owned(),
                    message: format!(
                        "an agent with role {role} cannot select {}, which needs role {} or \
                         above; it may select {}",
                        selection.intent,
                        selection.intent.min_role(),
                        names(&Intent::selectable_by(role)),
                    ),
                },
                Ok(_) => Decision::Allow {
                    rule: RULE_CONTROL.to_owned(),
                },
            };
        }
        if is_control_tool(tool) {
            return Decision::Allow {
                rule: RULE_CONTROL.to_owned(),
            };
        }
        let Some(intent) = intent else {
            return Decision::Deny {
                rule: RULE_INTENT_REQUIRED.to_owned(),
                message: format!(
                    "no intent is selected in this request; call {SELECT_ACTIVE_INTENT} first \
                     with one of {}",
                    names(&Intent::selectable_by(role)),
                ),
            };
        };
        let matching = || self.rules.iter().filter(|r| r.matches(intent, tool, args));
        if let Some(rule) = matching().find(|r| r.decision == DecisionKind::Deny) {
            return Decision::Deny {
                rule: rule.name.clone(),
                message: rule
                    .message
                    .clone()
                    .unwrap_or_else(|| format!("{tool} is denied with these arguments")),
            };
        }
        let allowed_by = if self.matrix_allows(intent, tool) {
            Some(matrix_rule(intent))
        } else {
            matching()
                .find(|r| r.decision == DecisionKind::Allow)
                .map(|r| r.name.clone())
        };
        let Some(allowed_by) = allowed_by else {
            return Decision::Deny {
                rule: matrix_rule(intent),
                message: format!(
                    "{tool} is not allowed under intent {intent}, which allows {}; select \
                     another intent if the task needs it",
                    self.allowed_text(intent)
                ),
            };
        };
        match matching().find(|r| r.decision == DecisionKind::Ask) {
            Some(rule) => Decision::Ask {
                rule: rule.name.clone(),
            },
            None => Decision::Allow { rule: allowed_by },
        }
    }

    fn matrix_allows(&self, intent: Intent, tool: &str) -> bool {
        self.intents
            .get(&intent)
            .is_some_and(|tools| tools.iter().any(|p| wildcard(p, tool)))
    }

    /// Whether a call to `tool` under `intent` can be allowed for some arguments, and is not
    /// denied (or, with `ask_is_deny`, asked) whatever its arguments: whether to offer the tool
    /// to the model.
    pub fn offers(&self, intent: Intent, tool: &str, ask_is_deny: bool) -> bool {
        let always = |kind: DecisionKind| {
            self.rules
                .iter()
                .any(|r| r.decision == kind && r.args.is_empty() && r.applies_to(intent, tool))
        };
        if always(DecisionKind::Deny) || (ask_is_deny && always(DecisionKind::Ask)) {
            return false;
        }
        self.matrix_allows(intent, tool)
            || self
                .rules
                .iter()
                .any(|r| r.decision == DecisionKind::Allow && r.applies_to(intent, tool))
    }

    /// What `intent` allows, in words: its tools and the tools of allow rules under it.
    fn allowed_text(&self, intent: Intent) -> String {
        let mut tools: Vec<&str> = Vec::new();
        let listed = self.intents.get(&intent).into_iter().flatten();
        let ruled = self
            .rules
            .iter()
            .filter(|r| r.decision == DecisionKind::Allow)
            .filter(|r| r.intents.is_empty() || r.intents.contains(&intent))
            .flat_map(|r| &r.tools);
        for tool in listed.chain(ruled) {
            if !tools.contains(&tool.as_str()) {
                tools.push(tool);
            }
        }
        if tools.is_empty() {
            "no tools".to_owned()
        } else {
            tools.join(", ")
        }
    }

    /// One line per intent: the intent and what it allows, for the `select_active_intent`
    /// tool's description.
    pub fn intent_lines(&self) -> Vec<(Intent, String)> {
        Intent::ALL
            .into_iter()
            .map(|i| (i, self.allowed_text(i)))
            .collect()
    }

    /// The effective matrix, rules and limits as `merkle policy show` prints them.
    pub fn render(&self) -> String {
        let mut tools: Vec<&str> = Vec::new();
        let all_tools = Intent::ALL
            .iter()
            .flat_map(|i| self.intents.get(i).into_iter().flatten())
            .chain(self.rules.iter().flat_map(|r| &r.tools));
        // Patterns are rows of no one tool; the rules list shows them.
        for tool in all_tools.filter(|t| !t.contains(['*', '?'])) {
            if !tools.contains(&tool.as_str()) {
                tools.push(tool);
            }
        }
        let mut rows = vec![
            std::iter::once("tool".to_owned())
                .chain(Intent::ALL.iter().map(|i| i.to_string()))
                .collect::<Vec<_>>(),
        ];
        let empty = empty_object();
        for tool in &tools {
            let mut row = vec![(*tool).to_owned()];
            for intent in Intent::ALL {
                let base = self
                    .evaluate(Role::Synthesis, Some(intent), tool, &empty)
                    .kind();
                // A rule with args changes the cell for some calls when it could deny or ask
                // what is allowed, or allow what is denied.
                let conditional = self.rules.iter().any(|r| {
                    !r.args.is_empty()
                        && r.applies_to(intent, tool)
                        && ((r.decision == DecisionKind::Allow) == (base == DecisionKind::Deny))
                });
                let cell = match base {
                    DecisionKind::Deny => "-",
                    kind => kind.as_str(),
                };
                row.push(format!("{cell}{}", if conditional { "*" } else { "" }));
            }
            rows.push(row);
        }
        let mut out = String::from(
            "intent -> tools (- denied; * some arguments are decided by a rule with args)\n",
        );
        out.push_str(&crate::table::table(&rows));
        out.push_str(&format!(
            "\ncontrol tools, always allowed: {}\n",
            CONTROL_TOOLS.join(", ")
        ));
        out.push_str("role caps: ");
        let capped: Vec<String> = Intent::ALL
            .iter()
            .filter(|i| i.min_role() > Role::Reader)
            .map(|i| i.to_string())
            .collect();
        out.push_str(&format!("a reader never selects {}\n", capped.join(", ")));
        out.push_str("\nrules (deny beats ask beats allow):\n");
        if self.rules.is_empty() {
            out.push_str("  none\n");
        }
        for rule in &self.rules {
            out.push_str(&format!(
                "  {}: {} {}",
                rule.name,
                rule.decision,
                rule.tools.join(", ")
            ));
            if !rule.intents.is_empty() {
                out.push_str(&format!(" under {}", names(&rule.intents)));
            }
            for (arg, patterns) in &rule.args {
                out.push_str(&format!(" when {arg} is {}", patterns.join(" or ")));
            }
            out.push('\n');
        }
        let l = &self.limits;
        let limit = |v: Option<String>| v.unwrap_or_else(|| "off".to_owned());
        out.push_str(&format!(
            "\nlimits per request: repeat_calls {}, repeat_errors {}, max_tool_calls {}, \
             max_tokens {}, max_cost_usd {}\n",
            limit(l.repeat_calls.map(|v| v.to_string())),
            limit(l.repeat_errors.map(|v| v.to_string())),
            limit(l.max_tool_calls.map(|v| v.to_string())),
            limit(l.max_tokens.map(|v| v.to_string())),
            limit(l.max_cost_usd.map(|v| format!("{v:.2}"))),
        ));
        out.push_str(&format!("examples: {} (all pass)\n", self.examples.len()));
        out
    }
}

/// Reads a policy's YAML; a syntax or shape error names the line it is at.
fn read_yaml(file: &str, text: &str) -> Result<Policy> {
    serde_yaml::from_str(text).map_err(|e| {
        let message = e.to_string();
        match e.location() {
            Some(loc) => Error::Policy {
                at: format!("{file}:{}", loc.line()),
                message: message
                    .strip_suffix(&format!(" at line {} column {}", loc.line(), loc.column()))
                    .unwrap_or(&message)
                    .to_owned(),
            },
            None => Error::Policy {
                at: file.to_owned(),
                message,
            },
        }
    })
}

/// A policy's source, for the checks that run once it has parsed: each error names the line
/// at fault where it can be found.
struct Source<'a> {
    file: &'a str,
    text: &'a str,
}

/// The error of a policy that parsed but fails a check.
fn invalid(at: String, message: String) -> Result<()> {
    Err(Error::Policy { at, message })
}

impl Source<'_> {
    /// Where the `nth` key `key` (with `value`, when given) of `section` is: `file:line`, or
    /// the file alone. `nth` picks among equal keys: 1 names the second of two rules with one
    /// name.
    fn at_nth(&self, section: &str, key: &str, value: Option<&str>, nth: usize) -> String {
        match locate(self.text, section, key, value, nth) {
            Some(line) => format!("{}:{line}", self.file),
            None => self.file.to_owned(),
        }
    }

    /// Where the first key `key` (with `value`, when given) of `section` is.
    fn at(&self, section: &str, key: &str, value: Option<&str>) -> String {
        self.at_nth(section, key, value, 0)
    }

    /// Checks that the policy is in the one version of the format this crate reads.
    fn check_version(&self, policy: &Policy) -> Result<()> {
        if policy.version != VERSION {
            return invalid(
                self.at("version", "version", None),
                format!(
                    "unsupported version {}: this merkle reads version {VERSION}",
                    policy.version
                ),
            );
        }
        Ok(())
    }

    /// Checks that no intent lists a control tool, which is always allowed.
    fn check_intents(&self, policy: &Policy) -> Result<()> {
        for (intent, tools) in &policy.intents {
            if let Some(tool) = tools.iter().find(|t| is_control_tool(t)) {
                return invalid(
                    self.at("intents", intent.as_str(), None),
                    format!(
                        "intents.{intent} lists the control tool {tool}, which is always allowed"
                    ),
                );
            }
        }
        Ok(())
    }

    /// Checks that every rule has a name of its own, not a built-in rule's, lists tools but no
    /// control tool, and gives each argument it names a pattern.
    fn check_rules(&self, rules: &[Rule]) -> Result<()> {
        let mut names = BTreeSet::new();
        for rule in rules {
            let here = || self.at("rules", "name", Some(&rule.name));
            let name = &rule.name;
            if name.is_empty() {
                return invalid(
                    self.at("rules", "name", Some("")),
                    "a rule has no name".to_owned(),
                );
            }
            if is_builtin_rule(name) {
                return invalid(
                    here(),
                    format!("rule name {name:?} is reserved for a built-in rule"),
                );
            }
            if !names.insert(name.as_str()) {
                return invalid(
                    self.at_nth("rules", "name", Some(name), 1),
                    format!("two rules are named {name:?}"),
                );
            }
            if rule.tools.is_empty() {
                return invalid(here(), format!("rule {name:?} lists no tools"));
            }
            if let Some(tool) = rule.tools.iter().find(|t| is_control_tool(t)) {
                return invalid(
                    here(),
                    format!("rule {name:?} names the control tool {tool}, which is always allowed"),
                );
            }
            if let Some((arg, _)) = rule.args.iter().find(|(_, p)| p.is_empty()) {
                return invalid(
                    here(),
                    format!("rule {name:?}: args.{arg} lists no patterns"),
                );
            }
        }
        Ok(())
    }

    /// Checks that the repeat limits are 2 or more and the others more than 0 (each may be
    /// null for no limit).
    fn check_limits(&self, limits: &Limits) -> Result<()> {
        for (key, value) in [
            ("repeat_calls", limits.repeat_calls),
            ("repeat_errors", limits.repeat_errors),
        ] {
            if value.is_some_and(|k| k < 2) {
                return invalid(
                    self.at("limits", key, None),
                    format!("limits.{key} must be 2 or more (or null for no limit)"),
                );
            }
        }
        for (key, zero) in [
            ("max_tool_calls", limits.max_tool_calls == Some(0)),
            ("max_tokens", limits.max_tokens == Some(0)),
            (
                "max_cost_usd",
                limits
                    .max_cost_usd
                    .is_some_and(|c| !(c.is_finite() && c > 0.0)),
            ),
        ] {
            if zero {
                return invalid(
                    self.at("limits", key, None),
                    format!("limits.{key} must be more than 0 (or null for no limit)"),
                );
            }
        }
        Ok(())
    }

    /// Runs the examples, which must have names of their own: each must get the decision (and
    /// rule, when given) it expects.
    fn check_examples(&self, policy: &Policy) -> Result<()> {
        let mut names = BTreeSet::new();
        for example in &policy.examples {
            let here = || self.at("examples", "name", Some(&example.name));
            if !names.insert(example.name.as_str()) {
                return invalid(
                    self.at_nth("examples", "name", Some(&example.name), 1),
                    format!("two examples are named {:?}", example.name),
                );
            }
            let decision =
                policy.evaluate(example.role, example.intent, &example.tool, &example.args);
            let rule_differs = example
                .rule
                .as_deref()
                .is_some_and(|r| r != decision.rule());
            if decision.kind() != example.expect || rule_differs {
                return Err(Error::Example {
                    at: here(),
                    example: example.name.clone(),
                    expected: match &example.rule {
                        Some(rule) => format!("{} (rule {rule})", example.expect),
                        None => example.expect.to_string(),
                    },
                    actual: decision.kind().to_string(),
                    rule: decision.rule().to_owned(),
                });
            }
        }
        Ok(())
    }
}

fn is_builtin_rule(name: &str) -> bool {
    [
        RULE_CONTROL,
        RULE_INTENT_REQUIRED,
        RULE_INTENT_INVALID,
        RULE_ROLE_CAP,
    ]
    .contains(&name)
        || name.starts_with("intents.")
        || name.starts_with("limits.")
}

fn names(intents: &[Intent]) -> String {
    intents
        .iter()
        .map(|i| i.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The 1-based line of the `nth` (from 0) `key:` (with `value`, unquoted, when given) in the
/// top-level `section` of a YAML text, for errors found after parsing, when serde's positions are
/// gone. It reads block style, as policy files are written; for anything else it gives the
/// section's line, or `None`.
fn locate(
    text: &str,
    section: &str,
    key: &str,
    value: Option<&str>,
    mut nth: usize,
) -> Option<usize> {
    let lines: Vec<&str> = text.lines().collect();
    let top = |line: &str, name: &str| {
        line.strip_prefix(name)
            .is_some_and(|rest| rest.trim_start().starts_with(':'))
    };
    let start = lines.iter().position(|l| top(l, section))?;
    if section == key {
        return Some(start + 1);
    }
    for (i, line) in lines.iter().enumerate().skip(start + 1) {
        if !line.starts_with([' ', '\t', '-', '#']) && !line.trim().is_empty() {
            break;
        }
        let item = line.trim_start();
        let item = item.strip_prefix("- ").unwrap_or(item).trim_start();
        let Some((k, v)) = item.split_once(':') else {
            continue;
        };
        let v = v.trim();
        let unquoted = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(v);
        if k.trim() == key && value.is_none_or(|want| unquoted == want) {
            if nth == 0 {
                return Some(i + 1);
            }
            nth -= 1;
        }
    }
    Some(start + 1)
}
