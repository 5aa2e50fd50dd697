//! Frames written by a model: [`LlmProducer`] (a file's frame from its content) and
//! [`LlmSynthesis`] (a directory's frame from its children's), plugged into context's
//! `FrameProducer` and `SynthesisPolicy` traits so that `generate`, `synthesize` and
//! `regenerate` drive them like the offline ones.
//!
//! Those traits are synchronous (context has no async runtime), so each call blocks its thread
//! on the model's answer through a tokio runtime handle owned by the caller. `generate` calls
//! producers from its worker threads, so its thread count is the number of calls in flight;
//! llm-core's rate limiter and retries still apply to each.
//!
//! A producer's id names the model and a hash of its prompt template, so frames made with
//! another model or prompt are other work: context memoizes by (id, content, type, agent), and
//! a renamed, duplicated or reverted file costs no call. What a prompt shows of a path is part
//! of the memo key (`FrameProducer::path_input`, `SynthesisPolicy::reads_names`): the default
//! prompts show none, only a file's language, so a rename costs no call anywhere and a reused
//! frame never names a file by its old name; a template naming `{path}` pays for renames.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use context::{FrameProducer, Provenance, SynthesisInput, SynthesisPolicy};
use std::time::Duration;

use llm_core::{
    CacheMarks, CacheTtl, LlmClient, Message, Price, Request, Response, ServiceTier, Usage,
};
use merkle_store::{NodeKind, NodeRecord};

use crate::batch::{Asked, BatchQueue};

/// The default prompt for a file's frame. `{type}`, `{language}` (what the file's name
/// suggests: `Rust`, `Makefile`, `text`...) and `{content}` are replaced, and `{path}` if a
/// template names it.
///
/// This one shows no path: a file's frame is then memoized on its content and language, and a
/// renamed, moved or duplicated file costs no call. A template with `{path}` pays a call for
/// each of those, but its frames can name the file.
pub const FILE_TEMPLATE: &str = "Write the {type} of a {language} file for a coding agent \
that has not read it: what the file is for, its main items (types, functions, sections) and how \
they are used. Plain text, at most 120 words, no preamble; do not name the file, its name is \
shown beside your text.\n\n<file>\n{content}\n</file>\n";

/// The default prompt for a directory's frame. `{type}` and `{children}` (each child's kind
/// and frame) are replaced, and `{path}` if a template names it.
///
/// This one leaves out every name, the directory's and its children's: the model's overview is
/// then a function of the children's frames alone, memoized on them, so renaming or moving an
/// unchanged file costs no call anywhere above it. The frame still names each child: context
/// appends a contents list (names and first lines) to the overview. A template with `{path}`
/// is memoized with names, and a rename costs a call per directory above it.
pub const DIR_TEMPLATE: &str = "Write the {type} of a directory for a coding agent, from the \
{type} of each of its children below (files and subdirectories, in no particular order): what \
the directory holds and how its parts fit together. Name no files: a list of them follows your \
text. Plain text, at most 120 words, no preamble.\n\n{children}\n";

const SYSTEM: &str = "You write short, factual context for software repositories. Describe \
only what the given text shows.";

/// Calls, tokens and cost of a model's frames so far, for progress and reports.
#[derive(Debug, Default)]
pub struct LlmStats {
    calls: AtomicU64,
    usage: Mutex<Usage>,
    /// The part of `usage` answered in batches, billed at [`Price::batch_factor`].
    batch_usage: Mutex<Usage>,
    /// The part of `usage` that OpenAI's Flex tier processed, billed at [`Price::flex_factor`].
    flex_usage: Mutex<Usage>,
    /// Flex calls refused for capacity that waited and were sent again.
    flex_waits: AtomicU64,
    price: Option<Price>,
    /// The model named by the latest answer.
    model: Mutex<Option<String>>,
}

