//! Tools: the registry's error handling, the built-ins, and confinement to the workspace.
use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use agent_loop::{Error, ToolConfig, ToolDefinition, ToolOutcome, ToolRegistry, Workspace};
use llm_core::{ContentBlock, ToolCall};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

/// A workspace beside a folder it must not reach: `<tmp>/ws` and `<tmp>/outside`.
struct Fixture {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    tools: ToolRegistry,
}

fn fixture_with(config: ToolConfig) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    for folder in ["src", ".git", ".merkle", "notes"] {
        fs::create_dir_all(ws.join(folder)).expect("mkdir");
    }
    fs::create_dir_all(&outside).expect("mkdir");
    fs::write(
        ws.join("src/lib.rs"),
        "pub fn answer() -> u32 {\n    42\n}\n",
    )
    .expect("write");
    fs::write(ws.join("README.md"), "# Demo\n\nA demo workspace.\n").expect("write");
    fs::write(ws.join(".git/config"), "[core]\n").expect("write");
    fs::write(ws.join(".merkle/store"), "").expect("write");
    fs::write(outside.join("secret.txt"), "top secret\n").expect("write");
    let workspace = Arc::new(Workspace::open(&ws).expect("workspace"));
    let tools = ToolRegistry::with_builtins(&workspace, &config);
    Fixture {
        _dir: dir,
        ws,
        outside,
        tools,
    }
}

fn fixture() -> Fixture {
    fixture_with(ToolConfig::default())
}

impl Fixture {
    fn call(&self, name: &str, input: Value) -> ToolOutcome {
        self.tools.call(name, &input)
    }

    #[track_caller]
    fn ok(&self, name: &str, input: Value) -> String {
        let outcome = self.call(name, input);
        assert!(!outcome.is_error, "{name} failed: {}", outcome.content);
        outcome.content
    }

    #[track_caller]
    fn err(&self, name: &str, input: Value) -> String {
        let outcome = self.call(name, input);
        assert!(outcome.is_error, "{name} succeeded: {}", outcome.content);
        outcome.content
    }

    fn link(&self, at: &str, target: impl AsRef<Path>) {
        symlink(target, self.ws.join(at)).expect("symlink");
    }

    fn secret_intact(&self) {
        assert_eq!(
            fs::read_to_string(self.outside.join("secret.txt")).expect("secret"),
            "top secret\n"
        );
        let names: Vec<_> = fs::read_dir(&self.outside).expect("outside").collect();
        assert_eq!(names.len(), 1, "nothing was created outside");
    }
}

// ---- the registry ----

#[test]
fn unknown_tools_are_error_results_naming_the_real_ones() {
    let fx = fixture();
    assert_eq!(
        fx.err("delete_everything", json!({})),
        "error: unknown tool \"delete_everything\"; the tools are: read_file, write_file, \
         edit_file, list_dir, search, run_command"
    );
}

#[test]
fn input_that_breaks_the_schema_is_an_error_result() {
    let fx = fixture();
    assert_eq!(
        fx.err("read_file", json!({"path": 7, "offset": 0})),
        "error: invalid input for tool read_file: input.offset must be at least 1; \
         input.path must be string, not a number"
    );
    assert_eq!(
        fx.err("edit_file", json!({"path": "a"})),
        "error: invalid input for tool edit_file: input is missing the required field \
         \"new_string\"; input is missing the required field \"old_string\""
    );
    assert_eq!(
        fx.err("write_file", Value::Null),
        "error: invalid input for tool write_file: input must be object, not null"
    );
}

#[test]
fn handler_errors_and_panics_become_error_results() {
    let mut tools = ToolRegistry::new(1_000);
    let schema = json!({"type": "object"});
    tools
        .register(ToolDefinition::new("fails", "", schema.clone(), |_| {
            Err(Error::Handler {
                tool: "fails".into(),
                message: "the disk is on fire".into(),
            })
        }))
        .expect("register");
    tools
        .register(ToolDefinition::new("panics", "", schema.clone(), |_| {
            panic!("a bug in the handler")
        }))
        .expect("register");
    let duplicate = tools.register(ToolDefinition::new("fails", "", schema, |_| {
        Ok(String::new())
    }));
    assert!(matches!(duplicate, Err(Error::DuplicateTool { name }) if name == "fails"));

    assert_eq!(
        tools.call("fails", &json!({})),
        ToolOutcome {
            content: "error: tool fails failed: the disk is on fire".into(),
            is_error: true
        }
    );
    assert_eq!(
        tools.call("panics", &json!({})),
        ToolOutcome {
            content: "error: tool panics failed: it panicked: a bug in the handler".into(),
            is_error: true
        }
    );
}

