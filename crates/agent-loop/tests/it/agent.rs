//! The turn loop without governance: the integration spec's traces (a normal message, a tool
//! call), tool failures as results, the control tools, the model-call cap, and the repair and
//! retry of abandoned turns.
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use agent_loop::{AgentConfig, AgentEvent, Error, INTERRUPTED, ToolDefinition, TurnEnd};
use llm_core::{ContentBlock, Message, Role};
use llm_sim::{FailureSpec, Step};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{Setup, failed, message, ok, read_jsonl, setup, tool_use};

/// The spec's custom tool: it always answers the same time.
fn get_time() -> ToolDefinition {
    ToolDefinition::new(
        "get_time",
        "The current time, UTC.",
        json!({"type": "object", "additionalProperties": false}),
        |_| Ok("2026-02-05T14:30:00Z".to_owned()),
    )
}

fn with_get_time() -> Setup {
    let mut setup = setup();
    setup.tools.register(get_time()).expect("register");
    setup
}

#[tokio::test]
async fn a_message_is_answered_and_both_are_persisted() {
    let mut run = setup().start([Step::text("Hi!")]);

    let outcome = run.agent.process_turn("Hello").await.expect("turn");

    assert_eq!(
        (
            outcome.text.as_str(),
            &outcome.end,
            outcome.model_calls,
            outcome.tool_calls
        ),
        ("Hi!", &TurnEnd::EndTurn, 1, 0)
    );
    let expected = vec![Message::user("Hello"), Message::assistant("Hi!")];
    assert_eq!(run.on_disk(), expected);
    assert_eq!(run.agent.conversation().messages(), expected);
    let history = run.client.history();
    assert_eq!(history.len(), 1);
    let request = &history[0].request;
    assert!(
        request.system.as_deref().is_some_and(|s| !s.is_empty()),
        "the request has a system prompt"
    );
    assert_eq!(
        history[0].tool_names(),
        [
            "read_file",
            "write_file",
            "edit_file",
            "list_dir",
            "search",
            "run_command",
            "complete",
            "escalate"
        ]
    );
    assert_eq!(request.max_tokens, AgentConfig::default().max_tokens);
    assert_eq!(request.messages, [Message::user("Hello")]);
}

#[tokio::test]
async fn a_tool_call_runs_and_its_result_goes_back_to_the_model() {
    let mut run = with_get_time().start([
        Step::text("Let me check.").with_tool_call("get_time", json!({})),
        Step::text("It is 2:30 PM."),
    ]);

    let outcome = run
        .agent
        .process_turn("What time is it?")
        .await
        .expect("turn");

    assert_eq!(
        (
            outcome.text.as_str(),
            &outcome.end,
            outcome.model_calls,
            outcome.tool_calls
        ),
        ("It is 2:30 PM.", &TurnEnd::EndTurn, 2, 1)
    );
    let transcript = vec![
        Message::user("What time is it?"),
        message(
            Role::Assistant,
            vec![
                ContentBlock::text("Let me check."),
                tool_use("sim_1_0", "get_time", json!({})),
            ],
        ),
        message(Role::User, vec![ok("sim_1_0", "2026-02-05T14:30:00Z")]),
        Message::assistant("It is 2:30 PM."),
    ];
    assert_eq!(run.on_disk(), transcript);
    assert_eq!(run.sent(2), transcript[..3]);
}

