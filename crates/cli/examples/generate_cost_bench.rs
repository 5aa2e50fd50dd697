//! `cargo xtask bench generate-cost --repo PATH`: what a model's `merkle generate` of a real
//! tree bills for its input, four ways, against the same run with no cache.
//!
//! For each provider's rules (the fake Anthropic service with `claude-sonnet-4-6`, the fake
//! OpenAI service with `gpt-5.6-terra`), a fresh copy of the tree and a fresh server (so no run
//! reads another's cache) per run: direct with `--no-prompt-cache` (the baseline), direct with
//! the run's cached prefix (the default), OpenAI's Flex tier (`--service-tier flex`, OpenAI
//! only) and `--batch`. Billable input counts uncached input 1x, reads 0.1x and writes at the
//! provider's price (Anthropic's one-hour writes 2x, GPT-5.6's 1.25x), times the tier's share
//! (batch and Flex: 0.5), against the uncached input: every input token of the baseline run
//! at 1x (which GPT-5.6 itself bills at more, since it writes each request's end to its cache
//! unasked). The server answers each call with a digest of its prompt ([`llm_sim::Digest`]).
//! Prints one JSON object.
//!
//! Usage: generate_cost_bench --merkle BIN --repo PATH
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Result, bail};
use llm_sim::{Digest, FakeServer};
use serde_json::{Value, json};

#[path = "support/tree.rs"]
mod tree;
use tree::copy_tree;

/// One way of running generate: its name, its extra flags and the share of the price it bills.
struct Way {
    name: &'static str,
    flags: &'static [&'static str],
    share: f64,
}

const WAYS: [Way; 4] = [
    Way {
        name: "uncached",
        flags: &["--no-prompt-cache"],
        share: 1.0,
    },
    Way {
        name: "cached",
        flags: &[],
        share: 1.0,
    },
    Way {
        name: "flex",
        flags: &["--service-tier", "flex"],
        share: 0.5,
    },
    Way {
        name: "batch",
        flags: &["--batch", "--poll", "0.05"],
        share: 0.5,
    },
];

/// A provider's rules: how merkle reaches it, the model, and what a cache write costs.
struct Rules {
    provider: &'static str,
    model: &'static str,
    write_factor: f64,
}

const RULES: [Rules; 2] = [
    Rules {
        provider: "anthropic",
        model: "claude-sonnet-4-6",
        write_factor: 2.0,
    },
    Rules {
        provider: "openai",
        model: "gpt-5.6-terra",
        write_factor: 1.25,
    },
];

fn main() -> Result<()> {
    let usage = "generate_cost_bench --merkle BIN --repo PATH";
    let merkle = tree::required("--merkle", usage)?;
    let repo = tree::required("--repo", usage)?;
    let runtime = tree::runtime()?;
    let work = std::env::temp_dir().join(format!("merkle-cost-bench-{}", std::process::id()));
    let mut files = 0;
    let mut providers = serde_json::Map::new();
    for rules in &RULES {
        let mut runs = serde_json::Map::new();
        let mut baseline = None;
        for way in &WAYS {
            if way.name == "flex" && rules.provider != "openai" {
                continue;
            }
            let tree = work.join(format!("{}-{}", rules.provider, way.name));
            let _ = std::fs::remove_dir_all(&tree);
            files = copy_tree(&repo, &tree)?;
            let server = runtime.block_on(FakeServer::start("127.0.0.1:0", Box::new(Digest)))?;
            let started = Instant::now();
            let report = generate(&merkle, &tree, &server, rules, way.flags)?;
            let seconds = started.elapsed().as_secs_f64();
            let llm = &report["llm"];
            let n = |key: &str| llm[key].as_f64().unwrap_or(0.0);
            let billable = way.share
                * (n("input_tokens")
                    + rules.write_factor * n("cache_write_tokens")
                    + 0.1 * n("cache_read_tokens"));
            // Uncached input: every input token of the run without hints, at 1x.
            let base = *baseline.get_or_insert(
                n("input_tokens") + n("cache_write_tokens") + n("cache_read_tokens"),
            );
            runs.insert(
                way.name.to_owned(),
                json!({
                    "calls": llm["calls"],
                    "input_tokens": llm["input_tokens"],
                    "cache_write_tokens": llm["cache_write_tokens"],
                    "cache_read_tokens": llm["cache_read_tokens"],
                    "billable_input": billable,
                    "ratio": billable / base,
                    "cost_usd": llm["cost_usd"],
                    "seconds": seconds,
                }),
            );
            let _ = std::fs::remove_dir_all(&tree);
        }
        providers.insert(
            rules.provider.to_owned(),
            json!({"model": rules.model, "runs": runs}),
        );
    }
    println!("{}", json!({"files": files, "providers": providers}));
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

fn generate(
    merkle: &Path,
    tree: &Path,
    server: &FakeServer,
    rules: &Rules,
    extra: &[&str],
) -> Result<Value> {
    let url = match rules.provider {
        "anthropic" => server.url(),
        _ => format!("{}/v1", server.url()),
    };
    let out = Command::new(merkle)
        .arg("--root")
        .arg(tree)
        .args(["--json", "generate", "-r", "--policy", "map"])
        .args(["--provider", rules.provider, "--base-url", &url])
        .args(["--api-key-env", "SIM_KEY", "--model", rules.model])
        .args(extra)
        .env("SIM_KEY", "sk-sim")
        .env_remove("MERKLE_LLM_MODE")
        .env_remove("MERKLE_AGENT")
        .output()?;
    if !out.status.success() {
        bail!(
            "merkle generate {extra:?} with {} failed: {}",
            rules.model,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}
