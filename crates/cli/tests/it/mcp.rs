//! `merkle mcp`: raw newline-delimited JSON-RPC on the binary's stdin and stdout, so the Rust
//! suite covers the MCP server without the Python SDK (crates/cli/tests/mcp drives it with that).
use std::io::Write;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Workspace, parse, run, str_field};

mod agents;
mod limit;
mod status;

/// How long one answer may take before the test fails rather than hangs.
const ANSWER_DEADLINE: Duration = Duration::from_secs(30);

/// A running `merkle mcp`, killed when the test ends however it ends.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Each line of its stdout, then `None` when it closes.
    lines: Receiver<Option<String>>,
    next_id: u64,
}

impl Server {
    fn start(ws: &Workspace, agent: &str) -> Server {
        Server::spawn(ws, &["--agent", agent], Stdio::null())
    }

    /// `merkle mcp ARGS` (no agent from the environment), its stderr to `stderr`.
    fn spawn(ws: &Workspace, args: &[&str], stderr: Stdio) -> Server {
        let merkle = Command::new(assert_cmd::cargo::cargo_bin!("merkle"));
        Server::spawn_as(merkle, ws, args, stderr)
    }

    /// [`Server::spawn`] with `merkle` the command that runs the binary.
    fn spawn_as(mut merkle: Command, ws: &Workspace, args: &[&str], stderr: Stdio) -> Server {
        let home = ws.tmp.path().join("home");
        let mut child = merkle
            .arg("--root")
            .arg(&ws.root)
            .arg("mcp")
            .args(args)
            .current_dir(&ws.root)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .env_remove("MERKLE_AGENT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("starting merkle mcp");
        let lines = crate::stdout_lines(&mut child);
        Server {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 0,
        }
    }

    /// The MCP handshake: `initialize`, then the `initialized` notification.
    fn handshake(&mut self) {
        let init = self.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "merkle-tests", "version": "0"},
            }),
        );
        assert!(init["result"].is_object(), "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("writing to merkle mcp");
        stdin.flush().expect("flushing merkle mcp's stdin");
    }

    /// Sends a request and returns its answer (`result` or `error`), checking the id matches.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let line = self
            .lines
            .recv_timeout(ANSWER_DEADLINE)
            .unwrap_or_else(|e| panic!("no answer to {method}: {e}"))
            .unwrap_or_else(|| {
                panic!("merkle mcp closed its stdout instead of answering {method}")
            });
        let answer = parse(&line);
        assert_eq!(answer["id"], json!(id), "{answer}");
        answer
    }

    /// Calls a tool; returns whether it was an error and its one text block.
    fn call(&mut self, tool: &str, arguments: Value) -> (bool, String) {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &answer["result"];
        let content = result["content"].as_array().expect("content is a list");
        assert_eq!(content.len(), 1, "{answer}");
        (
            result["isError"] == json!(true),
            str_field(&content[0], "text"),
        )
    }

    /// Calls a tool that may be cut to its budget: its text blocks.
    fn call_blocks(&mut self, tool: &str, arguments: Value) -> Vec<String> {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
        answer["result"]["content"]
            .as_array()
            .expect("content is a list")
            .iter()
            .map(|block| str_field(block, "text"))
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn help_names_the_agent_flag() {
    let ws = Workspace::empty();
    let help = ws.ok(&["mcp", "--help"]);
    assert!(
        help.starts_with("Serve the Model Context Protocol over stdio"),
        "{help}"
    );
    assert!(help.contains("--agent <AGENT>"), "{help}");
    assert!(help.contains("MERKLE_AGENT"), "{help}");
}

#[test]
fn initialize_list_tools_call_them_and_exit_when_stdin_closes() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "bot", "--role", "writer"]);
    let mut server = Server::start(&ws, "bot");

    let init = server.request(
        "initialize",
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "merkle-tests", "version": "0"},
        }),
    );
    let result = &init["result"];
    assert_eq!(
        (
            &result["protocolVersion"],
            &result["serverInfo"]["name"],
            result["capabilities"]["tools"].is_object(),
            result["capabilities"]["resources"].is_object(),
            result["capabilities"]["prompts"].is_object(),
        ),
        (&json!("2025-06-18"), &json!("merkle"), true, true, true),
        "{init}"
    );
    server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));

    let tools = server.request("tools/list", json!({}));
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .expect("a list of tools")
        .iter()
        .map(|t| t["name"].as_str().expect("a tool name"))
        .collect();
    // A writer is shown put_frame, not synthesize (mcp/agents.rs has every role).
    assert_eq!(
        names,
        [
            "get_node",
            "list_frames",
            "put_frame",
            "search",
            "context",
            "related",
            "refs",
            "status"
        ]
    );

    let (is_error, text) = server.call(
        "put_frame",
        json!({"path": "README.md", "type": "summary", "content": "The fixture's readme."}),
    );
    assert!(!is_error, "{text}");
    let put = parse(&text);
    // The CLI's put-frame of the same frame answers the same document (but `created`: the
    // frame is there now).
    let file = ws.tmp.path().join("same.txt");
    std::fs::write(&file, "The fixture's readme.").expect("writing the frame's content");
    let mut again = ws.json(&[
        "put-frame",
        "README.md",
        &file.to_string_lossy(),
        "--type",
        "summary",
        "--agent",
        "bot",
    ]);
    assert_eq!(again["created"], json!(false), "{again}");
    again["created"] = json!(true);
    assert_eq!(again, put);

    // The server holds no lock between requests: a writing command works beside it, and the
    // CLI reads what the server wrote.
    ws.ok(&["agent", "add", "carol", "--role", "reader"]);
    let cli = ws.json(&["get-node", "README.md"]);
    assert_eq!(cli["frames"][0]["frame_id"], put["frame_id"]);

    // get_node answers the document `merkle --json get-node` prints, list_frames that of
    // `merkle --json list-frames`.
    let (is_error, text) = server.call("get_node", json!({"path": "README.md"}));
    assert!(!is_error, "{text}");
    assert_eq!(parse(&text), cli);
    let (is_error, text) = server.call("list_frames", json!({"path": "README.md"}));
    assert!(!is_error, "{text}");
    assert_eq!(parse(&text), ws.json(&["list-frames", "README.md"]));

    // Failures are tool errors naming the input, and the server keeps serving.
    assert_eq!(
        server.call("get_node", json!({"path": "no/such.rs"})),
        (
            true,
            "no node at path \"no/such.rs\" in the last scan".to_owned()
        )
    );
    let (is_error, text) = server.call("list_frames", json!({}));
    assert!(is_error && text.contains("missing field `path`"), "{text}");
    let (is_error, text) = server.call("synthesize", json!({"path": "src"}));
    assert!(
        is_error && text.contains("\"bot\" has role writer and may not"),
        "{text}"
    );
    let unknown = server.request("tools/call", json!({"name": "nope", "arguments": {}}));
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown tool \"nope\"")),
        "{unknown}"
    );

    let read = server.request("resources/read", json!({"uri": "merkle://node/README.md"}));
    let doc = parse(&str_field(&read["result"]["contents"][0], "text"));
    assert_eq!(doc["frames"][0]["content"], json!("The fixture's readme."));

    // Closing stdin ends the session and the process, successfully.
    drop(server.stdin.take());
    assert_eq!(
        server.lines.recv_timeout(ANSWER_DEADLINE),
        Ok(None),
        "stdout closes"
    );
    let status = server.child.wait().expect("waiting for merkle mcp");
    assert!(status.success(), "{status}");
}

