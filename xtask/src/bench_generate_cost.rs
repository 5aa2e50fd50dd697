//! `cargo xtask bench generate-cost --repo PATH`: the CLI's generate-cost example, printed
//! against its uncached baseline and the targets of issue #47 (direct with cache <= 0.4x,
//! batch <= 0.25x).

use std::process::ExitCode;

use anyhow::Result;

use crate::{flag_values, merkle_flag, repo_flag, run_bench_example_with};

pub(crate) fn bench_generate_cost(args: &[&str]) -> Result<ExitCode> {
    let flags = flag_values(args, &["--repo", "--merkle"])?;
    let repo = repo_flag(&flags, "generate-cost")?;
    let merkle = merkle_flag(&flags)?;
    let json = run_bench_example_with(
        "merkle",
        "generate_cost_bench",
        &["--merkle", &merkle, "--repo", &repo],
    )?;
    let doc: serde_json::Value = serde_json::from_str(&json)?;
    println!(
        "bench generate-cost (release, fake services): generate -r --policy map of {} files \
         of {repo}; billable input = uncached + reads x0.1 + writes at the provider's price \
         (Anthropic 1h 2x, GPT-5.6 1.25x), times 0.5 for Flex and batch; ratio against the \
         uncached input (every input token of the run without cache hints, at 1x)\n",
        doc["files"]
    );
    let Some(providers) = doc["providers"].as_object() else {
        anyhow::bail!("no providers in {json}");
    };
    for (provider, p) in providers {
        println!("{provider} ({}):", p["model"].as_str().unwrap_or_default());
        println!(
            "  {:<9} {:>6} {:>12} {:>12} {:>12} {:>14} {:>7} {:>8}",
            "run", "calls", "input", "cache write", "cache read", "billable", "ratio", "target"
        );
        for name in ["uncached", "cached", "flex", "batch"] {
            let run = &p["runs"][name];
            if run.is_null() {
                continue;
            }
            let ratio = run["ratio"].as_f64().unwrap_or(f64::NAN);
            let target = match name {
                "cached" => verdict(ratio, 0.4),
                "batch" => verdict(ratio, 0.25),
                _ => String::new(),
            };
            println!(
                "  {:<9} {:>6} {:>12} {:>12} {:>12} {:>14.0} {:>6.3}x {target}",
                name,
                count(&run["calls"]),
                count(&run["input_tokens"]),
                count(&run["cache_write_tokens"]),
                count(&run["cache_read_tokens"]),
                run["billable_input"].as_f64().unwrap_or(f64::NAN),
                ratio
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn count(value: &serde_json::Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

fn verdict(ratio: f64, target: f64) -> String {
    let pass = if ratio <= target { "PASS" } else { "MISS" };
    format!("<= {target}: {pass}")
}
