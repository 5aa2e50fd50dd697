//! The Anthropic provider end to end: request shape, answers, streams and their failures.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use llm_core::{
    ContentBlock, Error, Event, LlmClient, Message, Request, Response, Role, StopReason, Thinking,
    TimeoutPhase, Tool, ToolCall, ToolChoice, Usage, collect,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::server::{Reply, TestServer};
use crate::support::{SECRET, anthropic, clock};

fn tool_request() -> Request {
    let mut request = Request::new("claude-test")
        .system("be brief")
        .user("weather in Paris?")
        .max_tokens(256);
    request.tools.push(Tool {
        name: "get_weather".into(),
        description: "current weather".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    });
    request.tool_choice = Some(ToolChoice::Tool {
        name: "get_weather".into(),
    });
    request.thinking = Some(Thinking {
        budget_tokens: 1024,
    });
    request.stop_sequences = vec!["END".into()];
    request.metadata.insert("user_id".into(), "u-1".into());
    request.extra.insert("top_k".into(), json!(5));
    request
}

const MESSAGE: &str = r#"{
  "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test",
  "content": [
    {"type": "thinking", "thinking": "Paris, so call the tool.", "signature": "sig-abc"},
    {"type": "text", "text": "Checking."},
    {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
    {"type": "server_tool_use", "id": "srv_1", "name": "web_search", "input": {}}
  ],
  "stop_reason": "tool_use", "stop_sequence": null,
  "usage": {"input_tokens": 30, "output_tokens": 12, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 7}
}"#;

fn expected_response() -> Response {
    Response {
        content: vec![
            ContentBlock::Thinking {
                text: "Paris, so call the tool.".into(),
                signature: Some("sig-abc".into()),
            },
            ContentBlock::text("Checking."),
            ContentBlock::ToolUse(ToolCall {
                id: "toolu_1".into(),
                name: "get_weather".into(),
                input: json!({"city": "Paris"}),
            }),
        ],
        stop_reason: StopReason::ToolUse,
        usage: Usage {
            input_tokens: 30,
            output_tokens: 12,
            cache_creation_input_tokens: 5,
            cache_read_input_tokens: 7,
            reasoning_tokens: 0,
            cache_creation_1h_input_tokens: 0,
        },
        model: "claude-test".into(),
        id: Some("msg_01".into()),
        request_id: Some("req_42".into()),
        headers: BTreeMap::from([
            ("anthropic-ratelimit-requests-remaining".into(), "99".into()),
            ("request-id".into(), "req_42".into()),
        ]),
        service_tier: None,
    }
}

#[tokio::test]
async fn complete_sends_messages_api_request_and_reads_answer() {
    let server = TestServer::start(vec![
        Reply::json(200, MESSAGE)
            .header("request-id", "req_42")
            .header("anthropic-ratelimit-requests-remaining", "99")
            .header("x-unrelated", "dropped"),
    ])
    .await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let response = client.complete(&tool_request()).await.expect("complete");

    assert_eq!(response, expected_response());
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let sent = &requests[0];
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(SECRET));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("anthropic-beta"), Some("beta-a,beta-b"));
    assert_eq!(
        sent.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 256,
            "system": "be brief",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "weather in Paris?"}]}],
            "tools": [{
                "name": "get_weather",
                "description": "current weather",
                "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
            }],
            "tool_choice": {"type": "tool", "name": "get_weather"},
            "thinking": {"type": "enabled", "budget_tokens": 1024},
            "stop_sequences": ["END"],
            "metadata": {"user_id": "u-1"},
            "top_k": 5,
        })
    );
    let stats = client.usage_stats();
    assert_eq!(
        (stats.requests, stats.usage),
        (1, expected_response().usage)
    );
    assert_eq!(
        stats.rate_limit_headers,
        BTreeMap::from([("anthropic-ratelimit-requests-remaining".into(), "99".into())])
    );
}

/// A stream with every event of the protocol, in the shape the API sends.
fn full_stream() -> String {
    [
        ("message_start", json!({"type": "message_start", "message": {"id": "msg_01", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": null, "usage": {"input_tokens": 30, "output_tokens": 1, "cache_creation_input_tokens": 5, "cache_read_input_tokens": 7}}})),
        ("content_block_start", json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}})),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Paris, so "}})),
        ("ping", json!({"type": "ping"})),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "call the tool."}})),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig-abc"}})),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 0})),
        ("content_block_start", json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}})),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Check"}})),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "ing."}})),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 1})),
        ("some_future_event", json!({"type": "some_future_event", "whatever": 1})),
        ("content_block_start", json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}})),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": ""}})),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"city\": \"Pa"}})),
        ("content_block_delta", json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "ris\"}"}})),
        ("content_block_stop", json!({"type": "content_block_stop", "index": 2})),
        ("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 12}})),
        ("message_stop", json!({"type": "message_stop"})),
    ]
    .iter()
    .map(|(name, data)| format!("event: {name}\r\ndata: {data}\r\n\r\n"))
    .collect()
}

