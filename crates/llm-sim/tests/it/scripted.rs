//! The scripted strategy: the shipped fixtures, the end of a script, streaming, history and
//! usage.

use futures_util::StreamExt;
use llm_core::{Event, LlmClient, Usage, collect};
use llm_sim::{Script, SimulatedClient, Step, for_testing};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{fixture, gist, request};

/// Runs `calls` completions against the script at `name` and compares their gists.
async fn check_fixture(name: &str, expected: &[Value]) {
    let client = SimulatedClient::from_file(&fixture(name)).expect("fixture loads");
    let mut actual = Vec::new();
    for _ in expected {
        let response = client
            .complete(&request("fix it"))
            .await
            .expect("scripted answer");
        actual.push(gist(&response));
    }
    assert_eq!(actual, expected);
}

fn script_ended(call: u64) -> Value {
    json!({
        "text": "No more scripted responses",
        "tool_calls": [{"id": format!("sim_{call}_0"), "name": "complete", "input": {"summary": "Script ended"}}],
        "thinking": null,
        "stop_reason": "tool_use",
    })
}

#[tokio::test]
async fn success_fixture_reads_extracts_checks_and_completes() {
    let path = "src/agentforge/core/executor.py";
    check_fixture(
        "fix_violation_success.yaml",
        &[
            json!({
                "text": "",
                "tool_calls": [{"id": "sim_1_0", "name": "read_file", "input": {"path": path}}],
                "thinking": "The task is to reduce complexity of the 'execute' function.\nFirst, I should read the file to understand the code structure.\n",
                "stop_reason": "tool_use",
            }),
            json!({
                "text": "",
                "tool_calls": [{"id": "sim_2_0", "name": "extract_function", "input": {
                    "file_path": path,
                    "source_function": "execute",
                    "start_line": 67,
                    "end_line": 78,
                    "new_function_name": "_handle_execution_error",
                }}],
                "thinking": "Looking at the code, lines 67-78 handle error cases.\nThis is a good extraction candidate that will reduce complexity by 4.\n",
                "stop_reason": "tool_use",
            }),
            json!({
                "text": "",
                "tool_calls": [{"id": "sim_3_0", "name": "run_check", "input": {"file_path": path}}],
                "thinking": "The extraction succeeded. Now I need to verify:\n1. The conformance check passes\n2. All tests still pass\n",
                "stop_reason": "tool_use",
            }),
            json!({
                "text": "Successfully reduced complexity from 15 to 10",
                "tool_calls": [{"id": "sim_4_0", "name": "complete", "input": {
                    "summary": "Extracted _handle_execution_error to reduce cyclomatic complexity",
                }}],
                "thinking": "Check passed - complexity is now 10 (was 15).\nTests still pass. Task complete.\n",
                "stop_reason": "tool_use",
            }),
            script_ended(5),
        ],
    )
    .await;
}

#[tokio::test]
async fn escalate_fixture_reads_then_escalates() {
    check_fixture(
        "fix_violation_escalate.yaml",
        &[
            json!({
                "text": "",
                "tool_calls": [{"id": "sim_1_0", "name": "read_file", "input": {"path": "src/complex_file.py"}}],
                "thinking": null,
                "stop_reason": "tool_use",
            }),
            json!({
                "text": "",
                "tool_calls": [{"id": "sim_2_0", "name": "escalate", "input": {
                    "reason": "Complex business logic - extraction may change behavior. Human review needed.",
                }}],
                "thinking": "This function has deeply nested conditionals with complex business logic.\nThe extraction candidates don't seem safe - they would change behavior.\nI should escalate for human review.\n",
                "stop_reason": "tool_use",
            }),
            script_ended(3),
        ],
    )
    .await;
}

#[tokio::test]
async fn steps_set_ids_model_usage_stop_reason_and_signature() {
    let script = Script::parse(
        r#"
responses:
  - content: cut short
    stop_reason: max_tokens
    model: other-model
    usage: {input_tokens: 7, output_tokens: 3, cache_read_input_tokens: 2}
  - thinking: hmm
    signature: sig-1
    tool_calls:
      - id: call_a
        name: read_file
        parameters: {path: a.rs}
      - name: complete
"#,
        "inline.yaml",
    )
    .expect("script parses");
    let client = SimulatedClient::scripted(script);
    let first = client.complete(&request("go")).await.expect("answer");
    assert_eq!(
        (
            gist(&first),
            first.model.as_str(),
            first.usage,
            first.id.as_deref()
        ),
        (
            json!({"text": "cut short", "tool_calls": [], "thinking": null, "stop_reason": "max_tokens"}),
            "other-model",
            Usage {
                input_tokens: 7,
                output_tokens: 3,
                cache_read_input_tokens: 2,
                ..Usage::default()
            },
            Some("msg_sim_1"),
        )
    );
    let second = client.complete(&request("go")).await.expect("answer");
    assert_eq!(
        gist(&second),
        json!({
            "text": "",
            "tool_calls": [
                {"id": "call_a", "name": "read_file", "input": {"path": "a.rs"}},
                {"id": "sim_2_1", "name": "complete", "input": {}},
            ],
            "thinking": "hmm",
            "stop_reason": "tool_use",
        })
    );
    assert_eq!(
        second.content.first(),
        Some(&llm_core::ContentBlock::Thinking {
            text: "hmm".into(),
            signature: Some("sig-1".into())
        })
    );
    assert_eq!(second.model, "model-test", "the request's model by default");
}