#[test]
fn search_and_related_answer_what_the_cli_prints_and_see_edits() {
    let ws = Workspace::scanned();
    ws.write(
        "src/store.rs",
        "use crate::util::answer;\npub struct Store;\n",
    );
    ws.write("Cargo.toml", "[package]\nname = \"fixture\"\n");
    let mut server = Server::start(&ws, "bot");
    server.handshake();

    // The server rescans: the file written after the last scan is found.
    let (is_error, text) = server.call("search", json!({"query": "Store", "limit": 3}));
    assert!(!is_error, "{text}");
    let cli = ws.json(&["search", "Store", "--limit", "3"]);
    assert_eq!(parse(&text), cli);
    assert_eq!(cli[0]["path"], json!("src/store.rs"));
    assert_eq!(
        cli[0]["symbols"][0],
        json!({"name": "Store", "kind": "struct", "line_start": 2, "line_end": 2, "signature": "pub struct Store"})
    );

    let (is_error, text) = server.call("search", json!({"query": "answer", "type": "function"}));
    assert!(!is_error, "{text}");
    assert_eq!(
        parse(&text),
        ws.json(&["search", "answer", "--type", "function"])
    );

    let (is_error, text) = server.call(
        "search",
        json!({"query": "answer Store", "functions": true, "limit": 4}),
    );
    assert!(!is_error, "{text}");
    assert_eq!(
        parse(&text),
        ws.json(&["search", "answer Store", "--functions", "--limit", "4"])
    );

    let (is_error, text) = server.call("related", json!({"path": "src/util/mod.rs"}));
    assert!(!is_error, "{text}");
    assert_eq!(parse(&text), ws.json(&["related", "src/util/mod.rs"]));
    assert_eq!(
        parse(&text),
        json!([
            {"path": "src/lib.rs", "relation": "imported_by", "line": 1, "specifier": "util"},
            {"path": "src/store.rs", "relation": "imported_by", "line": 1, "specifier": "crate::util::answer"},
        ])
    );

    // A task's context: what `merkle --json context` prints.
    let (is_error, text) = server.call(
        "context",
        json!({"task": "what does answer return", "budget": 200}),
    );
    assert!(!is_error, "{text}");
    assert_eq!(
        parse(&text),
        ws.json(&["context", "what does answer return", "--budget", "200"])
    );
    let (is_error, text) = server.call("context", json!({"task": "x", "budget": 0}));
    assert!(is_error && text.contains("at least 1"), "{text}");

    // A definition's callers and callees: what `merkle --json refs` prints.
    let (is_error, text) = server.call("refs", json!({"target": "answer"}));
    assert!(!is_error, "{text}");
    let refs = parse(&text);
    assert_eq!(refs, ws.json(&["refs", "answer"]));
    assert_eq!(
        refs["definitions"][0]["path"], "src/util/mod.rs",
        "{refs:#}"
    );
    // PATH:LINE in any spelling of the path, as the CLI takes it.
    let (is_error, text) = server.call("refs", json!({"target": "./src/util/mod.rs:1"}));
    assert!(!is_error, "{text}");
    assert_eq!(parse(&text), ws.json(&["refs", "src/util/mod.rs:1"]));
    let (is_error, text) = server.call("refs", json!({"target": "src/util/mod.rs:9"}));
    assert!(is_error && text.contains("src/util/mod.rs:9"), "{text}");

    // Errors name the input at fault.
    let (is_error, text) = server.call("search", json!({"query": "x", "type": "gadget"}));
    assert!(is_error && text.contains("\"gadget\""), "{text}");
    let (is_error, text) = server.call("search", json!({"query": " "}));
    assert!(is_error && text.contains("query is empty"), "{text}");
    let (is_error, text) = server.call("related", json!({"path": "no/such.rs"}));
    assert!(is_error && text.contains("no/such.rs"), "{text}");
}

