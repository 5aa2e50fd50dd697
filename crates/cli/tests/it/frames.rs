//! Agents and frames: registering agents, putting frames from a file or stdin, idempotence,
//! refused writes, heads and history.
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Run, Workspace, parse, run};

/// A scanned fixture with a writer `alice`, a writer `bob`, a reader `rita` and a synthesis agent
/// `sam`.
fn workspace_with_agents() -> Workspace {
    let ws = Workspace::scanned();
    for (id, role) in [
        ("alice", "writer"),
        ("bob", "writer"),
        ("rita", "reader"),
        ("sam", "synthesis"),
    ] {
        ws.ok(&["agent", "add", id, "--role", role]);
    }
    ws
}

/// `merkle --json put-frame NODE - --type TYPE --agent AGENT EXTRA...` with `content` on stdin.
fn put(ws: &Workspace, node: &str, ty: &str, agent: &str, content: &[u8], extra: &[&str]) -> Run {
    let mut args = vec![
        "--json",
        "put-frame",
        node,
        "-",
        "--type",
        ty,
        "--agent",
        agent,
    ];
    args.extend_from_slice(extra);
    run(ws.cmd(&args).write_stdin(content))
}

/// Puts a frame that must be accepted; returns the command's document.
fn put_ok(ws: &Workspace, node: &str, ty: &str, agent: &str, content: &[u8]) -> Value {
    let r = put(ws, node, ty, agent, content, &[]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r}");
    parse(&r.stdout)
}

/// The number of frames in the store, as `status` reports it.
fn frame_count(ws: &Workspace) -> Value {
    ws.json(&["status"])["frames"].take()
}

#[test]
fn agents_are_registered_listed_and_re_roled() {
    let ws = Workspace::scanned();
    let added = ws.ok(&["agent", "add", "alice", "--role", "writer"]);
    assert_eq!(added, "agent alice registered as writer\n");
    let none = json!({"provider": null, "model": null, "base_url": null, "api": null, "api_key_env": null, "price": null});
    let agent = |id: &str, role: &str| {
        let mut a = none.clone();
        a["agent_id"] = json!(id);
        a["role"] = json!(role);
        a
    };
    assert_eq!(
        ws.json(&["agent", "add", "rita", "--role", "reader"]),
        agent("rita", "reader")
    );
    ws.ok(&["agent", "add", "sam", "--role", "synthesis"]);
    assert_eq!(
        ws.json(&["agent", "list"]),
        json!([
            agent("alice", "writer"),
            agent("rita", "reader"),
            agent("sam", "synthesis"),
        ])
    );
    // Adding a registered agent again changes its role.
    ws.ok(&["agent", "add", "rita", "--role", "writer"]);
    assert_eq!(
        ws.ok(&["agent", "list"]),
        "alice\twriter\nrita\twriter\nsam\tsynthesis\n"
    );
}

