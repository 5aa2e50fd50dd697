//! llm-core's providers end to end against the fake server: answers whole and streamed,
//! tool calls, thinking, usage, each injected failure, and requests read back exactly.

use std::time::Duration;

use futures_util::StreamExt;
use llm_core::{
    ContentBlock, Error, Event, HttpConfig, LlmClient, Message, Request, Response, Role,
    TimeoutPhase, collect,
};
use llm_sim::{Api, FakeServer, Script, Scripted, parse_strategy};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{anthropic, clock, fixture, gist, http, openai, request, responses};

async fn serve(yaml: &str) -> FakeServer {
    let strategy = parse_strategy(yaml, "server.yaml").expect("script parses");
    FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server starts")
}

async fn fixture_server() -> FakeServer {
    let script = Script::load(&fixture("fix_violation_success.yaml")).expect("fixture");
    FakeServer::start("127.0.0.1:0", Box::new(Scripted::new(script)))
        .await
        .expect("server starts")
}

type Connect = fn(&str, HttpConfig) -> std::sync::Arc<dyn LlmClient>;

const PROVIDERS: [(Api, Connect); 3] = [
    (Api::Anthropic, anthropic),
    (Api::OpenAi, openai),
    (Api::Responses, responses),
];

/// Runs the success fixture's four steps as a conversation, alternating `complete` and
/// `stream`, and returns the answers and the requests sent.
async fn conversation(client: &dyn LlmClient) -> (Vec<Response>, Vec<Request>) {
    let mut request = request("reduce the complexity of execute");
    let (mut answers, mut sent) = (Vec::new(), Vec::new());
    for call in 0..4 {
        sent.push(request.clone());
        let response = if call % 2 == 1 {
            collect(client.stream(&request).await.expect("stream starts"))
                .await
                .expect("stream completes")
        } else {
            client.complete(&request).await.expect("answer")
        };
        answers.push(response.clone());
        let calls: Vec<_> = response.tool_calls().into_iter().cloned().collect();
        request.messages.push(response.into_message());
        request.messages.push(Message {
            role: Role::User,
            content: calls
                .iter()
                .map(|call| ContentBlock::ToolResult {
                    tool_use_id: call.id.clone(),
                    content: format!("{} done", call.name),
                    is_error: false,
                })
                .chain([ContentBlock::text("continue")])
                .collect(),
        });
    }
    (answers, sent)
}

#[tokio::test]
async fn both_providers_run_the_fixture_whole_and_streamed() {
    for (api, connect) in PROVIDERS {
        let server = fixture_server().await;
        let clock = clock();
        let client = connect(&server.url(), http(&clock, 0));
        let (answers, sent) = conversation(&*client).await;
        let gists: Vec<_> = answers.iter().map(gist).collect();
        let names: Vec<_> = gists
            .iter()
            .map(|g| g["tool_calls"][0]["name"].clone())
            .collect();
        assert_eq!(
            names,
            vec![
                json!("read_file"),
                json!("extract_function"),
                json!("run_check"),
                json!("complete")
            ],
            "{api:?}"
        );
        assert_eq!(
            gists[3]["text"],
            json!("Successfully reduced complexity from 15 to 10"),
            "{api:?}"
        );
        assert_eq!(
            gists[1]["tool_calls"][0]["input"]["start_line"],
            json!(67),
            "{api:?} tool input survives the stream"
        );
        for (answer, served) in answers.iter().zip(server.served()) {
            assert!(
                answer.usage.input_tokens > 0 && answer.usage.output_tokens > 0,
                "{api:?} usage: {answer:?}"
            );
            assert_eq!(answer.stop_reason, llm_core::StopReason::ToolUse);
            assert_eq!(
                answer.request_id,
                Some(format!("req_sim_{}", served.call)),
                "{api:?}"
            );
        }
        // The server read back exactly what the client sent, conversation and all (the
        // Responses API's reasoning items included).
        let mut served: Vec<Request> = server.served().into_iter().map(|s| s.request).collect();
        let mut expected = sent;
        if api == Api::OpenAi {
            // Chat completions carry no thinking back, nor an error flag on tool results.
            for request in expected.iter_mut() {
                for message in request.messages.iter_mut() {
                    message
                        .content
                        .retain(|block| !matches!(block, ContentBlock::Thinking { .. }));
                }
            }
        }
        for request in served.iter_mut().chain(expected.iter_mut()) {
            request
                .messages
                .retain(|message| !message.content.is_empty());
        }
        assert_eq!(served, expected, "{api:?}");
        let kinds: Vec<_> = server
            .served()
            .iter()
            .map(|s| (s.api, s.streamed))
            .collect();
        assert_eq!(
            kinds,
            vec![(api, false), (api, true), (api, false), (api, true)]
        );
    }
}