/// Puts `content` on `path` as `agent` through the CLI.
fn put(ws: &Workspace, path: &str, frame_type: &str, agent: &str, content: &str) {
    let file = ws.tmp.path().join("frame.txt");
    std::fs::write(&file, content).expect("writing the frame's content");
    ws.ok(&[
        "put-frame",
        path,
        &file.to_string_lossy(),
        "--type",
        frame_type,
        "--agent",
        agent,
    ]);
}

#[test]
fn get_node_takes_every_view_option_of_the_cli() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "alice", "--role", "writer"]);
    ws.ok(&["agent", "add", "bob", "--role", "writer"]);
    put(&ws, "src/lib.rs", "summary", "alice", "lib, first take");
    put(&ws, "src/lib.rs", "summary", "alice", "lib, second take");
    put(&ws, "src/lib.rs", "notes", "bob", "bob's notes on lib");
    put(&ws, "README.md", "summary", "alice", "the readme");
    put(&ws, "src/util/mod.rs", "summary", "bob", "util by bob");
    let mut server = Server::start(&ws, "alice");
    server.handshake();

    for (arguments, flags) in [
        (
            json!({"path": "src/lib.rs", "agents": ["alice"], "all": true}),
            vec!["--agent", "alice", "--all"],
        ),
        (
            json!({"path": "src/lib.rs", "related": ["README.md", "src/util/mod.rs"],
                   "ordering": "relevance"}),
            vec![
                "--related",
                "README.md",
                "--related",
                "src/util/mod.rs",
                "--ordering",
                "relevance",
            ],
        ),
        (
            json!({"path": "src/lib.rs", "ordering": "agent_priority", "priority": ["bob", "alice"],
                   "sources": ["node", "siblings"], "max_frames": 2}),
            vec![
                "--ordering",
                "agent_priority",
                "--priority",
                "bob,alice",
                "--source",
                "node,siblings",
                "--max-frames",
                "2",
            ],
        ),
    ] {
        let (is_error, text) = server.call("get_node", arguments.clone());
        assert!(!is_error, "{arguments}: {text}");
        let mut args = vec!["get-node", "src/lib.rs"];
        args.extend(flags);
        assert_eq!(parse(&text), ws.json(&args), "{arguments}");
    }

    // The view checks stand behind the tool as behind the flags.
    let (is_error, text) = server.call(
        "get_node",
        json!({"path": "src/lib.rs", "ordering": "alphabetical"}),
    );
    assert!(is_error && text.contains("\"alphabetical\""), "{text}");
    let (is_error, text) = server.call(
        "get_node",
        json!({"path": "src/lib.rs", "related": ["no/such.rs"]}),
    );
    assert!(is_error && text.contains("no/such.rs"), "{text}");
}

