//! Exit codes and error messages: usage errors exit 2 before touching anything, failures exit 1
//! with a message on stderr naming the input at fault, and stdout stays empty for both.
use pretty_assertions::assert_eq;

use crate::Workspace;

/// Runs every `cases` in `ws`, checks that each exits with `code` and prints nothing on stdout,
/// and returns a transcript of their stderr for a snapshot.
fn check(ws: &Workspace, code: i32, cases: &[&[&str]]) -> String {
    let mut transcript = String::new();
    for args in cases {
        let r = ws.run(args);
        assert_eq!((r.code, r.stdout.as_str()), (code, ""), "{args:?}: {r}");
        transcript.push_str(&format!("$ merkle {}\n{}\n", args.join(" "), r.stderr));
    }
    transcript
}

#[test]
fn usage_errors_exit_2() {
    let ws = Workspace::fixture();
    let transcript = check(
        &ws,
        2,
        &[
            &["put-frame", "README.md", "-", "--agent", "alice"],
            &["get-head", "README.md"],
            &["agent", "add", "alice", "--role", "admin"],
            &["agent", "add", "alice"],
            &["--engine", "lmdb", "status"],
            &["-q", "-v", "status"],
            &["frobnicate"],
            &[],
            &["scan", "no/such/dir"],
            &["search", "x", "--limit", "0"],
            &["context", "x", "--budget", "zero"],
        ],
    );
    // Nothing was created: a usage error never opens the store.
    assert!(!ws.path(".merkle").exists());
    ws.settings()
        .bind(|| insta::assert_snapshot!("usage_errors", transcript));
}

#[test]
fn bad_flag_values_exit_2_before_touching_the_store() {
    let ws = Workspace::fixture();
    let transcript = check(
        &ws,
        2,
        &[
            &["get-node", "README.md", "--ordering", "sideways"],
            &["get-node", "README.md", "--source", "node,moon"],
            &[
                "agent",
                "add",
                "a",
                "--role",
                "writer",
                "--provider",
                "openai-compatible",
            ],
            &[
                "agent",
                "add",
                "a",
                "--role",
                "writer",
                "--provider",
                "anthropic",
                "--base-url",
                "ftp://x",
            ],
            &[
                "agent",
                "add",
                "a",
                "--role",
                "writer",
                "--provider",
                "anthropic",
                "--model",
                " ",
            ],
            &["run", " "],
        ],
    );
    assert!(!ws.path(".merkle").exists());
    ws.settings()
        .bind(|| insta::assert_snapshot!("bad_flag_values", transcript));
    ws.ok(&["-q", "scan"]);
    // These need the store to tell.
    check(
        &ws,
        2,
        &[
            &["regenerate", "src/lib.rs", "--to", "docs"],
            &["generate", "--offline", "--policy", "llm"],
        ],
    );
}

#[test]
fn failures_exit_1_and_name_the_input() {
    let ws = Workspace::fixture();
    let before_scan = check(
        &ws,
        1,
        &[
            &["status"],
            &["validate"],
            &["get-node", "README.md"],
            &["list-nodes"],
            &["agent", "list"],
        ],
    );
    let missing_root = crate::run(
        assert_cmd::cargo::cargo_bin_cmd!("merkle")
            .args(["--root", "no/such/dir", "scan"])
            .current_dir(&ws.root),
    );
    // Read-only commands create nothing.
    assert!(!ws.path(".merkle").exists());
    // Registering an agent creates the store, but there is no tree yet.
    ws.ok(&["agent", "add", "alice", "--role", "writer"]);
    let unscanned = check(&ws, 1, &[&["status"], &["get-node", "README.md"]]);
    ws.ok(&["scan"]);
    let after_scan = check(
        &ws,
        1,
        &[
            &["list-nodes", "nowhere"],
            &["get-node", "src/util/x.rs/deeper"],
        ],
    );
    ws.settings().bind(|| {
        insta::assert_snapshot!("failures_before_scan", before_scan);
        insta::assert_snapshot!("failures_unscanned", unscanned);
        insta::assert_snapshot!("failures_after_scan", after_scan);
        insta::assert_snapshot!("missing_root", missing_root.to_string());
    });
}

#[test]
fn help_and_version_exit_0() {
    let ws = Workspace::fixture();
    let help = ws.ok(&["--help"]);
    let version = ws.ok(&["--version"]);
    assert_eq!(version, format!("merkle {}\n", env!("CARGO_PKG_VERSION")));
    ws.settings().bind(|| insta::assert_snapshot!("help", help));
}

