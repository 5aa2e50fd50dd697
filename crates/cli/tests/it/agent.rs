//! `merkle run`, `merkle chat` and `merkle conversations`: the agent runtime end to end with
//! scripted and recorded models, under the built-in governance policy.
//!
//! The example scripts run on a copy of `fixtures/agent/workspace`; their transcripts and audit
//! logs are snapshots (audit times and hashes redacted: they depend on the clock).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Run, Workspace, parse, run};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn agent_script(name: &str) -> String {
    fixtures()
        .join("agent")
        .join(name)
        .to_str()
        .expect("utf-8 path")
        .to_owned()
}

/// A workspace holding a copy of `fixtures/agent/workspace`.
fn agent_workspace() -> Workspace {
    let ws = Workspace::empty();
    copy_dir(&fixtures().join("agent/workspace"), &ws.root);
    ws
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("reading a fixture folder") {
        let entry = entry.expect("a fixture entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            std::fs::create_dir_all(&target).expect("creating a folder");
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copying a fixture file");
        }
    }
}

/// `merkle ARGS` with no LLM settings, agent or keys from the caller's environment.
fn merkle(ws: &Workspace, args: &[&str]) -> assert_cmd::Command {
    crate::llm::llm(ws, args)
}

fn transcript(ws: &Workspace, id: &str) -> Vec<Value> {
    lines(&ws.path(&format!(".merkle/conversations/{id}/transcript.jsonl")))
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

/// The audit log with what depends on the clock (time, and so every hash) redacted.
fn audit(ws: &Workspace) -> Vec<Value> {
    lines(&ws.path(".merkle/audit.jsonl"))
        .into_iter()
        .map(|mut record| {
            for field in ["time", "hash", "prev_hash"] {
                record[field] = json!(format!("[{}]", field.to_uppercase()));
            }
            record
        })
        .collect()
}

#[test]
fn fix_violation_success_edits_checks_and_completes() {
    let ws = agent_workspace();
    let file = "src/agentforge/core/executor.py";
    let before = std::fs::read_to_string(ws.path(file)).expect("the fixture file");
    let r = run(&mut merkle(
        &ws,
        &[
            "--json",
            "run",
            "--script",
            &agent_script("fix_violation_success.yaml"),
            "--approve",
            "--conversation",
            "fix",
            "Reduce the complexity of execute in src/agentforge/core/executor.py to 10 or less",
        ],
    ));
    assert_eq!(r.code, 0, "{r}");
    let doc = parse(&r.stdout);
    assert_eq!(
        doc,
        json!({
            "conversation": "fix",
            "text": "Successfully reduced complexity from 15 to 10",
            "end": {"kind": "completed", "summary": "Extracted _handle_execution_error to reduce cyclomatic complexity"},
            "model_calls": 4,
            "tool_calls": 7,
            "compactions": 0,
            "usage": doc["usage"],
            "cost_usd": null,
            "failed_tools": [],
        })
    );
    let after = std::fs::read_to_string(ws.path(file)).expect("the edited file");
    assert_ne!(before, after);
    assert!(after.contains("def _handle_execution_error(runner, log):"));
    // The check the agent ran passes on the file as it left it.
    let check = Command::new("sh")
        .args(["scripts/check_complexity.sh", file, "execute", "10"])
        .current_dir(&ws.root)
        .output()
        .expect("running the check");
    assert_eq!(
        String::from_utf8_lossy(&check.stdout),
        "complexity of execute: 10 (limit 10)\nOK\n"
    );
    insta::assert_json_snapshot!("fix_violation_success_transcript", transcript(&ws, "fix"));
    insta::assert_json_snapshot!("fix_violation_success_audit", audit(&ws));
    let verify = ws.json(&["audit", "verify"]);
    assert_eq!(
        (&verify["ok"], &verify["records"]),
        (&json!(true), &json!(11))
    );
}

/// The success script run again on the file it already fixed: its edit no longer applies, yet
/// the scripted model calls `complete`. The run must not claim the task done: exit 5, the
/// failed tool named on stderr and in `failed_tools`.
#[test]
fn complete_after_a_failed_edit_is_not_a_success() {
    let ws = agent_workspace();
    let task = "Reduce the complexity of execute in src/agentforge/core/executor.py to 10 or less";
    let script = agent_script("fix_violation_success.yaml");
    let args = ["run", "--script", &script, "--approve", task];
    let first = run(&mut merkle(&ws, &args));
    assert_eq!(first.code, 0, "{first}");
    assert!(first.stderr.contains("\ncompleted: Extracted"), "{first}");

    let again = run(&mut merkle(&ws, &args));
    assert_eq!(again.code, 5, "{again}");
    assert!(
        again
            .stderr
            .contains("\n   error: old_string does not occur")
            && !again.stderr.contains("error: error"),
        "{again}"
    );
    let end = again.stderr.lines().last().unwrap_or_default();
    assert!(
        end.starts_with(
            "not completed: the model called complete (\"Extracted _handle_execution_error to \
             reduce cyclomatic complexity\"), but its last edit_file call failed (4 model calls, \
             7 tool calls)"
        ),
        "{again}"
    );

    let mut json = vec!["--json"];
    json.extend_from_slice(&args);
    let r = run(&mut merkle(&ws, &json));
    assert_eq!(r.code, 5, "{r}");
    let doc = parse(&r.stdout);
    assert_eq!(
        (&doc["end"]["kind"], &doc["failed_tools"]),
        (&json!("completed"), &json!(["edit_file"]))
    );
}

#[test]
fn fix_violation_escalate_stops_with_the_reason() {
    let ws = agent_workspace();
    let r = run(&mut merkle(
        &ws,
        &[
            "run",
            "--script",
            &agent_script("fix_violation_escalate.yaml"),
            "--conversation",
            "esc",
            "Reduce the complexity of price in src/complex_file.py",
        ],
    ));
    assert_eq!(r.code, 3, "{r}");
    assert!(
        r.stderr.contains(
            "escalated: Complex business logic - extraction may change behavior. Human review \
             needed. (2 model calls, 3 tool calls) (conversation esc)"
        ),
        "{r}"
    );
    insta::assert_json_snapshot!("fix_violation_escalate_transcript", transcript(&ws, "esc"));
    insta::assert_json_snapshot!("fix_violation_escalate_audit", audit(&ws));
}

/// A script file in the workspace's temporary folder (outside the workspace).
fn write_script(ws: &Workspace, name: &str, yaml: &str) -> String {
    let path = ws.root.parent().expect("<tmp>/ws").join(name);
    std::fs::write(&path, yaml).expect("writing a script");
    path.to_str().expect("utf-8 path").to_owned()
}

#[test]
fn governance_blocks_what_the_intent_does_not_allow() {
    let ws = agent_workspace();
    let script = write_script(
        &ws,
        "blocked.yaml",
        r#"
responses:
  - tool_calls:
      - {name: read_file, input: {path: src/complex_file.py}}
  - tool_calls:
      - {name: select_active_intent, input: {intent: ANALYZE, justification: read it}}
      - {name: write_file, input: {path: notes.md, content: "x"}}
  - content: I could not write.
"#,
    );
    let doc = parse(
        &run(&mut merkle(
            &ws,
            &[
                "--json",
                "run",
                "--script",
                &script,
                "--conversation",
                "b",
                "go",
            ],
        ))
        .stdout,
    );
    assert_eq!(doc["end"], json!({"kind": "end_turn"}));
    let messages = transcript(&ws, "b");
    assert_eq!(
        messages[2]["content"][0]["content"],
        json!(
            "blocked by governance rule intent-required: no intent is selected in this request; \
             call select_active_intent first with one of PLAN, CODE, ANALYZE, DEBUG, WRITE_FILE, \
             READ_FILE, EXECUTE"
        )
    );
    assert_eq!(
        messages[4]["content"][1]["content"],
        json!(
            "blocked by governance rule intents.ANALYZE: write_file is not allowed under intent \
             ANALYZE, which allows read_file, list_dir, search, get_node, search_symbols, \
             task_context, related_files, refs; select another intent if the task needs it"
        )
    );
    assert!(!ws.path("notes.md").exists());
    let decisions: Vec<(Value, Value, Value)> = audit(&ws)
        .iter()
        .map(|r| (r["tool"].clone(), r["rule"].clone(), r["outcome"].clone()))
        .collect();
    assert_eq!(
        decisions,
        vec![
            (json!("(policy)"), json!("policy builtin"), json!("ok")),
            (
                json!("read_file"),
                json!("intent-required"),
                json!("blocked")
            ),
            (json!("select_active_intent"), json!("control"), json!("ok")),
            (
                json!("write_file"),
                json!("intents.ANALYZE"),
                json!("blocked")
            ),
        ]
    );
}

#[test]
fn a_reader_cannot_select_writing_intents() {
    let ws = agent_workspace();
    ws.ok(&["scan"]);
    ws.ok(&["agent", "add", "rita", "--role", "reader"]);
    let script = write_script(
        &ws,
        "reader.yaml",
        r#"
responses:
  - tool_calls:
      - {name: select_active_intent, input: {intent: WRITE_FILE, justification: write notes}}
      - {name: select_active_intent, input: {intent: EXECUTE, justification: run tests}}
  - content: Fine, I only read.
"#,
    );
    let r = run(&mut merkle(
        &ws,
        &[
            "run",
            "--agent",
            "rita",
            "--script",
            &script,
            "--conversation",
            "r",
            "go",
        ],
    ));
    assert_eq!(r.code, 0, "{r}");
    let results = &transcript(&ws, "r")[2]["content"];
    for (i, intent) in ["WRITE_FILE", "EXECUTE"].iter().enumerate() {
        let text = results[i]["content"].as_str().expect("a result");
        assert!(
            text.starts_with("blocked by governance rule role-cap:") && text.contains(intent),
            "{text}"
        );
    }
}

#[test]
fn repeated_calls_stop_the_request_with_a_typed_reason() {
    let ws = agent_workspace();
    let call = "      - {name: list_dir, input: {path: src}}\n";
    let script = write_script(
        &ws,
        "loop.yaml",
        &format!(
            "responses:\n  - tool_calls:\n      - {{name: select_active_intent, input: {{intent: ANALYZE, justification: look}}}}\n{call}  - tool_calls:\n{call}  - tool_calls:\n{call}  - content: never reached\n"
        ),
    );
    let r = run(&mut merkle(
        &ws,
        &[
            "--json",
            "run",
            "--script",
            &script,
            "--conversation",
            "l",
            "go",
        ],
    ));
    assert_eq!(r.code, 4, "{r}");
    assert_eq!(
        parse(&r.stdout)["end"],
        json!({"kind": "stopped", "stop": {"reason": "repeated_call", "tool": "list_dir", "times": 3}})
    );
    let messages = transcript(&ws, "l");
    let last = messages.last().expect("messages");
    assert_eq!(last["content"][0]["is_error"], json!(true));
    let note = last["content"][1]["text"].as_str().expect("the stop note");
    assert!(
        note.starts_with(
            "[merkle: turn stopped: the loop governor stopped the request (limits.repeat_calls)"
        ),
        "{note}"
    );
}

#[test]
fn a_policy_whose_examples_contradict_it_does_not_load() {
    let ws = agent_workspace();
    let policy = ws.root.parent().expect("<tmp>/ws").join("bad.yaml");
    std::fs::write(
        &policy,
        "version: 1\nintents:\n  ANALYZE: [read_file]\nexamples:\n  - name: analyze writes\n    intent: ANALYZE\n    tool: write_file\n    args: {path: a, content: b}\n    expect: allow\n",
    )
    .expect("writing the policy");
    let r = run(&mut merkle(
        &ws,
        &[
            "run",
            "--provider",
            "sim",
            "--policy",
            policy.to_str().expect("utf-8"),
            "go",
        ],
    ));
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr.contains("analyze writes") && r.stderr.contains("bad.yaml"),
        "{r}"
    );
    // Refused before anything was created: no store, no conversation.
    assert!(!ws.path(".merkle").exists(), "{r}");
    ws.ok(&["-q", "scan"]);
    let again = run(&mut merkle(
        &ws,
        &[
            "run",
            "--provider",
            "sim",
            "--policy",
            policy.to_str().expect("utf-8"),
            "go",
        ],
    ));
    assert_eq!(again.code, 1, "{again}");
    assert!(!ws.path(".merkle/conversations").exists(), "{again}");
}

