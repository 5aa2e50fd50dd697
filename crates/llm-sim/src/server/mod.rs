//! The fake API server: a loopback HTTP server that answers the Anthropic Messages API and
//! OpenAI chat completions from a [`Strategy`], so that any agent, in any language, can be
//! tested against a script, a recording or a pattern file.
//!
//! Routes: `POST /v1/messages` (Anthropic), `POST /v1/chat/completions` or
//! `/chat/completions` (OpenAI; point an OpenAI client at `<url>/v1`), `POST /v1/responses`
//! or `/responses` (OpenAI's Responses API, stateless), and the batch APIs ([`batch`]:
//! `/v1/messages/batches`, `/v1/files`, `/v1/batches`). The model routes answer whole or, with
//! `"stream": true`, as server-sent events framed as the real services frame them, usage
//! included. Failures the strategy injects become the status, headers and error body
//! each service sends; a timeout holds the connection open without a byte until the client
//! gives up. No key is checked. Calls are numbered in arrival order and answered one at a
//! time by the strategy. Usage is billed as the providers bill cached prompts
//! ([`crate::cache`]): `cache_control` breakpoints (at most four, as the API allows) and
//! OpenAI's automatic prefix cache.
//!
//! The server runs on the caller's tokio runtime (this crate builds none) until dropped.

mod anthropic;
mod batch;
mod breakpoints;
mod count;
mod http;
mod multipart;
mod openai;
mod responses;
mod wire;

pub use batch::DEFAULT_POLLS as DEFAULT_BATCH_POLLS;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::SystemTime;

use llm_core::Request;
use serde_json::Value;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::{JoinHandle, JoinSet};

use self::http::{Connection, HttpRequest, ReadError};
use crate::cache::PromptCache;
use crate::error::{Error, Result};
use crate::reply::{Answer, Failure, Reply};
use crate::strategy::Strategy;

/// Which API a request came through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    OpenAi,
    /// OpenAI's Responses API.
    Responses,
}

/// One request the server answered (or failed on purpose), as the strategy saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    /// From 1, in arrival order.
    pub call: u64,
    pub api: Api,
    pub streamed: bool,
    pub request: Request,
    /// The batch this call came in, if it came in one.
    pub batch: Option<String>,
}

struct Shared {
    strategy: Mutex<Box<dyn Strategy>>,
    served: Mutex<Vec<Served>>,
    received: watch::Sender<usize>,
    /// What requests with cache breakpoints (or a cache key) find cached.
    cache: Mutex<PromptCache>,
    /// Batches and files.
    book: Mutex<batch::Book>,
    /// How many batches have been created.
    batches: watch::Sender<usize>,
    /// How many times a client has read one batch's state.
    batch_reads: watch::Sender<usize>,
    /// How many Flex calls from now on find no capacity.
    flex_refusals: Mutex<u32>,
}

