//! The OpenAI provider in its Responses API mode: request bodies, whole and streamed answers,
//! and what one turn carries into the next (tool calls, their results, reasoning items).

use std::collections::BTreeMap;
use std::sync::Arc;

use llm_core::{
    ApiKey, ContentBlock, Error, HttpConfig, LlmClient, ManualClock, Message, OpenAiApi,
    OpenAiClient, OpenAiConfig, Provider, ProviderConfig, ReasoningItem, Request, Response,
    ResponseSchema, Role, StopReason, Thinking, Tool, ToolCall, ToolChoice, Usage, collect,
};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::server::{Reply, TestServer};
use crate::support::{SECRET, clock, http_config};

fn client(url: &str, clock: &Arc<ManualClock>) -> OpenAiClient {
    let mut config = OpenAiConfig::openai(ApiKey::new(SECRET));
    config.base_url = format!("{url}/v1");
    config.api = OpenAiApi::Responses;
    config.http = http_config(clock);
    OpenAiClient::new(config).expect("responses client")
}

/// An event stream as the API frames it: each event named, and its type in its data too.
fn events(datas: &[Value]) -> String {
    datas
        .iter()
        .enumerate()
        .map(|(sequence, data)| {
            let mut data = data.clone();
            data["sequence_number"] = json!(sequence);
            format!(
                "event: {}\ndata: {data}\n\n",
                data["type"].as_str().expect("a type")
            )
        })
        .collect()
}

fn weather_request() -> Request {
    let mut request = Request::new("gpt-test").system("be brief").max_tokens(200);
    request.messages.push(Message::user("weather in Lyon?"));
    request.tools.push(Tool {
        name: "get_weather".into(),
        description: "current weather".into(),
        input_schema: json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    });
    request.tool_choice = Some(ToolChoice::Auto);
    request.thinking = Some(Thinking {
        budget_tokens: 1024,
    });
    request
}

const SIGNATURE: &str = r#"{"encrypted_content":"gAAAA-secret","id":"rs_1","type":"reasoning"}"#;

/// One answer holding every kind of output item, whole.
const WHOLE: &str = r#"{
  "id": "resp_1", "object": "response", "created_at": 1700000000, "status": "completed",
  "model": "gpt-test-2025", "incomplete_details": null, "error": null,
  "output": [
    {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-secret", "summary": [
      {"type": "summary_text", "text": "The user wants weather."},
      {"type": "summary_text", "text": "Call the tool."}]},
    {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
     "content": [{"type": "output_text", "text": "Checking Lyon.", "annotations": []}]},
    {"type": "function_call", "id": "fc_1", "call_id": "call_7", "name": "get_weather",
     "arguments": "{\"city\":\"Lyon\"}", "status": "completed"},
    {"type": "web_search_call", "id": "ws_1", "status": "completed"}
  ],
  "usage": {"input_tokens": 50, "input_tokens_details": {"cached_tokens": 32},
            "output_tokens": 20, "output_tokens_details": {"reasoning_tokens": 12}, "total_tokens": 70}
}"#;

/// The same answer as the stream the API sends for it.
fn streamed() -> String {
    let whole: Value = serde_json::from_str(WHOLE).expect("json");
    let created = json!({"id": "resp_1", "object": "response", "status": "in_progress",
        "model": "gpt-test-2025", "output": [], "usage": null});
    let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": []});
    let message = json!({"type": "message", "id": "msg_1", "status": "in_progress",
        "role": "assistant", "content": []});
    let call = json!({"type": "function_call", "id": "fc_1", "call_id": "call_7",
        "name": "get_weather", "arguments": "", "status": "in_progress"});
    let part = |index: u64, delta: &str| {
        json!({"type": "response.reasoning_summary_text.delta",
        "item_id": "rs_1", "output_index": 0, "summary_index": index, "delta": delta})
    };
    events(&[
        json!({"type": "response.created", "response": created}),
        json!({"type": "response.in_progress", "response": created}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": reasoning}),
        json!({"type": "response.reasoning_summary_part.added", "item_id": "rs_1",
            "output_index": 0, "summary_index": 0, "part": {"type": "summary_text", "text": ""}}),
        part(0, "The user "),
        part(0, "wants weather."),
        part(1, "Call the tool."),
        json!({"type": "response.output_item.done", "output_index": 0, "item": whole["output"][0]}),
        json!({"type": "response.output_item.added", "output_index": 1, "item": message}),
        json!({"type": "response.content_part.added", "item_id": "msg_1", "output_index": 1,
            "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
            "content_index": 0, "delta": "Checking "}),
        json!({"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
            "content_index": 0, "delta": "Lyon."}),
        json!({"type": "response.output_text.done", "item_id": "msg_1", "output_index": 1,
            "content_index": 0, "text": "Checking Lyon."}),
        json!({"type": "response.output_item.done", "output_index": 1, "item": whole["output"][1]}),
        json!({"type": "response.output_item.added", "output_index": 2, "item": call}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
            "output_index": 2, "delta": "{\"city\":"}),
        json!({"type": "response.function_call_arguments.delta", "item_id": "fc_1",
            "output_index": 2, "delta": "\"Lyon\"}"}),
        json!({"type": "response.function_call_arguments.done", "item_id": "fc_1",
            "output_index": 2, "arguments": "{\"city\":\"Lyon\"}"}),
        json!({"type": "response.output_item.done", "output_index": 2, "item": whole["output"][2]}),
        json!({"type": "response.output_item.added", "output_index": 3, "item": whole["output"][3]}),
        json!({"type": "response.output_item.done", "output_index": 3, "item": whole["output"][3]}),
        json!({"type": "response.completed", "response": whole}),
    ])
}

