//! `merkle`: argument parsing, output formatting and glue over the workspace's library crates.
//!
//! Every command prints a readable report by default and a stable JSON document with `--json`;
//! errors go to stderr and name the input at fault. Exit codes: 0 ok, 1 failure, 2 usage error.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use agent_loop::agent_model;
use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use context::ops::Workspace;
use merkle_store::{EngineKind, NewFrame, NodeRecord, OpenOptions, Role, ScanOptions, Store};

mod agent_cmds;
mod context_cmds;
mod generate;
mod governance_cmds;
mod index_cmds;
mod llm;
mod mcp_cmd;
mod output;
mod remote_cmds;
mod report;
mod watch;

use output::{Out, frame_json};

/// merkle: a deterministic context engine for coding agents.
///
/// Scans a workspace into a content-addressed Merkle tree and keeps immutable, attributed
/// context frames on its files and directories.
#[derive(Parser, Debug)]
#[command(name = "merkle", version, propagate_version = true)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone, Debug)]
#[command(next_help_heading = "Global options")]
struct Global {
    /// The workspace root [default: the enclosing workspace of the current directory: the nearest
    /// folder holding .merkle or .git, else the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The store folder [default: <root>/.merkle]
    #[arg(long, global = true, value_name = "DIR")]
    store: Option<PathBuf>,
    /// The storage engine [default: the one the store holds, else redb]
    #[arg(long, global = true, value_name = "ENGINE", value_parser = ["redb", "sled"])]
    engine: Option<String>,
    /// Print stable, machine-readable JSON
    #[arg(long, global = true)]
    json: bool,
    /// Print less: no warnings, no progress
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    quiet: bool,
    /// Print more detail
    #[arg(short, long, global = true)]
    verbose: bool,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Scan the workspace into the Merkle tree (incremental: unchanged files are not re-hashed)
    Scan {
        /// Only these files and folders (a folder with everything below it), and the folders
        /// above them; the rest of the tree is taken from the last scan. For editor hooks and
        /// scripts that know what they wrote [default: the whole workspace]
        paths: Vec<String>,
        /// Hash every file again, ignoring the stat cache
        #[arg(long)]
        force: bool,
    },
    /// Show the last scan's root, node and frame counts, and files changed on disk since (writes nothing)
    Status,
    /// Check the store against itself: every id re-derived, every index checked
    Validate,
    /// Register and list agents
    #[command(subcommand)]
    Agent(AgentCommand),
    /// Attach a frame to a node; prints the FrameID
    PutFrame {
        /// The node: a workspace path or a NodeID (a unique hex prefix of 8+ digits)
        node: String,
        /// The file holding the frame's content, or - for standard input
        file: String,
        /// The frame type (e.g. summary, notes)
        #[arg(long = "type", value_name = "TYPE")]
        frame_type: String,
        /// The writing agent (registered with `merkle agent add`)
        #[arg(long)]
        agent: String,
        /// What the frame was derived from, as 64 hex digits [default: the node's NodeID]
        #[arg(long, value_name = "HASH", value_parser = parse_hash)]
        basis: Option<merkle_store::Hash>,
        /// The provider that produced the content
        #[arg(long)]
        provider: Option<String>,
        /// The model that produced the content
        #[arg(long)]
        model: Option<String>,
        /// A free metadata key=value (repeatable); not part of the FrameID
        #[arg(long = "meta", value_name = "KEY=VALUE", value_parser = parse_key_value)]
        meta: Vec<(String, String)>,
    },
    /// Show a node record (path, kind, NodeID, content hash, children) and the frames a view
    /// selects [default: its head frames]
    GetNode {
        /// A workspace path or a NodeID (a unique hex prefix of 8+ digits)
        node: String,
        #[command(flatten)]
        view: context_cmds::ViewArgs,
    },
    /// Synthesize a directory's frame from its children's head frames (explicit only)
    Synthesize(context_cmds::SynthesizeArgs),
    /// Give files in scope a frame of a type where it is missing or stale (offline outline
    /// producer), then synthesize their directories bottom-up
    Generate(generate::GenerateArgs),
    /// Keep the tree (and with --generate, one frame type) fresh: rescan after files change,
    /// until Ctrl-C; the store stays free for other commands between rescans
    Watch(watch::WatchArgs),
    /// Recompute the stale frames in scope (frames whose inputs changed), bottom-up
    Regenerate(context_cmds::RegenerateArgs),
    /// Mark a node's frames stale so the next regenerate recomputes them (append-only)
    Invalidate(context_cmds::InvalidateArgs),
    /// List or show the named views of .merkle/views.yaml
    #[command(subcommand)]
    Views(context_cmds::ViewsCommand),
    /// Show or check a governance policy: the intent -> tools matrix, rules, limits and examples
    #[command(subcommand)]
    Policy(governance_cmds::PolicyCommand),
    /// Show or verify the workspace's hash-chained audit log of governance decisions
    #[command(subcommand)]
    Audit(governance_cmds::AuditCommand),
    /// Report the context for CI: root, counts, stale frames by type, and with --since what
    /// changed (nodes added, removed, changed; frames on them) since a root hash or git revision
    Report(report::ReportArgs),
    /// Run an agent on one task until it completes, escalates or is stopped (governed; exit 0
    /// done, 3 escalated, 4 stopped)
    Run(agent_cmds::RunArgs),
    /// Talk to an agent interactively (governed; asks before calls the policy asks about)
    Chat(agent_cmds::ChatArgs),
    /// List, show and resume the workspace's agent conversations
    #[command(subcommand)]
    Conversations(agent_cmds::ConversationsCommand),
    /// Talk to a model: one request from the command line
    #[command(subcommand)]
    Llm(llm::LlmCommand),
    /// The LLM simulator: a fake Anthropic/OpenAI server answering from a script
    #[command(subcommand)]
    Sim(llm::SimCommand),
    /// Serve the Model Context Protocol over stdio (or Streamable HTTP with --http), for editors
    /// and agents to read and write frames
    ///
    /// Tools: get_node, list_frames, put_frame, synthesize, search, context, related, status (answering the JSON of
    /// `merkle --json`, each within its max_tokens, with a cursor to continue a cut answer);
    /// resources: merkle://node/{path} for every path with frames. The store is opened per
    /// request, so other merkle commands keep working while the server runs.
    Mcp(mcp_cmd::McpArgs),
    /// Add, list, remove and initialise PostgreSQL remotes for team-shared context
    #[command(subcommand)]
    Remote(remote_cmds::RemoteCommand),
    /// Send a remote the frames, nodes, memos and agents it lacks (one transaction)
    Push(remote_cmds::PushArgs),
    /// Fetch a remote's frames for the local tree's paths (or --all), each checked against its
    /// id before anything is stored
    Pull(remote_cmds::PullArgs),
    /// List every frame on a node, oldest first
    ListFrames {
        /// A workspace path or a NodeID (a unique hex prefix of 8+ digits)
        node: String,
        /// Only frames of this type
        #[arg(long = "type", value_name = "TYPE")]
        frame_type: Option<String>,
    },
    /// Show the head frame of one type on a node
    GetHead {
        /// A workspace path or a NodeID (a unique hex prefix of 8+ digits)
        node: String,
        /// The frame type
        #[arg(long = "type", value_name = "TYPE")]
        frame_type: String,
    },
    /// List a file's imports and the files that import it, resolved in the workspace
    /// (Rust mod/use, Python, JS/TS relative imports, Go packages, C/C++ includes, Java);
    /// rescans first
    Related(index_cmds::RelatedArgs),
    /// Find the files (and in each the definitions, with their lines) a query is about: a
    /// symbol name, a question, an issue's text or a traceback; full-text BM25 fused with
    /// exact definitions, paths, the import graph and priors; rescans first
    Search(index_cmds::SearchArgs),
    /// Gather a task's context within a token budget: the files `search` finds for it and, in
    /// each, the source of the matched definitions (else the file's outline), as Markdown to
    /// paste into a prompt (rescans first; never creates a store)
    Context(index_cmds::ContextArgs),
    /// List the nodes of the last scan under PATH (like `git ls-tree`)
    ListNodes {
        /// A workspace path [default: the root]
        path: Option<String>,
        /// List every descendant, not just the children
        #[arg(short, long)]
        recursive: bool,
    },
}