#[test]
fn without_a_key_the_error_says_how_to_configure_one() {
    let ws = agent_workspace();
    let r = run(&mut merkle(&ws, &["run", "fix the bug"]));
    assert_eq!(r.code, 1, "{r}");
    for needed in [
        "ANTHROPIC_API_KEY",
        "--provider sim",
        "--script FILE",
        "--playback FILE",
    ] {
        assert!(r.stderr.contains(needed), "{needed} missing from {r}");
    }
}

#[test]
fn an_agent_with_its_own_model_runs_without_provider_flags() {
    let ws = agent_workspace();
    ws.ok(&[
        "agent",
        "add",
        "sim-bot",
        "--role",
        "writer",
        "--provider",
        "sim",
    ]);
    let r = run(&mut merkle(
        &ws,
        &[
            "run",
            "--agent",
            "sim-bot",
            "--conversation",
            "own",
            "hello",
        ],
    ));
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "Simulated response\n"),
        "{r}"
    );
    // Without --agent the default agent has no model of its own: the key is still missing.
    let r = run(&mut merkle(&ws, &["run", "hello"]));
    assert!(r.code == 1 && r.stderr.contains("ANTHROPIC_API_KEY"), "{r}");
}

#[test]
fn conversations_are_listed_shown_and_continued() {
    let ws = agent_workspace();
    for task in ["first task", "second task"] {
        let r = run(&mut merkle(
            &ws,
            &["run", "--provider", "sim", "--conversation", "c1", task],
        ));
        assert_eq!(
            (r.code, r.stdout.as_str()),
            (0, "Simulated response\n"),
            "{r}"
        );
    }
    let listed = parse(&run(&mut merkle(&ws, &["--json", "conversations", "list"])).stdout);
    assert_eq!(
        listed,
        json!([{
            "id": "c1",
            "created_at": listed[0]["created_at"],
            "title": "first task",
            "agent": "default",
            "model": null,
            "compaction_count": 0,
        }])
    );
    let shown = run(&mut merkle(&ws, &["conversations", "show", "c1"]));
    assert_eq!(
        shown.stdout.lines().skip(1).collect::<Vec<_>>(),
        vec![
            "user: first task",
            "assistant: Simulated response",
            "user: second task",
            "assistant: Simulated response",
        ],
        "{shown}"
    );
    let escape = run(&mut merkle(&ws, &["conversations", "show", "../.."]));
    assert_eq!(escape.code, 1, "{escape}");
    assert!(
        escape.stderr.contains("invalid conversation id"),
        "{escape}"
    );
    let missing = run(&mut merkle(&ws, &["conversations", "show", "nope"]));
    assert_eq!(missing.code, 1, "{missing}");
    assert!(
        missing.stderr.contains("no conversation \"nope\""),
        "{missing}"
    );
}

