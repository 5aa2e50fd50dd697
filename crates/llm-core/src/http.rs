//! HTTP plumbing shared by the providers: timeouts, retries, rate limiting, metrics, and
//! turning a streamed body into events; and [`fetch_json`], one plain GET of a JSON document
//! for callers outside this crate that need one (the MCP server's OAuth key set), so that
//! reqwest stays here.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use reqwest::header::HeaderMap;

use crate::client::StatsCell;
use crate::clock::{Clock, Rng, SplitMix64, SystemClock, with_timeout};
use crate::count::TokenCount;
use crate::count::{Calibrator, CountCache};
use crate::error::{Error, Result, TimeoutPhase};
use crate::rate_limit::{RateLimit, RateLimiter};
use crate::retry::{RetryHints, RetryPolicy};
use crate::sse::{SseDecoder, SseEvent};
use crate::stream::{Event, EventStream};
use crate::types::{Request, Response, Usage};

/// Transport settings every provider shares.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    pub connect_timeout: Duration,
    /// Bounds a whole `complete` call, and a `stream` call up to its response headers.
    pub request_timeout: Duration,
    /// The longest gap between two chunks of a streamed body before it counts as stalled.
    pub stream_idle_timeout: Duration,
    /// The largest response body `complete` reads; a longer one is [`Error::TooLarge`]
    /// rather than memory spent without bound.
    pub max_body_bytes: usize,
    /// The largest single event of a stream (one line, or the data lines of one event,
    /// before it is dispatched).
    pub max_event_bytes: usize,
    pub retry: RetryPolicy,
    pub rate_limit: RateLimit,
    pub clock: Arc<dyn Clock>,
    pub rng: Arc<dyn Rng>,
    /// What the provider's counts of earlier answers taught about the estimate, per model;
    /// every answer adds to it ([`crate::count`]). Shared, so a caller can keep it.
    pub calibration: Arc<Calibrator>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(600),
            stream_idle_timeout: Duration::from_secs(120),
            // Far above any model's answer (a million tokens of text is a few megabytes),
            // far below what would hurt the machine.
            max_body_bytes: 64 * 1024 * 1024,
            max_event_bytes: 16 * 1024 * 1024,
            retry: RetryPolicy::default(),
            rate_limit: RateLimit::default(),
            clock: Arc::new(SystemClock),
            rng: Arc::new(SplitMix64::from_entropy()),
            calibration: Arc::default(),
        }
    }
}

/// Turns a failed response into the provider's typed error.
pub(crate) type Classify =
    fn(provider: &'static str, status: u16, body: &str, hints: &RetryHints) -> Error;

/// What a provider needs to send one HTTP request.
pub(crate) struct Outgoing<'a> {
    /// POST for model calls; batch APIs also GET.
    pub method: reqwest::Method,
    pub url: &'a str,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// Input tokens, for the tokens-per-minute limiter.
    pub estimated_tokens: u64,
    pub classify: Classify,
}

pub(crate) struct Transport {
    pub provider: &'static str,
    http: reqwest::Client,
    pub config: HttpConfig,
    limiter: RateLimiter,
    pub stats: Arc<StatsCell>,
}

impl Transport {
    pub fn new(provider: &'static str, config: HttpConfig) -> Result<Self> {
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .build()
            .map_err(|err| Error::Config {
                details: format!("cannot build the http client for {provider}: {err}"),
            })?;
        let limiter = RateLimiter::new(config.rate_limit, config.clock.now());
        Ok(Self {
            provider,
            http,
            config,
            limiter,
            stats: Arc::default(),
        })
    }

    /// The request's tokens for the limiter, counted only when it limits tokens: an exact
    /// count of a long conversation is not free.
    pub fn token_estimate(&self, count: impl FnOnce() -> u64) -> u64 {
        match self.config.rate_limit.tokens_per_minute {
            Some(_) => count(),
            None => 0,
        }
    }

