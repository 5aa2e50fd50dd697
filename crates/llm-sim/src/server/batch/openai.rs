//! OpenAI's Batch API as the fake server answers it: the files a batch reads and writes
//! (`/v1/files`: upload, retrieve, content, delete) and the batches (`/v1/batches`: create,
//! retrieve, list, cancel). A batch's output and error files are written when it is first
//! read after it has ended.

use std::collections::HashSet;
use std::time::SystemTime;

use llm_core::wire::batch::Page;
use llm_core::wire::batch::openai::{
    Batch as BatchObject, BatchError, BatchErrors, BatchRequestCounts, BatchRequestInput,
    BatchRequestOutput, BatchStatus, CreateBatchRequest, FileDeleted, FileObject, OutputError,
    OutputResponse,
};
use serde::Deserialize;
use serde_json::Value;

use super::{Book, Calls, File, Item, Outcome, Routed, create, secs, segments};
use crate::server::http::HttpRequest;
use crate::server::wire::{missing_field, to_json};
use crate::server::{Api, Shared, lock, multipart, openai};

/// The endpoint the simulator batches.
const ENDPOINT: &str = "/v1/chat/completions";

/// Answers `request` to `/v1{path}` if it is a file or batch route.
pub(super) fn route(shared: &Shared, request: &HttpRequest, path: &str) -> Option<Routed> {
    Some(match (request.method.as_str(), segments(path).as_slice()) {
        ("POST", ["files"]) => upload(shared, request),
        ("GET", ["files", id]) => match lock(&shared.book).files.get(*id) {
            Some(file) => Routed::json(200, &file_object(file)),
            None => missing("file", id),
        },
        ("GET", ["files", id, "content"]) => match lock(&shared.book).files.get(*id) {
            Some(file) => Routed {
                status: 200,
                content_type: "application/octet-stream",
                body: file.data.clone(),
            },
            None => missing("file", id),
        },
        ("DELETE", ["files", id]) => match lock(&shared.book).files.remove(*id) {
            Some(_) => Routed::json(
                200,
                &FileDeleted {
                    id: (*id).to_owned(),
                    object: "file".to_owned(),
                    deleted: true,
                },
            ),
            None => missing("file", id),
        },
        ("POST", ["batches"]) => create_batch(shared, request),
        ("GET", ["batches"]) => {
            let mut book = lock(&shared.book);
            let ids: Vec<String> = book
                .batches
                .iter()
                .rev()
                .filter(|b| b.api == Api::OpenAi)
                .map(|b| b.id.clone())
                .collect();
            let data = ids.iter().map(|id| batch_object(&mut book, id)).collect();
            Routed::json(200, &Page::whole(Some("list"), data, |b| &b.id))
        }
        ("GET", ["batches", id]) => {
            let mut book = lock(&shared.book);
            if book.batch_of(Api::OpenAi, id).is_none() {
                return Some(missing("batch", id));
            }
            book.poll(id);
            shared.batch_reads.send_modify(|reads| *reads += 1);
            Routed::json(200, &batch_object(&mut book, id))
        }
        ("POST", ["batches", id, "cancel"]) => {
            let mut book = lock(&shared.book);
            let Some(batch) = book.batch_of(Api::OpenAi, id) else {
                return Some(missing("batch", id));
            };
            batch.cancel();
            Routed::json(200, &batch_object(&mut book, id))
        }
        _ => return None,
    })
}

fn error(status: u16, kind: &str, message: &str) -> Routed {
    Routed::json(status, &openai::error_json(message, kind, None))
}

fn invalid(message: &str) -> Routed {
    error(400, "invalid_request_error", message)
}

fn missing(what: &str, id: &str) -> Routed {
    error(404, "not_found_error", &format!("no {what} with id {id}"))
}

fn file_object(file: &File) -> FileObject {
    FileObject {
        id: file.id.clone(),
        object: "file".to_owned(),
        bytes: Some(file.data.len() as u64),
        created_at: Some(secs(file.created)),
        filename: Some(file.filename.clone()),
        purpose: Some(file.purpose.clone()),
        status: Some("processed".to_owned()),
    }
}

