//! `generate` as one operation, for every front end: a [`Generator`] (a producer and a
//! directory policy, the offline outline or a model's, built once from a [`GenerateConfig`] and
//! run as often as needed) and [`generate`], which rescans, runs it over a node (directly, as
//! provider batches, or as a dry run that only counts and prices the calls), and answers with
//! the counts as one JSON document ([`Generation`], [`Estimate`]).
//!
//! It lives here, not in `context::ops`, because a model's producers need llm-core, which
//! context does not know. Front ends keep what is theirs: reading their arguments (the node to
//! cover is theirs to resolve, through [`Request::target`]), building the model's client and
//! the runtime it runs on (the CLI's `llm_sim` setup, with its recording), showing progress
//! ([`Progress`]) and listening for Ctrl-C (they set [`Generator::interrupt`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use context::{Concat, FrameProducer, Generated, Map, Outline, Summary, SynthesisPolicy};
use llm_core::{LlmClient, Price};
use merkle_store::{NodeKind, NodeRecord, Role, ScanOptions, Store};
use serde::Serialize;
use serde_json::Value;

use crate::batch::{BatchEvent, BatchQueue, Batched};
use crate::error::{Error, Result};
use crate::producer::{
    DIR_TEMPLATE, FILE_TEMPLATE, LlmProducer, LlmSettings, LlmStats, LlmSynthesis, RunPrefix,
};

mod batched;
pub use batched::{Cost, Estimate, EstimatedCalls};

/// The agent a generation writes as when none is given; registered with the synthesis role on
/// first use.
pub const DEFAULT_AGENT: &str = "merkle";

/// How directory frames are made from their children's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirPolicy {
    /// A deterministic map of the children (their first doc lines, top definitions and
    /// components), ranked by imports.
    Map,
    /// The children's frames one after another.
    Concat,
    /// The first lines of the children's frames.
    Summary,
    /// The model's overview of the children's frames (needs a model).
    Llm,
}

/// Whether a generation's model calls go out one by one or as provider batches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Batching {
    /// Each call is made as its file's turn comes.
    Off,
    /// As provider batches at half the price, their progress checked every `poll`; a killed
    /// run's batch is picked up by the same generation (`crate::batch`).
    Batches { poll: Duration },
    /// The calls a batched generation would send, counted and priced; nothing is sent (frames
    /// that need no call, such as a renamed file's, are still written).
    DryRun,
}

/// The model that makes the frames.
#[derive(Clone)]
pub struct ModelConfig {
    pub client: Arc<dyn LlmClient>,
    /// A handle of a multi-threaded runtime that the caller keeps for as long as the
    /// generator: the producers block on it from context's worker threads.
    pub runtime: tokio::runtime::Handle,
    /// Who answers, recorded in every frame (`anthropic`, `sim`, ...).
    pub provider: String,
    /// The model asked for; empty: the provider's default.
    pub model: String,
    /// The prompt template for files; `None`: [`FILE_TEMPLATE`].
    pub file_template: Option<String>,
    /// The prompt template for directories (with [`DirPolicy::Llm`]); `None`: [`DIR_TEMPLATE`].
    pub dir_template: Option<String>,
    /// Calls in flight at once (each still passes llm-core's rate limiter).
    pub concurrency: usize,
    /// Mark the run's shared prefix for the provider's cache and pre-warm it
    /// ([`crate::producer::RunPrefix`]); off for a server that refuses cache hints.
    pub prompt_cache: bool,
    /// The tier to ask for; with OpenAI's Flex, a call refused for capacity waits and is sent
    /// again ([`crate::producer::FLEX_WAITS`]), and [`LlmTotals::flex_waits`] counts it.
    pub service_tier: Option<llm_core::ServiceTier>,
}

/// What a [`Generator`] is built from.
#[derive(Clone)]
pub struct GenerateConfig {
    /// The frame type written on files and directories.
    pub frame_type: String,
    /// The writing agent (with the synthesis role); `None`: [`DEFAULT_AGENT`].
    pub agent: Option<String>,
    /// The model; `None`: the offline outline producer.
    pub model: Option<ModelConfig>,
    /// `None`: [`DirPolicy::Llm`] with a model, else [`DirPolicy::Map`].
    pub policy: Option<DirPolicy>,
    /// Make again every frame another producer wrote, not only missing and stale ones. A model
    /// replaces other producers' frames whether or not this is set.
    pub replace: bool,
    /// The most tokens of a file (or of a directory's children's frames) sent to the model.
    pub max_input_tokens: u64,
    /// The most tokens of one frame.
    pub max_tokens: u32,
    /// The model's price, for the running cost and estimates.
    pub price: Option<Price>,
    pub batching: Batching,
}

