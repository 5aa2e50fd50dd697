//! `merkle report`: counts and stale frames, and what changed since a git revision (hashed from
//! git's objects, so an unchanged checkout has the scan's root hash) or an earlier root.
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Workspace, run};

fn git(ws: &Workspace, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(&ws.root)
        .env("HOME", ws.root.parent().expect("<tmp>/ws").join("home"))
        .output()
        .expect("running git");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn paths(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("a list")
        .iter()
        .map(|n| n["path"].as_str().expect("a path").to_owned())
        .collect()
}

#[test]
fn report_compares_with_a_git_revision_and_an_earlier_root() {
    let ws = Workspace::empty();
    ws.write("README.md", "# demo\n");
    ws.write("src/lib.rs", "pub fn a() {}\n");
    ws.write("src/util.rs", "pub fn b() {}\n");
    // A committed views file: scans never enter .merkle, so the revision's tree must not either.
    ws.write(".merkle/views.yaml", "views: {}\n");
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "-A"]);
    git(&ws, &["add", "-f", ".merkle/views.yaml"]);
    git(&ws, &["commit", "-qm", "first"]);
    let mut generate = ws.cmd(&["-q", "generate", "-r"]);
    generate
        .env_remove("MERKLE_LLM_MODE")
        .env_remove("MERKLE_LLM_PROVIDER");
    assert_eq!(run(&mut generate).code, 0);

    // The committed tree hashed from git is the tree the scan recorded.
    let clean = ws.json(&["report", "--since", "HEAD"]);
    assert_eq!(clean["since"]["root"], clean["root"], "{clean}");
    assert_eq!(
        (&clean["stale"], &clean["files"], &clean["dirs"]),
        (&json!({}), &json!(3), &json!(2))
    );
    let first_root = clean["root"].as_str().expect("root").to_owned();

    ws.write("src/lib.rs", "pub fn a() { b() }\n");
    ws.write("NOTES.md", "new\n");
    std::fs::remove_file(ws.path("src/util.rs")).expect("remove");
    ws.ok(&["-q", "scan"]);
    let since_head = ws.json(&["report", "--since", "HEAD"]);
    let since = &since_head["since"];
    assert_eq!(
        (
            paths(&since["added"]),
            paths(&since["removed"]),
            paths(&since["changed"])
        ),
        (
            vec!["NOTES.md".to_owned()],
            vec!["src/util.rs".to_owned()],
            vec![String::new(), "src".to_owned(), "src/lib.rs".to_owned()]
        )
    );
    assert_eq!(since_head["stale"], json!({"summary": 3}), "{since_head}");
    // An earlier root from this store gives the same changes.
    let since_root = ws.json(&["report", "--since", &first_root[..12]]);
    assert_eq!(since_root["since"]["changed"], since["changed"]);

    let md = ws.ok(&["report", "--since", "HEAD"]);
    assert!(
        md.starts_with("# merkle report\n") && md.contains("- `NOTES.md`"),
        "{md}"
    );

    let bad = run(&mut ws.cmd(&["report", "--since", "no-such-rev"]));
    assert_eq!(bad.code, 1);
    assert!(
        bad.stderr
            .contains("\"no-such-rev\" is neither a root hash of this store nor a git revision"),
        "{bad}"
    );
}
