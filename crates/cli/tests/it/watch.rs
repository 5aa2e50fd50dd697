//! `merkle watch`: a real watcher on a real workspace sees edits and new files, keeps a frame type
//! fresh, leaves the store free for other commands between rescans, and stops cleanly on SIGTERM.
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Workspace, parse, str_field};

/// How long any one line of `watch` may take before the test fails rather than hangs.
const LINE_DEADLINE: Duration = Duration::from_secs(30);

/// A running `merkle watch`, killed when the test ends however it ends.
struct Watch {
    child: Child,
    /// Each line of its stdout, then `None` when it closes.
    lines: Receiver<Option<String>>,
    stderr: std::path::PathBuf,
}

impl Watch {
    /// `merkle --root <ws> ARGS`, as [`Workspace::cmd`] runs it but left running.
    fn start(ws: &Workspace, args: &[&str]) -> Watch {
        let home = ws.tmp.path().join("home");
        let stderr = ws.tmp.path().join("watch.stderr");
        let mut child = Command::new(assert_cmd::cargo::cargo_bin!("merkle"))
            .arg("--root")
            .arg(&ws.root)
            .args(args)
            .current_dir(&ws.root)
            .env("HOME", &home)
            .env("XDG_CONFIG_HOME", &home)
            .env_remove("MERKLE_AGENT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&stderr).expect("creating the stderr file"))
            .spawn()
            .expect("starting merkle watch");
        let lines = crate::stdout_lines(&mut child);
        Watch {
            child,
            lines,
            stderr,
        }
    }

    /// The next line, as JSON.
    fn next(&self) -> Value {
        match self.lines.recv_timeout(LINE_DEADLINE) {
            Ok(Some(line)) => parse(&line),
            Ok(None) => panic!("watch ended early; stderr:\n{}", self.stderr()),
            Err(_) => panic!(
                "watch printed nothing for {LINE_DEADLINE:?}; stderr:\n{}",
                self.stderr()
            ),
        }
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn watch_rescans_and_generates_while_other_commands_run() {
    let ws = Workspace::fixture();
    ws.ok(&["agent", "add", "A", "--role", "synthesis"]);
    let watch = Watch::start(
        &ws,
        &[
            "--json",
            "watch",
            "--generate",
            "--type",
            "summary",
            "--agent",
            "A",
        ],
    );

    // The first line is the first scan, with every file's frame generated.
    let first = watch.next();
    let status = ws.json(&["status"]);
    assert_eq!(
        first,
        json!({
            "root": status["root"],
            "changed": 14,
            "files": 10,
            "dirs": 4,
            "generated": {
                "produced": 10,
                "reused": 0,
                "synthesized": 4,
                "synthesis_reused": 0,
                "up_to_date": 0,
                "visited": 14,
                "failed": [],
                "producer": "outline:v17:8:2048",
            },
        })
    );
    let head_before = ws.json(&["get-head", "src/util/x.rs", "--type", "summary"]);
    // A writer between rescans finds the store free: watch does not hold it.
    ws.ok(&["agent", "add", "B", "--role", "reader"]);

    ws.write("src/util/x.rs", "bbb\nccc\n");
    ws.write("docs/new.md", "A new page.\n");
    // The two writes may land in one rescan or two: read lines until the tree matches the disk.
    let last = loop {
        let line = watch.next();
        if ws.json(&["status"])["changed_on_disk"] == json!([]) {
            break line;
        }
    };
    let status = ws.json(&["status"]);
    assert_eq!(
        (&last["root"], &last["files"], &status["stale"]),
        (&status["root"], &json!(11), &json!({}))
    );

    // Read while watch still runs: the new file is in the tree, with its generated frame.
    let new = ws.json(&["get-node", "docs/new.md"]);
    assert_eq!(
        (
            &new["node"]["path"],
            &new["node"]["kind"],
            &new["frames"][0]["frame_type"],
            &new["frames"][0]["agent_id"],
            &new["frames"][0]["node_id"],
        ),
        (
            &json!("docs/new.md"),
            &json!("file"),
            &json!("summary"),
            &json!("A"),
            &new["node"]["node_id"],
        )
    );
    // The edited file's frame was produced again, for its new node.
    let head_after = ws.json(&["get-head", "src/util/x.rs", "--type", "summary"]);
    assert_ne!(head_after["frame_id"], head_before["frame_id"]);
    assert_eq!(
        head_after["node_id"],
        json!(ws.node_id("src/util/x.rs")),
        "the head frame is on the edited file's new node"
    );

    // SIGTERM ends it cleanly: its stdout closes and it exits 0.
    let mut watch = watch;
    let pid = watch.child.id().to_string();
    let kill = Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("running kill");
    assert!(kill.success(), "kill -TERM {pid} failed");
    loop {
        match watch.lines.recv_timeout(LINE_DEADLINE) {
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(_) => panic!("watch did not stop on SIGTERM"),
        }
    }
    let exit = watch.child.wait().expect("waiting for watch");
    assert_eq!(exit.code(), Some(0), "stderr:\n{}", watch.stderr());
    ws.assert_valid();
}

#[test]
fn watch_exit_after_prints_one_line_per_rescan() {
    let ws = Workspace::fixture();
    let out = ws.ok(&["watch", "--exit-after", "1"]);
    let root = str_field(&ws.json(&["status"]), "root");
    assert_eq!(
        out,
        format!("root {}: 14 changed (10 files, 4 dirs)\n", &root[..12])
    );
}

#[test]
fn watch_generates_with_a_model_through_one_client() {
    let ws = Workspace::fixture();
    let watch = Watch::start(&ws, &["--json", "watch", "--generate", "--provider", "sim"]);
    // Every file and directory costs a call the first time (the 3 symlinks none).
    let first = watch.next();
    assert_eq!(
        (
            &first["generated"]["produced"],
            &first["generated"]["synthesized"],
            &first["generated"]["llm"]["calls"],
        ),
        (&json!(10), &json!(4), &json!(11)),
        "{first}"
    );
    assert!(
        str_field(&first["generated"], "producer").starts_with("llm-sim:default:"),
        "{first}"
    );

    // An edit costs one call for the file; the simulator's answer for it is the same text as
    // before, so no directory above it has new input (early cutoff).
    ws.write("src/util/x.rs", "bbb\n");
    // Only what changed since the last generation is visited: the file and the three
    // directories above it, none of the tree's other 10 nodes.
    let mut counts = [0; 4];
    loop {
        let line = watch.next();
        let generated = &line["generated"];
        for (n, value) in counts.iter_mut().zip([
            &generated["llm"]["calls"],
            &generated["produced"],
            &generated["synthesis_reused"],
            &generated["visited"],
        ]) {
            *n += value.as_u64().expect("a count");
        }
        if ws.json(&["status"])["changed_on_disk"] == json!([]) {
            break;
        }
    }
    assert_eq!(
        counts,
        [1, 1, 3, 4],
        "calls, produced, directories reused, visited"
    );
    let head = ws.json(&["get-head", "src/util/x.rs", "--type", "summary"]);
    assert_eq!(
        (&head["node_id"], &head["content"]),
        (
            &json!(ws.node_id("src/util/x.rs")),
            &json!("Simulated response")
        )
    );
}

#[test]
fn watch_refuses_a_model_without_generate() {
    let ws = Workspace::fixture();
    let r = ws.run(&["watch", "--provider", "sim", "--exit-after", "1"]);
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (
            2,
            "error: a model is for generating frames: add --generate\n"
        )
    );
}

/// What the watch in `ws` vouches for, asked as every read asks it; it may take a moment after
/// a rescan: polled until `want` or a deadline.
fn vouched_until(ws: &Workspace, want: Option<&str>) -> Option<String> {
    let store = ws.root.join(".merkle");
    let deadline = std::time::Instant::now() + LINE_DEADLINE;
    loop {
        let got = watch::vouch::vouched_root(&store).map(|r| r.to_hex());
        if got.as_deref() == want || std::time::Instant::now() > deadline {
            return got;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn reads_skip_their_walk_while_watch_vouches_and_never_miss_an_edit() {
    let ws = Workspace::fixture();
    let watch = Watch::start(&ws, &["--json", "watch"]);
    let first = str_field(&watch.next(), "root");
    assert_eq!(vouched_until(&ws, Some(&first)), Some(first.clone()));
    let hits = ws.json(&["search", "ccc"]);
    assert_eq!(hits, json!([]), "{hits}");

    // An edit made just before the question: the watch has not rescanned it, and its cookie
    // comes back through the file watcher after the edit's events, so it cannot vouch.
    ws.write("src/util/x.rs", "ccc\n");
    assert_eq!(watch::vouch::vouched_root(&ws.root.join(".merkle")), None);
    // A search right away walks the tree itself and finds the edit.
    let hits = ws.json(&["search", "ccc"]);
    assert_eq!(hits[0]["path"], json!("src/util/x.rs"), "{hits}");
    let root = str_field(&ws.json(&["status"]), "root");
    assert_ne!(root, first);

    // Once the watch has rescanned, it vouches for the tree on disk, and reads answer for it.
    assert_eq!(vouched_until(&ws, Some(&root)), Some(root.clone()));
    let node = ws.json(&["get-node", "src/util/x.rs"]);
    assert_eq!(node["node"]["node_id"], json!(ws.node_id("src/util/x.rs")));
    let hits = ws.json(&["search", "ccc"]);
    assert_eq!(hits[0]["path"], json!("src/util/x.rs"), "{hits}");

    // Stopped, it answers nothing and leaves no socket behind.
    let mut watch = watch;
    let pid = watch.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("running kill")
            .success()
    );
    let exit = watch.child.wait().expect("waiting for watch");
    assert_eq!(exit.code(), Some(0), "stderr:\n{}", watch.stderr());
    assert!(!ws.root.join(".merkle").join("watch.sock").exists());
    assert_eq!(watch::vouch::vouched_root(&ws.root.join(".merkle")), None);
}

#[test]
fn a_watch_answers_searches_as_the_command_itself_would() {
    let ws = Workspace::fixture();
    ws.write(
        "src/util/prompt.rs",
        "/// Asks the user for permission.\npub fn permission_prompt(name: &str) -> bool {\n    \
         name.is_empty()\n}\n",
    );
    let asked: [&[&str]; 4] = [
        &["search", "permission prompt"],
        &["search", "--functions", "permission prompt"],
        &["search", "--ranking", "plain", "--limit", "1", "answer"],
        &["search", "--type", "function", "answer"],
    ];
    ws.ok(&["scan"]);
    // Before the watch: each answered by the command itself, as text and as JSON.
    let alone: Vec<(String, Value)> = asked.iter().map(|a| (ws.ok(a), ws.json(a))).collect();
    assert_eq!(alone[0].1[0]["path"], json!("src/util/prompt.rs"));

    let watch = Watch::start(&ws, &["--json", "watch"]);
    let first = str_field(&watch.next(), "root");
    assert_eq!(vouched_until(&ws, Some(&first)), Some(first.clone()));
    let store = ws.root.join(".merkle");
    let question = |kind: Value| {
        json!({"search": {"query": "permission prompt", "limit": 20, "kind": kind,
            "ranking": "fused", "functions": false}})
    };
    // Asked directly, the watch answers what the command answered.
    assert_eq!(
        watch::asked::ask(&store, &question(Value::Null)).as_ref(),
        Some(&alone[0].1)
    );
    // Each command beside it is answered by it (`-v` says so), in the same words and JSON.
    for (args, (text, json)) in asked.iter().zip(&alone) {
        let verbose: Vec<&str> = ["-v"].iter().chain(args.iter()).copied().collect();
        let r = ws.run(&verbose);
        assert_eq!(r.code, 0, "{r}");
        assert!(
            r.stderr
                .contains("note: answered by the running `merkle watch`"),
            "{args:?}: {r}"
        );
        assert_eq!(&r.stdout, text, "{args:?}");
        assert_eq!(&ws.json(args), json, "{args:?}");
    }
    // What it does not answer (no search, or one it cannot make) the command answers itself.
    assert_eq!(watch::asked::ask(&store, &json!({"status": {}})), None);
    assert_eq!(
        watch::asked::ask(&store, &question(json!("nonsense"))),
        None
    );
    let r = ws.run(&["search", "--type", "nonsense", "answer"]);
    assert_ne!(r.code, 0, "{r}");
    assert!(r.stderr.contains("nonsense"), "{r}");

    // An edit just made is in the watch's answer: it answers for the files as they are.
    ws.write("src/util/x.rs", "fn permission_prompt_again() {}\n");
    let r = ws.run(&[
        "-v",
        "--json",
        "search",
        "--functions",
        "permission_prompt_again",
    ]);
    assert!(
        r.stderr
            .contains("note: answered by the running `merkle watch`"),
        "{r}"
    );
    let hits: Value = crate::parse(&r.stdout);
    assert_eq!(hits[0]["path"], json!("src/util/x.rs"), "{hits}");
}
