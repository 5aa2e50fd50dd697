//! `merkle mcp --http --issuer URL --audience URI`: OAuth access tokens (JWTs), signed here with
//! the test keys in `fixtures/oauth` (whose public halves are the JWK Sets there), checked by
//! the server: the challenge and metadata, each check that refuses a token, scopes, roles on
//! top of scopes, an agent registered while the server runs, and keys fetched from a URL.
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use super::{Answer, Server};
use crate::Workspace;

const ISSUER: &str = "https://issuer.test";
/// An http(s) URL, as a real audience is: the metadata's URL is built from it.
const AUDIENCE: &str = "https://merkle.test/mcp";
const METADATA_URL: &str = "https://merkle.test/.well-known/oauth-protected-resource/mcp";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/it/fixtures/oauth")
        .join(name)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970")
        .as_secs()
}

/// A token's claims: issued to `agent` by [`ISSUER`] for [`AUDIENCE`] with `scope`, valid
/// for an hour.
fn claims(agent: &str, scope: &str) -> Value {
    json!({
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": agent,
        "scope": scope,
        "iat": now(),
        "exp": now() + 3600,
    })
}

/// `claims`, signed with the fixture key `key` (`ec-1`, `ec-2`: ES256; `rsa-1`: RS256) and
/// naming `kid` in its header.
fn sign(key: &str, kid: Option<&str>, claims: &Value) -> String {
    let pem = std::fs::read(fixture(&format!("{key}.pem"))).expect("a fixture key");
    let (alg, key) = if key.starts_with("rsa") {
        (
            Algorithm::RS256,
            EncodingKey::from_rsa_pem(&pem).expect("an RSA key"),
        )
    } else {
        (
            Algorithm::ES256,
            EncodingKey::from_ec_pem(&pem).expect("an EC key"),
        )
    };
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, &key).expect("signing")
}

/// A token of `agent` with `scope`, signed with the key the JWK Set names `ec-1`.
fn token(agent: &str, scope: &str) -> String {
    sign("ec-1", Some("ec-1"), &claims(agent, scope))
}

fn start(ws: &Workspace, keys: &[&str]) -> Server {
    let mut args = vec!["--issuer", ISSUER, "--audience", AUDIENCE];
    args.extend_from_slice(keys);
    Server::start(ws, &args)
}

fn jwks_file() -> String {
    fixture("jwks.json").to_string_lossy().into_owned()
}

/// An MCP session opened with `token`: `initialize`, then `notifications/initialized`.
struct Session<'a> {
    server: &'a Server,
    bearer: String,
    id: String,
}