#[tokio::test]
async fn each_message_is_on_disk_before_what_follows_it_runs() {
    // Lines of the transcript file when the tool ran and when each model answer came back.
    let seen: Arc<Mutex<Vec<(&str, usize)>>> = Arc::default();
    let mut setup = setup();
    let path: PathBuf = setup.conversation.dir().join("transcript.jsonl");
    let lines = move |path: &PathBuf| read_jsonl::<Message>(path).len();
    let (tool_seen, tool_path) = (Arc::clone(&seen), path.clone());
    setup
        .tools
        .register(ToolDefinition::new(
            "get_time",
            "The current time, UTC.",
            json!({"type": "object"}),
            move |_| {
                let n = lines(&tool_path);
                tool_seen.lock().expect("lock").push(("tool", n));
                Ok("14:30".to_owned())
            },
        ))
        .expect("register");
    let mut run = setup.start([
        Step::tool_call("get_time", json!({})),
        Step::text("It is 2:30 PM."),
    ]);
    let model_seen = Arc::clone(&seen);
    run.agent = run.agent.with_observer(Box::new(move |event| {
        if let AgentEvent::Response(_) = event {
            model_seen
                .lock()
                .expect("lock")
                .push(("response", lines(&path)));
        }
    }));

    run.agent
        .process_turn("What time is it?")
        .await
        .expect("turn");

    // The call is on disk before the tool runs, and its result before the model is asked again.
    assert_eq!(
        *seen.lock().expect("lock"),
        [("response", 1), ("tool", 2), ("response", 3)]
    );
    assert_eq!(run.on_disk().len(), 4);
}

#[tokio::test]
async fn failed_calls_are_error_results_in_one_user_message_and_the_loop_goes_on() {
    let mut run = setup().start([
        Step::tool_call("delete_everything", json!({}))
            .with_tool_call("read_file", json!({"path": 7}))
            .with_tool_call("read_file", json!({"path": "missing.txt"})),
        Step::text("Sorry, let me try otherwise."),
    ]);

    let outcome = run.agent.process_turn("Clean up").await.expect("turn");

    assert_eq!(
        (&outcome.end, outcome.model_calls, outcome.tool_calls),
        (&TurnEnd::EndTurn, 2, 3)
    );
    let results = message(
        Role::User,
        vec![
            failed(
                "sim_1_0",
                "error: unknown tool \"delete_everything\"; the tools are: read_file, \
                 write_file, edit_file, list_dir, search, run_command, complete, escalate",
            ),
            failed(
                "sim_1_1",
                "error: invalid input for tool read_file: input.path must be string, not a number",
            ),
            failed("sim_1_2", "error: path \"missing.txt\" does not exist"),
        ],
    );
    assert_eq!(run.on_disk()[2], results);
    assert_eq!(run.sent(2).last(), Some(&results));
}

#[tokio::test]
async fn complete_ends_the_request_with_its_summary() {
    let mut run = setup()
        .start([Step::text("All done.")
            .with_tool_call("complete", json!({"summary": "fixed the typo"}))]);

    let outcome = run.agent.process_turn("Fix the typo").await.expect("turn");

    assert_eq!(
        (outcome.text.as_str(), &outcome.end, outcome.model_calls),
        (
            "All done.",
            &TurnEnd::Completed {
                summary: "fixed the typo".to_owned()
            },
            1
        )
    );
    assert_eq!(run.client.call_count(), 1, "no model call after complete");
    assert_eq!(
        run.on_disk().last(),
        Some(&message(
            Role::User,
            vec![ok("sim_1_0", "task complete: fixed the typo")]
        ))
    );
}

#[tokio::test]
async fn escalate_ends_the_request_with_its_reason() {
    let mut run = setup().start([Step::tool_call(
        "escalate",
        json!({"reason": "the tests need a database"}),
    )]);

    let outcome = run.agent.process_turn("Run the tests").await.expect("turn");

    assert_eq!(
        outcome.end,
        TurnEnd::Escalated {
            reason: "the tests need a database".to_owned()
        }
    );
    assert_eq!(run.client.call_count(), 1, "no model call after escalate");
    assert_eq!(
        run.on_disk().last(),
        Some(&message(
            Role::User,
            vec![ok(
                "sim_1_0",
                "escalated to a human: the tests need a database"
            )]
        ))
    );
}

#[tokio::test]
async fn an_empty_summary_does_not_complete_the_request() {
    let mut run = setup().start([
        Step::tool_call("complete", json!({"summary": " "})),
        Step::text("Sorry."),
    ]);

    let outcome = run.agent.process_turn("Fix the typo").await.expect("turn");

    assert_eq!((&outcome.end, outcome.model_calls), (&TurnEnd::EndTurn, 2));
    assert_eq!(
        run.on_disk()[2],
        message(
            Role::User,
            vec![failed(
                "sim_1_0",
                "error: invalid input for tool complete: summary is empty"
            )]
        )
    );
}

