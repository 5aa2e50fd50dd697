//! `merkle generate`, and the generation `merkle watch --generate` runs after each rescan: the
//! flags that choose a producer and a policy, the [`Generator`] built from them once (with a
//! model: its client, rate limiter and running totals), and the report.
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};
use clap::Args;
use context::{Concat, FrameProducer, Map, Outline, Summary, SynthesisPolicy};
use merkle_store::Store;
use serde_json::{Value, json};

use agent_loop::batch::BatchQueue;
use agent_loop::producer::{
    DIR_TEMPLATE, FILE_TEMPLATE, LlmProducer, LlmSettings, LlmStats, LlmSynthesis,
};

use crate::output::Out;
use crate::resolve;

mod batch;
use batch::{dry_run, generate_batched};

/// What `generate` covers, and how.
#[derive(Args, Debug)]
pub(crate) struct GenerateArgs {
    /// The file or directory [default: the workspace root]
    path: Option<String>,
    /// The whole subtree, not just the directory's own files
    #[arg(short, long)]
    recursive: bool,
    /// Send the model calls as provider batches at half the price (Anthropic Message
    /// Batches, the OpenAI Batch API): one for the files, then one per level of directories
    /// with the llm policy. It waits with progress; killed, the same command picks the same
    /// batch up. The frames are the same as without it
    #[arg(long)]
    batch: bool,
    /// Count the model calls and estimate their cost with and without batch pricing, and
    /// send nothing (frames that need no call, such as a renamed file's, are still written)
    #[arg(long)]
    dry_run: bool,
    /// Seconds between checks of a batch's progress
    #[arg(long, value_name = "SECONDS", value_parser = crate::llm::parse_seconds, default_value = "30")]
    poll: std::time::Duration,
    #[command(flatten)]
    with: GenerateWith,
}

/// How frames are generated: the type, the agent, and the producer (the offline outline or a
/// model); shared by `generate` and `watch --generate`.
#[derive(Args, Debug)]
pub(crate) struct GenerateWith {
    /// The frame type to write on files and directories
    #[arg(long = "type", value_name = "TYPE", default_value = "summary")]
    pub(crate) frame_type: String,
    /// The writing agent, with the synthesis role [default: MERKLE_AGENT, else `merkle`,
    /// registered with the synthesis role on first use]
    #[arg(long, env = "MERKLE_AGENT")]
    pub(crate) agent: Option<String>,
    /// Use the offline producer (a deterministic outline) even when a provider is configured
    #[arg(long, conflicts_with_all = ["provider", "script", "playback", "record"])]
    offline: bool,
    /// How directory frames are made from their children's [default: llm with a provider, else
    /// map (a deterministic map of the children: their first doc lines, top definitions and
    /// components, ranked)]
    #[arg(long, value_parser = ["map", "concat", "summary", "llm"])]
    policy: Option<String>,
    #[command(flatten)]
    pub(crate) model: crate::llm::ModelArgs,
    /// Make again every frame another producer wrote (a model, the simulator, the offline
    /// outline), not only missing and stale ones: how to go back from one producer to another
    /// [default: only a model's run replaces other producers' frames]
    #[arg(long)]
    pub(crate) replace: bool,
    /// Model calls in flight at once (each still passes llm-core's rate limiter)
    #[arg(value_parser = crate::positive, long, default_value_t = 8)]
    concurrency: usize,
    /// The most tokens of a file (or of a directory's children's frames) sent to the model; the
    /// rest is cut with a marker
    #[arg(value_parser = clap::value_parser!(u64).range(1..), long, default_value_t = 8_000)]
    max_input_tokens: u64,
    /// The most tokens of one frame
    #[arg(value_parser = clap::value_parser!(u32).range(1..), long, default_value_t = 400)]
    max_tokens: u32,
    /// A prompt template for files ({type}, {language}, {content}, and {path}, though a template
    /// that names the path makes every rename cost a call) [default: built in, which names no
    /// path]
    #[arg(long, value_name = "FILE")]
    template: Option<PathBuf>,
    /// A prompt template for directories ({type}, {children}, and {path}, though a template
    /// that names the path makes every rename cost a call per directory above it) [default:
    /// built in, which names nothing]
    #[arg(long, value_name = "FILE")]
    dir_template: Option<PathBuf>,
    /// The model's price per million input and output tokens in dollars, as IN,OUT (and of
    /// cached input read and written, IN,OUT,READ,WRITE; default IN/10 and IN*1.25), for the
    /// cost estimate in the progress line and the report [default: the writing agent's stored
    /// price, else the model's list price (`merkle agent prices`)]
    #[arg(long, value_name = "IN,OUT", value_parser = crate::agent_cmds::parse_price)]
    price: Option<agent_loop::Price>,
}