#[test]
fn an_agent_keeps_its_own_model_until_told_otherwise() {
    let ws = Workspace::scanned();
    assert_eq!(
        ws.ok(&[
            "agent",
            "add",
            "gen",
            "--role",
            "synthesis",
            "--provider",
            "ollama",
            "--model",
            "qwen3",
            "--base-url",
            "http://127.0.0.1:9/v1",
        ]),
        "agent gen registered as synthesis, with its own model: ollama qwen3 http://127.0.0.1:9/v1\n"
    );
    // A role change keeps the model; a new provider replaces it whole.
    ws.ok(&["agent", "add", "gen", "--role", "writer"]);
    assert_eq!(
        ws.json(&["agent", "list"]),
        json!([{"agent_id": "gen", "role": "writer", "provider": "ollama", "model": "qwen3",
                "base_url": "http://127.0.0.1:9/v1", "api": null, "api_key_env": null, "price": null}])
    );
    ws.ok(&[
        "agent",
        "add",
        "gen",
        "--role",
        "writer",
        "--provider",
        "sim",
    ]);
    assert_eq!(ws.ok(&["agent", "list"]), "gen\twriter\tsim\n");
    ws.ok(&["agent", "add", "gen", "--role", "writer", "--no-provider"]);
    assert_eq!(ws.ok(&["agent", "list"]), "gen\twriter\n");

    // The configuration is checked when it is given, not at the first call: a usage error.
    for (flags, message) in [
        (
            vec!["--provider", "openai-compatible"],
            "error: --provider openai-compatible needs --base-url (the server's OpenAI-style API)\n",
        ),
        (
            vec!["--provider", "ollama", "--base-url", "localhost:11434"],
            "error: invalid value 'localhost:11434' for '--base-url <URL>': \"localhost:11434\": \
             expected an http:// or https:// URL with a host\n\nFor more information, try '--help'.\n",
        ),
    ] {
        let mut args = vec!["agent", "add", "bad", "--role", "writer"];
        args.extend(flags);
        let r = ws.run(&args);
        assert_eq!((r.code, r.stderr.as_str()), (2, message));
    }
    let r = ws.run(&["agent", "add", "bad", "--role", "writer", "--model", "m"]);
    assert!(r.code == 2 && r.stderr.contains("--provider"), "{r}");
    assert_eq!(
        ws.ok(&["agent", "list"]),
        "gen\twriter\n",
        "nothing was registered"
    );
}

#[test]
fn agent_ids_are_checked() {
    let ws = Workspace::scanned();
    let r = ws.run(&["agent", "add", "two words", "--role", "writer"]);
    assert_eq!(
        r,
        Run {
            code: 1,
            stdout: String::new(),
            stderr: "error: invalid agent id \"two words\": may contain only letters, digits and _ . : @ -\n"
                .into(),
        }
    );
    assert_eq!(ws.json(&["agent", "list"]), json!([]));
}

/// The same frame from a file and from stdin is one frame; putting it again changes nothing.
#[test]
fn putting_the_same_frame_twice_is_idempotent() {
    let ws = workspace_with_agents();
    let file = ws.tmp.path().join("summary.txt");
    std::fs::write(&file, "Answers questions.\n").expect("writing the frame's content");
    let file = file.to_str().expect("a UTF-8 temporary path");

    let from_file = ws.json(&[
        "put-frame",
        "src/util/mod.rs",
        file,
        "--type",
        "summary",
        "--agent",
        "alice",
    ]);
    let node_id = ws.node_id("src/util/mod.rs");
    let frame_id = from_file["frame_id"].clone();
    assert_eq!(
        from_file,
        json!({"frame_id": frame_id, "node_id": node_id, "path": "src/util/mod.rs", "created": true})
    );
    let from_stdin = put_ok(
        &ws,
        "src/util/mod.rs",
        "summary",
        "alice",
        b"Answers questions.\n",
    );
    assert_eq!(
        from_stdin,
        json!({"frame_id": frame_id, "node_id": node_id, "path": "src/util/mod.rs", "created": false})
    );
    // Without --json, put-frame prints the FrameID alone.
    let text = ws.ok(&[
        "put-frame",
        "src/util/mod.rs",
        file,
        "--type",
        "summary",
        "--agent",
        "alice",
    ]);
    assert_eq!(Value::String(text.trim_end().to_owned()), frame_id);

    let frames = ws.json(&["list-frames", "src/util/mod.rs"]);
    assert_eq!(frames.as_array().map(Vec::len), Some(1));
    assert_eq!(frame_count(&ws), json!(1));
    ws.settings()
        .bind(|| insta::assert_json_snapshot!("idempotent_put_frames", frames));
    ws.assert_valid();
}

