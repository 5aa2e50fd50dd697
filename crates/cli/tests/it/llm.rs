//! `merkle llm complete` and `merkle sim serve`: against the simulator (`--provider sim`) and
//! against the fake API server started by `merkle sim serve` on a free loopback port, never a
//! real provider.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{Run, Workspace, ok, parse, run};

/// A shipped simulation script.
fn script(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/scripts")
        .join(name)
}

/// `merkle ARGS` with no LLM settings, agent or keys from the caller's environment.
pub(crate) fn llm(ws: &Workspace, args: &[&str]) -> assert_cmd::Command {
    let mut cmd = ws.cmd(args);
    for name in LLM_ENV {
        cmd.env_remove(name);
    }
    cmd
}

/// The caller's variables that would pick a model, a key or an agent: removed in every test.
pub(crate) const LLM_ENV: &[&str] = &[
    "MERKLE_LLM_MODE",
    "MERKLE_LLM_SCRIPT",
    "MERKLE_LLM_RECORDING",
    "MERKLE_LLM_PROVIDER",
    "MERKLE_LLM_MODEL",
    "MERKLE_LLM_BASE_URL",
    "MERKLE_LLM_API",
    "MERKLE_LLM_API_KEY",
    "MERKLE_LLM_API_KEY_ENV",
    "MERKLE_LLM_TIMEOUT",
    "MERKLE_LLM_IDLE_TIMEOUT",
    "ANTHROPIC_API_KEY",
    "OPENAI_API_KEY",
    "OLLAMA_HOST",
    "MERKLE_AGENT",
];

/// A `merkle sim serve` child, killed when dropped.
pub(crate) struct Served {
    child: Child,
    pub(crate) url: String,
}