#[derive(Subcommand, Debug)]
enum AgentCommand {
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

/// An error in how the command was called that clap cannot see (flags that need each other,
/// a value only the command can check): it exits 2, like clap's own usage errors.
#[derive(Debug)]
pub(crate) struct Usage(pub(crate) String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

/// Returns early with a [`Usage`] error.
macro_rules! usage {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::Usage(format!($($arg)*))))
    };
}
pub(crate) use usage;

/// The value of `--base-url`: an http:// or https:// URL with a host.
fn parse_base_url(url: &str) -> Result<String, String> {
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

fn main() -> ExitCode {
    tune_allocator();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // With --json a usage error is a JSON object too; help and --version print as usual.
        Err(e) if e.use_stderr() && std::env::args_os().skip(1).any(|a| a == "--json") => {
            // clap's message without its `error: ` label and the usage lines after it.
            let rendered = e.render().to_string();
            let message = rendered
                .split("\n\nUsage:")
                .next()
                .unwrap_or_default()
                .trim();
            let message = message.strip_prefix("error: ").unwrap_or(message);
            eprintln!("{}", serde_json::json!({"error": message, "kind": "usage"}));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    // A damaged store file makes its engine panic; the store catches that and returns an error
    // naming the file, which is all the user should read.
    merkle_store::engine::silence_caught_panics();
    let mut out = Out::new(cli.global.json);
    out.verbose = cli.global.verbose;
    match run(&cli, &mut out) {
        Ok(code) => code,
        Err(e) => {
            let _ = std::io::stdout().flush();
            let kind = error_kind(&e);
            if cli.global.json {
                eprintln!(
                    "{}",
                    serde_json::json!({"error": format!("{e:#}"), "kind": kind})
                );
            } else {
                eprintln!("{} {e:#}", error_label());
            }
            if kind == "usage" {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// `error:` as clap prints it: bold red where stderr is a terminal and `NO_COLOR` is not set.
fn error_label() -> &'static str {
    let color = std::io::IsTerminal::is_terminal(&std::io::stderr())
        && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    if color {
        "\x1b[1m\x1b[31merror:\x1b[0m"
    } else {
        "error:"
    }
}

/// What kind of failure an error is, as `--json` names it: `usage`, `connection`, `refused`
/// (a remote's row failed a check), `permission`, `not_initialized`, `remote` (any other
/// remote or database failure), `config`, `not_found`, `no_store`, `not_scanned`, `busy`,
/// `store` (damage or an engine failure), `invalid` (a value the store refuses), or `error`.
fn error_kind(e: &anyhow::Error) -> &'static str {
    if e.chain().any(|c| c.is::<Usage>()) {
        return "usage";
    }
    for c in e.chain() {
        if let Some(r) = c.downcast_ref::<remote::Error>() {
            return match r {
                remote::Error::Connect { .. } => "connection",
                remote::Error::Tampered { .. } => "refused",
                remote::Error::Permission { .. } => "permission",
                remote::Error::NotInitialized { .. } => "not_initialized",
                remote::Error::Database { .. } => "remote",
                remote::Error::Store(s) => store_error_kind(s),
                _ => "config",
            };
        }
        if let Some(s) = c.downcast_ref::<merkle_store::Error>() {
            return store_error_kind(s);
        }
        // The shared operations (context::ops) fail with the store's error inside context's,
        // and agent-loop's (generate) with context's inside theirs.
        if let Some(context::Error::Store(s)) = c.downcast_ref::<context::Error>() {
            return store_error_kind(s);
        }
        if let Some(agent_loop::Error::Context(context::Error::Store(s))) =
            c.downcast_ref::<agent_loop::Error>()
        {
            return store_error_kind(s);
        }
    }
    "error"
}

fn store_error_kind(e: &merkle_store::Error) -> &'static str {
    use merkle_store::Error as E;
    match e {
        E::NoSuchPath { .. } | E::NoSuchNode { .. } | E::NoSuchFrame { .. } => "not_found",
        E::NoStore { .. } => "no_store",
        E::NotScanned => "not_scanned",
        E::StoreInUse { .. } => "busy",
        E::Invalid { .. }
        | E::UnknownAgent { .. }
        | E::Forbidden { .. }
        | E::FrameConflict { .. }
        | E::BasisOfAnotherNode { .. }
        | E::AmbiguousPrefix { .. }
        | E::Refused { .. } => "invalid",
        _ => "store",
    }
}

/// The workspace root: `--root`, else the nearest folder holding `.merkle` or `.git`, else the
/// current directory.
fn find_root(arg: Option<&Path>) -> Result<PathBuf> {
    if let Some(r) = arg {
        return r
            .canonicalize()
            .with_context(|| format!("workspace root {}", r.display()));
    }
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    Ok(cwd
        .ancestors()
        .find(|d| d.join(".merkle").is_dir() || d.join(".git").exists())
        .unwrap_or(&cwd)
        .to_path_buf())
}

/// The workspace at `root` with the store the global options name.
pub(crate) fn workspace(g: &Global, root: &Path) -> Workspace {
    Workspace::new(
        root,
        OpenOptions {
            store_dir: g.store.clone(),
            engine: g.engine.as_deref().and_then(EngineKind::parse),
            ..OpenOptions::default()
        },
    )
}

/// The store read-only, or for writing (created where there is none, waiting a little for
/// another process's writer): [`Workspace::reader`], [`Workspace::writer`].
fn open(g: &Global, root: &Path, read_only: bool) -> Result<Store> {
    let ws = workspace(g, root);
    Ok(if read_only {
        ws.reader()?
    } else {
        ws.writer()?
    })
}

/// [`Workspace::current`] for a command whose answer has no room to say it is stale (a list):
/// a warning on stderr says so instead.
fn open_current_or_warn(g: &Global, root: &Path) -> Result<Store> {
    let current = workspace(g, root).current()?;
    if current.stale && !g.quiet {
        eprintln!(
            "warning: files changed on disk since the last scan, and another process holds the \
             store for writing: this answers for the last scan's tree"
        );
    }
    Ok(current.store)
}

/// glibc's allocator starts out serving every allocation over 128 KiB with a fresh memory map
/// (unmapped again when freed, every page faulted in anew) and growing its heaps 128 KiB at a
/// time; it raises that threshold only after such maps are freed, which a command that builds
/// its working set once (a scan's list of every path, its records) never gets to. Maps up to
/// 32 MiB come from the heap, which grows 32 MiB at a time (address space, not memory): a cold
/// scan of a real checkout took 5 to 7% less time (rustts 186 -> 173 ms, django 94 -> 89 ms,
/// medians of 11 interleaved runs). What is freed is reused rather than returned, as the
/// threshold's own adjustment would have it in a long-running process. These are the
/// allocator's documented parameters; nothing here depends on how glibc lays out its heaps.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn tune_allocator() {
    // SAFETY: mallopt only sets the allocator's parameters, which glibc synchronises; it is
    // called before this process starts a thread. A value glibc refuses is left at its default.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TOP_PAD, 32 << 20);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}

/// Turns a path argument into a workspace path: relative to the current directory when that is
/// inside the workspace (as git does), else relative to the root. `..` is resolved lexically
/// (the path may name a node that is no longer on disk); a path outside the workspace is an
/// error.
pub(crate) fn workspace_path(root: &Path, arg: &str) -> Result<String> {
    let p = Path::new(arg);
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        match std::env::current_dir().and_then(|c| c.canonicalize()) {
            Ok(cwd) if cwd.starts_with(root) => cwd.join(p),
            _ => root.join(p),
        }
    };
    let mut normal = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                normal.pop();
            }
            std::path::Component::CurDir => {}
            c => normal.push(c),
        }
    }
    let Ok(rel) = normal.strip_prefix(root) else {
        bail!(
            "{arg:?} is outside the workspace {} (see --root)",
            root.display()
        );
    };
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Ok(parts.join("/"))
}