/// Metadata is not part of a frame's identity: a second put with other metadata is the same
/// frame, and the first put's metadata stays.
#[test]
fn metadata_is_kept_but_not_part_of_the_frame_id() {
    let ws = workspace_with_agents();
    let meta = [
        "--provider",
        "anthropic",
        "--model",
        "m-1",
        "--meta",
        "run=1",
        "--meta",
        "note=a=b",
    ];
    let first = put(&ws, "README.md", "summary", "alice", b"A fixture.\n", &meta);
    let second = put(
        &ws,
        "README.md",
        "summary",
        "alice",
        b"A fixture.\n",
        &["--model", "m-2"],
    );
    let (first, second) = (parse(&first.stdout), parse(&second.stdout));
    assert_eq!(
        (&first["created"], &second["created"], &second["frame_id"]),
        (&json!(true), &json!(false), &first["frame_id"])
    );
    let head = ws.json(&["get-head", "README.md", "--type", "summary"]);
    ws.settings().bind(|| {
        insta::assert_json_snapshot!("frame_with_metadata", head);
        insta::assert_snapshot!(
            "frame_with_metadata_text",
            ws.ok(&["get-head", "README.md", "--type", "summary"])
        );
    });
}

/// The FrameID covers the agent, the type, the content and the basis.
#[test]
fn each_identity_field_changes_the_frame_id() {
    let ws = workspace_with_agents();
    let id = |v: Value| v["frame_id"].as_str().expect("a frame id").to_owned();
    let base = id(put_ok(&ws, "src/lib.rs", "summary", "alice", b"lib\n"));
    // Any hash but another node's id (which names that node: refused below).
    let other_basis = "ab".repeat(32);
    let r = put(
        &ws,
        "src/lib.rs",
        "summary",
        "alice",
        b"lib\n",
        &["--basis", &ws.node_id("README.md")],
    );
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr
            .contains("is the NodeID of \\\"README.md\\\", another node"),
        "{r}"
    );
    let variants = [
        (
            "agent",
            put(&ws, "src/lib.rs", "summary", "bob", b"lib\n", &[]),
        ),
        (
            "synthesis agent",
            put(&ws, "src/lib.rs", "summary", "sam", b"lib\n", &[]),
        ),
        (
            "type",
            put(&ws, "src/lib.rs", "notes", "alice", b"lib\n", &[]),
        ),
        (
            "content",
            put(&ws, "src/lib.rs", "summary", "alice", b"lib!\n", &[]),
        ),
        (
            "basis",
            put(
                &ws,
                "src/lib.rs",
                "summary",
                "alice",
                b"lib\n",
                &["--basis", &other_basis],
            ),
        ),
    ];
    let mut seen = std::collections::BTreeSet::from([base]);
    for (what, r) in variants {
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{what}: {r}");
        let v = parse(&r.stdout);
        assert_eq!(v["created"], json!(true), "{what}");
        assert!(seen.insert(id(v)), "another {what} gave the same FrameID");
    }
    assert_eq!(frame_count(&ws), json!(6));
    let frames = ws.json(&["list-frames", "src/lib.rs"]);
    ws.settings()
        .bind(|| insta::assert_json_snapshot!("frames_by_identity_field", frames));
    ws.assert_valid();
}

/// A refused put exits 1, names the agent (and its role) on stderr, and writes nothing.
fn check_refused(agent: &str, stderr: &str) {
    let ws = workspace_with_agents();
    put_ok(&ws, "src/lib.rs", "summary", "alice", b"first\n");
    let before = ws.json(&["list-frames", "src/lib.rs"]);
    let r = put(&ws, "src/lib.rs", "summary", agent, b"refused\n", &[]);
    // Under --json the error is one object on stderr.
    let error = parse(&r.stderr);
    assert_eq!(error["kind"], json!("invalid"), "{r}");
    assert_eq!(
        Run {
            stderr: format!("error: {}\n", error["error"].as_str().unwrap_or_default()),
            ..r
        },
        Run {
            code: 1,
            stdout: String::new(),
            stderr: stderr.into()
        }
    );
    assert_eq!(ws.json(&["list-frames", "src/lib.rs"]), before);
    assert_eq!(frame_count(&ws), json!(1));
    ws.assert_valid();
}

#[test]
fn a_reader_may_not_put_frames() {
    check_refused(
        "rita",
        "error: agent \"rita\" has role reader and may not put frames\n",
    );
}

