//! The batch APIs as the fake server runs them: Anthropic's Message Batches
//! (`/v1/messages/batches`, its results as JSONL) and OpenAI's Batch API with the files it
//! reads and writes (`/v1/files`, `/v1/batches`).
//!
//! A batch's calls are answered by the strategy when the batch is created, in submission
//! order, as if each had come on its own (the prompt cache and structured answers apply), and
//! are numbered among the server's calls ([`super::Served::batch`] names the batch). As a real
//! service's, a batch is still in progress when a client first looks: it answers in progress
//! to the first [`DEFAULT_POLLS`] reads of it ([`super::FakeServer::set_batch_polls`] changes
//! how many; 0 ends batches as they are created), and ended from the next one on. While the
//! server holds batches ([`super::FakeServer::hold_batches`]) they stay in progress until
//! released or cancelled, which is how a test kills a client in the middle of its wait. A strategy's
//! timeout makes a call expire; its other failures make it errored, with the error body the
//! service would have sent.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, SystemTime};

use llm_core::Request;
use serde_json::{Value, json};

use super::http::HttpRequest;
use super::{Api, Served, Shared, anthropic, lock, multipart, openai};
use crate::reply::{Failure, Reply};

/// An answer to a batch or file request.
pub(super) struct Routed {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Routed {
    fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            content_type: "application/json",
            body: body.to_string().into_bytes(),
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
    failed: Vec<Value>,
    output_file: Option<String>,
    error_file: Option<String>,
}

struct Item {
    custom_id: String,
    call: u64,
    outcome: Outcome,
}

enum Outcome {
    Succeeded(Value),
    Errored { status: u16, body: Value },
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
}

fn secs(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

/// RFC 3339 with milliseconds, as the batch API writes its times: through the workspace's one
/// date formatter.
fn rfc3339(time: SystemTime) -> String {
    let ms = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        });
    merkle_hash::time::rfc3339_millis(ms)
}

/// The batch or file route `request` asks for, answered; `None` for other paths.
pub(super) fn route(shared: &Shared, request: &HttpRequest) -> Option<Routed> {
    let path = request.path.trim_end_matches('/');
    let method = request.method.as_str();
    if let Some(rest) = path.strip_prefix("/v1/messages/batches") {
        let segments: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
        return Some(match (method, segments.as_slice()) {
            ("POST", []) => anthropic_create(shared, request),
            ("GET", []) => {
                let book = lock(&shared.book);
                let data: Vec<Value> = book
                    .batches
                    .iter()
                    .rev()
                    .filter(|b| b.api == Api::Anthropic)
                    .map(|b| anthropic_batch(b, request))
                    .collect();
                Routed::json(200, &list(data, false))
            }
            (_, [id, rest @ ..]) => anthropic_one(shared, request, method, id, rest),
            _ => not_found(Api::Anthropic, request),
        });
    }
    let path = path.strip_prefix("/v1").unwrap_or(path);
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    Some(match (method, segments.as_slice()) {
        ("POST", ["files"]) => upload(shared, request),
        ("GET", ["files", id]) => match lock(&shared.book).files.get(*id) {
            Some(file) => Routed::json(200, &file_object(file)),
            None => missing(Api::OpenAi, "file", id),
        },
        ("GET", ["files", id, "content"]) => match lock(&shared.book).files.get(*id) {
            Some(file) => Routed {
                status: 200,
                content_type: "application/octet-stream",
                body: file.data.clone(),
            },
            None => missing(Api::OpenAi, "file", id),
        },
        ("DELETE", ["files", id]) => match lock(&shared.book).files.remove(*id) {
            Some(_) => Routed::json(200, &json!({"id": id, "object": "file", "deleted": true})),
            None => missing(Api::OpenAi, "file", id),
        },
        ("POST", ["batches"]) => openai_create(shared, request),
        ("GET", ["batches"]) => {
            let mut book = lock(&shared.book);
            let ids: Vec<String> = book
                .batches
                .iter()
                .rev()
                .filter(|b| b.api == Api::OpenAi)
                .map(|b| b.id.clone())
                .collect();
            let data = ids.iter().map(|id| openai_batch(&mut book, id)).collect();
            Routed::json(200, &list(data, true))
        }
        ("GET", ["batches", id]) => {
            let mut book = lock(&shared.book);
            match book.batch(id).filter(|b| b.api == Api::OpenAi) {
                Some(_) => {
                    book.poll(id);
                    shared.batch_reads.send_modify(|reads| *reads += 1);
                    Routed::json(200, &openai_batch(&mut book, id))
                }
                None => missing(Api::OpenAi, "batch", id),
            }
        }
        ("POST", ["batches", id, "cancel"]) => {
            let mut book = lock(&shared.book);
            match book.batch(id).filter(|b| b.api == Api::OpenAi) {
                Some(batch) => {
                    if batch.running() {
                        let now = SystemTime::now();
                        batch.cancelled = Some(now);
                        batch.ended = Some(now);
                    }
                    Routed::json(200, &openai_batch(&mut book, id))
                }
                None => missing(Api::OpenAi, "batch", id),
            }
        }
        _ => return None,
    })
}