fn expected() -> Response {
    Response {
        content: vec![
            ContentBlock::Thinking {
                text: "The user wants weather.\n\nCall the tool.".into(),
                signature: Some(SIGNATURE.into()),
            },
            ContentBlock::text("Checking Lyon."),
            ContentBlock::ToolUse(ToolCall {
                id: "call_7".into(),
                name: "get_weather".into(),
                input: json!({"city": "Lyon"}),
            }),
        ],
        stop_reason: StopReason::ToolUse,
        usage: Usage {
            input_tokens: 18,
            output_tokens: 20,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 32,
            reasoning_tokens: 12,
            cache_creation_1h_input_tokens: 0,
        },
        model: "gpt-test-2025".into(),
        id: Some("resp_1".into()),
        request_id: Some("req_9".into()),
        headers: BTreeMap::from([("x-request-id".into(), "req_9".into())]),
        service_tier: None,
    }
}

#[tokio::test]
async fn a_whole_answer_and_its_stream_give_the_same_response() {
    let server = TestServer::start(vec![
        Reply::json(200, WHOLE).header("x-request-id", "req_9"),
        Reply::sse(&streamed(), 11).header("x-request-id", "req_9"),
    ])
    .await;
    let clock = clock();
    let client = client(&server.url, &clock);

    let whole = client.complete(&weather_request()).await.expect("complete");
    let stream = client.stream(&weather_request()).await.expect("stream");
    let collected = collect(stream).await.expect("collect");

    assert_eq!(whole, expected());
    assert_eq!(collected, expected());
    let sent = server.requests();
    assert_eq!(sent[0].path, "/v1/responses");
    assert_eq!(
        sent[0].header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    assert_eq!(
        sent[0].json(),
        json!({
            "model": "gpt-test",
            "instructions": "be brief",
            "input": [{"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "weather in Lyon?"}]}],
            "max_output_tokens": 200,
            "store": false,
            "tools": [{"type": "function", "name": "get_weather", "description": "current weather",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                "strict": false}],
            "tool_choice": "auto",
            "reasoning": {"summary": "auto"},
            "include": ["reasoning.encrypted_content"],
        })
    );
    assert_eq!(sent[1].json()["stream"], json!(true));
    assert_eq!(client.usage_stats().usage.cache_read_input_tokens, 64);
}

#[tokio::test]
async fn reasoning_tool_calls_and_results_are_carried_into_the_next_request() {
    let done = r#"{"id": "resp_2", "object": "response", "status": "completed", "model": "m",
        "output": [{"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Sunny.", "annotations": []}]}],
        "usage": {"input_tokens": 90, "output_tokens": 2}}"#;
    let server = TestServer::start(vec![Reply::json(200, WHOLE), Reply::json(200, done)]).await;
    let clock = clock();
    let client = client(&server.url, &clock);

    let mut request = weather_request();
    let first = client.complete(&request).await.expect("first turn");
    request.messages.push(first.into_message());
    request.messages.push(Message {
        role: Role::User,
        content: vec![
            ContentBlock::ToolResult {
                tool_use_id: "call_7".into(),
                content: "sunny, 24C".into(),
                is_error: false,
            },
            ContentBlock::text("and tomorrow?"),
        ],
    });
    let second = client.complete(&request).await.expect("second turn");

    assert_eq!(second.text(), "Sunny.");
    assert_eq!(second.stop_reason, StopReason::EndTurn);
    assert_eq!(
        server.requests()[1].json()["input"],
        json!([
            {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "weather in Lyon?"}]},
            {"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAAA-secret",
                "summary": [{"type": "summary_text",
                    "text": "The user wants weather.\n\nCall the tool."}]},
            {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Checking Lyon."}]},
            {"type": "function_call", "call_id": "call_7", "name": "get_weather",
                "arguments": "{\"city\":\"Lyon\"}"},
            {"type": "function_call_output", "call_id": "call_7", "output": "sunny, 24C"},
            {"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "and tomorrow?"}]},
        ])
    );
}

