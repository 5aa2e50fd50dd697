//! `merkle mcp --http`: Streamable HTTP on loopback, spoken raw over TCP: the token check and
//! its challenge, the published metadata, the Host check, the refusals at start, and a clean
//! stop on SIGTERM. (crates/cli/tests/mcp drives the same server with the Python SDK.) OAuth
//! access tokens are in [`oauth`].
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::Workspace;

mod oauth;

const TOKEN: &str = "s3cret-token-for-tests";
const READER_TOKEN: &str = "reader-token-for-tests";

/// A running `merkle mcp --http`, killed when the test ends however it ends.
struct Server {
    child: Child,
    /// host:port it listens on.
    authority: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start(ws: &Workspace, extra: &[&str]) -> Server {
        let home = ws.tmp.path().join("home");
        let mut child = Command::new(assert_cmd::cargo::cargo_bin!("merkle"))
            .arg("--root")
            .arg(&ws.root)
            .args(["--json", "mcp", "--http"])
            .args(extra)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .env("MERKLE_TEST_TOKEN", TOKEN)
            .env("MERKLE_TEST_READER_TOKEN", READER_TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting merkle mcp --http");
        let lines = crate::stdout_lines(&mut child);
        let first = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the server prints its URL")
            .expect("a line");
        let url: Value = serde_json::from_str(&first).expect("a JSON line");
        let url = url["url"].as_str().expect("url").to_owned();
        let authority = url
            .strip_prefix("http://")
            .and_then(|u| u.strip_suffix("/mcp"))
            .expect("http://HOST:PORT/mcp")
            .to_owned();
        Server { child, authority }
    }

    /// One HTTP/1.1 exchange on a fresh connection: the status, the head and the body.
    fn exchange(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut stream = TcpStream::connect(&self.authority).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .expect("timeout");
        let mut request = format!("{method} {path} HTTP/1.1\r\nconnection: close\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            request.push_str(&format!("host: {}\r\n", self.authority));
        }
        for (k, v) in headers {
            request.push_str(&format!("{k}: {v}\r\n"));
        }
        request.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
        stream.write_all(request.as_bytes()).expect("send");
        let mut raw = Vec::new();
        let _ = stream.read_to_end(&mut raw);
        let raw = String::from_utf8_lossy(&raw).into_owned();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let session = head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        });
        Answer {
            status,
            head: head.to_ascii_lowercase(),
            body: body.to_owned(),
            session,
        }
    }

    fn initialize(&self, headers: &[(&str, &str)]) -> Answer {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "merkle-tests", "version": "0"},
            },
        });
        let mut all = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
        ];
        all.extend_from_slice(headers);
        self.exchange("POST", "/mcp", &all, &body.to_string())
    }

    /// SIGTERM, then the exit status.
    fn stop(mut self) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("kill");
        assert!(killed.success());
        for _ in 0..300 {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("merkle mcp --http did not stop within 6 s of SIGTERM");
    }
}

struct Answer {
    status: u16,
    /// Lowercased.
    head: String,
    body: String,
    /// The `mcp-session-id` the server gave, as given.
    session: Option<String>,
}

#[test]
fn without_a_token_it_answers_on_loopback_and_stops_cleanly() {
    let ws = Workspace::scanned();
    let server = Server::start(&ws, &[]);
    let init = server.initialize(&[]);
    assert_eq!(init.status, 200, "{}", init.body);
    assert!(init.body.contains("\"serverInfo\""), "{}", init.body);
    assert!(init.body.contains("\"name\":\"merkle\""), "{}", init.body);
    // Another path is not the endpoint.
    assert_eq!(server.exchange("GET", "/other", &[], "").status, 404);
    let status = server.stop();
    assert!(status.success(), "{status:?}");
}

