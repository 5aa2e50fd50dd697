//! `merkle watch`: keeps the tree, and with `--generate` one frame type, fresh as files change.
//!
//! File events (the `notify` crate: inotify on Linux) say when to look and where: after a quiet
//! spell (the debounce) the store rescans only the paths the events named
//! (`Store::scan_paths`: their directories are listed again, new directories walked, the rest
//! of the tree taken from the last scan), so a save costs the work of that directory, not a
//! walk of the whole tree. The first rescan, and any after an event queue overflow (notify's
//! `Rescan` flag), a watcher error or an event naming no path, after which events may have
//! been lost, is a full stat scan. No event is missed for good: one that arrives during a
//! rescan schedules the next.
//!
//! With `--generate`, each rescan runs `generate --recursive` over the root, which starts from
//! its checkpoint (`context::generate`): after the first, it looks only at the nodes that
//! changed since the last generation (the changed files and the directories above them,
//! whoever scanned them), so an edit costs its own work rather than a visit of every node;
//! after a generation that left a file without its frame, or once another writer created a
//! frame, the next one looks at the whole tree again.
//!
//! While it runs, watch answers other commands that ask whether its last rescan is still the
//! tree on disk ([`context::ops::watched`]): a search, `context` or `related` that it vouches
//! for reads the store without walking the tree first.
//!
//! The store is opened for writing only for the span of one rescan (open, scan, generate, drop),
//! so between rescans every other `merkle` command works as if watch were not running, and a
//! writer that starts during a rescan waits for it in [`crate::open`]. Plain threads and a std
//! channel carry everything: the watcher's callback, and a signal thread that turns Ctrl-C or
//! SIGTERM into a clean stop once the rescan in flight (if any) has finished.
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use context::ops::watched::Monitor;
use mcp::events::{is_relevant, note_paths, watcher_config};
use merkle_store::{NodeId, ScanOptions, ScanReport};
use notify::{RecursiveMode, Watcher};
use serde_json::{Value, json};

use crate::Global;
use crate::generate::{self, GenerateWith, Generator};
use crate::llm::Shutdown;
use ::generate::{Batching, Counts, Quiet};

/// The `watch` flags.
#[derive(Args, Debug)]
pub(crate) struct WatchArgs {
    /// After each rescan, also give every file and directory a fresh frame, as `merkle generate
    /// --recursive` on the root does, with the offline outline or, given a model (the flags
    /// below, or MERKLE_LLM_MODE), the model: one client for the whole watch
    #[arg(long)]
    generate: bool,
    /// With --generate: what `merkle generate` takes
    #[command(flatten)]
    with: GenerateWith,
    /// Rescan once no file event has come for this long (under a steady stream of events, at
    /// the latest ten times this after the first)
    #[arg(long, value_name = "N", default_value_t = 300)]
    debounce_ms: u64,
    /// Stop after this many rescans, the first one included (for scripts and tests)
    #[arg(value_parser = crate::at_least_one::<u64>, long, value_name = "N")]
    exit_after: Option<u64>,
}

/// What wakes the watch loop.
enum Wake {
    /// A file event that may mean the tree changed (decided once, in the watcher's callback,
    /// so that the loop and the [`Monitor`] count the same changes).
    File(notify::Result<notify::Event>),
    Stop,
}

/// How long to wait before retrying a rescan that found the store held by another writer
/// (after [`crate::open`] has already waited for it).
const IN_USE_RETRY: Duration = Duration::from_secs(1);