    pub fn clock(&self) -> &dyn Clock {
        &*self.config.clock
    }

    /// Sends with retries until a 2xx arrives; each attempt is bounded by the request
    /// timeout. Returns the response with the moment its attempt started, from which the
    /// rest of the body's time is counted.
    pub async fn send(&self, outgoing: &Outgoing<'_>) -> Result<(reqwest::Response, Instant)> {
        let mut retry = 0;
        loop {
            self.limiter
                .acquire(outgoing.estimated_tokens, self.clock())
                .await;
            let attempt_started = self.clock().now();
            let (error, hints) = match self.attempt(outgoing, attempt_started).await {
                Ok(response) => return Ok((response, attempt_started)),
                Err(failure) => failure,
            };
            let delay = self
                .config
                .retry
                .delay(retry, &error, &hints, &*self.config.rng);
            // The final error is counted by `record_outcome`, with the call's other errors.
            let Some(delay) = delay else {
                return Err(error);
            };
            self.stats.record_error(error.kind());
            self.stats.record_retry();
            self.clock().sleep(delay).await;
            retry += 1;
        }
    }

    async fn attempt(
        &self,
        outgoing: &Outgoing<'_>,
        started: Instant,
    ) -> Result<reqwest::Response, (Error, RetryHints)> {
        let send = self
            .http
            .request(outgoing.method.clone(), outgoing.url)
            .headers(outgoing.headers.clone())
            .body(outgoing.body.clone())
            .send();
        let timeout = self.config.request_timeout;
        let response = match with_timeout(self.clock(), timeout, send).await {
            None => return Err((self.timeout(TimeoutPhase::Request), RetryHints::default())),
            Some(Err(err)) if err.is_timeout() && err.is_connect() => {
                return Err((self.timeout(TimeoutPhase::Connect), RetryHints::default()));
            }
            Some(Err(err)) => {
                return Err((
                    Error::from_reqwest(self.provider, outgoing.url, err),
                    RetryHints::default(),
                ));
            }
            Some(Ok(response)) => response,
        };
        let headers = headers_of_interest(response.headers());
        self.stats.record_rate_limit_headers(&headers);
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let hints = RetryHints::from_headers(response.headers(), self.clock().system_now());
        let remaining =
            timeout.saturating_sub(self.clock().now().saturating_duration_since(started));
        // An error body that cannot be read still has a status worth reporting; only its
        // start is read, since only an excerpt of it is ever shown.
        let body = match with_timeout(
            self.clock(),
            remaining,
            read_capped(response, ERROR_BODY_LIMIT),
        )
        .await
        {
            Some(Ok(Capped::Whole(body) | Capped::Cut(body))) => {
                String::from_utf8_lossy(&body).into_owned()
            }
            _ => String::new(),
        };
        let error = (outgoing.classify)(self.provider, status.as_u16(), &body, &hints);
        Err((error, hints))
    }

    pub fn timeout(&self, phase: TimeoutPhase) -> Error {
        let after = match phase {
            TimeoutPhase::Connect => self.config.connect_timeout,
            TimeoutPhase::Request => self.config.request_timeout,
            TimeoutPhase::StreamIdle => self.config.stream_idle_timeout,
        };
        Error::Timeout {
            provider: self.provider,
            phase,
            after,
        }
    }

    /// Reads a whole successful body within what is left of its attempt's request timeout.
    pub async fn read_body(
        &self,
        response: reqwest::Response,
        url: &str,
        started: Instant,
    ) -> Result<Bytes> {
        let elapsed = self.clock().now().saturating_duration_since(started);
        let remaining = self.config.request_timeout.saturating_sub(elapsed);
        let limit = self.config.max_body_bytes;
        match with_timeout(self.clock(), remaining, read_capped(response, limit)).await {
            None => Err(self.timeout(TimeoutPhase::Request)),
            Some(Err(err)) => Err(Error::from_reqwest(self.provider, url, err)),
            Some(Ok(Capped::Whole(body))) => Ok(Bytes::from(body)),
            Some(Ok(Capped::Cut(_))) => Err(Error::TooLarge {
                provider: self.provider,
                what: "the response body",
                url: url.to_owned(),
                limit,
            }),
        }
    }