/// A model's part of a [`Generator`].
struct Model {
    client: Arc<dyn LlmClient>,
    runtime: tokio::runtime::Handle,
    provider: String,
    /// The model asked for, for estimates; empty: the provider's default.
    model: String,
    stats: Arc<LlmStats>,
    /// Set to stop making calls: those in flight finish and their frames are put.
    interrupt: Arc<AtomicBool>,
    /// What the producers share, for the run's prefix.
    settings: LlmSettings,
}

/// A producer and a policy, built once and run as often as needed: with a model, one client
/// (so its rate limiter and retries see every call) and one running count of calls, tokens and
/// cost.
pub struct Generator {
    frame_type: String,
    agent: Option<String>,
    producer: Arc<dyn FrameProducer>,
    policy: Arc<dyn SynthesisPolicy>,
    /// Files in flight at once; `None`: one per core (the offline producer computes).
    threads: Option<usize>,
    model: Option<Model>,
    max_tokens: u32,
    max_input_tokens: u64,
    price: Option<Price>,
    replace: bool,
    batching: Batching,
    /// The calls waiting for a batch, when batching.
    queue: Option<Arc<BatchQueue>>,
}

/// What a generation reports as it goes; every method does nothing unless implemented.
pub trait Progress: Sync {
    /// The rescan is done and frames are about to be made (not called for a dry run): where a
    /// front end starts listening for an interruption, so that one during the rescan still
    /// stops the process as usual.
    fn starting(&self) {}
    /// A pass over the tree begins (a batched generation makes several).
    fn pass_started(&self) {}
    /// `_done` of the pass's `_total` files have their frames; called from worker threads.
    fn files(&self, _done: usize, _total: usize) {}
    /// The pass ended.
    fn pass_ended(&self) {}
    /// A batched generation's progress.
    fn batch(&self, _event: &BatchEvent) {}
}

/// Reports nothing.
pub struct Quiet;

impl Progress for Quiet {}

/// A generation as a front end asks for it.
pub struct Request<'a, E> {
    /// The node to cover, from the front end's reading of its argument; called after the
    /// rescan and before each pass, as a pass may follow another rescan.
    pub target: &'a dyn Fn(&Store) -> Result<NodeRecord, E>,
    /// The whole subtree; otherwise the node and its direct children.
    pub recursive: bool,
    pub progress: &'a dyn Progress,
}

/// A generation's counts: [`Generation`]'s, and what `watch` reports after each rescan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub produced: usize,
    pub reused: usize,
    pub synthesized: usize,
    pub synthesis_reused: usize,
    pub up_to_date: usize,
    pub visited: usize,
    /// The files that could not be done, with why.
    pub failed: Vec<String>,
    /// The producer's id, which names the model and prompt (or the offline outline).
    pub producer: String,
}

impl Counts {
    pub fn new(report: &Generated, producer: String) -> Counts {
        Counts {
            produced: report.produced,
            reused: report.reused,
            synthesized: report.synthesized,
            synthesis_reused: report.synthesis_reused,
            up_to_date: report.up_to_date,
            visited: report.visited,
            failed: report.failed.clone(),
            producer,
        }
    }

    /// Its one JSON shape.
    pub fn json(&self) -> Value {
        serde_json::to_value(self).expect("counts are plain data")
    }
}

/// What a generation answers.
#[derive(Clone, Debug, Serialize)]
pub struct Generation {
    #[serde(flatten)]
    pub counts: Counts,
    /// What was covered, so that a run over a subfolder cannot be mistaken for the whole tree.
    pub path: String,
    pub recursive: bool,
    /// The covered node's kind.
    #[serde(skip)]
    pub kind: NodeKind,
    /// The batches used, when batching.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch: Option<Batched>,
    /// The model calls, with a model; counted even when the run was interrupted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub llm: Option<LlmTotals>,
}

impl Generation {
    /// Its one JSON shape: [`Counts`]'s fields, `path`, `recursive`, and `batch` and `llm` when
    /// there are any.
    pub fn json(&self) -> Value {
        serde_json::to_value(self).expect("a generation's answer is plain data")
    }
}