#[test]
fn resources_list_in_a_workspace_never_scanned_is_empty() {
    let ws = Workspace::fixture();
    let mut server = Server::start(&ws, "w");
    server.handshake();
    let answer = server.request("resources/list", json!({}));
    assert_eq!(answer["result"]["resources"], json!([]), "{answer}");
    // Listing created nothing.
    assert!(!ws.path(".merkle").exists());
}

/// The formats JSON Schema (draft 2020-12) defines; ajv in strict mode rejects any other.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// The keywords a tool's input schema may use: JSON Schema's own and its annotations. ajv's
/// strict mode rejects unknown keywords.
const KEYWORDS: &[&str] = &[
    "$schema",
    "title",
    "description",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "format",
    "examples",
];

/// Every problem ajv's strict mode (and a single-type dialect such as Gemini's) would have with
/// `schema` at `at`.
fn strict_problems(at: &str, schema: &Value, out: &mut Vec<String>) {
    let Some(obj) = schema.as_object() else {
        out.push(format!("{at}: not an object"));
        return;
    };
    for (key, value) in obj {
        if !KEYWORDS.contains(&key.as_str()) {
            out.push(format!("{at}: keyword {key:?} is not allowed"));
        }
        match key.as_str() {
            "type" if !value.is_string() => out.push(format!("{at}: type {value} is not one type")),
            "format"
                if !value
                    .as_str()
                    .is_some_and(|f| STANDARD_FORMATS.contains(&f)) =>
            {
                out.push(format!("{at}: format {value} is not a JSON Schema format"))
            }
            _ => {}
        }
    }
    let ty = obj.get("type").and_then(Value::as_str);
    // strictTypes: keywords of a type need that type declared.
    for (key, needs) in [
        ("properties", "object"),
        ("required", "object"),
        ("additionalProperties", "object"),
        ("items", "array"),
        ("minItems", "array"),
        ("minLength", "string"),
    ] {
        if obj.contains_key(key) && ty != Some(needs) {
            out.push(format!("{at}: {key} without type {needs:?}"));
        }
    }
    if (obj.contains_key("minimum") || obj.contains_key("maximum"))
        && !matches!(ty, Some("integer" | "number"))
    {
        out.push(format!("{at}: minimum or maximum without a numeric type"));
    }
    if ty.is_none() && !obj.contains_key("enum") && !obj.contains_key("const") {
        out.push(format!("{at}: no type"));
    }
    let properties = obj.get("properties").and_then(Value::as_object);
    // strictRequired: every required property is defined.
    for name in obj
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let defined = name
            .as_str()
            .is_some_and(|n| properties.is_some_and(|p| p.contains_key(n)));
        if !defined {
            out.push(format!("{at}: required {name} is not a property"));
        }
    }
    for (name, sub) in properties.into_iter().flatten() {
        strict_problems(&format!("{at}.{name}"), sub, out);
    }
    if let Some(items) = obj.get("items") {
        strict_problems(&format!("{at}[]"), items, out);
    }
}