fn list(data: Vec<Value>, openai: bool) -> Value {
    let first = data.first().and_then(|b| b.get("id")).cloned();
    let last = data.last().and_then(|b| b.get("id")).cloned();
    let mut list = json!({"data": data, "has_more": false, "first_id": first, "last_id": last});
    if openai {
        list["object"] = json!("list");
    }
    list
}

fn error(api: Api, status: u16, kind: &str, message: &str) -> Routed {
    let body = match api {
        Api::Anthropic => anthropic::error_json(kind, message),
        Api::OpenAi | Api::Responses => openai::error_json(message, kind, None),
    };
    Routed::json(status, &body)
}

fn not_found(api: Api, request: &HttpRequest) -> Routed {
    let message = format!("no route for {} {}", request.method, request.path);
    error(api, 404, "not_found_error", &message)
}

fn missing(api: Api, what: &str, id: &str) -> Routed {
    error(
        api,
        404,
        "not_found_error",
        &format!("no {what} with id {id}"),
    )
}

/// Answers one call of a batch from the strategy, as the direct route would have.
fn run_item(
    shared: &Shared,
    api: Api,
    batch: &str,
    parsed: Result<Request, String>,
) -> (u64, Outcome) {
    let request = match parsed {
        Ok(request) => request,
        Err(message) => {
            let body = match api {
                Api::Anthropic => anthropic::error_json("invalid_request_error", &message),
                Api::OpenAi | Api::Responses => {
                    openai::error_json(&message, "invalid_request_error", None)
                }
            };
            return (0, Outcome::Errored { status: 400, body });
        }
    };
    let call = {
        let mut served = lock(&shared.served);
        let call = served.len() as u64 + 1;
        served.push(Served {
            call,
            api,
            streamed: false,
            request: request.clone(),
            batch: Some(batch.to_owned()),
        });
        call
    };
    shared.received.send_modify(|received| *received += 1);
    let reply = lock(&shared.strategy).reply(call, &request);
    let failure = |failure: &Failure| {
        let (status, _, body) = match api {
            Api::Anthropic => anthropic::error_body(failure),
            Api::OpenAi | Api::Responses => openai::error_body(failure),
        };
        Outcome::Errored { status, body }
    };
    let outcome = match reply {
        Err(err) => failure(&Failure::Server {
            status: 500,
            message: err.to_string(),
        }),
        Ok(Reply::Failure(Failure::Timeout)) => Outcome::Expired,
        Ok(Reply::Failure(failed)) => failure(&failed),
        Ok(Reply::Answer(mut answer)) => match &answer.interrupted {
            Some(failed) => failure(&failed.clone()),
            None => {
                crate::structured::fit_answer(&request, &mut answer.response);
                lock(&shared.cache).apply(&request, &mut answer.response.usage);
                Outcome::Succeeded(match api {
                    Api::Anthropic => anthropic::message(&answer, call),
                    Api::OpenAi | Api::Responses => {
                        openai::completion(&answer, call, secs(SystemTime::now()))
                    }
                })
            }
        },
    };
    (call, outcome)
}

