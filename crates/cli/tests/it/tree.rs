//! The scanned tree: golden NodeIDs, what is and is not scanned, symlinks recorded as links.
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::Workspace;

/// The published test vectors: every NodeID of the fixture tree and its root hash. A change to
/// these snapshots is a change to every identity in every store.
#[test]
fn golden_node_ids() {
    let ws = Workspace::fixture();
    let scan = ws.json(&["scan"]);
    let nodes = ws.json(&["list-nodes", "--recursive"]);
    let root = ws.json(&["get-node", "."]);
    ws.settings().bind(|| {
        insta::assert_json_snapshot!("golden_list_nodes_recursive", nodes);
        insta::assert_json_snapshot!("golden_root_node", root);
        insta::assert_snapshot!(
            "golden_list_nodes_text",
            ws.ok(&["list-nodes", "--recursive"])
        );
    });
    assert_eq!(scan["root"], root["node"]["node_id"]);
    assert_eq!(scan["root"], ws.json(&["status"])["root"]);
}

/// The same tree built in another folder, in another order, hashes the same.
#[test]
fn node_ids_do_not_depend_on_where_or_in_what_order_the_tree_was_written() {
    let a = Workspace::fixture();
    let b = Workspace::empty();
    for (path, target) in crate::FIXTURE_LINKS.iter().rev() {
        if let Some((dir, _)) = path.rsplit_once('/') {
            std::fs::create_dir_all(b.path(dir)).expect("creating a folder");
        }
        b.symlink(path, target);
    }
    for (path, content) in crate::FIXTURE.iter().rev() {
        b.write(path, content);
    }
    assert_eq!(
        a.json(&["scan"])["root"],
        b.json(&["scan", "--force"])["root"]
    );
    assert_eq!(
        a.json(&["list-nodes", "--recursive"]),
        b.json(&["list-nodes", "--recursive"])
    );
}

/// The first scan's report, and the text a user reads: every leaf counts as a file, symlinks
/// included (7 regular files and 3 symlinks), and the root counts as a directory.
#[test]
fn scan_reports_counts_with_symlinks_as_files() {
    let ws = Workspace::fixture();
    let text = ws.ok(&["scan"]);
    // `--force` hashes every leaf again, so even `hashed` is exact.
    let report = ws.json(&["scan", "--force"]);
    assert_eq!(
        (&report["hashed"], &report["changed"]),
        (&json!(10), &json!(0))
    );
    let leaves = ws
        .json(&["list-nodes", "--recursive"])
        .as_array()
        .expect("a list")
        .iter()
        .filter(|n| n["kind"] != "dir")
        .count();
    assert_eq!(leaves, 10);
    ws.settings().bind(|| {
        insta::assert_snapshot!("first_scan_text", text);
        insta::assert_json_snapshot!("forced_rescan_json", report);
    });
}

/// A symlink is a leaf whose content is its target string; the target is never followed, so a
/// link to a directory has no children and a dangling link is recorded like any other.
#[test]
fn symlinks_are_recorded_as_links_and_never_followed() {
    let ws = Workspace::scanned();
    let check = |path: &str, target: &str| {
        let node = ws.json(&["get-node", path]);
        assert_eq!(
            (
                &node["node"]["kind"],
                &node["node"]["content_hash"],
                &node["node"]["children"],
                &node["node"]["size"]
            ),
            (
                &json!("symlink"),
                &json!(merkle_store::hash::content_hash(target.as_bytes()).to_hex()),
                &json!([]),
                &json!(target.len())
            ),
            "{path} -> {target}"
        );
    };
    check("link", "README.md");
    check("linkdir", "src");
    check("src/dangling", "../missing");

    // Nothing below a link to a directory is part of the tree.
    let run = ws.run(&["get-node", "linkdir/lib.rs"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (
            1,
            "error: no node at path \"linkdir/lib.rs\" in the last scan\n"
        )
    );
    assert_eq!(
        ws.json(&["list-nodes", "linkdir", "--recursive"]),
        json!([{"path": "linkdir", "kind": "symlink", "node_id": ws.node_id("linkdir")}])
    );
}

/// The store folder keeps itself out of git, and a store inside the workspace under any name is
/// never scanned.
#[test]
fn the_store_is_never_scanned_and_ignores_itself() {
    let ws = Workspace::fixture();
    let default = ws.json(&["scan"]);
    assert_eq!(
        std::fs::read_to_string(ws.path(".merkle/.gitignore")).expect("the store's .gitignore"),
        "*\n"
    );

    let elsewhere = ws.root.join("state");
    let store = elsewhere.to_str().expect("a UTF-8 temporary path");
    let moved = ws.json(&["--store", store, "scan"]);
    assert!(elsewhere.join("store.redb").is_file());
    assert_eq!(
        std::fs::read_to_string(elsewhere.join(".gitignore")).expect("the store's .gitignore"),
        "*\n"
    );
    // Both stores hold the same tree: neither scanned the other's folder.
    assert_eq!(moved["root"], default["root"]);
    assert_eq!(
        ws.json(&["--store", store, "list-nodes", "--recursive"]),
        ws.json(&["list-nodes", "--recursive"])
    );
    // `state/` appeared after the default store's scan, yet it is no change on disk.
    assert_eq!(ws.json(&["status"])["changed_on_disk"], json!([]));
    ws.assert_valid();
}

/// An empty workspace has a root of its own and no leaves.
#[test]
fn an_empty_workspace_scans_to_a_root_alone() {
    let ws = Workspace::empty();
    let mut report = ws.json(&["scan"]);
    report["root"].take();
    assert_eq!(
        report,
        json!({
            "root": null,
            "files": 0,
            "dirs": 1,
            "changed": 1,
            "hashed": 0,
            "hashed_bytes": 0,
            "dirs_recomputed": 1,
            "dirs_read": 1,
            // The root's record, its tree entry and the meta records: root, counts, scan
            // stamp and the fingerprint of the ignore rules from outside the tree.
            "writes": 6,
            "warnings": [],
        })
    );
    assert_eq!(ws.json(&["list-nodes", "--recursive"]), json!([]));
    ws.assert_valid();
}
