//! `status` and rescans after the disk changed: status reports without writing, and a rescan
//! changes exactly the touched leaves and their ancestors.
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::Workspace;

/// Scans the fixture, applies `change` to the disk, then checks that `status` reports exactly
/// `changes` (path, change) without writing to the store, that a rescan reports `rescan`, and
/// that `status` is clean after it.
///
/// The rescan's `hashed` and `hashed_bytes`, and status's `dirs_read`, are left out: under the
/// racy-timestamp rule a file (or folder) changed in the same filesystem clock tick as the last
/// scan started is hashed (or read) again, which depends on timestamp granularity. For the same
/// reason the scan stamp is left out of `writes` (reported as `writes_besides_stamp`): it is
/// written whenever anything else is, and alone only when such a racily-clean file was hashed
/// again.
fn check(change: impl FnOnce(&Workspace), changes: &[(&str, &str)], rescan: Value) {
    let ws = Workspace::scanned();
    let before = ws.json(&["status"]);
    change(&ws);

    let store = ws.store_state();
    let mut status = ws.json(&["status"]);
    assert_eq!(ws.store_state(), store, "status wrote to the store");
    // How many folders status read depends on the clock as `hashed` does: a folder changed in
    // the tick the last scan started is read again (the listing tests count them exactly).
    let dirs_read = status.as_object_mut().and_then(|o| o.remove("dirs_read"));
    assert!(dirs_read.is_some_and(|n| n.is_u64()), "{status}");
    assert_eq!(
        status,
        json!({
            "root": before["root"],
            "nodes": 14,
            "frames": 0,
            "changed_on_disk": changes.iter().map(|(p, _)| p).collect::<Vec<_>>(),
            "changes": changes
                .iter()
                .map(|(p, c)| json!({"path": p, "change": c}))
                .collect::<Vec<_>>(),
            "warnings": [],
            "stale": {},
            "stale_frames": [],
            "remotes": [],
        })
    );

    // So that the folders the change touched can vouch for their listings in the rescan.
    ws.settle();
    let report = ws.json(&["scan"]);
    let writes = report["writes"].as_u64().expect("writes is a count");
    let root = &report["root"];
    let actual = json!({
        "files": report["files"],
        "dirs": report["dirs"],
        "changed": report["changed"],
        "dirs_recomputed": report["dirs_recomputed"],
        "writes_besides_stamp": writes.saturating_sub(1),
        "warnings": report["warnings"],
    });
    assert_eq!(actual, rescan);
    assert_eq!(
        *root != before["root"],
        rescan["changed"] != 0,
        "the root moves iff a node changed"
    );

    let after = ws.json(&["status"]);
    assert_eq!(
        (&after["root"], &after["changed_on_disk"]),
        (root, &json!([]))
    );
    ws.assert_valid();
}

#[test]
fn editing_a_file_changes_it_and_its_ancestors() {
    check(
        // Same size: only the stat's times and the content tell.
        |ws| ws.write("src/util/x.rs", "bbb\n"),
        &[("src/util/x.rs", "modified")],
        json!({"files": 10, "dirs": 4, "changed": 4, "dirs_recomputed": 3, "writes_besides_stamp": 9, "warnings": []}),
    );
}

#[test]
fn adding_a_file_changes_it_and_its_ancestors() {
    check(
        |ws| ws.write("src/util/y.rs", "new\n"),
        &[("src/util/y.rs", "added")],
        json!({"files": 11, "dirs": 4, "changed": 4, "dirs_recomputed": 3, "writes_besides_stamp": 10, "warnings": []}),
    );
}

#[test]
fn adding_a_file_in_new_folders_adds_the_folders() {
    check(
        |ws| ws.write("src/new/deep/a.rs", "new\n"),
        &[("src/new/deep/a.rs", "added")],
        json!({"files": 11, "dirs": 6, "changed": 5, "dirs_recomputed": 4, "writes_besides_stamp": 12, "warnings": []}),
    );
}

#[test]
fn deleting_a_file_changes_it_and_its_ancestors() {
    check(
        |ws| std::fs::remove_file(ws.path("docs/guide.md")).expect("deleting a file"),
        &[("docs/guide.md", "deleted")],
        // The emptied `docs/` stays a directory of the tree.
        json!({"files": 9, "dirs": 4, "changed": 3, "dirs_recomputed": 2, "writes_besides_stamp": 7, "warnings": []}),
    );
}