#[tokio::test]
async fn only_reasoning_the_api_can_read_back_is_sent() {
    let server = TestServer::start(vec![Reply::json(200, WHOLE)]).await;
    let clock = clock();
    let client = client(&server.url, &clock);
    let mut request = Request::new("gpt-test");
    let without_content = ReasoningItem {
        id: "rs_2".into(),
        encrypted_content: None,
    };
    request.messages = vec![
        Message::user("hi"),
        Message {
            role: Role::Assistant,
            content: vec![
                // Anthropic's signature, a compatible server's unsigned reasoning, and an item
                // that came without encrypted content: none can be sent back.
                ContentBlock::Thinking {
                    text: "claude thought".into(),
                    signature: Some("EqQBCkYIARgCKkB".into()),
                },
                ContentBlock::Thinking {
                    text: "local thought".into(),
                    signature: None,
                },
                ContentBlock::Thinking {
                    text: "unencrypted".into(),
                    signature: Some(without_content.signature()),
                },
                ContentBlock::RedactedThinking {
                    data: "opaque".into(),
                },
                ContentBlock::text("Hello"),
                ContentBlock::text(" there."),
            ],
        },
        Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "call_1".into(),
                content: "no such file".into(),
                is_error: true,
            }],
        },
    ];
    client.complete(&request).await.expect("complete");

    let sent = server.requests()[0].json();
    assert_eq!(
        sent["input"],
        json!([
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": "Hello there."}]},
            {"type": "function_call_output", "call_id": "call_1", "output": "error: no such file"},
        ])
    );
    // No reasoning asked for: no include, which models that do not reason refuse.
    assert_eq!(
        (&sent["include"], &sent["reasoning"]),
        (&Value::Null, &Value::Null)
    );
    assert_eq!(
        ReasoningItem::from_signature(SIGNATURE),
        Some(ReasoningItem {
            id: "rs_1".into(),
            encrypted_content: Some("gAAAA-secret".into()),
        })
    );
    assert_eq!(ReasoningItem::from_signature("EqQBCkYIARgCKkB"), None);
}

