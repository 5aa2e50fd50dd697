//! ConversationStore: creation, appends, compaction's replacement, metadata, listing, and the
//! repairs made on load. The turn traces of the integration spec are followed here at the
//! level of the store and the window, with the model's answers written by hand.
use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use agent_loop::window::select;
use agent_loop::{
    ConversationStore, Damage, Error, INTERRUPTED, LoadReport, conversations_dir,
    estimate_text_tokens, list_conversations, token_budget,
};
use llm_core::{Clock, ContentBlock, ManualClock, Message, Role, ToolCall};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::clock;

fn tool_use(id: &str) -> ContentBlock {
    ContentBlock::ToolUse(ToolCall {
        id: id.to_owned(),
        name: "get_time".to_owned(),
        input: json!({}),
    })
}

fn tool_result(id: &str, content: &str) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.to_owned(),
        content: content.to_owned(),
        is_error: false,
    }
}

fn placeholder(id: &str) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id: id.to_owned(),
        content: INTERRUPTED.to_owned(),
        is_error: true,
    }
}

fn message(role: Role, content: Vec<ContentBlock>) -> Message {
    Message { role, content }
}

fn transcript(workspace: &Path, id: &str) -> Vec<Message> {
    let path = conversations_dir(workspace)
        .join(id)
        .join("transcript.jsonl");
    fs::read_to_string(path)
        .expect("transcript")
        .lines()
        .map(|line| serde_json::from_str(line).expect("message"))
        .collect()
}

fn load(workspace: &Path, id: &str) -> (ConversationStore, LoadReport) {
    ConversationStore::load(workspace, id, clock()).expect("load")
}

#[test]
fn initialize_creates_the_folder_once() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut store, report) =
        ConversationStore::initialize(ws.path(), "chat", clock()).expect("initialize");
    assert!(report.is_clean());
    assert_eq!(store.id(), "chat");
    assert_eq!(store.dir(), conversations_dir(ws.path()).join("chat"));
    assert_eq!(store.metadata().created_at, "2026-02-05T14:30:00Z");
    assert_eq!(store.messages(), []);
    store
        .append_message(Message::user("Hello"))
        .expect("append");

    // Initializing again opens what is there.
    let (again, _) =
        ConversationStore::initialize(ws.path(), "chat", clock()).expect("initialize again");
    assert_eq!(again.messages(), [Message::user("Hello")]);
    let mut files: Vec<String> = fs::read_dir(store.dir())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["metadata.json", "transcript.jsonl"]);
}

#[test]
fn initialize_finishes_a_creation_that_a_crash_interrupted() {
    let ws = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(conversations_dir(ws.path()).join("half")).expect("mkdir");
    let (store, _) = ConversationStore::initialize(ws.path(), "half", clock()).expect("initialize");
    assert_eq!(store.metadata().id, "half");
    assert_eq!(transcript(ws.path(), "half"), []);
}

#[test]
fn create_names_conversations_by_time() {
    let ws = tempfile::tempdir().expect("tempdir");
    let manual = Arc::new(ManualClock::new(
        std::time::UNIX_EPOCH + Duration::from_secs(1_770_301_800),
    ));
    let clock: Arc<dyn Clock> = manual.clone();
    let first = ConversationStore::create(ws.path(), Arc::clone(&clock)).expect("create");
    let second = ConversationStore::create(ws.path(), Arc::clone(&clock)).expect("create");
    manual.advance(Duration::from_secs(61));
    let third = ConversationStore::create(ws.path(), clock).expect("create");
    assert_eq!(
        [first.id(), second.id(), third.id()],
        ["20260205-143000", "20260205-143000-2", "20260205-143101"]
    );
}

#[test]
fn ids_must_name_a_folder_safely() {
    let ws = tempfile::tempdir().expect("tempdir");
    for id in ["", "../x", "a/b", ".hidden", "sp ace"] {
        let err = ConversationStore::initialize(ws.path(), id, clock()).expect_err(id);
        assert!(
            matches!(&err, Error::InvalidConversationId { id: bad, .. } if bad == id),
            "{id}: {err:?}"
        );
    }
}