    /// The offline estimate of `request`, scaled by what this model's earlier answers taught.
    /// `model` is the one that answers (the request's, else the client's default).
    pub fn estimate(&self, model: &str, request: &Request) -> TokenCount {
        let estimate = crate::tokens::count_request(request, crate::tokens::Encoding::O200k);
        self.config.calibration.apply(model, estimate)
    }

    /// Teaches the calibration what the provider counted for `request`'s input.
    pub fn calibrate(&self, model: &str, request: &Request, response: &Response) {
        let counted = response.usage.total_input();
        let estimate = crate::tokens::count_request(request, crate::tokens::Encoding::O200k);
        self.config.calibration.observe(model, estimate, counted);
    }

    /// Runs a whole `complete` call and records its outcome in the metrics.
    pub async fn recorded(
        &self,
        call: impl std::future::Future<Output = Result<Response>>,
    ) -> Result<Response> {
        let started = self.clock().now();
        let result = call.await;
        self.record_outcome(started, result.as_ref());
        result
    }

    /// Opens a streaming call: sends `outgoing` (with retries) and returns the response with
    /// the moment the call started. A call that fails before any response is recorded as
    /// failed; a stream that opens records its own end.
    pub async fn open_stream(
        &self,
        outgoing: Result<Outgoing<'_>>,
    ) -> Result<(reqwest::Response, Instant)> {
        let started = self.clock().now();
        let sent = match outgoing {
            Ok(outgoing) => self.send(&outgoing).await,
            Err(error) => Err(error),
        };
        let sent = sent.and_then(|(response, _)| self.expect_event_stream(response));
        match sent {
            Ok(response) => Ok((response, started)),
            Err(error) => {
                self.record_outcome(started, Err(&error));
                Err(error)
            }
        }
    }

    /// The response to a streaming request, if it is an event stream: a server that answers
    /// with a whole JSON document instead (a proxy that ignores `"stream": true`) is named
    /// for what it sent, not reported as a stream cut short.
    fn expect_event_stream(&self, response: reqwest::Response) -> Result<reqwest::Response> {
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default();
        let essence = content_type
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        // Servers that send events under no type or a generic one exist; only a type that
        // says it is something else is refused.
        if essence == "application/json" || essence.ends_with("+json") || essence == "text/html" {
            return Err(Error::invalid_response(
                self.provider,
                format!(
                    "expected an event stream from {}, got {content_type}",
                    response.url()
                ),
            ));
        }
        Ok(response)
    }

    /// Records the outcome of a whole call in the metrics: a `complete`, or a `stream`
    /// that failed before its first event (a stream records its own end).
    pub fn record_outcome(&self, started: Instant, result: Result<&Response, &Error>) {
        match result {
            Ok(response) => {
                let duration = self.clock().now().saturating_duration_since(started);
                self.stats.record_success(duration, response.usage);
            }
            Err(error) => {
                self.stats.record_error(error.kind());
                self.stats.record_failure();
            }
        }
    }
}

/// How much of an error body is read: enough for any provider's error JSON.
const ERROR_BODY_LIMIT: usize = 64 * 1024;

/// A body read up to a limit.
enum Capped {
    Whole(Vec<u8>),
    /// The body is longer than the limit; these are its first bytes, up to it.
    Cut(Vec<u8>),
}

