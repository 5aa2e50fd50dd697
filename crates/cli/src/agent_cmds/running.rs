//! An agent run made ready from the flags ([`Running::open`]): the policy, the store scanned,
//! the model, the agent's role and price, all checked before anything is created, then
//! `agent_loop::Session::open` for the conversation, the tools and the governance.
use super::*;

/// Whether a person is there to answer.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Interaction {
    Batch,
    Chat,
}

/// An agent ready to take requests, and what must be saved when it is done.
pub(super) struct Running {
    pub(super) agent: Agent,
    pub(super) setup: llm_sim::Setup,
    /// What its calls are billed at, when known.
    pub(super) price: Option<Price>,
}

impl Running {
    pub(super) fn open(
        g: &Global,
        root: &Path,
        args: &AgentArgs,
        conversation: Option<&str>,
        interaction: Interaction,
        title: Option<&str>,
    ) -> Result<Running> {
        // Everything the user gave is checked before anything is created: a refused policy,
        // conversation id or model must leave no store, agent or conversation behind.
        let (mut policy, source, text) = load_policy(args.policy.as_deref())?;
        if let Some(max) = args.max_cost {
            let cap = &mut policy.limits.max_cost_usd;
            *cap = Some(cap.map_or(max, |policy_cap| policy_cap.min(max)));
        }
        if let Some(id) = conversation {
            agent_loop::conversation::validate_id(id)?;
        }
        let scrubber = scrubber(root)?;
        let store = Arc::new(crate::open(g, root, false)?);
        store
            .scan(&ScanOptions::default())
            .context("scanning the workspace")?;
        let agent_id = args
            .agent
            .clone()
            .unwrap_or_else(|| DEFAULT_AGENT.to_owned());
        // The flags, else the model stored with the agent.
        let stored = store.agent(&agent_id)?;
        let model_args = args.model.or_stored(stored.as_ref());
        let setup = model_args.build(scrubber)?;
        let role = agent_role(&store, &agent_id, args.agent.is_none())?;
        let model = model_args.model.clone().unwrap_or_default();
        let price = resolve_price(args.price, stored.as_ref(), &model);
        if args.max_cost.is_some() && price.is_none() {
            crate::usage!(
                "--max-cost needs the model's price: pass --price IN,OUT, store one with the \
                 agent (merkle agent add {agent_id} ... --price IN,OUT), or use a model the \
                 built-in table lists (merkle agent prices)"
            );
        }
        let opened = agent_loop::Session::open(agent_loop::SessionSpec {
            root,
            store,
            agent: &agent_id,
            role,
            client: Arc::clone(&setup.client),
            conversation,
            title: title.map(|t| one_line(t.trim(), 80)),
            policy: agent_loop::PolicySource {
                policy,
                source,
                text,
            },
            ask: match (args.approve, interaction) {
                (true, _) => AskMode::PreApproved,
                (false, Interaction::Chat) => AskMode::Prompt,
                (false, Interaction::Batch) => AskMode::Refuse,
            },
            approver: match interaction {
                Interaction::Chat => Some(Box::new(StdinApprover)),
                Interaction::Batch => None,
            },
            audit: audit_path(root),
            command_timeout: std::time::Duration::from_secs(args.command_timeout),
            config: AgentConfig {
                // A person answers between a chat's turns, often after more than five minutes:
                // the conversation is kept in the cache for an hour after each answer.
                keep_warm: interaction == Interaction::Chat,
                ..agent_config(g, root, args, &agent_id, model, price)
            },
            clock: Arc::new(SystemClock),
        })?;
        say_loaded(opened.agent.conversation().id(), &opened.report);
        let (quiet, echo_text) = (g.quiet, interaction == Interaction::Chat);
        let agent = opened
            .agent
            .with_observer(Box::new(move |event| progress(event, quiet, echo_text)));
        Ok(Running {
            agent,
            setup,
            price,
        })
    }

