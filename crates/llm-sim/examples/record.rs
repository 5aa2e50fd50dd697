//! `cargo xtask record`: runs a scenario (a system prompt and a sequence of user prompts, each
//! answered before the next is sent) against a real provider in record mode and writes the
//! playback script, scrubbed of everything but allowlisted fields and checked for secrets.
//!
//! ```text
//! cargo xtask record --provider anthropic --model M --scenario FILE --out FILE [--base-url U]
//! ```
//!
//! Keys come from `ANTHROPIC_API_KEY` / `OPENAI_API_KEY`; without one it says what it needs and
//! exits non-zero. Never part of the test run: it is the one tool here that calls a real API.
use std::path::PathBuf;
use std::process::ExitCode;

use llm_core::{Provider, ProviderConfig, Request};
use llm_sim::factory::{self, Mode, Settings};
use serde::Deserialize;

/// A scenario file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    system: Option<String>,
    #[serde(default)]
    max_tokens: Option<u32>,
    prompts: Vec<String>,
}

const USAGE: &str = "usage: cargo xtask record --provider anthropic|openai|ollama|openai-compatible --model M --scenario FILE --out FILE [--base-url URL]";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut provider = None;
    let mut model = None;
    let mut scenario = None;
    let mut out = None;
    let mut base_url = None;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .cloned()
            .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
        match flag.as_str() {
            "--provider" => provider = Some(value),
            "--model" => model = Some(value),
            "--scenario" => scenario = Some(PathBuf::from(value)),
            "--out" => out = Some(PathBuf::from(value)),
            "--base-url" => base_url = Some(value),
            _ => return Err(format!("unknown option {flag}\n{USAGE}")),
        }
    }
    let (Some(provider), Some(model), Some(scenario), Some(out)) = (provider, model, scenario, out)
    else {
        return Err(format!(
            "--provider, --model, --scenario and --out are required\n{USAGE}"
        ));
    };
    let provider = Provider::parse(&provider).map_err(|e| e.to_string())?;
    let text = std::fs::read_to_string(&scenario)
        .map_err(|e| format!("reading {}: {e}", scenario.display()))?;
    let plan: Scenario =
        serde_yaml::from_str(&text).map_err(|e| format!("{}: {e}", scenario.display()))?;
    if plan.prompts.is_empty() {
        return Err(format!("{}: `prompts` is empty", scenario.display()));
    }
    let mut config = ProviderConfig::new(provider);
    config.model = Some(model.clone());
    config.base_url = base_url;
    let setup = factory::build(
        Settings {
            mode: Some(Mode::Record),
            recording: Some(out),
            provider: Some(config),
            ..Settings::default()
        },
        &|name| std::env::var(name).ok(),
    )
    .map_err(|e| {
        format!(
            "{e}\nrecording calls the real provider: set ANTHROPIC_API_KEY or OPENAI_API_KEY \
             (or use --provider ollama / openai-compatible with --base-url), or record nothing \
             and write a script by hand (see fixtures/scripts)"
        )
    })?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let mut request = Request::new(model).max_tokens(plan.max_tokens.unwrap_or(1024));
    request.system = plan.system;
    for (i, prompt) in plan.prompts.iter().enumerate() {
        request = request.user(prompt.clone());
        let response = rt
            .block_on(setup.client.complete(&request))
            .map_err(|e| format!("prompt {}: {e}", i + 1))?;
        eprintln!("prompt {}: {} chars answered", i + 1, response.text().len());
        request.messages.push(response.into_message());
    }
    let saved = setup.finish().map_err(|e| e.to_string())?;
    if let Some(path) = saved {
        println!(
            "recorded {} requests to {}",
            plan.prompts.len(),
            path.display()
        );
    }
    Ok(())
}