#[test]
fn deleting_a_folder_removes_it_and_its_leaves() {
    check(
        |ws| std::fs::remove_dir_all(ws.path("docs")).expect("deleting a folder"),
        &[("docs/guide.md", "deleted")],
        json!({"files": 9, "dirs": 3, "changed": 3, "dirs_recomputed": 1, "writes_besides_stamp": 6, "warnings": []}),
    );
}

#[test]
fn touching_a_file_without_changing_it_is_no_change() {
    check(
        |ws| {
            let f = std::fs::File::options()
                .write(true)
                .open(ws.path("README.md"))
                .expect("opening a fixture file");
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000_000);
            f.set_modified(when).expect("setting an mtime");
        },
        &[],
        // Only the file's new stat is written, so that it is not hashed again next time.
        json!({"files": 10, "dirs": 4, "changed": 0, "dirs_recomputed": 0, "writes_besides_stamp": 1, "warnings": []}),
    );
}

#[test]
fn editing_a_symlinks_target_does_not_change_the_symlink() {
    check(
        |ws| ws.write("README.md", "# edited\n"),
        &[("README.md", "modified")],
        json!({"files": 10, "dirs": 4, "changed": 2, "dirs_recomputed": 1, "writes_besides_stamp": 5, "warnings": []}),
    );
}

#[test]
fn retargeting_a_symlink_changes_it() {
    check(
        |ws| {
            std::fs::remove_file(ws.path("link")).expect("removing a symlink");
            ws.symlink("link", "docs/guide.md");
        },
        &[("link", "modified")],
        json!({"files": 10, "dirs": 4, "changed": 2, "dirs_recomputed": 1, "writes_besides_stamp": 5, "warnings": []}),
    );
}

#[test]
fn ignored_and_git_files_are_no_change() {
    check(
        |ws| {
            ws.write("debug2.log", "ignored by *.log\n");
            ws.write("target/more.bin", "ignored by /target/\n");
            ws.write("src/new.tmp", "ignored by src/.gitignore\n");
            ws.write("local.env", "TOKEN=edited\n");
            ws.write(".git/index", "never scanned\n");
        },
        &[],
        // No node changes; the root's and src's entries record their new stats, which vouch
        // for their listings (ignored files included) from now on.
        json!({"files": 10, "dirs": 4, "changed": 0, "dirs_recomputed": 0, "writes_besides_stamp": 2, "warnings": []}),
    );
}

/// What a user reads: a clean status, then one added, one modified and one deleted file.
#[test]
fn status_text_lists_changes_by_kind() {
    let ws = Workspace::scanned();
    let clean = ws.ok(&["status"]);
    ws.write("src/util/x.rs", "bbb\n");
    ws.write("docs/new.md", "new\n");
    std::fs::remove_file(ws.path("src/lib.rs")).expect("deleting a file");
    let changed = ws.ok(&["status"]);
    let rescan = ws.ok(&["scan"]);
    ws.settings().bind(|| {
        insta::assert_snapshot!("status_clean_text", clean);
        insta::assert_snapshot!("status_changed_text", changed);
        // 3 leaves, `docs`, `src`, `src/util` and the root.
        insta::assert_snapshot!("rescan_text", rescan);
    });
}

/// A no-op rescan keeps the root and recomputes no directory.
#[test]
fn rescanning_an_unchanged_tree_changes_nothing() {
    let ws = Workspace::scanned();
    let first = ws.json(&["status"]);
    let again = ws.json(&["scan"]);
    assert_eq!(
        (
            &again["root"],
            &again["changed"],
            &again["dirs_recomputed"],
            &again["files"]
        ),
        (&first["root"], &json!(0), &json!(0), &json!(10))
    );
}

