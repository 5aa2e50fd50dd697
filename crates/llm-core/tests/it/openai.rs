//! The OpenAI-compatible provider end to end, including the quirks of compatible servers.

use std::collections::BTreeMap;

use llm_core::{
    ContentBlock, Error, Event, ImageSource, LlmClient, Message, Request, Response, Role,
    StopReason, Tool, ToolCall, ToolChoice, Usage, collect,
};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::server::{Reply, TestServer};
use crate::support::{SECRET, clock, compatible, openai};

fn conversation() -> Request {
    let mut request = Request::new("gpt-test").system("be brief").max_tokens(100);
    request.messages = vec![
        Message::user("weather in Paris?"),
        Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::Thinking {
                    text: "not sent".into(),
                    signature: Some("s".into()),
                },
                ContentBlock::ToolUse(ToolCall {
                    id: "call_1".into(),
                    name: "get_weather".into(),
                    input: json!({"city": "Paris"}),
                }),
            ],
        },
        Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: "no such city".into(),
                    is_error: true,
                },
                ContentBlock::text("and this picture?"),
                ContentBlock::Image {
                    source: ImageSource::Base64 {
                        media_type: "image/png".into(),
                        data: "iVBOR".into(),
                    },
                },
            ],
        },
    ];
    request.tools.push(Tool {
        name: "get_weather".into(),
        description: "current weather".into(),
        input_schema: json!({"type": "object"}),
    });
    request.tool_choice = Some(ToolChoice::Any);
    request.temperature = Some(0.5);
    request.stop_sequences = vec!["END".into()];
    request
}

#[tokio::test]
async fn complete_sends_chat_completion_and_reads_tool_calls() {
    let body = r#"{
      "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
      "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null,
        "tool_calls": [{"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Lyon\"}"}}]
      }}],
      "usage": {"prompt_tokens": 40, "completion_tokens": 9, "total_tokens": 49,
        "prompt_tokens_details": {"cached_tokens": 16}, "completion_tokens_details": {"reasoning_tokens": 4}}
    }"#;
    let server =
        TestServer::start(vec![Reply::json(200, body).header("x-request-id", "req_7")]).await;
    let clock = clock();
    let client = openai(&server.url, &clock);

    let response = client.complete(&conversation()).await.expect("complete");

    assert_eq!(
        response,
        Response {
            content: vec![ContentBlock::ToolUse(ToolCall {
                id: "call_2".into(),
                name: "get_weather".into(),
                input: json!({"city": "Lyon"}),
            })],
            stop_reason: StopReason::ToolUse,
            usage: Usage {
                input_tokens: 24,
                output_tokens: 9,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 16,
                reasoning_tokens: 4,
                cache_creation_1h_input_tokens: 0,
            },
            model: "gpt-test".into(),
            id: Some("chatcmpl-1".into()),
            request_id: Some("req_7".into()),
            headers: BTreeMap::from([("x-request-id".into(), "req_7".into())]),
            service_tier: None,
        }
    );
    let sent = &server.requests()[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    assert_eq!(
        sent.json(),
        json!({
            "model": "gpt-test",
            "max_completion_tokens": 100,
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "weather in Paris?"},
                {"role": "assistant", "content": null, "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"},
                }]},
                {"role": "tool", "tool_call_id": "call_1", "content": "error: no such city"},
                {"role": "user", "content": [
                    {"type": "text", "text": "and this picture?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBOR"}},
                ]},
            ],
            "tools": [{"type": "function", "function": {
                "name": "get_weather", "description": "current weather", "parameters": {"type": "object"},
            }}],
            "tool_choice": "required",
            "temperature": 0.5,
            "stop": ["END"],
        })
    );
}

fn chunks(datas: &[serde_json::Value]) -> String {
    let mut body: String = datas
        .iter()
        .map(|data| format!("data: {data}\n\n"))
        .collect();
    body.push_str("data: [DONE]\n\n");
    body
}

