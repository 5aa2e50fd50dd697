//! `merkle agent`: register agents with their role and their own model, list them, and show
//! the list prices calls are billed at.
use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use clap::Subcommand;
use generate::agent_model;
use merkle_store::Role;

use crate::output::Out;
use crate::{Global, Usage, agent_cmds, llm, open};

#[derive(Subcommand, Debug)]
pub(crate) enum AgentCommand {
    /// Register an agent, or change its role or its model
    Add {
        /// The agent id
        id: String,
        /// What the agent may do: reader (read only), writer (put frames), synthesis (also synthesize)
        #[arg(long, value_parser = ["reader", "writer", "synthesis"])]
        role: String,
        /// The agent's own provider, used by `generate`, `watch --generate`, `run` and `chat`
        /// acting as it when they are given no provider (MERKLE_LLM_MODE still switches the
        /// whole process) [default: keep the agent's, if any]
        #[arg(long, value_parser = agent_model::PROVIDERS)]
        provider: Option<String>,
        /// The agent's model (with --provider) [default: the provider's]
        #[arg(long, requires = "provider")]
        model: Option<String>,
        /// The provider's base URL (with --provider; needed for openai-compatible)
        #[arg(long, value_name = "URL", requires = "provider", value_parser = parse_base_url)]
        base_url: Option<String>,
        /// The API the agent's provider speaks (with an OpenAI-style --provider): chat or
        /// responses [default: chat]
        #[arg(long, requires = "provider", value_parser = agent_model::APIS)]
        api: Option<String>,
        /// The environment variable that will hold the agent's key (with --provider): its
        /// name is stored, never the key, and read at each run
        #[arg(long, value_name = "NAME", requires = "provider", value_parser = llm::parse_variable_name)]
        api_key_env: Option<String>,
        /// The model's price per million input and output tokens in dollars, IN,OUT (and of
        /// cached input read and written, IN,OUT,READ,WRITE), for the cost `generate`, `run`
        /// and `chat` report and cap (with --provider) [default: the model's list price, if
        /// `merkle agent prices` lists it]
        #[arg(long, value_name = "IN,OUT", requires = "provider", value_parser = price_text)]
        price: Option<String>,
        /// Forget the agent's own provider
        #[arg(long, conflicts_with = "provider")]
        no_provider: bool,
    },
    /// List registered agents
    List,
    /// The list prices calls are billed at when no --price is given and the agent stores
    /// none: dollars per million tokens, by model name prefix
    Prices,
}

/// Runs one `merkle agent` command.
pub(crate) fn run(g: &Global, root: &Path, cmd: &AgentCommand, out: &mut Out) -> Result<()> {
    match cmd {
        AgentCommand::Add {
            id,
            role,
            provider,
            model,
            base_url,
            api,
            api_key_env,
            price,
            no_provider,
        } => {
            let role = Role::parse(role).context("role")?;
            let settings = match provider {
                Some(provider) => Some(
                    agent_model::NewModel {
                        provider,
                        model: model.as_deref(),
                        base_url: base_url.as_deref(),
                        api: api.as_deref(),
                        api_key_env: api_key_env.as_deref(),
                        price: price.as_deref(),
                    }
                    .settings()
                    .map_err(Usage)?,
                ),
                None if *no_provider => Some(BTreeMap::new()),
                None => None,
            };
            add(g, root, id, role, settings.as_ref(), out)
        }
        AgentCommand::Prices => {
            prices(out);
            Ok(())
        }
        AgentCommand::List => list(g, root, out),
    }
}

fn add(
    g: &Global,
    root: &Path,
    id: &str,
    role: Role,
    settings: Option<&BTreeMap<String, String>>,
    out: &mut Out,
) -> Result<()> {
    let store = open(g, root, false)?;
    store.add_agent(id, role)?;
    if let Some(settings) = settings {
        store.set_agent_settings(id, settings)?;
    }
    let agent = store.agent(id)?.context("the agent was just registered")?;
    let text = match agent_model::model_text(&agent) {
        Some(model) => format!("agent {id} registered as {role}, with its own model: {model}"),
        None => format!("agent {id} registered as {role}"),
    };
    out.value(agent_model::agent_json(&agent), text);
    Ok(())
}

fn prices(out: &mut Out) {
    let prices: Vec<(&str, llm_core::Price, &str)> = llm_core::Price::list().collect();
    let json = prices
        .iter()
        .map(|(model, p, source)| {
            serde_json::json!({
                "model": model,
                "input": p.input_per_mtok,
                "output": p.output_per_mtok,
                "cache_read": p.cache_read_per_mtok,
                "cache_write": p.cache_write_per_mtok,
                "cache_write_1h": p.cache_write_1h_per_mtok,
                "batch_factor": p.batch_factor,
                "flex_factor": p.flex_factor,
                "source": source,
            })
        })
        .collect();
    let mut text = String::from(
        "dollars per million tokens (list prices; batch and flex bill the share shown)\n\
         model\tinput\toutput\tcache read\tcache write 5m\tcache write 1h\tbatch\tflex\tsource",
    );
    for (model, p, source) in &prices {
        let flex = p.flex_factor.map_or("-".to_owned(), |f| format!("{f}x"));
        text.push_str(&format!(
            "\n{model}\t{}\t{}\t{}\t{}\t{}\t{}x\t{flex}\t{source}",
            p.input_per_mtok,
            p.output_per_mtok,
            p.cache_read_per_mtok,
            p.cache_write_per_mtok,
            p.cache_write_1h_per_mtok,
            p.batch_factor
        ));
    }
    out.value(serde_json::Value::Array(json), text);
}

fn list(g: &Global, root: &Path, out: &mut Out) -> Result<()> {
    let store = open(g, root, true)?;
    let agents = store.agents()?;
    let json = agents.iter().map(agent_model::agent_json).collect();
    let text = agents
        .iter()
        .map(|a| match agent_model::model_text(a) {
            Some(model) => format!("{}\t{}\t{model}", a.id, a.role),
            None => format!("{}\t{}", a.id, a.role),
        })
        .collect::<Vec<_>>()
        .join("\n");
    out.value(serde_json::Value::Array(json), text);
    Ok(())
}

/// The value of `--base-url`: an http:// or https:// URL with a host.
pub(crate) fn parse_base_url(url: &str) -> Result<String, String> {
    let host = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"))
        .map(|rest| rest.split(['/', '?', '#']).next().unwrap_or(""));
    if host.is_none_or(str::is_empty) || url.contains(char::is_whitespace) {
        return Err(format!(
            "{url:?}: expected an http:// or https:// URL with a host"
        ));
    }
    Ok(url.to_owned())
}

/// A `--price` as an agent stores it: every rate written out.
fn price_text(text: &str) -> Result<String, String> {
    agent_cmds::parse_price(text).map(|price| price.to_text())
}