#[tokio::test]
async fn calls_after_complete_in_the_same_message_are_not_run() {
    let mut run = setup().start([Step::tool_call("complete", json!({"summary": "done"}))
        .with_tool_call("write_file", json!({"path": "late.txt", "content": "late"}))]);

    let outcome = run.agent.process_turn("Finish").await.expect("turn");

    assert_eq!(
        (&outcome.end, outcome.tool_calls),
        (
            &TurnEnd::Completed {
                summary: "done".to_owned()
            },
            2
        )
    );
    assert_eq!(
        run.on_disk().last(),
        Some(&message(
            Role::User,
            vec![
                ok("sim_1_0", "task complete: done"),
                failed(
                    "sim_1_1",
                    "not run: the task was completed by an earlier call"
                ),
            ]
        ))
    );
    assert!(!run.ws.join("late.txt").exists());
}

#[tokio::test]
async fn the_model_call_cap_ends_the_request_with_a_note() {
    let mut setup = with_get_time();
    setup.config.max_model_calls = 2;
    let mut run = setup.start([
        Step::tool_call("get_time", json!({})),
        Step::tool_call("get_time", json!({})),
        Step::tool_call("get_time", json!({})),
    ]);

    let outcome = run.agent.process_turn("Keep checking").await.expect("turn");

    assert_eq!(
        (&outcome.end, outcome.model_calls),
        (&TurnEnd::ModelCallCap { limit: 2 }, 2)
    );
    assert_eq!(run.client.call_count(), 2);
    assert_eq!(
        run.on_disk().last(),
        Some(&message(
            Role::User,
            vec![
                ok("sim_2_0", "2026-02-05T14:30:00Z"),
                ContentBlock::text(
                    "[merkle: turn stopped: the request reached its cap of 2 model calls] \
                     {\"kind\":\"model_call_cap\",\"limit\":2}"
                ),
            ]
        ))
    );
}

#[tokio::test]
async fn a_call_left_without_a_result_is_answered_interrupted_on_the_next_turn() {
    let mut setup = with_get_time();
    setup
        .conversation
        .append_message(Message::user("What time is it?"))
        .expect("append");
    let abandoned = message(
        Role::Assistant,
        vec![tool_use("toolu_1", "get_time", json!({}))],
    );
    setup
        .conversation
        .append_message(abandoned.clone())
        .expect("append");
    let mut run = setup.start([Step::text("Still here.")]);

    run.agent
        .process_turn("Are you there?")
        .await
        .expect("turn");

    let transcript = vec![
        Message::user("What time is it?"),
        abandoned,
        message(Role::User, vec![failed("toolu_1", INTERRUPTED)]),
        Message::user("Are you there?"),
        Message::assistant("Still here."),
    ];
    assert_eq!(run.on_disk(), transcript);
    assert_eq!(run.sent(1), transcript[..4]);
}

#[tokio::test]
async fn retry_after_a_model_failure_sends_the_request_again() {
    let mut run = setup().start([
        Step::failure(FailureSpec::ServerError {
            status: Some(503),
            message: None,
        }),
        Step::text("Hi!"),
    ]);

    let err = run.agent.process_turn("Hello").await.expect_err("failure");
    assert!(matches!(err, Error::Model(_)), "{err}");
    assert_eq!(run.on_disk(), [Message::user("Hello")]);

    let outcome = run.agent.retry().await.expect("retry");

    assert_eq!(outcome.text, "Hi!");
    assert_eq!(
        run.on_disk(),
        [Message::user("Hello"), Message::assistant("Hi!")]
    );
    let history = run.client.history();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].request, history[1].request);
}

#[tokio::test]
async fn retry_without_a_pending_request_is_refused() {
    let mut run = setup().start([Step::text("Hi!")]);
    let err = run.agent.retry().await.expect_err("empty conversation");
    assert!(matches!(err, Error::NothingToRetry), "{err}");

    run.agent.process_turn("Hello").await.expect("turn");
    let err = run.agent.retry().await.expect_err("answered");

    assert!(matches!(err, Error::NothingToRetry), "{err}");
    assert_eq!(
        err.to_string(),
        "nothing to retry: the conversation's last message is not a pending request"
    );
    assert_eq!(run.client.call_count(), 1);
}