#[test]
fn large_outputs_are_capped_with_a_marker() {
    let mut tools = ToolRegistry::new(10);
    tools
        .register(ToolDefinition::new(
            "big",
            "",
            json!({"type": "object"}),
            |_| Ok("é".repeat(20)),
        ))
        .expect("register");
    assert_eq!(
        tools.call("big", &json!({})).content,
        "ééééé\n[... output truncated: 10 of 40 bytes shown]"
    );
}

#[test]
fn export_and_dispatch_speak_llm_core() {
    let fx = fixture();
    let exported = fx.tools.export();
    assert_eq!(exported.len(), 6);
    assert_eq!(exported[0].name, "read_file");
    assert_eq!(exported[0].input_schema["required"], json!(["path"]));

    let call = ToolCall {
        id: "toolu_1".into(),
        name: "read_file".into(),
        input: json!({"path": "README.md"}),
    };
    assert_eq!(
        fx.tools.dispatch(&call),
        ContentBlock::ToolResult {
            tool_use_id: "toolu_1".into(),
            content: "# Demo\n\nA demo workspace.\n".into(),
            is_error: false
        }
    );
}

// ---- file tools ----

#[test]
fn read_file_reads_whole_files_and_line_ranges() {
    let fx = fixture();
    assert_eq!(
        fx.ok("read_file", json!({"path": "src/lib.rs"})),
        "pub fn answer() -> u32 {\n    42\n}\n"
    );
    assert_eq!(
        fx.ok(
            "read_file",
            json!({"path": "src/lib.rs", "offset": 2, "limit": 1})
        ),
        "    42\n[lines 2-2 of 3]\n"
    );
    assert_eq!(
        fx.ok("read_file", json!({"path": "src/lib.rs", "offset": 9})),
        "[src/lib.rs has only 3 lines]\n"
    );
    assert_eq!(
        fx.err("read_file", json!({"path": "src/main.rs"})),
        "error: path \"src/main.rs\" does not exist"
    );
    assert_eq!(
        fx.err("read_file", json!({"path": "src"})),
        "error: path \"src\" is a directory, not a file"
    );
    fs::write(fx.ws.join("logo.png"), b"\x89PNG\0\0").expect("write");
    assert_eq!(
        fx.err("read_file", json!({"path": "logo.png"})),
        "error: \"logo.png\" is not a text file"
    );
}

#[test]
fn read_file_refuses_files_over_the_read_limit() {
    let fx = fixture_with(ToolConfig {
        read_bytes: 10,
        ..ToolConfig::default()
    });
    assert_eq!(
        fx.err("read_file", json!({"path": "README.md"})),
        "error: \"README.md\" is 26 bytes, more than the 10 bytes the tools read"
    );
}

