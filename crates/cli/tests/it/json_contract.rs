//! The `--json` field names scripts rely on (README, `src/output.rs`). The snapshots elsewhere
//! show whole documents; this pins each document's key set so that a renamed field fails here
//! even if someone accepts a snapshot.
use std::collections::BTreeSet;

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::Workspace;

fn keys(v: &Value) -> BTreeSet<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

/// Checks that `merkle --json ARGS` prints an object (or, for a list command, an array whose
/// first object) with exactly the keys `expected`.
fn check(ws: &Workspace, args: &[&str], expected: &[&str]) {
    let v = ws.json(args);
    let obj = match &v {
        Value::Array(items) => items
            .first()
            .unwrap_or_else(|| panic!("{args:?} listed nothing")),
        _ => &v,
    };
    assert_eq!(keys(obj), expected.iter().copied().collect(), "{args:?}");
}

#[test]
fn json_field_names_are_stable() {
    let ws = Workspace::fixture();
    check(
        &ws,
        &["scan"],
        &[
            "root",
            "files",
            "dirs",
            "changed",
            "hashed",
            "hashed_bytes",
            "dirs_recomputed",
            "dirs_read",
            "writes",
            "warnings",
        ],
    );
    check(
        &ws,
        &["status"],
        &[
            "root",
            "nodes",
            "frames",
            "changed_on_disk",
            "changes",
            "warnings",
            "dirs_read",
            "stale",
            "stale_frames",
            "remotes",
        ],
    );
    check(&ws, &["validate"], &["ok", "problems"]);
    check(
        &ws,
        &["agent", "add", "alice", "--role", "writer"],
        &[
            "agent_id",
            "api",
            "api_key_env",
            "base_url",
            "model",
            "price",
            "provider",
            "role",
        ],
    );
    check(
        &ws,
        &["agent", "list"],
        &[
            "agent_id",
            "api",
            "api_key_env",
            "base_url",
            "model",
            "price",
            "provider",
            "role",
        ],
    );
    check(
        &ws,
        &["list-nodes", "--recursive"],
        &["path", "kind", "node_id"],
    );
    let frame = run_put(&ws);
    assert_eq!(
        keys(&frame),
        ["created", "frame_id", "node_id", "path"].into()
    );

    let frame_keys = [
        "frame_id",
        "node_id",
        "frame_type",
        "agent_id",
        "basis",
        "content",
        "content_encoding",
        "metadata",
    ];
    check(&ws, &["list-frames", "src"], &frame_keys);
    check(&ws, &["get-head", "src", "--type", "summary"], &frame_keys);
    let head = ws.json(&["get-head", "src", "--type", "summary"]);
    assert_eq!(
        keys(&head["metadata"]),
        ["created_at", "provider", "model", "extra"].into()
    );

    let node = ws.json(&["get-node", "src"]);
    assert_eq!(
        keys(&node),
        ["node", "frames", "frame_count", "skipped", "root", "stale"].into()
    );
    let mut composed_keys: std::collections::BTreeSet<&str> = frame_keys.into();
    composed_keys.extend(["source", "path"]);
    assert_eq!(keys(&node["frames"][0]), composed_keys);
    assert_eq!(
        keys(&node["node"]),
        [
            "path",
            "kind",
            "node_id",
            "content_hash",
            "size",
            "children"
        ]
        .into()
    );
    assert_eq!(
        keys(&node["node"]["children"][0]),
        ["name", "path", "kind", "node_id"].into()
    );
}

fn run_put(ws: &Workspace) -> Value {
    let r = crate::run(
        ws.cmd(&[
            "--json",
            "put-frame",
            "src",
            "-",
            "--type",
            "summary",
            "--agent",
            "alice",
        ])
        .write_stdin("a summary\n"),
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r}");
    crate::parse(&r.stdout)
}

/// Kinds are spelled `file`, `dir` and `symlink`; paths are workspace-relative with `/` and no
/// leading `./`.
#[test]
fn json_kinds_and_paths_are_spelled_as_documented() {
    let ws = Workspace::scanned();
    let nodes = ws.json(&["list-nodes", "--recursive"]);
    let kinds: BTreeSet<&str> = nodes
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|n| n["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["dir", "file", "symlink"].into());
    for n in nodes.as_array().expect("a list") {
        let path = n["path"].as_str().expect("a path");
        assert!(
            !path.starts_with("./") && !path.starts_with('/') && !path.contains('\\'),
            "{path}"
        );
    }
}
