//! Anthropic's Message Batches API: `POST /v1/messages/batches` with each call's Messages
//! body as `params`, `GET .../{id}` for its state, `GET .../{id}/results` for a JSONL file of
//! results, `POST .../{id}/cancel`.
//!
//! Results are read from our own base URL, not from the batch's `results_url`: that is the
//! same path on Anthropic's service, and the key is never sent to a host the answer names.

use std::collections::BTreeMap;

use futures_util::future::BoxFuture;
use reqwest::Method;
use serde_json::Value;

use super::{AnthropicClient, classify, from_message, request_body};
use crate::batch::{
    BatchApi, BatchCounts, BatchItem, BatchOutcome, BatchResult, BatchState, BatchStatus,
    check_items, jsonl, to_json,
};
use crate::error::{Error, Result};
use crate::http::{exchange_json, json_body};
use crate::wire::batch::anthropic::{
    MessageBatch, MessageBatchCreate, MessageBatchIndividualResponse, MessageBatchRequest,
    MessageBatchResult, ProcessingStatus,
};

const PROVIDER: &str = "anthropic";

impl AnthropicClient {
    fn batches_url(&self, rest: &str) -> String {
        format!("{}/batches{rest}", self.url)
    }

    async fn batch_object(
        &self,
        method: Method,
        url: &str,
        body: Option<Value>,
    ) -> Result<BatchStatus> {
        let body = exchange_json(
            &self.transport,
            method,
            url,
            self.headers.clone(),
            body,
            classify,
        )
        .await?;
        status_of(json_body(PROVIDER, &body, "the message batch")?)
    }
}

impl BatchApi for AnthropicClient {
    fn submit<'a>(&'a self, items: &'a [BatchItem]) -> BoxFuture<'a, Result<BatchStatus>> {
        Box::pin(async move {
            check_items(PROVIDER, items)?;
            let requests = items
                .iter()
                .map(|item| {
                    Ok(MessageBatchRequest {
                        custom_id: item.custom_id.clone(),
                        params: request_body(&item.request, self.default_model.as_deref(), false)?,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            let url = self.batches_url("");
            let body = to_json(&MessageBatchCreate { requests });
            self.batch_object(Method::POST, &url, Some(body)).await
        })
    }

    fn status<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<BatchStatus>> {
        Box::pin(async move {
            let url = self.batches_url(&format!("/{id}"));
            self.batch_object(Method::GET, &url, None).await
        })
    }

    fn results<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<BatchResult>>> {
        Box::pin(async move {
            let url = self.batches_url(&format!("/{id}/results"));
            let body = exchange_json(
                &self.transport,
                Method::GET,
                &url,
                self.headers.clone(),
                None,
                classify,
            )
            .await?;
            jsonl(PROVIDER, &body)?.into_iter().map(result_of).collect()
        })
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<BatchStatus>> {
        Box::pin(async move {
            let url = self.batches_url(&format!("/{id}/cancel"));
            self.batch_object(Method::POST, &url, None).await
        })
    }
}

/// Our status of a `message_batch` object.
fn status_of(batch: MessageBatch) -> Result<BatchStatus> {
    let state = match batch.processing_status {
        ProcessingStatus::InProgress => BatchState::InProgress,
        ProcessingStatus::Canceling => BatchState::Ending,
        ProcessingStatus::Ended => BatchState::Ended,
        ProcessingStatus::Unknown => {
            return Err(Error::invalid_response(
                PROVIDER,
                format!(
                    "message batch {} has a processing status this client does not know",
                    batch.id
                ),
            ));
        }
    };
    let counts = batch.request_counts;
    Ok(BatchStatus {
        id: batch.id,
        state,
        counts: BatchCounts {
            processing: counts.processing,
            succeeded: counts.succeeded,
            errored: counts.errored,
            expired: counts.expired,
            canceled: counts.canceled,
        },
        errors: Vec::new(),
    })
}

/// Our result of one line of the results file.
fn result_of(line: MessageBatchIndividualResponse) -> Result<BatchResult> {
    let custom_id = line.custom_id;
    let outcome = match line.result {
        MessageBatchResult::Succeeded { message } => {
            BatchOutcome::Succeeded(from_message(message, BTreeMap::new()))
        }
        MessageBatchResult::Errored { error } => {
            // The body a failed call has: `{"type": "error", "error": {"type", "message"}}`.
            let kind = match error.error.kind.as_str() {
                "" => "error",
                kind => kind,
            };
            BatchOutcome::Errored(format!("{kind}: {}", error.error.message))
        }
        MessageBatchResult::Expired => BatchOutcome::Expired,
        MessageBatchResult::Canceled => BatchOutcome::Canceled,
        MessageBatchResult::Unknown => {
            return Err(Error::invalid_response(
                PROVIDER,
                format!("batch result {custom_id} has a type this client does not know"),
            ));
        }
    };
    Ok(BatchResult { custom_id, outcome })
}