#[tokio::test]
async fn streamed_tool_calls_merge_by_index_and_usage_comes_from_the_final_chunk() {
    let body = chunks(&[
        json!({"id": "c1", "model": "gpt-test", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}], "usage": null}),
        json!({"id": "c1", "model": "gpt-test", "choices": [{"index": 0, "delta": {"content": "Looking"}, "finish_reason": null}], "usage": null}),
        json!({"id": "c1", "model": "gpt-test", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "id": "call_a", "type": "function", "function": {"name": "get_weather", "arguments": ""}},
        ]}}]}),
        json!({"id": "c1", "model": "gpt-test", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 1, "id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{\"tz\":"}},
        ]}}]}),
        json!({"id": "c1", "model": "gpt-test", "choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": 0, "function": {"arguments": "{\"city\":\"Paris\"}"}},
            {"index": 1, "function": {"arguments": "\"CET\"}"}},
        ]}}]}),
        json!({"id": "c1", "model": "gpt-test", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"id": "c1", "model": "gpt-test", "choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": 15}}),
    ]);
    let server = TestServer::start(vec![Reply::sse(&body, 13)]).await;
    let clock = clock();
    let client = openai(&server.url, &clock);

    let stream = client
        .stream(&Request::new("gpt-test").user("hi"))
        .await
        .expect("stream");
    let response = collect(stream).await.expect("collect");

    assert_eq!(
        response.content,
        vec![
            ContentBlock::text("Looking"),
            ContentBlock::ToolUse(ToolCall {
                id: "call_a".into(),
                name: "get_weather".into(),
                input: json!({"city": "Paris"}),
            }),
            ContentBlock::ToolUse(ToolCall {
                id: "call_b".into(),
                name: "get_time".into(),
                input: json!({"tz": "CET"}),
            }),
        ]
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.usage,
        Usage {
            input_tokens: 20,
            output_tokens: 15,
            ..Usage::default()
        }
    );
    let sent = server.requests()[0].json();
    assert_eq!(
        (&sent["stream"], &sent["stream_options"]),
        (&json!(true), &json!({"include_usage": true}))
    );
    // Usage reached the client's totals: it did not stay zero for a stream.
    assert_eq!(client.usage_stats().usage.total(), 35);
}

#[tokio::test]
async fn tool_call_deltas_without_id_or_index_and_a_stop_finish_still_mean_tool_use() {
    // Shaped like some local servers: no index, no id, "stop" as the finish reason, usage
    // with null choices, and no [DONE] before the connection closes.
    let body = [
        json!({"model": "local", "choices": [{"delta": {"tool_calls": [{"function": {"name": "get_weather", "arguments": "{\"ci"}}]}}]}),
        json!({"model": "local", "choices": [{"delta": {"tool_calls": [{"function": {"arguments": "ty\": \"Oslo\"}"}}]}}]}),
        json!({"model": "local", "choices": [{"delta": {}, "finish_reason": "stop"}]}),
        json!({"model": "local", "choices": null, "usage": {"prompt_tokens": 5, "completion_tokens": 6}}),
    ]
    .iter()
    .map(|data| format!("data: {data}\n\n"))
    .collect::<String>();
    let server = TestServer::start(vec![Reply::sse(&body, 5)]).await;
    let clock = clock();
    let client = compatible(&server.url, &clock);

    let stream = client
        .stream(&Request::new("local").user("hi"))
        .await
        .expect("stream");
    let response = collect(stream).await.expect("collect");

    let calls = response.tool_calls();
    assert_eq!(calls.len(), 1);
    assert!(
        calls[0].id.starts_with("call_"),
        "minted id {}",
        calls[0].id
    );
    assert_eq!(
        (calls[0].name.as_str(), &calls[0].input),
        ("get_weather", &json!({"city": "Oslo"}))
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(response.usage.output_tokens, 6);
    assert_eq!(server.requests()[0].header("authorization"), None);
    assert_eq!(server.requests()[0].json()["max_tokens"], json!(4096));
}

#[tokio::test]
async fn parallel_calls_reusing_index_zero_are_told_apart_by_id() {
    let body = chunks(&[
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "a", "function": {"name": "one", "arguments": "{}"}}]}}]}),
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "b", "function": {"name": "two", "arguments": "{\"x\":1}"}}]}}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
    ]);
    let server = TestServer::start(vec![Reply::sse(&body, 64)]).await;
    let clock = clock();
    let client = compatible(&server.url, &clock);

    let events: Vec<Event> = {
        use futures_util::StreamExt;
        client
            .stream(&Request::new("local").user("hi"))
            .await
            .expect("stream")
            .map(|event| event.expect("event"))
            .collect()
            .await
    };

    let starts: Vec<_> = events
        .iter()
        .filter_map(|event| match event {
            Event::ToolCallStart { index, id, name } => Some((*index, id.clone(), name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        starts,
        vec![
            (0, "a".to_owned(), "one".to_owned()),
            (1, "b".to_owned(), "two".to_owned()),
        ]
    );
}

#[tokio::test]
async fn malformed_streamed_tool_arguments_keep_the_raw_text() {
    let body = chunks(&[
        json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_x", "function": {"name": "edit", "arguments": "{\"path\": \"a.rs\", "}}]}}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
    ]);
    let server = TestServer::start(vec![Reply::sse(&body, 64)]).await;
    let clock = clock();
    let client = openai(&server.url, &clock);

    let stream = client
        .stream(&Request::new("gpt-test").user("hi"))
        .await
        .expect("stream");
    let error = collect(stream).await.expect_err("malformed");

    assert!(
        matches!(&error, Error::MalformedToolArguments { id, raw, .. }
            if id == "call_x" && raw == r#"{"path": "a.rs", "#),
        "{error:?}"
    );
}

