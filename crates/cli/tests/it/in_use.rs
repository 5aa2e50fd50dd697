//! A store held by another process: writers get a clear "in use" error naming the store, and
//! read-only commands, and a scan with nothing to write, still work beside the writer (redb's
//! single-writer mode).
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{Run, Workspace};

#[test]
fn a_second_writer_is_refused_and_readers_follow_the_writer() {
    let ws = Workspace::scanned();
    let root_before = ws.json(&["status"])["root"].take();

    // This test process is the other process: it holds the store open for writing.
    let held = merkle_store::Store::open(&ws.root, &merkle_store::OpenOptions::default())
        .expect("opening the store for writing");

    // A scan that finds nothing to write needs no writer: it works beside one.
    let noop = ws.run(&["scan"]);
    assert_eq!(
        (noop.code, noop.stdout),
        (
            0,
            format!(
                "root {}\n10 files, 4 dirs, 0 changed\n",
                root_before.as_str().expect("a hex root")
            )
        ),
        "{}",
        noop.stderr
    );
    // A touched file must be hashed again and its stat recorded: that scan needs the store.
    std::fs::File::options()
        .write(true)
        .open(ws.root.join("README.md"))
        .and_then(|f| f.set_modified(std::time::SystemTime::now()))
        .expect("touching README.md");

    let mut transcript = String::new();
    for args in [
        &["scan"][..],
        &["agent", "add", "alice", "--role", "writer"],
        &[
            "put-frame",
            "README.md",
            "-",
            "--type",
            "t",
            "--agent",
            "alice",
        ],
    ] {
        let r = ws.run(args);
        assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{args:?}: {r}");
        transcript.push_str(&format!("$ merkle {}\n{}\n", args.join(" "), r.stderr));
    }
    ws.settings()
        .bind(|| insta::assert_snapshot!("store_in_use", transcript));

    // Readers work while the writer holds the store, and see what it commits.
    let status = ws.json(&["status"]);
    assert_eq!(
        (&status["root"], &status["frames"]),
        (&root_before, &json!(0))
    );
    held.add_agent("writer-in-process", merkle_store::Role::Writer)
        .expect("registering an agent");
    let node = held
        .node_at("README.md")
        .expect("reading the tree")
        .expect("README.md is in the tree");
    let put = held
        .put_frame(merkle_store::NewFrame::new(
            node.node_id,
            "summary",
            "writer-in-process",
            b"written while held\n".to_vec(),
        ))
        .expect("putting a frame");
    // README.md was touched, not changed: a read that hashes it again finds the last scan's
    // files, which are not stale, and does not wait for the writer.
    let touched = ws.json(&["get-node", "README.md"]);
    assert_eq!(
        (&touched["stale"], &touched["root"]),
        (&json!(false), &root_before)
    );
    // README.md changed on disk and the writer keeps the rescan out: the last scan's tree,
    // said to be stale, without waiting for the writer.
    let readme = ws.root.join("README.md");
    let mut edited = std::fs::read_to_string(&readme).expect("reading README.md");
    edited.push_str("edited while the store is held\n");
    std::fs::write(&readme, edited).expect("editing README.md");
    let seen = ws.json(&["get-node", "README.md"]);
    assert_eq!(
        (&seen["stale"], &seen["root"]),
        (&json!(true), &root_before)
    );
    // A list has no room to say so: a warning does, and the list is the last scan's.
    let frames = ws.run(&["--json", "list-frames", "README.md"]);
    assert_eq!(frames.code, 0, "{frames}");
    assert!(
        frames
            .stderr
            .contains("this answers for the last scan's tree"),
        "{frames}"
    );
    assert_eq!(
        (
            &seen["frames"][0]["frame_id"],
            &seen["frames"][0]["content"]
        ),
        (
            &json!(put.frame_id.to_hex()),
            &json!("written while held\n")
        )
    );
    assert_eq!(
        ws.json(&["agent", "list"]),
        json!([{"agent_id": "writer-in-process", "role": "writer", "provider": null,
                "model": null, "base_url": null, "api": null, "api_key_env": null, "price": null}])
    );
    assert_eq!(ws.json(&["status"])["frames"], json!(1));
    assert_eq!(ws.json(&["validate"]), json!({"ok": true, "problems": []}));

    // Once the writer is gone, writing works again, and a read scans the change in first.
    drop(held);
    let fresh = ws.json(&["get-node", "README.md"]);
    assert_eq!(fresh["stale"], json!(false));
    assert_ne!(fresh["root"], root_before);
    let r = ws.run(&["scan"]);
    assert_eq!(
        r,
        Run {
            code: 0,
            stdout: format!(
                "root {}\n10 files, 4 dirs, 0 changed\n",
                fresh["root"].as_str().expect("a hex root")
            ),
            stderr: String::new()
        }
    );
    ws.assert_valid();
}