#[test]
fn chat_takes_requests_from_stdin_and_asks_before_commands() {
    let ws = agent_workspace();
    let script = write_script(
        &ws,
        "chat.yaml",
        r#"
responses:
  - tool_calls:
      - {name: select_active_intent, input: {intent: EXECUTE, justification: run it}}
      - {name: run_command, input: {command: "echo ran > ran.txt"}}
  - content: I asked first.
  - tool_calls:
      - {name: select_active_intent, input: {intent: EXECUTE, justification: run it}}
      - {name: run_command, input: {command: "echo again > again.txt"}}
  - content: Declined, fine.
"#,
    );
    let mut cmd = merkle(
        &ws,
        &["chat", "--script", &script, "--conversation", "chat"],
    );
    // The first command is approved, the second declined; then the chat ends.
    cmd.write_stdin("run it\ny\nrun it again\nn\n/exit\n");
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(r.stdout, "I asked first.\nDeclined, fine.\n", "{r}");
    assert!(ws.path("ran.txt").exists());
    assert!(!ws.path("again.txt").exists());
    let outcomes: Vec<Value> = audit(&ws)
        .iter()
        .filter(|r| r["tool"] == "run_command")
        .map(|r| json!([r["decision"], r["outcome"]]))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            json!(["ask", "started"]),
            json!(["ask", "ok"]),
            json!(["ask", "declined"])
        ]
    );
}