#[test]
fn loading_a_missing_conversation_names_it() {
    let ws = tempfile::tempdir().expect("tempdir");
    let err = ConversationStore::load(ws.path(), "nope", clock()).expect_err("missing");
    assert_eq!(
        err.to_string(),
        format!(
            "no conversation \"nope\" in {}",
            conversations_dir(ws.path()).display()
        )
    );
}

/// Trace "normal message": the user message and the answer are each on disk once appended.
#[test]
fn a_normal_turn_is_persisted_message_by_message() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut store, _) = ConversationStore::initialize(ws.path(), "c", clock()).expect("init");
    store.append_message(Message::user("Hello")).expect("user");
    assert_eq!(transcript(ws.path(), "c"), [Message::user("Hello")]);
    store
        .append_message(Message::assistant("Hi!"))
        .expect("assistant");
    let expected = [Message::user("Hello"), Message::assistant("Hi!")];
    assert_eq!(transcript(ws.path(), "c"), expected);
    assert_eq!(store.messages(), expected);
    assert_eq!(load(ws.path(), "c").0.messages(), expected);
}

/// Trace "tool use": the call and its result are persisted before the next model call, so a
/// crash after either keeps them.
#[test]
fn a_tool_turn_persists_each_step() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut store, _) = ConversationStore::initialize(ws.path(), "c", clock()).expect("init");
    let steps = [
        Message::user("What time is it?"),
        message(
            Role::Assistant,
            vec![ContentBlock::text("Let me check."), tool_use("toolu_123")],
        ),
        message(Role::User, vec![tool_result("toolu_123", "14:30:00Z")]),
        Message::assistant("It is 2:30 PM."),
    ];
    for (n, step) in steps.iter().enumerate() {
        store.append_message(step.clone()).expect("append");
        assert_eq!(transcript(ws.path(), "c"), steps[..=n]);
    }
    let (resumed, report) = load(ws.path(), "c");
    assert!(report.is_clean());
    assert_eq!(resumed.messages(), steps);
}

/// Gap 5: messages are served from memory, with no disk read.
#[test]
fn messages_come_from_memory() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut store, _) = ConversationStore::initialize(ws.path(), "c", clock()).expect("init");
    store.append_message(Message::user("kept")).expect("append");
    fs::remove_file(store.dir().join("transcript.jsonl")).expect("remove");
    assert_eq!(store.messages(), [Message::user("kept")]);
}

/// Trace "compaction triggered" and gap 1: selection overflows, the transcript is replaced
/// atomically by a summary and the kept messages, the originals are archived, the metadata
/// counts the compaction, and the new transcript fits.
#[test]
fn compaction_replaces_the_transcript_and_archives_the_original() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut store, _) = ConversationStore::initialize(ws.path(), "c", clock()).expect("init");
    for n in 0..50u32 {
        let text = format!("message {n} {}", "x".repeat(400));
        let m = if n.is_multiple_of(2) {
            Message::user(text)
        } else {
            Message::assistant(text)
        };
        store.append_message(m).expect("append");
    }
    let system = "You are a careful agent.";
    let budget = token_budget(2_000, estimate_text_tokens(system), 500);
    let selection = select(store.messages(), budget);
    let overflow = selection.overflow.expect("50 long messages overflow");
    let original = store.messages().to_vec();
    let kept = selection.selected.to_vec();
    assert_eq!(overflow.dropped + kept.len(), 50);

    let summary = Message::user(format!(
        "Summary of the {} earlier messages.",
        overflow.dropped
    ));
    let mut compacted = vec![summary];
    compacted.extend(kept);
    store
        .replace_transcript(compacted.clone())
        .expect("replace");
    store
        .update_metadata(|m| m.compaction_count += 1)
        .expect("metadata");

    assert_eq!(store.messages(), compacted);
    assert_eq!(transcript(ws.path(), "c"), compacted);
    assert_eq!(select(store.messages(), budget).overflow, None);
    let (resumed, _) = load(ws.path(), "c");
    assert_eq!(resumed.messages(), compacted);
    assert_eq!(resumed.metadata().compaction_count, 1);

    let archive = fs::read_to_string(store.dir().join("archive.jsonl")).expect("archive");
    let archived: Vec<Value> = archive
        .lines()
        .map(|line| serde_json::from_str(line).expect("json"))
        .collect();
    assert_eq!(archived.len(), 50);
    assert_eq!(
        archived[3],
        json!({
            "replaced_at": "2026-02-05T14:30:00Z",
            "index": 3,
            "message": serde_json::to_value(&original[3]).expect("json"),
        })
    );
}