#[test]
fn write_file_creates_folders_and_keeps_permissions() {
    let fx = fixture();
    assert_eq!(
        fx.ok(
            "write_file",
            json!({"path": "docs/guide/intro.md", "content": "Hello\n"})
        ),
        "wrote 6 bytes to docs/guide/intro.md"
    );
    assert_eq!(
        fs::read_to_string(fx.ws.join("docs/guide/intro.md")).expect("read"),
        "Hello\n"
    );

    let script = fx.ws.join("run.sh");
    fs::write(&script, "#!/bin/sh\n").expect("write");
    fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).expect("chmod");
    fx.ok(
        "write_file",
        json!({"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}),
    );
    let mode = fs::metadata(&script).expect("stat").permissions().mode();
    assert_eq!(mode & 0o777, 0o750);
    assert_eq!(
        fx.err("write_file", json!({"path": "src", "content": ""})),
        "error: path \"src\" is a directory, not a file"
    );
}

#[test]
fn edit_file_replaces_exactly_one_occurrence() {
    let fx = fixture();
    fs::write(fx.ws.join("a.txt"), "one two two\naaa\n").expect("write");
    let edit =
        |old: &str, new: &str| json!({"path": "a.txt", "old_string": old, "new_string": new});
    assert_eq!(
        fx.err("edit_file", edit("three", "3")),
        "error: old_string does not occur in \"a.txt\"; read the file and copy the text exactly"
    );
    assert_eq!(
        fx.err("edit_file", edit("two", "2")),
        "error: old_string occurs 2 times in \"a.txt\"; include more context to make it unique"
    );
    // Overlapping occurrences are ambiguous too.
    assert_eq!(
        fx.err("edit_file", edit("aa", "b")),
        "error: old_string occurs 2 times in \"a.txt\"; include more context to make it unique"
    );
    assert!(
        fx.err("edit_file", edit("", "x"))
            .contains("old_string is empty")
    );
    assert_eq!(
        fx.ok("edit_file", edit("two two\naaa", "2 2\nb")),
        "edited a.txt at line 1"
    );
    assert_eq!(
        fs::read_to_string(fx.ws.join("a.txt")).expect("read"),
        "one 2 2\nb\n"
    );
}

#[test]
fn list_dir_marks_folders_and_links() {
    let fx = fixture();
    fx.link("alias", "src");
    assert_eq!(
        fx.ok("list_dir", json!({})),
        ".git/\n.merkle/\nREADME.md\nalias@\nnotes/\nsrc/\n"
    );
    assert_eq!(
        fx.ok("list_dir", json!({"path": "notes"})),
        "(empty folder)\n"
    );
    assert_eq!(fx.ok("list_dir", json!({"path": "alias"})), "lib.rs\n");
    assert_eq!(
        fx.err("list_dir", json!({"path": "README.md"})),
        "error: path \"README.md\" is not a directory"
    );
}

// ---- confinement ----

/// Every file tool refuses `path` as outside the workspace.
#[track_caller]
fn check_outside(fx: &Fixture, path: &str) {
    let expected = format!("error: path {path:?} is outside the workspace");
    assert_eq!(fx.err("read_file", json!({"path": path})), expected, "read");
    assert_eq!(
        fx.err("write_file", json!({"path": path, "content": "pwned"})),
        expected,
        "write"
    );
    assert_eq!(
        fx.err(
            "edit_file",
            json!({"path": path, "old_string": "top", "new_string": "no"})
        ),
        expected,
        "edit"
    );
    fx.secret_intact();
}

#[test]
fn dot_dot_cannot_leave_the_workspace() {
    let fx = fixture();
    check_outside(&fx, "../outside/secret.txt");
    check_outside(&fx, "src/../../outside/secret.txt");
    check_outside(&fx, "src/./../notes/../../outside/secret.txt");
    assert_eq!(
        fx.err("list_dir", json!({"path": ".."})),
        "error: path \"..\" is outside the workspace"
    );
    // `..` that stays inside is fine.
    assert_eq!(
        fx.ok("read_file", json!({"path": "notes/../README.md"})),
        "# Demo\n\nA demo workspace.\n"
    );
}

#[test]
fn absolute_paths_must_lie_inside() {
    let fx = fixture();
    let secret = fx.outside.join("secret.txt").display().to_string();
    check_outside(&fx, &secret);
    check_outside(&fx, "/etc/passwd");
    let inside = fx.ws.join("src/lib.rs").display().to_string();
    assert!(fx.ok("read_file", json!({"path": inside})).contains("42"));
}

#[test]
fn symlinks_pointing_out_are_not_followed() {
    let fx = fixture();
    fx.link("out_rel", "../outside");
    fx.link("out_abs", &fx.outside);
    fx.link("secret_link", fx.outside.join("secret.txt"));
    check_outside(&fx, "out_rel/secret.txt");
    check_outside(&fx, "out_abs/secret.txt");
    check_outside(&fx, "secret_link");
    // A new file through a link to outside is refused too.
    check_outside(&fx, "out_rel/new.txt");
    assert_eq!(
        fx.err("list_dir", json!({"path": "out_abs"})),
        "error: path \"out_abs\" is outside the workspace"
    );
}

#[test]
fn symlinked_parent_folders_pointing_out_are_not_followed() {
    let fx = fixture();
    fs::create_dir_all(fx.ws.join("src/nested")).expect("mkdir");
    symlink("../../../outside", fx.ws.join("src/nested/up")).expect("symlink");
    check_outside(&fx, "src/nested/up/secret.txt");
    check_outside(&fx, "src/nested/up/deeper/new.txt");
}

#[test]
fn symlinks_inside_the_workspace_work() {
    let fx = fixture();
    fx.link("alias", "src");
    fx.link("abs_alias", fx.ws.join("src"));
    fs::create_dir_all(fx.ws.join("notes/sub")).expect("mkdir");
    symlink("../../README.md", fx.ws.join("notes/sub/readme")).expect("symlink");
    assert!(
        fx.ok("read_file", json!({"path": "alias/lib.rs"}))
            .contains("42")
    );
    assert!(
        fx.ok("read_file", json!({"path": "abs_alias/lib.rs"}))
            .contains("42")
    );
    assert!(
        fx.ok("read_file", json!({"path": "notes/sub/readme"}))
            .contains("Demo")
    );
    // Writing through a link changes the file it names, which stays a file.
    assert_eq!(
        fx.ok("write_file", json!({"path": "alias/new.rs", "content": ""})),
        "wrote 0 bytes to src/new.rs"
    );
    assert!(fx.ws.join("src/new.rs").is_file());
}

#[test]
fn symlink_loops_end() {
    let fx = fixture();
    fx.link("loop", "loop");
    assert_eq!(
        fx.err("read_file", json!({"path": "loop"})),
        "error: path \"loop\" has too many symbolic links"
    );
}

#[test]
fn git_and_merkle_folders_are_read_only() {
    let fx = fixture();
    fx.link("git_alias", ".git");
    for (path, protected) in [
        (".git/config", ".git"),
        (".git/hooks/pre-commit", ".git"),
        (".merkle/store", ".merkle"),
        ("vendor/dep/.git/HEAD", ".git"),
        (".GIT/config", ".git"),
        ("git_alias/config", ".git"),
    ] {
        assert_eq!(
            fx.err("write_file", json!({"path": path, "content": "x"})),
            format!("error: path {path:?} is in {protected}, which tools may not change"),
        );
    }
    assert_eq!(
        fx.err(
            "edit_file",
            json!({"path": ".git/config", "old_string": "core", "new_string": "x"})
        ),
        "error: path \".git/config\" is in .git, which tools may not change"
    );
    assert_eq!(
        fs::read_to_string(fx.ws.join(".git/config")).expect("read"),
        "[core]\n"
    );
    assert!(
        !fx.ws.join("vendor").exists(),
        "no folder was made on the way"
    );
    // Reading them is allowed.
    assert_eq!(
        fx.ok("read_file", json!({"path": ".git/config"})),
        "[core]\n"
    );
}

// ---- search ----

#[test]
fn search_honours_gitignore_and_skips_hidden_and_binary_files() {
    let fx = fixture();
    fs::write(fx.ws.join(".gitignore"), "target/\n*.log\n").expect("write");
    fs::create_dir_all(fx.ws.join("target")).expect("mkdir");
    fs::write(fx.ws.join("target/out.rs"), "fn answer() {}\n").expect("write");
    fs::write(fx.ws.join("build.log"), "answer\n").expect("write");
    fs::write(fx.ws.join(".hidden.rs"), "answer\n").expect("write");
    fs::write(fx.ws.join("blob.bin"), b"answer\0").expect("write");
    fs::write(
        fx.ws.join("notes/todo.md"),
        "Find the ANSWER\nanswer again\n",
    )
    .expect("write");
    assert_eq!(
        fx.ok("search", json!({"pattern": "answer"})),
        "notes/todo.md:2: answer again\nsrc/lib.rs:1: pub fn answer() -> u32 {\n"
    );
    assert_eq!(
        fx.ok(
            "search",
            json!({"pattern": "answer", "path": "notes", "ignore_case": true})
        ),
        "notes/todo.md:1: Find the ANSWER\nnotes/todo.md:2: answer again\n"
    );
    assert_eq!(
        fx.ok("search", json!({"pattern": "4\\d", "path": "src/lib.rs"})),
        "src/lib.rs:2:     42\n"
    );
    assert_eq!(
        fx.ok("search", json!({"pattern": "nowhere"})),
        "no matches for \"nowhere\" in .\n"
    );
    assert!(
        fx.err("search", json!({"pattern": "("}))
            .starts_with("error: invalid regular expression \"(\": ")
    );
}

#[test]
fn search_stops_at_the_match_limit() {
    let fx = fixture_with(ToolConfig {
        search_matches: 2,
        ..ToolConfig::default()
    });
    fs::write(fx.ws.join("notes/many.txt"), "x\nx\nx\n").expect("write");
    assert_eq!(
        fx.ok("search", json!({"pattern": "x", "path": "notes"})),
        "notes/many.txt:1: x\nnotes/many.txt:2: x\n\
         [... stopped after 2 matches; narrow the pattern or the path]\n"
    );
}

#[test]
fn search_stays_inside() {
    let fx = fixture();
    fx.link("out", "../outside");
    fx.link("secret_link", fx.outside.join("secret.txt"));
    assert_eq!(
        fx.ok("search", json!({"pattern": "top secret"})),
        "no matches for \"top secret\" in .\n"
    );
    assert_eq!(
        fx.err("search", json!({"pattern": "secret", "path": "../outside"})),
        "error: path \"../outside\" is outside the workspace"
    );
    assert_eq!(
        fx.err("search", json!({"pattern": "secret", "path": "out"})),
        "error: path \"out\" is outside the workspace"
    );
}

// ---- run_command ----

#[test]
fn run_command_reports_exit_code_and_both_streams() {
    let fx = fixture();
    assert_eq!(
        fx.ok(
            "run_command",
            json!({"command": "pwd; echo oops >&2; exit 3"})
        ),
        format!(
            "exit code: 3\n--- stdout ---\n{}\n--- stderr ---\noops\n",
            fx.ws.canonicalize().expect("canonical").display()
        )
    );
    assert_eq!(
        fx.ok("run_command", json!({"command": "true"})),
        "exit code: 0\n"
    );
}

#[test]
fn run_command_kills_a_command_at_its_time_limit() {
    let fx = fixture_with(ToolConfig {
        command_timeout: Duration::from_millis(200),
        ..ToolConfig::default()
    });
    assert_eq!(
        fx.err(
            "run_command",
            json!({"command": "echo started; exec sleep 30"})
        ),
        "error: command \"echo started; exec sleep 30\" ran past its time limit of 200ms and \
         was killed\n--- stdout ---\nstarted\n"
    );
}

#[test]
fn run_command_keeps_the_start_and_end_of_long_output() {
    // 200 bytes for framing, then 100 a stream: 50 from the start and 50 from the end.
    let fx = fixture_with(ToolConfig {
        output_bytes: 400,
        ..ToolConfig::default()
    });
    let out = fx.call(
        "run_command",
        json!({"command": "printf 'BEGIN'; head -c 5000 /dev/zero | tr '\\0' x; printf 'END'"}),
    );
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        out.content,
        format!(
            "exit code: 0\n--- stdout ---\nBEGIN{}\n[... 4908 bytes not shown ...]\n{}END\n",
            "x".repeat(45),
            "x".repeat(47)
        )
    );
}

