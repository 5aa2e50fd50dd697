//! The context commands through the binary: get-node with views and flags, synthesize,
//! regenerate, invalidate, views, and stale frames in status.
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::Workspace;

/// The fixture, scanned, with a writer and a synthesis agent and a summary on every file under
/// `src/` put by the synthesis agent.
fn summarized() -> Workspace {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "syn", "--role", "synthesis"]);
    ws.ok(&["agent", "add", "w", "--role", "writer"]);
    for (path, text) in [
        ("src/lib.rs", "lib: the crate root\nmore about lib\n"),
        ("src/util/mod.rs", "util: answers\n"),
        ("src/util/x.rs", "x: three letters\n"),
    ] {
        let file = ws.path(&format!("summary-of-{}", path.replace('/', "_")));
        std::fs::write(&file, text).expect("write content file");
        ws.ok(&[
            "put-frame",
            path,
            &file.to_string_lossy(),
            "--type",
            "summary",
            "--agent",
            "syn",
        ]);
        std::fs::remove_file(&file).expect("remove content file");
    }
    ws
}

fn types_and_paths(doc: &Value) -> Vec<(String, String, String)> {
    doc["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| {
            (
                f["frame_type"].as_str().expect("type").to_owned(),
                f["path"].as_str().expect("path").to_owned(),
                f["source"].as_str().expect("source").to_owned(),
            )
        })
        .collect()
}