/// The agent `generate` writes as when none is given; registered with the synthesis role.
pub(crate) const GENERATE_AGENT: &str = "merkle";

impl GenerateWith {
    /// The writing agent's record, if registered: it may hold the model to use.
    pub(crate) fn stored_agent(&self, store: &Store) -> Result<Option<merkle_store::Agent>> {
        Ok(store.agent(self.agent.as_deref().unwrap_or(GENERATE_AGENT))?)
    }
}

/// A model's part of a [`Generator`].
struct ModelRun {
    /// The runtime the producers block on from context's worker threads; kept for as long as
    /// the generator.
    runtime: tokio::runtime::Runtime,
    setup: llm_sim::Setup,
    /// The model asked for, for estimates; empty: the provider's default.
    model: String,
    stats: Arc<LlmStats>,
    /// Set to stop making calls: those in flight finish and their frames are put.
    interrupt: Arc<AtomicBool>,
}

/// A producer and a policy, built once from [`GenerateWith`] and run as often as needed: with a
/// model, one client (so its rate limiter and retries see every call) and one running count of
/// calls, tokens and cost.
pub(crate) struct Generator {
    frame_type: String,
    agent: Option<String>,
    producer: Arc<dyn FrameProducer>,
    policy: Arc<dyn SynthesisPolicy>,
    /// Files in flight at once; `None`: one per core (the offline producer computes).
    threads: Option<usize>,
    model: Option<ModelRun>,
    /// `--max-tokens` and `--max-input-tokens`, for estimates.
    max_tokens: u32,
    max_input_tokens: u64,
    price: Option<agent_loop::Price>,
    /// Replace other producers' frames even without a model (`--replace`).
    replace: bool,
}

