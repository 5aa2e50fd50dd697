//! `Server::new` and `Server::serve`: the configuration's refusals, and a server over HTTP on
//! the test's own runtime, answering a session's calls from the store until told to stop, and
//! refusing a write its token's agent may not make as a tool error that says why.
use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use context::ops::Workspace;
use mcp::{Error, HttpConfig, ServeConfig, Server, StaticToken};
use merkle_store::{OpenOptions, Role, ScanOptions, Store};
use serde_json::json;

/// A scanned workspace with one file and a reader agent.
fn workspace() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("README.md"), "# Hello\n").expect("write");
    let root = dir.path().canonicalize().expect("canonical root");
    let store = Store::open(&root, &OpenOptions::default()).expect("store");
    store.scan(&ScanOptions::default()).expect("scan");
    store.add_agent("reader", Role::Reader).expect("agent");
    (dir, Workspace::new(root, OpenOptions::default()))
}

fn http(root: &Path, addr: &str) -> HttpConfig {
    HttpConfig {
        addr: addr.parse().expect("an address"),
        tokens: Vec::new(),
        oauth: None,
        insecure_no_auth: false,
        allowed_hosts: Vec::new(),
        audit_log: root.join(".merkle").join("audit.jsonl"),
    }
}

fn config(workspace: Workspace, http: Option<HttpConfig>) -> ServeConfig {
    ServeConfig {
        workspace,
        agent: None,
        quiet: true,
        http,
    }
}

#[test]
fn a_token_of_an_unknown_agent_and_an_open_address_without_tokens_are_refused() {
    let (_dir, ws) = workspace();
    let mut with_tokens = http(&ws.root, "127.0.0.1:0");
    with_tokens.tokens = vec![
        StaticToken {
            secret: "one".to_owned(),
            agent: Some("reader".to_owned()),
        },
        StaticToken {
            secret: "two".to_owned(),
            agent: Some("ghost".to_owned()),
        },
    ];
    let refused = Server::new(config(ws.clone(), Some(with_tokens))).expect_err("refused");
    assert!(
        matches!(&refused, Error::UnknownTokenAgent { token: 1, agent } if agent == "ghost"),
        "{refused:?}"
    );

    let open = http(&ws.root, "0.0.0.0:0");
    let refused = Server::new(config(ws.clone(), Some(open))).expect_err("refused");
    assert_eq!(
        refused.to_string(),
        "refusing to serve 0.0.0.0:0 (not a loopback address) without authentication"
    );
    let mut meant = http(&ws.root, "0.0.0.0:0");
    meant.insecure_no_auth = true;
    Server::new(config(ws, Some(meant))).expect("meant");
}

/// One HTTP/1.1 POST to `/mcp` on a fresh connection: the head (lowercased) and the body.
fn post(authority: &str, session: Option<&str>, body: &serde_json::Value) -> (String, String) {
    post_as(authority, None, session, body)
}

/// [`post`] with `token` as its bearer token.
fn post_as(
    authority: &str,
    token: Option<&str>,
    session: Option<&str>,
    body: &serde_json::Value,
) -> (String, String) {
    let mut stream = TcpStream::connect(authority).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {authority}\r\nconnection: close\r\ncontent-type: \
         application/json\r\naccept: application/json, text/event-stream\r\n"
    );
    if let Some(session) = session {
        request.push_str(&format!("mcp-session-id: {session}\r\n"));
    }
    if let Some(token) = token {
        request.push_str(&format!("authorization: Bearer {token}\r\n"));
    }
    request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).expect("send");
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    (head.to_ascii_lowercase(), body.to_owned())
}

/// A session's calls, made on the blocking pool (the server runs on the test's one thread).
fn session(authority: &str) -> (String, String) {
    let (head, init) = post(
        authority,
        None,
        &json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "mcp-tests", "version": "0"},
            },
        }),
    );
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .map(str::trim)
        .expect("an mcp-session-id")
        .to_owned();
    post(
        authority,
        Some(&session),
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let (_, listed) = post(
        authority,
        Some(&session),
        &json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "list_frames", "arguments": {"path": "README.md"}},
        }),
    );
    (init, listed)
}