impl Served {
    pub(crate) fn start(args: &[&str]) -> Served {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin!("merkle"))
            .args(["sim", "serve"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting merkle sim serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("reading the served address");
        Served {
            child,
            url: line.trim().to_owned(),
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 path")
}

#[test]
fn sim_answers_without_a_key() {
    let ws = Workspace::empty();
    let r = run(&mut llm(
        &ws,
        &["llm", "complete", "--provider", "sim", "hello"],
    ));
    assert_eq!(
        r,
        Run {
            code: 0,
            stdout: "Simulated response\n".into(),
            stderr: String::new()
        }
    );
    let streamed = ok(&mut llm(
        &ws,
        &["llm", "complete", "--provider", "sim", "--stream", "hello"],
    ));
    assert_eq!(streamed, "Simulated response\n");
}

#[test]
fn sim_follows_a_script_whole_and_streamed() {
    let ws = Workspace::empty();
    let fixture = script("fix_violation_success.yaml");
    let args = [
        "llm",
        "complete",
        "--provider",
        "sim",
        "--script",
        path_str(&fixture),
        "fix it",
    ];
    let text = run(&mut llm(&ws, &args));
    assert_eq!(
        (text.code, text.stdout.as_str()),
        (
            0,
            "[tool call sim_1_0] read_file {\"path\":\"src/agentforge/core/executor.py\"}\n"
        )
    );
    let mut streamed = args.to_vec();
    streamed.push("--stream");
    let doc = parse(&ok(&mut llm(&ws, &[&["--json"], &streamed[..]].concat())));
    insta::assert_json_snapshot!(doc);
}

#[test]
fn the_environment_selects_simulated_mode() {
    let ws = Workspace::empty();
    let fixture = script("fix_violation_escalate.yaml");
    let mut cmd = llm(&ws, &["--json", "llm", "complete", "go"]);
    cmd.env("MERKLE_LLM_MODE", "simulated")
        .env("MERKLE_LLM_SCRIPT", &fixture);
    let doc = parse(&ok(&mut cmd));
    assert_eq!(
        (&doc["tool_calls"][0]["name"], &doc["stop_reason"]),
        (&json!("read_file"), &json!("tool_use"))
    );
}

#[test]
fn a_request_file_with_flags_over_it() {
    let ws = Workspace::empty();
    ws.write(
        "request.json",
        r#"{"model": "from-file", "system": "old", "messages": [{"role": "user", "content": [{"type": "text", "text": "first"}]}]}"#,
    );
    let doc = parse(&ok(&mut llm(
        &ws,
        &[
            "--json",
            "llm",
            "complete",
            "--provider",
            "sim",
            "--request",
            "request.json",
            "--model",
            "flag-model",
            "second",
        ],
    )));
    assert_eq!(
        (&doc["text"], &doc["model"]),
        (&json!("Simulated response"), &json!("flag-model"))
    );
}

#[test]
fn usage_and_setting_errors() {
    let ws = Workspace::empty();
    let no_prompt = run(&mut llm(&ws, &["llm", "complete", "--provider", "sim"]));
    assert_eq!(no_prompt.code, 2, "{no_prompt}");
    assert!(
        no_prompt
            .stderr
            .contains("required arguments were not provided:\n  <PROMPT>"),
        "{no_prompt}"
    );

    let no_key = run(&mut llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "anthropic",
            "--model",
            "m",
            "hi",
        ],
    ));
    assert_eq!(no_key.code, 1, "{no_key}");
    assert!(
        no_key.stderr.starts_with(
            "error: invalid configuration: no api key for anthropic: set ANTHROPIC_API_KEY, or \
             name the variable holding one with api_key_env (--api-key-env)\n\n\
             To use a provider, export its key"
        ) && no_key.stderr.contains("--provider sim"),
        "{no_key}"
    );
    let mut bad_mode = llm(&ws, &["llm", "complete", "hi"]);
    bad_mode.env("MERKLE_LLM_MODE", "dream");
    let bad_mode = run(&mut bad_mode);
    assert_eq!(
        (bad_mode.code, bad_mode.stderr.as_str()),
        (
            1,
            "error: MERKLE_LLM_MODE=\"dream\" is not valid: expected real, simulated, record or playback\n"
        )
    );
    let missing = run(&mut llm(&ws, &["sim", "serve", "--script", "nope.yaml"]));
    assert_eq!(
        (missing.code, missing.stderr.as_str()),
        (
            1,
            "error: cannot read nope.yaml: No such file or directory (os error 2)\n"
        )
    );
}

#[test]
fn providers_talk_to_sim_serve() {
    let ws = Workspace::empty();
    let fixture = script("fix_violation_escalate.yaml");
    let server = Served::start(&["--script", path_str(&fixture)]);
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );

    let mut anthropic = llm(
        &ws,
        &[
            "--json",
            "llm",
            "complete",
            "--provider",
            "anthropic",
            "--model",
            "claude-sim",
            "--base-url",
            &server.url,
            "--api-key-env",
            "ANTHROPIC_API_KEY",
            "go",
        ],
    );
    anthropic.env("ANTHROPIC_API_KEY", "sk-ant-fake");
    let first = parse(&ok(&mut anthropic));
    assert_eq!(
        (&first["tool_calls"][0]["name"], &first["model"]),
        (&json!("read_file"), &json!("claude-sim"))
    );

    let openai_url = format!("{}/v1", server.url);
    let streamed = ok(&mut llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "openai-compatible",
            "--model",
            "gpt-sim",
            "--base-url",
            &openai_url,
            "--stream",
            "go on",
        ],
    ));
    assert_eq!(
        streamed,
        "[tool call sim_2_0] escalate {\"reason\":\"Complex business logic - extraction may change behavior. Human review needed.\"}\n"
    );
    let ended = ok(&mut llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "openai-compatible",
            "--model",
            "m",
            "--base-url",
            &openai_url,
            "more",
        ],
    ));
    assert_eq!(
        ended,
        "No more scripted responses\n[tool call sim_3_0] complete {\"summary\":\"Script ended\"}\n"
    );
}

