//! `merkle`: argument parsing, output formatting and glue over the workspace's library crates.
//!
//! Every command prints a readable report by default and a stable JSON document with `--json`;
//! errors go to stderr and name the input at fault. Exit codes: 0 ok, 1 failure, 2 usage error.
//!
//! The package is named `merkle` so that `cargo install --path crates/cli` and `cargo uninstall
//! merkle` name the command; the layering block and `cargo xtask tidy` name the crate by its
//! folder, `cli`. Logic a library user would want does not live here; the JSON field names are a
//! documented contract (`output.rs` and the README). Every command opens the store through
//! context's `Workspace`, which `main.rs` makes from the global options, and reads follow its
//! freshness rule (ARCHITECTURE.md, "Freshness").
//!
//! - `tree_cmds.rs`: `scan`, `status`, `validate`, `put-frame`, `get-node`, `list-frames`,
//!   `get-head`, `list-nodes` (node reads through `Workspace::read`, saying `stale` when
//!   another process held the writer; `put-frame` scans first through the writer it opens
//!   anyway); `context_cmds.rs`: `get-node` with views, `synthesize`, `regenerate`, `invalidate`,
//!   `views`; `agents.rs`: `merkle agent`.
//! - `agent_cmds.rs`: `run`, `chat` and `conversations`. A run opens the store writable and
//!   rescans, registers the default agent, builds the client (`llm_sim::build`, with a scrubber
//!   that turns the workspace path and dates into placeholders so that recordings replay
//!   elsewhere), loads the policy and appends a `(policy)` record naming it (and its blake3) to
//!   the audit log before the first call.
//! - `generate.rs`: `generate` picks the offline outline producer unless a model is asked for (a
//!   provider flag, `MERKLE_LLM_MODE`, or the writing agent's stored model): a key in the
//!   environment alone never spends money. It turns the flags into merkle-generate's `GenerateConfig`
//!   once (with a model: its client and the runtime it runs on, both kept here) for `generate` and
//!   for every rescan of `watch --generate`, draws the progress bars (indicatif), listens for
//!   Ctrl-C, and renders `generate::generate`'s answer.
//! - `watch.rs`: merkle-watch's loop (`watch::Looping`: debounced events, the paths they name,
//!   readers told whether the last rescan is still the tree on disk), whose rescans this makes
//!   (`Store::scan_paths`, a full scan first), optionally with `generate`, holding the store only
//!   for the length of each rescan. Every read asks such a watch (`watch::Vouching`).
//! - `index_cmds.rs`: `related`, `search` and `context`, and `refs_cmd.rs`: `refs`, each over
//!   `Workspace::read_facts`, then context's facts, graph, `search_tree` or `bundle`.
//! - `report.rs`: `context::ops::report` as Markdown or JSON; `mcp_cmd.rs`: `merkle mcp`, its
//!   flags read into `mcp::ServeConfig`, the runtime built (one thread for stdio, many for HTTP),
//!   the signals that stop HTTP, and the server's errors mapped (a configuration it refuses is a
//!   usage error naming the flags); `remote_cmds.rs`, `governance_cmds.rs`, `llm.rs`: `remote`,
//!   `push`, `pull`, `policy`, `audit`, `llm complete`, `sim serve`.
//!
//! This crate alone builds the tokio runtime, and picks the process's allocator: jemalloc, for
//! Rust's allocations and the grammars' C parsers' alike (see `GLOBAL`).
//! The global rayon pool starts when a command first needs it.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand};
use context::ops::Workspace;
use merkle_store::{EngineKind, NodeRecord, OpenOptions, Store};

mod agent_cmds;
mod agents;
mod calibration;
mod context_cmds;
mod generate;
mod governance_cmds;
mod index_cmds;
mod llm;
mod mcp_cmd;
mod output;
mod refs_cmd;
mod remote_cmds;
mod report;
mod tree_cmds;
mod watch;

