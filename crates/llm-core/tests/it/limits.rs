//! Inputs a server controls and no client should trust: huge retry hints, endless bodies and
//! events, a whole JSON answer where an event stream was asked for. Each is a typed error
//! naming what was wrong, never a panic or memory spent without bound.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use llm_core::{
    AnthropicClient, AnthropicConfig, ApiKey, Error, HttpConfig, LlmClient, ManualClock, Request,
    RetryPolicy,
};
use pretty_assertions::assert_eq;

use crate::server::{Reply, TestServer};
use crate::support::{SECRET, clock, http_config};

const RATE_LIMITED: &str =
    r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;

fn hi() -> Request {
    Request::new("claude-test").user("hi")
}

fn client(
    url: &str,
    clock: &Arc<ManualClock>,
    http: impl FnOnce(&mut HttpConfig),
) -> AnthropicClient {
    let mut config = AnthropicConfig::new(ApiKey::new(SECRET));
    config.base_url = url.to_owned();
    config.http = http_config(clock);
    http(&mut config.http);
    AnthropicClient::new(config).expect("anthropic client")
}

#[tokio::test]
async fn a_retry_after_too_long_for_a_duration_is_not_waited_for() {
    for (header, value) in [
        ("retry-after", "99999999999999999999"),
        ("retry-after-ms", "1e300"),
    ] {
        let server =
            TestServer::start(vec![Reply::json(429, RATE_LIMITED).header(header, value)]).await;
        let clock = clock();
        let client = client(&server.url, &clock, |_| {});

        let error = client.complete(&hi()).await.expect_err("rate limited");

        assert_eq!(
            error.to_string(),
            "anthropic: rate limited (retry after an unbounded wait): slow down",
            "{header}: {value}"
        );
        assert_eq!(server.requests().len(), 1, "{header}: {value}");
        assert_eq!(clock.sleeps(), Vec::<Duration>::new());
    }
}

#[tokio::test]
async fn a_rate_limit_error_says_how_long_to_wait_or_nothing() {
    let server = TestServer::start(vec![
        Reply::json(429, RATE_LIMITED).header("retry-after-ms", "200"),
        Reply::json(429, RATE_LIMITED),
    ])
    .await;
    let clock = clock();
    let client = client(&server.url, &clock, |http| http.retry = RetryPolicy::none());

    let hinted = client.complete(&hi()).await.expect_err("rate limited");
    let plain = client.complete(&hi()).await.expect_err("rate limited");

    assert_eq!(
        (hinted.to_string(), plain.to_string()),
        (
            "anthropic: rate limited (retry after 200ms): slow down".to_owned(),
            "anthropic: rate limited: slow down".to_owned()
        )
    );
}

#[tokio::test]
async fn a_body_longer_than_the_cap_is_a_typed_error() {
    let text = "x".repeat(4096);
    let body = format!(
        r#"{{"id":"m","model":"claude-test","content":[{{"type":"text","text":"{text}"}}],"stop_reason":"end_turn","usage":{{"input_tokens":1,"output_tokens":1}}}}"#
    );
    let server = TestServer::start(vec![Reply::json(200, &body)]).await;
    let clock = clock();
    let client = client(&server.url, &clock, |http| http.max_body_bytes = 1000);

    let error = client.complete(&hi()).await.expect_err("too large");

    assert_eq!(
        error.to_string(),
        format!(
            "anthropic: the response body from {}/v1/messages exceeds the limit of 1000 bytes",
            server.url
        )
    );
    assert!(matches!(error, Error::TooLarge { limit: 1000, .. }));
}

#[tokio::test]
async fn a_stream_event_longer_than_the_cap_is_a_typed_error() {
    // One line that never ends, sent in pieces: without a cap it is buffered for ever.
    let endless = format!("event: content_block_delta\ndata: {}", "x".repeat(4096));
    let server = TestServer::start(vec![Reply::sse(&endless, 512).stalled()]).await;
    let clock = clock();
    let client = client(&server.url, &clock, |http| http.max_event_bytes = 1000);

    let mut stream = client.stream(&hi()).await.expect("stream opens");
    let error = stream
        .next()
        .await
        .expect("an item")
        .expect_err("too large");

    assert_eq!(
        error.to_string(),
        format!(
            "anthropic: a stream event from {}/v1/messages exceeds the limit of 1000 bytes",
            server.url
        )
    );
}

#[tokio::test]
async fn a_json_answer_to_a_stream_request_names_its_content_type() {
    let body = r#"{"id":"m","model":"claude-test","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}"#;
    let server = TestServer::start(vec![Reply::json(200, body)]).await;
    let clock = clock();
    let client = client(&server.url, &clock, |_| {});

    let error = client.stream(&hi()).await.err().expect("not a stream");

    assert_eq!(
        error.to_string(),
        format!(
            "anthropic: invalid response: expected an event stream from {}/v1/messages, got application/json",
            server.url
        )
    );
    assert_eq!(client.usage_stats().failed_requests, 1);
}