/// A model's calls, tokens and cost so far.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LlmTotals {
    pub calls: u64,
    /// Uncached input.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Input read from the provider's prompt cache, and written to it.
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// With a known price.
    pub cost_usd: Option<f64>,
    /// Calls Flex refused for capacity that waited and were sent again.
    pub flex_waits: u64,
}

/// What [`generate`] answers.
#[derive(Clone, Debug)]
pub enum Answer {
    Generated(Generation),
    DryRun(Estimate),
}

impl Answer {
    /// Its one JSON shape.
    pub fn json(&self) -> Value {
        match self {
            Answer::Generated(generation) => generation.json(),
            Answer::DryRun(estimate) => estimate.json(),
        }
    }
}

/// A store error worded as the store words it (not as [`Error::Store`], "store: ..."), as
/// `generate` has always reported it: context's error carries it as it is.
fn store_error(e: merkle_store::Error) -> Error {
    Error::Context(context::Error::Store(e))
}

impl Generator {
    /// The producer and policy `config` asks for.
    pub fn new(config: GenerateConfig) -> Result<Generator> {
        let queue = (config.batching != Batching::Off).then(|| Arc::new(BatchQueue::default()));
        let mut generator = Generator {
            frame_type: config.frame_type,
            agent: config.agent,
            producer: Arc::new(Outline::default()),
            policy: Arc::new(Map::by_imports()),
            threads: None,
            model: None,
            max_tokens: config.max_tokens,
            max_input_tokens: config.max_input_tokens,
            price: config.price,
            replace: config.replace,
            batching: config.batching,
            queue,
        };
        let deterministic = |policy: Option<DirPolicy>| -> Option<Arc<dyn SynthesisPolicy>> {
            match policy {
                Some(DirPolicy::Map) => Some(Arc::new(Map::by_imports())),
                Some(DirPolicy::Concat) => Some(Arc::new(Concat)),
                Some(DirPolicy::Summary) => Some(Arc::new(Summary::default())),
                Some(DirPolicy::Llm) | None => None,
            }
        };
        let Some(model) = config.model else {
            if config.policy == Some(DirPolicy::Llm) {
                return Err(Error::PolicyNeedsModel);
            }
            if let Some(policy) = deterministic(config.policy) {
                generator.policy = policy;
            }
            return Ok(generator);
        };
        let stats = Arc::new(LlmStats::new(generator.price));
        let interrupt = Arc::new(AtomicBool::new(false));
        let settings = LlmSettings {
            client: Arc::clone(&model.client),
            runtime: model.runtime.clone(),
            model: model.model.clone(),
            provider: model.provider.clone(),
            max_input_tokens: generator.max_input_tokens,
            max_tokens: generator.max_tokens,
            stats: Arc::clone(&stats),
            interrupt: Arc::clone(&interrupt),
            batch: generator.queue.clone(),
            prefix: RunPrefix::default(),
            prompt_cache: model.prompt_cache,
            service_tier: model.service_tier,
        };
        let warm = settings.clone();
        generator.producer = Arc::new(LlmProducer {
            settings: settings.clone(),
            frame_type: generator.frame_type.clone(),
            template: model
                .file_template
                .unwrap_or_else(|| FILE_TEMPLATE.to_owned()),
        });
        generator.policy = match deterministic(config.policy) {
            Some(policy) => policy,
            None => Arc::new(LlmSynthesis {
                settings,
                template: model
                    .dir_template
                    .unwrap_or_else(|| DIR_TEMPLATE.to_owned()),
            }),
        };
        generator.threads = Some(model.concurrency.max(1));
        generator.model = Some(Model {
            client: model.client,
            runtime: model.runtime,
            provider: model.provider,
            model: model.model,
            stats,
            interrupt,
            settings: warm,
        });
        Ok(generator)
    }

    /// The flag that stops new model calls, when a model makes the frames: calls not yet made
    /// fail as interrupted, those in flight finish and their frames are put.
    pub fn interrupt(&self) -> Option<Arc<AtomicBool>> {
        self.model.as_ref().map(|m| Arc::clone(&m.interrupt))
    }

    /// The producer's id, which names the model and prompt (or the offline outline).
    pub fn producer_id(&self) -> String {
        self.producer.id()
    }