use agents::AgentCommand;
use output::Out;

/// The end of the top-level help: the first three commands a newcomer runs.
const START_HERE: &str = "Start here:
  merkle scan && merkle generate -r        # the tree, and a frame on every file and folder
  merkle search \"where are retries done\"   # the files and functions a task is about
  merkle context \"fix the retry loop\"      # their source within a token budget, for a prompt";

/// merkle: a deterministic context engine for coding agents.
///
/// Scans a workspace into a content-addressed Merkle tree and keeps immutable, attributed
/// context frames on its files and directories.
#[derive(Parser, Debug)]
#[command(
    name = "merkle",
    version,
    propagate_version = true,
    after_help = START_HERE
)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args, Clone, Debug)]
#[command(next_help_heading = "Global options")]
pub(crate) struct Global {
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
    Scan(tree_cmds::ScanArgs),
    /// Give files in scope a frame of a type where it is missing or stale (offline outline
    /// producer), then synthesize their directories bottom-up
    Generate(generate::GenerateArgs),
    /// Show a node record (path, kind and children; with -v its NodeID and content hash) and
    /// the frames a view selects [default: its head frames]
    GetNode(tree_cmds::GetNodeArgs),
    /// Find the files (and in each the definitions, with their lines) a query is about: a
    /// symbol name, a question, an issue's text or a traceback; full-text BM25 fused with
    /// exact definitions, paths, the import graph and priors; rescans first
    Search(index_cmds::SearchArgs),
    /// Gather a task's context within a token budget: the definitions `search --functions`
    /// ranks for it across files, best first, with their files' imports and their classes'
    /// heads (else a file's outline), as Markdown to paste into a prompt (rescans first; never
    /// creates a store)
    Context(index_cmds::ContextArgs),
    /// List a file's imports and the files that import it, resolved in the workspace
    /// (Rust mod/use, Python, JS/TS relative imports, Go packages, C/C++ includes, Java);
    /// rescans first
    Related(index_cmds::RelatedArgs),
    /// Show where a definition is, the definitions that call or name it and those it calls,
    /// from tree-sitter's identifiers resolved by name and imports (no language server: calls
    /// through dynamic dispatch, macros that build names and reflection are not seen); rescans
    /// first
    Refs(refs_cmd::RefsArgs),
    /// Serve the Model Context Protocol over stdio (or Streamable HTTP with --http), for editors
    /// and agents to read and write frames
    ///
    /// Tools: get_node, list_frames, put_frame, synthesize, search, context, related, refs, status (answering the JSON of
    /// `merkle --json`, each within its max_tokens, with a cursor to continue a cut answer);
    /// resources: merkle://node/{path} for every path with frames. The store is opened per
    /// request, so other merkle commands keep working while the server runs.
    Mcp(mcp_cmd::McpArgs),
    /// Show the last scan's root, node and frame counts, and files changed on disk since (writes nothing)
    Status,
    /// Check the store against itself: every id re-derived, every index checked
    Validate,
    /// Remove what no tree, history or memo needs (replaced file versions, caches of old
    /// content or formats), pack values, compact the store's file and merge the search index
    /// into one segment; says what it kept and why
    Gc(tree_cmds::GcArgs),
    /// Keep the tree (and with --generate, one frame type) fresh: rescan after files change,
    /// until Ctrl-C; the store stays free for other commands between rescans
    Watch(watch::WatchArgs),
    /// Register and list agents
    #[command(subcommand)]
    Agent(AgentCommand),
    /// Attach a frame to a node; prints the FrameID
    PutFrame(tree_cmds::PutFrameArgs),
    /// List every frame on a node, oldest first
    ListFrames(tree_cmds::ListFramesArgs),
    /// Show the head frame of one type on a node
    GetHead(tree_cmds::GetHeadArgs),
    /// List the nodes of the last scan under PATH (like `git ls-tree`)
    ListNodes(tree_cmds::ListNodesArgs),
    /// Synthesize a directory's frame from its children's head frames (explicit only)
    Synthesize(context_cmds::SynthesizeArgs),
    /// Recompute the stale frames in scope (frames whose inputs changed), bottom-up
    Regenerate(context_cmds::RegenerateArgs),
    /// Mark a node's frames stale so the next regenerate recomputes them (append-only)
    Invalidate(context_cmds::InvalidateArgs),
    /// List or show the named views of .merkle/views.yaml
    #[command(subcommand)]
    Views(context_cmds::ViewsCommand),
    /// Report the context for CI: root, counts, stale frames by type, and with --since what
    /// changed (nodes added, removed, changed; frames on them) since a root hash or git revision
    Report(report::ReportArgs),
    /// Run an agent on one task until it completes, escalates or is stopped (governed; exit 0
    /// done, 3 escalated, 4 stopped, 5 completed while its last change to the workspace had
    /// failed)
    Run(agent_cmds::RunArgs),
    /// Talk to an agent interactively (governed; asks before calls the policy asks about)
    Chat(agent_cmds::ChatArgs),
    /// List, show and resume the workspace's agent conversations
    #[command(subcommand)]
    Conversations(agent_cmds::ConversationsCommand),
    /// Show or check a governance policy: the intent -> tools matrix, rules, limits and examples
    #[command(subcommand)]
    Policy(governance_cmds::PolicyCommand),
    /// Show or verify the workspace's hash-chained audit log of governance decisions
    #[command(subcommand)]
    Audit(governance_cmds::AuditCommand),
    /// Add, list, remove and initialise PostgreSQL remotes for team-shared context
    #[command(subcommand)]
    Remote(remote_cmds::RemoteCommand),
    /// Send a remote the frames, nodes, memos and agents it lacks (one transaction)
    Push(remote_cmds::PushArgs),
    /// Fetch a remote's frames for the local tree's paths (or --all), each checked against its
    /// id before anything is stored
    Pull(remote_cmds::PullArgs),
    /// Talk to a model: one request from the command line
    #[command(subcommand)]
    Llm(llm::LlmCommand),
    /// The LLM simulator: a fake Anthropic/OpenAI server answering from a script
    #[command(subcommand)]
    Sim(llm::SimCommand),
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

fn main() -> ExitCode {
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
    let result = run(&cli, &mut out);
    calibration::save();
    match result {
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
    // Each crate's error names its own kind; the shared operations (context::ops) carry the
    // store's inside context's, and merkle-generate's context's inside theirs.
    for c in e.chain() {
        let kind = if let Some(r) = c.downcast_ref::<remote::Error>() {
            r.kind()
        } else if let Some(s) = c.downcast_ref::<merkle_store::Error>() {
            s.kind()
        } else if let Some(x) = c.downcast_ref::<context::Error>() {
            x.kind()
        } else if let Some(a) = c.downcast_ref::<agent_loop::Error>() {
            a.kind()
        } else if let Some(g) = c.downcast_ref::<::generate::Error>() {
            g.kind()
        } else {
            continue;
        };
        if kind != "error" {
            return kind;
        }
    }
    "error"
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

/// The workspace at `root` with the store the global options name; its reads ask a running
/// `merkle watch`, if one answers for that store, whether the files changed.
pub(crate) fn workspace(g: &Global, root: &Path) -> Workspace {
    let ws = Workspace::new(
        root,
        OpenOptions {
            store_dir: g.store.clone(),
            engine: g.engine.as_deref().and_then(EngineKind::parse),
            ..OpenOptions::default()
        },
    );
    match ws.store_dir() {
        Ok(dir) => ws.watched_by(std::sync::Arc::new(::watch::Vouching::new(dir))),
        Err(_) => ws,
    }
}

/// The store read-only, or for writing (created where there is none, waiting a little for
/// another process's writer): [`Workspace::reader`], [`Workspace::writer`].
pub(crate) fn open(g: &Global, root: &Path, read_only: bool) -> Result<Store> {
    let ws = workspace(g, root);
    Ok(if read_only {
        ws.reader()?
    } else {
        ws.writer()?
    })
}

/// `read` on the store as the files are on disk at and below workspace path `scope` (`None`:
/// the whole tree; [`Workspace::read_at`]), for a command whose answer has no room to say it
/// is stale (a list): a warning on stderr says so instead.
pub(crate) fn read_or_warn<T>(
    g: &Global,
    root: &Path,
    scope: Option<&str>,
    read: impl FnOnce(&Store) -> Result<T>,
) -> Result<T> {
    workspace(g, root).read_at(scope, |store, stale| {
        if stale && !g.quiet {
            eprintln!(
                "warning: files changed on disk since the last scan, and another process holds \
                 the store for writing: this answers for the last scan's tree"
            );
        }
        read(store)
    })
}

/// jemalloc serves every allocation of the process: Rust's through this, and C's (tree-sitter's
/// parsers, which allocate a node at a time) through its unprefixed `malloc` and `free`, which
/// take the place of glibc's. On glibc's allocator, `generate --recursive --offline` over a
/// million files spent a sixth of its time in `malloc` and `free` on heaps grown to 800 MB;
/// under jemalloc it took 16% less time (392 -> 327 s) and 55 MB less at its peak.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

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
    // The model commands keep their token-count calibration in the workspace's store folder
    // when they run inside one.
    let model_root = if root.as_os_str().is_empty() {
        find_root(g.root.as_deref()).ok()
    } else {
        Some(root.clone())
    };
    calibration::locate(g.store.clone().or(model_root.map(|r| r.join(".merkle"))));
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
        Command::Scan(args) => tree_cmds::scan(g, &root, args, out)?,
        Command::Status => tree_cmds::status(g, &root, out)?,
        Command::Gc(args) => tree_cmds::gc(g, &root, args, out)?,
        Command::Validate => {
            if !tree_cmds::validate(g, &root, out)? {
                return Ok(ExitCode::from(1));
            }
        }
        Command::Agent(cmd) => agents::run(g, &root, cmd, out)?,
        Command::PutFrame(args) => tree_cmds::put_frame(g, &root, args, out)?,
        Command::GetNode(args) => tree_cmds::get_node(g, &root, args, out)?,
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
        Command::Refs(args) => refs_cmd::refs(out, g, &root, args)?,
        Command::Context(args) => index_cmds::context_cmd(out, g, &root, args)?,
        Command::Search(args) => index_cmds::search(out, g, &root, args)?,
        Command::ListFrames(args) => tree_cmds::list_frames(g, &root, args, out)?,
        Command::GetHead(args) => tree_cmds::get_head(g, &root, args, out)?,
        Command::ListNodes(args) => tree_cmds::list_nodes(g, &root, args, out)?,
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn parse_hash(s: &str) -> Result<merkle_store::Hash, String> {
    merkle_store::Hash::from_hex(s).ok_or_else(|| format!("{s:?} is not 64 hex digits"))
}

pub(crate) fn parse_key_value(s: &str) -> Result<(String, String), String> {
    s.split_once('=')
        .filter(|(k, _)| !k.is_empty())
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .ok_or_else(|| format!("{s:?} is not KEY=VALUE"))
}

/// A node path for messages: the root shows as `.`.
pub(crate) fn display_path(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

/// A count that must be at least 1 (`--limit`, `--budget`, `--concurrency`): 0 is a usage
/// error that says so, where clap's own range check would print the type's whole range.
pub(crate) fn at_least_one<T>(s: &str) -> Result<T, String>
where
    T: std::str::FromStr + PartialEq + From<u8>,
    T::Err: std::fmt::Display,
{
    match s.parse::<T>() {
        Ok(n) if n == T::from(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e} (expected a whole number, at least 1)")),
    }
}