#[test]
fn every_tool_input_schema_passes_a_strict_json_schema_check() {
    let ws = Workspace::scanned();
    // An agent that may make every write, so that every tool is listed.
    ws.ok(&["agent", "add", "w", "--role", "synthesis"]);
    let mut server = Server::start(&ws, "w");
    server.handshake();
    let tools = server.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().expect("tools").clone();
    assert_eq!(tools.len(), 9);
    let mut problems = Vec::new();
    for tool in &tools {
        let name = str_field(tool, "name");
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], json!("object"), "{name}");
        strict_problems(&name, schema, &mut problems);
    }
    assert_eq!(problems, Vec::<String>::new());
}

#[test]
fn resources_are_listed_a_page_at_a_time_with_cursors() {
    let ws = Workspace::empty();
    for i in 0..520 {
        ws.write(&format!("f/file{i:03}.txt"), &format!("file {i}\n"));
    }
    ws.ok(&["scan"]);
    let mut generate = ws.cmd(&["generate", "-r", "--offline", "-q"]);
    assert_eq!(run(&mut generate).code, 0);
    let mut server = Server::start(&ws, "w");
    server.handshake();
    let mut seen = Vec::new();
    let mut cursor: Option<Value> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let answer = server.request("resources/list", params);
        let result = &answer["result"];
        let page = result["resources"].as_array().expect("resources");
        assert!(page.len() <= 500, "{}", page.len());
        seen.extend(page.iter().map(|r| str_field(r, "uri")));
        pages += 1;
        match result.get("nextCursor") {
            Some(next) => cursor = Some(next.clone()),
            None => break,
        }
    }
    // 520 files, their folder and the root: each listed once, in order, over two pages.
    assert_eq!(pages, 2);
    assert_eq!(seen.len(), 522);
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), seen.len());
    let answer = server.request("resources/list", json!({"cursor": "not a cursor"}));
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
}

#[test]
fn get_node_puts_the_nodes_own_frames_first_in_every_ordering() {
    let ws = Workspace::fixture();
    let mut generate = ws.cmd(&["generate", "-r", "--offline", "-q"]);
    assert_eq!(run(&mut generate).code, 0);
    // A newer frame on a related file, which recency alone would put first.
    ws.ok(&["agent", "add", "w", "--role", "writer"]);
    let mut put = ws.cmd(&[
        "put-frame",
        "src/util/mod.rs",
        "-",
        "--type",
        "note",
        "--agent",
        "w",
    ]);
    assert_eq!(run(put.write_stdin("newest, on a neighbour")).code, 0);
    let mut server = Server::start(&ws, "w");
    server.handshake();
    for ordering in ["recency", "relevance", "type_priority", "agent_priority"] {
        let (is_error, text) = server.call(
            "get_node",
            json!({
                "path": "src/lib.rs",
                "sources": ["node", "related"],
                "max_frames": 3,
                "ordering": ordering,
                "priority": ["note", "w"],
            }),
        );
        assert!(!is_error, "{ordering}: {text}");
        let frames = parse(&text)["frames"].clone();
        assert_eq!(
            frames[0]["path"],
            json!("src/lib.rs"),
            "{ordering}: {frames}"
        );
        assert!(
            frames
                .as_array()
                .expect("frames")
                .iter()
                .any(|f| f["path"] == json!("src/util/mod.rs")),
            "{ordering}: {frames}"
        );
    }
}