#[tokio::test]
async fn over_http_it_serves_the_store_on_the_callers_runtime_until_told_to_stop() {
    let (_dir, ws) = workspace();
    let server =
        Server::new(config(ws.clone(), Some(http(&ws.root, "127.0.0.1:0")))).expect("ready");
    let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = server.serve(
        async {
            let _ = stop_rx.await;
        },
        move |url| {
            let _ = url_tx.send(url.to_owned());
            Ok(())
        },
    );
    let client = async move {
        let url = url_rx.await.expect("the server announces its URL");
        let authority = url
            .strip_prefix("http://")
            .and_then(|u| u.strip_suffix(mcp::ENDPOINT))
            .expect("http://HOST:PORT/mcp")
            .to_owned();
        let answers = tokio::task::spawn_blocking(move || session(&authority))
            .await
            .expect("the client ran");
        let _ = stop_tx.send(());
        answers
    };
    let (served, (init, listed)) = tokio::join!(serving, client);
    served.expect("served, then stopped");
    assert!(init.contains(r#""name":"merkle""#), "{init}");
    // The store was read: README.md has no frames, and the answer names the tree's root.
    assert!(listed.contains(r#""text":"[]""#), "{listed}");
    let root = Store::open(
        &ws.root,
        &OpenOptions {
            read_only: true,
            ..OpenOptions::default()
        },
    )
    .expect("store")
    .root()
    .expect("root")
    .expect("scanned")
    .to_hex();
    assert!(listed.contains(&root), "{listed}");
}

/// A session's answers to the messages `calls` (requests with ids), made with `token`, each
/// parsed from its event stream; on the blocking pool.
fn answers(authority: &str, token: &str, calls: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mcp-tests", "version": "0"},
        },
    });
    let (head, _) = post_as(authority, Some(token), None, &init);
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .map(str::trim)
        .expect("an mcp-session-id")
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post_as(authority, Some(token), Some(&session), &initialized);
    calls
        .iter()
        .map(|call| {
            let (head, body) = post_as(authority, Some(token), Some(&session), call);
            assert!(head.starts_with("http/1.1 200"), "{head}\n{body}");
            body.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<serde_json::Value>(d.trim()).ok())
                .find(|m| m["id"] == call["id"])
                .unwrap_or_else(|| panic!("no answer in {body}"))
        })
        .collect()
}

#[tokio::test]
async fn over_http_a_write_the_agents_role_refuses_is_unlisted_and_a_tool_error_saying_why() {
    let (_dir, ws) = workspace();
    let mut with_token = http(&ws.root, "127.0.0.1:0");
    with_token.tokens = vec![StaticToken {
        secret: "reader-secret".to_owned(),
        agent: Some("reader".to_owned()),
    }];
    let server = Server::new(config(ws.clone(), Some(with_token))).expect("ready");
    let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let serving = server.serve(
        async {
            let _ = stop_rx.await;
        },
        move |url| {
            let _ = url_tx.send(url.to_owned());
            Ok(())
        },
    );
    let calls = [
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({
            "jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {
                "name": "put_frame",
                "arguments": {"path": "README.md", "type": "notes", "content": "x"},
            },
        }),
    ];
    let client = async move {
        let url = url_rx.await.expect("the server announces its URL");
        let authority = url
            .strip_prefix("http://")
            .and_then(|u| u.strip_suffix(mcp::ENDPOINT))
            .expect("http://HOST:PORT/mcp")
            .to_owned();
        let got = tokio::task::spawn_blocking(move || answers(&authority, "reader-secret", &calls))
            .await
            .expect("the client ran");
        let _ = stop_tx.send(());
        got
    };
    let (served, got) = tokio::join!(serving, client);
    served.expect("served, then stopped");
    let listed: Vec<&str> = got[0]["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(
        listed,
        [
            "get_node",
            "list_frames",
            "search",
            "context",
            "related",
            "refs",
            "status"
        ]
    );
    assert_eq!(
        (&got[1]["result"]["isError"], &got[1]["result"]["content"]),
        (
            &json!(true),
            &json!([{
                "type": "text",
                "text": "put_frame refused: the request acts as \"reader\", whose role reader \
                         does not allow it (put_frame needs the writer role)",
            }])
        ),
        "{}",
        got[1]
    );
}
