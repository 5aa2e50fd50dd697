//! Which agent `merkle mcp` writes as, over stdio: `tools/list` shows the writes its role
//! allows and no other, and an agent not registered is warned about at start, then only reads
//! until it is registered.
use std::process::Stdio;

use pretty_assertions::assert_eq;
use serde_json::json;

use super::Server;
use crate::{Workspace, str_field};

/// The tools that only read, in the order `tools/list` shows them.
const READS: [&str; 7] = [
    "get_node",
    "list_frames",
    "search",
    "context",
    "related",
    "refs",
    "status",
];

impl Server {
    /// The names `tools/list` shows.
    fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({}));
        listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .map(|t| str_field(t, "name"))
            .collect()
    }
}

/// `READS` with `writes` after `list_frames`, where `tools/list` puts them.
fn reads_and(writes: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = READS.iter().map(|s| (*s).to_owned()).collect();
    names.splice(2..2, writes.iter().map(|s| (*s).to_owned()));
    names
}

#[test]
fn tools_list_shows_the_writes_the_agents_role_allows() {
    let ws = Workspace::scanned();
    for (agent, role) in [("eve", "reader"), ("wes", "writer"), ("syd", "synthesis")] {
        ws.ok(&["agent", "add", agent, "--role", role]);
    }
    let expected = [
        ("eve", reads_and(&[])),
        ("wes", reads_and(&["put_frame"])),
        ("syd", reads_and(&["put_frame", "synthesize"])),
    ];
    for (agent, tools) in expected {
        let mut server = Server::start(&ws, agent);
        server.handshake();
        assert_eq!(server.tool_names(), tools, "{agent}");
    }
    // Without an agent the server only reads, and says so when asked to write.
    let mut server = Server::spawn(&ws, &[], Stdio::null());
    server.handshake();
    assert_eq!(server.tool_names(), reads_and(&[]));
    let (failed, text) = server.call(
        "put_frame",
        json!({"path": "README.md", "type": "notes", "content": "x"}),
    );
    assert!(failed && text.contains("merkle mcp --agent ID"), "{text}");
}

#[test]
fn an_unregistered_agent_is_warned_about_and_only_reads_until_it_is_registered() {
    let ws = Workspace::scanned();
    let log = ws.tmp.path().join("stderr.txt");
    let stderr = std::fs::File::create(&log).expect("a file for stderr");
    let mut server = Server::spawn(&ws, &["--agent", "ghost"], Stdio::from(stderr));
    server.handshake();
    // The warning went out at start, before the first answer.
    let warned = std::fs::read_to_string(&log).expect("stderr");
    assert!(
        warned.lines().any(|line| line
            == "warning: no agent \"ghost\" in this workspace, so `merkle mcp --agent ghost` \
                only reads until there is: register it with `merkle agent add ghost --role \
                writer` (or synthesis)"),
        "{warned}"
    );
    assert_eq!(server.tool_names(), reads_and(&[]));
    let note = json!({"path": "README.md", "type": "notes", "content": "by ghost"});
    let (failed, text) = server.call("put_frame", note.clone());
    assert!(
        failed && text.contains("`merkle agent add ghost --role writer`"),
        "{text}"
    );

    // Registered while the server runs, it writes from the next call on.
    ws.ok(&["agent", "add", "ghost", "--role", "writer"]);
    assert_eq!(server.tool_names(), reads_and(&["put_frame"]));
    let (failed, text) = server.call("put_frame", note);
    assert!(!failed, "{text}");
}

#[test]
fn the_help_of_agent_says_what_an_unregistered_one_does() {
    let ws = Workspace::empty();
    let help = ws.ok(&["mcp", "--help"]);
    let flattened = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flattened.contains(
            "not registered, a warning on stderr says so and the server only reads until it is"
        ),
        "{help}"
    );
}
