//! Failure injection through the simulated client: each failure a script can inject, as
//! `complete` and `stream` callers see it.

use std::time::Duration;

use futures_util::StreamExt;
use llm_core::{Error, ErrorKind, Event, LlmClient};
use llm_sim::{Script, SimulatedClient};
use pretty_assertions::assert_eq;

use crate::support::request;

fn client(yaml: &str) -> SimulatedClient {
    SimulatedClient::scripted(Script::parse(yaml, "failures.yaml").expect("script parses"))
}

/// The error `complete` gives for a script's first step, and the same through `stream`
/// (from the call or from the stream, whichever fails).
async fn check(step: &str, expected: &str) {
    let yaml = format!("responses:\n  - {step}\n");
    let completed = client(&yaml)
        .complete(&request("go"))
        .await
        .expect_err("the step fails");
    assert_eq!(completed.to_string(), expected, "complete of {step}");
    let streamed = match client(&yaml).stream(&request("go")).await {
        Err(err) => err,
        Ok(stream) => {
            let items: Vec<_> = stream.collect().await;
            items
                .into_iter()
                .find_map(Result::err)
                .expect("the stream fails")
        }
    };
    assert_eq!(streamed.to_string(), expected, "stream of {step}");
}

#[tokio::test]
async fn each_failure_surfaces_as_the_error_a_real_client_raises() {
    check(
        "failure: {kind: rate_limited, retry_after: 2.5}",
        "simulated: rate limited (retry after 2.5s): simulated rate limit",
    )
    .await;
    check(
        "failure: {kind: rate_limited, message: slow down}",
        "simulated: rate limited (retry after 1s): slow down",
    )
    .await;
    check(
        "failure: {kind: overloaded}",
        "simulated: overloaded: Overloaded",
    )
    .await;
    check(
        "failure: {kind: server_error, status: 503}",
        "simulated: server error (http 503): simulated server error",
    )
    .await;
    check(
        "failure: {kind: server_error}",
        "simulated: server error (http 500): simulated server error",
    )
    .await;
    check(
        "failure: {kind: timeout}",
        "simulated: request timeout after 600s",
    )
    .await;
    check(
        "{content: one two three four, failure: {kind: mid_stream}}",
        "simulated: overloaded: Overloaded",
    )
    .await;
    check(
        "{content: x, failure: {kind: mid_stream, error: server_error, message: boom}}",
        "simulated: server error (http 500): boom",
    )
    .await;
    check(
        r#"{tool_calls: [{name: read_file, raw_input: '{"path": "src/'}]}"#,
        r#"malformed json in arguments of tool call sim_1_0 (read_file): EOF while parsing a string at line 1 column 14; raw text: {"path": "src/"#,
    )
    .await;
}

#[tokio::test]
async fn the_rate_limit_carries_its_retry_after() {
    let err = client("responses:\n  - failure: {kind: rate_limited, retry_after: 3}\n")
        .complete(&request("go"))
        .await
        .expect_err("rate limited");
    assert!(
        matches!(err, Error::RateLimited { retry_after: Some(after), .. } if after == Duration::from_secs(3)),
        "{err:?}"
    );
    assert!(err.is_retryable());
}

#[tokio::test]
async fn a_mid_stream_failure_sends_part_of_the_answer_first() {
    let client = client(
        "responses:\n  - content: one two three four five six seven eight\n    failure: {kind: mid_stream}\n",
    );
    let items: Vec<_> = client
        .stream(&request("go"))
        .await
        .expect("stream starts")
        .collect()
        .await;
    let texts: Vec<String> = items
        .iter()
        .filter_map(|item| match item {
            Ok(Event::TextDelta { text }) => Some(text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(texts, vec!["one two ", "three four "]);
    assert!(matches!(items.first(), Some(Ok(Event::Start { .. }))));
    assert!(matches!(items.last(), Some(Err(Error::Overloaded { .. }))));
}

#[tokio::test]
async fn a_malformed_tool_call_streams_its_raw_text_then_fails() {
    let client = client(
        "responses:\n  - tool_calls:\n      - name: read_file\n        raw_input: '{\"path\": \"src/lib.rs\", '\n",
    );
    let items: Vec<_> = client
        .stream(&request("go"))
        .await
        .expect("stream starts")
        .collect()
        .await;
    let arguments: String = items
        .iter()
        .filter_map(|item| match item {
            Ok(Event::ToolCallDelta { arguments, .. }) => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(arguments, r#"{"path": "src/lib.rs", "#);
    let Some(Err(Error::MalformedToolArguments { raw, tool, .. })) = items.last() else {
        panic!("the stream ends in a malformed-arguments error: {items:?}");
    };
    assert_eq!(
        (raw.as_str(), tool.as_str()),
        (r#"{"path": "src/lib.rs", "#, "read_file")
    );
}

#[tokio::test]
async fn a_failure_uses_up_its_step_and_is_counted() {
    let client = client(
        "responses:\n  - failure: {kind: overloaded}\n  - failure: {kind: timeout}\n  - content: recovered\n",
    );
    assert!(client.complete(&request("go")).await.is_err());
    assert!(client.stream(&request("go")).await.is_err());
    let response = client
        .complete(&request("go"))
        .await
        .expect("third step answers");
    assert_eq!(response.text(), "recovered");
    let stats = client.usage_stats();
    assert_eq!(
        (
            stats.requests,
            stats.failed_requests,
            stats.errors.into_iter().collect::<Vec<_>>()
        ),
        (
            1,
            2,
            vec![(ErrorKind::Timeout, 1), (ErrorKind::Overloaded, 1)]
        )
    );
}