impl<'a> Session<'a> {
    fn open(server: &'a Server, token: &str) -> Session<'a> {
        let bearer = format!("Bearer {token}");
        let init = server.initialize(&[("authorization", &bearer)]);
        assert_eq!(init.status, 200, "{}", init.body);
        let id = init.session.expect("the server opens a session");
        let session = Session { server, bearer, id };
        let initialized = session.post(&json!({
            "jsonrpc": "2.0", "method": "notifications/initialized",
        }));
        assert_eq!(initialized.status, 202, "{}", initialized.body);
        session
    }

    fn post(&self, message: &Value) -> Answer {
        self.server.exchange(
            "POST",
            "/mcp",
            &[
                ("authorization", &self.bearer),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
                ("mcp-protocol-version", "2025-11-25"),
                ("mcp-session-id", &self.id),
            ],
            &message.to_string(),
        )
    }

    fn call(&self, tool: &str, arguments: Value) -> Answer {
        self.post(&json!({
            "jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }))
    }
}

fn put_frame_args() -> Value {
    json!({"path": "README.md", "type": "notes", "content": "seen by oauth"})
}

/// The `error_description` of a 401, after checking the rest of its challenge.
fn refused_because(answer: &Answer, token: &str) -> String {
    assert_eq!(answer.status, 401, "{}", answer.body);
    let challenge = answer
        .head
        .lines()
        .find_map(|l| l.strip_prefix("www-authenticate: "))
        .unwrap_or_else(|| panic!("a challenge in {}", answer.head));
    assert!(
        challenge.starts_with("bearer error=\"invalid_token\", error_description=\""),
        "{challenge}"
    );
    assert!(
        challenge.ends_with(&format!("resource_metadata=\"{METADATA_URL}\"")),
        "{challenge}"
    );
    // Nothing of the token comes back, in the head or the body.
    for part in token.split('.') {
        assert!(
            !answer.head.contains(&part.to_ascii_lowercase()) && !answer.body.contains(part),
            "the answer repeats the token: {}{}",
            answer.head,
            answer.body
        );
    }
    let start = challenge
        .find("error_description=\"")
        .expect("a description")
        + 19;
    let end = challenge[start..].find('"').expect("a closing quote");
    challenge[start..start + end].to_owned()
}

#[test]
fn every_check_of_an_oauth_token_refuses_with_401_saying_which() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "alice", "--role", "writer"]);
    let server = start(&ws, &["--jwks-file", &jwks_file()]);

    // No token: the challenge names the metadata and the scope to ask for first.
    let none = server.initialize(&[]);
    assert_eq!(none.status, 401, "{}", none.body);
    assert!(
        none.head.contains(&format!(
            "www-authenticate: bearer resource_metadata=\"{METADATA_URL}\", scope=\"merkle:read\""
        )),
        "{}",
        none.head
    );
    let metadata = server.exchange("GET", "/.well-known/oauth-protected-resource/mcp", &[], "");
    assert_eq!(metadata.status, 200);
    let doc: Value = serde_json::from_str(&metadata.body).expect("JSON metadata");
    assert_eq!(
        doc,
        json!({
            "resource": AUDIENCE,
            "authorization_servers": [ISSUER],
            "scopes_supported": ["merkle:read", "merkle:write", "merkle:synthesize"],
            "bearer_methods_supported": ["header"],
            "resource_name": "merkle",
        })
    );

    let good = claims("alice", "merkle:read");
    let with = |change: &dyn Fn(&mut Value)| {
        let mut c = good.clone();
        change(&mut c);
        c
    };
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "another audience",
            sign(
                "ec-1",
                Some("ec-1"),
                &with(&|c| c["aud"] = json!("https://elsewhere.test/mcp")),
            ),
            "the token's audience (aud) does not include https://merkle.test/mcp",
        ),
        (
            "expired an hour ago",
            sign(
                "ec-1",
                Some("ec-1"),
                &with(&|c| c["exp"] = json!(now() - 3600)),
            ),
            "the token has expired (exp)",
        ),
        (
            "not valid for an hour",
            sign(
                "ec-1",
                Some("ec-1"),
                &with(&|c| c["nbf"] = json!(now() + 3600)),
            ),
            "the token is not valid yet (nbf)",
        ),
        (
            "signed by a key not the issuer's",
            sign("ec-2", Some("ec-1"), &good),
            "the signature does not verify against the issuer's key",
        ),
        (
            "another issuer",
            sign(
                "ec-1",
                Some("ec-1"),
                &with(&|c| c["iss"] = json!("https://evil.test")),
            ),
            "the token's issuer (iss) is not https://issuer.test",
        ),
        (
            "no exp",
            sign(
                "ec-1",
                Some("ec-1"),
                &with(&|c| {
                    c.as_object_mut().expect("claims").remove("exp");
                }),
            ),
            "the token has no exp claim",
        ),
        (
            "no sub",
            sign(
                "ec-1",
                Some("ec-1"),
                &with(&|c| {
                    c.as_object_mut().expect("claims").remove("sub");
                }),
            ),
            "the token has no sub claim naming its agent",
        ),
        (
            "a kid the issuer does not publish",
            sign("ec-1", Some("ec-9"), &good),
            "the token's key (kid) is not in the issuer's key set",
        ),
        (
            "a shared secret",
            jsonwebtoken::encode(
                &Header::new(Algorithm::HS256),
                &good,
                &EncodingKey::from_secret(b"any secret at all"),
            )
            .expect("signing"),
            "the token is signed with hs256, which this server does not take (it takes rsa, \
             ecdsa and eddsa signatures, never a shared secret)",
        ),
        (
            "not a JWT",
            "not-a-jwt-at-all".to_owned(),
            "the token is not a well-formed jwt",
        ),
    ];
    for (what, token, expected) in &cases {
        let bearer = format!("Bearer {token}");
        let answer = server.initialize(&[("authorization", &bearer)]);
        assert_eq!(
            refused_because(&answer, token),
            expected.to_ascii_lowercase(),
            "{what}"
        );
    }

    // The same claims, well signed, pass: ES256 by kid, RS256 by kid, a token with no kid
    // (tried against each key that could have signed it), and one for several audiences.
    for token in [
        sign("ec-1", Some("ec-1"), &good),
        sign("rsa-1", Some("rsa-1"), &good),
        sign("ec-1", None, &good),
        sign(
            "ec-1",
            Some("ec-1"),
            &with(&|c| c["aud"] = json!(["https://elsewhere.test", AUDIENCE])),
        ),
    ] {
        let bearer = format!("bearer {token}");
        let answer = server.initialize(&[("authorization", &bearer)]);
        assert_eq!(answer.status, 200, "{}", answer.body);
    }
}