#[tokio::test]
async fn stream_of_every_event_type_collects_to_the_complete_answer() {
    // 7-byte pieces split CRLFs, JSON and field names across network chunks.
    let server = TestServer::start(vec![
        Reply::sse(&full_stream(), 7)
            .header("request-id", "req_42")
            .header("anthropic-ratelimit-requests-remaining", "99"),
    ])
    .await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let stream = client.stream(&tool_request()).await.expect("stream");
    let response = collect(stream).await.expect("collect");

    assert_eq!(response, expected_response());
    assert_eq!(server.requests()[0].json()["stream"], json!(true));
    let stats = client.usage_stats();
    assert_eq!(
        (stats.requests, stats.usage),
        (1, expected_response().usage)
    );
}

#[test]
fn a_recorded_stream_decodes_without_a_network() {
    let events =
        llm_core::decode_event_stream(llm_core::WireFormat::Anthropic, full_stream().as_bytes())
            .expect("decode");
    let mut builder = llm_core::ResponseBuilder::default();
    for event in events {
        builder.push(event);
    }

    let expected = Response {
        request_id: None,
        headers: BTreeMap::new(),
        ..expected_response()
    };
    assert_eq!(builder.finish().expect("finished"), expected);
}

#[tokio::test]
async fn stream_events_arrive_in_order_with_utf8_split_across_chunks() {
    let text = "héllo ✓ 日本語 🦀";
    let body = [
        r#"event: message_start
data: {"type":"message_start","message":{"id":"m","model":"claude-test","usage":{"input_tokens":3,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
"#
        .to_owned(),
        format!(
            "data: {}\n\n",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})
        ),
        r#"event: message_delta
data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":9}}

event: message_stop
data: {"type":"message_stop"}

"#
        .to_owned(),
    ]
    .concat();
    // One-byte pieces split every multi-byte character.
    let server = TestServer::start(vec![Reply::sse(&body, 1)]).await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let events: Vec<Event> = client
        .stream(&Request::new("claude-test").user("hi"))
        .await
        .expect("stream")
        .map(|event| event.expect("event"))
        .collect()
        .await;

    let usage = |input_tokens, output_tokens| {
        Event::Usage(Usage {
            input_tokens,
            output_tokens,
            ..Usage::default()
        })
    };
    assert_eq!(
        events,
        vec![
            Event::Start {
                id: Some("m".into()),
                model: "claude-test".into(),
                request_id: None,
                headers: BTreeMap::new(),
            },
            usage(3, 0),
            Event::TextDelta { text: text.into() },
            usage(3, 9),
            Event::Stop {
                reason: StopReason::EndTurn
            },
        ]
    );
}

#[tokio::test]
async fn overloaded_error_event_after_200_is_a_typed_error_not_a_short_answer() {
    let body = r#"event: message_start
data: {"type":"message_start","message":{"id":"m","model":"claude-test","usage":{"input_tokens":3,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half an ans"}}

event: error
data: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}

"#;
    let server = TestServer::start(vec![Reply::sse(body, 11)]).await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let mut stream = client
        .stream(&Request::new("claude-test").user("hi"))
        .await
        .expect("stream");
    let mut texts = Vec::new();
    let error = loop {
        match stream.next().await.expect("the stream ends with an error") {
            Ok(Event::TextDelta { text }) => texts.push(text),
            Ok(_) => {}
            Err(error) => break error,
        }
    };

    assert_eq!(texts, vec!["Half an ans".to_owned()]);
    assert!(
        matches!(&error, Error::Overloaded { message, .. } if message == "Overloaded"),
        "{error:?}"
    );
    assert!(stream.next().await.is_none());
    let stats = client.usage_stats();
    assert_eq!((stats.requests, stats.failed_requests), (0, 1));
}

#[tokio::test]
async fn collect_fails_when_the_connection_closes_before_message_stop() {
    let body = r#"event: message_start
data: {"type":"message_start","message":{"id":"m","model":"claude-test","usage":{"input_tokens":3,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Half"}}

"#;
    let server = TestServer::start(vec![Reply::sse(body, 64)]).await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let stream = client
        .stream(&Request::new("claude-test").user("hi"))
        .await
        .expect("stream");
    let error = collect(stream).await.expect_err("a cut stream is an error");

    assert!(
        matches!(
            error,
            Error::StreamInterrupted {
                provider: "anthropic",
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_stalled_stream_fails_with_an_idle_timeout() {
    let body = r#"event: message_start
data: {"type":"message_start","message":{"id":"m","model":"claude-test","usage":{"input_tokens":3,"output_tokens":0}}}

"#;
    let server = TestServer::start(vec![Reply::sse(body, 1024).stalled()]).await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let mut stream = client
        .stream(&Request::new("claude-test").user("hi"))
        .await
        .expect("stream");
    assert!(matches!(stream.next().await, Some(Ok(Event::Start { .. }))));
    assert!(matches!(stream.next().await, Some(Ok(Event::Usage(_)))));
    // The idle timer starts when the next event is awaited; time moves while it waits.
    let (next, ()) = futures_util::future::join(stream.next(), async {
        clock.advance(Duration::from_secs(31));
    })
    .await;

    let error = next.expect("an item").expect_err("a timeout");
    assert!(
        matches!(
            error,
            Error::Timeout {
                phase: TimeoutPhase::StreamIdle,
                after,
                ..
            } if after == Duration::from_secs(30)
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn thinking_signature_is_passed_back_unchanged() {
    let server = TestServer::start(vec![
        Reply::json(200, MESSAGE),
        Reply::json(
            200,
            r#"{"id":"msg_02","model":"claude-test","content":[{"type":"text","text":"Sunny."}],"stop_reason":"end_turn","usage":{"input_tokens":50,"output_tokens":3}}"#,
        ),
    ])
    .await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);
    let mut request = tool_request();

    let first = client.complete(&request).await.expect("first");
    request.messages.push(first.into_message());
    request.messages.push(Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: "toolu_1".into(),
            content: "18C".into(),
            is_error: false,
        }],
    });
    let second = client.complete(&request).await.expect("second");

    assert_eq!(second.text(), "Sunny.");
    assert_eq!(
        server.requests()[1].json()["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "weather in Paris?"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Paris, so call the tool.", "signature": "sig-abc"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18C"}]},
        ])
    );
}

#[tokio::test]
async fn malformed_tool_arguments_fail_clearly_with_the_raw_text() {
    let body = r#"event: message_start
data: {"type":"message_start","message":{"id":"m","model":"claude-test","usage":{"input_tokens":3,"output_tokens":0}}}

event: content_block_start
data: {"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_9","name":"get_weather","input":{}}}

event: content_block_delta
data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"city\": Par"}}

event: content_block_stop
data: {"type":"content_block_stop","index":0}

"#;
    let server = TestServer::start(vec![Reply::sse(body, 64)]).await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let stream = client
        .stream(&Request::new("claude-test").user("hi"))
        .await
        .expect("stream");
    let error = collect(stream).await.expect_err("malformed arguments");

    match &error {
        Error::MalformedToolArguments { id, tool, raw, .. } => {
            assert_eq!(
                (id.as_str(), tool.as_str(), raw.as_str()),
                ("toolu_9", "get_weather", r#"{"city": Par"#)
            );
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(error.to_string().contains(r#"raw text: {"city": Par"#));
}

#[tokio::test]
async fn http_errors_become_typed_errors() {
    // (status, body, expected kind); none of these is retried.
    let cases = [
        (
            401,
            r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
            llm_core::ErrorKind::Authentication,
        ),
        (
            403,
            r#"{"type":"error","error":{"type":"permission_error","message":"no access"}}"#,
            llm_core::ErrorKind::Permission,
        ),
        (
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            llm_core::ErrorKind::ContextWindowExceeded,
        ),
        (
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low"}}"#,
            llm_core::ErrorKind::QuotaExhausted,
        ),
        (
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: must be positive"}}"#,
            llm_core::ErrorKind::InvalidRequest,
        ),
        (404, "not json at all", llm_core::ErrorKind::InvalidRequest),
    ];
    for (status, body, kind) in cases {
        let server = TestServer::start(vec![Reply::json(status, body)]).await;
        let clock = clock();
        let client = anthropic(&server.url, &clock);

        let error = client
            .complete(&Request::new("claude-test").user("hi"))
            .await
            .expect_err("an error");

        assert_eq!(error.kind(), kind, "{status} {body}: {error}");
        assert_eq!(server.requests().len(), 1, "{status} was retried");
        assert!(!error.to_string().contains(SECRET));
        assert!(!format!("{error:?}").contains(SECRET));
    }
}

#[tokio::test]
async fn the_key_never_shows_in_debug_output() {
    let clock = clock();
    let client = anthropic("http://127.0.0.1:9", &clock);
    let config = llm_core::AnthropicConfig::new(llm_core::ApiKey::new(SECRET));

    assert!(!format!("{client:?}").contains(SECRET));
    assert!(!format!("{config:?}").contains(SECRET));
    assert!(format!("{config:?}").contains("<redacted>"));
}
