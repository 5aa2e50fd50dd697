//! Compaction in the turn loop, the spec's third trace: a conversation that outgrows the window
//! has its oldest messages replaced by the model's summary and a ledger recorded from the
//! messages themselves; the summary is asked for twice at most, then replaced by a note.
use std::collections::BTreeSet;

use agent_loop::{
    Compaction, ConversationStore, Ledger, estimate_message_tokens, estimate_text_tokens,
};
use llm_core::{ContentBlock, Message};
use llm_sim::Step;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Running, Setup, clock, config, read_jsonl, setup, tools};

const SUMMARY: &str = "## Goal\nWrite out.txt and read the notes.\n\n## Progress\nWrote \
                       out.txt; missing.txt does not exist; read notes.txt.\n\n## Next steps\n\
                       Answer the user.";

/// A conversation resumed with a window too small for it, and its messages before.
///
/// Its first request, under the default window, wrote `out.txt`, failed to read
/// `missing.txt` and read `notes.txt` (8400 bytes): 8 messages. It resumes with room for
/// about 1000 tokens of messages, so the next request drops the 7 oldest, up to the notes'
/// content. `steps` answer from then on: the summarizer's first.
async fn resumed(steps: impl IntoIterator<Item = Step>) -> (Running, Vec<Message>) {
    let setup = setup();
    std::fs::write(setup.ws.join("notes.txt"), "a note\n".repeat(1_200)).expect("write");
    let id = setup.conversation.id().to_owned();
    let mut first = setup.start([
        Step::tool_call(
            "write_file",
            json!({"path": "out.txt", "content": "draft\n"}),
        ),
        Step::tool_call("read_file", json!({"path": "missing.txt"})),
        Step::tool_call("read_file", json!({"path": "notes.txt"})),
        Step::text("Read them all."),
    ]);
    first
        .agent
        .process_turn("Write out.txt, then read missing.txt and notes.txt")
        .await
        .expect("first request");
    let before = first.agent.conversation().messages().to_vec();
    assert_eq!(before.len(), 8);

    // What the window holds besides messages: the system prompt, the tools and the reserve.
    let request = &first.client.history()[0].request;
    let fixed = estimate_text_tokens(request.system.as_deref().unwrap_or_default())
        + request
            .tools
            .iter()
            .map(agent_loop::window::estimate_tool_tokens)
            .sum::<u64>();
    let (conversation, _) = ConversationStore::load(&first.ws, &id, clock()).expect("load");
    let Running { dir, ws, .. } = first;
    let mut config = config(dir.path());
    config.context_window = fixed + u64::from(config.max_tokens) + 1_000;
    // Compaction keeps room in the window for the summary message: this much for the summary,
    // plus the ledger.
    config.compaction.max_summary_tokens = 200;
    let setup = Setup {
        tools: tools(&ws),
        conversation,
        config,
        dir,
        ws,
    };
    (setup.start(steps), before)
}

fn text(message: &Message) -> &str {
    match &message.content[..] {
        [ContentBlock::Text { text }] => text,
        other => panic!("not one text block: {other:?}"),
    }
}

#[tokio::test]
async fn the_oldest_messages_are_replaced_by_a_summary_with_a_ledger() {
    let (mut run, before) = resumed([Step::text(SUMMARY), Step::text("Nothing is left.")]).await;

    let outcome = run.agent.process_turn("What next?").await.expect("turn");

    assert_eq!(
        (
            outcome.text.as_str(),
            outcome.compactions,
            outcome.model_calls
        ),
        ("Nothing is left.", 1, 2)
    );
    let transcript = run.on_disk();
    assert_eq!(transcript, run.agent.conversation().messages());
    assert_eq!(
        transcript[1..],
        [
            Message::assistant("Read them all."),
            Message::user("What next?"),
            Message::assistant("Nothing is left."),
        ]
    );
    insta::assert_snapshot!("summary_message", text(&transcript[0]));
    // The model was asked with the summary in place of what it replaced.
    assert_eq!(run.sent(2), transcript[..3]);

    let metadata = run.agent.conversation().metadata();
    assert_eq!(metadata.compaction_count, 1);
    assert_eq!(
        metadata.compactions,
        [Compaction {
            at: "2026-02-05T14:30:00Z".to_owned(),
            dropped: 7,
            dropped_tokens: before[..7].iter().map(estimate_message_tokens).sum(),
            summarized: true,
            note: None,
        }]
    );
    assert_eq!(
        metadata.ledger,
        Ledger {
            files_read: BTreeSet::from(["notes.txt".to_owned()]),
            files_modified: BTreeSet::from(["out.txt".to_owned()]),
            tool_failures: vec!["read_file: error: path \"missing.txt\" does not exist".to_owned()],
            more_failures: 0,
        }
    );

    // The archive holds the whole transcript that was replaced, in order.
    let archive: Vec<Value> = read_jsonl(&run.agent.conversation().dir().join("archive.jsonl"));
    let mut replaced = before;
    replaced.push(Message::user("What next?"));
    let expected: Vec<Value> = replaced
        .iter()
        .enumerate()
        .map(|(index, message)| {
            json!({"replaced_at": "2026-02-05T14:30:00Z", "index": index, "message": message})
        })
        .collect();
    assert_eq!(archive, expected);
}

