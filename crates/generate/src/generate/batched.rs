//! A generation's model calls as provider batches ([`crate::batch::BatchRun`], with a note in
//! the store that lets a killed run pick its batch up), or counted and priced without sending
//! anything (a dry run's [`Estimate`]).
use std::collections::BTreeSet;
use std::time::Duration;

use context::Generated;
use llm_core::BatchApi;
use merkle_store::{NodeRecord, Store};
use serde::Serialize;
use serde_json::Value;

use super::{DEFAULT_AGENT, Generator, Progress, store_error};
use crate::batch::{BatchRun, Batched};
use crate::error::{Error, Result};

/// What a batched generation would send: a dry run's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// Always true: tells this document from a generation's.
    pub dry_run: bool,
    pub calls: EstimatedCalls,
    pub input_tokens: u64,
    /// Every call's answer at `max_tokens`.
    pub output_tokens_at_most: u64,
    /// With a known price.
    pub cost_usd: Option<Cost>,
    pub provider: String,
    /// What was covered.
    pub path: String,
    pub recursive: bool,
    /// The model asked for; empty: the provider's default.
    #[serde(skip)]
    pub model: String,
    /// Frames that needed no call, written by the dry run's pass.
    #[serde(skip)]
    pub written: usize,
}

impl Estimate {
    /// Its one JSON shape.
    pub fn json(&self) -> Value {
        serde_json::to_value(self).expect("an estimate is plain data")
    }
}

/// The calls of an [`Estimate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct EstimatedCalls {
    pub files: usize,
    pub directories: usize,
    pub total: usize,
}

/// What the calls of an [`Estimate`] cost at most, in US dollars.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Cost {
    /// Called one by one, with no prompt cache.
    pub direct: f64,
    /// Called one by one, every call reading the run's shared prefix from the provider's cache
    /// after one pre-warming write of it ([`crate::producer::RunPrefix`]); `direct` when the
    /// prefix is shorter than the model caches.
    pub direct_cached: f64,
    /// On OpenAI's Flex tier (batch prices on synchronous calls), where the model has one.
    pub flex: Option<f64>,
    /// As a batch.
    pub batch: f64,
}

impl Generator {
    /// Runs `pass` in batches until nothing is left to ask; returns the passes' report as one,
    /// and the batches used.
    pub(super) fn batched<E: From<Error>>(
        &self,
        store: &Store,
        api: &dyn BatchApi,
        poll: Duration,
        pass: impl FnMut() -> Result<Generated, E>,
        progress: &dyn Progress,
    ) -> Result<(Generated, Batched), E> {
        let model = self.model.as_ref().expect("a batch API is a model's");
        let queue = self
            .queue
            .as_deref()
            .expect("a batching generator has a queue");
        let run = BatchRun {
            queue,
            api,
            runtime: &model.runtime,
            store,
            note: self.note_name(&model.provider),
            poll,
            interrupt: &model.interrupt,
            progress: &|event| progress.batch(event),
        };
        let (passes, batched) = run.run(pass)?;
        Ok((merged(passes), batched))
    }

    /// The note that keeps a generation's batch in flight: one per type, agent, producer,
    /// policy and provider, so that only the same generation picks it up.
    fn note_name(&self, provider: &str) -> String {
        let agent = self.agent.as_deref().unwrap_or(DEFAULT_AGENT);
        let mut note = merkle_store::Encoder::new("generate-batch");
        for part in [
            self.frame_type.as_str(),
            agent,
            &self.producer.id(),
            &self.policy.id(),
            provider,
        ] {
            note.bytes(part.as_bytes());
        }
        format!("generate-batch:{}", note.finish().to_hex())
    }

