//! The batch APIs as the fake server runs them: Anthropic's Message Batches
//! (`/v1/messages/batches`, its results as JSONL; [`anthropic`]) and OpenAI's Batch API with
//! the files it reads and writes (`/v1/files`, `/v1/batches`; [`openai`]). Both read requests
//! and write answers with llm-core's `wire::batch` types, the ones its batch clients use.
//!
//! A batch's calls are answered by the strategy when the batch is created, in submission
//! order, as if each had come on its own (the prompt cache and structured answers apply), and
//! are numbered among the server's calls ([`super::Served::batch`] names the batch). As a real
//! service's, a batch is still in progress when a client first looks: it answers in progress
//! to the first [`DEFAULT_POLLS`] reads of it ([`super::FakeServer::set_batch_polls`] changes
//! how many; 0 ends batches as they are created), and ended from the next one on. While the
//! server holds batches ([`super::FakeServer::hold_batches`]) they stay in progress until
//! released or cancelled, which is how a test kills a client in the middle of its wait. A
//! strategy's timeout makes a call expire; its other failures make it errored, with the error
//! body the service would have sent.

mod anthropic;
mod openai;

use std::collections::BTreeMap;
use std::time::SystemTime;

use llm_core::Request;
use llm_core::wire::batch::openai::BatchError;
use serde::Serialize;

use super::http::HttpRequest;
use super::wire::to_json;
use super::{Api, Shared, lock, record_call};
use crate::reply::{Answer, Failure, Reply};

/// An answer to a batch or file request.
pub(super) struct Routed {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Routed {
    /// A JSON answer: an error body, or one of the batch wire types.
    fn json(status: u16, body: &impl Serialize) -> Self {
        Self {
            status,
            content_type: "application/json",
            body: to_json(body).to_string().into_bytes(),
        }
    }
}

/// How many reads of a new batch answer that it is still in progress, unless set otherwise.
pub const DEFAULT_POLLS: u32 = 2;

/// What the server keeps of batches and files.
pub(super) struct Book {
    next: u64,
    /// In creation order.
    batches: Vec<Batch>,
    files: BTreeMap<String, File>,
    /// New batches stay in progress while set.
    pub hold: bool,
    /// How many reads of a new batch find it in progress.
    pub polls: u32,
}

impl Default for Book {
    fn default() -> Self {
        Book {
            next: 0,
            batches: Vec::new(),
            files: BTreeMap::new(),
            hold: false,
            polls: DEFAULT_POLLS,
        }
    }
}

impl Book {
    fn id(&mut self, prefix: &str) -> String {
        self.next += 1;
        format!("{prefix}{}", self.next)
    }

    /// The ids of every batch created, oldest first.
    pub fn batch_ids(&self) -> Vec<String> {
        self.batches.iter().map(|b| b.id.clone()).collect()
    }

    /// Ends every batch still running.
    pub fn release(&mut self) {
        let now = SystemTime::now();
        for batch in &mut self.batches {
            batch.ended.get_or_insert(now);
        }
    }

    fn batch(&mut self, id: &str) -> Option<&mut Batch> {
        self.batches.iter_mut().find(|b| b.id == id)
    }

    /// The batch `id` of `api`, if there is one.
    fn batch_of(&mut self, api: Api, id: &str) -> Option<&mut Batch> {
        self.batch(id).filter(|b| b.api == api)
    }

    /// A client reads batch `id`: one poll fewer before it ends, unless batches are held.
    fn poll(&mut self, id: &str) {
        let hold = self.hold;
        let Some(batch) = self.batch(id).filter(|b| b.running() && !hold) else {
            return;
        };
        match batch.polls_left.checked_sub(1) {
            Some(left) => batch.polls_left = left,
            None => batch.ended = Some(SystemTime::now()),
        }
    }
}

struct File {
    id: String,
    filename: String,
    purpose: String,
    created: SystemTime,
    data: Vec<u8>,
}

struct Batch {
    id: String,
    api: Api,
    created: SystemTime,
    ended: Option<SystemTime>,
    cancelled: Option<SystemTime>,
    /// Reads still to answer in progress before the batch ends.
    polls_left: u32,
    items: Vec<Item>,
    /// OpenAI: the input file, and the errors of one that could not be read.
    input_file: Option<String>,
    failed: Vec<BatchError>,
    output_file: Option<String>,
    error_file: Option<String>,
}

struct Item {
    custom_id: String,
    call: u64,
    outcome: Outcome,
}

/// What became of one call, in no API's words yet: each API's routes say it as that API
/// reports it.
enum Outcome {
    /// The strategy's answer (fitted to the request's schema, with the cache's usage), and
    /// the Unix second it was made at.
    Succeeded { answer: Box<Answer>, created: u64 },
    /// The call's request did not read: a 400 `invalid_request_error` with this message.
    Invalid(String),
    /// The strategy failed the call, or the simulation failed (a 500).
    Failed(Failure),
    /// The strategy timed out.
    Expired,
}

impl Batch {
    fn running(&self) -> bool {
        self.ended.is_none()
    }

