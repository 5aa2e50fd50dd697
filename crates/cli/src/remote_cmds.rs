//! `merkle remote`, `merkle push` and `merkle pull`: team-shared context on PostgreSQL.
//!
//! Glue over the `remote` crate: the remotes file lives in the store's folder, the environment
//! is read here and handed down as a lookup, progress goes to stderr, and no password is ever
//! printed (every URL shown is redacted).
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;

use crate::output::{Out, count};
use crate::{Global, open};

#[derive(Subcommand, Debug)]
pub(crate) enum RemoteCommand {
    /// Add a PostgreSQL remote (kept in <store>/remotes.json, without any password)
    ///
    /// The password comes from PGPASSWORD or ~/.pgpass (PGPASSFILE); a password in the URL is
    /// left out of the file. The variable MERKLE_REMOTE_<NAME>_URL replaces the stored URL for
    /// one run, password and all (keep CI's secret there).
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
    /// Check every row of the remote as a pull would, and list the bad ones (exit 1 if any)
    Check {
        /// The remote [default: the only one, or origin]
        name: Option<String>,
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
    /// Say what would be pushed, and push nothing
    #[arg(long)]
    dry_run: bool,
}

#[derive(Args, Debug)]
pub(crate) struct PullArgs {
    /// The remote [default: the only one, or origin]
    name: Option<String>,
    /// Fetch every frame of the remote, not only those at the paths of the local tree
    #[arg(long)]
    all: bool,
    /// Store the verified rows and name the ones that fail a check, instead of refusing the
    /// whole pull (see `merkle remote check`)
    #[arg(long)]
    skip_invalid: bool,
    /// Fetch and check, say what would be stored, and store nothing
    #[arg(long)]
    dry_run: bool,
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
            let left_out = remotes.add(name, url, schema)?;
            remote::forget_pushed(&store, name)?;
            let (stored, _) = remote::config::without_password(url);
            if left_out && !g.quiet {
                eprintln!(
                    "note: the password in the URL was not stored; put it in ~/.pgpass \
                     (host:port:database:user:password) or PGPASSWORD, or keep the whole URL in \
                     {}",
                    remote::config::env_var(name)
                );
            }
            out.value(
                json!({"name": name, "url": stored, "schema": schema, "password_left_out": left_out}),
                format!("remote {name} added: {stored} (schema {schema})"),
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
        RemoteCommand::Check { name } => return check_remote(g, root, name.as_deref(), out),
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
                    "created_roles": report.created,
                }),
                init_text(&target, &report),
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `merkle remote check`: the remote's rows read and verified; exit 1 where some are bad.
fn check_remote(g: &Global, root: &Path, name: Option<&str>, out: &mut Out) -> Result<ExitCode> {
    let remotes = remote::Remotes::load(&store_dir(g, root))?;
    let target = remotes.resolve(name, &env)?;
    let report = transfer(
        g,
        &target,
        "checking",
        "checking frames",
        async |session, progress| remote::check(session, progress).await,
    )?;
    let bad: Vec<_> = report
        .bad
        .iter()
        .map(|b| json!({"table": b.table, "item": b.item, "reason": b.reason}))
        .collect();
    let mut text = format!(
        "checked remote {}: {}, {}, {}, {} ({:.2}s): ",
        target.name,
        count(report.frames, "frame"),
        count(report.nodes, "node"),
        count(report.memos, "memo"),
        count(report.agents, "agent"),
        report.seconds
    );
    if report.bad.is_empty() {
        text.push_str("all good");
    } else {
        text.push_str(&format!(
            "{} (a pull refuses them; `merkle pull --skip-invalid` leaves them out):",
            count(report.bad.len() as u64, "bad row")
        ));
        for b in &report.bad {
            text.push_str(&format!("\n  {}: {}: {}", b.table, b.item, b.reason));
        }
    }
    out.value(
        json!({
            "remote": target.name,
            "frames": report.frames,
            "nodes": report.nodes,
            "memos": report.memos,
            "agents": report.agents,
            "bad": bad,
            "seconds": report.seconds,
        }),
        text,
    );
    Ok(if report.bad.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// What `remote init` says: the remote, and each role it had to create.
fn init_text(target: &remote::Remote, report: &remote::schema::InitReport) -> String {
    let mut text = format!(
        "remote {} ready: schema {} (id {})",
        target.name, target.schema, report.id
    );
    for role in &report.created {
        text.push_str(&format!(
            "\ncreated role {role} (NOLOGIN: `GRANT {role} TO USER` gives a user its privileges)"
        ));
    }
    text
}

/// Where a push, pull or check is, on stderr: a bar on a terminal; on anything else (a CI
/// log), once the work has run a few seconds (at once with -v), a line when the phase changes
/// and at most every few seconds within one. Nothing with -q or --json.
enum Progress {
    Bar(indicatif::ProgressBar),
    Lines {
        verb: &'static str,
        /// When lines start.
        from: std::time::Instant,
        last: std::sync::Mutex<Option<(&'static str, std::time::Instant)>>,
    },
}

/// How often a progress line is written within one phase, and how long work runs before the
/// first (a short push says only what it did).
const LINE_EVERY: Duration = Duration::from_secs(5);
const LINE_AFTER: Duration = Duration::from_secs(2);

fn progress(g: &Global, verb: &'static str) -> Option<Progress> {
    if g.quiet || g.json {
        return None;
    }
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return Some(Progress::Lines {
            verb,
            from: std::time::Instant::now()
                + if g.verbose {
                    Duration::ZERO
                } else {
                    LINE_AFTER
                },
            last: std::sync::Mutex::new(None),
        });
    }
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} {pos}/{len}")
            .expect("the template is valid"),
    );
    bar.set_message(verb);
    bar.enable_steady_tick(std::time::Duration::from_millis(120));
    Some(Progress::Bar(bar))
}

impl Progress {
    fn tick(&self, transferring: &'static str, p: remote::Progress) {
        let (phase, done, total) = match p {
            remote::Progress::Comparing { done, total } => ("comparing ids", done, total),
            remote::Progress::Transferring { done, total } => (transferring, done, total),
            remote::Progress::Committing => ("committing", 0, 0),
        };
        match self {
            Progress::Bar(bar) => {
                bar.set_message(phase);
                if total > 0 {
                    bar.set_length(total);
                    bar.set_position(done);
                }
            }
            Progress::Lines { verb, from, last } => {
                let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
                let now = std::time::Instant::now();
                let due = now >= *from
                    && match *last {
                        Some((p, at)) => p != phase || now - at >= LINE_EVERY || done == total,
                        None => true,
                    };
                if due {
                    *last = Some((phase, now));
                    if total > 0 {
                        eprintln!("{verb}: {phase} {done}/{total}");
                    } else {
                        eprintln!("{verb}: {phase}");
                    }
                }
            }
        }
    }

