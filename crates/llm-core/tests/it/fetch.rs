//! `fetch_json`: one GET of a JSON document, and each way it fails naming the URL.

use std::time::Duration;

use llm_core::{Error, fetch_json};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::server::{Reply, TestServer};

const LIMIT: usize = 1024;

#[tokio::test]
async fn a_json_document_is_fetched_with_a_plain_get() {
    let server = TestServer::start(vec![Reply::json(200, r#"{"keys": [1, 2]}"#)]).await;
    let url = format!("{}/jwks.json", server.url);
    let doc = fetch_json(&url, Duration::from_secs(10), LIMIT)
        .await
        .expect("the document");
    assert_eq!(doc, json!({"keys": [1, 2]}));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/jwks.json");
    assert_eq!(requests[0].header("accept"), Some("application/json"));
    assert_eq!(requests[0].header("authorization"), None);
}

#[tokio::test]
async fn each_failure_is_typed_and_names_the_url() {
    let big = format!(r#"{{"pad": "{}"}}"#, "x".repeat(LIMIT));
    let server = TestServer::start(vec![
        Reply::json(404, "no such document"),
        Reply::json(200, &big),
        Reply::json(200, "<html>not json</html>"),
        Reply::json(200, r#"{"ok": true}"#).stalled(),
    ])
    .await;
    let url = format!("{}/jwks.json", server.url);
    let get = |timeout| fetch_json(&url, Duration::from_millis(timeout), LIMIT);

    let missing = get(10_000).await.expect_err("a 404");
    assert!(
        matches!(&missing, Error::InvalidRequest { status: 404, message, .. }
            if message.contains(&url) && message.contains("no such document")),
        "{missing:?}"
    );
    let large = get(10_000).await.expect_err("a body past the cap");
    assert!(
        matches!(&large, Error::TooLarge { url: u, limit: LIMIT, .. } if *u == url),
        "{large:?}"
    );
    let html = get(10_000).await.expect_err("not JSON");
    assert!(
        matches!(&html, Error::InvalidResponse { .. }) && html.to_string().contains(&url),
        "{html}"
    );
    // A server that sends the head and then nothing: the timeout ends the wait.
    let stalled = get(200).await.expect_err("a stalled body");
    assert!(matches!(stalled, Error::Timeout { .. }), "{stalled:?}");

    let scheme = fetch_json("file:///etc/passwd", Duration::from_secs(1), LIMIT)
        .await
        .expect_err("not http");
    assert!(
        scheme.to_string().contains("file:///etc/passwd"),
        "{scheme}"
    );
}