/// A chat keeps its conversation in the provider's cache for an hour after each answer (a
/// person pauses between requests, often past five minutes); `merkle run` caches for five
/// minutes only.
#[test]
fn a_chat_keeps_its_conversation_cached_for_an_hour_and_a_run_for_five_minutes() {
    let ws = agent_workspace();
    let script = write_script(&ws, "hello.yaml", "responses:\n  - content: Hello there.\n");
    let mut chat = merkle(&ws, &["chat", "--script", &script, "--conversation", "c"]);
    chat.write_stdin("hi\n/exit\n");
    let r = run(&mut chat);
    assert_eq!(r.code, 0, "{r}");
    assert!(r.stderr.contains("of them for an hour)"), "{r}");
    let mut once = merkle(&ws, &["run", "--script", &script, "say hi"]);
    let r = run(&mut once);
    assert_eq!(r.code, 0, "{r}");
    assert!(r.stderr.contains("written to it)"), "{r}");
    assert!(!r.stderr.contains("for an hour"), "{r}");
}

/// A `merkle` child process of its own, for tests that kill it or talk to it.
fn spawn(ws: &Workspace, args: &[&str]) -> std::process::Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin!("merkle"));
    cmd.arg("--root")
        .arg(&ws.root)
        .args(args)
        .current_dir(&ws.root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in [
        "MERKLE_LLM_MODE",
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "MERKLE_AGENT",
    ] {
        cmd.env_remove(name);
    }
    cmd.spawn().expect("starting merkle")
}

