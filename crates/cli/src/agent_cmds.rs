//! `merkle run`, `merkle chat` and `merkle conversations`: the agent runtime from the command
//! line, governed by default.
//!
//! A run opens the workspace's store (writable: the context tools put frames), rescans it,
//! registers the default agent if no `--agent` is given, loads the policy (built in, or
//! `--policy FILE`) and records which one in the audit log, then hands the task to
//! `agent_loop::Agent`. Progress (tool calls and their results) goes to stderr; the answer to
//! stdout, or one JSON document with `--json`.
//!
//! Exit codes of `run`: 0 the task completed or the model ended its turn, 3 the model escalated,
//! 4 the loop governor (or the model-call cap) stopped the request, 5 the model called
//! `complete` although the last call of some tool failed (an edit that did not apply: the task
//! is not done, whatever the summary says), 1 an error.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use agent_loop::{
    Agent, AgentConfig, AgentEvent, Approver, ConversationStore, ToolOffering, TurnEnd, TurnOutcome,
};
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use governance::{AskMode, Policy};
use llm_core::{Clock, ContentBlock, Message, Price, Role as MessageRole, SystemClock, ToolCall};
use merkle_store::{Role, ScanOptions, Store};
use serde_json::{Value, json};

use crate::Global;
use crate::governance_cmds::audit_path;
use crate::llm::ModelArgs;

mod running;
use self::running::{Interaction, Running};

/// The agent a run acts as when no `--agent` is given; registered as a writer on first use.
pub(crate) const DEFAULT_AGENT: &str = "default";

/// How an agent runs: its model, identity, policy and limits.
#[derive(Args, Debug, Clone)]
pub(crate) struct AgentArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// The agent to act as (registered with `merkle agent add`) [default: MERKLE_AGENT, else
    /// `default`, registered as a writer on first use]
    #[arg(long, env = "MERKLE_AGENT")]
    agent: Option<String>,
    /// The agent's home folder, holding its identity files (SOUL.md, IDENTITY.md, USER.md,
    /// MEMORY.md, AGENTS.md, TOOLS.md) [default: <store>/agents/<agent>]
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    /// The governance policy [default: the built-in policy; see `merkle policy show`]
    #[arg(long, value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Pre-approve the calls the policy asks about (e.g. run_command); without it a
    /// non-interactive run denies them, and `chat` asks
    #[arg(long)]
    approve: bool,
    /// The most tokens per response (reserved out of the context window)
    #[arg(value_parser = crate::at_least_one::<u32>, long, default_value_t = 8192)]
    max_tokens: u32,
    /// The model's context window in tokens; older messages are compacted beyond it
    #[arg(value_parser = crate::at_least_one::<u64>, long, default_value_t = 200_000)]
    context_window: u64,
    /// Model calls per request at most
    #[arg(value_parser = crate::at_least_one::<u32>, long, default_value_t = 200)]
    max_model_calls: u32,
    /// A command's time limit when the model gives none, in seconds
    #[arg(value_parser = crate::at_least_one::<u64>, long, default_value_t = 120)]
    command_timeout: u64,
    /// Offer every tool in each request and name the ones the intent allows in an OpenAI
    /// `allowed_tools` tool choice (for OpenAI-compatible servers that support it), instead of
    /// offering only the allowed tools; governance decides every call either way
    #[arg(long)]
    offer_all_tools: bool,
    /// Send no prompt-cache hints (Anthropic `cache_control` breakpoints, OpenAI
    /// `prompt_cache_key`), for a server that refuses them [default: each request marks its
    /// stable prefix for the provider's cache]
    #[arg(long)]
    no_prompt_cache: bool,
    /// The model's price per million input and output tokens in US dollars, as IN,OUT (e.g.
    /// 3,15), and optionally of cached input read and written, IN,OUT,READ,WRITE [default
    /// READ: IN/10, WRITE: IN*1.25]: the policy's limits.max_cost_usd then caps each request
    /// [default: the agent's stored price, else the model's list price (`merkle agent
    /// prices`), else unpriced]
    #[arg(long, value_name = "IN,OUT", value_parser = parse_price)]
    price: Option<Price>,
    /// Stop a request before a model call that could take its cost past USD dollars (the
    /// model needs a price; the lower of this and the policy's limits.max_cost_usd holds)
    #[arg(long, value_name = "USD", value_parser = parse_dollars)]
    max_cost: Option<f64>,
}

fn parse_dollars(text: &str) -> Result<f64, String> {
    dollars(text)
        .filter(|v| *v > 0.0)
        .ok_or_else(|| format!("{text:?} is not an amount of dollars above 0"))
}