impl Generator {
    /// The producer and policy `with` asks for: a model when one is configured (a provider
    /// flag, `MERKLE_LLM_MODE`, or the model stored with the writing agent, `stored`) and not
    /// `--offline`, else the offline outline, saying so unless `quiet`.
    pub(crate) fn new(
        with: &GenerateWith,
        stored: Option<&merkle_store::Agent>,
        quiet: bool,
        batch: Option<Arc<BatchQueue>>,
    ) -> Result<Generator> {
        let model_args = with.model.or_stored(stored);
        let use_model = !with.offline && model_args.is_configured();
        if !use_model && !with.offline && !quiet {
            eprintln!(
                "note: no model is configured (--provider, --script or MERKLE_LLM_MODE); using \
                 the offline outline producer"
            );
        }
        let mut generator = Generator {
            frame_type: with.frame_type.clone(),
            agent: with.agent.clone(),
            producer: Arc::new(Outline::default()),
            policy: Arc::new(Map::by_imports()),
            threads: None,
            model: None,
            max_tokens: with.max_tokens,
            max_input_tokens: with.max_input_tokens,
            price: crate::agent_cmds::resolve_price(
                with.price,
                stored,
                model_args.model.as_deref().unwrap_or_default(),
            ),
            replace: with.replace,
        };
        if !use_model {
            if with.policy.as_deref() == Some("llm") {
                crate::usage!(
                    "--policy llm needs a model: pass --provider, --script or --playback"
                );
            }
            if let Some(policy) = deterministic_policy(with.policy.as_deref()) {
                generator.policy = policy;
            }
            return Ok(generator);
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let setup = {
            let _entered = runtime.enter();
            model_args.build(llm_sim::Scrubber::default())?
        };
        if setup.provider == "sim" && !quiet {
            eprintln!(
                "note: the simulator writes these frames (its scripted or fixed answers), not a \
                 model; a model's run replaces them, and so does `generate --offline --replace`"
            );
        }
        let stats = Arc::new(LlmStats::new(generator.price));
        let interrupt = Arc::new(AtomicBool::new(false));
        let settings = LlmSettings {
            client: Arc::clone(&setup.client),
            runtime: runtime.handle().clone(),
            model: model_args.model.clone().unwrap_or_default(),
            provider: setup.provider.clone(),
            max_input_tokens: with.max_input_tokens,
            max_tokens: with.max_tokens,
            stats: Arc::clone(&stats),
            interrupt: Arc::clone(&interrupt),
            batch,
        };
        let read = |path: &Option<PathBuf>, default: &str| -> Result<String> {
            match path {
                Some(p) => std::fs::read_to_string(p)
                    .with_context(|| format!("reading template {}", p.display())),
                None => Ok(default.to_owned()),
            }
        };
        generator.producer = Arc::new(LlmProducer {
            settings: settings.clone(),
            frame_type: with.frame_type.clone(),
            template: read(&with.template, FILE_TEMPLATE)?,
        });
        generator.policy = match deterministic_policy(with.policy.as_deref()) {
            Some(policy) => policy,
            None => Arc::new(LlmSynthesis {
                settings,
                template: read(&with.dir_template, DIR_TEMPLATE)?,
            }),
        };
        generator.threads = Some(with.concurrency.max(1));
        generator.model = Some(ModelRun {
            runtime,
            setup,
            model: model_args.model.clone().unwrap_or_default(),
            stats,
            interrupt,
        });
        Ok(generator)
    }

    /// The flag that stops new model calls, when a model makes the frames.
    pub(crate) fn interrupt(&self) -> Option<Arc<AtomicBool>> {
        self.model.as_ref().map(|m| Arc::clone(&m.interrupt))
    }

    /// On Ctrl-C, stop new model calls and let those in flight finish (a second Ctrl-C ends
    /// the process at once). For `generate`; `watch` sets the flag from its own listener.
    fn stop_calls_on_ctrl_c(&self) {
        let Some(model) = &self.model else {
            return;
        };
        let flag = Arc::clone(&model.interrupt);
        model.runtime.spawn(async move {
            if let Ok(shutdown) = crate::llm::Shutdown::listen() {
                shutdown.wait().await;
                flag.store(true, Ordering::SeqCst);
                eprintln!(
                    "\ninterrupted: finishing the calls in flight and saving their frames \
                     (Ctrl-C again to stop at once)"
                );
                if let Ok(again) = crate::llm::Shutdown::listen() {
                    again.wait().await;
                    std::process::exit(130);
                }
            }
        });
    }

    /// The producer's id, which names the model and prompt (or the offline outline).
    pub(crate) fn producer_id(&self) -> String {
        self.producer.id()
    }

    /// The model calls made so far, with their tokens and cost.
    pub(crate) fn stats(&self) -> Option<&LlmStats> {
        self.model.as_ref().map(|m| m.stats.as_ref())
    }

    /// Generates frames for `path` (a path argument, relative to the current directory; `None`:
    /// the workspace root, wherever the command runs), the whole subtree when `recursive`, with
    /// a progress bar on stderr unless `quiet`. An interruption is an error that says the
    /// finished frames are saved.
    pub(crate) fn run(
        &self,
        store: &Store,
        root: &Path,
        path: Option<&str>,
        recursive: bool,
        quiet: bool,
    ) -> Result<context::Generated> {
        let node = match path {
            Some(path) => resolve(store, root, path)?,
            None => store.resolve("")?,
        };
        self.run_with(store, recursive, quiet, |req| {
            context::generate(store, &node, req)
        })
    }

    fn run_with(
        &self,
        store: &Store,
        recursive: bool,
        quiet: bool,
        generate: impl FnOnce(&context::GenerateRequest<'_>) -> context::Result<context::Generated>,
    ) -> Result<context::Generated> {
        let agent = match &self.agent {
            Some(agent) => agent.clone(),
            None => {
                if store.agent(GENERATE_AGENT)?.is_none() {
                    store.add_agent(GENERATE_AGENT, merkle_store::Role::Synthesis)?;
                }
                GENERATE_AGENT.to_owned()
            }
        };
        let bar = (!quiet).then(|| {
            let b = indicatif::ProgressBar::with_draw_target(
                None,
                indicatif::ProgressDrawTarget::stderr(),
            );
            b.set_style(
                crate::output::steady_style(
                    "generating [{bar:30}] {pos}/{len} files ({rate}) {left} {msg}",
                )
                .progress_chars("=> "),
            );
            b
        });
        let tick = |done: usize, total: usize| {
            if let Some(b) = &bar {
                b.set_length(total as u64);
                b.set_position(done as u64);
                if let Some(stats) = self.stats() {
                    let usage = stats.usage();
                    b.set_message(format!(
                        "{}, {}{}",
                        crate::output::count(stats.calls(), "call"),
                        crate::output::count(usage.input_tokens + usage.output_tokens, "token"),
                        stats
                            .cost_usd()
                            .map(|c| format!(", ~${c:.4}"))
                            .unwrap_or_default()
                    ));
                }
            }
        };
        let report = generate(&context::GenerateRequest {
            frame_type: &self.frame_type,
            agent: &agent,
            producer: self.producer.as_ref(),
            policy: self.policy.as_ref(),
            recursive,
            now_ms: merkle_store::frame::now_ms(),
            progress: Some(&tick),
            // A model asked for replaces what another producer (the offline outline,
            // another model or prompt) made; an offline run leaves model-written frames
            // alone.
            replace_other_producers: self.model.is_some() || self.replace,
            threads: self.threads,
        });
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        if let Some(model) = &self.model
            && model.interrupt.load(Ordering::SeqCst)
        {
            let calls = model.stats.calls();
            bail!(
                "interrupted: the {} that finished {} saved; run the same generate again to \
                 resume",
                crate::output::count(calls, "model call"),
                if calls == 1 {
                    "has its frame"
                } else {
                    "have their frames"
                }
            );
        }
        Ok(report?)
    }

    /// Writes the recording, if the model runs are recorded; returns its path.
    pub(crate) fn finish(self) -> Result<Option<PathBuf>> {
        match self.model {
            Some(model) => {
                let path = model.setup.finish()?.map(Path::to_path_buf);
                drop(model.runtime);
                Ok(path)
            }
            None => Ok(None),
        }
    }
}

/// The directory policy `--policy` names when it needs no model.
fn deterministic_policy(name: Option<&str>) -> Option<Arc<dyn SynthesisPolicy>> {
    match name {
        Some("map") => Some(Arc::new(Map::by_imports())),
        Some("concat") => Some(Arc::new(Concat)),
        Some("summary") => Some(Arc::new(Summary::default())),
        _ => None,
    }
}

pub(crate) fn generate(
    out: &mut Out,
    store: &Store,
    root: &Path,
    a: &GenerateArgs,
    quiet: bool,
) -> Result<()> {
    // Generate works on the tree as it is now: rescan first (incremental, cheap when nothing
    // changed).
    store.scan(&merkle_store::ScanOptions::default())?;
    let queue = (a.batch || a.dry_run).then(|| Arc::new(BatchQueue::default()));
    let generator = Generator::new(
        &a.with,
        a.with.stored_agent(store)?.as_ref(),
        quiet,
        queue.clone(),
    )?;
    let covered = match &a.path {
        Some(p) => resolve(store, root, p)?,
        None => store.resolve("")?,
    };
    if let Some(queue) = &queue {
        let batches = generator
            .model
            .as_ref()
            .and_then(|m| m.setup.client.batches());
        if batches.is_none() {
            crate::usage!(
                "--batch and --dry-run need a provider with a batch API: --provider anthropic or \
                 openai (or an OpenAI-compatible server that serves /v1/batches); {} has none",
                generator
                    .model
                    .as_ref()
                    .map_or("the offline producer", |m| m.setup.provider.as_str())
            );
        }
        if a.dry_run {
            let report = generator.run(store, root, a.path.as_deref(), a.recursive, quiet)?;
            return dry_run(
                out,
                store,
                &generator,
                queue,
                &covered,
                a.recursive,
                &report,
            );
        }
    }
    generator.stop_calls_on_ctrl_c();
    let mut batched = None;
    let mut result = match &queue {
        Some(queue) => {
            generate_batched(store, root, a, &generator, queue, quiet).map(|(report, done)| {
                batched = Some(done);
                report
            })
        }
        None => generator.run(store, root, a.path.as_deref(), a.recursive, quiet),
    };
    // A file that changed under the run failed to read: rescan and run once more, which reads
    // it again (everything else is up to date by now and costs nothing).
    if let Ok(first) = &result
        && queue.is_none()
        && !first.failed.is_empty()
        && store.scan(&merkle_store::ScanOptions::default())?.changed() > 0
    {
        result = generator
            .run(store, root, a.path.as_deref(), a.recursive, quiet)
            .map(|second| merged(first, second));
    }
    let (mut json, mut text) = match &result {
        Ok(report) => generated_json(report, &generator),
        Err(_) => (Value::Null, String::new()),
    };
    // What was covered, so that a run from a subfolder cannot be mistaken for the whole tree.
    json["path"] = json!(covered.path);
    json["recursive"] = json!(a.recursive);
    text = format!(
        "covered: {}{}\n{text}",
        crate::display_path(&covered.path),
        match (covered.kind, a.recursive) {
            (merkle_store::NodeKind::Dir, true) => " and everything below it",
            (merkle_store::NodeKind::Dir, false) => " (its own files; --recursive for all below)",
            _ => "",
        }
    );
    // What the model calls made is recorded even when the run was interrupted.
    let producer = generator.producer_id();
    let llm = generator
        .stats()
        .map(|s| (s.calls(), s.usage(), s.cost_usd()));
    if let Some(path) = generator.finish()? {
        eprintln!("recorded to {}", path.display());
    }
    let report = result?;
    json["producer"] = json!(producer);
    if let Some(done) = &batched {
        json["batch"] = json!({"batches": done.batches, "resumed": done.resumed});
        text.push_str(&format!(
            "\nbatches: {}{}",
            if done.batches.is_empty() {
                "none needed".to_owned()
            } else {
                done.batches.join(", ")
            },
            if done.resumed {
                " (the first picked up from an earlier run)"
            } else {
                ""
            }
        ));
    }
    if let Some((calls, usage, cost)) = llm {
        json["llm"] = json!({
            "calls": calls,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cost_usd": cost,
        });
        text.push_str(&format!(
            "\nmodel calls: {calls}, tokens: {} in, {} out{}",
            usage.input_tokens,
            usage.output_tokens,
            cost.map(|c| format!(", about ${c:.4}")).unwrap_or_default()
        ));
    }
    // The failures are the error's, on stderr: said once.
    out.value(json, text);
    if !report.failed.is_empty() {
        bail!(
            "{} failed:\n  {}",
            crate::output::count(report.failed.len() as u64, "file"),
            report.failed.join("\n  ")
        );
    }
    Ok(())
}

/// Two runs of a generation as one: the counts of both, the failures of the second (which
/// tried the first's failures again).
fn merged(first: &context::Generated, second: context::Generated) -> context::Generated {
    context::Generated {
        produced: first.produced + second.produced,
        reused: first.reused + second.reused,
        up_to_date: first.up_to_date,
        synthesized: first.synthesized + second.synthesized,
        synthesis_reused: first.synthesis_reused + second.synthesis_reused,
        failed: second.failed,
        visited: first.visited,
        created: first.created + second.created,
        deferred: second.deferred,
    }
}

/// A generation's counts: the JSON document (`generate`'s, and `watch`'s `generated`) and a
/// one-line summary; the failed files are the caller's to show.
pub(crate) fn generated_json(
    report: &context::Generated,
    generator: &Generator,
) -> (Value, String) {
    let text = format!(
        "files: {} produced, {} reused, directories: {} synthesized, {} reused; {} up to date",
        report.produced,
        report.reused,
        report.synthesized,
        report.synthesis_reused,
        report.up_to_date
    );
    let json = json!({
        "produced": report.produced,
        "reused": report.reused,
        "synthesized": report.synthesized,
        "synthesis_reused": report.synthesis_reused,
        "up_to_date": report.up_to_date,
        "visited": report.visited,
        "failed": report.failed,
        "producer": generator.producer_id(),
    });
    (json, text)
}