/// A running fake API server; it stops when dropped.
pub struct FakeServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for FakeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl FakeServer {
    /// Binds `addr` (`127.0.0.1:0` takes any free port) and starts answering from
    /// `strategy`. Must be called within a tokio runtime.
    pub async fn start(addr: &str, strategy: Box<dyn Strategy>) -> Result<Self> {
        let bind_error = |source| Error::Bind {
            addr: addr.to_owned(),
            source,
        };
        let listener = TcpListener::bind(addr).await.map_err(bind_error)?;
        let local = listener.local_addr().map_err(bind_error)?;
        let shared = Arc::new(Shared {
            strategy: Mutex::new(strategy),
            served: Mutex::default(),
            received: watch::Sender::new(0),
            cache: Mutex::default(),
            book: Mutex::default(),
            batches: watch::Sender::new(0),
            batch_reads: watch::Sender::new(0),
            flex_refusals: Mutex::new(0),
        });
        let task = tokio::spawn(accept(listener, Arc::clone(&shared)));
        Ok(Self {
            addr: local,
            shared,
            task,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr>`: the base URL for an Anthropic client; OpenAI clients take
    /// `<url>/v1`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request received so far, oldest first.
    pub fn served(&self) -> Vec<Served> {
        lock(&self.shared.served).clone()
    }

    /// Waits until `count` requests have arrived: for tests that must act while a request
    /// is in flight, such as moving a clock past a timeout.
    pub async fn wait_for_requests(&self, count: usize) {
        let mut received = self.shared.received.subscribe();
        // The sender lives in `shared`, which `self` holds, so the wait cannot fail.
        let _ = received.wait_for(|received| *received >= count).await;
    }

    /// The ids of the batches created so far, oldest first.
    pub fn batch_ids(&self) -> Vec<String> {
        lock(&self.shared.book).batch_ids()
    }

    /// While `hold` is set, batches stay in progress (their calls are answered, but the
    /// results wait); clearing it ends every batch still running.
    pub fn hold_batches(&self, hold: bool) {
        let mut book = lock(&self.shared.book);
        book.hold = hold;
        if !hold {
            book.release();
        }
    }

    /// How many reads of a batch created from now on answer that it is still in progress
    /// before one finds it ended ([`DEFAULT_BATCH_POLLS`] unless set; 0 ends each batch as
    /// it is created).
    pub fn set_batch_polls(&self, polls: u32) {
        lock(&self.shared.book).polls = polls;
    }

    /// Waits until clients have read a batch's state `count` times in all: for a test that
    /// must act while a client waits between two reads.
    pub async fn wait_for_batch_reads(&self, count: usize) {
        let mut reads = self.shared.batch_reads.subscribe();
        // The sender lives in `shared`, which `self` holds, so the wait cannot fail.
        let _ = reads.wait_for(|reads| *reads >= count).await;
    }

    /// The next `count` calls that ask for OpenAI's Flex tier find no capacity: each is
    /// refused as the service refuses one (429, `resource_unavailable`, not billed, not
    /// numbered, the strategy not asked).
    pub fn refuse_flex(&self, count: u32) {
        *lock(&self.shared.flex_refusals) = count;
    }

    /// Waits until `count` batches have been created.
    pub async fn wait_for_batches(&self, count: usize) {
        let mut created = self.shared.batches.subscribe();
        // The sender lives in `shared`, which `self` holds, so the wait cannot fail.
        let _ = created.wait_for(|created| *created >= count).await;
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        // The accept task owns every connection's task; aborting it ends them all.
        self.task.abort();
    }
}

async fn accept(listener: TcpListener, shared: Arc<Shared>) {
    let mut connections = JoinSet::new();
    loop {
        let socket = match listener.accept().await {
            Ok((socket, _)) => socket,
            // Out of descriptors or an aborted handshake: let others run, then go on.
            Err(_) => {
                tokio::task::yield_now().await;
                continue;
            }
        };
        while connections.try_join_next().is_some() {}
        connections.spawn(serve(socket, Arc::clone(&shared)));
    }
}

async fn serve(socket: TcpStream, shared: Arc<Shared>) {
    // Streamed events go out as they are written, as a model's would.
    let _ = socket.set_nodelay(true);
    let mut connection = Connection::new(socket);
    loop {
        let request = match connection.read_request().await {
            Ok(request) => request,
            Err(ReadError::Closed) => return,
            Err(ReadError::Bad(status, message)) => {
                let body = openai::error_json(message, "invalid_request_error", None);
                let _ = respond_json(&mut connection, status, Vec::new(), &body, true).await;
                return;
            }
        };
        let close = request.wants_close();
        match answer(&shared, &mut connection, request, close).await {
            Ok(true) if !close => {}
            _ => return,
        }
    }
}

/// Answers one request; `Ok(true)` when the connection may serve another.
async fn answer(
    shared: &Shared,
    connection: &mut Connection,
    request: HttpRequest,
    close: bool,
) -> std::io::Result<bool> {
    if let Some((status, body)) = count::route(&request) {
        respond_json(connection, status, Vec::new(), &body, close).await?;
        return Ok(true);
    }
    if let Some(routed) = batch::route(shared, &request) {
        let headers = vec![("content-type".to_owned(), routed.content_type.to_owned())];
        connection
            .respond(routed.status, &headers, &routed.body, close)
            .await?;
        return Ok(true);
    }
    let api = match model_api(&request) {
        Ok(api) => api,
        Err(body) => {
            respond_json(connection, 404, Vec::new(), &body, close).await?;
            return Ok(true);
        }
    };
    let (llm_request, options) = match parse_model_request(api, &request) {
        Ok(parsed) => parsed,
        Err((status, body)) => {
            respond_json(connection, status, Vec::new(), &body, close).await?;
            return Ok(true);
        }
    };
    if let Some((status, body)) = flex_refusal(shared, &llm_request) {
        respond_json(connection, status, openai::headers(0), &body, close).await?;
        return Ok(true);
    }
    if api == Api::Anthropic && llm_request.max_tokens == 0 {
        // Pre-warming: the prompt is cached and billed, nothing is generated, the strategy is
        // not asked and the call takes no number.
        let mut answer = prewarmed(&llm_request);
        settle(shared, api, &llm_request, &mut answer);
        let headers = anthropic::headers(0);
        deliver(connection, api, 0, options, headers, &answer, close).await?;
        return Ok(true);
    }
    let call = record_call(shared, api, &llm_request, options.stream, None);
    let reply = lock(&shared.strategy).reply(call, &llm_request);
    let mut headers = match api {
        Api::Anthropic => anthropic::headers(call),
        Api::OpenAi | Api::Responses => openai::headers(call),
    };
    let answer = match reply {
        // A fault of the simulation (a playback miss): retrying cannot help.
        Err(err) => {
            headers.push(("x-should-retry".to_owned(), "false".to_owned()));
            let body = match api {
                Api::Anthropic => anthropic::error_json("api_error", &err.to_string()),
                Api::OpenAi | Api::Responses => {
                    openai::error_json(&err.to_string(), "server_error", None)
                }
            };
            respond_json(connection, 500, headers, &body, close).await?;
            return Ok(true);
        }
        Ok(Reply::Failure(Failure::Timeout)) => {
            connection.hold().await;
            return Ok(false);
        }
        Ok(Reply::Failure(failed)) => {
            respond_failure(connection, api, headers, &failed, close).await?;
            return Ok(true);
        }
        Ok(Reply::Answer(mut answer)) => {
            settle(shared, api, &llm_request, &mut answer);
            answer
        }
    };
    deliver(connection, api, call, options, headers, &answer, close).await?;
    Ok(true)
}

/// Why a Flex call is refused, if it is: the model has no Flex tier (400, as the API words
/// it), or the service is short of capacity for it ([`FakeServer::refuse_flex`]).
fn flex_refusal(shared: &Shared, request: &Request) -> Option<(u16, Value)> {
    if request.service_tier != Some(llm_core::ServiceTier::Flex) {
        return None;
    }
    let has_flex =
        llm_core::Price::for_model(&request.model).is_some_and(|p| p.flex_factor.is_some());
    if !has_flex {
        let body = openai::error_json(
            "Unsupported service_tier: flex",
            "invalid_request_error",
            None,
        );
        return Some((400, body));
    }
    let mut refusals = lock(&shared.flex_refusals);
    if *refusals == 0 {
        return None;
    }
    *refusals -= 1;
    let body = openai::error_json(
        "Resource unavailable: Flex processing has no capacity for this request right now. \
         You were not charged; retry later, or use the default service tier.",
        "resource_unavailable",
        Some("resource_unavailable"),
    );
    Some((429, body))
}

/// Makes the strategy's answer one the service would send: fitted to the request's schema,
/// its input billed by the service's own count (unless the script fixed the usage) and split
/// by what the prompt cache holds.
fn settle(shared: &Shared, api: Api, request: &Request, answer: &mut Answer) {
    crate::structured::fit_answer(request, &mut answer.response);
    answer.response.service_tier = request.service_tier.map(|tier| tier.as_str().to_owned());
    let count = counter(api);
    if answer.usage_estimated {
        let usage = &mut answer.response.usage;
        usage.input_tokens = count(request);
        usage.cache_creation_input_tokens = 0;
        usage.cache_read_input_tokens = 0;
    }
    // OpenAI caches every request's prefix, keyed or not (the key only routes), but what a
    // script fixed stays as it split it unless the request asked for caching itself.
    let asked = !request.cache.is_empty()
        || request.cache_key.is_some()
        || (api == Api::Anthropic && request.cache.automatic);
    if !answer.usage_estimated && !asked {
        return;
    }
    let openai = api != Api::Anthropic;
    lock(&shared.cache).apply_counted(request, &mut answer.response.usage, count, openai);
}

/// The answer to a pre-warming call (`max_tokens: 0`): no content, stopped at its limit.
fn prewarmed(request: &Request) -> Answer {
    Answer {
        response: llm_core::Response {
            stop_reason: llm_core::StopReason::MaxTokens,
            model: request.model.clone(),
            id: Some("msg_sim_prewarm".to_owned()),
            ..llm_core::Response::default()
        },
        usage_estimated: true,
        ..Answer::default()
    }
}

/// How the service behind `api` counts a request's input: the simulated Anthropic service by
/// its own tokenizer ([`crate::tokenizer`]), the OpenAI ones by llm-core's estimate.
fn counter(api: Api) -> fn(&Request) -> u64 {
    match api {
        Api::Anthropic => crate::tokenizer::count_request,
        Api::OpenAi | Api::Responses => llm_core::tokens::estimate_request,
    }
}

/// The model API a request's path names, or the 404 body for a path that names none.
fn model_api(request: &HttpRequest) -> Result<Api, Value> {
    let path = request.path.trim_end_matches('/');
    match path {
        "/v1/messages" => Ok(Api::Anthropic),
        "/v1/chat/completions" | "/chat/completions" => Ok(Api::OpenAi),
        "/v1/responses" | "/responses" => Ok(Api::Responses),
        _ => {
            let message = format!("no route for {} {}", request.method, request.path);
            Err(if path.starts_with("/v1/messages") {
                anthropic::error_json("not_found_error", &message)
            } else {
                openai::error_json(&message, "invalid_request_error", None)
            })
        }
    }
}

/// Checks a model request's method and reads its body in `api`'s wire format: the request
/// and what it asks of the answer, or the status and error body to send instead.
fn parse_model_request(
    api: Api,
    request: &HttpRequest,
) -> Result<(Request, openai::Options), (u16, Value)> {
    let invalid = |message: &str| match api {
        Api::Anthropic => anthropic::error_json("invalid_request_error", message),
        Api::OpenAi | Api::Responses => openai::error_json(message, "invalid_request_error", None),
    };
    if request.method != "POST" {
        let body = invalid(&format!(
            "{} takes POST, not {}",
            request.path, request.method
        ));
        return Err((405, body));
    }
    let parsed = match api {
        // Read straight into the wire types, so that an error names the line and column.
        Api::Anthropic => anthropic::parse_body(&request.body).map(|(request, stream)| {
            (
                request,
                openai::Options {
                    stream,
                    include_usage: true,
                },
            )
        }),
        Api::OpenAi => openai::parse_body(&request.body),
        Api::Responses => responses::parse_body(&request.body),
    };
    parsed.map_err(|message| (400, invalid(&message)))
}

/// Numbers a call in arrival order, records it as served (in `batch`, if it came in one) and
/// wakes those waiting for it.
fn record_call(
    shared: &Shared,
    api: Api,
    request: &Request,
    streamed: bool,
    batch: Option<&str>,
) -> u64 {
    let call = {
        let mut served = lock(&shared.served);
        let call = served.len() as u64 + 1;
        served.push(Served {
            call,
            api,
            streamed,
            request: request.clone(),
            batch: batch.map(str::to_owned),
        });
        call
    };
    shared.received.send_modify(|received| *received += 1);
    call
}

/// Sends an injected failure's status, headers and error body as `api`'s service sends them.
async fn respond_failure(
    connection: &mut Connection,
    api: Api,
    mut headers: Vec<(String, String)>,
    failed: &Failure,
    close: bool,
) -> std::io::Result<()> {
    let (status, extra, body) = match api {
        Api::Anthropic => anthropic::error_body(failed),
        Api::OpenAi | Api::Responses => openai::error_body(failed),
    };
    headers.extend(extra);
    respond_json(connection, status, headers, &body, close).await
}

/// Sends a model's answer to call number `call`, whole or as server-sent events, in `api`'s
/// format; an answer interrupted before its end fails whole when it is not streamed.
async fn deliver(
    connection: &mut Connection,
    api: Api,
    call: u64,
    options: openai::Options,
    headers: Vec<(String, String)>,
    answer: &Answer,
    close: bool,
) -> std::io::Result<()> {
    let created = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs());
    if !options.stream {
        if let Some(failed) = &answer.interrupted {
            return respond_failure(connection, api, headers, failed, close).await;
        }
        let body = match api {
            Api::Anthropic => wire::to_json(&anthropic::message(answer, call)),
            Api::OpenAi => openai::completion(answer, call, created),
            Api::Responses => responses::response(answer, call, created),
        };
        return respond_json(connection, 200, headers, &body, close).await;
    }
    let events = match api {
        Api::Anthropic => anthropic::stream(answer, call),
        Api::OpenAi => openai::stream(answer, call, created, options),
        Api::Responses => responses::stream(answer, call, created),
    };
    connection.start_stream(&headers).await?;
    for event in events {
        connection.chunk(&event.to_bytes()).await?;
    }
    connection.end_stream().await
}

async fn respond_json(
    connection: &mut Connection,
    status: u16,
    mut headers: Vec<(String, String)>,
    body: &Value,
    close: bool,
) -> std::io::Result<()> {
    headers.insert(
        0,
        ("content-type".to_owned(), "application/json".to_owned()),
    );
    connection
        .respond(status, &headers, body.to_string().as_bytes(), close)
        .await
}

fn lock<T: ?Sized>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Counters and the strategy's cursor: a panic elsewhere leaves them usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