#[test]
fn an_unknown_agent_may_not_put_frames() {
    check_refused(
        "ghost",
        "error: unknown agent \"ghost\": register it with `merkle agent add ghost --role writer`\n",
    );
}

/// History is kept per type in append order; the head is the latest; `get-node` shows the head
/// of every type.
#[test]
fn heads_history_and_get_node() {
    let ws = workspace_with_agents();
    put_ok(&ws, "src", "summary", "alice", b"v1\n");
    put_ok(&ws, "src", "notes", "bob", b"a note\n");
    let v2 = put_ok(&ws, "src", "summary", "sam", b"v2\n");

    let all = ws.json(&["list-frames", "src"]);
    let order: Vec<_> = all
        .as_array()
        .expect("a list")
        .iter()
        .map(|f| (f["frame_type"].clone(), f["content"].clone()))
        .collect();
    assert_eq!(
        order,
        [
            (json!("summary"), json!("v1\n")),
            (json!("notes"), json!("a note\n")),
            (json!("summary"), json!("v2\n")),
        ]
    );
    let summaries = ws.json(&["list-frames", "src", "--type", "summary"]);
    assert_eq!(summaries, json!([all[0], all[2]]));
    let head = ws.json(&["get-head", "src", "--type", "summary"]);
    assert_eq!((&head, &head["frame_id"]), (&all[2], &v2["frame_id"]));

    // The default view: the head of each type, newest first, each with where it came from.
    let node = ws.json(&["get-node", "src"]);
    let composed = |f: &serde_json::Value| {
        let mut f = f.clone();
        f["source"] = json!("node");
        f["path"] = json!("src");
        f
    };
    assert_eq!(
        node["frames"],
        json!([composed(&all[2]), composed(&all[1])])
    );
    assert_eq!(node["frame_count"], json!(2));
    ws.settings().bind(|| {
        insta::assert_json_snapshot!("get_node_with_heads", node);
        insta::assert_snapshot!("get_node_with_heads_text", ws.ok(&["get-node", "src"]));
        insta::assert_snapshot!(
            "list_frames_summary_text",
            ws.ok(&["list-frames", "src", "--type", "summary"])
        );
    });

    let missing = ws.run(&["get-head", "src", "--type", "review"]);
    assert_eq!(
        (missing.code, missing.stderr.as_str()),
        (1, "error: no frame of type \"review\" on \"src\"\n")
    );
    assert_eq!(
        ws.ok(&["list-frames", "src", "--type", "review"]),
        "no frames\n"
    );
    assert_eq!(
        ws.json(&["list-frames", "src", "--type", "review"]),
        json!([])
    );
    ws.assert_valid();
}

/// Content that is not UTF-8 is kept byte for byte and shown as base64.
#[test]
fn binary_content_is_shown_as_base64() {
    let ws = workspace_with_agents();
    put_ok(&ws, ".", "blob", "alice", &[0xff, 0x00, 0xfe]);
    let head = ws.json(&["get-head", ".", "--type", "blob"]);
    assert_eq!(
        (&head["content"], &head["content_encoding"]),
        (&json!("/wD+"), &json!("base64"))
    );
    let text = ws.ok(&["get-head", ".", "--type", "blob"]);
    assert!(
        text.ends_with("\n    (3 bytes of binary content)\n"),
        "{text}"
    );
    ws.assert_valid();
}

/// A frame stays with the node it was put on: after an edit and a rescan, the path names a new
/// node without frames, and the old NodeID still reaches the frame.
#[test]
fn frames_stay_with_the_content_they_were_put_on() {
    let ws = workspace_with_agents();
    let old = ws.node_id("src/util/x.rs");
    put_ok(&ws, "src/util/x.rs", "summary", "alice", b"three a's\n");
    ws.write("src/util/x.rs", "bbb\n");
    ws.ok(&["scan"]);

    let now = ws.json(&["get-node", "src/util/x.rs"]);
    assert_ne!(now["node"]["node_id"], json!(old));
    assert_eq!(now["frames"], json!([]));
    let by_id = ws.json(&["get-node", &old]);
    assert_eq!(
        (&by_id["node"]["path"], &by_id["frames"][0]["content"]),
        (&json!("src/util/x.rs"), &json!("three a's\n"))
    );
    assert_eq!(frame_count(&ws), json!(1));
    ws.assert_valid();
}

