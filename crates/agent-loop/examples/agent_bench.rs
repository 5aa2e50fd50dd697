//! The agent-loop benchmark behind `cargo xtask bench agent`: the turn loop's own cost per turn
//! with a model that answers at once, and loading and selecting from a transcript of 100,000
//! messages, each next to a baseline measured in the same run.
//!
//! Prints one JSON object on stdout; progress goes to stderr. Every time is a median, in
//! microseconds (`_us`) or milliseconds (`_ms`). Keys:
//! - `turns`: turns timed per agent, after 20 untimed ones;
//! - `model_us`: one call of the instant model alone, outside the loop;
//! - `turn_us`: one `Agent::process_turn` (user message appended durably, system prompt built,
//!   messages selected, model called, its answer appended durably) with the built-in and
//!   control tools and no governance, in a temporary folder (`$TMPDIR`, a real disk);
//! - `turn_governed_us`: the same under the built-in policy, with an audit log;
//! - `append_us`: one durable `storage::append_jsonl` of a message (write, then fdatasync) in
//!   the same folder; a turn makes two;
//! - `overhead_us`, `overhead_governed_us`: a turn less the model call;
//! - the same five with `_mem` before `_us` (`turn_mem_us`, ...): in a folder on tmpfs
//!   (`/dev/shm`, where an fsync costs nothing), which leaves the loop's own work; absent
//!   where there is no `/dev/shm`;
//! - `messages`, `transcript_mb`: the size of the transcript loaded and selected from;
//! - `load_ms`: `ConversationStore::load` of that transcript, median of 5;
//! - `parse_ms`: reading the file and parsing each line as a `Message`, no store: the floor;
//! - `budget`: the token budget of the selection;
//! - `select_ms`: `window::select` with that budget (the full report: the dropped messages'
//!   tokens too), median of 21;
//! - `fit_ms`: `context::newest_that_fit`, the same cut without estimating the dropped messages:
//!   what the turn loop runs before every model call, median of 21;
//! - `estimate_ms`: `estimate_message_tokens` summed over every message, median of 21;
//! - `selected`: how many messages that selection kept.

use std::error::Error;
use std::fs;
use std::future::Future;
use std::hint::black_box;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_loop::tools::control::control_tools;
use agent_loop::{
    Agent, AgentConfig, ConversationStore, Governance, ToolConfig, ToolRegistry, Workspace,
    estimate_message_tokens, storage, window,
};
use governance::{AuditLog, Governor, GovernorConfig, Policy, Session};
use llm_core::{
    Clock, ContentBlock, EventStream, LlmClient, Message, Request, Response, Role, StopReason,
    SystemClock, ToolCall, Usage, UsageStats,
};
use serde_json::json;

const TURNS: usize = 300;
const WARMUP_TURNS: usize = 20;
const MESSAGES: usize = 100_000;
const LOADS: usize = 5;
const SELECTIONS: usize = 21;
const BUDGET: u64 = 150_000;

type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A model that answers every request at once with the same short message, so that a turn's
/// time is the loop's own.
struct InstantModel(Response);

impl LlmClient for InstantModel {
    fn complete<'a>(&'a self, _request: &'a Request) -> BoxFuture<'a, llm_core::Result<Response>> {
        Box::pin(std::future::ready(Ok(self.0.clone())))
    }

    fn stream<'a>(&'a self, _request: &'a Request) -> BoxFuture<'a, llm_core::Result<EventStream>> {
        Box::pin(std::future::ready(Err(llm_core::Error::Config {
            details: "the bench model only answers `complete`".to_owned(),
        })))
    }

    fn usage_stats(&self) -> UsageStats {
        UsageStats::default()
    }

    fn reset_usage_stats(&self) {}

    fn count_tokens(&self, _request: &Request) -> u64 {
        0
    }
}

