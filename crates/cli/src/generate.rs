//! `merkle generate`, and the generation `merkle watch --generate` runs after each rescan: the
//! flags that choose a producer and a policy, the [`Generator`] built from them once (the
//! library's, [`generate::generate`], with the model's client and the runtime it runs on),
//! the progress bars, and the report. What a generation does is the library's.
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result, bail};
use clap::Args;
use merkle_store::Store;

use generate::batch::BatchEvent;
use generate::{self as op, Answer, Batching, DirPolicy};

use crate::output::{Out, count};
use crate::resolve;

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
    #[arg(long, conflicts_with = "service_tier")]
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
    #[arg(value_parser = crate::at_least_one::<usize>, long, default_value_t = 8)]
    concurrency: usize,
    /// Send no prompt-cache hints, for a server that refuses them [default: every call marks
    /// the run's shared prefix (the instructions and a map of the workspace's files) for an
    /// hour, and the first call pre-warms it]
    #[arg(long)]
    no_prompt_cache: bool,
    /// The processing tier to ask for: `flex` is OpenAI's Flex (batch prices on synchronous
    /// calls, answered more slowly); a call refused for capacity waits and is sent again, up to
    /// about five minutes, and the report counts the waits [default: the provider's]
    #[arg(long, value_name = "TIER", value_parser = ["flex", "default"])]
    service_tier: Option<String>,
    /// The most tokens of a file (or of a directory's children's frames) sent to the model; the
    /// rest is cut with a marker
    #[arg(value_parser = crate::at_least_one::<u64>, long, default_value_t = 8_000)]
    max_input_tokens: u64,
    /// The most tokens of one frame
    #[arg(value_parser = crate::at_least_one::<u32>, long, default_value_t = 400)]
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
    price: Option<llm_core::Price>,
}

impl GenerateWith {
    /// The writing agent's record, if registered: it may hold the model to use.
    pub(crate) fn stored_agent(&self, store: &Store) -> Result<Option<merkle_store::Agent>> {
        Ok(store.agent(self.agent.as_deref().unwrap_or(op::DEFAULT_AGENT))?)
    }
}

/// The library's generator, and with a model what the CLI keeps for it: the runtime its calls
/// block on and the client's setup (which writes a recording at the end).
pub(crate) struct Generator {
    pub(crate) frames: op::Generator,
    model: Option<ModelRun>,
}

struct ModelRun {
    runtime: tokio::runtime::Runtime,
    setup: llm_sim::Setup,
}

