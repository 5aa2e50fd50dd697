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
    // To the default store, `state/` is a folder that appeared after its scan, its files all
    // ignored (the store's own `.gitignore`): status names it, and a read scans it in as an
    // empty folder. The moved store never sees its own folder.
    assert_eq!(ws.json(&["status"])["changed_on_disk"], json!(["state"]));
    let paths = |nodes: serde_json::Value| -> Vec<String> {
        let mut paths: Vec<String> = nodes
            .as_array()
            .expect("a list of nodes")
            .iter()
            .map(|n| n["path"].as_str().expect("a path").to_owned())
            .collect();
        paths.sort();
        paths
    };
    let mut expected = paths(ws.json(&["--store", store, "list-nodes", "--recursive"]));
    expected.push("state".to_owned());
    expected.sort();
    assert_eq!(paths(ws.json(&["list-nodes", "--recursive"])), expected);
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

/// The user's global excludes file (`core.excludesFile`) is found where git finds it: named by
/// the config `GIT_CONFIG_GLOBAL` names, else by `~/.gitconfig`, else by the XDG config; with
/// none named, `$XDG_CONFIG_HOME/git/ignore` is.
#[test]
fn the_global_excludes_file_is_found_where_git_finds_it() {
    let ws = Workspace::empty();
    for name in ["a.secret", "b.log", "c.txt", "d.md"] {
        ws.write(name, "x\n");
    }
    let home = ws.tmp.path().join("home");
    let put = |rel: &str, content: &str| {
        let p = home.join(rel);
        std::fs::create_dir_all(p.parent().expect("a parent")).expect("creating a folder");
        std::fs::write(p, content).expect("writing a config file");
    };
    put("secret-ignore", "*.secret\n");
    put("log-ignore", "*.log\n");
    put("git/ignore", "*.txt\n");
    let other = home.join("other-config");
    // `Workspace::cmd` sets HOME and XDG_CONFIG_HOME to the fake home.
    let leaves = |global: Option<&std::path::Path>| {
        let mut scan = ws.cmd(&["--json", "scan", "--force"]);
        let mut list = ws.cmd(&["--json", "list-nodes"]);
        for cmd in [&mut scan, &mut list] {
            cmd.env("GIT_CONFIG_SYSTEM", home.join("no-system-config"));
            match global {
                Some(path) => cmd.env("GIT_CONFIG_GLOBAL", path),
                None => cmd.env_remove("GIT_CONFIG_GLOBAL"),
            };
        }
        crate::ok(&mut scan);
        let nodes = crate::parse(&crate::ok(&mut list));
        let mut names: Vec<String> = nodes
            .as_array()
            .expect("a list")
            .iter()
            .map(|n| n["path"].as_str().expect("a path").to_owned())
            .collect();
        names.sort();
        names
    };
    // None named: git's default file.
    assert_eq!(leaves(None), ["a.secret", "b.log", "d.md"]);
    // The XDG config names one.
    put("git/config", "[core]\n\texcludesfile = ~/log-ignore\n");
    assert_eq!(leaves(None), ["a.secret", "c.txt", "d.md"]);
    // ~/.gitconfig comes before it.
    put(
        ".gitconfig",
        "[core]\r\n  excludesFile = \"~/secret-ignore\"\r\n",
    );
    assert_eq!(leaves(None), ["b.log", "c.txt", "d.md"]);
    // GIT_CONFIG_GLOBAL replaces both.
    std::fs::write(&other, "[core]\nexcludesFile=~/log-ignore\n").expect("writing a config");
    assert_eq!(leaves(Some(&other)), ["a.secret", "c.txt", "d.md"]);
}

/// Off Windows a backslash is a character a file's name may hold, not a separator: such a file
/// is scanned, generated and read by its own name like any other (a path given as `a\b` once
/// named `a/b`, so every command that looked the file up failed and `generate` exited 1).
#[cfg(unix)]
#[test]
fn a_file_named_with_a_backslash_is_read_by_its_name() {
    let ws = Workspace::empty();
    ws.write("src/we\\ird.js", "export const weird = 1;\n");
    ws.write("src/we/ird.js", "export const other = 2;\n");
    ws.json(&["scan"]);
    let generated = ws.json(&["generate", "--recursive", "--offline"]);
    assert_eq!(generated["failed"], json!([]), "{generated}");
    let weird = ws.json(&["get-node", "src/we\\ird.js"]);
    assert_eq!(weird["node"]["path"], json!("src/we\\ird.js"), "{weird}");
    let other = ws.json(&["get-node", "src/we/ird.js"]);
    assert_eq!(other["node"]["path"], json!("src/we/ird.js"), "{other}");
}