fn instant_model() -> Arc<InstantModel> {
    Arc::new(InstantModel(Response {
        content: vec![ContentBlock::text("ok")],
        stop_reason: StopReason::EndTurn,
        usage: Usage {
            input_tokens: 1_000,
            output_tokens: 1,
            ..Usage::default()
        },
        model: "instant".to_owned(),
        ..Response::default()
    }))
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Deterministic prose of about `bytes` bytes, different for each `seed`.
fn prose(bytes: usize, seed: u64) -> String {
    const WORDS: &[&str] = &[
        "the", "file", "reads", "config", "from", "disk", "and", "returns", "an", "error", "when",
        "parsing", "fails", "test", "module", "function", "should", "handle", "empty", "input",
        "value", "struct", "field", "update", "cargo", "build", "passes", "now",
    ];
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut text = String::with_capacity(bytes + 16);
    while text.len() < bytes {
        // xorshift64: cheap, and the same text on every run.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push_str(WORDS[(state % WORDS.len() as u64) as usize]);
        text.push(if state.is_multiple_of(11) { '\n' } else { ' ' });
    }
    text
}

/// A transcript shaped like agent work: a user request (~200 bytes), two rounds of an
/// assistant note with a tool call and its result (~1 KB), then the assistant's answer.
fn transcript(messages: usize) -> Vec<Message> {
    let mut out = Vec::with_capacity(messages + 6);
    let mut n: u64 = 0;
    while out.len() < messages {
        n += 1;
        out.push(Message::user(prose(200, n)));
        for round in 0..2 {
            let id = format!("toolu_{n:08}_{round}");
            let input = if round == 0 {
                json!({"path": format!("src/module_{}.rs", n % 97)})
            } else {
                json!({"command": format!("cargo test -p crate_{}", n % 13), "timeout": 120})
            };
            out.push(Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text(prose(120, n * 7 + round)),
                    ContentBlock::ToolUse(ToolCall {
                        id: id.clone(),
                        name: if round == 0 {
                            "read_file"
                        } else {
                            "run_command"
                        }
                        .to_owned(),
                        input,
                    }),
                ],
            });
            out.push(Message {
                role: Role::User,
                content: vec![ContentBlock::ToolResult {
                    tool_use_id: id,
                    content: prose(1_000, n * 13 + round),
                    is_error: false,
                }],
            });
        }
        out.push(Message::assistant(prose(300, n * 17)));
    }
    out.truncate(messages);
    // A transcript ending in an unanswered call would be repaired (and grow) on load.
    if let Some(last) = out.last_mut()
        && last.role == Role::Assistant
    {
        *last = Message::assistant(prose(300, 0));
    }
    out
}

/// An agent over a fresh workspace in `dir`, with the built-in and control tools.
fn agent(dir: &Path, model: Arc<dyn LlmClient>) -> Result<Agent, Box<dyn Error>> {
    let ws = dir.join("ws");
    fs::create_dir_all(&ws)?;
    fs::write(ws.join("README.md"), "# Bench\n")?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let workspace = Arc::new(Workspace::open(&ws)?);
    let mut tools = ToolRegistry::with_builtins(&workspace, &ToolConfig::default());
    for tool in control_tools() {
        tools.register(tool)?;
    }
    let conversation = ConversationStore::create(&ws, clock.clone())?;
    let config = AgentConfig {
        home: dir.join("home"),
        workspace_label: "ws".to_owned(),
        ..AgentConfig::default()
    };
    Ok(Agent::new(model, conversation, tools, config, clock))
}

/// `agent` under the built-in policy, auditing to `dir`.
fn governed(agent: Agent, dir: &Path) -> Result<Agent, Box<dyn Error>> {
    let session = Session {
        conversation: agent.conversation().id().to_owned(),
        agent: "bench".to_owned(),
        role: merkle_store::Role::Writer,
    };
    Ok(agent.with_governance(Governance {
        governor: Governor::new(
            Arc::new(Policy::builtin()),
            session,
            GovernorConfig::default(),
        ),
        audit: AuditLog::open(&dir.join("audit.jsonl"), Box::new(governance::SystemClock))?,
        approver: None,
    }))
}

/// Median time of one `process_turn` over `TURNS` turns, after a few untimed ones.
fn turns(runtime: &tokio::runtime::Runtime, mut agent: Agent) -> Result<Duration, Box<dyn Error>> {
    let input = prose(200, 1);
    let mut times = Vec::with_capacity(TURNS);
    for turn in 0..WARMUP_TURNS + TURNS {
        let start = Instant::now();
        let outcome = runtime.block_on(agent.process_turn(&input))?;
        let elapsed = start.elapsed();
        assert_eq!(outcome.model_calls, 1, "one model call per turn");
        if turn >= WARMUP_TURNS {
            times.push(elapsed);
        }
    }
    assert_eq!(
        agent.conversation().messages().len(),
        2 * (WARMUP_TURNS + TURNS)
    );
    Ok(median(times))
}