#[test]
fn a_run_killed_mid_turn_resumes_with_the_call_answered_interrupted() {
    let ws = agent_workspace();
    let slow = write_script(
        &ws,
        "slow.yaml",
        r#"
responses:
  - tool_calls:
      - {name: select_active_intent, input: {intent: EXECUTE, justification: wait}}
      - {name: run_command, input: {command: "sleep 60"}}
"#,
    );
    let mut child = spawn(
        &ws,
        &[
            "run",
            "--script",
            &slow,
            "--approve",
            "--conversation",
            "k",
            "wait a minute",
        ],
    );
    // The model's message with the calls is durable before any call runs, and the command's
    // `started` audit record before it runs: wait for both, so the kill lands mid-command.
    let path = ws.path(".merkle/conversations/k/transcript.jsonl");
    let audit_log = ws.path(".merkle/audit.jsonl");
    loop {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let audited = std::fs::read_to_string(&audit_log).unwrap_or_default();
        if text.contains("\"run_command\"") && audited.contains("\"outcome\":\"started\"") {
            break;
        }
        assert!(
            child.try_wait().expect("polling the child").is_none(),
            "merkle exited before the tool ran"
        );
        std::thread::yield_now();
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaping the child");
    // The call was on the audit log before it ran: the log shows it cut off, and still verifies.
    let shown = ws.ok(&["audit", "show"]);
    assert_eq!(
        shown.matches("started, no outcome (cut off)").count(),
        1,
        "{shown}"
    );
    assert_eq!(ws.json(&["audit", "verify"])["ok"], json!(true));

    let next = write_script(&ws, "next.yaml", "responses:\n  - content: Resumed.\n");
    let r = run(&mut merkle(
        &ws,
        &["run", "--script", &next, "--conversation", "k", "go on"],
    ));
    assert_eq!((r.code, r.stdout.as_str()), (0, "Resumed.\n"), "{r}");
    assert!(
        r.stderr
            .contains("2 tool call(s) had no result (interrupted)"),
        "{r}"
    );
    let messages = transcript(&ws, "k");
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().expect("a role"))
        .collect();
    assert_eq!(roles, ["user", "assistant", "user", "user", "assistant"]);
    // Both calls are answered "interrupted": results are persisted together, after the last
    // call of a message returns, so the selection's result died with the command's.
    let answers = &messages[2]["content"];
    assert_eq!(answers.as_array().map(Vec::len), Some(2));
    assert!(
        answers
            .as_array()
            .expect("results")
            .iter()
            .all(|b| b["is_error"] == json!(true)
                && b["content"]
                    .as_str()
                    .is_some_and(|c| c.starts_with("interrupted"))),
        "{answers}"
    );
}

