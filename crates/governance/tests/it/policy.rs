//! The policy: the built-in matrix, the shipped file, decisions and precedence, load errors and
//! what `policy show` prints.
use std::collections::BTreeMap;
use std::path::Path;

use governance::{DEFAULT_POLICY_YAML, Decision, Intent, Policy, select_active_intent_tool};
use merkle_hash::Role;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

#[test]
fn builtin_matrix_is_the_spec_matrix_extended_to_our_tools() {
    let reading = vec![
        "read_file",
        "list_dir",
        "search",
        "get_node",
        "search_symbols",
        "task_context",
        "related_files",
        "refs",
    ];
    let want: BTreeMap<Intent, Vec<&str>> = BTreeMap::from([
        (Intent::Plan, vec![]),
        (
            Intent::Code,
            vec!["write_file", "edit_file", "put_frame", "synthesize"],
        ),
        (Intent::Analyze, reading.clone()),
        (Intent::Debug, reading.clone()),
        (
            Intent::WriteFile,
            vec!["write_file", "put_frame", "synthesize"],
        ),
        (Intent::ReadFile, reading),
        (Intent::Execute, vec!["run_command"]),
    ]);
    let policy = Policy::builtin();
    let got: BTreeMap<Intent, Vec<&str>> = policy
        .intents
        .iter()
        .map(|(i, tools)| (*i, tools.iter().map(String::as_str).collect()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn shipped_default_file_is_the_builtin_policy() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/policy/default.yaml");
    let text = std::fs::read_to_string(&path).expect("fixtures/policy/default.yaml exists");
    assert_eq!(text, DEFAULT_POLICY_YAML);
    let loaded = Policy::load(&path).expect("the shipped policy loads");
    assert_eq!(loaded, Policy::builtin());
}

/// A policy whose rules overlap, listed so that file order would give the wrong answer if it
/// decided: allows first, denies last.
const OVERLAPPING: &str = r#"
version: 1
intents:
  CODE: [write_file]
  EXECUTE: [run_command]
rules:
  - name: allow-notes
    decision: allow
    tools: [write_file]
    intents: [ANALYZE]
    args:
      path: ["notes/*"]
  - name: ask-push
    decision: ask
    tools: [run_command]
    args:
      command: ["git push*"]
  - name: no-secrets
    decision: deny
    tools: [write_file]
    args:
      path: ["*.env", "notes/secret*"]
    message: secrets stay out of files
  - name: no-force
    decision: deny
    tools: ["run_*"]
    args:
      command: ["git push --force*"]
"#;

fn check(policy: &Policy, cases: &[(Role, Option<Intent>, &str, Value, Decision)]) {
    let got: Vec<_> = cases
        .iter()
        .map(|(role, intent, tool, args, _)| {
            (
                *tool,
                args.clone(),
                policy.evaluate(*role, *intent, tool, args),
            )
        })
        .collect();
    let want: Vec<_> = cases
        .iter()
        .map(|(_, _, tool, args, d)| (*tool, args.clone(), d.clone()))
        .collect();
    assert_eq!(got, want);
}

fn allow(rule: &str) -> Decision {
    Decision::Allow {
        rule: rule.to_owned(),
    }
}

fn deny(rule: &str, message: &str) -> Decision {
    Decision::Deny {
        rule: rule.to_owned(),
        message: message.to_owned(),
    }
}

#[test]
fn deny_beats_ask_beats_allow_whatever_the_order_of_rules() {
    let policy = Policy::parse("overlapping.yaml", OVERLAPPING).expect("the policy loads");
    let w = Role::Writer;
    check(
        &policy,
        &[
            (
                w,
                Some(Intent::Code),
                "write_file",
                json!({"path": "src/a.rs"}),
                allow("intents.CODE"),
            ),
            // A deny rule beats the matrix's allow.
            (
                w,
                Some(Intent::Code),
                "write_file",
                json!({"path": "./config/../.env"}),
                deny("no-secrets", "secrets stay out of files"),
            ),
            // An allow rule widens the matrix ...
            (
                w,
                Some(Intent::Analyze),
                "write_file",
                json!({"path": "notes/plan.md"}),
                allow("allow-notes"),
            ),
            // ... and a deny rule beats it.
            (
                w,
                Some(Intent::Analyze),
                "write_file",
                json!({"path": "notes/secret.md"}),
                deny("no-secrets", "secrets stay out of files"),
            ),
            (
                w,
                Some(Intent::Analyze),
                "write_file",
                json!({"path": "src/a.rs"}),
                deny(
                    "intents.ANALYZE",
                    "write_file is not allowed under intent ANALYZE, which allows write_file; \
                     select another intent if the task needs it",
                ),
            ),
            // Ask beats allow.
            (
                w,
                Some(Intent::Execute),
                "run_command",
                json!({"command": "git push origin main"}),
                Decision::Ask {
                    rule: "ask-push".to_owned(),
                },
            ),
            // Deny beats ask.
            (
                w,
                Some(Intent::Execute),
                "run_command",
                json!({"command": "git push --force origin"}),
                deny("no-force", "run_command is denied with these arguments"),
            ),
            // An ask never allows what the intent does not.
            (
                w,
                Some(Intent::Code),
                "run_command",
                json!({"command": "git push origin main"}),
                deny(
                    "intents.CODE",
                    "run_command is not allowed under intent CODE, which allows write_file; \
                     select another intent if the task needs it",
                ),
            ),
            (
                w,
                Some(Intent::Execute),
                "run_command",
                json!({"command": "ls"}),
                allow("intents.EXECUTE"),
            ),
            // An argument that is not a string does not match a pattern.
            (
                w,
                Some(Intent::Code),
                "write_file",
                json!({"path": ["x.env"]}),
                allow("intents.CODE"),
            ),
        ],
    );
}

#[test]
fn builtin_decisions() {
    let policy = Policy::builtin();
    let (r, w) = (Role::Reader, Role::Writer);
    check(
        &policy,
        &[
            (
                w,
                None,
                "read_file",
                json!({"path": "a"}),
                deny(
                    "intent-required",
                    "no intent is selected in this request; call select_active_intent first \
                     with one of PLAN, CODE, ANALYZE, DEBUG, WRITE_FILE, READ_FILE, EXECUTE",
                ),
            ),
            (
                r,
                None,
                "read_file",
                json!({"path": "a"}),
                deny(
                    "intent-required",
                    "no intent is selected in this request; call select_active_intent first \
                     with one of PLAN, ANALYZE, DEBUG, READ_FILE",
                ),
            ),
            (w, None, "escalate", json!({}), allow("control")),
            (
                w,
                Some(Intent::Plan),
                "complete",
                json!({}),
                allow("control"),
            ),
            (
                w,
                Some(Intent::Plan),
                "read_file",
                json!({"path": "a"}),
                deny(
                    "intents.PLAN",
                    "read_file is not allowed under intent PLAN, which allows no tools; select \
                     another intent if the task needs it",
                ),
            ),
            (
                r,
                Some(Intent::Analyze),
                "get_node",
                json!({"path": "src"}),
                allow("intents.ANALYZE"),
            ),
            (
                w,
                Some(Intent::Debug),
                "put_frame",
                json!({"path": "src"}),
                deny(
                    "intents.DEBUG",
                    "put_frame is not allowed under intent DEBUG, which allows read_file, \
                     list_dir, search, get_node, search_symbols, task_context, related_files, refs; select another \
                     intent if the task needs it",
                ),
            ),
            (
                w,
                Some(Intent::WriteFile),
                "synthesize",
                json!({"path": "src"}),
                allow("intents.WRITE_FILE"),
            ),
            (
                w,
                Some(Intent::Code),
                "edit_file",
                json!({"path": ".merkle"}),
                deny(
                    "protect-store",
                    ".merkle holds the store and the audit log; no tool writes there",
                ),
            ),
            (
                w,
                Some(Intent::Execute),
                "run_command",
                json!({"command": "ls"}),
                Decision::Ask {
                    rule: "confirm-commands".to_owned(),
                },
            ),
            (
                r,
                None,
                "select_active_intent",
                json!({"intent": "WRITE_FILE", "justification": "x"}),
                deny(
                    "role-cap",
                    "an agent with role reader cannot select WRITE_FILE, which needs role \
                     writer or above; it may select PLAN, ANALYZE, DEBUG, READ_FILE",
                ),
            ),
            (
                Role::Synthesis,
                None,
                "select_active_intent",
                json!({"intent": "EXECUTE", "justification": "x"}),
                allow("control"),
            ),
            (
                w,
                None,
                "select_active_intent",
                json!({"intent": "HACK", "justification": "x"}),
                deny(
                    "intent-invalid",
                    "unknown intent \"HACK\": expected one of PLAN, CODE, ANALYZE, DEBUG, \
                     WRITE_FILE, READ_FILE, EXECUTE",
                ),
            ),
            (
                w,
                None,
                "select_active_intent",
                json!({"intent": "CODE"}),
                deny(
                    "intent-invalid",
                    "justification is missing: say why this intent",
                ),
            ),
            (
                w,
                None,
                "select_active_intent",
                json!({"intent": "CODE", "justification": "x", "force": true}),
                deny(
                    "intent-invalid",
                    "select_active_intent has no argument \"force\"",
                ),
            ),
        ],
    );
}

/// Loads `yaml` as `test.yaml` and returns the error's message.
fn load_error(yaml: &str) -> String {
    match Policy::parse("test.yaml", yaml) {
        Ok(_) => "loaded".to_owned(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_policies_fail_to_load_naming_file_and_line() {
    let head = "version: 1\nintents:\n  CODE: [write_file]\n";
    let cases: Vec<(String, &str)> = vec![
        (
            "version: 1\nintent: {}\n".to_owned(),
            "invalid policy test.yaml:2: unknown field `intent`, expected one of `version`, \
             `intents`, `rules`, `limits`, `examples`",
        ),
        (
            "version: 2\n".to_owned(),
            "invalid policy test.yaml:1: unsupported version 2: this merkle reads version 1",
        ),
        (
            "version: 1\nintents:\n  CODING: []\n".to_owned(),
            "invalid policy test.yaml:3: intents: unknown variant `CODING`, expected one of \
             `PLAN`, `CODE`, `ANALYZE`, `DEBUG`, `WRITE_FILE`, `READ_FILE`, `EXECUTE`",
        ),
        (
            "version: 1\nintents:\n  CODE: [write_file, complete]\n".to_owned(),
            "invalid policy test.yaml:3: intents.CODE lists the control tool complete, which \
             is always allowed",
        ),
        (
            format!("{head}rules:\n  - name: r\n    decision: forbid\n    tools: [x]\n"),
            "invalid policy test.yaml:6: rules[0].decision: unknown variant `forbid`, expected \
             one of `allow`, `ask`, `deny`",
        ),
        (
            format!(
                "{head}rules:\n  - name: r\n    decision: deny\n    tools: [x]\n  - name: r\n    \
                 decision: ask\n    tools: [y]\n"
            ),
            "invalid policy test.yaml:8: two rules are named \"r\"",
        ),
        (
            format!("{head}rules:\n  - name: role-cap\n    decision: deny\n    tools: [x]\n"),
            "invalid policy test.yaml:5: rule name \"role-cap\" is reserved for a built-in rule",
        ),
        (
            format!("{head}rules:\n  - name: r\n    decision: deny\n    tools: []\n"),
            "invalid policy test.yaml:5: rule \"r\" lists no tools",
        ),
        (
            format!(
                "{head}rules:\n  - name: r\n    decision: deny\n    tools: [select_active_intent]\n"
            ),
            "invalid policy test.yaml:5: rule \"r\" names the control tool select_active_intent, \
             which is always allowed",
        ),
        (
            format!("{head}limits:\n  repeat_calls: 1\n"),
            "invalid policy test.yaml:5: limits.repeat_calls must be 2 or more (or null for no \
             limit)",
        ),
        (
            format!("{head}limits:\n  max_tokens: 0\n"),
            "invalid policy test.yaml:5: limits.max_tokens must be more than 0 (or null for no \
             limit)",
        ),
        (
            format!(
                "{head}examples:\n  - name: bad role\n    role: admin\n    tool: x\n    expect: \
                 deny\n"
            ),
            "invalid policy test.yaml:6: examples[0].role: unknown variant `admin`, expected one \
             of `reader`, `writer`, `synthesis`",
        ),
    ];
    let got: Vec<(String, String)> = cases
        .iter()
        .map(|(yaml, _)| (yaml.clone(), load_error(yaml)))
        .collect();
    let want: Vec<(String, String)> = cases
        .iter()
        .map(|(yaml, e)| (yaml.clone(), (*e).to_owned()))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn examples_that_contradict_the_rules_fail_to_load_naming_the_example() {
    let examples = |expect: &str| {
        format!(
            "{OVERLAPPING}examples:\n  - name: code writes\n    intent: CODE\n    tool: \
             write_file\n    args: {{path: src/a.rs}}\n    expect: allow\n  - name: secrets can \
             be written\n    intent: CODE\n    tool: write_file\n    args: {{path: .env}}\n{expect}"
        )
    };
    let cases = [
        ("    expect: deny\n", "loaded".to_owned()),
        (
            "    expect: deny\n    rule: no-secrets\n",
            "loaded".to_owned(),
        ),
        (
            "    expect: allow\n",
            "policy test.yaml:35: example \"secrets can be written\" expects allow but the \
             policy decides deny (rule no-secrets)"
                .to_owned(),
        ),
        (
            "    expect: deny\n    rule: intents.CODE\n",
            "policy test.yaml:35: example \"secrets can be written\" expects deny (rule \
             intents.CODE) but the policy decides deny (rule no-secrets)"
                .to_owned(),
        ),
    ];
    let got: Vec<_> = cases
        .iter()
        .map(|(expect, _)| (*expect, load_error(&examples(expect))))
        .collect();
    let want: Vec<_> = cases.iter().map(|(e, m)| (*e, m.clone())).collect();
    assert_eq!(got, want);
}

#[test]
fn policy_show_prints_the_effective_matrix() {
    insta::assert_snapshot!("policy_show_builtin", Policy::builtin().render());
    let overlapping = Policy::parse("overlapping.yaml", OVERLAPPING).expect("the policy loads");
    insta::assert_snapshot!("policy_show_overlapping", overlapping.render());
}

#[test]
fn select_active_intent_tool_lists_what_the_role_may_select() {
    let policy = Policy::builtin();
    let lines = policy.intent_lines();
    let writer = select_active_intent_tool(Role::Writer, &lines);
    insta::assert_json_snapshot!("select_active_intent_tool_writer", writer);
    let reader = select_active_intent_tool(Role::Reader, &lines);
    assert_eq!(
        reader.input_schema["properties"]["intent"]["enum"],
        json!(["PLAN", "ANALYZE", "DEBUG", "READ_FILE"])
    );
    assert_eq!(
        reader.description,
        "Declare what you are about to do in this request. Call it before any other tool: no \
         other tool runs until an intent is selected, and only the tools of the selected intent \
         run. Select again to change intent; the intent resets with every new request.\n\
         PLAN: no tools\n\
         ANALYZE: read_file, list_dir, search, get_node, search_symbols, task_context, related_files, refs\n\
         DEBUG: read_file, list_dir, search, get_node, search_symbols, task_context, related_files, refs\n\
         READ_FILE: read_file, list_dir, search, get_node, search_symbols, task_context, related_files, refs"
    );
}