pub(crate) fn run(g: &Global, root: &Path, args: &WatchArgs) -> Result<ExitCode> {
    if !args.generate && args.with.model.names_a_model() {
        crate::usage!("a model is for generating frames: add --generate");
    }
    // Built once: a model's client (and its rate limiter) and totals serve every rescan.
    let generator = if args.generate {
        // The writing agent may hold the model to use.
        let stored = args.with.stored_agent(&crate::open(g, root, false)?)?;
        Some(Generator::new(
            &args.with,
            stored.as_ref(),
            g.quiet,
            Batching::Off,
        )?)
    } else {
        None
    };
    let (tx, rx) = mpsc::channel();
    stop_on_signal(
        tx.clone(),
        generator.as_ref().and_then(|g| g.frames.interrupt()),
    )?;
    // The store's own writes are not changes. A store in a folder of its own outside
    // `.merkle` is known by its path.
    let store_dir = crate::workspace(g, root).store_dir()?;
    let store_dir = store_dir.canonicalize().unwrap_or(store_dir);
    // Counts changes from before the first scan, and once the store is there answers readers
    // that ask whether the last rescan is still the tree on disk.
    let mut monitor = Monitor::new(&store_dir);
    // Watching starts before the first scan, so that nothing changed during it goes unseen.
    let mut watcher = start_watcher(root, &store_dir, monitor.observer(), tx)?;
    watcher
        .watch(root, RecursiveMode::Recursive)
        .with_context(|| format!("watching {} for changes", root.display()))?;

    // The first rescan's errors (an agent without the synthesis role, a store held for long)
    // end the command, where they are seen; later ones are reported and retried.
    let scanned = rescan(g, root, generator.as_ref(), None)?;
    monitor.rescanned(0, scanned);
    // Only a store inside the watched tree: its cookies must come back as file events.
    if store_dir.starts_with(root)
        && let Err(e) = monitor.serve()
        && !g.quiet
    {
        eprintln!("warning: other commands will check the files themselves: {e}");
    }
    let mut pending = Pending {
        touched: Some(BTreeSet::new()),
        due: None,
        first_event: None,
        in_use_reported: false,
        rescans: 1,
    };
    let debounce = Duration::from_millis(args.debounce_ms);
    while args.exit_after.is_none_or(|n| pending.rescans < n) {
        let wake = match pending.due {
            None => rx.recv().ok(),
            Some(due_at) => match rx.recv_timeout(due_at.saturating_duration_since(Instant::now()))
            {
                Ok(wake) => Some(wake),
                Err(RecvTimeoutError::Disconnected) => None,
                Err(RecvTimeoutError::Timeout) => {
                    if pending.rescan(g, root, generator.as_ref(), &mut monitor) {
                        continue;
                    }
                    break;
                }
            },
        };
        match wake {
            None | Some(Wake::Stop) => break,
            Some(Wake::File(result)) => {
                monitor.taken();
                pending.noted(g, &result, root, debounce);
            }
        }
    }
    if let Some(path) = generator.map(Generator::finish).transpose()?.flatten() {
        eprintln!("recorded to {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Starts the file watcher whose events wake the loop through `tx`, each change counted by
/// `observer` first. Symlinks are not followed, and reads are not events (`watcher_config`);
/// a reader's cookie and the store's own writes never wake the loop.
fn start_watcher(
    root: &Path,
    store_dir: &Path,
    observer: context::ops::watched::Observer,
    tx: Sender<Wake>,
) -> Result<notify::RecommendedWatcher> {
    let watched = (root.to_path_buf(), store_dir.to_path_buf());
    notify::RecommendedWatcher::new(
        move |event: notify::Result<notify::Event>| {
            let change = match &event {
                // A reader's cookie: every event before it has been counted.
                Ok(e) if e.paths.iter().any(|p| observer.cookie(p)) => return,
                Ok(e) => is_relevant(e, &watched.0, &watched.1),
                Err(_) => true,
            };
            if !change {
                return;
            }
            observer.changed();
            // The loop only stops listening when watch ends.
            let _ = tx.send(Wake::File(event));
        },
        watcher_config(),
    )
    .context("starting the file watcher")
}

/// The watch loop's state between wakes.
struct Pending {
    /// The paths the events since the last rescan named; `None`: look at everything (an event
    /// named none, or events may have been lost).
    touched: Option<BTreeSet<String>>,
    /// When the next rescan is due, and the first event it answers (a steady stream of events
    /// must not put it off forever).
    due: Option<Instant>,
    first_event: Option<Instant>,
    in_use_reported: bool,
    /// Rescans so far, the first one included.
    rescans: u64,
}

impl Pending {
    /// The rescan that is due; `false` when the loop must end (stdout was closed). A store
    /// held by another writer is retried after [`IN_USE_RETRY`]; other errors are reported
    /// and the next change tries again.
    fn rescan(
        &mut self,
        g: &Global,
        root: &Path,
        generator: Option<&Generator>,
        monitor: &mut Monitor,
    ) -> bool {
        (self.due, self.first_event) = (None, None);
        let paths: Option<Vec<String>> = self.touched.as_ref().map(|t| t.iter().cloned().collect());
        let taken = monitor.changes_taken();
        match rescan(g, root, generator, paths.as_deref()) {
            Ok(scanned) => {
                monitor.rescanned(taken, scanned);
                self.rescans += 1;
                self.in_use_reported = false;
                self.touched = Some(BTreeSet::new());
            }
            Err(e) if is_in_use(&e) => {
                if !self.in_use_reported && !g.quiet {
                    eprintln!("warning: {e:#}; rescanning once it is free");
                }
                self.in_use_reported = true;
                self.due = Some(Instant::now() + IN_USE_RETRY);
            }
            Err(e) if is_closed_stdout(&e) => return false,
            Err(e) => eprintln!("error: {e:#}"),
        }
        true
    }

    /// A file event: its paths noted (all of them on a watcher's error), and the rescan put
    /// off by `debounce`, at most ten times that after the first event.
    fn noted(
        &mut self,
        g: &Global,
        result: &notify::Result<notify::Event>,
        root: &Path,
        debounce: Duration,
    ) {
        match result {
            Err(e) => {
                if !g.quiet {
                    eprintln!("warning: file watcher: {e}; rescanning everything");
                }
                self.touched = None;
            }
            Ok(event) => note_paths(&mut self.touched, event, root),
        }
        let now = Instant::now();
        let first = *self.first_event.get_or_insert(now);
        self.due = Some((now + debounce).min(first + debounce * 10));
    }
}

/// Sends [`Wake::Stop`] on Ctrl-C or SIGTERM, from a thread of its own, after setting
/// `interrupt` (a model generation's: calls not yet made are not made, those in flight finish
/// and their frames are put); a second one ends the process at once, without waiting for the
/// rescan in flight. That loses nothing but the rescan's unfinished work: a scan is one
/// transaction, and generated frames are committed in chunks.
fn stop_on_signal(tx: Sender<Wake>, interrupt: Option<Arc<AtomicBool>>) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the signal listener")?;
    let shutdown = {
        let _inside = runtime.enter();
        Shutdown::listen()?
    };
    std::thread::Builder::new()
        .name("watch-signals".to_owned())
        .spawn(move || {
            runtime.block_on(async {
                shutdown.wait().await;
                if let Some(flag) = &interrupt {
                    flag.store(true, Ordering::SeqCst);
                }
                let _ = tx.send(Wake::Stop);
                if let Ok(again) = Shutdown::listen() {
                    again.wait().await;
                    std::process::exit(130);
                }
            });
        })
        .context("starting the signal listener")?;
    Ok(())
}

/// One rescan: open the store for writing, scan (only what `touched` can have changed, when
/// given), generate, print one line, and let the store go. Returns the root it scanned.
fn rescan(
    g: &Global,
    root: &Path,
    generator: Option<&Generator>,
    touched: Option<&[String]>,
) -> Result<NodeId> {
    let store = crate::open(g, root, false)?;
    let report = match touched {
        Some(paths) => store.scan_paths(paths, &ScanOptions::default())?,
        None => store.scan(&ScanOptions::default())?,
    };
    // Over the whole tree, from generate's checkpoint: after the first, a rescan's generation
    // looks only at the nodes that changed since the last one.
    let generated = match generator {
        Some(generator) => {
            let calls = generator.frames.stats().map(|s| (s.calls(), s.usage()));
            let generated = generator
                .frames
                .run(&store, &store.resolve("")?, true, &Quiet)?;
            Some((generated, calls, generator))
        }
        None => None,
    };
    drop(store);

    if !g.quiet {
        for w in &report.warnings {
            eprintln!("warning: {w}");
        }
        for f in generated.iter().flat_map(|(r, _, _)| &r.failed) {
            eprintln!("warning: not generated: {f}");
        }
    }
    let generated = match generated {
        Some((done, before, generator)) => {
            let counts = Counts::new(&done, generator.frames.producer_id());
            let (mut json, mut text) = (counts.json(), generate::counts_text(&counts));
            // This rescan's model calls: the totals now, less those before it.
            if let (Some(stats), Some((calls, usage))) = (generator.frames.stats(), before) {
                let (calls, input, output) = (
                    stats.calls() - calls,
                    stats.usage().input_tokens - usage.input_tokens,
                    stats.usage().output_tokens - usage.output_tokens,
                );
                json["llm"] = json!({
                    "calls": calls,
                    "input_tokens": input,
                    "output_tokens": output,
                });
                text.push_str(&format!(", {}", crate::output::count(calls, "model call")));
            }
            Some((json, text))
        }
        _ => None,
    };
    let line = if g.json {
        json!({
            "root": report.root.to_hex(),
            "changed": report.changed(),
            "files": report.files,
            "dirs": report.dirs,
            "generated": generated.map_or(Value::Null, |(json, _)| json),
        })
        .to_string()
    } else {
        text_line(&report, generated.map(|(_, text)| text))
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .context("writing to standard output")?;
    Ok(report.root)
}

fn text_line(r: &ScanReport, generated: Option<String>) -> String {
    let hex = r.root.to_hex();
    let mut line = format!(
        "root {}: {} changed ({}, {})",
        &hex[..12],
        r.changed(),
        crate::output::count(r.files, "file"),
        crate::output::count(r.dirs, "dir")
    );
    if let Some(text) = generated {
        line.push_str("; ");
        line.push_str(&text);
    }
    line
}

fn is_in_use(e: &anyhow::Error) -> bool {
    matches!(
        e.downcast_ref::<merkle_store::Error>(),
        Some(merkle_store::Error::StoreInUse { .. })
    )
}

/// Whether whoever read our lines has gone (`merkle watch | head -1`): a reason to stop, not an
/// error.
fn is_closed_stdout(e: &anyhow::Error) -> bool {
    e.downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}