#[test]
fn metadata_updates_persist_and_keep_unknown_fields() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (store, _) = ConversationStore::initialize(ws.path(), "c", clock()).expect("init");
    let path = store.dir().join("metadata.json");
    let mut raw: Value =
        serde_json::from_str(&fs::read_to_string(&path).expect("read")).expect("json");
    raw["future_field"] = json!({"kept": true});
    fs::write(&path, raw.to_string()).expect("write");

    let (mut store, _) = load(ws.path(), "c");
    store
        .update_metadata(|m| {
            m.title = Some("Fix the parser".into());
            m.identity_hashes.insert("SOUL.md".into(), "abc".into());
            m.id = "renamed".into();
        })
        .expect("update");
    assert_eq!(store.metadata().id, "c", "the id names the folder");
    let raw: Value = serde_json::from_str(&fs::read_to_string(&path).expect("read")).expect("json");
    assert_eq!(
        raw,
        json!({
            "id": "c",
            "created_at": "2026-02-05T14:30:00Z",
            "title": "Fix the parser",
            "compaction_count": 0,
            "identity_hashes": {"SOUL.md": "abc"},
            "ledger": {
                "files_read": [],
                "files_modified": [],
                "tool_failures": [],
                "more_failures": 0,
            },
            "future_field": {"kept": true},
        })
    );
    assert_eq!(load(ws.path(), "c").0.metadata(), store.metadata());
}

#[test]
fn conversations_are_listed_oldest_first_with_broken_ones_reported() {
    let ws = tempfile::tempdir().expect("tempdir");
    assert!(list_conversations(ws.path()).expect("empty").is_empty());
    let manual = Arc::new(ManualClock::new(
        std::time::UNIX_EPOCH + Duration::from_secs(1_770_301_800),
    ));
    let clock: Arc<dyn Clock> = manual.clone();
    ConversationStore::initialize(ws.path(), "zeta", Arc::clone(&clock)).expect("init");
    manual.advance(Duration::from_secs(1));
    ConversationStore::initialize(ws.path(), "alpha", Arc::clone(&clock)).expect("init");
    ConversationStore::initialize(ws.path(), "broken", clock).expect("init");
    fs::write(
        conversations_dir(ws.path())
            .join("broken")
            .join("metadata.json"),
        "{",
    )
    .expect("break");
    fs::write(conversations_dir(ws.path()).join("stray-file"), "").expect("stray");

    let listed = list_conversations(ws.path()).expect("list");
    let summary: Vec<(String, Option<String>)> = listed
        .iter()
        .map(|l| {
            (
                l.id.clone(),
                l.metadata.as_ref().ok().map(|m| m.created_at.clone()),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("broken".to_owned(), None),
            ("zeta".to_owned(), Some("2026-02-05T14:30:00Z".to_owned())),
            ("alpha".to_owned(), Some("2026-02-05T14:30:01Z".to_owned())),
        ]
    );
    assert!(matches!(listed[0].metadata, Err(Error::Corrupt { .. })));
}

/// Gap 7 and crash recovery: a partly written last line is cut off on resume, reported, and
/// appends go on after the intact messages.
#[test]
fn resume_cuts_a_torn_last_message() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut store, _) = ConversationStore::initialize(ws.path(), "c", clock()).expect("init");
    store.append_message(Message::user("one")).expect("append");
    let path = store.dir().join("transcript.jsonl");
    let mut bytes = fs::read(&path).expect("read");
    bytes.extend_from_slice(b"{\"role\":\"assistant\",\"content\":[{\"ty");
    fs::write(&path, bytes).expect("tear");

    let (mut resumed, report) = load(ws.path(), "c");
    assert!(
        matches!(report.damage, Some(Damage::TornTail(_))),
        "{report:?}"
    );
    assert_eq!(resumed.messages(), [Message::user("one")]);
    resumed
        .append_message(Message::assistant("two"))
        .expect("append");
    assert_eq!(
        transcript(ws.path(), "c"),
        [Message::user("one"), Message::assistant("two")]
    );
}

