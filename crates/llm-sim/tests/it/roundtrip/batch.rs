//! The batch wire formats (llm-core's `wire::batch`, which the batch clients and the fake
//! server both speak): every type decodes back to what it encoded, samples shaped as the API
//! references' examples decode (extra fields and all), and statuses or result types newer
//! than the code decode as `Unknown`. The clients against the server, end to end, are in
//! `tests/it/batch.rs`.

use std::collections::BTreeMap;
use std::fmt::Debug;

use llm_core::wire::anthropic::{ErrorBody, MessagesResponse};
use llm_core::wire::batch::Page;
use llm_core::wire::batch::anthropic::{
    MessageBatch, MessageBatchCreate, MessageBatchDeleted, MessageBatchIndividualResponse,
    MessageBatchRequest, MessageBatchResult, ProcessingStatus, RequestCounts,
};
use llm_core::wire::batch::openai::{
    Batch, BatchError, BatchErrors, BatchRequestCounts, BatchRequestInput, BatchRequestOutput,
    BatchStatus, CreateBatchRequest, FileDeleted, FileObject, OutputError, OutputResponse,
};
use pretty_assertions::assert_eq;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

/// `value` encoded and decoded again must be `value`.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(value: &T) {
    let text = serde_json::to_string(value).expect("encodes");
    let back: T = serde_json::from_str(&text).expect("decodes");
    assert_eq!(&back, value, "{text}");
}

fn decode<T: DeserializeOwned>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_else(|err| panic!("{err}: {text}"))
}

/// A message as a succeeded result holds it, shaped as the reference's example.
fn message() -> MessagesResponse {
    decode(
        r#"{"id": "msg_014VwiXbi91y3JMjcpyGBHX5", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "Hello again!"}],
            "stop_reason": "end_turn", "stop_sequence": null,
            "usage": {"input_tokens": 11, "output_tokens": 36}}"#,
    )
}

/// The reference's example of a `message_batch` (retrieve).
const MESSAGE_BATCH: &str = r#"{
    "id": "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF",
    "archived_at": "2024-08-20T18:37:24.100435Z",
    "cancel_initiated_at": "2024-08-20T18:37:24.100435Z",
    "created_at": "2024-08-20T18:37:24.100435Z",
    "ended_at": "2024-08-20T18:37:24.100435Z",
    "expires_at": "2024-08-20T18:37:24.100435Z",
    "processing_status": "in_progress",
    "request_counts": {"canceled": 10, "errored": 30, "expired": 10, "processing": 100, "succeeded": 50},
    "results_url": "https://api.anthropic.com/v1/messages/batches/msgbatch_013Zva2CMHLNnXjNJJKqJ2EF/results",
    "type": "message_batch"
}"#;

/// The reference's example of a `batch` (its metadata without the example's trailing comma).
const OPENAI_BATCH: &str = r#"{
    "id": "batch_abc123",
    "object": "batch",
    "endpoint": "/v1/completions",
    "errors": null,
    "input_file_id": "file-abc123",
    "completion_window": "24h",
    "status": "completed",
    "output_file_id": "file-cvaTdG",
    "error_file_id": "file-HOWS94",
    "created_at": 1711471533,
    "in_progress_at": 1711471538,
    "expires_at": 1711557933,
    "finalizing_at": 1711493133,
    "completed_at": 1711493163,
    "failed_at": null,
    "expired_at": null,
    "cancelling_at": null,
    "cancelled_at": null,
    "request_counts": {"total": 100, "completed": 95, "failed": 5},
    "metadata": {"customer_id": "user_123456789", "batch_description": "Nightly eval job"}
}"#;

#[test]
fn anthropic_batch_types_decode_to_what_they_encoded() {
    round_trip(&MessageBatchCreate {
        requests: vec![MessageBatchRequest {
            custom_id: "item-1".into(),
            params: json!({"model": "m", "max_tokens": 10, "messages": [], "extra": true}),
        }],
    });
    let batch: MessageBatch = decode(MESSAGE_BATCH);
    round_trip(&batch);
    let pending = MessageBatch {
        processing_status: ProcessingStatus::Canceling,
        ended_at: None,
        cancel_initiated_at: None,
        archived_at: None,
        results_url: None,
        ..batch.clone()
    };
    round_trip(&pending);
    round_trip(&Page::whole(None, vec![batch, pending], |b| &b.id));
    for result in [
        MessageBatchResult::Succeeded { message: message() },
        MessageBatchResult::Errored {
            error: ErrorBody::new("overloaded_error", "Overloaded"),
        },
        MessageBatchResult::Canceled,
        MessageBatchResult::Expired,
    ] {
        round_trip(&MessageBatchIndividualResponse {
            custom_id: "item-1".into(),
            result,
        });
    }
    round_trip(&MessageBatchDeleted {
        id: "msgbatch_1".into(),
        kind: "message_batch_deleted".into(),
    });
}