/// The context tools' `search_symbols` and `related_files` on a store of the fixture: the
/// answers `merkle --json search` and `related` print, an edit seen without a scan, and bad
/// input as error results naming it.
#[test]
fn search_symbols_and_related_files_answer_json_and_see_edits() {
    let mut fx = fixture();
    fs::write(fx.ws.join("Cargo.toml"), "[package]\n").expect("write");
    fs::write(
        fx.ws.join("src/main.rs"),
        "use crate::lib_helpers::x;\nmod store;\nfn main() {}\n",
    )
    .expect("write");
    fs::write(fx.ws.join("src/store.rs"), "pub struct Store;\n").expect("write");
    let store = Arc::new(
        merkle_store::Store::open(&fx.ws, &merkle_store::OpenOptions::default()).expect("store"),
    );
    store
        .scan(&merkle_store::ScanOptions::default())
        .expect("scan");
    for tool in agent_loop::tools::context::context_tools(&store, "bot") {
        fx.tools.register(tool).expect("register");
    }

    let hits: Value = serde_json::from_str(&fx.ok("search_symbols", json!({"query": "answer"})))
        .expect("search answers JSON");
    assert_eq!(hits[0]["path"], json!("src/lib.rs"), "{hits}");
    assert_eq!(
        hits[0]["symbols"][0],
        json!({
            "name": "answer", "kind": "function", "line_start": 1, "line_end": 3,
            "signature": "pub fn answer() -> u32",
        })
    );
    assert!(
        hits[0]["why"]
            .as_array()
            .is_some_and(|w| w.contains(&json!("defines: answer"))),
        "{hits}"
    );
    // With functions, the definitions themselves, best first across files.
    let found: Value = serde_json::from_str(&fx.ok(
        "search_symbols",
        json!({"query": "answer", "functions": true, "limit": 2}),
    ))
    .expect("JSON");
    assert_eq!(
        (&found[0]["path"], &found[0]["name"], &found[0]["kind"]),
        (&json!("src/lib.rs"), &json!("answer"), &json!("function")),
        "{found}"
    );
    assert!(found.as_array().is_some_and(|f| f.len() <= 2), "{found}");
    // The tool rescans: a file written since is searchable.
    fs::write(fx.ws.join("src/ledger.rs"), "pub struct Ledger;\n").expect("write");
    let hits: Value = serde_json::from_str(&fx.ok(
        "search_symbols",
        json!({"query": "Ledger", "type": "struct", "limit": 1}),
    ))
    .expect("JSON");
    assert_eq!(hits[0]["path"], json!("src/ledger.rs"));

    let related: Value =
        serde_json::from_str(&fx.ok("related_files", json!({"path": "./src/store.rs"})))
            .expect("JSON");
    assert_eq!(
        related,
        json!([{"path": "src/main.rs", "relation": "imported_by", "line": 2, "specifier": "store"}])
    );

    assert!(
        fx.err("search_symbols", json!({"query": "x", "type": "gadget"}))
            .contains("\"gadget\"")
    );
    assert!(
        fx.err("search_symbols", json!({"limit": 3}))
            .contains("query")
    );
    assert!(
        fx.err("related_files", json!({"path": "src/nope.rs"}))
            .contains("src/nope.rs")
    );

    // task_context: the code a task needs, as Markdown, within its budget.
    let bundle = fx.ok(
        "task_context",
        json!({"task": "what does answer return", "budget": 500}),
    );
    assert!(
        bundle.starts_with("# Context: ")
            && bundle.contains("\n## src/lib.rs\n")
            && bundle.contains("answer, lines 1-3:\n```rust\npub fn answer() -> u32 {"),
        "{bundle}"
    );
    assert!(
        fx.err("task_context", json!({"task": " "}))
            .contains("empty")
    );

    // refs: where `answer` is and who calls it, as `merkle --json refs` answers it.
    let refs: Value =
        serde_json::from_str(&fx.ok("refs", json!({"target": "answer"}))).expect("JSON");
    assert_eq!(
        refs["definitions"][0]["path"],
        json!("src/lib.rs"),
        "{refs:#}"
    );
    assert!(
        fx.err("refs", json!({"target": "not a name"}))
            .contains("no symbol name")
    );
}