#[test]
fn an_answer_over_max_tokens_is_cut_at_whole_items_and_its_cursor_continues_it() {
    let ws = Workspace::scanned();
    for i in 0..30 {
        ws.write(
            &format!("src/gen/widget_{i:02}.rs"),
            &format!("pub fn widget_{i:02}() -> &'static str {{ \"widget\" }}\n"),
        );
    }
    let mut server = Server::start(&ws, "bot");
    server.handshake();
    let whole = ws.json(&["search", "widget", "--limit", "40"]);
    let whole = whole.as_array().expect("a list").clone();
    assert!(whole.len() >= 30, "{}", whole.len());

    let mut seen: Vec<Value> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut args = json!({"query": "widget", "limit": 40, "max_tokens": 300});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let blocks = server.call_blocks("search", args);
        pages += 1;
        assert!(
            blocks[0].len() <= 1200,
            "within 300 tokens: {}",
            blocks[0].len()
        );
        // Each page is whole JSON: the same hits the CLI prints, in order.
        seen.extend(parse(&blocks[0]).as_array().expect("a list").clone());
        cursor = blocks
            .get(1)
            .filter(|note| note.contains("cursor"))
            .and_then(|note| note.split('"').nth(1).map(str::to_owned));
        if cursor.is_none() {
            break;
        }
        assert!(pages < 40, "the cursor moves on");
    }
    assert!(pages > 1, "the answer was cut");
    assert_eq!(seen, whole);

    // A small answer is one block, as before; a bad cursor or budget is a tool error naming it.
    assert_eq!(server.call_blocks("status", json!({})).len(), 1);
    let (is_error, text) = server.call("search", json!({"query": "widget", "cursor": "page:2"}));
    assert!(is_error && text.contains("page:2"), "{text}");
    let (is_error, text) = server.call("search", json!({"query": "widget", "max_tokens": 0}));
    assert!(is_error && text.contains("max_tokens"), "{text}");
}

#[test]
fn every_result_names_the_root_it_answered_for() {
    let ws = Workspace::scanned();
    let mut server = Server::start(&ws, "bot");
    server.handshake();
    let root = ws.json(&["status"])["root"].clone();
    assert!(root.is_string(), "{root}");
    for (tool, args) in [
        ("status", json!({})),
        ("get_node", json!({"path": "src"})),
        ("search", json!({"query": "answer"})),
    ] {
        let answer = server.request("tools/call", json!({"name": tool, "arguments": args}));
        assert_eq!(
            answer["result"]["_meta"]["merkle/root"], root,
            "{tool}: {answer}"
        );
    }
    // A file written since: search rescans, and names the new root.
    ws.write("src/new.rs", "pub fn fresh() {}\n");
    let answer = server.request(
        "tools/call",
        json!({"name": "search", "arguments": {"query": "fresh"}}),
    );
    let after = ws.json(&["status"])["root"].clone();
    assert_ne!(after, root);
    assert_eq!(answer["result"]["_meta"]["merkle/root"], after, "{answer}");
    assert_eq!(answer["result"]["_meta"]["merkle/stale"], Value::Null);

    // Another process holds the store for writing while a file changes: the answer is not
    // waited for, it is the last scan's and says so; once the writer lets go, it is fresh.
    let writer = merkle_store::Store::open(&ws.root, &merkle_store::OpenOptions::default())
        .expect("a writer");
    ws.write("src/newer.rs", "pub fn newer() {}\n");
    let get = |server: &mut Server| {
        server.request(
            "tools/call",
            json!({"name": "get_node", "arguments": {"path": "src"}}),
        )
    };
    let held = get(&mut server);
    assert_eq!(
        held["result"]["_meta"]["merkle/stale"],
        json!(true),
        "{held}"
    );
    assert_eq!(held["result"]["_meta"]["merkle/root"], after, "{held}");
    drop(writer);
    let free = get(&mut server);
    assert_eq!(
        free["result"]["_meta"]["merkle/stale"],
        Value::Null,
        "{free}"
    );
    assert_ne!(free["result"]["_meta"]["merkle/root"], after, "{free}");
}

