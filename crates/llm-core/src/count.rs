//! Token counts that say where they come from ([`TokenCount`]): the provider's own count where
//! it answers one, the model's published tokenizer where there is one, else the estimate of
//! [`crate::tokens`] scaled by a per-model [`Calibration`] learnt from the `usage` of earlier
//! answers.
//!
//! A client counts a request with `LlmClient::count_input` (asking the provider, once per
//! distinct request: [`CountCache`]) and estimates it offline with `LlmClient::count_tokens`,
//! which the calibration corrects. Every successful answer teaches the calibration the ratio
//! between the provider's count of its input and the estimate of the same request, so after a
//! few calls the offline figure tracks the provider's tokenizer, which is unpublished for
//! Claude. Callers keep the calibration between runs ([`Calibration`] is serde).

use std::collections::{BTreeMap, HashMap};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};

/// Where a token count comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CountSource {
    /// The provider counted it: Anthropic's `/v1/messages/count_tokens`, OpenAI's
    /// `/v1/responses/input_tokens`.
    Provider,
    /// The model's published tokenizer (tiktoken's encodings, for OpenAI models).
    Tokenizer,
    /// The estimate, scaled by what the provider's counts of earlier answers showed.
    Calibrated,
    /// The estimate alone: no provider count of this model seen yet.
    Estimate,
}

impl CountSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Provider => "provider",
            Self::Tokenizer => "tokenizer",
            Self::Calibrated => "calibrated",
            Self::Estimate => "estimate",
        }
    }

    /// Whether the count is the provider's own (its endpoint, or its published tokenizer),
    /// not an estimate.
    pub fn is_exact(self) -> bool {
        matches!(self, Self::Provider | Self::Tokenizer)
    }
}

/// A request's input tokens, and where the figure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenCount {
    pub tokens: u64,
    pub source: CountSource,
}

impl TokenCount {
    pub fn new(tokens: u64, source: CountSource) -> Self {
        Self { tokens, source }
    }
}

/// What the provider counted against what was estimated, summed over a model's calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Sample {
    pub estimated: u64,
    pub counted: u64,
    pub calls: u64,
}

/// Per model, the ratio of the provider's input counts to the estimate of the same requests.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub models: BTreeMap<String, Sample>,
}

/// Past this many calls, a model's sums are halved, so the ratio follows a tokenizer that
/// changed under the same name rather than averaging over all history.
const HALVE_AFTER: u64 = 64;

impl Calibration {
    /// Learns from one answer: the provider counted `counted` input tokens for a request
    /// estimated at `estimated`.
    pub fn observe(&mut self, model: &str, estimated: u64, counted: u64) {
        if model.is_empty() || estimated == 0 || counted == 0 {
            return;
        }
        let sample = self.models.entry(model.to_owned()).or_default();
        if sample.calls >= HALVE_AFTER {
            sample.estimated /= 2;
            sample.counted /= 2;
            sample.calls /= 2;
        }
        sample.estimated += estimated;
        sample.counted += counted;
        sample.calls += 1;
    }

    /// The provider's tokens per estimated token for `model`, once it has been seen.
    pub fn ratio(&self, model: &str) -> Option<f64> {
        let sample = self.models.get(model)?;
        (sample.estimated > 0 && sample.calls > 0)
            .then(|| sample.counted as f64 / sample.estimated as f64)
    }

    /// The estimate `estimate` for `model`, scaled when the model has been seen.
    pub fn apply(&self, model: &str, estimate: u64) -> TokenCount {
        match self.ratio(model) {
            Some(ratio) => TokenCount::new(scaled(estimate, ratio), CountSource::Calibrated),
            None => TokenCount::new(estimate, CountSource::Estimate),
        }
    }
}

/// `estimate` scaled by a model's `ratio` of provider tokens to estimated ones.
fn scaled(estimate: u64, ratio: f64) -> u64 {
    (estimate as f64 * ratio).round() as u64
}

/// Counts plain text (a context bundle, a prompt's part) in one model's tokens, offline: with
/// the model's published tokenizer where it has one, else o200k scaled by what the model's
/// answers taught the [`Calibration`], else o200k alone. [`TextCounter::source`] says which.
#[derive(Debug, Clone, Copy)]
pub struct TextCounter {
    encoding: crate::tokens::Encoding,
    ratio: Option<f64>,
    source: CountSource,
}