#[test]
fn scan_with_paths_rescans_those_files_and_folders_only() {
    let ws = Workspace::scanned();
    ws.write("src/util/x.rs", "edited\n");
    ws.write("docs/guide.md", "edited too\n");
    let scanned = ws.json(&["scan", "src"]);
    assert_eq!(
        (&scanned["changed"], &scanned["files"], &scanned["dirs"]),
        (&json!(4), &json!(10), &json!(4)),
        "src/util/x.rs, src/util, src and the root; the counts are the whole tree's"
    );
    // docs was not named: the tree still holds its old content, and status says so.
    assert_eq!(
        ws.json(&["status"])["changed_on_disk"],
        json!(["docs/guide.md"])
    );
    ws.json(&["scan", "docs/guide.md"]);
    assert_eq!(ws.json(&["status"])["changed_on_disk"], json!([]));
    ws.assert_valid();

    let r = ws.run(&["scan", "../elsewhere"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(r.stderr.contains("is outside the workspace"), "{r}");
}

/// A scan that finds nothing to write does not open the store for writing (with redb a
/// writable open and close are durable commits), so the store file stays as it was.
#[test]
fn a_scan_with_nothing_to_write_leaves_the_store_file_as_it_was() {
    let ws = Workspace::fixture();
    // Older than any scan, so that no file is racy and the second scan has nothing to settle.
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    for (path, _) in crate::FIXTURE {
        std::fs::File::options()
            .write(true)
            .open(ws.path(path))
            .and_then(|f| f.set_modified(old))
            .expect("setting a fixture file's mtime");
    }
    let first = ws.json(&["scan"]);
    let store = ws.path(".merkle/store.redb");
    let before = std::fs::read(&store).expect("reading the store file");
    let again = ws.json(&["scan"]);
    assert_eq!(
        (&again["root"], &again["changed"]),
        (&first["root"], &json!(0))
    );
    assert!(
        std::fs::read(&store).expect("reading the store file") == before,
        "a no-op scan wrote to the store file"
    );
}

/// `status -v` says what takes the space: every table's records, the derived table's by
/// namespace, and the store folder's entries on disk.
#[test]
fn verbose_status_says_what_takes_the_space() {
    let ws = Workspace::scanned();
    let plain = ws.json(&["status"]);
    assert!(plain.get("space").is_none(), "{plain}");
    let status = ws.json(&["-v", "status"]);
    let records = status["space"]["records"].as_array().expect("records");
    let kind = |k: &str| {
        records
            .iter()
            .find(|r| r["kind"] == json!(k))
            .unwrap_or_else(|| panic!("no {k} in {records:?}"))
    };
    // Every node of the tree has its record and its entry in the tree table.
    assert_eq!(kind("tree")["entries"], plain["nodes"]);
    assert_eq!(kind("frames")["entries"], plain["frames"]);
    assert!(kind("nodes")["value_bytes"].as_u64() > Some(0));
    let files = status["space"]["files"].as_array().expect("files");
    assert!(
        files
            .iter()
            .any(|f| f["name"] == json!("store.redb") && f["bytes"].as_u64() > Some(0)),
        "{files:?}"
    );
    let text = ws.ok(&["-v", "status"]);
    assert!(text.contains("space, by kind of record"), "{text}");
    assert!(text.contains("store.redb"), "{text}");
}

/// `gc` removes the versions a rescan replaced and the facts of content no file has now, says
/// what it kept and why, and leaves a store that validates and answers as before; a dry run
/// changes nothing; with no store it says so and makes none.
#[test]
fn gc_removes_what_nothing_needs_and_says_what_it_kept() {
    let ws = Workspace::scanned();
    let hits = ws.json(&["search", "answer"]);
    ws.write("src/util/mod.rs", "pub fn answer() -> u32 {\n    43\n}\n");
    ws.ok(&["scan"]);
    assert_eq!(ws.json(&["search", "answer"]), hits);
    let nodes = |v: &Value| (v["nodes"]["kept"].as_u64(), v["nodes"]["removed"].as_u64());
    let facts = |v: &Value| {
        v["derived"]
            .as_array()
            .expect("derived")
            .iter()
            .find(|d| d["namespace"] == json!("facts"))
            .map(|d| (d["kept"].as_u64(), d["removed"].as_u64()))
    };
    let dry = ws.json(&["gc", "--dry-run"]);
    assert_eq!(dry["dry_run"], json!(true));
    // The old mod.rs and the three folders above it (no frames were kept for them).
    assert_eq!(nodes(&dry).1, Some(4), "{dry}");
    assert_eq!(facts(&dry).and_then(|f| f.1), Some(1), "{dry}");
    assert_eq!(dry["bytes_after"], dry["bytes_before"]);
    // The index was built (a segment per writing thread), then took the edited file in a
    // commit of its own: segments that a dry run leaves as they are.
    let segments = dry["index_segments"]["before"].as_u64().expect("segments");
    assert!(segments >= 2, "{dry}");
    assert_eq!(dry["index_segments"]["after"], json!(segments), "{dry}");
    assert_eq!(
        ws.json(&["gc", "--dry-run"]),
        dry,
        "a dry run changes nothing"
    );

    let done = ws.json(&["gc"]);
    assert_eq!((nodes(&done), facts(&done)), (nodes(&dry), facts(&dry)));
    assert_eq!(done["compacted"], json!(true));
    assert!(
        done["bytes_after"].as_u64() <= done["bytes_before"].as_u64(),
        "{done}"
    );
    assert_eq!(
        done["index_segments"],
        json!({"before": segments, "after": 1}),
        "{done}"
    );
    ws.assert_valid();
    assert_eq!(ws.json(&["search", "answer"]), hits);
    let again = ws.json(&["gc"]);
    assert_eq!(again["index_segments"], json!({"before": 1, "after": 1}));
    assert_eq!(nodes(&again).1, Some(0), "{again}");
    assert_eq!(facts(&again).and_then(|f| f.1), Some(0), "{again}");
    let text = ws.ok(&["gc", "--dry-run"]);
    assert!(text.contains("nodes: kept"), "{text}");
    assert!(text.contains("facts: kept"), "{text}");
    assert!(text.contains("the current tree's files"), "{text}");
    assert!(text.contains("the search index: 1 segment\n"), "{text}");

    let empty = Workspace::empty();
    let r = empty.run(&["gc"]);
    assert_eq!(r.code, 1, "{r}");
    assert!(r.stderr.contains("no store"), "{r}");
    assert!(!empty.path(".merkle").exists(), "gc made a store");
}

/// `status -v` says how much of the git history past fixes are read from, and when that was
/// cut at its most (issue #46: a history of a million commits is read only so far).
#[test]
fn verbose_status_says_where_the_history_was_cut() {
    let ws = Workspace::scanned();
    let status = ws.json(&["-v", "status"]);
    assert_eq!(
        status["space"]["history"],
        Value::Null,
        "no history read yet"
    );
    let head = "0123456789abcdef0123456789abcdef01234567";
    for (n, cut) in [(2, false), (100_000, true)] {
        std::fs::write(
            ws.path(".merkle/history"),
            format!("merkle-history v3 {head}\n{n}\n"),
        )
        .expect("writing a history file");
        let status = ws.json(&["-v", "status"]);
        assert_eq!(
            status["space"]["history"],
            json!({"commits": n, "cut": cut})
        );
        let text = ws.ok(&["-v", "status"]);
        assert_eq!(
            text.contains("cut at the newest 100,000: older fixes are not weighed"),
            cut,
            "{text}"
        );
    }
}

/// `get-node PATH` answers for the node as it is on disk by checking what it answers from (its
/// entries and the folders on the way to it), not the whole tree: an edit beside it is
/// scanned in by the next read that reaches it.
#[test]
fn get_node_of_a_path_checks_that_path_and_the_way_to_it() {
    let ws = Workspace::scanned();
    let root = ws.json(&["status"])["root"].clone();
    ws.write("src/util/x.rs", "bbb\n");
    let lib = ws.json(&["get-node", "src/lib.rs"]);
    assert_eq!((&lib["root"], &lib["stale"]), (&root, &json!(false)));
    // The same for the other reads of one node.
    assert_eq!(ws.json(&["list-frames", "src/lib.rs"]), json!([]));
    assert_eq!(
        ws.json(&["status"])["changed_on_disk"],
        json!(["src/util/x.rs"])
    );
    // The folder holding the edit reaches it: scanned in, and the file's node is the new one.
    let util = ws.json(&["get-node", "src/util"]);
    assert_ne!(util["root"], root);
    assert_eq!(ws.json(&["status"])["changed_on_disk"], json!([]));
    ws.assert_valid();
}