#[test]
fn a_recorded_multi_turn_run_plays_back_in_another_workspace() {
    let recorded = agent_workspace();
    let script = agent_script("fix_violation_success.yaml");
    let server = crate::llm::Served::start(&["--script", &script]);
    let recording = recorded.root.parent().expect("<tmp>/ws").join("run.yaml");
    let recording = recording.to_str().expect("utf-8");
    let task = "Reduce the complexity of execute in src/agentforge/core/executor.py to 10 or less";
    let mut cmd = merkle(
        &recorded,
        &[
            "run",
            "--provider",
            "anthropic",
            "--model",
            "claude-sim",
            "--base-url",
            &server.url,
            // The fake server is not api.anthropic.com: the key goes there only when named.
            "--api-key-env",
            "ANTHROPIC_API_KEY",
            "--record",
            recording,
            "--approve",
            "--conversation",
            "rec",
            task,
        ],
    );
    cmd.env("ANTHROPIC_API_KEY", "sk-ant-test-key-never-recorded");
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    drop(server);
    let saved = std::fs::read_to_string(recording).expect("the recording");
    assert!(!saved.contains("sk-ant-test-key"), "the key was recorded");
    assert!(
        !saved.contains(&*recorded.root.to_string_lossy()),
        "a path was recorded"
    );

    // Another workspace at another path: the recording alone answers, and the same edits follow.
    let replayed = agent_workspace();
    let r = run(&mut merkle(
        &replayed,
        &[
            "run",
            "--playback",
            recording,
            "--model",
            "claude-sim",
            "--approve",
            "--conversation",
            "rec",
            task,
        ],
    ));
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(transcript(&replayed, "rec"), transcript(&recorded, "rec"));
    let file = "src/agentforge/core/executor.py";
    assert_eq!(
        std::fs::read_to_string(replayed.path(file)).expect("replayed edit"),
        std::fs::read_to_string(recorded.path(file)).expect("recorded edit")
    );

    // A different request is not in the recording: the error names the difference.
    let other = agent_workspace();
    let r = run(&mut merkle(
        &other,
        &[
            "run",
            "--playback",
            recording,
            "--model",
            "claude-sim",
            "something else",
        ],
    ));
    assert_eq!(r.code, 1, "{r}");
    assert!(r.stderr.contains("something else"), "{r}");
}

