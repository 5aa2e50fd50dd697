//! Batch APIs: many independent model calls sent as one job that the provider runs within a
//! day at half the price (Anthropic's Message Batches, OpenAI's Batch API over a JSONL file).
//!
//! A client that has one offers it through [`crate::LlmClient::batches`]. The calls go in as
//! [`BatchItem`]s, each with a caller's `custom_id` (1 to 64 of `[A-Za-z0-9_-]`, unique in the
//! batch), and come back as [`BatchResult`]s under the same ids, in any order, each answered
//! with the same [`Response`] a direct call would have returned. Nothing here waits: the
//! caller polls [`BatchApi::status`] on its own schedule, and keeps the batch id to pick a job
//! up again after a crash, since a batch runs on the provider whether or not anyone waits.

use std::collections::HashSet;

use futures_util::future::BoxFuture;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::types::{Request, Response};

/// One call of a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchItem {
    /// The caller's name for this call, under which its result comes back.
    pub custom_id: String,
    pub request: Request,
}

/// Where a batch is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchState {
    /// Accepted and running (OpenAI also validates first).
    InProgress,
    /// Cancelling, or (OpenAI) writing its result files.
    Ending,
    /// Done: every call has a result (succeeded, errored, expired or canceled).
    Ended,
}

/// How many calls of a batch are where.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchCounts {
    pub processing: u64,
    pub succeeded: u64,
    /// Failed calls. OpenAI counts expired and canceled calls here too until the results say
    /// which they were.
    pub errored: u64,
    pub expired: u64,
    pub canceled: u64,
}

/// A batch as the provider last described it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchStatus {
    pub id: String,
    pub state: BatchState,
    pub counts: BatchCounts,
    /// Why the whole batch failed, when it did (OpenAI refuses a bad input file this way).
    pub errors: Vec<String>,
}

/// What became of one call.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchOutcome {
    Succeeded(Response),
    /// The provider's error for this call.
    Errored(String),
    /// The batch's time ran out before this call ran.
    Expired,
    /// The batch was cancelled before this call ran.
    Canceled,
}

/// One call's result.
#[derive(Debug, Clone, PartialEq)]
pub struct BatchResult {
    pub custom_id: String,
    pub outcome: BatchOutcome,
}

/// A provider's batch API. Object-safe, like [`crate::LlmClient`].
pub trait BatchApi: Send + Sync {
    /// Sends `items` as one batch and returns it as created.
    fn submit<'a>(&'a self, items: &'a [BatchItem]) -> BoxFuture<'a, Result<BatchStatus>>;

    /// The batch `id` as it is now.
    fn status<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<BatchStatus>>;

    /// Every result of the ended batch `id`.
    fn results<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<BatchResult>>>;

    /// Asks the provider to stop the batch `id`; calls not yet run end canceled.
    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<BatchStatus>>;
}

/// The most bytes of a custom id (both providers' limit).
pub const MAX_CUSTOM_ID: usize = 64;

/// Checks what both providers demand of a batch before anything is sent: at least one call,
/// and custom ids of 1 to 64 of `[A-Za-z0-9_-]`, each used once.
pub(crate) fn check_items(provider: &'static str, items: &[BatchItem]) -> Result<()> {
    if items.is_empty() {
        return Err(Error::Config {
            details: format!("a {provider} batch needs at least one request"),
        });
    }
    let mut seen = HashSet::new();
    for item in items {
        let id = item.custom_id.as_str();
        let valid = !id.is_empty()
            && id.len() <= MAX_CUSTOM_ID
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            return Err(Error::Config {
                details: format!(
                    "batch custom id {id:?} must be 1 to {MAX_CUSTOM_ID} letters, digits, `_` or \
                     `-`"
                ),
            });
        }
        if !seen.insert(id) {
            return Err(Error::Config {
                details: format!("batch custom id {id:?} is used twice"),
            });
        }
    }
    Ok(())
}

/// The JSON of a batch wire value, through a `Value`, whose keys serde_json keeps sorted, so
/// the bytes sent do not depend on the order of the struct's fields.
pub(crate) fn to_json(wire: &impl Serialize) -> Value {
    serde_json::to_value(wire)
        .expect("the batch wire types hold strings, numbers and JSON, which always encode")
}

/// The lines of a JSONL body, one value per non-empty line.
pub(crate) fn jsonl<T: DeserializeOwned>(provider: &'static str, body: &[u8]) -> Result<Vec<T>> {
    body.split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, line)| !line.trim_ascii().is_empty())
        .map(|(number, line)| {
            serde_json::from_slice(line).map_err(|err| {
                Error::invalid_response(
                    provider,
                    format!(
                        "line {} of the batch results is not a result: {err}",
                        number + 1
                    ),
                )
            })
        })
        .collect()
}