#[test]
fn resume_quarantines_a_corrupt_transcript_and_says_so() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut store, _) = ConversationStore::initialize(ws.path(), "c", clock()).expect("init");
    store.append_message(Message::user("one")).expect("append");
    let path = store.dir().join("transcript.jsonl");
    let mut text = fs::read_to_string(&path).expect("read");
    text.push_str("{\"role\":\"robot\",\"content\":[]}\n");
    text.push_str(&serde_json::to_string(&Message::user("three")).expect("json"));
    text.push('\n');
    fs::write(&path, &text).expect("corrupt");

    let (resumed, report) = load(ws.path(), "c");
    assert_eq!(resumed.messages(), [Message::user("one")]);
    let Some(Damage::Quarantined(q)) = report.damage else {
        panic!("expected a quarantine: {report:?}");
    };
    assert_eq!((q.line, q.kept, q.dropped_lines), (2, 1, 2));
    assert_eq!(fs::read_to_string(&q.copy).expect("copy"), text);
}

#[test]
fn a_tool_call_left_without_a_result_gets_an_interrupted_result() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut store, _) = ConversationStore::initialize(ws.path(), "c", clock()).expect("init");
    store.append_message(Message::user("go")).expect("append");
    store
        .append_message(message(
            Role::Assistant,
            vec![tool_use("t1"), tool_use("t2")],
        ))
        .expect("append");

    let (resumed, report) = load(ws.path(), "c");
    assert_eq!(report.interrupted, ["t1", "t2"]);
    let expected = [
        Message::user("go"),
        message(Role::Assistant, vec![tool_use("t1"), tool_use("t2")]),
        message(Role::User, vec![placeholder("t1"), placeholder("t2")]),
    ];
    assert_eq!(resumed.messages(), expected);
    // The repair is on disk: the next resume finds nothing to do.
    assert_eq!(transcript(ws.path(), "c"), expected);
    assert!(load(ws.path(), "c").1.is_clean());
}

#[test]
fn missing_results_are_added_where_the_provider_expects_them() {
    let ws = tempfile::tempdir().expect("tempdir");
    let (mut store, _) = ConversationStore::initialize(ws.path(), "c", clock()).expect("init");
    let written = [
        message(Role::Assistant, vec![tool_use("a"), tool_use("b")]),
        // Only one of the two calls was answered before the crash; then the user went on.
        message(
            Role::User,
            vec![tool_result("a", "done"), ContentBlock::text("and then?")],
        ),
        message(Role::Assistant, vec![tool_use("c")]),
        // An answer without the result of "c".
        Message::assistant("moving on"),
    ];
    for m in &written {
        store.append_message(m.clone()).expect("append");
    }

    let (resumed, report) = load(ws.path(), "c");
    assert_eq!(report.interrupted, ["b", "c"]);
    let expected = [
        message(Role::Assistant, vec![tool_use("a"), tool_use("b")]),
        message(
            Role::User,
            vec![
                placeholder("b"),
                tool_result("a", "done"),
                ContentBlock::text("and then?"),
            ],
        ),
        message(Role::Assistant, vec![tool_use("c")]),
        message(Role::User, vec![placeholder("c")]),
        Message::assistant("moving on"),
    ];
    assert_eq!(resumed.messages(), expected);
    assert_eq!(transcript(ws.path(), "c"), expected);
}