/// Reads `response`'s body, stopping as soon as it passes `limit` bytes (at once when its
/// `content-length` says it will).
async fn read_capped(mut response: reqwest::Response, limit: usize) -> reqwest::Result<Capped> {
    let declared = response
        .content_length()
        .and_then(|length| usize::try_from(length).ok());
    if declared.is_some_and(|length| length > limit) {
        return Ok(Capped::Cut(Vec::new()));
    }
    let mut body = Vec::with_capacity(declared.unwrap_or(0));
    while let Some(chunk) = response.chunk().await? {
        if body.len().saturating_add(chunk.len()) > limit {
            let room = limit - body.len();
            body.extend_from_slice(&chunk[..room]);
            return Ok(Capped::Cut(body));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Capped::Whole(body))
}

/// Rate-limit state, request ids and retry hints: the response headers worth keeping.
pub(crate) fn headers_of_interest(headers: &HeaderMap) -> BTreeMap<String, String> {
    headers
        .iter()
        .filter(|(name, _)| {
            let name = name.as_str();
            name.starts_with("anthropic-ratelimit-")
                || name.starts_with("x-ratelimit-")
                || matches!(
                    name,
                    "request-id" | "x-request-id" | "retry-after" | "retry-after-ms"
                )
        })
        .filter_map(|(name, value)| {
            Some((name.as_str().to_owned(), value.to_str().ok()?.to_owned()))
        })
        .collect()
}

/// A provider's reading of SSE events.
pub(crate) trait StreamParser: Send + 'static {
    /// Handles one event; `Ok(true)` when the provider said the answer is complete.
    fn on_event(&mut self, event: SseEvent, out: &mut VecDeque<Event>) -> Result<bool>;

    /// The body ended before the parser reported completion; an error if that cut the
    /// answer short.
    fn on_eof(&mut self, out: &mut VecDeque<Event>) -> Result<()>;
}

/// Turns a successful streaming response into events, enforcing the idle timeout and
/// recording usage in the client's metrics when the answer completes.
pub(crate) fn event_stream<P: StreamParser>(
    transport: &Transport,
    response: reqwest::Response,
    parser: P,
    started: Instant,
) -> EventStream {
    let state = StreamState {
        provider: transport.provider,
        url: response.url().to_string(),
        max_event_bytes: transport.config.max_event_bytes,
        body: response.bytes_stream().boxed(),
        decoder: SseDecoder::default(),
        parser,
        scratch: Vec::new(),
        queue: VecDeque::new(),
        failure: None,
        finished: false,
        completed: false,
        clock: Arc::clone(&transport.config.clock),
        idle_timeout: transport.config.stream_idle_timeout,
        stats: Arc::clone(&transport.stats),
        started,
        usage: Usage::default(),
    };
    Box::pin(futures_util::stream::unfold(
        state,
        |mut state| async move {
            let item = state.next().await?;
            Some((item, state))
        },
    ))
}

struct StreamState<P> {
    provider: &'static str,
    url: String,
    max_event_bytes: usize,
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    decoder: SseDecoder,
    parser: P,
    scratch: Vec<SseEvent>,
    queue: VecDeque<Event>,
    failure: Option<Error>,
    /// No more body will be read.
    finished: bool,
    /// The parser saw the provider's end marker.
    completed: bool,
    clock: Arc<dyn Clock>,
    idle_timeout: Duration,
    stats: Arc<StatsCell>,
    started: Instant,
    usage: Usage,
}