/// The context tools name nodes as the CLI and the MCP server do (`Store::resolve`): a path in
/// any spelling (`./`, `..`, a trailing `/`) or a NodeID prefix is the same node; and a frame
/// put through them is what the store holds for it.
#[test]
fn context_tools_name_nodes_as_every_front_end_does() {
    let mut fx = fixture();
    let store = Arc::new(
        merkle_store::Store::open(&fx.ws, &merkle_store::OpenOptions::default()).expect("store"),
    );
    store
        .scan(&merkle_store::ScanOptions::default())
        .expect("scan");
    store
        .add_agent("bot", merkle_store::Role::Synthesis)
        .expect("agent");
    for tool in agent_loop::tools::context::context_tools(&store, "bot") {
        fx.tools.register(tool).expect("register");
    }
    let lib = store.resolve("src/lib.rs").expect("lib.rs");
    let put: Value = serde_json::from_str(&fx.ok(
        "put_frame",
        json!({"path": "./notes/../src/lib.rs", "type": "notes", "content": "the answer"}),
    ))
    .expect("put_frame answers JSON");
    assert_eq!(
        (&put["path"], &put["created"]),
        (&json!("src/lib.rs"), &json!(true)),
        "{put}"
    );
    let heads = store.heads(&lib.node_id).expect("heads");
    assert_eq!(heads.len(), 1);
    assert_eq!(heads[0].content, b"the answer");
    let prefix = &lib.node_id.to_hex()[..12];
    for spelling in ["src/lib.rs", "./src/lib.rs", "src/./lib.rs", prefix] {
        let node: Value = serde_json::from_str(&fx.ok("get_node", json!({"path": spelling})))
            .expect("get_node answers JSON");
        assert_eq!(
            (&node["node"]["path"], &node["frames"][0]["content"]),
            (&json!("src/lib.rs"), &json!("the answer")),
            "{spelling}: {node}"
        );
    }
    let dir: Value = serde_json::from_str(&fx.ok("get_node", json!({"path": "src/"})))
        .expect("get_node answers JSON");
    assert_eq!(dir["node"]["path"], json!("src"), "{dir}");
    let missing = fx.err("get_node", json!({"path": "src/nope.rs"}));
    assert!(missing.contains("src/nope.rs"), "{missing}");
    let synthesized: Value =
        serde_json::from_str(&fx.ok("synthesize", json!({"path": "src", "type": "notes"})))
            .expect("synthesize answers JSON");
    assert_eq!(
        (&synthesized["path"], &synthesized["frame_type"]),
        (&json!("src"), &json!("notes")),
        "{synthesized}"
    );
}