#[test]
fn a_token_is_required_and_its_challenge_names_the_metadata() {
    let ws = Workspace::scanned();
    let server = Server::start(&ws, &["--token-env", "MERKLE_TEST_TOKEN"]);
    let metadata_url = format!(
        "http://{}/.well-known/oauth-protected-resource/mcp",
        server.authority
    );

    let none = server.initialize(&[]);
    assert_eq!(none.status, 401, "{}", none.body);
    assert!(
        none.head.contains(&format!(
            "www-authenticate: bearer resource_metadata=\"{metadata_url}\""
        )),
        "{}",
        none.head
    );
    let wrong = server.initialize(&[("authorization", "Bearer not-the-token")]);
    assert_eq!(wrong.status, 401);
    assert!(
        wrong.head.contains("error=\"invalid_token\""),
        "{}",
        wrong.head
    );

    let bearer = format!("Bearer {TOKEN}");
    let right = server.initialize(&[("authorization", &bearer)]);
    assert_eq!(right.status, 200, "{}", right.body);

    // The metadata is public: it is how a client finds out what to do.
    let metadata = server.exchange("GET", "/.well-known/oauth-protected-resource/mcp", &[], "");
    assert_eq!(metadata.status, 200);
    let doc: Value = serde_json::from_str(&metadata.body).expect("JSON metadata");
    assert_eq!(doc["resource"], format!("http://{}/mcp", server.authority));
    assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
    // The token never shows in what the server says about itself.
    assert!(!metadata.body.contains(TOKEN) && !none.head.contains(TOKEN));
}

#[test]
fn a_foreign_host_is_refused_against_dns_rebinding() {
    let ws = Workspace::scanned();
    let server = Server::start(&ws, &[]);
    let foreign = server.initialize(&[("host", "attacker.example.com")]);
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    let localhost = server.initialize(&[("host", "localhost")]);
    assert_eq!(localhost.status, 200, "{}", localhost.body);
    // A host the server was told to serve is taken.
    drop(server);
    let server = Server::start(&ws, &["--allowed-host", "merkle.internal"]);
    assert_eq!(
        server.initialize(&[("host", "merkle.internal")]).status,
        200
    );
}

#[test]
fn a_bind_beyond_loopback_without_a_token_and_a_missing_token_are_refused_at_start() {
    let ws = Workspace::scanned();
    let open = ws.run(&["mcp", "--http", "0.0.0.0:0"]);
    assert_eq!(open.code, 2, "{open}");
    assert!(open.stderr.contains("without authentication"), "{open}");
    assert!(open.stderr.contains("--token-env"), "{open}");

    let missing = ws.run(&[
        "mcp",
        "--http",
        "--token-env",
        "MERKLE_NO_SUCH_VARIABLE_HERE",
    ]);
    assert_eq!(missing.code, 2, "{missing}");
    assert!(
        missing.stderr.contains("MERKLE_NO_SUCH_VARIABLE_HERE"),
        "{missing}"
    );

    let bad = ws.run(&["mcp", "--http", "not-an-address"]);
    assert_eq!(bad.code, 2, "{bad}");
    assert!(bad.stderr.contains("not-an-address"), "{bad}");

    let stray = ws.run(&["mcp", "--token-env", "X"]);
    assert_eq!(stray.code, 2, "--token-env without --http: {stray}");
}

