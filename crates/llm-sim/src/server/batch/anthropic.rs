//! Anthropic's Message Batches as the fake server answers them: create, retrieve, list,
//! cancel, delete and the results file, under `/v1/messages/batches`.

use std::collections::HashSet;
use std::time::{Duration, SystemTime};

use llm_core::wire::anthropic::ErrorBody;
use llm_core::wire::batch::Page;
use llm_core::wire::batch::anthropic::{
    MessageBatch, MessageBatchDeleted, MessageBatchIndividualResponse, MessageBatchRequest,
    MessageBatchResult, ProcessingStatus, RequestCounts,
};
use serde::Deserialize;
use serde_json::Value;

use super::{Batch, Calls, Item, Outcome, Routed, create, segments};
use crate::server::http::HttpRequest;
use crate::server::wire::{at, to_json};
use crate::server::{Api, Shared, anthropic, lock};

/// Answers `request` to `/v1/messages/batches{rest}`.
pub(super) fn route(shared: &Shared, request: &HttpRequest, rest: &str) -> Routed {
    match (request.method.as_str(), segments(rest).as_slice()) {
        ("POST", []) => create_batch(shared, request),
        ("GET", []) => {
            let book = lock(&shared.book);
            let data: Vec<MessageBatch> = book
                .batches
                .iter()
                .rev()
                .filter(|b| b.api == Api::Anthropic)
                .map(|b| message_batch(b, request))
                .collect();
            Routed::json(200, &Page::whole(None, data, |b| &b.id))
        }
        (method, [id, rest @ ..]) => one(shared, request, method, id, rest),
        _ => not_found(request),
    }
}

fn error(status: u16, kind: &str, message: &str) -> Routed {
    Routed::json(status, &ErrorBody::new(kind, message))
}

fn invalid(message: &str) -> Routed {
    error(400, "invalid_request_error", message)
}

fn not_found(request: &HttpRequest) -> Routed {
    let message = format!("no route for {} {}", request.method, request.path);
    error(404, "not_found_error", &message)
}

/// Reads a create body: each call's custom id and request, or why the whole body is
/// refused. A call whose params do not read is refused alone, as an errored result.
fn read_create(body: &[u8]) -> Result<Calls, String> {
    let body: Value =
        serde_json::from_slice(body).map_err(|err| format!("the body is not json: {err}"))?;
    let Some(requests) = body.get("requests").and_then(Value::as_array) else {
        return Err("requests: field required".to_owned());
    };
    let mut seen = HashSet::new();
    let mut calls = Vec::new();
    for (i, entry) in requests.iter().enumerate() {
        // One entry at a time, so that an error names the entry at fault.
        let entry = MessageBatchRequest::deserialize(entry)
            .map_err(|err| at(&format!("requests.{i}"), &err))?;
        if !seen.insert(entry.custom_id.clone()) {
            return Err(format!(
                "custom_id {:?} is used more than once",
                entry.custom_id
            ));
        }
        let parsed = match entry.params {
            Value::Null => Err(format!("requests.{i}.params: field required")),
            params => anthropic::parse_request(&params).map(|(request, _)| request),
        };
        calls.push((entry.custom_id, parsed));
    }
    Ok(calls)
}

fn create_batch(shared: &Shared, request: &HttpRequest) -> Routed {
    let calls = match read_create(&request.body) {
        Ok(calls) => calls,
        Err(message) => return invalid(&message),
    };
    let id = create(shared, Api::Anthropic, "msgbatch_sim_", calls, None);
    let mut book = lock(&shared.book);
    let batch = book.batch(&id).expect("the batch was just created");
    // As the service answers a create: in progress, whatever happens next.
    let answer = MessageBatch {
        processing_status: ProcessingStatus::InProgress,
        ended_at: None,
        results_url: None,
        request_counts: RequestCounts {
            processing: batch.items.len() as u64,
            ..RequestCounts::default()
        },
        ..message_batch(batch, request)
    };
    Routed::json(200, &answer)
}

