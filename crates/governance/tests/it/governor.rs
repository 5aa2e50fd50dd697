//! The governor of a conversation: intent before tools, the matrix at dispatch, resets, role caps,
//! asks and the tool list offered to the model.
use std::sync::Arc;

use governance::{
    AskMode, Decision, DecisionKind, Entry, Governor, GovernorConfig, Intent, Outcome, Policy,
    Reset, Session, args_hash,
};
use llm_types::ToolCall;
use merkle_hash::Role;
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{call, select, tool};

fn governor(role: Role, ask: AskMode) -> Governor {
    Governor::new(
        Arc::new(Policy::builtin()),
        Session {
            conversation: "c1".to_owned(),
            agent: "alice".to_owned(),
            role,
        },
        GovernorConfig { ask },
    )
}

enum Step {
    Call(ToolCall),
    Reset(Reset),
}

/// Runs `steps` and returns, per call, `tool -> decision by rule` and the intent after it.
fn run(gov: &mut Governor, steps: Vec<Step>) -> Vec<String> {
    steps
        .into_iter()
        .map(|step| match step {
            Step::Call(c) => {
                let d = gov.decide(&c);
                let intent = gov.intent().map_or("none".to_owned(), |i| i.to_string());
                format!("{} -> {} by {} [{intent}]", c.name, d.kind(), d.rule())
            }
            Step::Reset(why) => {
                gov.reset(why);
                format!("reset {why:?}")
            }
        })
        .collect()
}

fn read() -> ToolCall {
    call("read_file", json!({"path": "src/lib.rs"}))
}

#[test]
fn a_tool_before_an_intent_is_blocked_and_the_error_result_names_the_rule() {
    let mut gov = governor(Role::Writer, AskMode::Refuse);
    let decision = gov.decide(&read());
    assert_eq!(
        (decision.error_text(), gov.intent()),
        (
            Some(
                "blocked by governance rule intent-required: no intent is selected in this \
                 request; call select_active_intent first with one of PLAN, CODE, ANALYZE, \
                 DEBUG, WRITE_FILE, READ_FILE, EXECUTE"
                    .to_owned()
            ),
            None
        )
    );
}

#[test]
fn a_tool_outside_the_intent_is_blocked_and_an_allowed_one_runs() {
    let mut gov = governor(Role::Writer, AskMode::Refuse);
    assert_eq!(gov.decide(&select("ANALYZE")).kind(), DecisionKind::Allow);
    assert_eq!(
        gov.selection_text(),
        "intent ANALYZE selected; it allows read_file, list_dir, search, get_node, \
         search_symbols, task_context, related_files, refs"
    );
    let write = call("write_file", json!({"path": "src/lib.rs", "content": "x"}));
    assert_eq!(
        (gov.decide(&write).error_text(), gov.decide(&read())),
        (
            Some(
                "blocked by governance rule intents.ANALYZE: write_file is not allowed under \
                 intent ANALYZE, which allows read_file, list_dir, search, get_node, \
                 search_symbols, task_context, related_files, refs; select another intent if the task needs it"
                    .to_owned()
            ),
            Decision::Allow {
                rule: "intents.ANALYZE".to_owned()
            }
        )
    );
}

#[test]
fn the_intent_resets_on_a_new_request_a_retry_and_an_abort() {
    for why in [Reset::NewRequest, Reset::Retry, Reset::Abort] {
        let mut gov = governor(Role::Writer, AskMode::Refuse);
        let got = run(
            &mut gov,
            vec![
                Step::Call(select("READ_FILE")),
                Step::Call(read()),
                Step::Reset(why),
                Step::Call(read()),
                Step::Call(select("CODE")),
                Step::Call(read()),
            ],
        );
        assert_eq!(
            got,
            vec![
                "select_active_intent -> allow by control [READ_FILE]".to_owned(),
                "read_file -> allow by intents.READ_FILE [READ_FILE]".to_owned(),
                format!("reset {why:?}"),
                "read_file -> deny by intent-required [none]".to_owned(),
                "select_active_intent -> allow by control [CODE]".to_owned(),
                "read_file -> deny by intents.CODE [CODE]".to_owned(),
            ],
            "{why:?}"
        );
    }
}