#[test]
fn context_tools_read_and_write_frames_as_the_agent() {
    let ws = agent_workspace();
    let script = write_script(
        &ws,
        "context.yaml",
        r#"
responses:
  - tool_calls:
      - {name: select_active_intent, input: {intent: CODE, justification: note what I learned}}
      - {name: put_frame, input: {path: src/complex_file.py, type: notes, content: "pricing rules live here"}}
      - {name: synthesize, input: {path: src, type: notes}}
  - tool_calls:
      - {name: select_active_intent, input: {intent: ANALYZE, justification: read the notes}}
      - {name: get_node, input: {path: src/complex_file.py}}
  - content: Noted.
"#,
    );
    let r = run(&mut merkle(
        &ws,
        &[
            "run",
            "--script",
            &script,
            "--conversation",
            "ctx",
            "take notes",
        ],
    ));
    assert_eq!(r.code, 0, "{r}");
    let messages = transcript(&ws, "ctx");
    let put: Value = serde_json::from_str(
        messages[2]["content"][1]["content"]
            .as_str()
            .expect("put result"),
    )
    .expect("put_frame answers JSON");
    assert_eq!(
        (&put["path"], &put["created"]),
        (&json!("src/complex_file.py"), &json!(true)),
        "{put}"
    );
    // The CLI's put-frame of the same frame answers the same document (but `created`).
    let file = ws.root.parent().expect("<tmp>/ws").join("notes.txt");
    std::fs::write(&file, "pricing rules live here").expect("writing the frame's content");
    let mut again = ws.json(&[
        "put-frame",
        "src/complex_file.py",
        &file.to_string_lossy(),
        "--type",
        "notes",
        "--agent",
        "default",
    ]);
    assert_eq!(again["created"], json!(false), "{again}");
    again["created"] = json!(true);
    assert_eq!(again, put);
    // The default agent is a writer: synthesis needs the synthesis role.
    assert_eq!(messages[2]["content"][2]["is_error"], json!(true));
    let got: Value = serde_json::from_str(
        messages[4]["content"][1]["content"]
            .as_str()
            .expect("get result"),
    )
    .expect("get_node answers JSON");
    // What `merkle --json get-node` prints.
    assert_eq!(got, ws.json(&["get-node", "src/complex_file.py"]));
    assert_eq!(got["frame_count"], json!(1), "{got}");
    assert_eq!(
        got["frames"][0]["content"],
        json!("pricing rules live here")
    );
    let head = ws.json(&["get-head", "src/complex_file.py", "--type", "notes"]);
    assert_eq!(head["agent_id"], json!("default"));
}

#[test]
fn run_help_lists_the_provider_flags() {
    let ws = Workspace::empty();
    let r: Run = run(&mut merkle(&ws, &["run", "--help"]));
    for flag in [
        "--provider",
        "--model",
        "--base-url",
        "--script",
        "--playback",
        "--record",
        "--agent",
        "--policy",
        "--approve",
        "--conversation",
    ] {
        assert!(r.stdout.contains(flag), "{flag} missing:\n{r}");
    }
}

#[test]
fn a_policy_file_caps_tool_calls_and_a_new_request_resets_the_intent() {
    let ws = agent_workspace();
    let policy = ws.root.parent().expect("<tmp>/ws").join("tight.yaml");
    std::fs::write(
        &policy,
        "version: 1\nintents:\n  ANALYZE: [read_file, list_dir]\nlimits:\n  max_tool_calls: 2\n",
    )
    .expect("writing the policy");
    let policy = policy.to_str().expect("utf-8");
    let first = write_script(
        &ws,
        "first.yaml",
        r#"
responses:
  - tool_calls:
      - {name: select_active_intent, input: {intent: ANALYZE, justification: look}}
      - {name: list_dir, input: {path: src}}
      - {name: read_file, input: {path: src/complex_file.py}}
"#,
    );
    let r = run(&mut merkle(
        &ws,
        &[
            "--json",
            "run",
            "--policy",
            policy,
            "--script",
            &first,
            "--conversation",
            "p",
            "look",
        ],
    ));
    assert_eq!(r.code, 4, "{r}");
    assert_eq!(
        parse(&r.stdout)["end"],
        json!({"kind": "stopped", "stop": {"reason": "tool_call_cap", "limit": 2}})
    );
    // The audit log names the policy file that governed the run.
    let records = audit(&ws);
    assert!(
        records[0]["rule"]
            .as_str()
            .is_some_and(|rule| rule.starts_with("policy /") && rule.ends_with("tight.yaml")),
        "{}",
        records[0]
    );

    // A new request in the same conversation starts without an intent.
    let second = write_script(
        &ws,
        "second.yaml",
        "responses:\n  - tool_calls:\n      - {name: read_file, input: {path: src/complex_file.py}}\n  - content: Blocked.\n",
    );
    let r = run(&mut merkle(
        &ws,
        &[
            "run",
            "--policy",
            policy,
            "--script",
            &second,
            "--conversation",
            "p",
            "read it",
        ],
    ));
    assert_eq!(r.code, 0, "{r}");
    let last_results = &transcript(&ws, "p")[5]["content"][0]["content"];
    assert!(
        last_results
            .as_str()
            .is_some_and(|t| t.starts_with("blocked by governance rule intent-required")),
        "{last_results}"
    );
}