#[tokio::test]
async fn anthropic_thinking_comes_back_signed() {
    let server = serve(
        "responses:\n  - thinking: deep thought\n    signature: sig-42\n    content: answer\n",
    )
    .await;
    let clock = clock();
    let response = anthropic(&server.url(), http(&clock, 0))
        .complete(&request("q"))
        .await
        .expect("answer");
    assert_eq!(
        response.content,
        vec![
            ContentBlock::Thinking {
                text: "deep thought".into(),
                signature: Some("sig-42".into())
            },
            ContentBlock::text("answer"),
        ]
    );
    // Unsigned scripted thinking is signed on the wire, as Anthropic signs every block.
    let server = serve("responses:\n  - thinking: unsigned\n    content: answer\n").await;
    let streamed = collect(
        anthropic(&server.url(), http(&clock, 0))
            .stream(&request("q"))
            .await
            .expect("stream"),
    )
    .await
    .expect("collected");
    assert_eq!(
        streamed.content[0],
        ContentBlock::Thinking {
            text: "unsigned".into(),
            signature: Some("sim-signature".into())
        }
    );
}

#[tokio::test]
async fn a_rate_limit_is_retried_after_the_servers_retry_after() {
    for (api, connect) in PROVIDERS {
        let server = serve(
            "responses:\n  - failure: {kind: rate_limited, retry_after: 2.5}\n  - content: after the wait\n",
        )
        .await;
        let clock = clock();
        let response = connect(&server.url(), http(&clock, 1))
            .complete(&request("q"))
            .await
            .expect("the retry succeeds");
        assert_eq!(
            (response.text(), clock.sleeps()),
            (
                "after the wait".to_owned(),
                vec![Duration::from_millis(2500)]
            ),
            "{api:?}"
        );
    }
}

/// The error each provider reports for a script's first step, whole and streamed.
async fn check_failure(step: &str, expected: [&str; 3]) {
    for ((api, connect), expected) in PROVIDERS.into_iter().zip(expected) {
        for streamed in [false, true] {
            let server = serve(&format!("responses:\n  - {step}\n")).await;
            let clock = clock();
            let client = connect(&server.url(), http(&clock, 0));
            let err = if streamed {
                match client.stream(&request("q")).await {
                    Err(err) => err,
                    Ok(stream) => {
                        let items: Vec<_> = stream.collect().await;
                        items
                            .into_iter()
                            .find_map(Result::err)
                            .expect("the stream fails")
                    }
                }
            } else {
                client
                    .complete(&request("q"))
                    .await
                    .expect_err("the call fails")
            };
            assert_eq!(
                err.to_string(),
                expected,
                "{api:?} streamed={streamed} {step}"
            );
        }
    }
}

#[tokio::test]
async fn injected_failures_arrive_as_each_provider_reports_them() {
    check_failure(
        "failure: {kind: rate_limited, retry_after: 7}",
        [
            "anthropic: rate limited (retry after 7s): simulated rate limit",
            "openai: rate limited (retry after 7s): simulated rate limit",
            "openai: rate limited (retry after 7s): simulated rate limit",
        ],
    )
    .await;
    check_failure(
        "failure: {kind: overloaded}",
        [
            "anthropic: overloaded: Overloaded",
            "openai: server error (http 503): Overloaded",
            "openai: server error (http 503): Overloaded",
        ],
    )
    .await;
    check_failure(
        "failure: {kind: server_error}",
        [
            "anthropic: server error (http 500): simulated server error",
            "openai: server error (http 500): simulated server error",
            "openai: server error (http 500): simulated server error",
        ],
    )
    .await;
}

#[tokio::test]
async fn a_mid_stream_failure_fails_a_whole_call_outright() {
    for (connect, expected) in [
        (anthropic as Connect, "anthropic: overloaded: Overloaded"),
        (openai, "openai: server error (http 503): Overloaded"),
        (responses, "openai: server error (http 503): Overloaded"),
    ] {
        let server =
            serve("responses:\n  - content: one two\n    failure: {kind: mid_stream}\n").await;
        let clock = clock();
        let err = connect(&server.url(), http(&clock, 0))
            .complete(&request("q"))
            .await
            .expect_err("fails");
        assert_eq!(err.to_string(), expected);
    }
}