impl Generator {
    /// The producer and policy `with` asks for: a model when one is configured (a provider
    /// flag, `MERKLE_LLM_MODE`, or the model stored with the writing agent, `stored`) and not
    /// `--offline`, else the offline outline, saying so unless `quiet`.
    pub(crate) fn new(
        with: &GenerateWith,
        stored: Option<&merkle_store::Agent>,
        quiet: bool,
        batching: Batching,
    ) -> Result<Generator> {
        let model_args = with.model.or_stored(stored);
        let use_model = !with.offline && model_args.is_configured();
        if !use_model && !with.offline && !quiet {
            eprintln!(
                "note: no model is configured (--provider, --script or MERKLE_LLM_MODE); using \
                 the offline outline producer"
            );
        }
        let mut config = op::GenerateConfig {
            frame_type: with.frame_type.clone(),
            agent: with.agent.clone(),
            model: None,
            policy: with.policy.as_deref().map(|name| match name {
                "map" => DirPolicy::Map,
                "concat" => DirPolicy::Concat,
                "summary" => DirPolicy::Summary,
                // clap allows no other name
                _ => DirPolicy::Llm,
            }),
            replace: with.replace,
            max_input_tokens: with.max_input_tokens,
            max_tokens: with.max_tokens,
            price: crate::agent_cmds::resolve_price(
                with.price,
                stored,
                model_args.model.as_deref().unwrap_or_default(),
            ),
            batching,
        };
        if !use_model {
            if config.policy == Some(DirPolicy::Llm) {
                crate::usage!(
                    "--policy llm needs a model: pass --provider, --script or --playback"
                );
            }
            return Ok(Generator {
                frames: op::Generator::new(config)?,
                model: None,
            });
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
        if with.service_tier.as_deref() == Some("flex") && setup.provider == "anthropic" {
            crate::usage!(
                "--service-tier flex is OpenAI's tier; Anthropic has none (use --batch for half \
                 the price)"
            );
        }
        if setup.provider == "sim" && !quiet {
            eprintln!(
                "note: the simulator writes these frames (its scripted or fixed answers), not a \
                 model; a model's run replaces them, and so does `generate --offline --replace`"
            );
        }
        let read = |path: &Option<PathBuf>| -> Result<Option<String>> {
            path.as_ref()
                .map(|p| {
                    std::fs::read_to_string(p)
                        .with_context(|| format!("reading template {}", p.display()))
                })
                .transpose()
        };
        config.model = Some(op::ModelConfig {
            client: std::sync::Arc::clone(&setup.client),
            runtime: runtime.handle().clone(),
            provider: setup.provider.clone(),
            model: model_args.model.clone().unwrap_or_default(),
            file_template: read(&with.template)?,
            dir_template: read(&with.dir_template)?,
            concurrency: with.concurrency,
            prompt_cache: !with.no_prompt_cache,
            service_tier: with
                .service_tier
                .as_deref()
                .and_then(llm_core::ServiceTier::parse),
        });
        Ok(Generator {
            frames: op::Generator::new(config)?,
            model: Some(ModelRun { runtime, setup }),
        })
    }

    /// On Ctrl-C, stop new model calls and let those in flight finish (a second Ctrl-C ends
    /// the process at once). For `generate`; `watch` sets the flag from its own listener.
    fn stop_calls_on_ctrl_c(&self) {
        let (Some(model), Some(flag)) = (&self.model, self.frames.interrupt()) else {
            return;
        };
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

/// The progress of `generate` on stderr: a bar per pass over the files (with the model's calls,
/// tokens and cost so far) and, batching, one for the batch in flight; nothing when quiet.
struct Bars<'a> {
    generator: &'a Generator,
    quiet: bool,
    files: Mutex<Option<indicatif::ProgressBar>>,
    batch: Option<indicatif::ProgressBar>,
}

impl<'a> Bars<'a> {
    fn new(generator: &'a Generator, quiet: bool, batching: Batching) -> Bars<'a> {
        let batch = (!quiet && matches!(batching, Batching::Batches { .. })).then(|| {
            bar(crate::output::steady_style(
                "batch [{bar:30}] {pos}/{len} calls {elapsed} {msg}",
            ))
        });
        Bars {
            generator,
            quiet,
            files: Mutex::new(None),
            batch,
        }
    }

    fn files_bar(&self) -> std::sync::MutexGuard<'_, Option<indicatif::ProgressBar>> {
        self.files.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn bar(style: indicatif::ProgressStyle) -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    b.set_style(style.progress_chars("=> "));
    b
}

impl op::Progress for Bars<'_> {
    fn starting(&self) {
        self.generator.stop_calls_on_ctrl_c();
    }

    fn pass_started(&self) {
        if !self.quiet {
            *self.files_bar() = Some(bar(crate::output::steady_style(
                "generating [{bar:30}] {pos}/{len} files ({rate}) {left} {msg}",
            )));
        }
    }

    fn files(&self, done: usize, total: usize) {
        let guard = self.files_bar();
        let Some(b) = guard.as_ref() else {
            return;
        };
        b.set_length(total as u64);
        b.set_position(done as u64);
        if let Some(stats) = self.generator.frames.stats() {
            let usage = stats.usage();
            let waits = match stats.flex_waits() {
                0 => String::new(),
                n => format!(", {} for Flex capacity", count(n, "wait")),
            };
            b.set_message(format!(
                "{}, {}{}{waits}",
                count(stats.calls(), "call"),
                count(usage.input_tokens + usage.output_tokens, "token"),
                stats
                    .cost_usd()
                    .map(|c| format!(", ~${c:.4}"))
                    .unwrap_or_default()
            ));
        }
    }

    fn pass_ended(&self) {
        if let Some(b) = self.files_bar().take() {
            b.finish_and_clear();
        }
    }

    fn batch(&self, event: &BatchEvent) {
        let Some(b) = &self.batch else {
            return;
        };
        // Said on stderr whether or not it is a terminal (a hidden bar prints nothing).
        let say = |line: String| b.suspend(|| eprintln!("{line}"));
        match event {
            BatchEvent::Submitted { id, calls } => {
                say(format!(
                    "sent batch {id} of {}",
                    count(*calls as u64, "call")
                ));
            }
            BatchEvent::Resumed { id } => {
                say(format!("picking up batch {id}, sent by an earlier run"));
            }
            BatchEvent::Status(status) => {
                let c = status.counts;
                let total = c.processing + c.succeeded + c.errored + c.expired + c.canceled;
                b.set_length(total);
                b.set_position(total - c.processing);
                b.set_message(format!(
                    "{}: {} succeeded, {} errored, {} expired",
                    status.id, c.succeeded, c.errored, c.expired
                ));
            }
            BatchEvent::Answered { id, answers } => {
                say(format!(
                    "batch {id}: {} answered{}",
                    count(answers.succeeded as u64, "call"),
                    if answers.failed > 0 {
                        format!(", {} failed (sent again once)", answers.failed)
                    } else {
                        String::new()
                    }
                ));
            }
        }
    }
}

pub(crate) fn generate(
    out: &mut Out,
    store: &Store,
    root: &Path,
    a: &GenerateArgs,
    quiet: bool,
) -> Result<()> {
    let batching = if a.dry_run {
        Batching::DryRun
    } else if a.batch {
        Batching::Batches { poll: a.poll }
    } else {
        Batching::Off
    };
    let generator = Generator::new(
        &a.with,
        a.with.stored_agent(store)?.as_ref(),
        quiet,
        batching,
    )?;
    let target = |store: &Store| match &a.path {
        Some(p) => resolve(store, root, p),
        None => Ok(store.resolve("")?),
    };
    let bars = Bars::new(&generator, quiet, batching);
    let answer = op::generate(
        store,
        &generator.frames,
        &op::Request {
            target: &target,
            recursive: a.recursive,
            progress: &bars,
        },
    );
    if let Some(b) = &bars.batch {
        b.finish_and_clear();
    }
    if let Err(e) = &answer
        && let Some(generate::Error::NoBatchApi { provider }) = e.downcast_ref()
    {
        crate::usage!(
            "--batch and --dry-run need a provider with a batch API: --provider anthropic or \
             openai (or an OpenAI-compatible server that serves /v1/batches); {} has none",
            provider.as_deref().unwrap_or("the offline producer")
        );
    }
    // What the model calls made is recorded even when the run was interrupted; a dry run's
    // calls are only counted, and it records nothing.
    if !a.dry_run
        && let Some(path) = generator.finish()?
    {
        eprintln!("recorded to {}", path.display());
    }
    let done = match answer? {
        Answer::DryRun(estimate) => {
            print_estimate(out, &estimate);
            return Ok(());
        }
        Answer::Generated(done) => done,
    };
    out.value(done.json(), generation_text(&done));
    // The failures are the error's, on stderr: said once.
    if !done.counts.failed.is_empty() {
        bail!(
            "{} failed:\n  {}",
            count(done.counts.failed.len() as u64, "file"),
            done.counts.failed.join("\n  ")
        );
    }
    Ok(())
}

/// A generation's counts in one line (`generate`'s, and `watch`'s after each rescan); the
/// failed files are the caller's to show.
pub(crate) fn counts_text(c: &op::Counts) -> String {
    format!(
        "files: {} produced, {} reused, directories: {} synthesized, {} reused; {} up to date",
        c.produced, c.reused, c.synthesized, c.synthesis_reused, c.up_to_date
    )
}

/// What `generate` prints without `--json`.
fn generation_text(done: &op::Generation) -> String {
    let mut text = format!(
        "covered: {}{}\n{}",
        crate::display_path(&done.path),
        match (done.kind, done.recursive) {
            (merkle_store::NodeKind::Dir, true) => " and everything below it",
            (merkle_store::NodeKind::Dir, false) => " (its own files; --recursive for all below)",
            _ => "",
        },
        counts_text(&done.counts)
    );
    if let Some(batch) = &done.batch {
        text.push_str(&format!(
            "\nbatches: {}{}",
            if batch.batches.is_empty() {
                "none needed".to_owned()
            } else {
                batch.batches.join(", ")
            },
            if batch.resumed {
                " (the first picked up from an earlier run)"
            } else {
                ""
            }
        ));
    }
    if let Some(llm) = &done.llm {
        text.push_str(&format!(
            "\nmodel calls: {}, tokens: {} in, {} out{}",
            llm.calls,
            llm.input_tokens,
            llm.output_tokens,
            llm.cost_usd
                .map(|c| format!(", about ${c:.4}"))
                .unwrap_or_default()
        ));
        if llm.flex_waits > 0 {
            text.push_str(&format!(
                "; Flex had no capacity {}, each waited for and sent again",
                count(llm.flex_waits, "time")
            ));
        }
    }
    text
}

/// Prints what a batched generation would send.
fn print_estimate(out: &mut Out, e: &op::Estimate) {
    let text = format!(
        "would send {} ({} for files, {} for directories) to {}{}: about {} input tokens and \
         at most {} output tokens\n{}\nnothing was sent{}",
        count(e.calls.total as u64, "call"),
        e.calls.files,
        e.calls.directories,
        e.provider,
        if e.model.is_empty() {
            String::new()
        } else {
            format!(" ({})", e.model)
        },
        e.input_tokens,
        e.output_tokens_at_most,
        match e.cost_usd {
            Some(op::Cost {
                direct,
                direct_cached,
                flex,
                batch,
            }) => {
                let flex = flex.map_or(String::new(), |flex| format!(", ${flex:.4} on Flex"));
                format!(
                    "cost: up to about ${direct:.4} called directly (${direct_cached:.4} with the \
                     run's cached prefix){flex}, ${batch:.4} as a batch"
                )
            }
            None => "pass --price IN,OUT (dollars per million tokens) for a cost".to_owned(),
        },
        if e.written > 0 {
            format!(
                "; {} that needed no call were written",
                count(e.written as u64, "frame")
            )
        } else {
            String::new()
        }
    );
    out.value(e.json(), text);
}