/// Per-turn figures for one folder: a turn without and with governance, and one append.
struct TurnFigures {
    turn: Duration,
    governed: Duration,
    append: Duration,
}

fn turn_figures(
    runtime: &tokio::runtime::Runtime,
    dir: &Path,
) -> Result<TurnFigures, Box<dyn Error>> {
    eprintln!("bench: {TURNS} turns in {}, ungoverned", dir.display());
    let turn = turns(runtime, agent(&dir.join("plain"), instant_model())?)?;
    eprintln!("bench: {TURNS} turns in {}, governed", dir.display());
    let agent = agent(&dir.join("governed"), instant_model())?;
    let governed = turns(runtime, governed(agent, dir)?)?;
    let appended = dir.join("append.jsonl");
    let message = Message::user(prose(200, 4));
    storage::append_jsonl(&appended, &message)?;
    let mut times = Vec::with_capacity(TURNS);
    for _ in 0..TURNS {
        let start = Instant::now();
        storage::append_jsonl(&appended, &message)?;
        times.push(start.elapsed());
    }
    Ok(TurnFigures {
        turn,
        governed,
        append: median(times),
    })
}

fn main() -> Result<(), Box<dyn Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let tmp = tempfile::tempdir()?;
    let disk = turn_figures(&runtime, tmp.path())?;
    // On tmpfs an fsync is free, which leaves the loop's own work.
    let shm = Path::new("/dev/shm");
    let mem = if shm.is_dir() {
        let mem_tmp = tempfile::tempdir_in(shm)?;
        Some(turn_figures(&runtime, mem_tmp.path())?)
    } else {
        None
    };
    let model_call = model_call_time(&runtime)?;
    let transcript = transcript_figures(&tmp.path().join("big"))?;
    print_figures(model_call, &disk, mem.as_ref(), &transcript);
    Ok(())
}

/// Median time of one call of the instant model alone, outside the loop, over `TURNS` calls.
fn model_call_time(runtime: &tokio::runtime::Runtime) -> Result<Duration, Box<dyn Error>> {
    let model = instant_model();
    let request = Request {
        system: Some(prose(4_000, 2)),
        messages: vec![Message::user(prose(200, 3))],
        ..Request::default()
    };
    let mut model_times = Vec::with_capacity(TURNS);
    for _ in 0..TURNS {
        let start = Instant::now();
        black_box(runtime.block_on(model.complete(black_box(&request)))?);
        model_times.push(start.elapsed());
    }
    Ok(median(model_times))
}

/// Figures for the big transcript: its size, loading it and selecting from it.
struct TranscriptFigures {
    bytes: u64,
    load: Duration,
    parse: Duration,
    selection: SelectionFigures,
}

/// Figures for selecting from the big transcript.
struct SelectionFigures {
    select: Duration,
    fit: Duration,
    estimate: Duration,
    /// How many messages the selection kept.
    selected: usize,
}