/// Records a new batch, answering its calls; returns its id.
fn create(
    shared: &Shared,
    api: Api,
    prefix: &str,
    calls: Vec<(String, Result<Request, String>)>,
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

fn anthropic_create(shared: &Shared, request: &HttpRequest) -> Routed {
    let body: Value = match serde_json::from_slice(&request.body) {
        Ok(body) => body,
        Err(err) => {
            let message = format!("the body is not json: {err}");
            return error(Api::Anthropic, 400, "invalid_request_error", &message);
        }
    };
    let Some(requests) = body.get("requests").and_then(Value::as_array) else {
        return error(
            Api::Anthropic,
            400,
            "invalid_request_error",
            "requests: field required",
        );
    };
    let mut seen = HashSet::new();
    let mut calls = Vec::new();
    for (i, entry) in requests.iter().enumerate() {
        let Some(custom_id) = entry.get("custom_id").and_then(Value::as_str) else {
            let message = format!("requests.{i}.custom_id: field required");
            return error(Api::Anthropic, 400, "invalid_request_error", &message);
        };
        if !seen.insert(custom_id) {
            let message = format!("custom_id {custom_id:?} is used more than once");
            return error(Api::Anthropic, 400, "invalid_request_error", &message);
        }
        let parsed = match entry.get("params") {
            Some(params) => anthropic::parse_request(params).map(|(request, _)| request),
            None => Err(format!("requests.{i}.params: field required")),
        };
        calls.push((custom_id.to_owned(), parsed));
    }
    let id = create(shared, Api::Anthropic, "msgbatch_sim_", calls, None);
    let mut book = lock(&shared.book);
    let batch = book.batch(&id).expect("the batch was just created");
    // As the service answers a create: in progress, whatever happens next.
    let mut answer = anthropic_batch(batch, request);
    answer["processing_status"] = json!("in_progress");
    answer["ended_at"] = Value::Null;
    answer["results_url"] = Value::Null;
    answer["request_counts"] = json!({
        "processing": batch.items.len(), "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0,
    });
    Routed::json(200, &answer)
}

fn anthropic_one(
    shared: &Shared,
    request: &HttpRequest,
    method: &str,
    id: &str,
    rest: &[&str],
) -> Routed {
    let mut book = lock(&shared.book);
    let Some(batch) = book.batch(id).filter(|b| b.api == Api::Anthropic) else {
        return missing(Api::Anthropic, "message batch", id);
    };
    match (method, rest) {
        ("GET", []) => {
            book.poll(id);
            shared.batch_reads.send_modify(|reads| *reads += 1);
            let batch = book.batch(id).expect("looked up above");
            Routed::json(200, &anthropic_batch(batch, request))
        }
        ("POST", ["cancel"]) => {
            if batch.running() {
                let now = SystemTime::now();
                batch.cancelled = Some(now);
                batch.ended = Some(now);
            }
            let mut answer = anthropic_batch(batch, request);
            if batch.cancelled.is_some() {
                answer["processing_status"] = json!("canceling");
            }
            Routed::json(200, &answer)
        }
        ("GET", ["results"]) if batch.running() => error(
            Api::Anthropic,
            400,
            "invalid_request_error",
            &format!("message batch {id} is still in progress; its results are not ready"),
        ),
        ("GET", ["results"]) => {
            let mut body = Vec::new();
            for (item, outcome) in batch.shown() {
                let result = match outcome {
                    Some(Outcome::Succeeded(message)) => {
                        json!({"type": "succeeded", "message": message})
                    }
                    Some(Outcome::Errored { body, .. }) => {
                        json!({"type": "errored", "error": body})
                    }
                    Some(Outcome::Expired) => json!({"type": "expired"}),
                    None => json!({"type": "canceled"}),
                };
                body.extend_from_slice(
                    json!({"custom_id": item.custom_id, "result": result})
                        .to_string()
                        .as_bytes(),
                );
                body.push(b'\n');
            }
            Routed {
                status: 200,
                content_type: "application/x-jsonl",
                body,
            }
        }
        ("DELETE", []) if batch.running() => error(
            Api::Anthropic,
            400,
            "invalid_request_error",
            &format!("message batch {id} is still in progress; cancel it first"),
        ),
        ("DELETE", []) => {
            book.batches.retain(|b| b.id != id);
            Routed::json(200, &json!({"id": id, "type": "message_batch_deleted"}))
        }
        _ => not_found(Api::Anthropic, request),
    }
}

/// A `message_batch` object as it is now.
fn anthropic_batch(batch: &Batch, request: &HttpRequest) -> Value {
    let (mut processing, mut succeeded, mut errored, mut expired, mut canceled) = (0, 0, 0, 0, 0);
    for (_, outcome) in batch.shown() {
        match (batch.running(), outcome) {
            (true, _) => processing += 1,
            (false, Some(Outcome::Succeeded(_))) => succeeded += 1,
            (false, Some(Outcome::Errored { .. })) => errored += 1,
            (false, Some(Outcome::Expired)) => expired += 1,
            (false, None) => canceled += 1,
        }
    }
    let host = request.header("host").unwrap_or("127.0.0.1");
    let results = (!batch.running())
        .then(|| format!("http://{host}/v1/messages/batches/{}/results", batch.id));
    json!({
        "id": batch.id,
        "type": "message_batch",
        "processing_status": if batch.running() { "in_progress" } else { "ended" },
        "request_counts": {
            "processing": processing,
            "succeeded": succeeded,
            "errored": errored,
            "canceled": canceled,
            "expired": expired,
        },
        "created_at": rfc3339(batch.created),
        "expires_at": rfc3339(batch.created + Duration::from_secs(24 * 3600)),
        "ended_at": batch.ended.map(rfc3339),
        "cancel_initiated_at": batch.cancelled.map(rfc3339),
        "archived_at": null,
        "results_url": results,
    })
}

fn file_object(file: &File) -> Value {
    json!({
        "id": file.id,
        "object": "file",
        "bytes": file.data.len(),
        "created_at": secs(file.created),
        "filename": file.filename,
        "purpose": file.purpose,
        "status": "processed",
    })
}

fn upload(shared: &Shared, request: &HttpRequest) -> Routed {
    let invalid = |message: &str| error(Api::OpenAi, 400, "invalid_request_error", message);
    let content_type = request.header("content-type").unwrap_or("");
    let parts = match multipart::parse(content_type, &request.body) {
        Ok(parts) => parts,
        Err(message) => return invalid(&message),
    };
    let field = |name: &str| parts.iter().find(|p| p.name == name);
    let Some(purpose) = field("purpose") else {
        return invalid("purpose: field required");
    };
    let Some(file) = field("file") else {
        return invalid("file: field required");
    };
    let mut book = lock(&shared.book);
    let id = book.id("file-sim");
    let file = File {
        id: id.clone(),
        filename: file.filename.clone().unwrap_or_else(|| "upload".to_owned()),
        purpose: String::from_utf8_lossy(&purpose.data).into_owned(),
        created: SystemTime::now(),
        data: file.data.clone(),
    };
    let answer = file_object(&file);
    book.files.insert(id, file);
    Routed::json(200, &answer)
}

fn openai_create(shared: &Shared, request: &HttpRequest) -> Routed {
    let invalid = |message: &str| error(Api::OpenAi, 400, "invalid_request_error", message);
    let body: Value = match serde_json::from_slice(&request.body) {
        Ok(body) => body,
        Err(err) => return invalid(&format!("the body is not json: {err}")),
    };
    let Some(file_id) = body.get("input_file_id").and_then(Value::as_str) else {
        return invalid("input_file_id: field required");
    };
    let endpoint = body.get("endpoint").and_then(Value::as_str).unwrap_or("");
    if endpoint != "/v1/chat/completions" {
        return invalid(&format!(
            "endpoint {endpoint:?}: the simulator batches /v1/chat/completions"
        ));
    }
    let input = match lock(&shared.book).files.get(file_id) {
        Some(file) if file.purpose == "batch" => file.data.clone(),
        Some(_) => {
            return invalid(&format!(
                "file {file_id} was not uploaded for purpose batch"
            ));
        }
        None => return invalid(&format!("no file with id {file_id}")),
    };
    // A line that cannot be read fails the whole batch, as the service's validation does.
    let mut failed = Vec::new();
    let mut seen = HashSet::new();
    let mut calls = Vec::new();
    for (number, line) in input.split(|&b| b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        let mut fail = |code: &str, message: String| {
            failed
                .push(json!({"code": code, "message": message, "param": null, "line": number + 1}));
        };
        let Ok(entry) = serde_json::from_slice::<Value>(line) else {
            fail("invalid_json_line", "this line is not json".to_owned());
            continue;
        };
        let custom_id = entry.get("custom_id").and_then(Value::as_str).unwrap_or("");
        if custom_id.is_empty() || !seen.insert(custom_id.to_owned()) {
            fail(
                "invalid_custom_id",
                format!("custom_id {custom_id:?} is missing or repeated"),
            );
            continue;
        }
        if entry.get("url").and_then(Value::as_str) != Some(endpoint) {
            fail("mismatched_url", format!("the url must be {endpoint}"));
            continue;
        }
        let parsed = match entry.get("body") {
            Some(body) => openai::parse_request(body).map(|(request, _)| request),
            None => Err("body: field required".to_owned()),
        };
        calls.push((custom_id.to_owned(), parsed));
    }
    let input_file = Some(file_id.to_owned());
    let id = if failed.is_empty() {
        create(shared, Api::OpenAi, "batch_sim_", calls, input_file)
    } else {
        let id = create(shared, Api::OpenAi, "batch_sim_", Vec::new(), input_file);
        let mut book = lock(&shared.book);
        let batch = book.batch(&id).expect("the batch was just created");
        batch.failed = failed;
        batch.ended = Some(batch.created);
        id
    };
    let mut book = lock(&shared.book);
    let mut answer = openai_batch(&mut book, &id);
    // As the service answers a create.
    answer["status"] = json!("validating");
    for field in [
        "output_file_id",
        "error_file_id",
        "completed_at",
        "failed_at",
    ] {
        answer[field] = Value::Null;
    }
    answer["request_counts"]["completed"] = json!(0);
    answer["request_counts"]["failed"] = json!(0);
    Routed::json(200, &answer)
}

/// A `batch` object as it is now, writing its result files when it has ended.
fn openai_batch(book: &mut Book, id: &str) -> Value {
    let (output, errors) = {
        let batch = book.batch(id).expect("callers look the batch up first");
        if batch.running() || !batch.failed.is_empty() || batch.output_file.is_some() {
            (None, None)
        } else {
            let mut output = Vec::new();
            let mut errors = Vec::new();
            for (item, outcome) in batch.shown() {
                let request_id = format!("req_sim_{}", item.call);
                let line = match outcome {
                    Some(Outcome::Succeeded(body)) => json!({
                        "id": format!("batch_req_{}", item.call),
                        "custom_id": item.custom_id,
                        "response": {"status_code": 200, "request_id": request_id, "body": body},
                        "error": null,
                    }),
                    Some(Outcome::Errored { status, body }) => json!({
                        "id": format!("batch_req_{}", item.call),
                        "custom_id": item.custom_id,
                        "response": {"status_code": status, "request_id": request_id, "body": body},
                        "error": null,
                    }),
                    Some(Outcome::Expired) | None => {
                        let (code, message) = match outcome {
                            None => ("batch_cancelled", "This request was cancelled."),
                            _ => (
                                "batch_expired",
                                "This request could not be executed before the completion \
                                 window expired.",
                            ),
                        };
                        errors.push(json!({
                            "id": format!("batch_req_{}", item.call),
                            "custom_id": item.custom_id,
                            "response": null,
                            "error": {"code": code, "message": message},
                        }));
                        continue;
                    }
                };
                output.push(line);
            }
            (Some(output), Some(errors))
        }
    };
    if let (Some(output), Some(errors)) = (output, errors) {
        let mut write = |name: &str, lines: Vec<Value>| {
            let id = book.id("file-sim");
            let mut data = Vec::new();
            for line in lines {
                data.extend_from_slice(line.to_string().as_bytes());
                data.push(b'\n');
            }
            book.files.insert(
                id.clone(),
                File {
                    id: id.clone(),
                    filename: name.to_owned(),
                    purpose: "batch_output".to_owned(),
                    created: SystemTime::now(),
                    data,
                },
            );
            id
        };
        let output_file = write("batch_output.jsonl", output);
        let error_file = (!errors.is_empty()).then(|| write("batch_errors.jsonl", errors));
        let batch = book.batch(id).expect("looked up above");
        batch.output_file = Some(output_file);
        batch.error_file = error_file;
    }
    let batch = book.batch(id).expect("looked up above");
    let status = match (
        batch.running(),
        batch.cancelled.is_some(),
        batch.failed.is_empty(),
    ) {
        (true, _, _) => "in_progress",
        (false, true, _) => "cancelled",
        (false, false, false) => "failed",
        (false, false, true) => "completed",
    };
    let (mut completed, mut failed) = (0, 0);
    if !batch.running() {
        for (_, outcome) in batch.shown() {
            match outcome {
                Some(Outcome::Succeeded(_)) => completed += 1,
                _ => failed += 1,
            }
        }
    }
    let ended = batch.ended.map(secs);
    json!({
        "id": batch.id,
        "object": "batch",
        "endpoint": "/v1/chat/completions",
        "errors": if batch.failed.is_empty() { Value::Null } else {
            json!({"object": "list", "data": batch.failed})
        },
        "input_file_id": batch.input_file,
        "completion_window": "24h",
        "status": status,
        "output_file_id": batch.output_file,
        "error_file_id": batch.error_file,
        "created_at": secs(batch.created),
        "in_progress_at": secs(batch.created),
        "expires_at": secs(batch.created) + 24 * 3600,
        "finalizing_at": ended,
        "completed_at": if status == "completed" { ended } else { None },
        "failed_at": if status == "failed" { ended } else { None },
        "cancelling_at": batch.cancelled.map(secs),
        "cancelled_at": batch.cancelled.map(secs),
        "request_counts": {"total": batch.items.len(), "completed": completed, "failed": failed},
        "metadata": {},
    })
}