/// An amount of dollars, 0 or more.
fn dollars(s: &str) -> Option<f64> {
    s.trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
}

pub(crate) fn parse_price(text: &str) -> Result<Price, String> {
    Price::parse(text)
}

/// The price calls are billed at: the flag, else the price stored with the agent (`agent add
/// --price`), else the built-in list price of `model` ([`Price::for_model`]).
pub(crate) fn resolve_price(
    flag: Option<Price>,
    agent: Option<&merkle_store::Agent>,
    model: &str,
) -> Option<Price> {
    flag.or_else(|| {
        agent
            .and_then(|a| a.settings.get(generate::agent_model::PRICE))
            .and_then(|stored| Price::parse(stored).ok())
    })
    .or_else(|| Price::for_model(model))
}

#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// The task, or - to read it from standard input
    task: String,
    /// Continue this conversation (or start one with this id) [default: a new one]
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    #[command(flatten)]
    agent: AgentArgs,
}

#[derive(Args, Debug)]
pub(crate) struct ChatArgs {
    /// Continue this conversation (or start one with this id) [default: a new one]
    #[arg(long, value_name = "ID")]
    pub(crate) conversation: Option<String>,
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
}

#[derive(Subcommand, Debug)]
// Parsed once per process; boxing the agent's flags would only make clap's derive noisier.
#[allow(clippy::large_enum_variant)]
pub(crate) enum ConversationsCommand {
    /// List the workspace's conversations, oldest first
    List,
    /// Show a conversation's metadata and messages
    Show {
        id: String,
        /// Show only the last N messages
        #[arg(long, value_name = "N")]
        last: Option<usize>,
    },
    /// Continue a conversation interactively (as `merkle chat --conversation ID`)
    Resume {
        id: String,
        #[command(flatten)]
        agent: AgentArgs,
    },
}

pub(crate) fn run_task(g: &Global, root: &Path, args: &RunArgs) -> Result<ExitCode> {
    let task = if args.task == "-" {
        let mut task = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut task)
            .context("reading the task from standard input")?;
        task
    } else {
        args.task.clone()
    };
    if task.trim().is_empty() {
        crate::usage!("the task is empty: say what the agent should do");
    }
    let runtime = runtime()?;
    let mut session = Running::open(
        g,
        root,
        &args.agent,
        args.conversation.as_deref(),
        Interaction::Batch,
        Some(&task),
    )?;
    let result = runtime.block_on(session.agent.process_turn(&task));
    session.finish()?;
    let outcome = result?;
    let id = session.agent.conversation().id().to_owned();
    if g.json {
        let document = json!({
            "conversation": id,
            "text": outcome.text,
            "end": outcome.end,
            "model_calls": outcome.model_calls,
            "tool_calls": outcome.tool_calls,
            "compactions": outcome.compactions,
            "usage": outcome.usage,
            "cost_usd": session.price.map(|p| p.cost(&outcome.usage)),
            "failed_tools": outcome.failed_tools,
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&document).context("printing the outcome")?
        );
    } else {
        if !outcome.text.is_empty() {
            println!("{}", outcome.text);
        }
        if !g.quiet {
            eprintln!("{}", usage_line(&outcome.usage, session.price));
            eprintln!("{} (conversation {id})", end_line(&outcome));
        }
    }
    Ok(exit_code(&outcome))
}