    fn finish(self) {
        if let Progress::Bar(bar) = self {
            bar.finish_and_clear();
        }
    }
}

/// What a push or pull moved, as `--json` shows it.
fn moved_json(m: remote::Moved) -> serde_json::Value {
    json!({"frames": m.frames, "nodes": m.nodes, "memos": m.memos, "agents": m.agents})
}

/// `pushed 3 frames to origin: 2 nodes, 1 memo, 1 agent (0 already there, 0.05s)`.
fn moved_text(verb: &str, m: remote::Moved, remote: &str, skipped: u64, seconds: f64) -> String {
    let (prep, place) = if verb.ends_with("push") || verb == "pushed" {
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
    let shown = progress(g, verb);
    let on_progress = |p| {
        if let Some(s) = &shown {
            s.tick(moving, p);
        }
    };
    let result = runtime()?.block_on(async {
        let mut session = remote::connect(target, &env).await?;
        transfer(&mut session, remote::OnProgress(Some(&on_progress))).await
    });
    if let Some(s) = shown {
        s.finish();
    }
    Ok(result?)
}

pub(crate) fn push(g: &Global, root: &Path, args: &PushArgs, out: &mut Out) -> Result<ExitCode> {
    // The remote first: a command that has none to talk to must not create a store.
    let target = remote::Remotes::load(&store_dir(g, root))?.resolve(args.name.as_deref(), &env)?;
    let store = open(g, root, args.dry_run)?;
    let report = transfer(
        g,
        &target,
        "pushing",
        "sending frames",
        async |session, progress| {
            let opts = remote::PushOptions {
                full: args.full,
                dry_run: args.dry_run,
                progress,
            };
            remote::push(&store, session, &opts).await
        },
    )?;
    out.value(
        json!({
            "remote": target.name,
            "dry_run": args.dry_run,
            "pushed": moved_json(report.pushed),
            "skipped": report.skipped,
            "compared": report.compared,
            "bytes": report.bytes,
            "seconds": report.seconds,
        }),
        moved_text(
            if args.dry_run { "would push" } else { "pushed" },
            report.pushed,
            &target.name,
            report.skipped,
            report.seconds,
        ),
    );
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn pull(g: &Global, root: &Path, args: &PullArgs, out: &mut Out) -> Result<ExitCode> {
    let target = remote::Remotes::load(&store_dir(g, root))?.resolve(args.name.as_deref(), &env)?;
    // The candidates are the frames at the local tree's paths (and the frames are shown on
    // it): the tree as it is now, for a dry run too, so that it says what the pull will do
    // (the scan writes the tree where the disk changed, never a pulled row).
    let store = if args.dry_run {
        fresh_reader(g, root)?
    } else {
        let store = open(g, root, false)?;
        store.scan(&merkle_store::ScanOptions::default())?;
        store
    };
    let report = transfer(
        g,
        &target,
        "pulling",
        "receiving frames",
        async |session, progress| {
            let opts = remote::PullOptions {
                all: args.all,
                skip_invalid: args.skip_invalid,
                dry_run: args.dry_run,
                progress,
            };
            remote::pull(&store, session, &opts).await
        },
    )?;
    out.value(
        json!({
            "remote": target.name,
            "dry_run": args.dry_run,
            "pulled": moved_json(report.pulled),
            "skipped": report.skipped,
            "refused": report.refused.iter().map(|r| json!({"item": r.item, "reason": r.reason})).collect::<Vec<_>>(),
            "bytes": report.bytes,
            "seconds": report.seconds,
        }),
        {
            let mut text = moved_text(
                if args.dry_run { "would pull" } else { "pulled" },
                report.pulled,
                &target.name,
                report.skipped,
                report.seconds,
            );
            if !report.refused.is_empty() {
                text.push_str(&format!(
                    "\nleft out {} that failed a check:",
                    count(report.refused.len() as u64, "row")
                ));
                for r in &report.refused {
                    text.push_str(&format!("\n  {}: {}", r.item, r.reason));
                }
            }
            text
        },
    );
    Ok(ExitCode::SUCCESS)
}

/// The store read-only, for the tree as it is on disk: the freshness rule scans in what
/// changed (an unchanged tree is not written at all), and a never-scanned copy is scanned.
fn fresh_reader(g: &Global, root: &Path) -> Result<merkle_store::Store> {
    let ws = crate::workspace(g, root);
    if ws.read(|store, _| Ok::<_, context::Error>(store.root()?.is_none()))? {
        ws.scan(&merkle_store::ScanOptions::default())?;
    }
    Ok(ws.reader()?)
}
