//! The benchmark behind `cargo xtask bench agent-cost`: what prompt caching saves an agent.
//!
//! One scripted session of 30 model calls in two requests of a person (each 14 calls that read
//! a source file of 4 to 16 KiB, then an answer), with a 10-minute pause between them on the
//! simulator's clock, as in a chat. It runs through the in-process simulator, which bills
//! prompts by Anthropic's rules (`llm_sim::PromptCache`: the model's minimum prefix, the
//! 20-block lookback, five-minute and one-hour lifetimes), three ways: as `merkle run` sends it
//! (five-minute breakpoints, `cached_`), as `merkle chat` sends it (one-hour breakpoints,
//! `chat_`), and with `prompt_cache: false` (`uncached_`). Billable input counts uncached input
//! at 1x, five-minute writes at 1.25x, one-hour writes at 2x and reads at 0.1x.
//!
//! Prints one JSON object on stdout: `calls`, then for each run its `input`, `cache_write`,
//! `cache_write_1h`, `cache_read` and `billable` tokens, and `ratio` and `chat_ratio`, each
//! cached run's billable input over the uncached run's.

use std::error::Error;
use std::fs;
use std::sync::Arc;

use agent_loop::tools::control::control_tools;
use agent_loop::{Agent, AgentConfig, ConversationStore, ToolConfig, ToolRegistry, Workspace};
use llm_core::{CacheTtl, Clock, LlmClient, ManualClock, Usage};
use llm_sim::{Script, SimulatedClient, Step};
use serde_json::json;

/// Model calls in the session.
const CALLS: usize = 30;

/// The model the session bills as: Sonnet 4.6, whose shortest cached prefix is 2,048 tokens.
const MODEL: &str = "claude-sonnet-4-6";

/// The same session on OpenAI's GPT-5.6 rules (one implicit breakpoint a request, writes at
/// 1.25x kept 30 minutes, no pre-warming call).
const OPENAI_MODEL: &str = "gpt-5.6-terra";

/// How long the person pauses between the session's two requests.
const PAUSE: std::time::Duration = std::time::Duration::from_secs(10 * 60);

fn main() -> Result<(), Box<dyn Error>> {
    let cached = run(MODEL, true, Marks::Loop)?;
    let chat = run(MODEL, true, Marks::Chat)?;
    let hour = run(MODEL, true, Marks::Hour)?;
    let uncached = run(MODEL, false, Marks::Loop)?;
    let openai = run(OPENAI_MODEL, true, Marks::Chat)?;
    let openai_uncached = run(OPENAI_MODEL, false, Marks::Loop)?;
    let billable = |u: &Usage| {
        let one_hour = u.cache_creation_1h_input_tokens;
        u.input_tokens as f64
            + 1.25 * (u.cache_creation_input_tokens - one_hour) as f64
            + 2.0 * one_hour as f64
            + 0.1 * u.cache_read_input_tokens as f64
    };
    let mut out = json!({"calls": CALLS, "pause_secs": PAUSE.as_secs(), "model": MODEL});
    let runs = [
        ("cached", &cached),
        ("chat", &chat),
        ("hour", &hour),
        ("uncached", &uncached),
        ("openai", &openai),
        ("openai_uncached", &openai_uncached),
    ];
    for (name, u) in runs {
        out[format!("{name}_input")] = json!(u.input_tokens);
        out[format!("{name}_cache_write")] =
            json!(u.cache_creation_input_tokens - u.cache_creation_1h_input_tokens);
        out[format!("{name}_cache_write_1h")] = json!(u.cache_creation_1h_input_tokens);
        out[format!("{name}_cache_read")] = json!(u.cache_read_input_tokens);
        out[format!("{name}_billable")] = json!(billable(u).round());
    }
    out["ratio"] = json!(billable(&cached) / billable(&uncached));
    out["chat_ratio"] = json!(billable(&chat) / billable(&uncached));
    out["hour_ratio"] = json!(billable(&hour) / billable(&uncached));
    out["openai_model"] = json!(OPENAI_MODEL);
    // GPT-5.6 caches whether asked or not (its implicit breakpoint): the baseline is the run's
    // input at 1x, as the other rules' uncached run bills it.
    out["openai_ratio"] = json!(billable(&openai) / openai_uncached.total_input() as f64);
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
/// How the session marks its prompt for the cache.
#[derive(Clone, Copy)]
enum Marks {
    /// Five-minute breakpoints (`merkle run`).
    Loop,
    /// Five-minute breakpoints and, after each answer, a pre-warming call that keeps the
    /// conversation for an hour (`merkle chat`).
    Chat,
    /// One-hour breakpoints on every call.
    Hour,
}

fn run(model_name: &str, prompt_cache: bool, marks: Marks) -> Result<Usage, Box<dyn Error>> {
    let temp = tempfile::tempdir()?;
    let dir = temp.path();
    let ws = dir.join("ws");
    fs::create_dir_all(ws.join("src"))?;
    for i in 0..CALLS - 1 {
        let bytes = 4096 + (i * 4391) % (12 * 1024);
        fs::write(ws.join(format!("src/module_{i}.rs")), source(bytes, i))?;
    }
    let half = CALLS / 2;
    let read = |i: usize| {
        Step::text(format!("Reading module {i}."))
            .with_tool_call("read_file", json!({"path": format!("src/module_{i}.rs")}))
    };
    let steps = (0..half - 1)
        .map(read)
        .chain([Step::text("The first half share one pattern.")])
        .chain((half - 1..CALLS - 2).map(read))
        .chain([Step::text(
            "The modules share one pattern: each matches on its config.",
        )]);
    // The calls of a request come seconds apart: well inside the cache's five minutes; the
    // pause between the two requests is not.
    let manual = Arc::new(ManualClock::new(std::time::SystemTime::UNIX_EPOCH));
    let clock: Arc<dyn Clock> = manual.clone();
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
        cache_ttl: match marks {
            Marks::Hour => CacheTtl::OneHour,
            Marks::Loop | Marks::Chat => CacheTtl::FiveMinutes,
        },
        keep_warm: matches!(marks, Marks::Chat),
        model: model_name.to_owned(),
        ..AgentConfig::default()
    };
    let mut agent = Agent::new(agent_model, conversation, tools, config, clock);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    let first = runtime.block_on(agent.process_turn(
        "Read the first half of the modules under src/ one by one and tell me what they share.",
    ))?;
    manual.advance(PAUSE);
    let second = runtime.block_on(
        agent.process_turn("Now read the rest one by one and tell me what they all share."),
    )?;
    let calls = first.model_calls + second.model_calls;
    if calls as usize != CALLS {
        return Err(format!("the session made {calls} calls, not {CALLS}").into());
    }
    Ok(model.usage_stats().usage)
}
