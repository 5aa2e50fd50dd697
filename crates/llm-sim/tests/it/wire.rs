//! The bytes on the wire: each API's answers, streams and errors framed as the real
//! services frame them (snapshots), and the HTTP handling clients rely on.

use llm_sim::{FakeServer, parse_strategy};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SCRIPT: &str = r#"
responses:
  - thinking: Let me look.
    content: Reading the file now.
    tool_calls: [{id: toolu_1, name: read_file, input: {path: src/lib.rs}}]
    usage: {input_tokens: 30, output_tokens: 12, cache_read_input_tokens: 5}
  - content: Done.
    usage: {input_tokens: 40, output_tokens: 2}
  - failure: {kind: rate_limited, retry_after: 1.5}
  - failure: {kind: overloaded}
  - content: a b c d
    failure: {kind: mid_stream}
    usage: {input_tokens: 1, output_tokens: 1}
"#;

async fn server() -> FakeServer {
    let strategy = parse_strategy(SCRIPT, "wire.yaml").expect("script parses");
    FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server starts")
}

/// One request on a fresh connection; the response head and its de-chunked body.
async fn exchange(server: &FakeServer, request: &[u8]) -> String {
    let mut socket = TcpStream::connect(server.addr()).await.expect("connect");
    socket.write_all(request).await.expect("send");
    let mut raw = Vec::new();
    socket.read_to_end(&mut raw).await.expect("read");
    let raw = String::from_utf8(raw).expect("utf-8 response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head");
    let body = if head.contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_owned()
    };
    format!("{}\n\n{body}\n", head.replace("\r\n", "\n"))
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").expect("a chunk size line");
        let size = usize::from_str_radix(size, 16).expect("hex chunk size");
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
}