    /// What a batched generation would send, from the queue of its first pass (`report`) over
    /// `covered`.
    pub(super) fn estimate(
        &self,
        store: &Store,
        covered: &NodeRecord,
        recursive: bool,
        report: &Generated,
    ) -> Result<Estimate> {
        let model = self
            .model
            .as_ref()
            .expect("a dry run has a model with a batch API");
        let pending = self
            .queue
            .as_ref()
            .map(|queue| queue.take_pending())
            .unwrap_or_default();
        let mut input = 0u64;
        // With a model's directory policy, every directory above a file that needs a call
        // needs one too.
        let mut dirs = BTreeSet::new();
        let llm_dirs = self.policy.id().starts_with("llm-synthesis");
        for (_, call) in &pending {
            input += model.client.count_tokens(&call.request);
            if !llm_dirs {
                continue;
            }
            let below = |dir: &str| {
                covered.path.is_empty() || dir.starts_with(&format!("{}/", covered.path))
            };
            let mut path = call.label.as_str();
            while !path.is_empty() && path != covered.path {
                let parent = path.rsplit_once('/').map_or("", |(parent, _)| parent);
                if parent != covered.path && !(recursive && below(parent)) {
                    break;
                }
                dirs.insert(parent.to_owned());
                path = parent;
            }
        }
        // A directory's prompt holds its children's frames, each at most max_tokens.
        for dir in &dirs {
            let children = store.list_nodes(dir, false).map_err(store_error)?.len() as u64;
            input += (children * u64::from(self.max_tokens)).min(self.max_input_tokens) + 100;
        }
        let calls = pending.len() + dirs.len();
        let output = calls as u64 * u64::from(self.max_tokens);
        // The tokens every call shares before its own text, cached when long enough.
        let prefix = {
            let shared = llm_core::Request {
                model: model.model.clone(),
                system: Some(model.settings.prefix.system().0),
                ..llm_core::Request::default()
            };
            let tokens = model.client.count_tokens(&shared);
            let cacheable = llm_core::cache_rules::min_cacheable_tokens(&model.model);
            if model.settings.prompt_cache && tokens >= cacheable {
                tokens
            } else {
                0
            }
        };
        let usage = llm_core::Usage {
            input_tokens: input,
            output_tokens: output,
            ..llm_core::Usage::default()
        };
        Ok(Estimate {
            dry_run: true,
            calls: EstimatedCalls {
                files: pending.len(),
                directories: dirs.len(),
                total: calls,
            },
            input_tokens: input,
            output_tokens_at_most: output,
            cost_usd: self.price.map(|p| Cost {
                direct: p.cost(&usage),
                direct_cached: p.cost(&cached_usage(usage, calls as u64, prefix)),
                flex: p.flex_factor.map(|f| p.cost(&usage) * f),
                batch: p.cost(&usage) * p.batch_factor,
            }),
            provider: model.provider.clone(),
            path: covered.path.clone(),
            recursive,
            model: model.model.clone(),
            written: report.produced + report.reused + report.synthesized + report.synthesis_reused,
        })
    }
}

/// `usage` of `calls` direct calls when each reads a shared `prefix` of tokens from the cache,
/// written once for an hour by a pre-warming call.
fn cached_usage(usage: llm_core::Usage, calls: u64, prefix: u64) -> llm_core::Usage {
    let read = prefix * calls;
    llm_core::Usage {
        input_tokens: usage.input_tokens.saturating_sub(read),
        cache_read_input_tokens: read.min(usage.input_tokens),
        cache_creation_input_tokens: prefix,
        cache_creation_1h_input_tokens: prefix,
        ..usage
    }
}

/// The passes of a batched generation as one report: what each did, with the failures and
/// deferrals of the last; every pass after the first finds the earlier ones' work up to date.
fn merged(passes: Vec<Generated>) -> Generated {
    let mut all = Generated::default();
    for (i, pass) in passes.iter().enumerate() {
        if i == 0 {
            all.up_to_date = pass.up_to_date;
            all.visited = pass.visited;
        }
        all.produced += pass.produced;
        all.reused += pass.reused;
        all.synthesized += pass.synthesized;
        all.synthesis_reused += pass.synthesis_reused;
        all.created += pass.created;
    }
    if let Some(last) = passes.last() {
        all.failed.clone_from(&last.failed);
        all.deferred = last.deferred;
    }
    all
}