#[tokio::test]
async fn stream_cut_before_any_finish_is_interrupted() {
    let body = "data: {\"choices\": [{\"delta\": {\"content\": \"Hal\"}}]}\n\n";
    let server = TestServer::start(vec![Reply::sse(body, 64)]).await;
    let clock = clock();
    let client = openai(&server.url, &clock);

    let stream = client
        .stream(&Request::new("gpt-test").user("hi"))
        .await
        .expect("stream");
    let error = collect(stream).await.expect_err("cut");

    assert!(
        matches!(error, Error::StreamInterrupted { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn error_chunk_mid_stream_is_a_typed_error() {
    let body = "data: {\"choices\": [{\"delta\": {\"content\": \"Hal\"}}]}\n\ndata: {\"error\": {\"message\": \"The server had an error\", \"type\": \"server_error\"}}\n\n";
    let server = TestServer::start(vec![Reply::sse(body, 64)]).await;
    let clock = clock();
    let client = openai(&server.url, &clock);

    let stream = client
        .stream(&Request::new("gpt-test").user("hi"))
        .await
        .expect("stream");
    let error = collect(stream).await.expect_err("error chunk");

    assert!(matches!(error, Error::Server { .. }), "{error:?}");
}

#[tokio::test]
async fn context_length_error_is_recognised() {
    let body = r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    let server = TestServer::start(vec![Reply::json(400, body)]).await;
    let clock = clock();
    let client = openai(&server.url, &clock);

    let error = client
        .complete(&Request::new("gpt-test").user("hi"))
        .await
        .expect_err("too long");

    assert!(
        matches!(error, Error::ContextWindowExceeded { .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn reasoning_content_becomes_thinking_and_refusal_a_stop_reason() {
    let body = chunks(&[
        json!({"choices": [{"delta": {"reasoning_content": "hmm"}}]}),
        json!({"choices": [{"delta": {"refusal": "I can't help with that."}}]}),
        json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
    ]);
    let server = TestServer::start(vec![Reply::sse(&body, 64)]).await;
    let clock = clock();
    let client = openai(&server.url, &clock);

    let stream = client
        .stream(&Request::new("gpt-test").user("hi"))
        .await
        .expect("stream");
    let response = collect(stream).await.expect("collect");

    assert_eq!(response.thinking().as_deref(), Some("hmm"));
    assert_eq!(response.text(), "I can't help with that.");
    assert_eq!(response.stop_reason, StopReason::Refusal);
}