#[test]
fn synthesize_recursive_then_get_node_with_sources() {
    let ws = summarized();
    let done = ws.json(&["synthesize", "src", "--agent", "syn", "--recursive"]);
    let paths: Vec<&str> = done["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| f["path"].as_str().expect("path"))
        .collect();
    assert_eq!(paths, ["src/util", "src"], "children before parents");
    assert_eq!(
        (&done["written"], &done["unchanged"]),
        (&json!(2), &json!(0))
    );
    // Again: the same children give the same frames.
    let again = ws.json(&["synthesize", "src", "--agent", "syn", "--recursive"]);
    assert_eq!(
        (&again["written"], &again["unchanged"]),
        (&json!(0), &json!(2))
    );

    ws.settings().bind(|| {
        insta::assert_snapshot!(
            "synthesize_src_text",
            ws.ok(&["get-head", "src", "--type", "summary"])
        );
    });
    // The basis and the synthesis metadata are internals: shown with -v (and in --json) only.
    let verbose = ws.ok(&["-v", "get-head", "src", "--type", "summary"]);
    for internal in [
        "\nbasis ",
        "\nsynthesis.inputs = ",
        "\nsynthesis.policy = concat\n",
    ] {
        assert!(verbose.contains(internal), "{internal:?} not in\n{verbose}");
    }

    let view = ws.json(&[
        "get-node",
        "src/util/x.rs",
        "--source",
        "node,parent,siblings",
        "--ordering",
        "relevance",
    ]);
    assert_eq!(
        types_and_paths(&view),
        [
            ("summary".into(), "src/util/x.rs".into(), "node".into()),
            ("summary".into(), "src/util".into(), "parent".into()),
            ("summary".into(), "src/util/mod.rs".into(), "sibling".into()),
        ]
    );
    assert_eq!(view["frame_count"], json!(3));
    let bounded = ws.json(&[
        "get-node",
        "src/util/x.rs",
        "--source",
        "node,parent,siblings",
        "--max-frames",
        "1",
    ]);
    assert_eq!(
        (
            bounded["frames"].as_array().map(Vec::len),
            &bounded["frame_count"]
        ),
        (Some(1), &json!(3))
    );
    ws.assert_valid();
}

#[test]
fn synthesize_reads_the_tree_as_it_is_now() {
    let ws = summarized();
    // A folder made since the last scan is there to synthesize, as from MCP and the agent.
    std::fs::create_dir_all(ws.path("src/fresh")).expect("mkdir");
    std::fs::write(ws.path("src/fresh/a.rs"), "fn a() {}\n").expect("write");
    let done = ws.json(&["synthesize", "src/fresh", "--agent", "syn"]);
    assert_eq!(done["path"], json!("src/fresh"), "{done}");
    ws.assert_valid();
}

#[test]
fn synthesis_needs_the_synthesis_role_and_a_directory() {
    let ws = summarized();
    let r = ws.run(&["synthesize", "src", "--agent", "w"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "error: agent \"w\" has role writer and may not synthesize\n"
        )
    );
    let r = ws.run(&["synthesize", "src/lib.rs", "--agent", "syn"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "error: \"src/lib.rs\" is not a directory: only directories are synthesized\n"
        )
    );
    let r = ws.run(&["synthesize", "src", "--agent", "syn", "--policy", "filter"]);
    assert_eq!(r.code, 2, "filter needs --contains:\n{r}");
}

#[test]
fn an_edit_makes_frames_stale_and_regenerate_reports_what_it_did() {
    let ws = summarized();
    ws.ok(&["synthesize", ".", "--agent", "syn", "--recursive"]);
    let clean = ws.json(&["status"]);
    assert_eq!(
        (&clean["stale"], &clean["stale_frames"]),
        (&json!({}), &json!([]))
    );

    ws.write("src/util/x.rs", "bbb\n");
    ws.ok(&["scan"]);
    let status = ws.json(&["status"]);
    let stale: Vec<(&str, &str)> = status["stale_frames"]
        .as_array()
        .expect("stale frames")
        .iter()
        .map(|s| {
            (
                s["path"].as_str().expect("path"),
                s["reason"].as_str().expect("reason"),
            )
        })
        .collect();
    assert_eq!(
        stale,
        [
            ("", "children changed"),
            ("src", "children changed"),
            ("src/util", "children changed"),
            ("src/util/x.rs", "node changed"),
        ]
    );
    assert_eq!(status["stale"], json!({"summary": 4}));

    // The file's summary was put by hand: nothing can recompute it, so it is reported, and the
    // directories keep its last known content, so their inputs are unchanged: content reused.
    let r = ws.json(&["regenerate", ".", "--recursive"]);
    assert_eq!(
        r["counts"],
        json!({"regenerated": 0, "reused": 3, "unchanged": 3, "skipped": 1})
    );
    assert_eq!(
        r["skipped"],
        json!([
            "\"src/util/x.rs\" summary: no producer for frame type \"summary\" on \"src/util/x.rs\""
        ])
    );
    // A new summary for the file makes its parent's inputs change; --up bounds propagation.
    // (Its content from a file outside the workspace: put-frame scans the workspace first.)
    let summary = ws.tmp.path().join("new-summary.txt");
    std::fs::write(&summary, "x: now bbb\n").expect("write");
    ws.ok(&[
        "put-frame",
        "src/util/x.rs",
        summary.to_str().expect("a UTF-8 temporary path"),
        "--type",
        "summary",
        "--agent",
        "syn",
    ]);
    let r = ws.json(&["regenerate", "src/util/x.rs", "--up", "1"]);
    assert_eq!(
        r["counts"],
        json!({"regenerated": 1, "reused": 0, "unchanged": 1, "skipped": 0})
    );
    assert_eq!(r["regenerated"][0]["path"], json!("src/util"));
    let still: Vec<Value> = ws.json(&["status"])["stale_frames"]
        .as_array()
        .expect("stale")
        .iter()
        .map(|s| s["path"].clone())
        .collect();
    // Only the boundary's parent is stale now; the root is stale only once src changes.
    assert_eq!(still, [json!("src")], "above the boundary");
    let r = ws.json(&["regenerate", "src/util", "--to", "."]);
    assert_eq!(r["counts"]["regenerated"], json!(2));
    assert_eq!(ws.json(&["status"])["stale_frames"], json!([]));
    let r = ws.run(&["regenerate", "src", "--to", "docs"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (2, "error: --to \"docs\" is not an ancestor of \"src\"\n")
    );
    ws.assert_valid();
}

#[test]
fn invalidate_then_regenerate_recomputes() {
    let ws = summarized();
    ws.ok(&["synthesize", "src/util", "--agent", "syn"]);
    let inv = ws.json(&["invalidate", "src/util", "--agent", "w"]);
    assert_eq!(inv["frame_ids"].as_array().map(Vec::len), Some(1));
    let stale = ws.json(&["status"])["stale_frames"].clone();
    assert_eq!(stale[0]["reason"], json!("invalidated"));
    let r = ws.json(&["regenerate", "src/util"]);
    assert_eq!(r["counts"]["regenerated"], json!(1));
    assert_eq!(ws.json(&["status"])["stale_frames"], json!([]));
    let r = ws.run(&["invalidate", "src/util", "--agent", "nobody"]);
    assert_eq!(r.code, 1);
}

#[test]
fn named_views_are_listed_shown_and_used() {
    let ws = summarized();
    ws.ok(&["synthesize", "src", "--agent", "syn", "--recursive"]);
    assert_eq!(ws.json(&["views", "list"]), json!([]));
    ws.write(
        ".merkle/views.yaml",
        "views:\n  family:\n    max_frames: 2\n    sources: [node, parent, siblings]\n    ordering: relevance\n  bad_is_fine_until_used:\n    types: [summary]\n",
    );
    assert_eq!(
        ws.json(&["views", "list"]),
        json!(["bad_is_fine_until_used", "family"])
    );
    assert_eq!(
        ws.json(&["views", "show", "family"])["view"]["max_frames"],
        json!(2)
    );
    let v = ws.json(&["get-node", "src/util/x.rs", "--view", "family"]);
    assert_eq!(
        (v["frames"].as_array().map(Vec::len), &v["frame_count"]),
        (Some(2), &json!(3))
    );
    // Flags override the view's fields.
    let v = ws.json(&[
        "get-node",
        "src/util/x.rs",
        "--view",
        "family",
        "--max-frames",
        "3",
    ]);
    assert_eq!(v["frames"].as_array().map(Vec::len), Some(3));
    let r = ws.run(&["get-node", "src", "--view", "nope"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            1,
            "error: no view named \"nope\" (known: bad_is_fine_until_used, family)\n"
        )
    );
    ws.write(".merkle/views.yaml", "views:\n  v:\n    max_frame: 2\n");
    let r = ws.run(&["views", "list"]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains("views.yaml") && r.stderr.contains("unknown field `max_frame`"),
        "{}",
        r.stderr
    );
}

#[test]
fn generate_does_only_missing_or_stale_work() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "gen", "--role", "synthesis"]);
    let gen_args = [
        "generate",
        "--agent",
        "gen",
        "--recursive",
        "--type",
        "outline",
        "--offline",
    ];
    let first = ws.json(&gen_args);
    // 10 leaves (7 files, 3 symlinks) and 4 directories.
    assert_eq!(
        (
            &first["produced"],
            &first["synthesized"],
            &first["up_to_date"]
        ),
        (&json!(10), &json!(4), &json!(0))
    );
    let again = ws.json(&gen_args);
    assert_eq!(
        (
            &again["produced"],
            &again["synthesized"],
            &again["up_to_date"]
        ),
        (&json!(0), &json!(0), &json!(14))
    );
    // One edit: one producer run and one synthesis per ancestor whose input changed: src/util,
    // src and the root, whose maps count the bytes below them (an edit that kept the size and
    // the outline would stop at the file: early cutoff).
    ws.write("src/util/x.rs", "changed\n");
    ws.ok(&["scan"]);
    let edit = ws.json(&gen_args);
    assert_eq!(
        (
            &edit["produced"],
            &edit["reused"],
            &edit["synthesized"],
            &edit["up_to_date"]
        ),
        (&json!(1), &json!(0), &json!(3), &json!(10))
    );
    // A revert brings back the original NodeIDs, whose frames exist: nothing to do.
    ws.write("src/util/x.rs", "aaa\n");
    ws.ok(&["scan"]);
    let revert = ws.json(&gen_args);
    assert_eq!(
        (
            &revert["produced"],
            &revert["synthesized"],
            &revert["up_to_date"]
        ),
        (&json!(0), &json!(0), &json!(14))
    );
    assert_eq!(ws.json(&["status"])["stale_frames"], json!([]));
    let r = ws.run(&["generate", "--agent", "nobody"]);
    assert_eq!(r.code, 1);
    ws.assert_valid();
}