#[test]
fn the_responses_api_talks_to_sim_serve() {
    let ws = Workspace::empty();
    let fixture = script("fix_violation_escalate.yaml");
    let server = Served::start(&["--script", path_str(&fixture)]);
    let openai_url = format!("{}/v1", server.url);
    let complete = |extra: &[&str]| {
        let mut args = vec![
            "llm",
            "complete",
            "--provider",
            "openai",
            "--api",
            "responses",
            "--model",
            "gpt-sim",
            "--base-url",
            &openai_url,
            "--api-key-env",
            "OPENAI_API_KEY",
        ];
        args.extend_from_slice(extra);
        let mut cmd = llm(&ws, &args);
        cmd.env("OPENAI_API_KEY", "sk-fake");
        cmd
    };
    let first = parse(&ok(&mut complete(&["--json", "go"])));
    assert_eq!(
        (&first["tool_calls"][0]["name"], &first["id"]),
        (&json!("read_file"), &json!("resp_sim1"))
    );
    let streamed = ok(&mut complete(&["--stream", "go on"]));
    assert_eq!(
        streamed,
        "[tool call sim_2_0] escalate {\"reason\":\"Complex business logic - extraction may change behavior. Human review needed.\"}\n"
    );

    for provider in ["anthropic", "sim"] {
        let refused = run(&mut llm(
            &ws,
            &[
                "llm",
                "complete",
                "--provider",
                provider,
                "--api",
                "responses",
                "hi",
            ],
        ));
        assert_eq!(
            (refused.code, refused.stderr.as_str()),
            (
                2,
                format!(
                    "error: --api responses is for the providers that speak OpenAI's APIs \
                     (openai, ollama, openai-compatible), not {provider}\n"
                )
                .as_str()
            )
        );
    }
}

#[test]
fn sim_serve_reports_its_urls_as_json_and_stops_on_sigterm() {
    let ws = Workspace::empty();
    ws.write("s.yaml", "responses:\n  - content: hi\n");
    let mut server = Served::start(&["--json", "--script", path_str(&ws.path("s.yaml"))]);
    let doc = parse(&server.url);
    let url = doc["url"].as_str().expect("a url").to_owned();
    assert_eq!(
        doc,
        json!({"url": url, "anthropic_base_url": url, "openai_base_url": format!("{url}/v1")})
    );
    let status = Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let exit = server.child.wait().expect("merkle exits");
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn a_schema_gets_json_that_follows_it_and_a_bad_schema_file_is_refused() {
    let ws = Workspace::empty();
    ws.write(
        "review.json",
        r#"{"type": "object", "properties": {"verdict": {"type": "string", "enum": ["pass", "fail"]},
            "score": {"type": "integer", "minimum": 1}}, "required": ["verdict", "score"],
            "additionalProperties": false}"#,
    );
    let schema = ws.path("review.json");
    let text = ok(&mut llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "sim",
            "--schema",
            path_str(&schema),
            "Grade it",
        ],
    ));
    let value: serde_json::Value = serde_json::from_str(&text).expect("JSON on stdout");
    assert_eq!(value, serde_json::json!({"verdict": "pass", "score": 1}));
    // What the script says, when it follows the schema; --json adds it as `structured`.
    ws.write(
        "s.yaml",
        "responses:\n  - content: '{\"verdict\": \"fail\", \"score\": 4}'\n",
    );
    let out = ok(&mut llm(
        &ws,
        &[
            "--json",
            "llm",
            "complete",
            "--script",
            path_str(&ws.path("s.yaml")),
            "--schema",
            path_str(&schema),
            "Grade it",
        ],
    ));
    let doc: serde_json::Value = serde_json::from_str(&out).expect("a JSON document");
    assert_eq!(
        doc["structured"],
        serde_json::json!({"verdict": "fail", "score": 4})
    );

    ws.write("list.json", "[1, 2]");
    let r = run(&mut llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "sim",
            "--schema",
            path_str(&ws.path("list.json")),
            "x",
        ],
    ));
    assert_eq!(r.code, 2, "{r}");
    assert!(r.stderr.contains("list.json"), "{r}");
}
