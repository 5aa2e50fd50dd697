//! `merkle mcp` under a kernel limit of inotify watches lower than the tree's folders: it says
//! so once at start, with the sysctl that raises it, watches what fits, and every answer checks
//! the folders it does not watch by their stats first, so an edit in any folder, or in one made
//! since, is seen by the next request. Where the kernel allows fanotify marks, they watch the
//! folders inotify could not, and the answers are as fresh.
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::Server;
use crate::parse;
use crate::watch_limit::{LIMIT, fanotify_took_the_rest, wide};
use crate::{merkle_with_watch_limit, merkle_with_watch_limits};

#[test]
fn under_a_low_watch_limit_the_server_says_so_once_and_never_answers_stale() {
    let ws = wide();
    let stderr = ws.tmp.path().join("mcp.stderr");
    let file = std::fs::File::create(&stderr).expect("creating the stderr file");
    let mut server = Server::spawn_as(merkle_with_watch_limit(LIMIT), &ws, &[], Stdio::from(file));
    edits_are_seen_at_once(&mut server, &ws);
    let said = std::fs::read_to_string(&stderr).expect("reading its stderr");
    assert_eq!(said.matches("max_user_watches = ").count(), 1, "{said}");
    assert!(
        said.contains(&format!("fs.inotify.max_user_watches = {LIMIT})")),
        "{said}"
    );
    assert!(
        said.contains("every read checks them by their stats instead"),
        "{said}"
    );
}

/// Edits in a folder inotify could not have watched, a new file, and a folder made after the
/// limit was reached: each seen by the next request.
fn edits_are_seen_at_once(server: &mut Server, ws: &crate::Workspace) {
    server.handshake();
    let (is_error, text) = server.call("get_node", json!({"path": "wide/f29/note.md"}));
    assert!(!is_error, "{text}");
    let before = parse(&text)["node"]["node_id"].clone();
    // Edits in a folder it could not have watched, and a new file: each seen at once.
    for round in 0..3 {
        ws.write("wide/f29/note.md", &format!("edited {round}\n"));
        ws.write(&format!("wide/f28/new{round}.md"), "new\n");
        let (is_error, text) = server.call("get_node", json!({"path": "wide/f29/note.md"}));
        assert!(!is_error, "{text}");
        let now = parse(&text)["node"]["node_id"].clone();
        assert_ne!(now, before, "{text}");
        assert_eq!(now, json!(ws.node_id("wide/f29/note.md")), "{text}");
        let (is_error, text) = server.call(
            "get_node",
            json!({"path": format!("wide/f28/new{round}.md")}),
        );
        assert!(!is_error, "{text}");
    }
    // A folder made after the limit was reached is counted unwatched: edits in it are seen.
    for round in 0..2 {
        ws.write("made/deep/a.md", &format!("made {round}\n"));
        let (is_error, text) = server.call("get_node", json!({"path": "made/deep/a.md"}));
        assert!(!is_error, "{text}");
        let now = parse(&text)["node"]["node_id"].clone();
        assert_eq!(now, json!(ws.node_id("made/deep/a.md")), "{text}");
    }
}

#[test]
fn fanotify_marks_watch_what_inotify_cannot_and_the_server_answers_fresh() {
    let ws = wide();
    let stderr = ws.tmp.path().join("mcp.stderr");
    let file = std::fs::File::create(&stderr).expect("creating the stderr file");
    let limits = merkle_with_watch_limits(LIMIT, 1000);
    let mut server = Server::spawn_as(limits, &ws, &[], Stdio::from(file));
    edits_are_seen_at_once(&mut server, &ws);
    fanotify_took_the_rest(&std::fs::read_to_string(&stderr).expect("reading its stderr"));
}