#[tokio::test]
async fn a_stream_arrives_in_deltas_and_collects_to_the_completed_response() {
    let steps = || {
        vec![
            Step::text("Hello there, big wide world")
                .with_thinking("think first")
                .with_tool_call("read_file", json!({"path": "src/main.rs"})),
        ]
    };
    let completed = for_testing(steps())
        .complete(&request("hi"))
        .await
        .expect("answer");
    let streaming = for_testing(steps());
    let events: Vec<Event> = streaming
        .stream(&request("hi"))
        .await
        .expect("stream starts")
        .map(|event| event.expect("no error"))
        .collect()
        .await;
    let usage = completed.usage;
    assert_eq!(
        events,
        vec![
            Event::Start {
                id: Some("msg_sim_1".into()),
                model: "model-test".into(),
                request_id: None,
                headers: Default::default(),
            },
            Event::Usage(Usage {
                output_tokens: 0,
                ..usage
            }),
            Event::ThinkingDelta {
                text: "think first".into()
            },
            Event::TextDelta {
                text: "Hello there, ".into()
            },
            Event::TextDelta {
                text: "big wide ".into()
            },
            Event::TextDelta {
                text: "world".into()
            },
            Event::ToolCallStart {
                index: 0,
                id: "sim_1_0".into(),
                name: "read_file".into()
            },
            Event::ToolCallDelta {
                index: 0,
                arguments: r#"{"path":"src/mai"#.into()
            },
            Event::ToolCallDelta {
                index: 0,
                arguments: r#"n.rs"}"#.into()
            },
            Event::ToolCallEnd {
                index: 0,
                input: json!({"path": "src/main.rs"})
            },
            Event::Usage(usage),
            Event::Stop {
                reason: llm_core::StopReason::ToolUse
            },
        ]
    );
    let collected = collect(
        for_testing(steps())
            .stream(&request("hi"))
            .await
            .expect("stream starts"),
    )
    .await
    .expect("stream completes");
    assert_eq!(collected, completed);
}

#[tokio::test]
async fn history_and_usage_stats_follow_the_calls() {
    let client = for_testing([Step::text("one"), Step::text("two"), Step::text("three")]);
    let first = client.complete(&request("a")).await.expect("answer");
    let second = collect(client.stream(&request("b")).await.expect("stream"))
        .await
        .expect("stream completes");
    let history = client.history();
    assert_eq!(
        history
            .iter()
            .map(|call| (call.number, call.streamed, call.system(), call.tool_names()))
            .collect::<Vec<_>>(),
        vec![
            (
                1,
                false,
                Some("You fix violations."),
                vec!["read_file", "extract_function", "complete"]
            ),
            (
                2,
                true,
                Some("You fix violations."),
                vec!["read_file", "extract_function", "complete"]
            ),
        ]
    );
    assert_eq!(history[1].request, request("b"));
    let mut total = first.usage;
    total += second.usage;
    let stats = client.usage_stats();
    assert_eq!(
        (stats.requests, stats.failed_requests, stats.usage),
        (2, 0, total)
    );
    assert!(
        total.input_tokens > 0 && total.output_tokens > 0,
        "usage is estimated: {total:?}"
    );

    client.reset_usage_stats();
    client.clear_history();
    assert_eq!(client.usage_stats(), llm_core::UsageStats::default());
    assert_eq!(client.history(), Vec::new());
    let third = client.complete(&request("c")).await.expect("answer");
    assert_eq!((third.text(), client.call_count()), ("three".to_owned(), 3));
}

#[tokio::test]
async fn a_stream_dropped_half_way_counts_neither_way() {
    let client = for_testing([Step::text("one two three four five six")]);
    let mut stream = client.stream(&request("a")).await.expect("stream");
    stream.next().await;
    drop(stream);
    let stats = client.usage_stats();
    assert_eq!((stats.requests, stats.failed_requests), (0, 0));
}

#[tokio::test]
async fn a_client_without_a_script_answers_simulated_response() {
    let client = SimulatedClient::fixed();
    let response = client.complete(&request("a")).await.expect("answer");
    assert_eq!(
        gist(&response),
        json!({"text": "Simulated response", "tool_calls": [], "thinking": null, "stop_reason": "end_turn"})
    );
}
