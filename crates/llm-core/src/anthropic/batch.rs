//! Anthropic's Message Batches API: `POST /v1/messages/batches` with each call's Messages
//! body as `params`, `GET .../{id}` for its state, `GET .../{id}/results` for a JSONL file of
//! results, `POST .../{id}/cancel`.
//!
//! Results are read from our own base URL, not from the batch's `results_url`: that is the
//! same path on Anthropic's service, and the key is never sent to a host the answer names.

use std::collections::BTreeMap;

use futures_util::future::BoxFuture;
use reqwest::Method;
use serde_json::{Value, json};

use super::{AnthropicClient, classify, parse_response, request_body};
use crate::batch::{
    BatchApi, BatchCounts, BatchItem, BatchOutcome, BatchResult, BatchState, BatchStatus,
    check_items, count, jsonl, string_field,
};
use crate::error::{Error, Result};
use crate::http::{exchange_json, json_body};

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
        status_of(&json_body(PROVIDER, &body, "the message batch")?)
    }
}

impl BatchApi for AnthropicClient {
    fn submit<'a>(&'a self, items: &'a [BatchItem]) -> BoxFuture<'a, Result<BatchStatus>> {
        Box::pin(async move {
            check_items(PROVIDER, items)?;
            let requests = items
                .iter()
                .map(|item| {
                    let params = request_body(&item.request, self.default_model.as_deref(), false)?;
                    Ok(json!({"custom_id": item.custom_id, "params": params}))
                })
                .collect::<Result<Vec<_>>>()?;
            let url = self.batches_url("");
            self.batch_object(Method::POST, &url, Some(json!({"requests": requests})))
                .await
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
            jsonl(PROVIDER, &body)?.iter().map(result_of).collect()
        })
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<BatchStatus>> {
        Box::pin(async move {
            let url = self.batches_url(&format!("/{id}/cancel"));
            self.batch_object(Method::POST, &url, None).await
        })
    }
}

/// A `message_batch` object.
fn status_of(batch: &Value) -> Result<BatchStatus> {
    let id = string_field(PROVIDER, batch, "id", "the message batch")?;
    let state = match batch.get("processing_status").and_then(Value::as_str) {
        Some("in_progress") => BatchState::InProgress,
        Some("canceling") => BatchState::Ending,
        Some("ended") => BatchState::Ended,
        other => {
            return Err(Error::invalid_response(
                PROVIDER,
                format!("message batch {id} has processing status {other:?}"),
            ));
        }
    };
    let counts = batch.get("request_counts").cloned().unwrap_or_default();
    Ok(BatchStatus {
        id,
        state,
        counts: BatchCounts {
            processing: count(&counts, "processing"),
            succeeded: count(&counts, "succeeded"),
            errored: count(&counts, "errored"),
            expired: count(&counts, "expired"),
            canceled: count(&counts, "canceled"),
        },
        errors: Vec::new(),
    })
}

/// One line of the results file: `{custom_id, result: {type, message | error}}`.
fn result_of(line: &Value) -> Result<BatchResult> {
    let custom_id = string_field(PROVIDER, line, "custom_id", "a batch result")?;
    let result = line.get("result").cloned().unwrap_or_default();
    let outcome = match result.get("type").and_then(Value::as_str) {
        Some("succeeded") => {
            let message = result.get("message").cloned().unwrap_or_default();
            BatchOutcome::Succeeded(parse_response(
                message.to_string().as_bytes(),
                BTreeMap::new(),
            )?)
        }
        Some("errored") => {
            // `{"type": "error", "error": {"type", "message"}}`, as a failed call's body.
            let error = result.get("error").cloned().unwrap_or_default();
            let inner = error.get("error").unwrap_or(&error);
            let kind = inner.get("type").and_then(Value::as_str).unwrap_or("error");
            let message = inner.get("message").and_then(Value::as_str).unwrap_or("");
            BatchOutcome::Errored(format!("{kind}: {message}"))
        }
        Some("expired") => BatchOutcome::Expired,
        Some("canceled") => BatchOutcome::Canceled,
        other => {
            return Err(Error::invalid_response(
                PROVIDER,
                format!("batch result {custom_id} has type {other:?}"),
            ));
        }
    };
    Ok(BatchResult { custom_id, outcome })
}