#[test]
fn openai_batch_types_decode_to_what_they_encoded() {
    round_trip(&BatchRequestInput {
        custom_id: "request-1".into(),
        method: "POST".into(),
        url: "/v1/chat/completions".into(),
        body: json!({"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]}),
    });
    round_trip(&CreateBatchRequest {
        input_file_id: "file-abc123".into(),
        endpoint: "/v1/chat/completions".into(),
        completion_window: "24h".into(),
    });
    let batch: Batch = decode(OPENAI_BATCH);
    round_trip(&batch);
    let failed = Batch {
        status: BatchStatus::Failed,
        errors: Some(BatchErrors {
            object: Some("list".into()),
            data: vec![BatchError {
                code: Some("invalid_json_line".into()),
                message: Some("this line is not json".into()),
                param: None,
                line: Some(2),
            }],
        }),
        metadata: None,
        ..batch.clone()
    };
    round_trip(&failed);
    round_trip(&Page::whole(Some("list"), vec![batch, failed], |b| &b.id));
    round_trip(&BatchRequestOutput {
        id: Some("batch_req_1".into()),
        custom_id: "request-1".into(),
        response: Some(OutputResponse {
            status_code: 500,
            request_id: Some("req_1".into()),
            body: json!({"error": {"message": "it broke", "type": "server_error"}}),
        }),
        error: None,
    });
    round_trip(&BatchRequestOutput {
        id: Some("batch_req_2".into()),
        custom_id: "request-2".into(),
        response: None,
        error: Some(OutputError {
            code: Some("batch_expired".into()),
            message: Some("This request could not be executed in time.".into()),
        }),
    });
    round_trip(&FileObject {
        id: "file-abc123".into(),
        object: "file".into(),
        bytes: Some(120_000),
        created_at: Some(1_677_610_602),
        filename: Some("batch.jsonl".into()),
        purpose: Some("batch".into()),
        status: Some("processed".into()),
    });
    round_trip(&FileDeleted {
        id: "file-abc123".into(),
        object: "file".into(),
        deleted: true,
    });
}

#[test]
fn the_references_anthropic_samples_decode() {
    let batch: MessageBatch = decode(MESSAGE_BATCH);
    let at = Some("2024-08-20T18:37:24.100435Z".to_owned());
    assert_eq!(
        batch,
        MessageBatch {
            id: "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF".into(),
            kind: "message_batch".into(),
            processing_status: ProcessingStatus::InProgress,
            request_counts: RequestCounts {
                processing: 100,
                succeeded: 50,
                errored: 30,
                canceled: 10,
                expired: 10,
            },
            created_at: at.clone(),
            expires_at: at.clone(),
            ended_at: at.clone(),
            cancel_initiated_at: at.clone(),
            archived_at: at,
            results_url: Some(
                "https://api.anthropic.com/v1/messages/batches/msgbatch_013Zva2CMHLNnXjNJJKqJ2EF\
                 /results"
                    .into()
            ),
        }
    );
    // A results file: one line per call, an errored one with the error response's request id.
    let lines: Vec<MessageBatchIndividualResponse> = [
        r#"{"custom_id": "my-second-request", "result": {"type": "succeeded", "message": {"id": "msg_014VwiXbi91y3JMjcpyGBHX5", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": "Hello again!"}], "stop_reason": "end_turn", "stop_sequence": null, "usage": {"input_tokens": 11, "output_tokens": 36}}}}"#,
        r#"{"custom_id": "my-first-request", "result": {"type": "errored", "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "max_tokens: Field required"}, "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy"}}}"#,
        r#"{"custom_id": "my-third-request", "result": {"type": "canceled"}}"#,
        r#"{"custom_id": "my-fourth-request", "result": {"type": "expired"}}"#,
    ]
    .into_iter()
    .map(decode)
    .collect();
    let line = |custom_id: &str, result| MessageBatchIndividualResponse {
        custom_id: custom_id.into(),
        result,
    };
    assert_eq!(
        lines,
        vec![
            line(
                "my-second-request",
                MessageBatchResult::Succeeded { message: message() }
            ),
            line(
                "my-first-request",
                MessageBatchResult::Errored {
                    error: ErrorBody::new("invalid_request_error", "max_tokens: Field required"),
                }
            ),
            line("my-third-request", MessageBatchResult::Canceled),
            line("my-fourth-request", MessageBatchResult::Expired),
        ]
    );
}

#[test]
fn the_references_openai_samples_decode() {
    let batch: Batch = decode(OPENAI_BATCH);
    assert_eq!(
        batch,
        Batch {
            id: "batch_abc123".into(),
            object: "batch".into(),
            endpoint: Some("/v1/completions".into()),
            errors: None,
            input_file_id: Some("file-abc123".into()),
            completion_window: Some("24h".into()),
            status: BatchStatus::Completed,
            output_file_id: Some("file-cvaTdG".into()),
            error_file_id: Some("file-HOWS94".into()),
            created_at: Some(1_711_471_533),
            in_progress_at: Some(1_711_471_538),
            expires_at: Some(1_711_557_933),
            finalizing_at: Some(1_711_493_133),
            completed_at: Some(1_711_493_163),
            failed_at: None,
            cancelling_at: None,
            cancelled_at: None,
            request_counts: BatchRequestCounts {
                total: 100,
                completed: 95,
                failed: 5,
            },
            metadata: Some(BTreeMap::from([
                ("batch_description".into(), "Nightly eval job".into()),
                ("customer_id".into(), "user_123456789".into()),
            ])),
        }
    );
    let input: BatchRequestInput = decode(
        r#"{"custom_id": "request-1", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "gpt-4o-mini", "messages": [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "What is 2+2?"}]}}"#,
    );
    assert_eq!(
        (
            input.custom_id.as_str(),
            input.method.as_str(),
            input.url.as_str()
        ),
        ("request-1", "POST", "/v1/chat/completions")
    );
    let body = json!({"id": "chatcmpl-abc", "object": "chat.completion", "created": 1711652789, "model": "gpt-3.5-turbo-0125", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello! How can I assist you today?"}, "logprobs": null, "finish_reason": "stop"}], "usage": {"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}, "system_fingerprint": "fp_3ba"});
    let output: BatchRequestOutput = decode(&format!(
        r#"{{"id": "batch_req_456", "custom_id": "request-1", "response": {{"status_code": 200, "request_id": "req_789", "body": {body}}}, "error": null}}"#
    ));
    assert_eq!(
        output,
        BatchRequestOutput {
            id: Some("batch_req_456".into()),
            custom_id: "request-1".into(),
            response: Some(OutputResponse {
                status_code: 200,
                request_id: Some("req_789".into()),
                body,
            }),
            error: None,
        }
    );
    let file: FileObject = decode(
        r#"{"id": "file-abc123", "object": "file", "bytes": 120000, "created_at": 1677610602, "expires_at": 1680202602, "filename": "salesOverview.pdf", "purpose": "assistants"}"#,
    );
    assert_eq!(
        file,
        FileObject {
            id: "file-abc123".into(),
            object: "file".into(),
            bytes: Some(120_000),
            created_at: Some(1_677_610_602),
            filename: Some("salesOverview.pdf".into()),
            purpose: Some("assistants".into()),
            status: None,
        }
    );
}

#[test]
fn newer_statuses_and_result_types_decode_as_unknown() {
    let batch: MessageBatch = decode(r#"{"id": "msgbatch_1", "processing_status": "archiving"}"#);
    assert_eq!(batch.processing_status, ProcessingStatus::Unknown);
    let line: MessageBatchIndividualResponse =
        decode(r#"{"custom_id": "a", "result": {"type": "deferred", "until": 3}}"#);
    assert_eq!(line.result, MessageBatchResult::Unknown);
    let batch: Batch = decode(r#"{"id": "batch_1", "status": "paused"}"#);
    assert_eq!(
        (batch.status, batch.request_counts),
        (BatchStatus::Unknown, BatchRequestCounts::default())
    );
}
