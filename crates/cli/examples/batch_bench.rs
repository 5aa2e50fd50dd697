//! `cargo xtask bench batch --repo PATH`: `merkle generate --batch` on a real tree against the
//! fake Anthropic server, checked against a direct generate of the same tree.
//!
//! Three copies of the tree: one generated directly, one with `--batch`, and one whose
//! `--batch` run is killed (`kill -9`) while the server holds its batch, then run again. The
//! server answers each call with a digest of its prompt ([`llm_sim::Digest`]), so the answers
//! do not depend on the order calls arrive in. Prints one JSON object: the files, the direct
//! run's calls, the batches and direct calls of the batched runs, whether every node's head
//! frame is the same, the cost ratio, and the seconds each run took.
//!
//! Usage: batch_bench --merkle BIN --repo PATH
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use llm_sim::{Digest, FakeServer};
use merkle_store::{OpenOptions, Store};
use serde_json::{Value, json};

#[path = "support/tree.rs"]
mod tree;
use tree::copy_tree;

fn main() -> Result<()> {
    let usage = "batch_bench --merkle BIN --repo PATH";
    let merkle = tree::required("--merkle", usage)?;
    let repo = tree::required("--repo", usage)?;
    let runtime = tree::runtime()?;
    let server = runtime.block_on(FakeServer::start("127.0.0.1:0", Box::new(Digest)))?;
    let work = std::env::temp_dir().join(format!("merkle-batch-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let trees: Vec<PathBuf> = ["direct", "batch", "killed"]
        .iter()
        .map(|name| work.join(name))
        .collect();
    let mut files = 0;
    for tree in &trees {
        files = copy_tree(&repo, tree)?;
    }
    let model = |tree: &Path| -> Vec<String> {
        [
            "--root",
            tree.to_str().expect("a utf-8 temporary path"),
            "--json",
            "generate",
            "-r",
            "--policy",
            "map",
            "--provider",
            "anthropic",
            "--base-url",
            &server.url(),
            "--api-key-env",
            "SIM_KEY",
            "--model",
            "claude-sim",
            "--price",
            "3,15",
            "--poll",
            "0.05",
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let direct_calls =
        |server: &FakeServer| server.served().iter().filter(|s| s.batch.is_none()).count();

    let started = Instant::now();
    let direct = generate(&merkle, &model(&trees[0]), &[])?;
    let direct_seconds = started.elapsed().as_secs_f64();
    let calls = direct_calls(&server);

    let started = Instant::now();
    let batched = generate(&merkle, &model(&trees[1]), &["--batch"])?;
    let batch_seconds = started.elapsed().as_secs_f64();
    let batches = server.batch_ids().len();
    let batch_direct_calls = direct_calls(&server) - calls;

    // Killed while it waits for a held batch, then run again.
    server.hold_batches(true);
    kill_once_sent(&merkle, model(&trees[2]))?;
    let before_resume = server.batch_ids().len();
    server.hold_batches(false);
    let resumed = generate(&merkle, &model(&trees[2]), &["--batch"])?;
    let after_resume = server.batch_ids().len();

    let reference = heads(&trees[0])?;
    let cost = |report: &Value| report["llm"]["cost_usd"].as_f64().unwrap_or(f64::NAN);
    let report = json!({
        "files": files,
        "direct": {"calls": calls, "seconds": direct_seconds, "cost_usd": cost(&direct)},
        "batch": {
            "batches": batches,
            "direct_calls": batch_direct_calls,
            "seconds": batch_seconds,
            "cost_usd": cost(&batched),
            "cost_ratio": cost(&batched) / cost(&direct),
            "frames_identical": heads(&trees[1])? == reference,
            "frames": reference.len(),
        },
        "killed_and_resumed": {
            "batches_before": before_resume - batches,
            "batches_after": after_resume - batches,
            "resumed": resumed["batch"]["resumed"],
            "frames_identical": heads(&trees[2])? == reference,
        },
    });
    println!("{report}");
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// Runs `merkle` with `args` and `--batch` (without `--json`, which keeps stderr quiet: the
/// run says when its batch is sent) and kills it (`kill -9`) once it has sent its batch.
fn kill_once_sent(merkle: &Path, args: Vec<String>) -> Result<()> {
    let mut args: Vec<String> = args.into_iter().filter(|arg| arg != "--json").collect();
    args.push("--batch".to_owned());
    let mut child = Command::new(merkle)
        .args(&args)
        .env("SIM_KEY", "sk-sim")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()?;
    let stderr = child.stderr.take().context("piped stderr")?;
    let sent = BufReader::new(stderr)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.starts_with("sent batch "));
    if !sent {
        bail!("generate --batch never said it sent its batch");
    }
    child.kill()?;
    child.wait()?;
    Ok(())
}

fn generate(merkle: &Path, args: &[String], extra: &[&str]) -> Result<Value> {
    let out = Command::new(merkle)
        .args(args)
        .args(extra)
        .env("SIM_KEY", "sk-sim")
        .env_remove("MERKLE_LLM_MODE")
        .env_remove("MERKLE_AGENT")
        .output()?;
    if !out.status.success() {
        bail!(
            "merkle generate {extra:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Every node's head summary frame id (a hash of node, content, type and agent) and producer.
fn heads(tree: &Path) -> Result<BTreeMap<String, (String, Option<String>)>> {
    let options = OpenOptions {
        read_only: true,
        ..OpenOptions::default()
    };
    let store = Store::open(tree, &options)?;
    let mut heads = BTreeMap::new();
    for node in store.list_nodes("", true)? {
        if let Some(frame) = store.head(&node.node_id, "summary")? {
            let producer = frame.metadata.extra.get("producer").cloned();
            heads.insert(node.path, (frame.frame_id.to_hex(), producer));
        }
    }
    Ok(heads)
}