#[test]
fn a_long_lived_server_reads_the_files_as_they_are_now() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "bot", "--role", "writer"]);
    let mut server = Server::start(&ws, "bot");
    server.handshake();
    // A file written after the server started, never scanned by anyone: get_node finds it,
    // and a frame put on it attaches to it as it is.
    ws.write("src/later.rs", "pub fn later() {}\n");
    let (is_error, text) = server.call("get_node", json!({"path": "src/later.rs"}));
    assert!(!is_error, "{text}");
    assert_eq!(parse(&text)["node"]["path"], json!("src/later.rs"));
    let (is_error, text) = server.call(
        "put_frame",
        json!({"path": "src/later.rs", "type": "notes", "content": "new"}),
    );
    assert!(!is_error, "{text}");
    ws.write("src/later.rs", "pub fn later() { /* edited */ }\n");
    let (is_error, text) = server.call("list_frames", json!({"path": "src/later.rs"}));
    assert!(!is_error, "{text}");
    // The edit made a new node: the frame was on the old content's node.
    assert_eq!(parse(&text), json!([]));
    let status = ws.json(&["status"]);
    assert_eq!(status["changed_on_disk"], json!([]), "{status}");
}

/// The agent's tools answer search, related files and refs with the JSON `merkle --json`
/// prints (and the MCP server answers, above): one operation behind every front end.
#[test]
fn the_agent_s_tools_answer_what_the_cli_prints() {
    let ws = Workspace::scanned();
    ws.write(
        "src/store.rs",
        "use crate::util::answer;\npub struct Store;\npub fn total() -> u32 {\n    answer()\n}\n",
    );
    ws.write("Cargo.toml", "[package]\nname = \"fixture\"\n");
    let calls = [
        (
            "search_symbols",
            json!({"query": "answer Store", "limit": 3}),
        ),
        (
            "search_symbols",
            json!({"query": "answer", "functions": true, "type": "function"}),
        ),
        ("related_files", json!({"path": "src/util/mod.rs"})),
        ("refs", json!({"target": "answer"})),
        ("related_files", json!({"path": "src"})),
    ];
    // The agent's answers, with the store open in this process; the CLI's after it is closed
    // (one process writes a store at a time).
    let answers: Vec<_> = {
        let store = std::sync::Arc::new(
            merkle_store::Store::open(&ws.root, &merkle_store::OpenOptions::default())
                .expect("the workspace's store"),
        );
        let mut tools = agent_loop::tools::ToolRegistry::new(1 << 20);
        for tool in agent_loop::tools::context::context_tools(&store, "bot") {
            tools.register(tool).expect("register");
        }
        calls
            .iter()
            .map(|(name, input)| tools.call(name, input))
            .collect()
    };
    let cli = [
        ws.json(&["search", "answer Store", "--limit", "3"]),
        ws.json(&["search", "answer", "--functions", "--type", "function"]),
        ws.json(&["related", "src/util/mod.rs"]),
        ws.json(&["refs", "answer"]),
    ];
    for ((name, out), cli) in calls.iter().map(|c| c.0).zip(&answers).zip(&cli) {
        assert!(!out.is_error, "{name}: {}", out.content);
        assert_eq!(&parse(&out.content), cli, "{name}");
    }
    // Refused alike: a directory has no imports.
    let refused = &answers[4];
    assert!(
        refused.is_error && refused.content.contains("is a directory"),
        "{}",
        refused.content
    );
}

/// status and synthesize answer the documents `merkle --json status` and `merkle --json
/// synthesize` print (the same call made twice differs only in whether it wrote anything and
/// ran the policy, or found the frame made).
#[test]
fn status_and_synthesize_answer_what_the_cli_prints() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "syd", "--role", "synthesis"]);
    for path in ["src/lib.rs", "src/util/mod.rs"] {
        put(&ws, path, "summary", "syd", &format!("about {path}"));
    }
    let mut server = Server::start(&ws, "syd");
    server.handshake();
    let (is_error, text) = server.call("status", json!({}));
    assert!(!is_error, "{text}");
    assert_eq!(parse(&text), ws.json(&["status"]));

    let without_created = |mut doc: Value| {
        if let Some(o) = doc.as_object_mut() {
            o.remove("created");
            o.remove("policy_ran");
        }
        doc
    };
    let (is_error, text) =
        server.call("synthesize", json!({"path": "src/util", "type": "summary"}));
    assert!(!is_error, "{text}");
    let mcp = parse(&text);
    assert_eq!(mcp["created"], json!(true), "{mcp}");
    let cli = ws.json(&[
        "synthesize",
        "src/util",
        "--type",
        "summary",
        "--agent",
        "syd",
    ]);
    assert_eq!(cli["created"], json!(false), "{cli}");
    assert_eq!(without_created(mcp), without_created(cli));
}