    /// The model calls made so far, with their tokens and cost.
    pub fn stats(&self) -> Option<&LlmStats> {
        self.model.as_ref().map(|m| m.stats.as_ref())
    }

    /// One pass: frames for `node`, the whole subtree when `recursive`, as the writing agent
    /// (the default one registered first if need be). An interruption is an error that says
    /// the finished frames are saved.
    pub fn run(
        &self,
        store: &Store,
        node: &NodeRecord,
        recursive: bool,
        progress: &dyn Progress,
    ) -> Result<Generated> {
        let agent = match &self.agent {
            Some(agent) => agent.clone(),
            None => {
                if store.agent(DEFAULT_AGENT).map_err(store_error)?.is_none() {
                    store
                        .add_agent(DEFAULT_AGENT, Role::Synthesis)
                        .map_err(store_error)?;
                }
                DEFAULT_AGENT.to_owned()
            }
        };
        progress.pass_started();
        let tick = |done: usize, total: usize| progress.files(done, total);
        let report = context::generate(
            store,
            node,
            &context::GenerateRequest {
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
            },
        );
        progress.pass_ended();
        if let Some(model) = &self.model
            && model.interrupt.load(Ordering::SeqCst)
        {
            return Err(Error::Interrupted {
                calls: model.stats.calls(),
            });
        }
        Ok(report?)
    }
}

/// Generates frames as `request` asks, with `generator`: rescans first, so that the frames are
/// for the files as they are on disk; then, batching, sends the calls as provider batches until
/// none is left (or, for a dry run, counts and prices them); otherwise runs once, and once more
/// when a file failed because it changed under the run. Failed files are in the answer's
/// counts, not an error.
pub fn generate<E: From<Error>>(
    store: &Store,
    generator: &Generator,
    request: &Request<'_, E>,
) -> Result<Answer, E> {
    // Generate works on the tree as it is now: rescan first (incremental, cheap when nothing
    // changed).
    store.scan(&ScanOptions::default()).map_err(store_error)?;
    let covered = (request.target)(store)?;
    let pass = || -> Result<Generated, E> {
        let node = (request.target)(store)?;
        Ok(generator.run(store, &node, request.recursive, request.progress)?)
    };
    let api = match generator.batching {
        Batching::Off => None,
        _ => {
            let model = generator.model.as_ref();
            let Some(api) = model.and_then(|m| m.client.batches()) else {
                return Err(Error::NoBatchApi {
                    provider: model.map(|m| m.provider.clone()),
                }
                .into());
            };
            Some(api)
        }
    };
    if let Some(model) = &generator.model {
        let files = store.tree_files().map_err(store_error)?;
        model
            .settings
            .prefix
            .set_map(files.iter().map(|file| file.path.as_str()));
    }
    if generator.batching == Batching::DryRun {
        let report = pass()?;
        return Ok(Answer::DryRun(generator.estimate(
            store,
            &covered,
            request.recursive,
            &report,
        )?));
    }
    request.progress.starting();
    let mut batched = None;
    let mut result = match (generator.batching, api) {
        (Batching::Batches { poll }, Some(api)) => generator
            .batched(store, api, poll, pass, request.progress)
            .map(|(report, done)| {
                batched = Some(done);
                report
            }),
        _ => pass(),
    };
    // A file that changed under the run failed to read: rescan and run once more, which reads
    // it again (everything else is up to date by now and costs nothing).
    if let Ok(first) = &result
        && generator.batching == Batching::Off
        && !first.failed.is_empty()
        && store
            .scan(&ScanOptions::default())
            .map_err(store_error)?
            .changed()
            > 0
    {
        result = pass().map(|second| merged(first, second));
    }
    // What the model calls made is counted even when the run was interrupted.
    let llm = generator.stats().map(|s| {
        let usage = s.usage();
        LlmTotals {
            calls: s.calls(),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_input_tokens,
            cache_write_tokens: usage.cache_creation_input_tokens,
            cost_usd: s.cost_usd(),
            flex_waits: s.flex_waits(),
        }
    });
    let report = result?;
    Ok(Answer::Generated(Generation {
        counts: Counts::new(&report, generator.producer_id()),
        path: covered.path,
        recursive: request.recursive,
        kind: covered.kind,
        batch: batched,
        llm,
    }))
}

/// Two runs of a generation as one: the counts of both, the failures of the second (which
/// tried the first's failures again).
fn merged(first: &Generated, second: Generated) -> Generated {
    Generated {
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
