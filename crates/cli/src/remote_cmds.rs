//! `merkle remote`, `merkle push` and `merkle pull`: team-shared context on PostgreSQL.
//!
//! Glue over the `remote` crate: the remotes file lives in the store's folder, the environment
//! is read here and handed down as a lookup, progress goes to stderr, and no password is ever
//! printed (every URL shown is redacted).
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::output::{Out, count};
use crate::{Global, open};

#[derive(Subcommand, Debug)]
pub(crate) enum RemoteCommand {
    /// Add a PostgreSQL remote (kept in <store>/remotes.json, readable by you only)
    ///
    /// The password may be in the URL, or come from PGPASSWORD or ~/.pgpass; the variable
    /// MERKLE_REMOTE_<NAME>_URL replaces the stored URL for one run (keep CI's secret there).
    Add {
        /// The remote's name (letters, digits, '_' and '-')
        name: String,
        /// A postgres:// URL, e.g. postgres://user@db.example.com:5432/team?sslmode=require
        url: String,
        /// The schema that holds merkle's tables
        #[arg(long, default_value = remote::config::DEFAULT_SCHEMA)]
        schema: String,
    },
    /// List the remotes (passwords redacted)
    List,
    /// Forget a remote (nothing on the server changes)
    Remove {
        /// The remote's name
        name: String,
    },
    /// Create the remote's schema and tables where missing, and grant roles access (run by a
    /// role that may create the schema; safe to run again)
    Init {
        /// The remote [default: the only one, or origin]
        name: Option<String>,
        /// A database role that may pull (SELECT); repeatable
        #[arg(long, value_name = "ROLE")]
        reader: Vec<String>,
        /// A database role that may push and pull (SELECT, INSERT); repeatable
        #[arg(long, value_name = "ROLE")]
        writer: Vec<String>,
    },
}

#[derive(Args, Debug)]
pub(crate) struct PushArgs {
    /// The remote [default: the only one, or origin]
    name: Option<String>,
    /// Compare every frame with the remote, not only those written since the last push to it
    #[arg(long)]
    full: bool,
}

#[derive(Args, Debug)]
pub(crate) struct PullArgs {
    /// The remote [default: the only one, or origin]
    name: Option<String>,
    /// Fetch every frame of the remote, not only those at the paths of the local tree
    #[arg(long)]
    all: bool,
}

fn env(key: &str) -> Option<String> {
    std::env::var(key).ok()
}

fn store_dir(g: &Global, root: &Path) -> PathBuf {
    g.store.clone().unwrap_or_else(|| root.join(".merkle"))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    // Two workers: the store is called between awaits, and the connection's task must keep
    // running on the other.
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")
}

