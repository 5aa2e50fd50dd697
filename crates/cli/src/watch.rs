//! `merkle watch`: keeps the tree, and with `--generate` one frame type, fresh as files change.
//!
//! The loop is merkle-watch's ([`watch::Looping`]): file events say when to look and where,
//! and after a quiet spell (the debounce) this rescans only the paths the events named
//! (`Store::scan_paths`: their directories are listed again, new directories walked, the rest
//! of the tree taken from the last scan), so a save costs the work of that directory, not a
//! walk of the whole tree. The first rescan, and any after a lost event, is a full stat scan.
//!
//! With `--generate`, each rescan runs `generate --recursive` over the root, which starts from
//! its checkpoint (`context::generate`): after the first, it looks only at the nodes that
//! changed since the last generation (the changed files and the directories above them,
//! whoever scanned them), so an edit costs its own work rather than a visit of every node;
//! after a generation that left a file without its frame, or once another writer created a
//! frame, the next one looks at the whole tree again.
//!
//! While it runs, watch answers other commands that ask whether its last rescan is still the
//! tree on disk ([`watch::vouch`]): a read that it vouches for reads the store without walking
//! the tree first. It answers their searches too ([`watch::asked`]), on a workspace whose
//! tree's listing and index it keeps and makes ready after each rescan.
//!
//! The store is opened for writing only for the span of one rescan (open, scan, generate, drop),
//! so between rescans every other `merkle` command works as if watch were not running, and a
//! writer that starts during a rescan waits for it in [`crate::open`]. A signal thread turns
//! Ctrl-C or SIGTERM into a clean stop once the rescan in flight (if any) has finished.
use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ::watch::{Failed, Looping, Said, Stopper};
use anyhow::{Context, Result};
use clap::Args;
use merkle_store::{NodeId, ScanOptions, ScanReport};
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
    // The store's own writes are not changes. A store in a folder of its own outside
    // `.merkle` is known by its path. Watching starts before the first scan, so that nothing
    // changed during it goes unseen.
    let store_dir = crate::workspace(g, root).store_dir()?;
    let mut looping = Looping::start(root, &store_dir)?;
    // Searches asked by other commands, answered on a workspace whose tree's listing and
    // index are kept from one to the next, through the freshness rule they would follow. One
    // at a time with the rescans and the making ready of the next search's listing, so that
    // none finds the store's writer held by another of this process.
    let turn = Arc::new(Mutex::new(()));
    let answering = crate::workspace(g, root);
    let (preparing, asked_turn) = (answering.clone(), Arc::clone(&turn));
    looping.answer_asked(move |asked| {
        let _turn = asked_turn.lock().unwrap_or_else(|e| e.into_inner());
        context::ops::served_search(&answering, &asked["search"])?.ok()
    });
    looping.on_rescanned(prepare_searches_apart(
        preparing,
        Arc::clone(&turn),
        store_dir.clone(),
    ));
    if let (Some(warning), false) = (looping.warning(), g.quiet) {
        eprintln!("warning: {warning}");
    }
    stop_on_signal(
        looping.stopper(),
        generator.as_ref().and_then(|g| g.frames.interrupt()),
    )?;
    // The first rescan's errors (an agent without the synthesis role, a store held for long)
    // end the command, where they are seen; later ones are reported and retried.
    let first = rescan(g, root, generator.as_ref(), None)?;
    let opts = ::watch::Options {
        debounce: Duration::from_millis(args.debounce_ms),
        exit_after: args.exit_after,
    };
    let say = |said: Said| match said {
        Said::Warning(w) if !g.quiet => eprintln!("warning: {w}"),
        Said::Warning(_) => {}
        Said::Error(e) => eprintln!("error: {e}"),
    };
    looping.run(first, &opts, &say, |touched| {
        let _turn = turn.lock().unwrap_or_else(|e| e.into_inner());
        rescan(g, root, generator.as_ref(), touched).map_err(|e| {
            if is_in_use(&e) {
                Failed::InUse(format!("{e:#}"))
            } else if is_closed_stdout(&e) {
                Failed::Closed
            } else {
                Failed::Other(format!("{e:#}"))
            }
        })
    });
    if let Some(path) = generator.map(Generator::finish).transpose()?.flatten() {
        eprintln!("recorded to {}", path.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// How long after a rescan the next search's listing and index are made ready.
const PREPARE_AFTER: Duration = Duration::from_secs(1);

/// What the loop calls after each rescan: the next search's listing and index made ready on a
/// thread of its own ([`context::ops::prepare_searches`]), one at a time, in `turn`, and only
/// while the watch vouches for the tree (else the next search rescans, and makes them).
fn prepare_searches_apart(
    ws: context::ops::Workspace,
    turn: Arc<Mutex<()>>,
    store_dir: std::path::PathBuf,
) -> impl Fn() + Send + 'static {
    let busy = Arc::new(AtomicBool::new(false));
    move || {
        if busy.swap(true, Ordering::SeqCst) {
            return;
        }
        let (ws, turn, dir) = (ws.clone(), Arc::clone(&turn), store_dir.clone());
        let done = Idle(Arc::clone(&busy));
        // A thread that does not start drops `done`, and the next rescan tries again.
        let _ = std::thread::Builder::new()
            .name("watch-prepare".to_owned())
            .spawn(move || {
                let _done = done;
                // After what the rescan left to be freed on the pool (a million files' walk):
                // the listing made beside it would hold both at once.
                std::thread::sleep(PREPARE_AFTER);
                let _turn = turn.lock().unwrap_or_else(|e| e.into_inner());
                if ::watch::vouch::vouched(&dir).is_some() {
                    // A failure here is the next search's to meet and say.
                    let _ = context::ops::prepare_searches(&ws);
                }
            });
    }
}

/// Marks the making ready of searches done however its thread ends.
struct Idle(Arc<AtomicBool>);

impl Drop for Idle {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// Stops the loop on Ctrl-C or SIGTERM, from a thread of its own, after setting
/// `interrupt` (a model generation's: calls not yet made are not made, those in flight finish
/// and their frames are put); a second one ends the process at once, without waiting for the
/// rescan in flight. That loses nothing but the rescan's unfinished work: a scan is one
/// transaction, and generated frames are committed in chunks.
fn stop_on_signal(stopper: Stopper, interrupt: Option<Arc<AtomicBool>>) -> Result<()> {
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
                stopper.stop();
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