impl<P: StreamParser> StreamState<P> {
    async fn next(&mut self) -> Option<Result<Event>> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                match &event {
                    Event::Usage(usage) => self.usage = *usage,
                    Event::Stop { .. } => {
                        let duration = self.clock.now().saturating_duration_since(self.started);
                        self.stats.record_success(duration, self.usage);
                    }
                    _ => {}
                }
                return Some(Ok(event));
            }
            if let Some(error) = self.failure.take() {
                self.stats.record_error(error.kind());
                self.stats.record_failure();
                return Some(Err(error));
            }
            if self.finished {
                return None;
            }
            let chunk = with_timeout(&*self.clock, self.idle_timeout, self.body.next()).await;
            let outcome = match chunk {
                None => Err(Error::Timeout {
                    provider: self.provider,
                    phase: TimeoutPhase::StreamIdle,
                    after: self.idle_timeout,
                }),
                Some(Some(Ok(bytes))) => self.feed(&bytes),
                Some(Some(Err(err))) => Err(Error::StreamInterrupted {
                    provider: self.provider,
                    details: format!("reading the body failed: {err}"),
                }),
                Some(None) => self.end(),
            };
            if let Err(error) = outcome {
                self.failure = Some(error);
                self.finished = true;
            }
        }
    }

    fn feed(&mut self, bytes: &[u8]) -> Result<()> {
        let decoded = self.decoder.feed(bytes, &mut self.scratch);
        self.dispatch()?;
        decoded.map_err(|invalid| {
            Error::invalid_response(
                self.provider,
                format!("stream line is not utf-8: {}", invalid.line),
            )
        })?;
        if self.decoder.buffered() > self.max_event_bytes {
            return Err(Error::TooLarge {
                provider: self.provider,
                what: "a stream event",
                url: self.url.clone(),
                limit: self.max_event_bytes,
            });
        }
        Ok(())
    }

    fn end(&mut self) -> Result<()> {
        self.finished = true;
        let decoded = self.decoder.finish(&mut self.scratch);
        self.dispatch()?;
        decoded.map_err(|invalid| {
            Error::invalid_response(
                self.provider,
                format!("stream line is not utf-8: {}", invalid.line),
            )
        })?;
        if self.completed {
            return Ok(());
        }
        self.parser.on_eof(&mut self.queue)
    }

    fn dispatch(&mut self) -> Result<()> {
        for event in self.scratch.drain(..) {
            // Anything after the provider's end marker is ignored, not an error.
            if self.completed {
                continue;
            }
            if self.parser.on_event(event, &mut self.queue)? {
                self.completed = true;
                self.finished = true;
            }
        }
        Ok(())
    }
}

/// The error a status means when the body adds nothing more specific.
pub(crate) fn classify_status(
    provider: &'static str,
    status: u16,
    message: String,
    hints: &RetryHints,
) -> Error {
    match status {
        401 => Error::Authentication { provider, message },
        403 => Error::Permission { provider, message },
        429 => Error::RateLimited {
            provider,
            retry_after: hints.retry_after,
            message,
        },
        529 => Error::Overloaded { provider, message },
        500..=599 => Error::Server {
            provider,
            status,
            message,
        },
        _ => Error::InvalidRequest {
            provider,
            status,
            message,
        },
    }
}

/// A body as an error message: the text itself, cut to a readable length.
pub(crate) fn body_excerpt(body: &str) -> String {
    const LIMIT: usize = 500;
    crate::text::excerpt(body.trim(), LIMIT)
}

/// Merges `extra` fields over a wire body.
pub(crate) fn merge_extra(
    body: &mut serde_json::Map<String, serde_json::Value>,
    extra: &BTreeMap<String, serde_json::Value>,
) {
    for (key, value) in extra {
        body.insert(key.clone(), value.clone());
    }
}

/// One HTTP exchange that is not a model call (the batch APIs'), with the transport's retries and limits: the whole body
/// of a 2xx answer, or the provider's typed error.
pub(crate) async fn exchange(
    transport: &Transport,
    method: reqwest::Method,
    url: &str,
    headers: HeaderMap,
    body: Bytes,
    classify: Classify,
) -> Result<Bytes> {
    let outgoing = Outgoing {
        method,
        url,
        headers,
        body,
        estimated_tokens: 0,
        classify,
    };
    let (response, started) = transport.send(&outgoing).await?;
    transport.read_body(response, url, started).await
}