pub(crate) fn run_remote(
    g: &Global,
    root: &Path,
    cmd: &RemoteCommand,
    out: &mut Out,
) -> Result<ExitCode> {
    match cmd {
        RemoteCommand::Add { name, url, schema } => {
            // Opening creates the store folder (and its .gitignore) in a new workspace.
            let store = open(g, root, false)?;
            let mut remotes = remote::Remotes::load(store.dir())?;
            remotes.add(name, url, schema)?;
            let shown = remote::config::redact(url);
            out.value(
                json!({"name": name, "url": shown, "schema": schema}),
                format!("remote {name} added: {shown} (schema {schema})"),
            );
        }
        RemoteCommand::List => {
            let remotes = remote::Remotes::load(&store_dir(g, root))?;
            let mut json = Vec::new();
            let mut text = Vec::new();
            for (name, entry) in remotes.entries() {
                let from_env = env(&remote::config::env_var(name)).is_some_and(|v| !v.is_empty());
                let url = remote::config::redact(&entry.url);
                json.push(json!({
                    "name": name,
                    "url": url,
                    "schema": entry.schema,
                    "url_from_env": from_env,
                }));
                let note = if from_env {
                    format!(" (overridden by {})", remote::config::env_var(name))
                } else {
                    String::new()
                };
                text.push(format!("{name}\t{url}\t{}{note}", entry.schema));
            }
            out.value(serde_json::Value::Array(json), text.join("\n"));
        }
        RemoteCommand::Remove { name } => {
            let mut remotes = remote::Remotes::load(&store_dir(g, root))?;
            remotes.remove(name)?;
            out.value(json!({"name": name}), format!("remote {name} removed"));
        }
        RemoteCommand::Init {
            name,
            reader,
            writer,
        } => {
            let remotes = remote::Remotes::load(&store_dir(g, root))?;
            let target = remotes.resolve(name.as_deref(), &env)?;
            let report = runtime()?.block_on(async {
                let mut session = remote::connect(&target, &env).await?;
                remote::schema::init(&mut session, reader, writer).await
            })?;
            out.value(
                json!({
                    "name": target.name,
                    "schema": target.schema,
                    "remote_id": report.id,
                    "readers": report.readers,
                    "writers": report.writers,
                }),
                format!(
                    "remote {} ready: schema {} (id {})",
                    target.name, target.schema, report.id
                ),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A progress display on stderr for a push or pull (hidden with -q, --json, or no terminal).
fn progress_bar(g: &Global, verb: &'static str) -> Option<indicatif::ProgressBar> {
    if g.quiet || g.json {
        return None;
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} {pos}/{len}")
            .expect("the template is valid"),
    );
    bar.set_message(verb);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(bar)
}

fn tick(bar: &indicatif::ProgressBar, transferring: &'static str, p: remote::Progress) {
    match p {
        remote::Progress::Comparing { done, total } => {
            bar.set_message("comparing ids");
            bar.set_length(total);
            bar.set_position(done);
        }
        remote::Progress::Transferring { done, total } => {
            bar.set_message(transferring);
            bar.set_length(total);
            bar.set_position(done);
        }
        remote::Progress::Committing => bar.set_message("committing"),
    }
}

/// What a push or pull moved, as `--json` shows it.
fn moved_json(m: remote::Moved) -> serde_json::Value {
    json!({"frames": m.frames, "nodes": m.nodes, "memos": m.memos, "agents": m.agents})
}

/// `pushed 3 frames to origin: 2 nodes, 1 memo, 1 agent (0 already there, 0.05s)`.
fn moved_text(verb: &str, m: remote::Moved, remote: &str, skipped: u64, seconds: f64) -> String {
    let (prep, place) = if verb == "pushed" {
        ("to", "there")
    } else {
        ("from", "here")
    };
    format!(
        "{verb} {} {prep} {remote}: {}, {}, {} ({skipped} already {place}, {seconds:.2}s)",
        count(m.frames, "frame"),
        count(m.nodes, "node"),
        count(m.memos, "memo"),
        count(m.agents, "agent"),
    )
}

/// Connects to `target` and runs `transfer` on the session, with a progress display on stderr
/// while it runs.
fn transfer<R>(
    g: &Global,
    target: &remote::Remote,
    verb: &'static str,
    moving: &'static str,
    transfer: impl AsyncFnOnce(&mut remote::Session, remote::OnProgress<'_>) -> remote::Result<R>,
) -> Result<R> {
    let bar = progress_bar(g, verb);
    let on_progress = |p| {
        if let Some(b) = &bar {
            tick(b, moving, p);
        }
    };
    let result = runtime()?.block_on(async {
        let mut session = remote::connect(target, &env).await?;
        transfer(&mut session, remote::OnProgress(Some(&on_progress))).await
    });
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    Ok(result?)
}

pub(crate) fn push(g: &Global, root: &Path, args: &PushArgs, out: &mut Out) -> Result<ExitCode> {
    let store = open(g, root, false)?;
    let remotes = remote::Remotes::load(store.dir())?;
    let target = remotes.resolve(args.name.as_deref(), &env)?;
    let report = transfer(
        g,
        &target,
        "pushing",
        "sending frames",
        async |session, progress| {
            let opts = remote::PushOptions {
                full: args.full,
                progress,
            };
            remote::push(&store, session, &opts).await
        },
    )?;
    out.value(
        json!({
            "remote": target.name,
            "pushed": moved_json(report.pushed),
            "skipped": report.skipped,
            "compared": report.compared,
            "bytes": report.bytes,
            "seconds": report.seconds,
        }),
        moved_text(
            "pushed",
            report.pushed,
            &target.name,
            report.skipped,
            report.seconds,
        ),
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn pull(g: &Global, root: &Path, args: &PullArgs, out: &mut Out) -> Result<ExitCode> {
    let store = open(g, root, false)?;
    let remotes = remote::Remotes::load(store.dir())?;
    let target = remotes.resolve(args.name.as_deref(), &env)?;
    // The candidates are the frames at the local tree's paths (and the frames are shown on
    // it): the tree as it is now.
    store.scan(&merkle_store::ScanOptions::default())?;
    let report = transfer(
        g,
        &target,
        "pulling",
        "receiving frames",
        async |session, progress| {
            let opts = remote::PullOptions {
                all: args.all,
                progress,
            };
            remote::pull(&store, session, &opts).await
        },
    )?;
    out.value(
        json!({
            "remote": target.name,
            "pulled": moved_json(report.pulled),
            "skipped": report.skipped,
            "bytes": report.bytes,
            "seconds": report.seconds,
        }),
        moved_text(
            "pulled",
            report.pulled,
            &target.name,
            report.skipped,
            report.seconds,
        ),
    );
    Ok(ExitCode::SUCCESS)
}