/// A read that misses says nothing of the task: the model reads a file that is not there,
/// then the right one, and completes. That is a success.
#[test]
fn complete_after_a_failed_read_is_a_success() {
    let ws = agent_workspace();
    let script = ws.tmp.path().join("missed_read.yaml");
    std::fs::write(
        &script,
        r#"responses:
  - step: 1
    tool_calls:
      - name: select_active_intent
        input: {intent: READ_FILE, justification: "Read the function"}
      - name: read_file
        input: {path: "src/agentforge/core/no_such_file.py"}
  - step: 2
    content: "Read it"
    tool_calls:
      - name: complete
        input: {summary: "Read the file the task names"}
"#,
    )
    .expect("writing the script");
    let script = script.to_str().expect("utf-8 path");
    let r = run(&mut merkle(
        &ws,
        &[
            "--json",
            "run",
            "--script",
            script,
            "--approve",
            "Read a file",
        ],
    ));
    assert_eq!(r.code, 0, "{r}");
    let doc = parse(&r.stdout);
    assert_eq!(
        (&doc["end"]["kind"], &doc["failed_tools"]),
        (&json!("completed"), &json!([]))
    );
}

#[test]
fn a_run_says_its_tokens_and_with_a_price_its_cost() {
    let ws = agent_workspace();
    let args = [
        "run",
        "--script",
        &agent_script("fix_violation_escalate.yaml"),
        "--price",
        "3,15",
        "Reduce the complexity of price in src/complex_file.py",
    ];
    let r = run(&mut merkle(&ws, &args));
    let tokens = r
        .stderr
        .lines()
        .find(|l| l.starts_with("tokens: "))
        .unwrap_or_else(|| panic!("a tokens line: {r}"));
    assert!(
        tokens.contains(" in") && tokens.contains(" out; cost $"),
        "{tokens}"
    );
    let mut json = vec!["--json"];
    json.extend_from_slice(&args);
    let doc = parse(&run(&mut merkle(&ws, &json)).stdout);
    let usage = &doc["usage"];
    let input = usage["input_tokens"].as_f64().unwrap_or(0.0)
        + usage["cache_creation_input_tokens"].as_f64().unwrap_or(0.0) * 1.25
        + usage["cache_read_input_tokens"].as_f64().unwrap_or(0.0) * 0.1;
    let expected = (input * 3.0 + usage["output_tokens"].as_f64().unwrap_or(0.0) * 15.0) / 1e6;
    let cost = doc["cost_usd"].as_f64().expect("a cost");
    assert!(
        cost > 0.0 && (cost - expected).abs() < 1e-9,
        "{cost} vs {expected}: {doc}"
    );
}

#[test]
fn max_cost_stops_a_run_before_a_call_could_pass_it() {
    let ws = agent_workspace();
    let r = run(&mut merkle(
        &ws,
        &[
            "--json",
            "run",
            "--script",
            &agent_script("fix_violation_success.yaml"),
            "--approve",
            "--price",
            "3,15",
            "--max-cost",
            "0.1",
            "Reduce the complexity of execute in src/agentforge/core/executor.py to 10 or less",
        ],
    ));
    let doc = parse(&r.stdout);
    // The next call could cost 8192 output tokens at $15 a million: more than $0.10, so the
    // run stops after its first call, under the bound.
    assert_eq!(doc["model_calls"], json!(1), "{r}");
    assert_eq!(doc["end"]["kind"], json!("stopped"), "{r}");
    assert_eq!(doc["end"]["stop"]["reason"], json!("next_call_cost"), "{r}");
    assert!(
        doc["cost_usd"].as_f64().is_some_and(|c| c > 0.0 && c < 0.1),
        "{r}"
    );
    let text = run(&mut merkle(
        &ws,
        &[
            "run",
            "--script",
            &agent_script("fix_violation_success.yaml"),
            "--max-cost",
            "1",
            "x",
        ],
    ));
    assert_eq!(text.code, 2, "--max-cost needs a price: {text}");
    assert!(
        text.stderr.contains("--max-cost needs the model's price"),
        "{text}"
    );
}