/// Answers `request` to one batch's route: `.../{id}{rest}`.
fn one(shared: &Shared, request: &HttpRequest, method: &str, id: &str, rest: &[&str]) -> Routed {
    let mut book = lock(&shared.book);
    let Some(batch) = book.batch_of(Api::Anthropic, id) else {
        return error(
            404,
            "not_found_error",
            &format!("no message batch with id {id}"),
        );
    };
    match (method, rest) {
        ("GET", []) => {
            book.poll(id);
            shared.batch_reads.send_modify(|reads| *reads += 1);
            let batch = book.batch(id).expect("looked up above");
            Routed::json(200, &message_batch(batch, request))
        }
        ("POST", ["cancel"]) => {
            batch.cancel();
            let mut answer = message_batch(batch, request);
            if batch.cancelled.is_some() {
                answer.processing_status = ProcessingStatus::Canceling;
            }
            Routed::json(200, &answer)
        }
        ("GET", ["results"]) if batch.running() => invalid(&format!(
            "message batch {id} is still in progress; its results are not ready"
        )),
        ("GET", ["results"]) => {
            let mut body = Vec::new();
            for (item, outcome) in batch.shown() {
                let line = MessageBatchIndividualResponse {
                    custom_id: item.custom_id.clone(),
                    result: result(item, outcome),
                };
                body.extend_from_slice(to_json(&line).to_string().as_bytes());
                body.push(b'\n');
            }
            Routed {
                status: 200,
                content_type: "application/x-jsonl",
                body,
            }
        }
        ("DELETE", []) if batch.running() => invalid(&format!(
            "message batch {id} is still in progress; cancel it first"
        )),
        ("DELETE", []) => {
            book.batches.retain(|b| b.id != id);
            let deleted = MessageBatchDeleted {
                id: id.to_owned(),
                kind: "message_batch_deleted".to_owned(),
            };
            Routed::json(200, &deleted)
        }
        _ => not_found(request),
    }
}

/// What became of one call, as its line of the results says it (`None`: cancelled).
fn result(item: &Item, outcome: Option<&Outcome>) -> MessageBatchResult {
    match outcome {
        Some(Outcome::Succeeded { answer, .. }) => MessageBatchResult::Succeeded {
            message: anthropic::message(answer, item.call),
        },
        Some(Outcome::Invalid(message)) => MessageBatchResult::Errored {
            error: ErrorBody::new("invalid_request_error", message),
        },
        Some(Outcome::Failed(failure)) => MessageBatchResult::Errored {
            error: anthropic::failure_body(failure).2,
        },
        Some(Outcome::Expired) => MessageBatchResult::Expired,
        None => MessageBatchResult::Canceled,
    }
}

/// A `message_batch` object as it is now.
fn message_batch(batch: &Batch, request: &HttpRequest) -> MessageBatch {
    let mut counts = RequestCounts::default();
    for (_, outcome) in batch.shown() {
        let count = match (batch.running(), outcome) {
            (true, _) => &mut counts.processing,
            (false, Some(Outcome::Succeeded { .. })) => &mut counts.succeeded,
            (false, Some(Outcome::Invalid(_) | Outcome::Failed(_))) => &mut counts.errored,
            (false, Some(Outcome::Expired)) => &mut counts.expired,
            (false, None) => &mut counts.canceled,
        };
        *count += 1;
    }
    let host = request.header("host").unwrap_or("127.0.0.1");
    let results_url = (!batch.running())
        .then(|| format!("http://{host}/v1/messages/batches/{}/results", batch.id));
    MessageBatch {
        id: batch.id.clone(),
        kind: "message_batch".to_owned(),
        processing_status: if batch.running() {
            ProcessingStatus::InProgress
        } else {
            ProcessingStatus::Ended
        },
        request_counts: counts,
        created_at: Some(rfc3339(batch.created)),
        expires_at: Some(rfc3339(batch.created + Duration::from_secs(24 * 3600))),
        ended_at: batch.ended.map(rfc3339),
        cancel_initiated_at: batch.cancelled.map(rfc3339),
        archived_at: None,
        results_url,
    }
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