    /// Saves the recording of a `--record` run.
    pub(super) fn finish(&self) -> Result<()> {
        if let Some(path) = self.setup.finish()? {
            eprintln!("recorded to {}", path.display());
        }
        Ok(())
    }
}

/// What loading a continued conversation found, said on stderr: its damage, and tool calls
/// that had no result (answered as interrupted).
fn say_loaded(id: &str, report: &agent_loop::LoadReport) {
    if let Some(damage) = &report.damage {
        eprintln!("warning: conversation {id}: {damage}");
    }
    if !report.interrupted.is_empty() {
        eprintln!(
            "warning: conversation {id}: {} tool call(s) had no result (interrupted) and were \
             answered as such",
            report.interrupted.len()
        );
    }
}

/// The agent's settings from the flags: its home (`--home`, else `agents/ID` in the store),
/// model, budgets, tool offer, price and prompt caching.
fn agent_config(
    g: &Global,
    root: &Path,
    args: &AgentArgs,
    agent_id: &str,
    model: String,
    price: Option<Price>,
) -> AgentConfig {
    let home = args.home.clone().unwrap_or_else(|| {
        g.store
            .clone()
            .unwrap_or_else(|| root.join(".merkle"))
            .join("agents")
            .join(agent_id)
    });
    AgentConfig {
        model,
        max_tokens: args.max_tokens,
        context_window: args.context_window,
        home,
        workspace_label: root.display().to_string(),
        max_model_calls: args.max_model_calls,
        tool_offer: if args.offer_all_tools {
            ToolOffering::AllowedList
        } else {
            ToolOffering::Filtered
        },
        price,
        prompt_cache: !args.no_prompt_cache,
        ..AgentConfig::default()
    }
}

/// The role of `agent`, registering the default agent as a writer on first use.
fn agent_role(store: &Store, agent: &str, is_default: bool) -> Result<Role> {
    match store.agent(agent)? {
        Some(a) => Ok(a.role),
        None if is_default => {
            store.add_agent(agent, Role::Writer)?;
            Ok(Role::Writer)
        }
        None => bail!(
            "agent {agent:?} is not registered: run `merkle agent add {agent} --role writer` \
             (or reader, synthesis), or leave out --agent to act as {DEFAULT_AGENT:?}"
        ),
    }
}

/// The policy, where it came from (`builtin` or the file) and its text.
fn load_policy(path: Option<&Path>) -> Result<(Policy, String, String)> {
    match path {
        None => Ok((
            Policy::builtin(),
            "builtin".to_owned(),
            governance::DEFAULT_POLICY_YAML.to_owned(),
        )),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading policy {}", path.display()))?;
            let name = path.display().to_string();
            let policy = Policy::parse(&name, &text)?;
            let source = path
                .canonicalize()
                .map_or(name, |p| p.display().to_string());
            Ok((policy, source, text))
        }
    }
}

/// Makes recordings portable: the workspace's path and the date in the system prompt become
/// placeholders, in what is recorded and in what is matched on playback.
fn scrubber(root: &Path) -> Result<llm_sim::Scrubber> {
    Ok(llm_sim::Scrubber::new()
        .literal(&root.display().to_string(), "<workspace>")?
        .rule(r"\b\d{4}-\d{2}-\d{2}\b", "<date>")?)
}

/// Asks on the terminal: the question to stderr, the answer from stdin; anything but yes is no.
struct StdinApprover;

impl Approver for StdinApprover {
    fn approve(&mut self, call: &ToolCall, rule: &str) -> bool {
        eprint!(
            "{} {} needs your approval (rule {rule}). Run it? [y/N] ",
            call.name,
            one_line(&call.input.to_string(), 200)
        );
        let _ = std::io::stderr().flush();
        let mut answer = String::new();
        match std::io::stdin().read_line(&mut answer) {
            Ok(_) => matches!(answer.trim(), "y" | "Y" | "yes" | "YES" | "Yes"),
            Err(_) => false,
        }
    }
}
