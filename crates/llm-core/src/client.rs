//! The [`LlmClient`] trait every model client implements, and the usage and metrics it keeps.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use futures_util::future::BoxFuture;

use crate::count::{CountSource, TokenCount};
use crate::error::{ErrorKind, Result};
use crate::stream::EventStream;
use crate::types::{Request, Response, Usage};

/// A model behind some API, or a simulation of one.
///
/// Object-safe, so callers hold `Arc<dyn LlmClient>` and never learn which provider answers.
pub trait LlmClient: Send + Sync {
    /// Sends `request` and waits for the whole answer.
    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<Response>>;

    /// Sends `request` and returns the answer as it is generated. Errors before the first
    /// byte (HTTP status, connection) come from the future; later ones from the stream.
    fn stream<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<EventStream>>;

    /// Usage and metrics since creation or the last reset.
    fn usage_stats(&self) -> UsageStats;

    fn reset_usage_stats(&self);

    /// An offline estimate of the input tokens `request` will cost with this client's model
    /// family: exact where the model's tokenizer is published, else [`crate::tokens`]'s
    /// estimate scaled by the calibration earlier answers taught ([`crate::count`]).
    fn count_tokens(&self, request: &Request) -> u64;

    /// [`LlmClient::count_tokens`] with where the figure comes from: a published tokenizer,
    /// the calibrated estimate, or the estimate alone. By default, an estimate.
    fn count_offline(&self, request: &Request) -> TokenCount {
        TokenCount::new(self.count_tokens(request), CountSource::Estimate)
    }

    /// The input tokens of `request` as the provider counts them, asking it where it has an
    /// endpoint for that (once per distinct request), and saying where the figure comes from.
    /// By default, [`LlmClient::count_tokens`] as an estimate.
    fn count_input<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, Result<TokenCount>> {
        let count = TokenCount::new(self.count_tokens(request), CountSource::Estimate);
        Box::pin(std::future::ready(Ok(count)))
    }

    /// Writes `request`'s prompt to the provider's cache without asking for an answer
    /// (Anthropic's `max_tokens: 0`), so that a later request with the same prefix reads it:
    /// the usage that cost, or `None` where the provider has no such call. `None` by default.
    fn prewarm<'a>(&'a self, _request: &'a Request) -> BoxFuture<'a, Result<Option<Usage>>> {
        Box::pin(std::future::ready(Ok(None)))
    }

    /// The provider's batch API ([`crate::batch`]), when it has one and this client can reach
    /// it; `None` by default.
    fn batches(&self) -> Option<&dyn crate::batch::BatchApi> {
        None
    }
}

/// A snapshot of what a client has spent and suffered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageStats {
    /// Requests that produced a whole answer.
    pub requests: u64,
    /// Requests that ended in an error, after any retries.
    pub failed_requests: u64,
    /// Attempts sent again after a retryable error.
    pub retries: u64,
    /// Tokens by kind, summed over all answers.
    pub usage: Usage,
    /// Every error seen, including ones that a retry then recovered from.
    pub errors: BTreeMap<ErrorKind, u64>,
    /// Time from sending to the last byte of each successful request, summed.
    pub total_duration: Duration,
    pub max_duration: Duration,
    pub last_duration: Option<Duration>,
    /// The latest `anthropic-ratelimit-*` / `x-ratelimit-*` headers the provider sent.
    pub rate_limit_headers: BTreeMap<String, String>,
}

/// The shared, lockable [`UsageStats`] behind a client and its streams.
#[derive(Debug, Default)]
pub(crate) struct StatsCell(Mutex<UsageStats>);

impl StatsCell {
    pub(crate) fn snapshot(&self) -> UsageStats {
        self.lock().clone()
    }

    pub(crate) fn reset(&self) {
        *self.lock() = UsageStats::default();
    }

    pub(crate) fn record_success(&self, duration: Duration, usage: Usage) {
        let mut stats = self.lock();
        stats.requests += 1;
        stats.usage += usage;
        stats.total_duration += duration;
        stats.max_duration = stats.max_duration.max(duration);
        stats.last_duration = Some(duration);
    }

    pub(crate) fn record_error(&self, kind: ErrorKind) {
        *self.lock().errors.entry(kind).or_default() += 1;
    }

    pub(crate) fn record_failure(&self) {
        self.lock().failed_requests += 1;
    }

    pub(crate) fn record_retry(&self) {
        self.lock().retries += 1;
    }

    pub(crate) fn record_rate_limit_headers(&self, headers: &BTreeMap<String, String>) {
        let mut stats = self.lock();
        for (name, value) in headers {
            if name.contains("ratelimit") {
                stats.rate_limit_headers.insert(name.clone(), value.clone());
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, UsageStats> {
        // Counters only; a panic elsewhere cannot leave them in a state worse than stale.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