#[test]
fn scopes_and_roles_bound_what_a_token_may_call() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "alice", "--role", "writer"]);
    ws.ok(&["agent", "add", "eve", "--role", "reader"]);
    let server = start(&ws, &["--jwks-file", &jwks_file()]);

    // merkle:read lists the tools and reads.
    let reader = Session::open(&server, &token("alice", "merkle:read"));
    let tools = reader.post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert_eq!(tools.status, 200, "{}", tools.body);
    assert!(tools.body.contains("\"get_node\""), "{}", tools.body);
    let node = reader.call("get_node", json!({"path": "README.md"}));
    assert_eq!(node.status, 200, "{}", node.body);
    assert!(node.body.contains("README.md"), "{}", node.body);
    assert!(!node.body.contains("\"isError\":true"), "{}", node.body);

    // Without merkle:write, put_frame is refused naming the scope; without merkle:synthesize,
    // synthesize.
    let refused = reader.call("put_frame", put_frame_args());
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused.head.contains(&format!(
            "www-authenticate: bearer error=\"insufficient_scope\", scope=\"merkle:write\", \
             resource_metadata=\"{METADATA_URL}\""
        )),
        "{}",
        refused.head
    );
    // Its body is the JSON-RPC error of the call, which a client shows: why, in words.
    let error: Value = serde_json::from_str(&refused.body).expect("a JSON-RPC error");
    assert_eq!(
        (&error["id"], &error["error"]["message"]),
        (
            &json!(2),
            &json!(
                "put_frame needs the scope merkle:write, which this token (acting as \"alice\") \
                 lacks"
            )
        ),
        "{error}"
    );
    assert!(
        refused.head.contains("content-type: application/json"),
        "{}",
        refused.head
    );
    let synthesize = reader.call("synthesize", json!({"path": "src"}));
    assert_eq!(synthesize.status, 403, "{}", synthesize.body);
    assert!(
        synthesize.head.contains("scope=\"merkle:synthesize\""),
        "{}",
        synthesize.head
    );

    // A token with merkle:write alone may not read.
    let writer_only = Session::open(&server, &token("alice", "merkle:write"));
    let list = writer_only.post(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    assert_eq!(list.status, 403, "{}", list.body);
    assert!(list.head.contains("scope=\"merkle:read\""), "{}", list.head);

    // A writer with merkle:write writes, as itself.
    let writer = Session::open(&server, &token("alice", "merkle:read merkle:write"));
    let put = writer.call("put_frame", put_frame_args());
    assert_eq!(put.status, 200, "{}", put.body);
    assert!(put.body.contains("frame_id"), "{}", put.body);
    let frames = ws.json(&["list-frames", "README.md"]);
    let agents: Vec<&str> = frames
        .as_array()
        .expect("a list of frames")
        .iter()
        .filter_map(|f| f["agent_id"].as_str())
        .collect();
    assert_eq!(agents, ["alice"], "{frames}");

    // A reader with merkle:write is still a reader: refused, and audited. No scope would change
    // that, so it is no 403 asking for one but the tool's error, saying why.
    let eve = Session::open(&server, &token("eve", "merkle:read merkle:write"));
    let refused = eve.call("put_frame", put_frame_args());
    assert_eq!(refused.status, 200, "{}", refused.body);
    assert!(
        refused.body.contains("\"isError\":true")
            && refused
                .body
                .contains("acts as \\\"eve\\\", whose role reader does not allow it"),
        "{}",
        refused.body
    );

    let audit = ws.json(&["audit", "show"]);
    let blocked: Vec<(&str, &str, &str)> = audit
        .as_array()
        .expect("a list of records")
        .iter()
        .filter(|r| r["outcome"] == "blocked")
        .map(|r| {
            (
                r["agent"].as_str().unwrap_or(""),
                r["tool"].as_str().unwrap_or(""),
                r["rule"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        blocked,
        [
            (
                "alice",
                "put_frame",
                "mcp-http: the token lacks the scope merkle:write"
            ),
            (
                "alice",
                "synthesize",
                "mcp-http: the token lacks the scope merkle:synthesize"
            ),
            (
                "alice",
                "tools/list",
                "mcp-http: the token lacks the scope merkle:read"
            ),
            (
                "eve",
                "put_frame",
                "mcp-http: the token's agent may not write"
            ),
        ]
    );
}

#[test]
fn a_token_for_an_unregistered_agent_is_refused_until_it_is_registered() {
    let ws = Workspace::scanned();
    let server = start(&ws, &["--jwks-file", &jwks_file()]);
    let bearer = format!("Bearer {}", token("mallory", "merkle:read"));
    let refused = server.initialize(&[("authorization", &bearer)]);
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused
            .body
            .contains("\"mallory\", which is not a merkle agent: register it with `merkle agent add mallory --role reader`"),
        "{}",
        refused.body
    );
    // Registered while the server runs, the agent is known at its next request.
    ws.ok(&["agent", "add", "mallory", "--role", "reader"]);
    let taken = server.initialize(&[("authorization", &bearer)]);
    assert_eq!(taken.status, 200, "{}", taken.body);
}

/// A loopback HTTP server that answers every GET with `body` (a JWK Set), counting requests.
struct KeyServer {
    url: String,
    body: Arc<Mutex<String>>,
    hits: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl KeyServer {
    fn start(body: String) -> KeyServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let addr = listener.local_addr().expect("the address bound");
        let body = Arc::new(Mutex::new(body));
        let hits = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (body, hits, stop) = (Arc::clone(&body), Arc::clone(&hits), Arc::clone(&stop));
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(mut stream) = stream else { continue };
                    // The request's head, up to the blank line (a GET has no body).
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                        head.push(byte[0]);
                    }
                    hits.fetch_add(1, Ordering::SeqCst);
                    let body = body.lock().expect("the body").clone();
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                         content-length: {}\r\nconnection: close\r\n\r\n{body}",
                        body.len()
                    );
                }
            })
        };
        KeyServer {
            url: format!("http://{addr}/jwks.json"),
            body,
            hits,
            stop,
            thread: Some(thread),
        }
    }

    fn serve(&self, body: String) {
        *self.body.lock().expect("the body") = body;
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for KeyServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // One more connection wakes the accept loop, which sees `stop`.
        let _ = std::net::TcpStream::connect(
            self.url
                .trim_start_matches("http://")
                .split('/')
                .next()
                .unwrap_or(""),
        );
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[test]
fn keys_come_from_a_url_and_again_when_a_token_names_a_new_one() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "alice", "--role", "reader"]);
    let read = |name| std::fs::read_to_string(fixture(name)).expect("a fixture key set");
    let keys = KeyServer::start(read("jwks.json"));
    let server = start(&ws, &["--jwks-url", &keys.url]);
    assert_eq!(keys.hits(), 1, "the key set is fetched at start");

    let initialize = |token: &str| {
        let bearer = format!("Bearer {token}");
        server.initialize(&[("authorization", &bearer)])
    };
    assert_eq!(initialize(&token("alice", "merkle:read")).status, 200);
    assert_eq!(keys.hits(), 1, "a known kid needs no fetch");

    // The issuer rotates to a new key: a token naming it makes the server fetch the set again.
    keys.serve(read("jwks-rotated.json"));
    let rotated = sign("ec-2", Some("ec-2"), &claims("alice", "merkle:read"));
    let answer = initialize(&rotated);
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(keys.hits(), 2);

    // Another unknown kid within the minute: refused without a fetch.
    let unknown = sign("ec-2", Some("ec-3"), &claims("alice", "merkle:read"));
    assert_eq!(
        refused_because(&initialize(&unknown), &unknown),
        "the token's key (kid) is not in the issuer's key set"
    );
    assert_eq!(keys.hits(), 2);
}