fn upload(shared: &Shared, request: &HttpRequest) -> Routed {
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

/// Reads a create body: the input file and the endpoint, which must be the one the
/// simulator batches.
fn read_create(body: &[u8]) -> Result<CreateBatchRequest, String> {
    let body: Value =
        serde_json::from_slice(body).map_err(|err| format!("the body is not json: {err}"))?;
    let create = CreateBatchRequest::deserialize(&body).map_err(|err| {
        missing_field(&err).map_or_else(|| err.to_string(), |f| format!("{f}: field required"))
    })?;
    if create.endpoint != ENDPOINT {
        return Err(format!(
            "endpoint {:?}: the simulator batches {ENDPOINT}",
            create.endpoint
        ));
    }
    Ok(create)
}

/// Reads an input file: its calls, or, when any line cannot be read, why each such line was
/// refused (which fails the whole batch, as the service's validation does). A call whose
/// body does not read is refused alone.
fn read_input(input: &[u8]) -> Result<Calls, Vec<BatchError>> {
    let mut failed = Vec::new();
    let mut seen = HashSet::new();
    let mut calls = Vec::new();
    for (number, line) in input.split(|&b| b == b'\n').enumerate() {
        if line.trim_ascii().is_empty() {
            continue;
        }
        let mut fail = |code: &str, message: String| {
            failed.push(BatchError {
                code: Some(code.to_owned()),
                message: Some(message),
                param: None,
                line: Some(number as u64 + 1),
            });
        };
        let Ok(entry) = serde_json::from_slice::<Value>(line) else {
            fail("invalid_json_line", "this line is not json".to_owned());
            continue;
        };
        let entry = match BatchRequestInput::deserialize(&entry) {
            Ok(entry) => entry,
            Err(err) => {
                fail(
                    "invalid_json_line",
                    format!("this line is not a request: {err}"),
                );
                continue;
            }
        };
        if entry.custom_id.is_empty() || !seen.insert(entry.custom_id.clone()) {
            let message = format!("custom_id {:?} is missing or repeated", entry.custom_id);
            fail("invalid_custom_id", message);
            continue;
        }
        if entry.url != ENDPOINT {
            fail("mismatched_url", format!("the url must be {ENDPOINT}"));
            continue;
        }
        let parsed = match entry.body {
            Value::Null => Err("body: field required".to_owned()),
            body => openai::parse_request(&body).map(|(request, _)| request),
        };
        calls.push((entry.custom_id, parsed));
    }
    if failed.is_empty() {
        Ok(calls)
    } else {
        Err(failed)
    }
}

fn create_batch(shared: &Shared, request: &HttpRequest) -> Routed {
    let create_body = match read_create(&request.body) {
        Ok(create) => create,
        Err(message) => return invalid(&message),
    };
    let file_id = create_body.input_file_id;
    let input = match lock(&shared.book).files.get(&file_id) {
        Some(file) if file.purpose == "batch" => file.data.clone(),
        Some(_) => {
            return invalid(&format!(
                "file {file_id} was not uploaded for purpose batch"
            ));
        }
        None => return invalid(&format!("no file with id {file_id}")),
    };
    let input_file = Some(file_id);
    let id = match read_input(&input) {
        Ok(calls) => create(shared, Api::OpenAi, "batch_sim_", calls, input_file),
        Err(failed) => {
            let id = create(shared, Api::OpenAi, "batch_sim_", Vec::new(), input_file);
            let mut book = lock(&shared.book);
            let batch = book.batch(&id).expect("the batch was just created");
            batch.failed = failed;
            batch.ended = Some(batch.created);
            id
        }
    };
    let mut book = lock(&shared.book);
    // As the service answers a create.
    let answer = batch_object(&mut book, &id);
    let answer = BatchObject {
        status: BatchStatus::Validating,
        output_file_id: None,
        error_file_id: None,
        completed_at: None,
        failed_at: None,
        request_counts: BatchRequestCounts {
            completed: 0,
            failed: 0,
            ..answer.request_counts
        },
        ..answer
    };
    Routed::json(200, &answer)
}

/// The line of the output or error file for one call (`None`: cancelled): its answer, or
/// why it has none.
fn output_line(item: &Item, outcome: Option<&Outcome>) -> BatchRequestOutput {
    let (status_code, body) = match outcome {
        Some(Outcome::Succeeded { answer, created }) => {
            (200, openai::completion(answer, item.call, *created))
        }
        Some(Outcome::Invalid(message)) => (
            400,
            openai::error_json(message, "invalid_request_error", None),
        ),
        Some(Outcome::Failed(failure)) => {
            let (status, _, body) = openai::error_body(failure);
            (status, body)
        }
        Some(Outcome::Expired) | None => {
            let (code, message) = match outcome {
                None => ("batch_cancelled", "This request was cancelled."),
                _ => (
                    "batch_expired",
                    "This request could not be executed before the completion window \
                     expired.",
                ),
            };
            return BatchRequestOutput {
                id: Some(format!("batch_req_{}", item.call)),
                custom_id: item.custom_id.clone(),
                response: None,
                error: Some(OutputError {
                    code: Some(code.to_owned()),
                    message: Some(message.to_owned()),
                }),
            };
        }
    };
    BatchRequestOutput {
        id: Some(format!("batch_req_{}", item.call)),
        custom_id: item.custom_id.clone(),
        response: Some(OutputResponse {
            status_code,
            request_id: Some(format!("req_sim_{}", item.call)),
            body,
        }),
        error: None,
    }
}

/// Writes the output file (answers) and error file (calls without one) of the ended batch
/// `id`, once.
fn write_files(book: &mut Book, id: &str) {
    let batch = book.batch(id).expect("callers look the batch up first");
    if batch.running() || !batch.failed.is_empty() || batch.output_file.is_some() {
        return;
    }
    let (output, errors): (Vec<_>, Vec<_>) = batch
        .shown()
        .map(|(item, outcome)| output_line(item, outcome))
        .partition(|line| line.response.is_some());
    let mut write = |name: &str, lines: Vec<BatchRequestOutput>| {
        let id = book.id("file-sim");
        let mut data = Vec::new();
        for line in lines {
            data.extend_from_slice(to_json(&line).to_string().as_bytes());
            data.push(b'\n');
        }
        let file = File {
            id: id.clone(),
            filename: name.to_owned(),
            purpose: "batch_output".to_owned(),
            created: SystemTime::now(),
            data,
        };
        book.files.insert(id.clone(), file);
        id
    };
    let output_file = write("batch_output.jsonl", output);
    let error_file = (!errors.is_empty()).then(|| write("batch_errors.jsonl", errors));
    let batch = book.batch(id).expect("looked up above");
    batch.output_file = Some(output_file);
    batch.error_file = error_file;
}

/// A `batch` object as it is now, writing its result files when it has ended.
fn batch_object(book: &mut Book, id: &str) -> BatchObject {
    write_files(book, id);
    let batch = book.batch(id).expect("looked up above");
    let status = match (
        batch.running(),
        batch.cancelled.is_some(),
        batch.failed.is_empty(),
    ) {
        (true, _, _) => BatchStatus::InProgress,
        (false, true, _) => BatchStatus::Cancelled,
        (false, false, false) => BatchStatus::Failed,
        (false, false, true) => BatchStatus::Completed,
    };
    let mut counts = BatchRequestCounts {
        total: batch.items.len() as u64,
        ..BatchRequestCounts::default()
    };
    if !batch.running() {
        for (_, outcome) in batch.shown() {
            match outcome {
                Some(Outcome::Succeeded { .. }) => counts.completed += 1,
                _ => counts.failed += 1,
            }
        }
    }
    let created = secs(batch.created);
    let ended = batch.ended.map(secs);
    let errors = (!batch.failed.is_empty()).then(|| BatchErrors {
        object: Some("list".to_owned()),
        data: batch.failed.clone(),
    });
    BatchObject {
        id: batch.id.clone(),
        object: "batch".to_owned(),
        endpoint: Some(ENDPOINT.to_owned()),
        errors,
        input_file_id: batch.input_file.clone(),
        completion_window: Some("24h".to_owned()),
        status,
        output_file_id: batch.output_file.clone(),
        error_file_id: batch.error_file.clone(),
        created_at: Some(created),
        in_progress_at: Some(created),
        expires_at: Some(created + 24 * 3600),
        finalizing_at: ended,
        completed_at: ended.filter(|_| status == BatchStatus::Completed),
        failed_at: ended.filter(|_| status == BatchStatus::Failed),
        cancelling_at: batch.cancelled.map(secs),
        cancelled_at: batch.cancelled.map(secs),
        request_counts: counts,
        metadata: Some(Default::default()),
    }
}
