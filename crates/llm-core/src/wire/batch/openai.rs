//! OpenAI's Batch API and the Files API it works through, as serde types: a line of the
//! input file, the create body (`POST /v1/batches`), the `batch` object every batch route
//! answers with, a line of the output and error files, and the `file` object of `/v1/files`.
//!
//! The names follow the API reference (`BatchRequestInput`, `BatchRequestOutput`, ...). A
//! call's `body`, going in or coming out, is JSON: a chat completions request, and the
//! completion or error body it was answered with, whichever its status says.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line of a batch's input file: one call.
///
/// Decoding defaults every field (to empty, or a `null` body), so that the fake server can
/// say which one a line lacks as the service does, line by line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRequestInput {
    /// The caller's name for the call, under which its result comes back.
    #[serde(default)]
    pub custom_id: String,
    /// `POST`, the only method the API takes.
    #[serde(default)]
    pub method: String,
    /// The endpoint, the same for every line and the batch (`/v1/chat/completions`).
    #[serde(default)]
    pub url: String,
    /// The call's body, as the endpoint takes it.
    #[serde(default)]
    pub body: Value,
}

/// The body of `POST /v1/batches`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateBatchRequest {
    /// The uploaded input file (purpose `batch`).
    pub input_file_id: String,
    #[serde(default)]
    pub endpoint: String,
    /// `24h`, the only window the API has.
    #[serde(default)]
    pub completion_window: String,
}

/// A batch as the service describes it. Times are Unix seconds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Batch {
    pub id: String,
    /// Always `batch`.
    #[serde(default = "batch_object")]
    pub object: String,
    #[serde(default)]
    pub endpoint: Option<String>,
    /// Why the batch failed validation, when it did.
    #[serde(default)]
    pub errors: Option<BatchErrors>,
    #[serde(default)]
    pub input_file_id: Option<String>,
    #[serde(default)]
    pub completion_window: Option<String>,
    pub status: BatchStatus,
    /// The answers, and the calls the API refused, once the batch has ended.
    #[serde(default)]
    pub output_file_id: Option<String>,
    /// The calls that expired or were cancelled, among others, once the batch has ended.
    #[serde(default)]
    pub error_file_id: Option<String>,
    #[serde(default)]
    pub created_at: Option<u64>,
    #[serde(default)]
    pub in_progress_at: Option<u64>,
    #[serde(default)]
    pub expires_at: Option<u64>,
    #[serde(default)]
    pub finalizing_at: Option<u64>,
    #[serde(default)]
    pub completed_at: Option<u64>,
    #[serde(default)]
    pub failed_at: Option<u64>,
    #[serde(default)]
    pub cancelling_at: Option<u64>,
    #[serde(default)]
    pub cancelled_at: Option<u64>,
    #[serde(default)]
    pub request_counts: BatchRequestCounts,
    #[serde(default)]
    pub metadata: Option<BTreeMap<String, String>>,
}

fn batch_object() -> String {
    "batch".to_owned()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchStatus {
    Validating,
    Failed,
    InProgress,
    Finalizing,
    Completed,
    Expired,
    Cancelling,
    Cancelled,
    /// Statuses newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// How many calls of a batch there are and how many have ended which way; absent counts
/// are 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchRequestCounts {
    #[serde(default)]
    pub total: u64,
    #[serde(default)]
    pub completed: u64,
    #[serde(default)]
    pub failed: u64,
}

/// A batch's validation errors: `{"object": "list", "data": [...]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchErrors {
    #[serde(default)]
    pub object: Option<String>,
    #[serde(default)]
    pub data: Vec<BatchError>,
}

/// One reason an input file was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchError {
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub param: Option<String>,
    /// The input file's line at fault, counted from 1.
    #[serde(default)]
    pub line: Option<u64>,
}

/// One line of a batch's output or error file: a call's answer (`response`), or why it has
/// none (`error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRequestOutput {
    #[serde(default)]
    pub id: Option<String>,
    pub custom_id: String,
    #[serde(default)]
    pub response: Option<OutputResponse>,
    #[serde(default)]
    pub error: Option<OutputError>,
}

/// What the endpoint answered a call with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputResponse {
    pub status_code: u16,
    #[serde(default)]
    pub request_id: Option<String>,
    /// The answer's body: a completion for 200, else an error body.
    #[serde(default)]
    pub body: Value,
}

/// Why a call has no answer: `batch_expired`, `batch_cancelled`, ...
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputError {
    #[serde(default)]
    pub code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
}

/// A file of `/v1/files`, as an upload or `GET /v1/files/{id}` answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileObject {
    pub id: String,
    /// Always `file`.
    #[serde(default = "file_object")]
    pub object: String,
    #[serde(default)]
    pub bytes: Option<u64>,
    #[serde(default)]
    pub created_at: Option<u64>,
    #[serde(default)]
    pub filename: Option<String>,
    /// `batch` for an input file, `batch_output` for the files a batch writes.
    #[serde(default)]
    pub purpose: Option<String>,
    /// Deprecated by the API, still sent: `uploaded`, `processed` or `error`.
    #[serde(default)]
    pub status: Option<String>,
}

fn file_object() -> String {
    "file".to_owned()
}

/// The answer to `DELETE /v1/files/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDeleted {
    pub id: String,
    /// Always `file`.
    #[serde(default = "file_object")]
    pub object: String,
    pub deleted: bool,
}
