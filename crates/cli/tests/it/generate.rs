//! `merkle generate` with a model: the simulator answers, `--json` reports the calls, and a
//! re-run costs none.
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{Workspace, parse, run};

fn generate(ws: &Workspace, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json", "generate", "--recursive"];
    all.extend_from_slice(args);
    let mut cmd = ws.cmd(&all);
    for name in ["MERKLE_LLM_MODE", "MERKLE_LLM_PROVIDER", "MERKLE_AGENT"] {
        cmd.env_remove(name);
    }
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    parse(&r.stdout)
}

#[test]
fn a_model_writes_frames_once_and_the_rerun_calls_nothing() {
    let ws = Workspace::fixture();
    let first = generate(&ws, &["--provider", "sim", "--concurrency", "3"]);
    // One call per leaf (files and symlinks) and per directory.
    assert_eq!(
        (
            &first["produced"],
            &first["synthesized"],
            &first["llm"]["calls"]
        ),
        (&json!(10), &json!(4), &json!(14)),
        "{first}"
    );
    assert!(
        first["producer"]
            .as_str()
            .is_some_and(|p| p.starts_with("llm:default:")),
        "{first}"
    );
    let again = generate(&ws, &["--provider", "sim"]);
    assert_eq!(
        (
            &again["llm"]["calls"],
            &again["produced"],
            &again["synthesized"]
        ),
        (&json!(0), &json!(0), &json!(0))
    );
    // The default agent was registered with the synthesis role and wrote the frames.
    let head = ws.json(&["get-head", "src/lib.rs", "--type", "summary"]);
    assert_eq!(
        (&head["agent_id"], &head["content"]),
        (&json!("merkle"), &json!("Simulated response"))
    );
}

#[test]
fn without_a_model_generate_is_offline_and_says_so() {
    let ws = Workspace::fixture();
    let mut cmd = ws.cmd(&["generate", "-r"]);
    cmd.env_remove("MERKLE_LLM_MODE")
        .env_remove("MERKLE_LLM_PROVIDER");
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.stderr.contains("no model is configured") && r.stdout.contains("produced"),
        "{r}"
    );
    let offline = generate(&ws, &["--offline"]);
    assert_eq!(offline["producer"], json!("outline:8"), "{offline}");
    assert!(offline.get("llm").is_none());
}
