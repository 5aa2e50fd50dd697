//! [`SimulatedClient`]: the [`LlmClient`] trait answered by a strategy, with a call history
//! and usage stats like a real client's.

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use llm_core::{Event, EventStream, LlmClient, Request, Response, UsageStats};

use crate::cache::PromptCache;
use crate::error::Result;
use crate::reply::Reply;
use crate::script::{Script, Step};
use crate::source::load_strategy;
use crate::strategy::{Scripted, Strategy};

/// The provider name simulated errors carry.
pub const PROVIDER: &str = "simulated";

/// One call the client received.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// From 1, since the client was created.
    pub number: u64,
    pub request: Request,
    /// Whether it came through `stream` rather than `complete`.
    pub streamed: bool,
}

impl Call {
    pub fn system(&self) -> Option<&str> {
        self.request.system.as_deref()
    }

    /// The names of the tools offered, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.request
            .tools
            .iter()
            .map(|tool| tool.name.as_str())
            .collect()
    }
}

#[derive(Debug, Default)]
struct State {
    calls: u64,
    history: Vec<Call>,
}

/// A model that answers from a [`Strategy`] without any network.
#[derive(Debug)]
pub struct SimulatedClient {
    strategy: Mutex<Box<dyn Strategy>>,
    state: Mutex<State>,
    stats: Arc<Mutex<UsageStats>>,
    /// What requests with cache breakpoints (or a cache key) would find cached.
    cache: Mutex<PromptCache>,
}

impl SimulatedClient {
    pub fn new(strategy: impl Strategy + 'static) -> Self {
        Self::from_boxed(Box::new(strategy))
    }

    pub fn from_boxed(strategy: Box<dyn Strategy>) -> Self {
        Self {
            strategy: Mutex::new(strategy),
            state: Mutex::default(),
            stats: Arc::default(),
            cache: Mutex::default(),
        }
    }

    /// The same client with its prompt cache's five minutes measured by `clock`.
    pub fn with_cache_clock(self, clock: Arc<dyn llm_core::Clock>) -> Self {
        Self {
            cache: Mutex::new(PromptCache::new(clock)),
            ..self
        }
    }

    /// A client following `script`.
    pub fn scripted(script: Script) -> Self {
        Self::new(Scripted::new(script))
    }

    /// A client answering from a script, a recording or a pattern file (see
    /// [`crate::load_strategy`]).
    pub fn from_file(path: &Path) -> Result<Self> {
        Ok(Self::from_boxed(load_strategy(path)?))
    }

    /// A client whose every answer is `"Simulated response"`.
    pub fn fixed() -> Self {
        Self::new(Fixed)
    }

    /// Every call so far, oldest first.
    pub fn history(&self) -> Vec<Call> {
        lock(&self.state).history.clone()
    }

    pub fn clear_history(&self) {
        lock(&self.state).history.clear();
    }

    /// Calls received since creation (not reset with the usage stats).
    pub fn call_count(&self) -> u64 {
        lock(&self.state).calls
    }

    /// Takes the call and asks the strategy for its reply.
    fn next_reply(&self, request: &Request, streamed: bool) -> llm_core::Result<Reply> {
        let number = {
            let mut state = lock(&self.state);
            state.calls += 1;
            let number = state.calls;
            state.history.push(Call {
                number,
                request: request.clone(),
                streamed,
            });
            number
        };
        let mut reply =
            lock(&self.strategy)
                .reply(number, request)
                .map_err(|err| llm_core::Error::Config {
                    details: err.to_string(),
                })?;
        if let Reply::Answer(answer) = &mut reply {
            crate::structured::fit_answer(request, &mut answer.response);
            lock(&self.cache).apply(request, &mut answer.response.usage);
        }
        Ok(reply)
    }

    fn record(stats: &Mutex<UsageStats>, result: Result<&Response, &llm_core::Error>) {
        let mut stats = lock(stats);
        match result {
            Ok(response) => {
                stats.requests += 1;
                stats.usage += response.usage;
            }
            Err(error) => {
                stats.failed_requests += 1;
                *stats.errors.entry(error.kind()).or_default() += 1;
            }
        }
    }
}

impl LlmClient for SimulatedClient {
    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, llm_core::Result<Response>> {
        let result = self
            .next_reply(request, false)
            .and_then(|reply| match reply {
                Reply::Answer(answer) => answer.into_result(PROVIDER),
                Reply::Failure(failure) => Err(failure.to_error(PROVIDER)),
            });
        Self::record(&self.stats, result.as_ref());
        Box::pin(std::future::ready(result))
    }

    fn stream<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, llm_core::Result<EventStream>> {
        let events = match self.next_reply(request, true) {
            Ok(Reply::Answer(answer)) => answer.events(PROVIDER),
            Ok(Reply::Failure(failure)) => {
                let error = failure.to_error(PROVIDER);
                Self::record(&self.stats, Err(&error));
                return Box::pin(std::future::ready(Err(error)));
            }
            Err(error) => {
                Self::record(&self.stats, Err(&error));
                return Box::pin(std::future::ready(Err(error)));
            }
        };
        // Usage is counted as the stream is read, like a real client's: a stream dropped
        // half way counts as neither success nor failure.
        let stats = Arc::clone(&self.stats);
        let mut builder = llm_core::ResponseBuilder::default();
        let stream = futures_util::stream::iter(events).map(move |item| {
            match &item {
                Ok(event) => {
                    builder.push(event.clone());
                    if matches!(event, Event::Stop { .. }) {
                        Self::record(&stats, Ok(builder.response()));
                    }
                }
                Err(error) => Self::record(&stats, Err(error)),
            }
            item
        });
        Box::pin(std::future::ready(Ok(Box::pin(stream) as EventStream)))
    }

    fn usage_stats(&self) -> UsageStats {
        lock(&self.stats).clone()
    }

    fn reset_usage_stats(&self) {
        *lock(&self.stats) = UsageStats::default();
    }

    fn count_tokens(&self, request: &Request) -> u64 {
        llm_core::tokens::estimate_request(request)
    }

    /// Bills the prompt as the cache would and answers nothing: the strategy is not asked and
    /// the call is not numbered, as a pre-warming call generates no answer.
    fn prewarm<'a>(
        &'a self,
        request: &'a Request,
    ) -> BoxFuture<'a, llm_core::Result<Option<llm_core::Usage>>> {
        if !llm_core::cache_rules::can_prewarm(&request.model) {
            return Box::pin(std::future::ready(Ok(None)));
        }
        let mut usage = llm_core::Usage {
            input_tokens: llm_core::tokens::estimate_request(request),
            ..llm_core::Usage::default()
        };
        lock(&self.cache).apply(request, &mut usage);
        let response = Response {
            usage,
            ..Response::default()
        };
        Self::record(&self.stats, Ok(&response));
        Box::pin(std::future::ready(Ok(Some(usage))))
    }
}

/// The answer of a client with no script.
#[derive(Debug, Clone, Copy)]
struct Fixed;

impl Strategy for Fixed {
    fn reply(&mut self, call: u64, request: &Request) -> Result<Reply> {
        Ok(Step::text("Simulated response").reply(call, request))
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // History and counters only; a panic elsewhere leaves them stale, never inconsistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