impl TextCounter {
    pub fn new(model: &str, calibration: &Calibration) -> Self {
        use crate::tokens::Encoding;
        match Encoding::for_model(model) {
            Some(encoding) => Self {
                encoding,
                ratio: None,
                source: CountSource::Tokenizer,
            },
            None => {
                let ratio = calibration.ratio(model);
                Self {
                    encoding: Encoding::O200k,
                    ratio,
                    source: if ratio.is_some() {
                        CountSource::Calibrated
                    } else {
                        CountSource::Estimate
                    },
                }
            }
        }
    }

    /// `text`'s tokens.
    pub fn count(&self, text: &str) -> u64 {
        let tokens = self.encoding.count(text);
        self.ratio.map_or(tokens, |ratio| scaled(tokens, ratio))
    }

    pub fn source(&self) -> CountSource {
        self.source
    }
}

/// A [`Calibration`] shared by the clients of one process, which every answer updates.
#[derive(Debug, Default)]
pub struct Calibrator(Mutex<Calibration>);

impl Calibrator {
    pub fn new(calibration: Calibration) -> Self {
        Self(Mutex::new(calibration))
    }

    pub fn observe(&self, model: &str, estimated: u64, counted: u64) {
        self.lock().observe(model, estimated, counted);
    }

    pub fn apply(&self, model: &str, estimate: u64) -> TokenCount {
        self.lock().apply(model, estimate)
    }

    /// What has been learnt so far, to keep.
    pub fn snapshot(&self) -> Calibration {
        self.lock().clone()
    }

    fn lock(&self) -> MutexGuard<'_, Calibration> {
        // Sums only: a panic elsewhere cannot leave them worse than one call behind.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The provider's counts of requests already counted, by a hash of the body sent, so that a
/// prompt is counted once per process.
#[derive(Debug, Default)]
pub struct CountCache(Mutex<HashMap<u64, u64>>);

/// The most counts kept; past it the cache starts again (a count is cheap to ask again).
const MAX_COUNTS: usize = 4096;

impl CountCache {
    /// The key of a count request's body.
    pub fn key(body: &str) -> u64 {
        let mut hasher = DefaultHasher::new();
        body.hash(&mut hasher);
        hasher.finish()
    }

    pub fn get(&self, key: u64) -> Option<u64> {
        self.lock().get(&key).copied()
    }

    pub fn insert(&self, key: u64, tokens: u64) {
        let mut counts = self.lock();
        if counts.len() >= MAX_COUNTS {
            counts.clear();
        }
        counts.insert(key, tokens);
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<u64, u64>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::{Calibration, CountCache, CountSource, HALVE_AFTER};

    #[test]
    fn a_seen_model_is_scaled_and_an_unseen_one_is_left_as_estimated() {
        let mut calibration = Calibration::default();
        assert_eq!(calibration.apply("m", 100).source, CountSource::Estimate);
        calibration.observe("m", 1000, 1100);
        calibration.observe("m", 3000, 3300);
        let count = calibration.apply("m", 100);
        assert_eq!((count.tokens, count.source), (110, CountSource::Calibrated));
        assert_eq!(calibration.apply("other", 100).tokens, 100);
        // Nothing to learn from an empty model name or a zero.
        calibration.observe("", 10, 20);
        calibration.observe("m", 0, 20);
        assert_eq!(calibration.models.len(), 1);
        assert_eq!(calibration.models["m"].calls, 2);
    }

    #[test]
    fn old_calls_weigh_less_once_a_model_has_many() {
        let mut calibration = Calibration::default();
        for _ in 0..HALVE_AFTER {
            calibration.observe("m", 100, 100);
        }
        for _ in 0..HALVE_AFTER {
            calibration.observe("m", 100, 130);
        }
        let ratio = calibration.ratio("m").expect("seen");
        assert!(ratio > 1.2, "{ratio}");
    }

    #[test]
    fn the_count_cache_keys_by_body_and_stays_bounded() {
        let cache = CountCache::default();
        let key = CountCache::key("{\"model\":\"m\"}");
        assert_eq!(key, CountCache::key("{\"model\":\"m\"}"));
        assert_ne!(key, CountCache::key("{\"model\":\"n\"}"));
        cache.insert(key, 7);
        assert_eq!(cache.get(key), Some(7));
        for i in 0..super::MAX_COUNTS as u64 {
            cache.insert(i + 1_000_000, i);
        }
        assert!(cache.0.lock().expect("lock").len() <= super::MAX_COUNTS);
    }
}