    /// Each item's outcome as its results will show it: cancelled ones were never run.
    fn shown(&self) -> impl Iterator<Item = (&Item, Option<&Outcome>)> {
        let canceled = self.cancelled.is_some();
        self.items
            .iter()
            .map(move |item| (item, (!canceled).then_some(&item.outcome)))
    }

    /// Stops the batch, if it still runs: its calls not yet shown end canceled.
    fn cancel(&mut self) {
        if self.running() {
            let now = SystemTime::now();
            self.cancelled = Some(now);
            self.ended = Some(now);
        }
    }
}

fn secs(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// The batch or file route `request` asks for, answered; `None` for other paths.
pub(super) fn route(shared: &Shared, request: &HttpRequest) -> Option<Routed> {
    let path = request.path.trim_end_matches('/');
    if let Some(rest) = path.strip_prefix("/v1/messages/batches") {
        return Some(anthropic::route(shared, request, rest));
    }
    openai::route(shared, request, path.strip_prefix("/v1").unwrap_or(path))
}

/// The path's segments after a route's prefix.
fn segments(rest: &str) -> Vec<&str> {
    rest.split('/').filter(|s| !s.is_empty()).collect()
}

/// Answers one call of a batch from the strategy, as the direct route would have; returns
/// its number (0 for a request that did not read) and outcome.
fn run_item(
    shared: &Shared,
    api: Api,
    batch: &str,
    parsed: Result<Request, String>,
) -> (u64, Outcome) {
    let request = match parsed {
        Ok(request) => request,
        Err(message) => return (0, Outcome::Invalid(message)),
    };
    let call = record_call(shared, api, &request, false, Some(batch));
    let reply = lock(&shared.strategy).reply(call, &request);
    let outcome = match reply {
        Err(err) => Outcome::Failed(Failure::Server {
            status: 500,
            message: err.to_string(),
        }),
        Ok(Reply::Failure(Failure::Timeout)) => Outcome::Expired,
        Ok(Reply::Failure(failed)) => Outcome::Failed(failed),
        Ok(Reply::Answer(mut answer)) => match answer.interrupted.take() {
            Some(failed) => Outcome::Failed(failed),
            None => {
                super::settle(shared, api, &request, &mut answer);
                Outcome::Succeeded {
                    answer: Box::new(answer),
                    created: secs(SystemTime::now()),
                }
            }
        },
    };
    (call, outcome)
}

/// A batch's calls as a create reads them: each one's custom id and request, or why the
/// request does not read (which that call alone is refused for).
type Calls = Vec<(String, Result<Request, String>)>;

/// Records a new batch, answering its calls; returns its id.
fn create(
    shared: &Shared,
    api: Api,
    prefix: &str,
    calls: Calls,
    input_file: Option<String>,
) -> String {
    let id = lock(&shared.book).id(prefix);
    let items = calls
        .into_iter()
        .map(|(custom_id, parsed)| {
            let (call, outcome) = run_item(shared, api, &id, parsed);
            Item {
                custom_id,
                call,
                outcome,
            }
        })
        .collect();
    let mut book = lock(&shared.book);
    let now = SystemTime::now();
    let ended = (!book.hold && book.polls == 0).then_some(now);
    let polls_left = book.polls;
    book.batches.push(Batch {
        id: id.clone(),
        api,
        created: now,
        ended,
        cancelled: None,
        polls_left,
        items,
        input_file,
        failed: Vec::new(),
        output_file: None,
        error_file: None,
    });
    drop(book);
    shared.batches.send_modify(|count| *count += 1);
    id
}