/// Asks a provider's count endpoint at `url` for `body`, with the transport's retries, once
/// per distinct body (`cache`); `decode` reads the count from the answer's JSON.
pub(crate) async fn ask_provider(
    transport: &Transport,
    cache: &CountCache,
    (url, headers): (&str, HeaderMap),
    body: &serde_json::Value,
    classify: Classify,
    decode: fn(&'static str, &[u8]) -> Result<u64>,
) -> Result<u64> {
    let text = body.to_string();
    let key = CountCache::key(&text);
    if let Some(tokens) = cache.get(key) {
        return Ok(tokens);
    }
    let method = reqwest::Method::POST;
    let answer = exchange(transport, method, url, headers, Bytes::from(text), classify).await?;
    let tokens = decode(transport.provider, &answer)?;
    cache.insert(key, tokens);
    Ok(tokens)
}

/// [`exchange`] with a JSON body, or none.
pub(crate) async fn exchange_json(
    transport: &Transport,
    method: reqwest::Method,
    url: &str,
    headers: HeaderMap,
    body: Option<serde_json::Value>,
    classify: Classify,
) -> Result<Bytes> {
    let body = body.map_or_else(Bytes::new, |body| Bytes::from(body.to_string()));
    exchange(transport, method, url, headers, body, classify).await
}

/// `body` decoded as `T`, or an error saying what it should have been.
pub(crate) fn json_body<T: serde::de::DeserializeOwned>(
    provider: &'static str,
    body: &[u8],
    what: &str,
) -> Result<T> {
    serde_json::from_slice(body).map_err(|err| {
        Error::invalid_response(
            provider,
            format!(
                "{what} is not what the API sends ({err}): {}",
                body_excerpt(&String::from_utf8_lossy(body))
            ),
        )
    })
}

/// Who [`fetch_json`]'s errors name as the party that answered.
const FETCH: &str = "http";

/// GETs the JSON document at `url` (http or https): one attempt, no retries, the whole
/// exchange bounded by `timeout` and the body by `max_body_bytes`.
///
/// A status other than 2xx is the error its status means (with an excerpt of the body), a body
/// past the cap is [`Error::TooLarge`], and one that is not JSON is [`Error::InvalidResponse`];
/// every error names `url`. It sends no credentials and no cookies, and it builds a client for
/// each call: it is meant for documents fetched now and then (a key set), not for a hot path.
pub async fn fetch_json(
    url: &str,
    timeout: Duration,
    max_body_bytes: usize,
) -> Result<serde_json::Value> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(Error::Config {
            details: format!("{url:?} is not an http or https URL"),
        });
    }
    let http = reqwest::Client::builder()
        .connect_timeout(timeout)
        .timeout(timeout)
        .build()
        .map_err(|err| Error::Config {
            details: format!("cannot build the http client for {url}: {err}"),
        })?;
    let failed = |err: reqwest::Error| {
        if err.is_timeout() {
            Error::Timeout {
                provider: FETCH,
                phase: TimeoutPhase::Request,
                after: timeout,
            }
        } else {
            Error::from_reqwest(FETCH, url, err)
        }
    };
    let response = http
        .get(url)
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(failed)?;
    let status = response.status();
    if !status.is_success() {
        let body = match read_capped(response, ERROR_BODY_LIMIT).await {
            Ok(Capped::Whole(body) | Capped::Cut(body)) => {
                String::from_utf8_lossy(&body).into_owned()
            }
            Err(_) => String::new(),
        };
        let message = format!("GET {url}: {}", body_excerpt(&body));
        return Err(classify_status(
            FETCH,
            status.as_u16(),
            message,
            &RetryHints::default(),
        ));
    }
    let body = match read_capped(response, max_body_bytes)
        .await
        .map_err(failed)?
    {
        Capped::Whole(body) => body,
        Capped::Cut(_) => {
            return Err(Error::TooLarge {
                provider: FETCH,
                what: "the response body",
                url: url.to_owned(),
                limit: max_body_bytes,
            });
        }
    };
    serde_json::from_slice(&body).map_err(|err| {
        Error::invalid_response(FETCH, format!("the body from {url} is not JSON: {err}"))
    })
}