#[test]
fn a_readers_token_cannot_write_its_refusal_says_why_and_is_audited() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "eve", "--role", "reader"]);
    ws.ok(&["agent", "add", "bot", "--role", "synthesis"]);
    let server = Server::start(
        &ws,
        &[
            "--agent",
            "bot",
            "--token-env",
            "MERKLE_TEST_TOKEN",
            "--token-env",
            "MERKLE_TEST_READER_TOKEN=eve",
        ],
    );
    let note = json!({"path": "README.md", "type": "notes", "content": "x"});
    let reader = format!("Bearer {READER_TOKEN}");
    let reader = [("authorization", reader.as_str())];
    let session = server.session_with(&reader);
    // A reader's token is shown the reads alone.
    assert_eq!(server.tool_names(&session, &reader), READS);
    // A write is the tool's error, saying who may not and why (as on stdio), not a bare 403.
    assert_eq!(
        server.call_with(&session, &reader, "put_frame", note.clone()),
        (
            true,
            "put_frame refused: the request acts as \"eve\", whose role reader does not allow \
             it (put_frame needs the writer role)"
                .to_owned()
        )
    );
    let (failed, text) = server.call_with(&session, &reader, "synthesize", json!({"path": "src"}));
    assert!(failed && text.contains("synthesis role"), "{text}");
    // Reads pass the gate whatever the token.
    let (failed, text) = server.call_with(&session, &reader, "get_node", json!({"path": "."}));
    assert!(!failed, "{text}");

    // The server's own agent (the plain token) is shown the writes, and makes them.
    let writer = format!("Bearer {TOKEN}");
    let writer = [("authorization", writer.as_str())];
    let session = server.session_with(&writer);
    assert_eq!(server.tool_names(&session, &writer), ALL_TOOLS);
    let (failed, text) = server.call_with(&session, &writer, "put_frame", note);
    assert!(!failed, "{text}");

    let audit = std::fs::read_to_string(ws.root.join(".merkle/audit.jsonl")).expect("audit log");
    let records: Vec<Value> = audit
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON record"))
        .collect();
    let blocked: Vec<(&str, &str, &str)> = records
        .iter()
        .filter(|r| r["outcome"] == "blocked")
        .map(|r| {
            (
                r["agent"].as_str().unwrap_or(""),
                r["tool"].as_str().unwrap_or(""),
                r["role"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        blocked,
        [
            ("eve", "put_frame", "reader"),
            ("eve", "synthesize", "reader")
        ]
    );

    // Given the writer role while the server runs, eve is offered put_frame, and may make it.
    ws.ok(&["agent", "add", "eve", "--role", "writer"]);
    let session = server.session_with(&reader);
    assert!(
        server
            .tool_names(&session, &reader)
            .contains(&"put_frame".to_owned())
    );
    let note = json!({"path": "README.md", "type": "notes", "content": "eve's"});
    let (failed, text) = server.call_with(&session, &reader, "put_frame", note);
    assert!(!failed, "{text}");

    // A token naming an agent that does not exist is refused at start.
    let unknown = crate::run(
        ws.cmd(&["mcp", "--http", "--token-env", "MERKLE_TEST_TOKEN=nobody"])
            .env("MERKLE_TEST_TOKEN", TOKEN),
    );
    assert_eq!(unknown.code, 2, "{unknown}");
    assert!(unknown.stderr.contains("\"nobody\""), "{unknown}");
}

/// The tools that only read, in the order `tools/list` shows them.
const READS: [&str; 7] = [
    "get_node",
    "list_frames",
    "search",
    "context",
    "related",
    "refs",
    "status",
];

/// Every tool, in the order `tools/list` shows them.
const ALL_TOOLS: [&str; 9] = [
    "get_node",
    "list_frames",
    "put_frame",
    "synthesize",
    "search",
    "context",
    "related",
    "refs",
    "status",
];

impl Server {
    /// A session, initialized and ready for calls.
    fn session(&self) -> String {
        self.session_with(&[])
    }

    /// A session opened with `auth` (the headers that authenticate it), ready for calls.
    fn session_with(&self, auth: &[(&str, &str)]) -> String {
        let session = self.initialize(auth).session.expect("an mcp-session-id");
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let sent = self.post(&session, auth, &note);
        assert_eq!(sent.status, 202, "{}", sent.body);
        session
    }

    /// One message posted in `session`, with `auth`.
    fn post(&self, session: &str, auth: &[(&str, &str)], message: &Value) -> Answer {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-session-id", session),
            ("mcp-protocol-version", "2025-11-25"),
        ];
        headers.extend_from_slice(auth);
        self.exchange("POST", "/mcp", &headers, &message.to_string())
    }

    /// The reply to the request `method` in `session` (id 2), made with `auth`.
    fn request(&self, session: &str, auth: &[(&str, &str)], method: &str, params: Value) -> Value {
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": method, "params": params});
        let answer = self.post(session, auth, &body);
        assert_eq!(answer.status, 200, "{method}: {}", answer.body);
        answer
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m["id"] == 2)
            .unwrap_or_else(|| panic!("{method}: no reply in {}", answer.body))
    }

    /// The names `tools/list` shows in `session`.
    fn tool_names(&self, session: &str, auth: &[(&str, &str)]) -> Vec<String> {
        let listed = self.request(session, auth, "tools/list", json!({}));
        listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    /// Calls `tool` in `session`: whether it failed, and its text.
    fn call(&self, session: &str, tool: &str, arguments: Value) -> (bool, String) {
        self.call_with(session, &[], tool, arguments)
    }

    /// Calls `tool` in `session` with `auth`: whether it failed, and its text.
    fn call_with(
        &self,
        session: &str,
        auth: &[(&str, &str)],
        tool: &str,
        arguments: Value,
    ) -> (bool, String) {
        let reply = self.request(
            session,
            auth,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        );
        let result = &reply["result"];
        let text = result["content"][0]["text"].as_str().unwrap_or("");
        (result["isError"] == true, text.to_owned())
    }
}

#[test]
fn sessions_read_and_write_at_once_and_each_answers_for_the_files_as_they_are() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "bot", "--role", "writer"]);
    let server = Server::start(&ws, &["--agent", "bot"]);
    std::thread::scope(|s| {
        for i in 0..8 {
            let (server, ws) = (&server, &ws);
            s.spawn(move || {
                let session = server.session();
                // A file no one scanned, written while the other sessions read and write.
                let path = format!("src/late_{i}.rs");
                ws.write(&path, &format!("pub fn late_arrival_{i}() {{}}\n"));
                let (failed, text) = server.call(
                    &session,
                    "put_frame",
                    json!({"path": path, "type": "notes", "content": format!("note {i}")}),
                );
                assert!(!failed, "put_frame {i}: {text}");
                for _ in 0..3 {
                    let (failed, text) = server.call(&session, "get_node", json!({"path": path}));
                    assert!(!failed, "get_node {i}: {text}");
                    let node: Value = serde_json::from_str(&text).expect("JSON");
                    assert_eq!(node["frames"][0]["content"], json!(format!("note {i}")));
                    let (failed, text) = server.call(
                        &session,
                        "search",
                        json!({"query": format!("late_arrival_{i}")}),
                    );
                    assert!(!failed, "search {i}: {text}");
                    let hits: Value = serde_json::from_str(&text).expect("JSON");
                    assert_eq!(hits[0]["path"], json!(path), "{hits}");
                }
            });
        }
    });
    // Every frame was put on the file as it is.
    let status = ws.json(&["status"]);
    assert_eq!(status["changed_on_disk"], json!([]), "{status}");
    for i in 0..8 {
        let frames = ws.json(&["list-frames", &format!("src/late_{i}.rs")]);
        assert_eq!(frames.as_array().map(Vec::len), Some(1), "{frames}");
    }
}