#[tokio::test]
async fn an_empty_answer_is_recorded_as_a_marker() {
    let mut run = setup().start([Step::text(""), Step::text("Hi!")]);
    let outcome = run.agent.process_turn("Hello").await.expect("turn");
    assert_eq!(outcome.end, TurnEnd::EndTurn);
    // A later request must not carry an empty assistant message.
    run.agent.process_turn("Hello?").await.expect("turn");
    assert_eq!(
        run.agent.conversation().messages()[1],
        Message::assistant(agent_loop::agent::EMPTY_ANSWER)
    );
}

/// An agent run of `turns` tool calls against the fake Anthropic server (the real provider
/// client, over loopback): what the server read back and billed.
#[tokio::test]
async fn every_request_after_the_first_reads_the_prompt_cache_on_the_fake_anthropic_server() {
    use llm_core::{AnthropicClient, AnthropicConfig, ApiKey, LlmClient};
    let turns = 6;
    let mut steps: Vec<Step> = (0..turns)
        .map(|i| {
            Step::text(format!("Looking, step {i}."))
                .with_tool_call("read_file", json!({"path": "README.md"}))
        })
        .collect();
    steps.push(Step::text("Done."));
    let script = llm_sim::Script {
        metadata: None,
        responses: steps,
    };
    let server =
        llm_sim::FakeServer::start("127.0.0.1:0", Box::new(llm_sim::Scripted::new(script)))
            .await
            .expect("server");
    let mut config = AnthropicConfig::new(ApiKey::new("sk-ant-test"));
    config.base_url = server.url();
    config.default_model = Some("claude-test".to_owned());
    let client: Arc<dyn LlmClient> = Arc::new(AnthropicClient::new(config).expect("client"));
    let setup = setup();
    let mut agent = agent_loop::Agent::new(
        client,
        setup.conversation,
        setup.tools,
        setup.config,
        crate::clock(),
    );
    let outcome = agent
        .process_turn("Read the readme, again and again.")
        .await
        .expect("turn");
    assert_eq!(outcome.tool_calls, turns as u32);

    let served = server.served();
    assert_eq!(served.len(), turns + 1);
    for s in &served {
        let marks = &s.request.cache;
        assert!(marks.len() <= 4, "{marks:?}");
        assert!(marks.system, "the system prompt is marked: {marks:?}");
        assert_eq!(
            marks.messages.last().copied(),
            Some(s.request.messages.len() - 1),
            "the newest message is marked"
        );
        assert_eq!(
            s.request.cache_key.as_deref(),
            None,
            "Anthropic has no cache key"
        );
    }
    // Every request after the first also marks the previous request's last message.
    for (before, s) in served.iter().zip(&served[1..]) {
        assert!(
            s.request
                .cache
                .messages
                .contains(&(before.request.messages.len() - 1)),
            "{:?}",
            s.request.cache
        );
    }
    // The usage the server billed: most input read from the cache.
    let usage = outcome.usage;
    assert!(usage.cache_read_input_tokens > 0, "{usage:?}");
    assert!(
        usage.cache_read_input_tokens > usage.input_tokens,
        "most input is read from the cache: {usage:?}"
    );
}

#[test]
fn a_price_bills_cache_reads_and_writes_at_their_own_rates() {
    let price = agent_loop::Price::new(3.0, 15.0);
    let usage = llm_core::Usage {
        input_tokens: 1_000_000,
        output_tokens: 100_000,
        cache_read_input_tokens: 2_000_000,
        cache_creation_input_tokens: 400_000,
        ..llm_core::Usage::default()
    };
    // $3 + $1.5 out + 2M reads at $0.30 + 0.4M writes at $3.75.
    let cost = price.cost(&usage);
    assert!((cost - (3.0 + 1.5 + 0.6 + 1.5)).abs() < 1e-9, "{cost}");
}