#[tokio::test]
async fn an_anthropic_stream_interrupted_mid_way_reports_the_error_event() {
    let server =
        serve("responses:\n  - content: one two three four\n    failure: {kind: mid_stream}\n")
            .await;
    let clock = clock();
    let items: Vec<_> = anthropic(&server.url(), http(&clock, 0))
        .stream(&request("q"))
        .await
        .expect("stream starts")
        .collect()
        .await;
    let text: String = items
        .iter()
        .filter_map(|item| match item {
            Ok(Event::TextDelta { text }) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "one two ");
    let Some(Err(err)) = items.last() else {
        panic!("the stream ends in an error: {items:?}");
    };
    assert_eq!(err.to_string(), "anthropic: overloaded: Overloaded");
}

#[tokio::test]
async fn an_openai_stream_interrupted_mid_way_reports_the_error_event() {
    let server =
        serve("responses:\n  - content: one two three four\n    failure: {kind: mid_stream}\n")
            .await;
    let clock = clock();
    let items: Vec<_> = openai(&server.url(), http(&clock, 0))
        .stream(&request("q"))
        .await
        .expect("stream starts")
        .collect()
        .await;
    let text: String = items
        .iter()
        .filter_map(|item| match item {
            Ok(Event::TextDelta { text }) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "one two ");
    let Some(Err(err)) = items.last() else {
        panic!("the stream ends in an error: {items:?}");
    };
    assert_eq!(
        err.to_string(),
        "openai: server error (http 500): Overloaded"
    );
}

#[tokio::test]
async fn a_timeout_holds_the_request_until_the_client_gives_up() {
    for (api, connect) in PROVIDERS {
        let server = serve("responses:\n  - failure: {kind: timeout}\n").await;
        let clock = clock();
        let config = HttpConfig {
            request_timeout: Duration::from_secs(30),
            ..http(&clock, 0)
        };
        let client = connect(&server.url(), config);
        let question = request("q");
        let (result, ()) = tokio::join!(client.complete(&question), async {
            server.wait_for_requests(1).await;
            clock.advance(Duration::from_secs(31));
        });
        assert!(
            matches!(
                result,
                Err(Error::Timeout {
                    phase: TimeoutPhase::Request,
                    ..
                })
            ),
            "{api:?}: {result:?}"
        );
    }
}

#[tokio::test]
async fn malformed_tool_arguments_reach_the_client_as_sent() {
    let step = "responses:\n  - tool_calls: [{name: read_file, raw_input: '{\"path\": '}]\n";
    let clock = clock();
    let expected = r#"malformed json in arguments of tool call sim_1_0 (read_file): EOF while parsing a value at line 1 column 9; raw text: {"path": "#;
    let server = serve(step).await;
    let err = openai(&server.url(), http(&clock, 0))
        .complete(&request("q"))
        .await
        .expect_err("malformed");
    assert_eq!(err.to_string(), expected);
    for connect in [anthropic as Connect, openai] {
        let server = serve(step).await;
        let items: Vec<_> = connect(&server.url(), http(&clock, 0))
            .stream(&request("q"))
            .await
            .expect("stream starts")
            .collect()
            .await;
        let err = items
            .into_iter()
            .find_map(Result::err)
            .expect("the stream fails");
        assert_eq!(err.to_string(), expected);
    }
    // A whole Anthropic message has no place for text that is not JSON: it arrives as a
    // string input, for the caller's own validation to catch.
    let server = serve(step).await;
    let response = anthropic(&server.url(), http(&clock, 0))
        .complete(&request("q"))
        .await
        .expect("answer");
    assert_eq!(response.tool_calls()[0].input, json!("{\"path\": "));
}

#[tokio::test]
async fn a_playback_miss_is_a_server_error_that_is_not_retried() {
    let recording = r#"
responses:
  - request: {model: m, system: null, messages: [], tools: []}
    content: recorded
"#;
    let server = serve(recording).await;
    let clock = clock();
    let err = anthropic(&server.url(), http(&clock, 2))
        .complete(&request("unrecorded"))
        .await
        .expect_err("miss");
    let message = err.to_string();
    assert!(
        message.starts_with("anthropic: server error (http 500): playback miss at call 1: no recorded request matches; the closest is recorded step 1, which differs first at `model`"),
        "{message}"
    );
    assert_eq!(
        server.served().len(),
        1,
        "x-should-retry: false stops retries"
    );
}

#[tokio::test]
async fn the_script_running_out_completes_over_http_too() {
    let server = serve("responses: []\n").await;
    let clock = clock();
    let response = openai(&server.url(), http(&clock, 0))
        .complete(&request("q"))
        .await
        .expect("answer");
    assert_eq!(
        gist(&response),
        json!({
            "text": "No more scripted responses",
            "tool_calls": [{"id": "sim_1_0", "name": "complete", "input": {"summary": "Script ended"}}],
            "thinking": null,
            "stop_reason": "tool_use",
        })
    );
}