#[test]
fn the_2026_07_28_protocol_is_served_without_sessions() {
    let ws = Workspace::scanned();
    let server = Server::start(&ws, &[]);
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    let post = |method: &str, name: Option<&str>, params: Value| {
        let mut headers = vec![
            ("content-type", "application/json"),
            ("accept", "application/json, text/event-stream"),
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", method),
        ];
        headers.extend(name.map(|n| ("mcp-name", n)));
        let body = json!({"jsonrpc": "2.0", "id": 5, "method": method, "params": params});
        let answer = server.exchange("POST", "/mcp", &headers, &body.to_string());
        assert_eq!(answer.status, 200, "{method}: {}", answer.body);
        assert_eq!(answer.session, None, "{method}: no session in 2026-07-28");
        answer
            .body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .chain(std::iter::once(answer.body.as_str()))
            .find_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .unwrap_or_else(|| panic!("{method}: no JSON in {}", answer.body))
    };
    let discovered = post("server/discover", None, json!({"_meta": meta}));
    // What is served is declared: prompts/list answers (an empty list), so prompts is a
    // capability (SEP-2575), beside tools and resources.
    let capabilities = &discovered["result"]["capabilities"];
    for served in ["tools", "resources", "prompts"] {
        assert!(capabilities[served].is_object(), "{served}: {discovered}");
    }
    let prompts = post("prompts/list", None, json!({"_meta": meta}));
    assert_eq!(prompts["result"]["prompts"], json!([]), "{prompts}");
    let versions = &discovered["result"]["supportedVersions"];
    for v in ["2025-11-25", "2026-07-28"] {
        assert!(
            versions.as_array().is_some_and(|a| a.contains(&json!(v))),
            "{discovered}"
        );
    }
    let called = post(
        "tools/call",
        Some("get_node"),
        json!({"name": "get_node", "arguments": {"path": "src"}, "_meta": meta}),
    );
    let text = called["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{called}"));
    let node: Value = serde_json::from_str(text).expect("JSON");
    assert_eq!(node["node"]["path"], json!("src"), "{node}");
}
