//! `cargo xtask bench agent-cost`: agent-loop's prompt-caching example, printed against its
//! uncached baseline and the targets of issue #47.

use std::process::ExitCode;

use anyhow::Result;

use crate::{json_number, run_bench_example};

/// Runs agent-loop's prompt-caching example in release mode: one 30-call agent session with a
/// 10-minute pause, billed with five-minute breakpoints, one-hour ones, and none.
pub(crate) fn bench_agent_cost() -> Result<ExitCode> {
    let json = run_bench_example("agent-loop", "agent_cost")?;
    let num = |key: &str| json_number(&json, key);
    println!(
        "bench agent-cost (agent-loop, release): one session of {} model calls in two requests \
         {} s apart, through the simulator on Anthropic's rules for {} (reads 0.1x, writes \
         1.25x for 5 minutes, 2x for an hour)\n",
        num("calls")?,
        num("pause_secs")?,
        serde_json::from_str::<serde_json::Value>(&json)
            .ok()
            .and_then(|v| v["model"].as_str().map(str::to_owned))
            .unwrap_or_default()
    );
    println!(
        "{:<16} {:>10} {:>12} {:>12} {:>12} {:>14}",
        "run", "input", "write 5m", "write 1h", "cache read", "billable input"
    );
    for run in [
        "uncached",
        "cached",
        "hour",
        "chat",
        "openai_uncached",
        "openai",
    ] {
        println!(
            "{run:<16} {:>10} {:>12} {:>12} {:>12} {:>14}",
            num(&format!("{run}_input"))?,
            num(&format!("{run}_cache_write"))?,
            num(&format!("{run}_cache_write_1h"))?,
            num(&format!("{run}_cache_read"))?,
            num(&format!("{run}_billable"))?,
        );
    }
    let runs = [
        ("run (5-minute marks)", "ratio", 0.2),
        ("hour (1-hour marks)", "hour_ratio", 0.2),
        (
            "chat (5-minute marks, kept warm for an hour)",
            "chat_ratio",
            0.2,
        ),
        (
            "openai (GPT-5.6 rules, gpt-5.6-terra, chat)",
            "openai_ratio",
            0.3,
        ),
    ];
    for (name, key, target) in runs {
        let ratio = num(key)?;
        println!(
            "billable input over uncached, {name}: {ratio:.3}x (target <= {target}x: {})",
            if ratio <= target { "PASS" } else { "MISS" }
        );
    }
    Ok(ExitCode::SUCCESS)
}