pub(crate) fn run_chat(
    g: &Global,
    root: &Path,
    agent: &AgentArgs,
    conversation: Option<&str>,
) -> Result<ExitCode> {
    let runtime = runtime()?;
    let mut session = Running::open(g, root, agent, conversation, Interaction::Chat, None)?;
    let stdin = std::io::stdin();
    let interactive = stdin.is_terminal();
    eprintln!(
        "conversation {} (type /exit to leave, /retry to resend the last request)",
        session.agent.conversation().id()
    );
    loop {
        if interactive {
            eprint!("> ");
            let _ = std::io::stderr().flush();
        }
        // Line by line through stdin's shared buffer, never a lock held across a turn: the
        // approver reads its answers from the same stream.
        let mut line = String::new();
        if stdin
            .read_line(&mut line)
            .context("reading standard input")?
            == 0
        {
            break;
        }
        let input = line.trim();
        let turn = match input {
            "" => continue,
            "/exit" | "/quit" => break,
            "/help" => {
                eprintln!("/exit leaves, /retry resends the last request; anything else is sent");
                continue;
            }
            "/retry" => runtime.block_on(async {
                tokio::select! {
                    outcome = session.agent.retry() => Some(outcome),
                    _ = tokio::signal::ctrl_c() => None,
                }
            }),
            _ => runtime.block_on(async {
                tokio::select! {
                    outcome = session.agent.process_turn(input) => Some(outcome),
                    _ = tokio::signal::ctrl_c() => None,
                }
            }),
        };
        match turn {
            None => {
                session.agent.abort();
                eprintln!("aborted; /retry resends the request");
            }
            Some(Ok(outcome)) => {
                eprintln!("{}", usage_line(&outcome.usage, session.price));
                if !matches!(outcome.end, TurnEnd::EndTurn) {
                    eprintln!("{}", end_line(&outcome));
                }
            }
            // A failed turn leaves the conversation as it was; the user may retry.
            Some(Err(e)) => eprintln!("error: {e}; /retry resends the request"),
        }
    }
    session.finish()?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn run_conversations(
    g: &Global,
    root: &Path,
    cmd: &ConversationsCommand,
) -> Result<ExitCode> {
    match cmd {
        ConversationsCommand::List => {
            let listed = agent_loop::list_conversations(root)?;
            if g.json {
                let rows: Vec<Value> = listed
                    .iter()
                    .map(|l| match &l.metadata {
                        Ok(m) => json!({
                            "id": l.id,
                            "created_at": m.created_at,
                            "title": m.title,
                            "agent": m.agent,
                            "model": m.model,
                            "compaction_count": m.compaction_count,
                        }),
                        Err(e) => json!({"id": l.id, "error": e.to_string()}),
                    })
                    .collect();
                println!(
                    "{}",
                    serde_json::to_string_pretty(&rows).context("printing conversations")?
                );
            } else if listed.is_empty() {
                println!("no conversations");
            } else {
                for l in &listed {
                    match &l.metadata {
                        Ok(m) => println!(
                            "{}  {}  {}",
                            l.id,
                            m.created_at,
                            m.title.as_deref().unwrap_or("")
                        ),
                        Err(e) => println!("{}  unreadable: {e}", l.id),
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ConversationsCommand::Show { id, last } => {
            let clock: Arc<dyn Clock> = Arc::new(SystemClock);
            // Showing must not change anything, so read the files rather than load (which
            // repairs).
            agent_loop::conversation::validate_id(id)?;
            let dir = agent_loop::conversations_dir(root).join(id);
            if !dir.join("metadata.json").exists() {
                // Load names the folder and the reason in its error.
                ConversationStore::load(root, id, clock)?;
            }
            let metadata: Value = agent_loop::storage::read_json(&dir.join("metadata.json"))?;
            let messages =
                agent_loop::storage::read_all_jsonl::<Message>(&dir.join("transcript.jsonl"))?
                    .entries;
            let skip = last.map_or(0, |n| messages.len().saturating_sub(n));
            if g.json {
                let document = json!({"metadata": metadata, "messages": &messages[skip..]});
                println!(
                    "{}",
                    serde_json::to_string_pretty(&document).context("printing the conversation")?
                );
            } else {
                println!(
                    "conversation {id}, {}, created {}",
                    crate::output::count(messages.len() as u64, "message"),
                    metadata["created_at"].as_str().unwrap_or("?")
                );
                for message in &messages[skip..] {
                    print!("{}", render_message(message));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        ConversationsCommand::Resume { id, agent } => run_chat(g, root, agent, Some(id)),
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Progress on stderr; in chat the model's text on stdout as it comes.
fn progress(event: AgentEvent<'_>, quiet: bool, echo_text: bool) {
    match event {
        AgentEvent::Response(response) => {
            let text = response.text();
            if echo_text && !text.is_empty() {
                println!("{text}");
            } else if !quiet && !text.is_empty() && !response.tool_calls().is_empty() {
                eprintln!("{}", one_line(&text, 300));
            }
        }
        _ if quiet => {}
        AgentEvent::IdentityWarnings(warnings) => {
            for w in warnings {
                eprintln!("warning: {w}");
            }
        }
        AgentEvent::Compacted {
            dropped,
            summarized,
        } => eprintln!(
            "compacted: {dropped} older messages {}",
            if summarized {
                "summarized"
            } else {
                "dropped with a note (the summary failed)"
            }
        ),
        AgentEvent::ToolCall(call) => {
            eprintln!(
                "-> {} {}",
                call.name,
                one_line(&call.input.to_string(), 160)
            );
        }
        AgentEvent::ToolResult { outcome, .. } => {
            let first = outcome.content.lines().next().unwrap_or_default();
            if outcome.is_error {
                // A failed tool's result already starts with "error: " for the model.
                let first = first.strip_prefix("error: ").unwrap_or(first);
                eprintln!("   error: {}", one_line(first, 300));
            } else {
                eprintln!("   ok: {}", one_line(first, 160));
            }
        }
        _ => {}
    }
}

fn one_line(text: &str, max: usize) -> String {
    let line = text.replace('\n', " ");
    if line.chars().count() <= max {
        return line;
    }
    let cut: String = line.chars().take(max).collect();
    format!("{cut}...")
}

/// A request's tokens and, when priced, its cost: `tokens: 1200 in (900 read from the cache,
/// 300 written to it), 80 out; cost $0.0021` (`, 40 of them for an hour` in a chat, which keeps
/// its conversation cached for an hour since a person pauses between requests).
fn usage_line(usage: &llm_core::Usage, price: Option<Price>) -> String {
    let mut line = format!("tokens: {} in", usage.total_input());
    if usage.cache_read_input_tokens + usage.cache_creation_input_tokens > 0 {
        let hour = match usage.cache_creation_1h_input_tokens {
            0 => String::new(),
            n if n == usage.cache_creation_input_tokens => " for an hour".to_owned(),
            n => format!(", {n} of them for an hour"),
        };
        line.push_str(&format!(
            " ({} read from the cache, {} written to it{hour})",
            usage.cache_read_input_tokens, usage.cache_creation_input_tokens
        ));
    }
    line.push_str(&format!(", {} out", usage.output_tokens));
    if let Some(price) = price {
        line.push_str(&format!("; cost ${:.4}", price.cost(usage)));
    }
    line
}

fn end_line(outcome: &TurnOutcome) -> String {
    let counts = format!(
        "{}, {}",
        crate::output::count(outcome.model_calls, "model call"),
        crate::output::count(outcome.tool_calls, "tool call")
    );
    match &outcome.end {
        TurnEnd::EndTurn => format!("done: the model ended its turn ({counts})"),
        TurnEnd::Completed { summary } if !outcome.failed_tools.is_empty() => format!(
            "not completed: the model called complete (\"{summary}\"), but its last {} failed \
             ({counts})",
            tool_calls_named(&outcome.failed_tools)
        ),
        TurnEnd::Completed { summary } => format!("completed: {summary} ({counts})"),
        TurnEnd::Escalated { reason } => format!("escalated: {reason} ({counts})"),
        TurnEnd::Stopped { stop } => format!("stopped ({}): {stop} ({counts})", stop.rule()),
        TurnEnd::ModelCallCap { limit } => {
            format!(
                "stopped: the request reached its cap of {} ({counts})",
                crate::output::count(*limit, "model call")
            )
        }
    }
}

/// `edit_file call`, `edit_file and run_command calls`, `a, b and c calls`.
fn tool_calls_named(tools: &[String]) -> String {
    match tools {
        [one] => format!("{one} call"),
        [first @ .., last] => format!("{} and {last} calls", first.join(", ")),
        [] => "calls".to_owned(),
    }
}

fn exit_code(outcome: &TurnOutcome) -> ExitCode {
    match &outcome.end {
        TurnEnd::Completed { .. } if !outcome.failed_tools.is_empty() => ExitCode::from(5),
        TurnEnd::EndTurn | TurnEnd::Completed { .. } => ExitCode::SUCCESS,
        TurnEnd::Escalated { .. } => ExitCode::from(3),
        _ => ExitCode::from(4),
    }
}

/// A message as `conversations show` prints it.
fn render_message(message: &Message) -> String {
    let who = match message.role {
        MessageRole::User => "user",
        MessageRole::Assistant => "assistant",
    };
    let mut out = String::new();
    for block in &message.content {
        let line = match block {
            ContentBlock::Text { text } => format!("{who}: {text}"),
            ContentBlock::ToolUse(call) => format!("{who} -> {} {}", call.name, call.input),
            ContentBlock::ToolResult {
                content, is_error, ..
            } => format!(
                "  {} {}",
                if *is_error { "error:" } else { "result:" },
                one_line(content, 300)
            ),
            ContentBlock::Thinking { text, .. } => {
                format!("{who} (thinking): {}", one_line(text, 300))
            }
            ContentBlock::RedactedThinking { .. } => format!("{who} (redacted thinking)"),
            ContentBlock::Image { .. } => format!("{who}: [image]"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}