/// Resolves a node argument: a workspace path, else a NodeID prefix of 8+ hex digits.
pub(crate) fn resolve(store: &Store, root: &Path, spec: &str) -> Result<NodeRecord> {
    if store.root()?.is_none() {
        return Err(merkle_store::Error::NotScanned.into());
    }
    let path = workspace_path(root, spec);
    if let Ok(path) = &path
        && let Some(n) = store.node_at(path)?
    {
        return Ok(n);
    }
    if merkle_store::is_id_prefix(spec) {
        return Ok(store.resolve_prefix(spec)?);
    }
    let missing = merkle_store::Error::NoSuchPath { path: path? };
    if !spec.is_empty() && spec.len() < 8 && spec.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(anyhow::Error::new(missing).context(format!(
            "{spec:?} is neither a path nor a NodeID prefix (a prefix needs at least 8 hex digits)"
        )));
    }
    Err(missing.into())
}

fn run(cli: &Cli, out: &mut Out) -> Result<ExitCode> {
    let g = &cli.global;
    // The model commands work outside any workspace.
    let root = match &cli.command {
        Command::Llm(_) | Command::Sim(_) | Command::Policy(_) => PathBuf::new(),
        _ => find_root(g.root.as_deref())?,
    };
    match &cli.command {
        Command::Policy(cmd) => return governance_cmds::run_policy(cmd, g.json),
        Command::Audit(cmd) => return governance_cmds::run_audit(cmd, &root, g.json),
        Command::Llm(cmd) => return llm::run_llm(cmd, g.json),
        Command::Run(args) => return agent_cmds::run_task(g, &root, args),
        Command::Chat(args) => {
            return agent_cmds::run_chat(g, &root, &args.agent, args.conversation.as_deref());
        }
        Command::Conversations(cmd) => return agent_cmds::run_conversations(g, &root, cmd),
        Command::Sim(cmd) => return llm::run_sim(cmd, g.json),
        Command::Watch(args) => return watch::run(g, &root, args),
        Command::Mcp(args) => return mcp_cmd::serve(g, &root, args),
        Command::Remote(cmd) => return remote_cmds::run_remote(g, &root, cmd, out),
        Command::Push(args) => return remote_cmds::push(g, &root, args, out),
        Command::Pull(args) => return remote_cmds::pull(g, &root, args, out),
        Command::Scan { paths, force } => {
            let paths = paths
                .iter()
                .map(|p| workspace_path(&root, p))
                .collect::<Result<Vec<String>>>()?;
            let bar = (!g.quiet && !g.json).then(output::scan_progress);
            let tick = |p: merkle_store::Progress| {
                if let Some(b) = &bar {
                    output::scan_tick(b, p);
                }
            };
            let opts = ScanOptions {
                force: *force,
                progress: Some(&tick),
            };
            let report = if !paths.is_empty() {
                open(g, &root, false)?.scan_paths(&paths, &opts)?
            } else if *force {
                open(g, &root, false)?.scan(&opts)?
            } else {
                workspace(g, &root).scan(&opts)?
            };
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            output::scan(out, g, &report);
        }
        Command::Status => {
            let ws = workspace(g, &root);
            let status = ws.status()?;
            let remotes = remote_cmds::unpushed(g, &ws)?;
            let stale = context_cmds::stale_text(&status.stale);
            output::status(out, g, &status, stale, remotes);
        }
        Command::Validate => {
            let store = open(g, &root, true)?;
            let problems = store.validate()?;
            output::validate(out, &problems);
            if !problems.is_empty() {
                return Ok(ExitCode::from(1));
            }
        }
        Command::Agent(AgentCommand::Add {
            id,
            role,
            provider,
            model,
            base_url,
            api,
            api_key_env,
            price,
            no_provider,
        }) => {
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
            let store = open(g, &root, false)?;
            store.add_agent(id, role)?;
            if let Some(settings) = &settings {
                store.set_agent_settings(id, settings)?;
            }
            let agent = store.agent(id)?.context("the agent was just registered")?;
            let text = match agent_model::model_text(&agent) {
                Some(model) => {
                    format!("agent {id} registered as {role}, with its own model: {model}")
                }
                None => format!("agent {id} registered as {role}"),
            };
            out.value(agent_model::agent_json(&agent), text);
        }
        Command::Agent(AgentCommand::Prices) => {
            let prices: Vec<(&str, agent_loop::Price)> = agent_loop::Price::list().collect();
            let json = prices
                .iter()
                .map(|(model, p)| {
                    serde_json::json!({
                        "model": model,
                        "input": p.input_per_mtok,
                        "output": p.output_per_mtok,
                        "cache_read": p.cache_read_per_mtok,
                        "cache_write": p.cache_write_per_mtok,
                        "batch_factor": p.batch_factor,
                    })
                })
                .collect();
            let mut text = String::from(
                "dollars per million tokens (list prices; batches bill half)\nmodel\tinput\toutput\tcache read\tcache write",
            );
            for (model, p) in &prices {
                text.push_str(&format!(
                    "\n{model}\t{}\t{}\t{}\t{}",
                    p.input_per_mtok,
                    p.output_per_mtok,
                    p.cache_read_per_mtok,
                    p.cache_write_per_mtok
                ));
            }
            out.value(serde_json::Value::Array(json), text);
        }
        Command::Agent(AgentCommand::List) => {
            let store = open(g, &root, true)?;
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
        }
        Command::PutFrame {
            node,
            file,
            frame_type,
            agent,
            basis,
            provider,
            model,
            meta,
        } => {
            let content = if file == "-" {
                let mut buf = Vec::new();
                std::io::Read::read_to_end(&mut std::io::stdin(), &mut buf)
                    .context("reading the frame's content from standard input")?;
                buf
            } else {
                std::fs::read(file).with_context(|| format!("reading frame content from {file}"))?
            };
            let store = open(g, &root, false)?;
            // The frame attaches to the file as it is now, as from MCP and the agent's tools.
            if store.root()?.is_some() {
                store.scan(&ScanOptions::default())?;
            }
            let target = resolve(&store, &root, node)?;
            let mut frame = NewFrame::new(target.node_id, frame_type, agent, content);
            frame.basis = *basis;
            frame.metadata.provider = provider.clone();
            frame.metadata.model = model.clone();
            frame.metadata.extra.extend(meta.iter().cloned());
            let put = context::ops::put_frame(&store, &target, frame)?;
            out.value(put.json(), put.frame_id.to_hex());
        }
        Command::GetNode { node, view } => {
            let context::ops::Current { store, stale } = workspace(g, &root).current()?;
            let rec = resolve(&store, &root, node)?;
            let view = context_cmds::view(&store, &root, &view.request())?;
            let composed = context::get_node(&store, &rec, &view)?;
            context_cmds::print_node_context(out, &composed, store.root()?, stale);
        }
        Command::Synthesize(args) => {
            let store = open(g, &root, false)?;
            context_cmds::synthesize(out, &store, &root, args)?;
        }
        Command::Report(args) => {
            let store = open(g, &root, true)?;
            report::report(&store, args, g.json)?;
        }
        Command::Generate(args) => {
            let store = open(g, &root, false)?;
            generate::generate(out, &store, &root, args, g.quiet || g.json)?;
        }
        Command::Regenerate(args) => {
            let store = open(g, &root, false)?;
            context_cmds::regenerate(out, &store, &root, args)?;
        }
        Command::Invalidate(args) => {
            let store = open(g, &root, false)?;
            context_cmds::invalidate(out, &store, &root, args)?;
        }
        Command::Views(cmd) => context_cmds::views(out, &root, cmd)?,
        Command::Related(args) => index_cmds::related(out, g, &root, args)?,
        Command::Context(args) => index_cmds::context_cmd(out, g, &root, args)?,
        Command::Search(args) => index_cmds::search(out, g, &root, args)?,
        Command::ListFrames { node, frame_type } => {
            let store = open_current_or_warn(g, &root)?;
            let rec = resolve(&store, &root, node)?;
            let frames = store.frames_of(&rec.node_id, frame_type.as_deref())?;
            output::frames(out, &frames);
        }
        Command::GetHead { node, frame_type } => {
            let store = open_current_or_warn(g, &root)?;
            let rec = resolve(&store, &root, node)?;
            let Some(head) = store.head(&rec.node_id, frame_type)? else {
                bail!(
                    "no frame of type {frame_type:?} on {:?}",
                    display_path(&rec.path)
                );
            };
            let text = output::frame_text(&head, out.verbose);
            out.value(frame_json(&head), text);
        }
        Command::ListNodes { path, recursive } => {
            let store = open_current_or_warn(g, &root)?;
            let path = match path {
                Some(p) => workspace_path(&root, p)?,
                None => String::new(),
            };
            let nodes = store.list_nodes(&path, *recursive)?;
            output::tree_nodes(out, &nodes);
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_hash(s: &str) -> Result<merkle_store::Hash, String> {
    merkle_store::Hash::from_hex(s).ok_or_else(|| format!("{s:?} is not 64 hex digits"))
}

fn parse_key_value(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{s:?} is not KEY=VALUE"))
}

/// A node path for messages: the root shows as `.`.
pub(crate) fn display_path(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

/// A count that must be at least 1 (`--concurrency`, `--max-frames`): 0 is a usage error.
pub(crate) fn positive(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}
