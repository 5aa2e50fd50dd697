//! Under a kernel limit of inotify watches lower than the tree's folders (lowered for the test's
//! own processes only, [`crate::merkle_with_watch_limit`]): `merkle watch` says so once, with
//! the sysctl that raises it, and vouches for nothing, so every read checks the files itself
//! and never answers stale.
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{Workspace, merkle_with_watch_limit};

/// The watches the tests allow: fewer than [`wide`]'s folders.
pub(crate) const LIMIT: u32 = 8;

/// The fixture with 30 folders more, scanned.
pub(crate) fn wide() -> Workspace {
    let ws = Workspace::scanned();
    for i in 0..30 {
        ws.write(&format!("wide/f{i}/note.md"), &format!("note {i}\n"));
    }
    ws.ok(&["scan"]);
    ws
}

#[test]
fn watch_says_the_limit_once_and_reads_check_the_files_themselves() {
    let ws = wide();
    let stderr = ws.tmp.path().join("watch.stderr");
    let mut child = merkle_with_watch_limit(LIMIT)
        .arg("--root")
        .arg(&ws.root)
        .arg("watch")
        .env("HOME", ws.tmp.path().join("home"))
        .stdout(std::process::Stdio::null())
        .stderr(std::fs::File::create(&stderr).expect("creating the stderr file"))
        .spawn()
        .expect("running unshare (an unprivileged user namespace)");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for merkle watch") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("merkle watch kept running under a limit of {LIMIT} watches");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let said = std::fs::read_to_string(&stderr).expect("reading its stderr");
    assert!(!status.success(), "{said}");
    assert!(
        said.contains(&format!("fs.inotify.max_user_watches = {LIMIT})")),
        "{said}"
    );
    assert!(
        said.contains("raise it with `sudo sysctl fs.inotify.max_user_watches="),
        "{said}"
    );
    assert_eq!(said.matches("max_user_watches = ").count(), 1, "{said}");
    // Nothing vouches for the tree: a read right after an edit walks it and finds the edit.
    assert_eq!(watch::vouch::vouched_root(&ws.root.join(".merkle")), None);
    ws.write("wide/f29/note.md", "zebraword\n");
    let hits = ws.json(&["search", "zebraword"]);
    assert_eq!(hits[0]["path"], json!("wide/f29/note.md"), "{hits}");
}