#[tokio::test]
async fn a_schema_a_cache_key_and_extra_fields_reach_the_body() {
    let server = TestServer::start(vec![Reply::json(200, WHOLE)]).await;
    let clock = clock();
    let client = client(&server.url, &clock);
    let mut request = Request::new("gpt-test").user("grade it");
    request.response_schema = Some(ResponseSchema {
        name: "verdict".into(),
        schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
    });
    request.cache_key = Some("conversation-1".into());
    request.tool_choice = Some(ToolChoice::Tool {
        name: "grade".into(),
    });
    request.temperature = Some(0.25);
    request.metadata.insert("user_id".into(), "u-1".into());
    request
        .extra
        .insert("reasoning".into(), json!({"effort": "high"}));
    client.complete(&request).await.expect("complete");

    let sent = server.requests()[0].json();
    assert_eq!(
        sent,
        json!({
            "model": "gpt-test",
            "input": [{"type": "message", "role": "user",
                "content": [{"type": "input_text", "text": "grade it"}]}],
            "max_output_tokens": 4096,
            "store": false,
            "tool_choice": {"type": "function", "name": "grade"},
            "temperature": 0.25,
            "user": "u-1",
            "text": {"format": {"type": "json_schema", "name": "verdict", "strict": true,
                "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}},
            "prompt_cache_key": "conversation-1",
            "reasoning": {"effort": "high"},
            "include": ["reasoning.encrypted_content"],
        })
    );
}

/// What a stream of `datas` ends in.
async fn stream_outcome(datas: &[Value]) -> Result<Response, Error> {
    let server = TestServer::start(vec![Reply::sse(&events(datas), 64)]).await;
    let clock = clock();
    let client = client(&server.url, &clock);
    let stream = client
        .stream(&Request::new("gpt-test").user("hi"))
        .await
        .expect("stream");
    collect(stream).await
}

#[tokio::test]
async fn stream_failures_are_typed_errors() {
    let created = json!({"type": "response.created",
        "response": {"id": "resp_3", "model": "m", "status": "in_progress", "output": []}});
    let delta = json!({"type": "response.output_text.delta", "output_index": 0, "delta": "Hal"});
    let limited = stream_outcome(&[
        created.clone(),
        delta.clone(),
        json!({"type": "error", "code": "rate_limit_exceeded", "message": "slow down", "param": null}),
    ])
    .await
    .expect_err("an error event");
    assert!(
        matches!(&limited, Error::RateLimited { message, .. } if message == "slow down"),
        "{limited:?}"
    );
    let failed = stream_outcome(&[
        created.clone(),
        json!({"type": "response.failed", "response": {"id": "resp_3", "status": "failed",
            "error": {"code": "server_error", "message": "boom"}}}),
    ])
    .await
    .expect_err("a failed response");
    assert_eq!(failed.to_string(), "openai: server error (http 500): boom");
    let cut = stream_outcome(&[created.clone(), delta])
        .await
        .expect_err("cut short");
    assert!(matches!(cut, Error::StreamInterrupted { .. }), "{cut:?}");
    let incomplete = stream_outcome(&[
        created,
        json!({"type": "response.incomplete", "response": {"id": "resp_3", "model": "m",
            "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "output": [], "usage": {"input_tokens": 3, "output_tokens": 9}}}),
    ])
    .await
    .expect("an incomplete answer is an answer");
    assert_eq!(incomplete.stop_reason, StopReason::MaxTokens);
    assert_eq!(incomplete.usage.output_tokens, 9);
}

#[tokio::test]
async fn a_refusal_and_a_failed_whole_response_and_stop_sequences() {
    let refusal = r#"{"id": "resp_4", "status": "completed", "model": "m", "output": [
        {"type": "message", "id": "msg_4", "role": "assistant", "status": "completed",
         "content": [{"type": "refusal", "refusal": "I can't help with that."}]}]}"#;
    let failed = r#"{"id": "resp_5", "status": "failed", "model": "m", "output": [],
        "error": {"code": "rate_limit_exceeded", "message": "later"}}"#;
    let server = TestServer::start(vec![Reply::json(200, refusal), Reply::json(200, failed)]).await;
    let clock = clock();
    let client = client(&server.url, &clock);
    let request = Request::new("gpt-test").user("hi");

    let refused = client.complete(&request).await.expect("a refusal");
    assert_eq!(
        (refused.text(), refused.stop_reason),
        ("I can't help with that.".to_owned(), StopReason::Refusal)
    );
    let error = client.complete(&request).await.expect_err("failed");
    assert!(matches!(error, Error::RateLimited { .. }), "{error:?}");
    let mut stopping = request.clone();
    stopping.stop_sequences = vec!["END".into()];
    let error = client
        .complete(&stopping)
        .await
        .expect_err("no stop sequences");
    assert_eq!(
        error.to_string(),
        "invalid configuration: stop sequences [\"END\"]: the openai responses api takes none \
         (the chat api does)"
    );
    assert_eq!(
        server.requests().len(),
        2,
        "the refused request was never sent"
    );
}

#[test]
fn the_api_is_stored_only_when_it_is_not_the_default_and_only_for_openai_style_providers() {
    let mut config = ProviderConfig::new(Provider::OpenAi);
    assert_eq!(
        serde_json::to_value(&config).expect("json"),
        json!({"provider": "openai"})
    );
    config.api = OpenAiApi::Responses;
    let stored = serde_json::to_value(&config).expect("json");
    assert_eq!(stored, json!({"provider": "openai", "api": "responses"}));
    let read: ProviderConfig = serde_json::from_value(stored).expect("reads back");
    assert_eq!(read, config);
    assert_eq!(
        OpenAiApi::parse("chat").expect("chat"),
        OpenAiApi::ChatCompletions
    );
    assert!(OpenAiApi::parse("completions").is_err());

    let env = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "sk-env".to_owned());
    let mut anthropic = ProviderConfig::new(Provider::Anthropic);
    anthropic.api = OpenAiApi::Responses;
    let error = anthropic
        .connect(HttpConfig::default(), &env)
        .err()
        .expect("anthropic speaks its own api");
    assert_eq!(
        error.to_string(),
        "invalid configuration: api responses: only the openai-style providers (openai, \
         ollama, openai_compatible) speak another api; anthropic speaks its own"
    );
    let mut ollama = ProviderConfig::new(Provider::Ollama);
    ollama.api = OpenAiApi::Responses;
    assert!(ollama.connect(HttpConfig::default(), &|_| None).is_ok());
}