#[test]
fn frame_content_errors_name_the_input() {
    let ws = workspace_with_agents();
    let cases = [
        vec![
            "put-frame",
            "src/lib.rs",
            "no-such-file.txt",
            "--type",
            "t",
            "--agent",
            "alice",
        ],
        vec![
            "put-frame",
            "src/lib.rs",
            "-",
            "--type",
            "t",
            "--agent",
            "alice",
            "--basis",
            "abc",
        ],
        vec![
            "put-frame",
            "src/lib.rs",
            "-",
            "--type",
            "bad type",
            "--agent",
            "alice",
        ],
        vec![
            "put-frame",
            "nowhere.rs",
            "-",
            "--type",
            "t",
            "--agent",
            "alice",
        ],
    ];
    let mut report = String::new();
    for args in cases {
        let r = run(ws.cmd(&args).write_stdin("content\n"));
        report.push_str(&format!("$ merkle {}\n{r}\n", args.join(" ")));
    }
    assert_eq!(frame_count(&ws), json!(0));
    ws.settings()
        .bind(|| insta::assert_snapshot!("frame_content_errors", report));
}

#[test]
fn an_agent_stores_its_model_s_price_and_the_list_prices_are_shown() {
    let ws = Workspace::scanned();
    let added = ws.json(&[
        "agent",
        "add",
        "gen",
        "--role",
        "synthesis",
        "--provider",
        "anthropic",
        "--model",
        "claude-x",
        "--price",
        "2,10",
    ]);
    assert_eq!(added["price"], json!("2,10,0.2,2.5,4"), "{added}");
    assert!(
        ws.ok(&["agent", "list"])
            .contains("at $2,10,0.2,2.5,4 per million tokens"),
        "the text form names the price"
    );
    let prices = ws.json(&["agent", "prices"]);
    let listed = |model: &str| {
        prices
            .as_array()
            .expect("a list")
            .iter()
            .find(|p| p["model"] == json!(model))
            .unwrap_or_else(|| panic!("{model} is listed"))
    };
    let sonnet = listed("claude-sonnet-4");
    assert_eq!(
        (&sonnet["input"], &sonnet["output"], &sonnet["batch_factor"]),
        (&json!(3.0), &json!(15.0), &json!(0.5))
    );
    assert_eq!(
        (
            &sonnet["cache_write"],
            &sonnet["cache_write_1h"],
            &sonnet["flex_factor"]
        ),
        (&json!(3.75), &json!(6.0), &json!(null))
    );
    assert!(
        sonnet["source"]
            .as_str()
            .is_some_and(|s| s.contains("claude.com"))
    );
    let terra = listed("gpt-5.6-terra");
    assert_eq!(
        (&terra["cache_write"], &terra["flex_factor"]),
        (&json!(3.125), &json!(0.5))
    );
    let r = ws.run(&["agent", "add", "x", "--role", "reader", "--price", "1,2"]);
    assert_eq!(r.code, 2, "--price goes with --provider: {r}");
}

/// put-frame scans the workspace first, as MCP's and the agent's put_frame do: a frame put
/// after an edit, with no scan between, attaches to the file as it is now.
#[test]
fn a_frame_put_after_an_edit_attaches_to_the_edited_file() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "alice", "--role", "writer"]);
    let before = ws.node_id("src/util/mod.rs");
    ws.write("src/util/mod.rs", "pub mod edited;\n");
    let put = put_ok(
        &ws,
        "src/util/mod.rs",
        "notes",
        "alice",
        b"after the edit\n",
    );
    let after = ws.node_id("src/util/mod.rs");
    assert_ne!(after, before);
    assert_eq!(put["node_id"], after, "{put}");
    assert_eq!(ws.json(&["status"])["changed_on_disk"], json!([]));
}
