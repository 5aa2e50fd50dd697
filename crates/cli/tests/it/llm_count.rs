//! `merkle llm count`: the provider's count through the fake services' count endpoints
//! (`merkle sim serve`), and the offline estimate, calibrated by earlier answers and kept in
//! the store folder between commands.

use pretty_assertions::assert_eq;
use serde_json::Value;

use crate::llm::{Served, llm};
use crate::{Workspace, ok, parse};

/// Files of this repository to count and to send.
const FILES: [&str; 6] = [
    include_str!("../../src/llm.rs"),
    include_str!("../../src/main.rs"),
    include_str!("../../src/calibration.rs"),
    include_str!("../../src/agents.rs"),
    include_str!("../../src/report.rs"),
    include_str!("../../src/output.rs"),
];

fn off(estimate: &Value, counted: u64) -> f64 {
    let estimate = estimate["tokens"].as_u64().expect("tokens");
    (estimate as f64 - counted as f64).abs() / counted as f64
}

#[test]
fn the_count_is_the_provider_s_and_the_offline_estimate_learns_it_from_answers() {
    let ws = Workspace::empty();
    std::fs::create_dir(ws.path(".merkle")).expect("store folder");
    let script = ws.path("answers.yaml");
    let answers = "  - content: \"A summary.\"\n".repeat(FILES.len());
    std::fs::write(&script, format!("responses:\n{answers}")).expect("script");
    let server = Served::start(&["--script", script.to_str().expect("utf-8")]);
    // `merkle [--json] llm COMMAND` against the fake Anthropic service: its stdout.
    let anthropic_out = |json: bool, command: &str, extra: &[&str], prompt: &str| {
        let mut args = vec![
            "llm",
            command,
            "--provider",
            "anthropic",
            "--model",
            "claude-sonnet-4-6",
            "--base-url",
            &server.url,
            "--api-key-env",
            "ANTHROPIC_API_KEY",
        ];
        if json {
            args.insert(0, "--json");
        }
        args.extend_from_slice(extra);
        args.push(prompt);
        let mut cmd = llm(&ws, &args);
        cmd.env("ANTHROPIC_API_KEY", "sk-ant-fake");
        ok(&mut cmd)
    };
    let anthropic = |command: &str, extra: &[&str], prompt: &str| {
        parse(&anthropic_out(true, command, extra, prompt))
    };
    let prompt = FILES[0];
    let online = anthropic("count", &[], prompt);
    assert_eq!(
        (&online["source"], &online["exact"], &online["provider"]),
        (
            &Value::from("provider"),
            &Value::from(true),
            &Value::from("anthropic")
        )
    );
    let counted = online["tokens"].as_u64().expect("tokens");
    let before = anthropic("count", &["--offline"], prompt);
    assert_eq!(before["source"], "estimate");
    assert!(off(&before, counted) > 0.05, "{before} against {counted}");
    // Five answers, each a separate command: the calibration is kept in between.
    for file in &FILES[1..] {
        let answer = anthropic("complete", &[], file);
        assert_eq!(answer["text"], "A summary.");
    }
    assert!(ws.path(".merkle/llm-calibration.json").is_file());
    let after = anthropic("count", &["--offline"], prompt);
    assert_eq!(after["source"], "calibrated");
    assert!(off(&after, counted) <= 0.05, "{after} against {counted}");
    let text = anthropic_out(false, "count", &["--offline"], prompt);
    assert!(
        text.contains("input tokens (estimated, calibrated by earlier answers of this model)"),
        "{text}"
    );
}

#[test]
fn openai_counts_come_from_the_responses_endpoint_or_tiktoken() {
    let ws = Workspace::empty();
    let script = ws.path("answers.yaml");
    std::fs::write(&script, "responses:\n  - content: \"ok\"\n").expect("script");
    let server = Served::start(&["--script", script.to_str().expect("utf-8")]);
    let openai_url = format!("{}/v1", server.url);
    let count = |api: &str, offline: bool| {
        let mut args = vec![
            "--json",
            "llm",
            "count",
            "--provider",
            "openai",
            "--api",
            api,
            "--model",
            "gpt-5-mini",
            "--base-url",
            &openai_url,
            "--api-key-env",
            "OPENAI_API_KEY",
            "--system",
            "Be brief.",
            FILES[2],
        ];
        if offline {
            args.push("--offline");
        }
        let mut cmd = llm(&ws, &args);
        cmd.env("OPENAI_API_KEY", "sk-fake");
        parse(&ok(&mut cmd))
    };
    assert_eq!(count("responses", false)["source"], "provider");
    assert_eq!(count("chat", false)["source"], "tokenizer");
    // Offline, an OpenAI model is still counted by its tokenizer.
    assert_eq!(count("responses", true)["source"], "tokenizer");
}
