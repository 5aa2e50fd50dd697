//! The benchmark behind `cargo xtask bench agent-cost`: what prompt caching saves an agent.
//!
//! One scripted session of 30 model calls (29 that each read a source file of 4 to 16 KiB,
//! then an answer), run twice through the in-process simulator, which bills prompts as the
//! providers do (`llm_sim::PromptCache`): once as the agent runs by default, marking its
//! stable prefix for the provider's cache, and once with `prompt_cache: false`. Billable input
//! counts uncached input at 1x, cache writes at 1.25x and cache reads at 0.1x (Anthropic's
//! five-minute cache prices).
//!
//! Prints one JSON object on stdout: `calls`, then for each run (`cached_`, `uncached_`) its
//! `input`, `cache_write`, `cache_read` and `billable` tokens, and `ratio`, the cached run's
//! billable input over the uncached run's.

use std::error::Error;
use std::fs;
use std::sync::Arc;

use agent_loop::tools::control::control_tools;
use agent_loop::{Agent, AgentConfig, ConversationStore, ToolConfig, ToolRegistry, Workspace};
use llm_core::{Clock, LlmClient, ManualClock, Usage};
use llm_sim::{Script, SimulatedClient, Step};
use serde_json::json;

/// Model calls in the session.
const CALLS: usize = 30;

fn main() -> Result<(), Box<dyn Error>> {
    let cached = run(true)?;
    let uncached = run(false)?;
    let billable = |u: &Usage| {
        u.input_tokens as f64
            + 1.25 * u.cache_creation_input_tokens as f64
            + 0.1 * u.cache_read_input_tokens as f64
    };
    let mut out = json!({"calls": CALLS});
    for (name, u) in [("cached", &cached), ("uncached", &uncached)] {
        out[format!("{name}_input")] = json!(u.input_tokens);
        out[format!("{name}_cache_write")] = json!(u.cache_creation_input_tokens);
        out[format!("{name}_cache_read")] = json!(u.cache_read_input_tokens);
        out[format!("{name}_billable")] = json!(billable(u).round());
    }
    out["ratio"] = json!(billable(&cached) / billable(&uncached));
    println!("{out}");
    Ok(())
}

/// Source-like text of about `bytes` bytes, different for each `seed`.
fn source(bytes: usize, seed: usize) -> String {
    let words = [
        "let", "value", "result", "match", "self", "config", "return", "error", "path", "node",
        "frame", "store", "index", "query", "tokens", "budget",
    ];
    let mut out = String::with_capacity(bytes + 80);
    let mut i = seed;
    while out.len() < bytes {
        out.push_str("    ");
        for _ in 0..8 {
            i = i
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            out.push_str(words[(i >> 33) % words.len()]);
            out.push(' ');
        }
        out.push_str(&format!("// line {}\n", out.len() / 60));
    }
    out
}

/// The session's usage, summed over its calls.
fn run(prompt_cache: bool) -> Result<Usage, Box<dyn Error>> {
    let temp = tempfile::tempdir()?;
    let dir = temp.path();
    let ws = dir.join("ws");
    fs::create_dir_all(ws.join("src"))?;
    for i in 0..CALLS - 1 {
        let bytes = 4096 + (i * 4391) % (12 * 1024);
        fs::write(ws.join(format!("src/module_{i}.rs")), source(bytes, i))?;
    }
    let steps = (0..CALLS - 1)
        .map(|i| {
            Step::text(format!("Reading module {i}."))
                .with_tool_call("read_file", json!({"path": format!("src/module_{i}.rs")}))
        })
        .chain([Step::text(
            "The modules share one pattern: each matches on its config.",
        )]);
    // The calls of a session come seconds apart: well inside the cache's five minutes.
    let clock: Arc<dyn Clock> = Arc::new(ManualClock::new(std::time::SystemTime::UNIX_EPOCH));
    let model = Arc::new(
        SimulatedClient::scripted(Script {
            metadata: None,
            responses: steps.collect(),
        })
        .with_cache_clock(Arc::clone(&clock)),
    );
    let agent_model: Arc<dyn LlmClient> = model.clone();
    let workspace = Arc::new(Workspace::open(&ws)?);
    let mut tools = ToolRegistry::with_builtins(&workspace, &ToolConfig::default());
    for tool in control_tools() {
        tools.register(tool)?;
    }
    let conversation = ConversationStore::create(&ws, Arc::clone(&clock))?;
    let config = AgentConfig {
        home: dir.join("home"),
        workspace_label: "ws".to_owned(),
        prompt_cache,
        ..AgentConfig::default()
    };
    let mut agent = Agent::new(agent_model, conversation, tools, config, clock);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let outcome = runtime.block_on(agent.process_turn(
        "Read every module under src/ one by one and tell me what pattern they share.",
    ))?;
    if outcome.model_calls as usize != CALLS {
        return Err(format!(
            "the session made {} calls, not {CALLS}",
            outcome.model_calls
        )
        .into());
    }
    Ok(model.usage_stats().usage)
}