impl LlmStats {
    pub fn new(price: Option<Price>) -> LlmStats {
        LlmStats {
            price,
            ..LlmStats::default()
        }
    }

    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    pub fn usage(&self) -> Usage {
        *self.usage.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The part of [`LlmStats::usage`] answered in batches.
    pub fn batch_usage(&self) -> Usage {
        *self.batch_usage.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The part of [`LlmStats::usage`] that the Flex tier processed.
    pub fn flex_usage(&self) -> Usage {
        *self.flex_usage.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Flex calls refused for capacity that waited and were sent again.
    pub fn flex_waits(&self) -> u64 {
        self.flex_waits.load(Ordering::Relaxed)
    }

    /// The estimated cost in US dollars, when a price is known: batched calls at the batch
    /// price, Flex calls at the Flex price (the batch price where the table has none).
    pub fn cost_usd(&self) -> Option<f64> {
        self.price.map(|p| {
            let batch = self.batch_usage();
            let flex = self.flex_usage();
            let direct = less(&less(&self.usage(), &batch), &flex);
            p.cost(&direct)
                + p.cost(&batch) * p.batch_factor
                + p.cost(&flex) * p.flex_factor.unwrap_or(p.batch_factor)
        })
    }

    fn record(&self, response: &Response, batched: bool) {
        let (usage, model) = (&response.usage, response.model.as_str());
        self.calls.fetch_add(1, Ordering::Relaxed);
        self.record_tokens(usage);
        if batched {
            *self.batch_usage.lock().unwrap_or_else(|e| e.into_inner()) += *usage;
        }
        if response.service_tier.as_deref() == Some(ServiceTier::Flex.as_str()) {
            *self.flex_usage.lock().unwrap_or_else(|e| e.into_inner()) += *usage;
        }
        if !model.is_empty() {
            *self.model.lock().unwrap_or_else(|e| e.into_inner()) = Some(model.to_owned());
        }
    }

    /// Counts the tokens of a call that wrote no frame (the run's pre-warming call).
    fn record_tokens(&self, usage: &Usage) {
        *self.usage.lock().unwrap_or_else(|e| e.into_inner()) += *usage;
    }

    /// The model the latest answer named, if any answer named one.
    pub fn model(&self) -> Option<String> {
        self.model.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// `whole` without `part`'s tokens.
fn less(whole: &Usage, part: &Usage) -> Usage {
    Usage {
        input_tokens: whole.input_tokens.saturating_sub(part.input_tokens),
        output_tokens: whole.output_tokens.saturating_sub(part.output_tokens),
        cache_creation_input_tokens: whole
            .cache_creation_input_tokens
            .saturating_sub(part.cache_creation_input_tokens),
        cache_read_input_tokens: whole
            .cache_read_input_tokens
            .saturating_sub(part.cache_read_input_tokens),
        reasoning_tokens: whole.reasoning_tokens.saturating_sub(part.reasoning_tokens),
        cache_creation_1h_input_tokens: whole
            .cache_creation_1h_input_tokens
            .saturating_sub(part.cache_creation_1h_input_tokens),
    }
}

/// How long a Flex call refused for capacity waits before each next try: about five minutes
/// in all, the wait OpenAI suggests backing off over, before the run reports the file failed.
pub const FLEX_WAITS: [Duration; 10] = [
    Duration::from_secs(1),
    Duration::from_secs(2),
    Duration::from_secs(4),
    Duration::from_secs(8),
    Duration::from_secs(15),
    Duration::from_secs(30),
    Duration::from_secs(60),
    Duration::from_secs(60),
    Duration::from_secs(60),
    Duration::from_secs(60),
];

/// What the LLM producers share: the client, the runtime to wait on it, the model and limits.
#[derive(Clone)]
pub struct LlmSettings {
    pub client: Arc<dyn LlmClient>,
    /// A handle of a multi-threaded runtime: producers block on it from other threads.
    pub runtime: tokio::runtime::Handle,
    /// The model; empty: the client's default. Part of every producer id.
    pub model: String,
    /// Who answers (`anthropic`, `openai`, `sim`, `playback`, ...), recorded in every frame.
    pub provider: String,
    /// The most tokens of file content (or children's frames) sent; the rest is cut with a
    /// marker.
    pub max_input_tokens: u64,
    /// The frame's token limit.
    pub max_tokens: u32,
    pub stats: Arc<LlmStats>,
    /// Set it (on Ctrl-C) to stop making calls: calls not yet started fail as interrupted,
    /// calls in flight finish, and `generate` puts every frame that finished.
    pub interrupt: Arc<AtomicBool>,
    /// Send the calls in batches ([`crate::batch`]): answered from this queue, or queued.
    pub batch: Option<Arc<BatchQueue>>,
    /// The repository map every call of a run shows after the instructions ([`RunPrefix`]).
    pub prefix: RunPrefix,
    /// Mark the shared prefix for the provider's cache, and pre-warm it.
    pub prompt_cache: bool,
    /// The tier every call asks for.
    pub service_tier: Option<ServiceTier>,
}

/// What every call of one run shares before its own text: the instructions and a map of the
/// workspace's files, which helps a summary place its file and makes the prefix long enough
/// for the provider's cache (marked for an hour: a run takes minutes). Set once a run knows
/// its tree ([`RunPrefix::set_map`]); the map is context, not input, so frames stay memoized
/// on their content as before.
#[derive(Debug, Clone, Default)]
pub struct RunPrefix {
    /// The system prompt with the map, and the cache key naming it: built once per run, not
    /// per call.
    map: Arc<std::sync::RwLock<Option<SharedPrompt>>>,
    /// Set by the run's first direct call once it has written the prefix to the cache; the
    /// calls made meanwhile wait for it.
    warmed: Arc<std::sync::OnceLock<()>>,
}

/// A run's system prompt with its map, and the cache key naming it.
#[derive(Debug)]
struct SharedPrompt {
    system: Arc<str>,
    key: Arc<str>,
}

/// The most bytes of paths the map shows (about 6,000 tokens); the rest is counted.
const MAP_BYTES: usize = 24 * 1024;

impl RunPrefix {
    /// Shows `paths` (the workspace's files, in order) to every call from now on.
    pub fn set_map<'a>(&self, paths: impl ExactSizeIterator<Item = &'a str>) {
        let total = paths.len();
        let mut map = String::from("The repository's files:\n");
        let mut shown = 0;
        for path in paths {
            if map.len() + path.len() + 1 > MAP_BYTES {
                break;
            }
            map.push_str(path);
            map.push('\n');
            shown += 1;
        }
        if shown < total {
            let _ = writeln!(map, "... and {} more", total - shown);
        }
        let system = format!("{SYSTEM}\n\n{map}");
        let key = cache_key(&system);
        let prompt = SharedPrompt {
            system: system.into(),
            key: key.into(),
        };
        *self.map.write().unwrap_or_else(|e| e.into_inner()) = Some(prompt);
    }

    /// The system prompt (the instructions, then the map when one is set) and the cache key
    /// naming it.
    pub(crate) fn system(&self) -> (String, String) {
        match &*self.map.read().unwrap_or_else(|e| e.into_inner()) {
            Some(p) => (p.system.to_string(), p.key.to_string()),
            None => (SYSTEM.to_owned(), cache_key(SYSTEM)),
        }
    }
}

/// OpenAI's cache key for calls sharing the system prompt `system`: it keeps them on one cache.
fn cache_key(system: &str) -> String {
    format!(
        "merkle-generate-{}",
        &blake3::hash(system.as_bytes()).to_hex()[..16]
    )
}

/// The error of a call not made because the run was interrupted.
pub const INTERRUPTED: &str = "interrupted before the model was called";

impl std::fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmSettings")
            .field("model", &self.model)
            .field("max_input_tokens", &self.max_input_tokens)
            .field("max_tokens", &self.max_tokens)
            .finish_non_exhaustive()
    }
}

impl LlmSettings {
    /// Sends `prompt` (for `label`, a path) and returns the answer's text, counting the call;
    /// in a batched run, answers from the batch or queues the call ([`context::DEFERRED`]).
    fn ask(&self, prompt: String, label: &str) -> Result<Vec<u8>, String> {
        if self.interrupt.load(Ordering::SeqCst) {
            return Err(INTERRUPTED.to_owned());
        }
        let request = self.request(prompt);
        if self.batch.is_none() && self.prompt_cache {
            self.prefix.warmed.get_or_init(|| self.warm());
        }
        let response = match &self.batch {
            Some(queue) => match queue.ask(&request, label) {
                Asked::Answer(response) => response,
                Asked::Failed(message) => return Err(message),
                Asked::Deferred => return Err(context::DEFERRED.to_owned()),
            },
            None => self.complete(&request)?,
        };
        self.stats.record(&response, self.batch.is_some());
        let text = response.text();
        if text.trim().is_empty() {
            return Err("the model answered with no text".to_owned());
        }
        Ok(text.into_bytes())
    }

    /// One direct call. Refused for Flex capacity, it waits ([`FLEX_WAITS`], counted in
    /// [`LlmStats::flex_waits`]) and goes again, unless the run is interrupted meanwhile.
    fn complete(&self, request: &Request) -> Result<Response, String> {
        let mut waits = FLEX_WAITS.iter();
        loop {
            match self.runtime.block_on(self.client.complete(request)) {
                Err(llm_core::Error::CapacityUnavailable { .. })
                    if !self.interrupt.load(Ordering::SeqCst)
                        && let Some(wait) = waits.next() =>
                {
                    self.stats.flex_waits.fetch_add(1, Ordering::Relaxed);
                    self.pause(*wait);
                }
                answer => return answer.map_err(|e| e.to_string()),
            }
        }
    }

    /// Sleeps for `wait`, or less once the run is interrupted.
    fn pause(&self, wait: Duration) {
        let step = Duration::from_millis(50);
        let mut slept = Duration::ZERO;
        while slept < wait && !self.interrupt.load(Ordering::SeqCst) {
            std::thread::sleep(step.min(wait - slept));
            slept += step;
        }
    }

    /// A call of this run: the shared prefix, cached, then `prompt`. The prefix alone is
    /// marked (GPT-5.6 then writes no breakpoint after the file, whose tail no other call
    /// shares), and OpenAI's cache key names it, which keeps the calls on one cache.
    fn request(&self, prompt: String) -> Request {
        let (system, key) = self.prefix.system();
        Request {
            model: self.model.clone(),
            cache_key: self.prompt_cache.then_some(key),
            system: Some(system),
            cache: if self.prompt_cache {
                CacheMarks {
                    system: true,
                    ttl: CacheTtl::OneHour,
                    ..CacheMarks::default()
                }
            } else {
                CacheMarks::default()
            },
            messages: vec![Message::user(prompt)],
            max_tokens: self.max_tokens,
            service_tier: self.service_tier,
            ..Request::default()
        }
    }

    /// Writes the run's shared prefix to the provider's cache before the calls start, so that
    /// the calls in flight at once read it rather than each writing it; its tokens count, it
    /// is not one of the run's calls.
    /// Nothing where the provider has no pre-warming call (OpenAI caches the first call's).
    fn warm(&self) {
        let request = self.request("Start.".to_owned());
        if let Ok(Some(usage)) = self.runtime.block_on(self.client.prewarm(&request)) {
            self.stats.record_tokens(&usage);
        }
    }

    fn id(&self, kind: &str, template: &str) -> String {
        let model = if self.model.is_empty() {
            "default"
        } else {
            &self.model
        };
        let hash = blake3::hash(template.as_bytes()).to_hex();
        // The simulator's frames are not a model's: a real model's run replaces them.
        let sim = if self.provider == "sim" { "-sim" } else { "" };
        format!("{kind}{sim}:{model}:{}", &hash[..16])
    }

    /// The provider, and the model that answered (else the one asked for).
    fn provenance(&self) -> Provenance {
        Provenance {
            provider: Some(self.provider.clone()).filter(|p| !p.is_empty()),
            model: self
                .stats
                .model()
                .or_else(|| Some(self.model.clone()).filter(|m| !m.is_empty())),
        }
    }

    fn max_input_bytes(&self) -> usize {
        usize::try_from(self.max_input_tokens.saturating_mul(4)).unwrap_or(usize::MAX)
    }
}

/// A file's frame written by the model from the file's content.
#[derive(Debug, Clone)]
pub struct LlmProducer {
    pub settings: LlmSettings,
    /// The frame type, for the prompt.
    pub frame_type: String,
    pub template: String,
}

impl FrameProducer for LlmProducer {
    fn id(&self) -> String {
        self.settings.id("llm", &self.template)
    }

    fn provenance(&self) -> Provenance {
        self.settings.provenance()
    }

    fn produce(&self, node: &NodeRecord, content: &[u8]) -> Result<Vec<u8>, String> {
        if node.kind == NodeKind::Symlink {
            // Its content is where it points: nothing to ask a model.
            return Ok(format!("symlink to {}", String::from_utf8_lossy(content)).into_bytes());
        }
        let Ok(text) = std::str::from_utf8(content) else {
            // Not text: nothing a model can read, and no call to pay for.
            // No path in it: a frame is reused wherever the same content is (a rename).
            return Ok(format!("binary, {} bytes", content.len()).into_bytes());
        };
        let shown = cut(text, self.settings.max_input_bytes());
        let prompt = self
            .template
            .replace("{path}", &node.path)
            .replace("{language}", context::language(&node.path))
            .replace("{type}", &self.frame_type)
            .replace("{content}", &shown);
        self.settings.ask(prompt, &node.path)
    }

    fn path_input(&self, path: &str) -> String {
        if self.template.contains("{path}") {
            path.to_owned()
        } else if self.template.contains("{language}") {
            context::language(path).to_owned()
        } else {
            String::new()
        }
    }
}

/// A directory's frame written by the model from its children's frames.
#[derive(Debug, Clone)]
pub struct LlmSynthesis {
    pub settings: LlmSettings,
    pub template: String,
}

impl SynthesisPolicy for LlmSynthesis {
    fn id(&self) -> String {
        self.settings.id("llm-synthesis", &self.template)
    }

    fn provenance(&self) -> Provenance {
        self.settings.provenance()
    }

    fn reads_names(&self) -> bool {
        self.template.contains("{path}")
    }

    fn synthesize(&self, input: &SynthesisInput<'_>) -> Result<Vec<u8>, String> {
        if input.children.is_empty() {
            // Stable and free: an empty directory has nothing to summarize.
            return Ok(b"An empty directory.".to_vec());
        }
        let mut children = String::new();
        for child in input.children {
            // Without names (the default template), a child is its kind.
            let name = match (child.path.as_str(), child.kind) {
                ("", NodeKind::Dir) => "a directory",
                ("", _) => "a file",
                (path, _) => path,
            };
            let _ = write!(
                children,
                "## {name} ({})\n{}\n\n",
                child.frame.frame_type,
                String::from_utf8_lossy(child.body()).trim_end()
            );
        }
        let shown = cut(&children, self.settings.max_input_bytes());
        let path = if input.dir.path.is_empty() {
            "."
        } else {
            &input.dir.path
        };
        let prompt = self
            .template
            .replace("{path}", path)
            .replace("{type}", input.frame_type)
            .replace("{children}", &shown);
        self.settings.ask(prompt, &input.dir.path)
    }
}

/// `text` cut to at most `max` bytes on a character boundary, with a marker saying how much.
fn cut(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return std::borrow::Cow::Borrowed(text);
    }
    let end = text.floor_char_boundary(max);
    std::borrow::Cow::Owned(format!(
        "{}\n[... truncated: {end} of {} bytes shown]",
        &text[..end],
        text.len()
    ))
}