#[test]
fn oauth_flags_that_cannot_work_are_refused_at_start() {
    let ws = Workspace::scanned();
    let no_keys = ws.run(&["mcp", "--http", "--issuer", ISSUER, "--audience", AUDIENCE]);
    assert_eq!(no_keys.code, 2, "{no_keys}");
    assert!(no_keys.stderr.contains("--jwks-file"), "{no_keys}");

    let no_audience = ws.run(&["mcp", "--http", "--issuer", ISSUER, "--jwks-file", "x"]);
    assert_eq!(no_audience.code, 2, "{no_audience}");
    assert!(no_audience.stderr.contains("--audience"), "{no_audience}");

    let missing = ws.run(&[
        "mcp",
        "--http",
        "--issuer",
        ISSUER,
        "--audience",
        AUDIENCE,
        "--jwks-file",
        "no-such-jwks.json",
    ]);
    assert_ne!(missing.code, 0, "{missing}");
    assert!(
        missing.stderr.contains("--jwks-file no-such-jwks.json"),
        "{missing}"
    );

    // A key set with no key to verify signatures with (a shared secret only).
    ws.write(
        "secret-jwks.json",
        r#"{"keys": [{"kty": "oct", "kid": "s", "k": "c2VjcmV0"}]}"#,
    );
    let secret = ws.run(&[
        "mcp",
        "--http",
        "--issuer",
        ISSUER,
        "--audience",
        AUDIENCE,
        "--jwks-file",
        "secret-jwks.json",
    ]);
    assert_ne!(secret.code, 0, "{secret}");
    assert!(
        secret.stderr.contains("no key to verify signatures with"),
        "{secret}"
    );

    // A URL where nothing listens: the server does not start without its keys.
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let url = format!("http://{}/jwks.json", closed.local_addr().expect("addr"));
    drop(closed);
    let unreachable = ws.run(&[
        "mcp",
        "--http",
        "--issuer",
        ISSUER,
        "--audience",
        AUDIENCE,
        "--jwks-url",
        &url,
    ]);
    assert_ne!(unreachable.code, 0, "{unreachable}");
    assert!(
        unreachable.stderr.contains(&format!("--jwks-url {url}")),
        "{unreachable}"
    );
}