#[test]
fn the_help_lists_first_what_a_newcomer_runs_first_and_ends_with_an_example() {
    let ws = Workspace::fixture();
    let help = ws.ok(&["--help"]);
    let commands: Vec<&str> = help
        .split("\nCommands:\n")
        .nth(1)
        .expect("a command list")
        .lines()
        .take_while(|line| !line.is_empty())
        .filter_map(|line| line.strip_prefix("  ").filter(|l| !l.starts_with(' ')))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    let first = [
        "scan", "generate", "get-node", "search", "context", "related", "refs", "mcp",
    ];
    assert_eq!(&commands[..first.len()], &first, "{help}");
    let tail: Vec<&str> = help.trim_end().lines().rev().take(4).collect();
    assert_eq!(tail[3], "Start here:", "{help}");
    assert!(
        tail[..3].iter().all(|l| l.starts_with("  merkle ")),
        "{help}"
    );
    // run's help names every exit code it has.
    let run = ws
        .ok(&["run", "--help"])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for code in ["exit 0", "3 escalated", "4 stopped", "5 completed"] {
        assert!(run.contains(code), "{code}: {run}");
    }
    // get-node's help promises what it shows: the ids only under -v.
    let get_node = ws.ok(&["get-node", "--help"]);
    assert!(
        get_node.contains("with -v its NodeID and content hash"),
        "{get_node}"
    );
}

#[test]
fn scan_of_a_path_that_was_deleted_since_the_last_scan_drops_it() {
    let ws = Workspace::scanned();
    std::fs::remove_file(ws.path("src/lib.rs")).expect("rm");
    ws.ok(&["scan", "src/lib.rs"]);
    let listed = ws.ok(&["list-nodes", "src"]);
    assert!(!listed.contains("lib.rs"), "{listed}");
    let r = ws.run(&["scan", "src/lib.rs"]);
    assert_eq!(r.code, 2, "now gone from disk and tree: {r}");
    assert!(r.stderr.contains("\"src/lib.rs\" does not exist"), "{r}");
}

/// Counts of one read in the singular: `1 file`, `1 line`, `1 stale frame`, never `1 files`.
#[test]
fn counts_of_one_are_singular() {
    let ws = Workspace::empty();
    ws.write("a.txt", "one\n");
    let scan = ws.ok(&["scan"]);
    assert!(scan.ends_with("\n1 file, 1 dir, 2 changed\n"), "{scan}");
    let generate = ws.run(&["generate", "a.txt"]);
    assert_eq!(generate.code, 0, "{generate}");
    let head = ws.ok(&["get-head", "a.txt", "--type", "summary"]);
    assert!(head.contains("\n    text, 4 bytes, 1 line\n"), "{head}");
    // Another workspace with a frame by hand on the file alone, so that an edit leaves exactly
    // one frame stale.
    let ws = Workspace::empty();
    ws.write("a.txt", "one\n");
    ws.ok(&["scan"]);
    ws.ok(&["agent", "add", "w", "--role", "writer"]);
    std::fs::write(ws.path("../note"), "a note").expect("writing the note");
    let note = ws.path("../note");
    let note = note.to_str().expect("a UTF-8 path");
    ws.ok(&["put-frame", "a.txt", note, "--type", "note", "--agent", "w"]);
    ws.write("a.txt", "two\n");
    ws.ok(&["scan"]);
    let status = ws.ok(&["status"]);
    assert!(
        status.contains(
            "\n1 stale frame (note: 1); `merkle regenerate PATH` recomputes it:\n  note a.txt "
        ),
        "{status}"
    );
}

#[test]
fn global_flags_sit_under_their_own_heading_and_mcp_hides_json() {
    let ws = Workspace::empty();
    let help = ws.ok(&["get-node", "--help"]);
    let (own, global) = help
        .split_once("\nGlobal options:\n")
        .expect("a Global options heading");
    for flag in [
        "--root",
        "--store",
        "--engine",
        "--json",
        "--quiet",
        "--verbose",
    ] {
        assert!(
            !own.contains(flag) && global.contains(flag),
            "{flag}: {help}"
        );
    }
    assert!(own.contains("--max-frames"), "{help}");
    let mcp = ws.ok(&["mcp", "--help"]);
    assert!(!mcp.contains("--json "), "{mcp}");
    assert!(mcp.contains("--agent"), "{mcp}");
}

#[test]
fn get_node_shows_context_first_and_ids_under_verbose() {
    let ws = Workspace::scanned();
    let text = ws.ok(&["get-node", "src"]);
    assert!(
        text.starts_with(
            "src (dir, 4 children)\nno frames yet: `merkle generate -r` gives every file and \
             folder one"
        ),
        "{text}"
    );
    assert!(!text.contains("node_id"), "{text}");
    let verbose = ws.ok(&["get-node", "src", "-v"]);
    let id = ws.node_id("src");
    assert!(verbose.contains(&format!("node_id {id}")), "{verbose}");
}

#[test]
fn a_failed_file_is_reported_once_on_stderr() {
    let ws = Workspace::fixture();
    // Nothing listens on port 1: the model call fails at once.
    let mut cmd = ws.cmd(&[
        "generate",
        "README.md",
        "--provider",
        "openai-compatible",
        "--base-url",
        "http://127.0.0.1:1/v1",
        "--model",
        "m",
    ]);
    for name in ["MERKLE_LLM_MODE", "MERKLE_LLM_PROVIDER"] {
        cmd.env_remove(name);
    }
    let r = crate::run(&mut cmd);
    assert_eq!(r.code, 1, "{r}");
    assert!(!r.stdout.contains("README.md: producer"), "{r}");
    assert_eq!(r.stderr.matches("README.md: producer").count(), 1, "{r}");
}
