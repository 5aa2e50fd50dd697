//! The MCP `status` tool answers the document `merkle --json status` prints, field for field:
//! one operation (`context::ops::Status`), one JSON shape, remotes included.
use pretty_assertions::assert_eq;
use serde_json::json;

use super::Server;
use crate::{Workspace, parse};

#[test]
fn status_answers_what_the_cli_prints_remotes_included() {
    let ws = Workspace::scanned();
    ws.ok(&["agent", "add", "bot", "--role", "writer"]);
    // A remote (nothing connects: status counts from the store) and a frame not pushed to it.
    ws.ok(&[
        "remote",
        "add",
        "origin",
        "postgres://merkle@127.0.0.1:1/team",
    ]);
    let mut server = Server::start(&ws, "bot");
    server.handshake();
    let (failed, text) = server.call(
        "put_frame",
        json!({"path": "README.md", "type": "notes", "content": "one frame"}),
    );
    assert!(!failed, "{text}");
    // A file changed since the scan, which status reports (without rescanning).
    ws.write("src/lib.rs", "pub mod util;\npub mod more;\n");

    let cli = ws.json(&["status"]);
    assert_eq!(cli["remotes"], json!([{"name": "origin", "unpushed": 1}]));
    assert_eq!(cli["changed_on_disk"], json!(["src/lib.rs"]), "{cli}");
    let (failed, text) = server.call("status", json!({}));
    assert!(!failed, "{text}");
    assert_eq!(parse(&text), cli);
}
