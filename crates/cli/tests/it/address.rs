//! Addressing nodes: by workspace path (relative to the current folder when inside the
//! workspace), or by a unique NodeID hex prefix of at least 8 digits.
use pretty_assertions::assert_eq;

use crate::{Workspace, run, str_field};

/// Runs `merkle get-node SPEC` in `cwd` (workspace-relative) and checks that it names the node
/// at `expected` (`Ok(path)`) or fails with exit 1 and stderr `Err(message)`.
fn check(ws: &Workspace, cwd: &str, spec: &str, expected: Result<&str, &str>) {
    let r = run(ws
        .cmd(&["--json", "get-node", spec])
        .current_dir(ws.path(cwd)));
    let actual = match r.code {
        0 => Ok(str_field(&crate::parse(&r.stdout)["node"], "path")),
        // Under --json the error is one object on stderr.
        1 if r.stdout.is_empty() => Err(format!(
            "error: {}\n",
            str_field(&crate::parse(&r.stderr), "error")
        )),
        _ => panic!("get-node {spec:?} in {cwd:?}: {r}"),
    };
    assert_eq!(
        actual,
        expected.map(str::to_owned).map_err(str::to_owned),
        "get-node {spec:?} in {cwd:?}"
    );
}

#[test]
fn nodes_are_addressed_by_path() {
    let ws = Workspace::scanned();
    check(&ws, "", "src/util/x.rs", Ok("src/util/x.rs"));
    check(&ws, "", "./src//util/x.rs", Ok("src/util/x.rs"));
    check(&ws, "", "src/util/", Ok("src/util"));
    check(&ws, "", ".", Ok(""));
    check(&ws, "", "link", Ok("link"));
    let absolute = ws.path("docs/guide.md");
    check(&ws, "", &absolute.to_string_lossy(), Ok("docs/guide.md"));
    // Inside the workspace, paths are relative to the current folder, as in git.
    check(&ws, "src", "util/x.rs", Ok("src/util/x.rs"));
    check(&ws, "src/util", "../lib.rs", Ok("src/lib.rs"));
    check(&ws, "src/util", "..", Ok("src"));
    check(
        &ws,
        "",
        "src/nope.rs",
        Err("error: no node at path \"src/nope.rs\" in the last scan\n"),
    );
    // Paths outside the workspace are refused, not mapped onto workspace paths.
    let outside = |spec: &str| {
        format!(
            "error: {spec:?} is outside the workspace {} (see --root)\n",
            ws.root.display()
        )
    };
    check(&ws, "", "../README.md", Err(&outside("../README.md")));
    check(&ws, "", "/etc/passwd", Err(&outside("/etc/passwd")));
    // From a subfolder, a name is looked up there only, never at the root as a fallback.
    check(
        &ws,
        "src",
        "README.md",
        Err("error: no node at path \"src/README.md\" in the last scan\n"),
    );
    // Ignored files are on disk but not in the tree.
    check(
        &ws,
        "",
        "debug.log",
        Err("error: no node at path \"debug.log\" in the last scan\n"),
    );
}

#[test]
fn nodes_are_addressed_by_node_id_prefix() {
    let ws = Workspace::scanned();
    let id = ws.node_id("src/util/mod.rs");
    check(&ws, "", &id, Ok("src/util/mod.rs"));
    check(&ws, "", &id[..8], Ok("src/util/mod.rs"));
    check(
        &ws,
        "",
        &id[..8].to_ascii_uppercase(),
        Ok("src/util/mod.rs"),
    );
    check(&ws, "src", &id[..12], Ok("src/util/mod.rs"));
    // Fewer than 8 digits is no prefix: it is read as a path, and the error says why.
    check(
        &ws,
        "",
        &id[..7],
        Err(&format!(
            "error: \"{0}\" is neither a path nor a NodeID prefix (a prefix needs at least 8 \
             hex digits): no node at path \"{0}\" in the last scan\n",
            &id[..7]
        )),
    );
    // No node of the fixture (see the golden snapshot) has an id starting with ffffffff.
    check(
        &ws,
        "",
        "ffffffff",
        Err("error: no node with id ffffffff\n"),
    );
    // A prefix addresses put-frame, list-frames and get-head too.
    ws.ok(&["agent", "add", "alice", "--role", "writer"]);
    let file = ws.tmp.path().join("frame.txt");
    std::fs::write(&file, "by prefix\n").expect("writing the frame's content");
    let file = file.to_str().expect("a UTF-8 temporary path");
    let put = ws.json(&[
        "put-frame",
        &id[..8],
        file,
        "--type",
        "t",
        "--agent",
        "alice",
    ]);
    assert_eq!(put["node_id"], serde_json::json!(id));
    let listed = ws.json(&["list-frames", &id[..9]]);
    let head = ws.json(&["get-head", &id[..10], "--type", "t"]);
    assert_eq!(
        (&listed[0]["frame_id"], &head["frame_id"]),
        (&put["frame_id"], &put["frame_id"])
    );
}

/// Two files whose NodeIDs share their first 8 hex digits, found by a birthday search over
/// `twins/<n>` paths holding `same\n`; their NodeIDs both start with `003e4be0`.
const TWINS: [&str; 2] = ["twins/115950", "twins/135635"];

#[test]
fn an_ambiguous_prefix_is_refused_and_a_longer_one_resolves() {
    let ws = Workspace::empty();
    for t in TWINS {
        ws.write(t, "same\n");
    }
    ws.ok(&["scan"]);
    let ids = TWINS.map(|t| ws.node_id(t));
    assert_eq!(ids.each_ref().map(|id| &id[..8]), ["003e4be0", "003e4be0"]);
    check(
        &ws,
        "",
        "003e4be0",
        Err("error: node id prefix 003e4be0 is ambiguous: it matches 2 nodes\n"),
    );
    // 003e4be00... and 003e4be0e...: nine digits (an odd count) already tell them apart.
    for (path, id) in TWINS.iter().zip(&ids) {
        check(&ws, "", &id[..9], Ok(path));
        check(&ws, "", &id[..10], Ok(path));
    }
}