/// Writes a transcript of `MESSAGES` messages in a new workspace `ws`, then times loading it,
/// parsing it without a store, and selecting from it.
fn transcript_figures(ws: &Path) -> Result<TranscriptFigures, Box<dyn Error>> {
    eprintln!("bench: writing a transcript of {MESSAGES} messages");
    fs::create_dir_all(ws)?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let id = {
        let store = ConversationStore::create(ws, clock.clone())?;
        storage::write_jsonl(&store.dir().join("transcript.jsonl"), &transcript(MESSAGES))?;
        store.id().to_owned()
    };
    let file = agent_loop::conversations_dir(ws)
        .join(&id)
        .join("transcript.jsonl");
    let bytes = fs::metadata(&file)?.len();

    eprintln!("bench: loading it {LOADS} times");
    // Each run starts with the previous run's messages freed, for the floor too, so that
    // both reuse the same memory rather than one faulting in fresh pages.
    let mut load_times = Vec::with_capacity(LOADS);
    let mut store = None;
    for _ in 0..LOADS {
        drop(store.take());
        let start = Instant::now();
        let (loaded, report) = ConversationStore::load(ws, &id, clock.clone())?;
        load_times.push(start.elapsed());
        assert!(
            report.is_clean(),
            "the generated transcript needs no repair"
        );
        assert_eq!(loaded.messages().len(), MESSAGES);
        store = Some(loaded);
    }
    let store = store.expect("LOADS is at least 1");
    let mut parse_times = Vec::with_capacity(LOADS);
    for _ in 0..LOADS {
        let start = Instant::now();
        let text = fs::read_to_string(&file)?;
        let messages = text
            .lines()
            .map(serde_json::from_str::<Message>)
            .collect::<Result<Vec<_>, _>>()?;
        parse_times.push(start.elapsed());
        assert_eq!(messages.len(), MESSAGES);
    }
    Ok(TranscriptFigures {
        bytes,
        load: median(load_times),
        parse: median(parse_times),
        selection: selection_figures(store.messages()),
    })
}

/// Median times, over `SELECTIONS` runs, of selecting from `messages` within `BUDGET`, of
/// finding the same cut alone, and of estimating every message.
fn selection_figures(messages: &[Message]) -> SelectionFigures {
    eprintln!("bench: selecting {SELECTIONS} times");
    let mut select_times = Vec::with_capacity(SELECTIONS);
    let mut fit_times = Vec::with_capacity(SELECTIONS);
    let mut estimate_times = Vec::with_capacity(SELECTIONS);
    let mut selected = 0;
    for _ in 0..SELECTIONS {
        let start = Instant::now();
        let selection = window::select(black_box(messages), BUDGET);
        select_times.push(start.elapsed());
        selected = black_box(selection).selected.len();
        let start = Instant::now();
        let fit = context::newest_that_fit(black_box(messages), BUDGET, window::MessageTokens);
        fit_times.push(start.elapsed());
        assert_eq!(black_box(fit).0, MESSAGES - selected);
        let start = Instant::now();
        black_box(
            black_box(messages)
                .iter()
                .map(estimate_message_tokens)
                .sum::<u64>(),
        );
        estimate_times.push(start.elapsed());
    }
    SelectionFigures {
        select: median(select_times),
        fit: median(fit_times),
        estimate: median(estimate_times),
        selected,
    }
}

/// Prints the figures as one JSON object on stdout, keys as the file's docs list them.
fn print_figures(
    model_call: Duration,
    disk: &TurnFigures,
    mem: Option<&TurnFigures>,
    transcript: &TranscriptFigures,
) {
    let model_call_us = us(model_call);
    println!("{{");
    println!("  \"turns\": {TURNS},");
    println!("  \"model_us\": {model_call_us:.2},");
    let mut turn_keys = vec![("", disk)];
    turn_keys.extend(mem.map(|mem| ("_mem", mem)));
    for (suffix, figures) in turn_keys {
        println!("  \"turn{suffix}_us\": {:.1},", us(figures.turn));
        println!(
            "  \"turn_governed{suffix}_us\": {:.1},",
            us(figures.governed)
        );
        println!("  \"append{suffix}_us\": {:.1},", us(figures.append));
        println!(
            "  \"overhead{suffix}_us\": {:.1},",
            us(figures.turn) - model_call_us
        );
        println!(
            "  \"overhead_governed{suffix}_us\": {:.1},",
            us(figures.governed) - model_call_us
        );
    }
    let selection = &transcript.selection;
    println!("  \"messages\": {MESSAGES},");
    println!("  \"transcript_mb\": {:.1},", transcript.bytes as f64 / 1e6);
    println!("  \"load_ms\": {:.1},", ms(transcript.load));
    println!("  \"parse_ms\": {:.1},", ms(transcript.parse));
    println!("  \"budget\": {BUDGET},");
    println!("  \"select_ms\": {:.3},", ms(selection.select));
    println!("  \"fit_ms\": {:.3},", ms(selection.fit));
    println!("  \"estimate_ms\": {:.3},", ms(selection.estimate));
    println!("  \"selected\": {}", selection.selected);
    println!("}}");
}
