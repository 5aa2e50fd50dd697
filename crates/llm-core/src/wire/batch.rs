//! The batch APIs' JSON, as serde types: Anthropic's Message Batches ([`anthropic`]) and
//! OpenAI's Batch API with the files it reads and writes ([`openai`]).
//!
//! As with the single-call formats, llm-core's batch clients encode requests and decode
//! answers with these types, and the fake server in `llm-sim` decodes requests and encodes
//! answers with them. A call inside a batch (a request's `params` or `body`, an answer's
//! `message` or `body`) is the single-call format's own type or its JSON.
//!
//! Decoding is lenient, as for the single-call formats: unknown fields are ignored, fields no
//! client reads are optional (absent or `null`), and statuses and result types newer than
//! this code decode as `Unknown`. Encoding writes every field the services always send,
//! `null` where unset, as they do.

pub mod anthropic;
pub mod openai;

use serde::{Deserialize, Serialize};

/// A page of a list (`GET /v1/messages/batches`, `GET /v1/batches`): items newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Page<T> {
    /// `list` on OpenAI's pages; Anthropic's have no `object`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<String>,
    pub data: Vec<T>,
    #[serde(default)]
    pub has_more: bool,
    #[serde(default)]
    pub first_id: Option<String>,
    #[serde(default)]
    pub last_id: Option<String>,
}

impl<T> Page<T> {
    /// The one page of a list that holds all of `data`, whose ids `id` reads.
    pub fn whole(object: Option<&str>, data: Vec<T>, id: impl Fn(&T) -> &str) -> Self {
        Self {
            object: object.map(str::to_owned),
            first_id: data.first().map(|item| id(item).to_owned()),
            last_id: data.last().map(|item| id(item).to_owned()),
            has_more: false,
            data,
        }
    }
}