#[tokio::test]
async fn the_summarizer_is_sent_the_replaced_messages() {
    let (mut run, _) = resumed([Step::text(SUMMARY), Step::text("Nothing is left.")]).await;

    run.agent.process_turn("What next?").await.expect("turn");

    let history = run.client.history();
    let request = &history[0].request;
    assert_eq!(history[0].tool_names(), Vec::<&str>::new());
    assert!(
        request
            .system
            .as_deref()
            .is_some_and(|s| s.contains("## Goal, ## Progress, ## Next steps")),
        "{:?}",
        request.system
    );
    let [message] = &request.messages[..] else {
        panic!("one message: {:?}", request.messages)
    };
    let text = text(message);
    for part in [
        "Summarize this conversation history:\n\nuser: Write out.txt, then read missing.txt and notes.txt",
        "assistant called write_file {\"content\":\"draft\\n\",\"path\":\"out.txt\"}",
        "tool error: path \"missing.txt\" does not exist",
        "tool result: a note\n",
    ] {
        assert!(text.contains(part), "{part:?} not in {text}");
    }
    // Only the replaced messages: the kept ones are not summarized.
    assert!(!text.contains("Read them all."), "{text}");
}

#[tokio::test]
async fn a_summary_lacking_a_section_is_asked_for_once_more() {
    let (mut run, _) = resumed([
        Step::text("## Goal\nRead the notes."),
        Step::text(SUMMARY),
        Step::text("Nothing is left."),
    ])
    .await;

    let outcome = run.agent.process_turn("What next?").await.expect("turn");

    assert_eq!((outcome.model_calls, outcome.compactions), (3, 1));
    let history = run.client.history();
    assert_eq!(
        history[0].request, history[1].request,
        "the same request again"
    );
    let compaction = &run.agent.conversation().metadata().compactions[0];
    assert_eq!((compaction.summarized, &compaction.note), (true, &None));
    assert!(
        text(&run.on_disk()[0]).contains(SUMMARY),
        "the second summary is used"
    );
}

#[tokio::test]
async fn a_summary_lacking_sections_twice_is_replaced_by_a_note() {
    let (mut run, _) = resumed([
        Step::text("Nothing to say."),
        Step::text("## Goal\nRead the notes."),
        Step::text("Nothing is left."),
    ])
    .await;

    let outcome = run.agent.process_turn("What next?").await.expect("turn");

    assert_eq!(
        (
            outcome.text.as_str(),
            outcome.model_calls,
            outcome.compactions
        ),
        ("Nothing is left.", 3, 1)
    );
    let metadata = run.agent.conversation().metadata();
    assert_eq!(
        metadata.compactions[0],
        Compaction {
            summarized: false,
            note: Some("the summary lacked ## Progress, ## Next steps".to_owned()),
            ..metadata.compactions[0].clone()
        }
    );
    assert_eq!(metadata.compaction_count, 1);
    let transcript = run.on_disk();
    assert_eq!(transcript.len(), 4);
    insta::assert_snapshot!("fallback_note", text(&transcript[0]));
}

#[tokio::test]
async fn a_failing_summarizer_leaves_the_history_for_a_retry() {
    let (mut run, before) = resumed([
        llm_sim::Step::failure(llm_sim::FailureSpec::ServerError {
            status: Some(503),
            message: None,
        }),
        Step::text(SUMMARY),
        Step::text("Nothing is left."),
    ])
    .await;

    let failed = run.agent.process_turn("What next?").await;
    assert!(failed.is_err(), "{failed:?}");
    // Nothing was replaced: the history and the request are as they were.
    let messages = run.agent.conversation().messages().to_vec();
    assert_eq!(messages[..8], before[..]);
    assert_eq!(messages[8], Message::user("What next?"));
    assert_eq!(run.agent.conversation().metadata().compaction_count, 0);

    let outcome = run.agent.retry().await.expect("retry");
    assert_eq!(
        (outcome.text.as_str(), outcome.compactions),
        ("Nothing is left.", 1)
    );
}

#[tokio::test]
async fn a_message_larger_than_the_window_is_refused_before_compacting() {
    let (mut run, _) = resumed([Step::text(SUMMARY)]).await;

    let huge = "word ".repeat(10_000);
    let error = run.agent.process_turn(&huge).await.expect_err("too large");
    assert!(
        matches!(error, agent_loop::Error::ContextOverflow { .. }),
        "{error}"
    );
    // No summarizer call was paid for.
    assert_eq!(run.client.call_count(), 0);
}