fn post(path: &str, body: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

fn settings() -> insta::Settings {
    let mut settings = insta::Settings::clone_current();
    settings.add_filter(r#""created":\d+"#, r#""created":[TIME]"#);
    settings.add_filter(r#""created_at":\d+"#, r#""created_at":[TIME]"#);
    settings
}

/// The whole script through one API, streamed or not, as one snapshot.
async fn transcript(path: &str, body: impl Fn(bool) -> String) -> String {
    let mut out = String::new();
    for streamed in [false, true] {
        let server = server().await;
        for call in 1..=5 {
            out.push_str(&format!("=== call {call}, stream: {streamed}\n"));
            out.push_str(&exchange(&server, &post(path, &body(streamed))).await);
        }
    }
    out
}

#[tokio::test]
async fn anthropic_messages_streams_and_errors() {
    let out = transcript("/v1/messages", |stream| {
        format!(
            r#"{{"model":"claude-test","max_tokens":100,"stream":{stream},"messages":[{{"role":"user","content":"hi"}}]}}"#
        )
    })
    .await;
    settings().bind(|| insta::assert_snapshot!(out));
}

#[tokio::test]
async fn openai_completions_chunks_and_errors() {
    let out = transcript("/v1/chat/completions", |stream| {
        format!(
            r#"{{"model":"gpt-test","stream":{stream},"stream_options":{{"include_usage":true}},"messages":[{{"role":"user","content":"hi"}}]}}"#
        )
    })
    .await;
    settings().bind(|| insta::assert_snapshot!(out));
}

#[tokio::test]
async fn openai_responses_events_and_errors() {
    let mut out = transcript("/v1/responses", |stream| {
        format!(r#"{{"model":"gpt-test","stream":{stream},"store":false,"input":"hi"}}"#)
    })
    .await;
    // What a stateless server cannot answer, named by where it is in the body.
    let server = server().await;
    for body in [
        r#"{"model":"m","input":[{"type":"item_reference","id":"msg_1"}]}"#,
        r#"{"model":"m","input":[{"role":"user","content":[{"type":"input_text"}]}]}"#,
    ] {
        out.push_str(&exchange(&server, &post("/v1/responses", body)).await);
    }
    settings().bind(|| insta::assert_snapshot!(out));
}

/// The message of an error body.
fn error_message(answer: &str) -> String {
    let (_, body) = answer.split_once("\n\n").expect("a body");
    let body: serde_json::Value = serde_json::from_str(body.trim()).expect("a json body");
    body["error"]["message"]
        .as_str()
        .expect("a message")
        .to_owned()
}

#[tokio::test]
async fn a_bad_responses_body_is_refused_naming_where_it_is_wrong() {
    let server = server().await;
    let cases = [
        ("[]", "the body must be a json object"),
        (r#"{"input": "hi"}"#, "model: field required"),
        (
            r#"{"model": 5}"#,
            "invalid type: integer `5`, expected a string at line 1 column 11",
        ),
        (
            r#"{"model": "m", "input": [{"role": "robot", "content": "x"}]}"#,
            "input[0]: unexpected role `robot`, expected system, developer, user or assistant",
        ),
        (
            r#"{"model": "m", "input": [{"type": "function_call", "name": "n", "arguments": "{}"}]}"#,
            "input[0].call_id: field required",
        ),
        (
            r#"{"model": "m", "input": [{"type": "function_call", "call_id": "c", "name": "n", "arguments": {}}]}"#,
            "input[0]: invalid type: map, expected a string",
        ),
        (
            r#"{"model": "m", "input": [{"role": "user", "content": [{"text": "x"}]}]}"#,
            "input[0].content[0].type: field required",
        ),
        (
            r#"{"model": "m", "input": [{"type": "function_call_output", "call_id": "c", "output": [{"type": "input_text"}]}]}"#,
            "input[0].output[0].text: field required",
        ),
        (
            r#"{"model": "m", "tools": [{"type": "function"}]}"#,
            "tools[0].name: field required",
        ),
        (
            r#"{"model": "m", "tool_choice": "any"}"#,
            "tool_choice: unknown variant `any`, expected one of `auto`, `required`, `none`",
        ),
        (
            r#"{"model": "m", "text": {"format": {"type": "json_schema", "name": "x"}}}"#,
            "text.format.schema: field required",
        ),
    ];
    let mut messages = Vec::new();
    for (body, _) in cases {
        let answer = exchange(&server, &post("/v1/responses", body)).await;
        assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
        messages.push(error_message(&answer));
    }
    let expected: Vec<_> = cases.iter().map(|(_, message)| *message).collect();
    assert_eq!(messages, expected);
    assert_eq!(server.served().len(), 0);
}

#[tokio::test]
async fn bad_requests_get_each_apis_error_shape() {
    let server = server().await;
    let mut out = String::new();
    let cases = [
        post("/v1/messages", r#"{"max_tokens":1,"messages":[]}"#),
        post(
            "/v1/messages",
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"system","content":"x"}]}"#,
        ),
        post(
            "/v1/messages",
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":7}]}"#,
        ),
        post(
            "/v1/messages",
            r#"{"model":"m","max_tokens":1,"messages":[{"role":"user","content":[{"type":"text"}]}]}"#,
        ),
        post("/v1/messages", "not json"),
        post("/v1/chat/completions", "not json"),
        post(
            "/v1/chat/completions",
            r#"{"model":"m","messages":[{"role":"user","content":7}]}"#,
        ),
        post("/v1/embeddings", "{}"),
        b"GET /v1/messages HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n".to_vec(),
    ];
    for request in cases {
        out.push_str(&exchange(&server, &request).await);
    }
    insta::assert_snapshot!(out);
    assert_eq!(
        server.served().len(),
        0,
        "no bad request reaches the strategy"
    );
}

#[tokio::test]
async fn a_connection_serves_requests_one_after_another_with_chunked_bodies() {
    let server = server().await;
    let body = r#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
    let (first, second) = body.split_at(20);
    let chunked = format!(
        "POST /v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n\
         {:x}\r\n{first}\r\n{:x}\r\n{second}\r\n0\r\n\r\n",
        first.len(),
        second.len()
    );
    let mut socket = TcpStream::connect(server.addr()).await.expect("connect");
    socket
        .write_all(chunked.as_bytes())
        .await
        .expect("first request");
    socket
        .write_all(&post("/v1/messages", body))
        .await
        .expect("second request");
    let mut raw = Vec::new();
    socket
        .read_to_end(&mut raw)
        .await
        .expect("both answers, then close");
    let raw = String::from_utf8(raw).expect("utf-8");
    assert_eq!(raw.matches("HTTP/1.1 200 OK").count(), 2, "{raw}");
    assert!(
        raw.contains("Reading the file now.") && raw.contains("Done."),
        "{raw}"
    );
    assert_eq!(server.served().len(), 2);
}

#[tokio::test]
async fn a_chunk_size_past_any_body_is_refused_not_trusted() {
    let server = server().await;
    for size in ["ffffffffffffffff", "4000001", "fffffffffffffffffffff"] {
        let request = format!(
            "POST /v1/messages HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n\
             {size}\r\nxx"
        );
        let answer = exchange(&server, request.as_bytes()).await;
        let status = answer.lines().next().unwrap_or_default().to_owned();
        let expected = if size.len() > 16 {
            "HTTP/1.1 400 Bad Request"
        } else {
            "HTTP/1.1 413 Payload Too Large"
        };
        assert_eq!(status, expected, "chunk size {size}: {answer}");
    }
    assert_eq!(server.served().len(), 0);
}

#[tokio::test]
async fn more_than_four_cache_breakpoints_are_refused_as_the_api_refuses_them() {
    let server = server().await;
    let block = r#"{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}"#;
    let body = format!(
        r#"{{"model": "m", "max_tokens": 5,
            "system": [{block}],
            "messages": [{{"role": "user", "content": [{block}, {block}]}},
                         {{"role": "assistant", "content": [{block}]}},
                         {{"role": "user", "content": [{block}]}}]}}"#
    );
    let answer = exchange(&server, &post("/v1/messages", &body)).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        answer.contains("A maximum of 4 blocks with cache_control may be provided. Found 5."),
        "{answer}"
    );
    // Four are taken, and read back where they were.
    let body = body.replacen(&format!("[{block}]"), r#""plain system""#, 1);
    let answer = exchange(&server, &post("/v1/messages", &body)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    let served = server.served().pop().expect("served").request;
    assert_eq!(served.cache.messages, [0, 1, 2]);
    assert!(!served.cache.system);
}
