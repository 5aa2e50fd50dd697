//! Anthropic's Message Batches API, as serde types: the create body
//! (`POST /v1/messages/batches`), the `message_batch` object every other route answers with,
//! one line of the results file (`GET .../{id}/results`, JSONL) and the answer to a delete.
//!
//! The names follow the API reference (`MessageBatch`, `MessageBatchIndividualResponse`,
//! `MessageBatchResult`). A succeeded result holds the same [`MessagesResponse`] a direct
//! call answers with, and an errored one the same [`ErrorBody`] a failed call's body is.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::anthropic::{ErrorBody, MessagesResponse};

/// The body of `POST /v1/messages/batches`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageBatchCreate {
    pub requests: Vec<MessageBatchRequest>,
}

/// One call of a batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageBatchRequest {
    /// The caller's name for the call, under which its result comes back.
    pub custom_id: String,
    /// The call's Messages API body: a [`crate::wire::anthropic::MessagesRequest`]'s JSON
    /// with any extra fields the caller set, so kept as JSON. `null` when absent, which the
    /// fake server refuses for this call alone.
    #[serde(default)]
    pub params: Value,
}

/// A Message Batch as the service describes it at every route but results and delete.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageBatch {
    pub id: String,
    /// Always `message_batch`.
    #[serde(rename = "type", default = "message_batch_type")]
    pub kind: String,
    pub processing_status: ProcessingStatus,
    #[serde(default)]
    pub request_counts: RequestCounts,
    /// RFC 3339 times, as every time of this API.
    #[serde(default)]
    pub created_at: Option<String>,
    /// 24 hours after creation.
    #[serde(default)]
    pub expires_at: Option<String>,
    /// Once processing has ended.
    #[serde(default)]
    pub ended_at: Option<String>,
    /// Once a cancel was asked for.
    #[serde(default)]
    pub cancel_initiated_at: Option<String>,
    /// Once the results are gone.
    #[serde(default)]
    pub archived_at: Option<String>,
    /// Where the results are, once processing has ended.
    #[serde(default)]
    pub results_url: Option<String>,
}

fn message_batch_type() -> String {
    "message_batch".to_owned()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProcessingStatus {
    InProgress,
    Canceling,
    Ended,
    /// Statuses newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// How many calls of a batch are where; an absent count is 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestCounts {
    #[serde(default)]
    pub processing: u64,
    #[serde(default)]
    pub succeeded: u64,
    #[serde(default)]
    pub errored: u64,
    #[serde(default)]
    pub canceled: u64,
    #[serde(default)]
    pub expired: u64,
}

/// One line of a batch's results file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageBatchIndividualResponse {
    pub custom_id: String,
    pub result: MessageBatchResult,
}

/// What became of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MessageBatchResult {
    Succeeded {
        message: MessagesResponse,
    },
    /// The body a direct call would have failed with (`{"type": "error", "error": ...}`).
    Errored {
        error: ErrorBody,
    },
    /// The batch was cancelled before the call ran.
    Canceled,
    /// The batch's 24 hours ran out before the call ran.
    Expired,
    /// Result types newer than this code.
    #[serde(other, skip_serializing)]
    Unknown,
}

/// The answer to `DELETE /v1/messages/batches/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageBatchDeleted {
    pub id: String,
    /// Always `message_batch_deleted`.
    #[serde(rename = "type")]
    pub kind: String,
}
