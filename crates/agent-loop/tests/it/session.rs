//! `Session::open`: an agent run set up as every front end sets it up: the conversation
//! created and titled, the built-in, context and control tools registered, and the audit
//! log's first record naming the policy that governs the run.
use std::fs;
use std::sync::Arc;
use std::time::Duration;

use agent_loop::{PolicySource, Session, SessionSpec};
use governance::audit::read_records;
use governance::{AskMode, DecisionKind, Policy};
use llm_core::LlmClient;
use merkle_store::{OpenOptions, Role, ScanOptions, Store};
use pretty_assertions::assert_eq;

use crate::{clock, config};

#[test]
fn a_session_opens_the_conversation_tools_and_governance_every_front_end_uses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    fs::create_dir_all(ws.join("src")).expect("mkdir");
    fs::write(ws.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n").expect("write");
    let store = Arc::new(Store::open(&ws, &OpenOptions::default()).expect("store"));
    store.scan(&ScanOptions::default()).expect("scan");
    let client: Arc<dyn LlmClient> = Arc::new(llm_sim::factory::for_testing([]));
    let audit = dir.path().join("audit.jsonl");
    let text = governance::DEFAULT_POLICY_YAML.to_owned();
    let spec = |conversation| SessionSpec {
        root: &ws,
        store: Arc::clone(&store),
        agent: "alice",
        role: Role::Writer,
        client: Arc::clone(&client),
        conversation,
        title: Some("fix the answer".to_owned()),
        policy: PolicySource {
            policy: Policy::builtin(),
            source: "builtin".to_owned(),
            text: text.clone(),
        },
        ask: AskMode::Refuse,
        approver: None,
        audit: audit.clone(),
        command_timeout: Duration::from_secs(5),
        config: config(dir.path()),
        clock: clock(),
    };
    let opened = Session::open(spec(None)).expect("a session");
    let conversation = opened.agent.conversation();
    let metadata = conversation.metadata();
    assert_eq!(
        (metadata.title.as_deref(), metadata.agent.as_deref()),
        (Some("fix the answer"), Some("alice"))
    );
    let tools = opened.agent.tools().export();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for name in [
        "read_file",
        "get_node",
        "search_symbols",
        "refs",
        "complete",
    ] {
        assert!(names.contains(&name), "{name} not in {names:?}");
    }
    let records = read_records(&audit).expect("the audit log");
    assert_eq!(records.len(), 1);
    let first = &records[0];
    assert_eq!(
        (first.tool.as_str(), first.rule.as_str(), first.decision),
        ("(policy)", "policy builtin", DecisionKind::Allow)
    );
    assert_eq!(
        first.args_hash,
        blake3::hash(text.as_bytes()).to_hex().to_string()
    );
    // Continued by id: the same conversation, its title kept.
    let id = conversation.id().to_owned();
    drop(opened);
    let again = Session::open(SessionSpec {
        title: Some("another title".to_owned()),
        ..spec(Some(&id))
    })
    .expect("the same session again");
    assert_eq!(again.agent.conversation().id(), id);
    assert_eq!(
        again.agent.conversation().metadata().title.as_deref(),
        Some("fix the answer")
    );
    assert!(again.report.damage.is_none());
}