#[test]
fn a_reader_never_selects_code_write_file_or_execute() {
    let mut gov = governor(Role::Reader, AskMode::Refuse);
    let got = run(
        &mut gov,
        vec![
            Step::Call(select("WRITE_FILE")),
            Step::Call(select("EXECUTE")),
            Step::Call(select("CODE")),
            Step::Call(call("write_file", json!({"path": "a"}))),
            Step::Call(select("ANALYZE")),
            // A refused selection leaves the selected intent as it was.
            Step::Call(select("CODE")),
            Step::Call(read()),
        ],
    );
    assert_eq!(
        got,
        vec![
            "select_active_intent -> deny by role-cap [none]",
            "select_active_intent -> deny by role-cap [none]",
            "select_active_intent -> deny by role-cap [none]",
            "write_file -> deny by intent-required [none]",
            "select_active_intent -> allow by control [ANALYZE]",
            "select_active_intent -> deny by role-cap [ANALYZE]",
            "read_file -> allow by intents.ANALYZE [ANALYZE]",
        ]
    );
    let mut writer = governor(Role::Writer, AskMode::Refuse);
    let got = run(
        &mut writer,
        ["WRITE_FILE", "EXECUTE", "CODE"]
            .into_iter()
            .map(|i| Step::Call(select(i)))
            .collect(),
    );
    assert_eq!(
        got,
        vec![
            "select_active_intent -> allow by control [WRITE_FILE]",
            "select_active_intent -> allow by control [EXECUTE]",
            "select_active_intent -> allow by control [CODE]",
        ]
    );
}

#[test]
fn an_ask_prompts_only_in_an_interactive_run_and_no_answer_is_never_a_yes() {
    let command = call("run_command", json!({"command": "cargo test"}));
    let decide = |ask: AskMode| {
        let mut gov = governor(Role::Writer, ask);
        gov.decide(&select("EXECUTE"));
        gov.decide(&command)
    };
    assert_eq!(
        [
            decide(AskMode::Prompt),
            decide(AskMode::PreApproved),
            decide(AskMode::Refuse)
        ],
        [
            Decision::Ask {
                rule: "confirm-commands".to_owned()
            },
            Decision::Allow {
                rule: "confirm-commands".to_owned()
            },
            Decision::Deny {
                rule: "confirm-commands".to_owned(),
                message: "rule confirm-commands asks the user first, and this run is \
                          non-interactive without pre-approval"
                    .to_owned()
            },
        ]
    );
    assert_eq!(GovernorConfig::default().ask, AskMode::Refuse);
}

#[test]
fn the_offered_tool_list_follows_the_intent() {
    let tools: Vec<_> = [
        "read_file",
        "write_file",
        "run_command",
        "complete",
        "escalate",
    ]
    .into_iter()
    .map(tool)
    .collect();
    let offer = |gov: &Governor| {
        let offer = gov.allowed_tools(&tools);
        let names = |t: &[llm_types::Tool]| t.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        (names(&offer.tools), offer.allowed, names(&offer.all_tools))
    };
    let all: Vec<String> = [
        "read_file",
        "write_file",
        "run_command",
        "complete",
        "escalate",
        "select_active_intent",
    ]
    .map(String::from)
    .to_vec();
    let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    let mut gov = governor(Role::Writer, AskMode::Refuse);
    let control = names(&["complete", "escalate", "select_active_intent"]);
    assert_eq!(offer(&gov), (control.clone(), control, all.clone()));

    gov.decide(&select("ANALYZE"));
    let analyze = names(&["read_file", "complete", "escalate", "select_active_intent"]);
    assert_eq!(offer(&gov), (analyze.clone(), analyze, all.clone()));

    // A command always asks; without a user to ask it is not offered at all.
    gov.decide(&select("EXECUTE"));
    let refused = names(&["complete", "escalate", "select_active_intent"]);
    assert_eq!(offer(&gov), (refused.clone(), refused, all.clone()));
    let mut interactive = governor(Role::Writer, AskMode::Prompt);
    interactive.decide(&select("EXECUTE"));
    let execute = names(&[
        "run_command",
        "complete",
        "escalate",
        "select_active_intent",
    ]);
    assert_eq!(offer(&interactive), (execute.clone(), execute, all));
}

#[test]
fn audit_entries_carry_the_session_the_intent_and_the_decision() {
    let mut gov = governor(Role::Writer, AskMode::Refuse);
    let write = call("write_file", json!({"path": "a", "content": "b"}));
    let blocked = gov.decide(&write);
    let blocked = gov.audit_entry(&write, &blocked, Outcome::Blocked);
    gov.decide(&select("CODE"));
    let allowed = gov.decide(&write);
    let allowed = gov.audit_entry(&write, &allowed, Outcome::Ok);
    assert_eq!(
        [blocked, allowed],
        [
            Entry {
                conversation: "c1".to_owned(),
                agent: "alice".to_owned(),
                role: Role::Writer,
                intent: None,
                tool: "write_file".to_owned(),
                args_hash: args_hash(&json!({"content": "b", "path": "a"})),
                decision: DecisionKind::Deny,
                rule: "intent-required".to_owned(),
                outcome: Outcome::Blocked,
            },
            Entry {
                conversation: "c1".to_owned(),
                agent: "alice".to_owned(),
                role: Role::Writer,
                intent: Some(Intent::Code),
                tool: "write_file".to_owned(),
                args_hash: args_hash(&json!({"path": "a", "content": "b"})),
                decision: DecisionKind::Allow,
                rule: "intents.CODE".to_owned(),
                outcome: Outcome::Ok,
            },
        ]
    );
}
