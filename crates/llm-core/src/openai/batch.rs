//! OpenAI's Batch API: the calls go up as a JSONL file (`POST /files`, purpose `batch`), a
//! batch runs them (`POST /batches` against `/v1/chat/completions`), and its results come
//! back as two JSONL files: the output file (answers, and calls the API refused) and the
//! error file (calls that expired or were cancelled, among others).

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde_json::{Value, json};

use super::{OpenAiClient, classify, parse_response};
use crate::batch::{
    BatchApi, BatchCounts, BatchItem, BatchOutcome, BatchResult, BatchState, BatchStatus,
    check_items, count, jsonl, string_field,
};
use crate::error::{Error, Result};
use crate::http::{exchange, exchange_json, json_body};

/// The endpoint every call of our batches goes to.
const ENDPOINT: &str = "/v1/chat/completions";

impl OpenAiClient {
    /// `<base>/<rest>`, beside the chat completions endpoint.
    fn api_url(&self, rest: &str) -> String {
        let base = self
            .url
            .strip_suffix("/chat/completions")
            .unwrap_or(&self.url);
        format!("{base}/{rest}")
    }

    async fn batch_object(
        &self,
        method: Method,
        url: &str,
        body: Option<Value>,
    ) -> Result<(BatchStatus, Value)> {
        let body = exchange_json(
            &self.transport,
            method,
            url,
            self.headers.clone(),
            body,
            classify,
        )
        .await?;
        let batch = json_body(self.name, &body, "the batch")?;
        Ok((status_of(self.name, &batch)?, batch))
    }

    /// Uploads `content` as a file for batches; returns its id.
    async fn upload(&self, content: &[u8]) -> Result<String> {
        // A boundary that the content does not hold, as multipart demands.
        let rng = &*self.transport.config.rng;
        let boundary = loop {
            let boundary = format!("merkle-{:016x}{:016x}", rng.next_u64(), rng.next_u64());
            if !content
                .windows(boundary.len())
                .any(|w| w == boundary.as_bytes())
            {
                break boundary;
            }
        };
        // By hand rather than reqwest's multipart form, which cannot be cloned for a retry.
        let mut body = format!(
            "--{boundary}\r\ncontent-disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
             --{boundary}\r\ncontent-disposition: form-data; name=\"file\"; \
             filename=\"merkle-batch.jsonl\"\r\ncontent-type: application/jsonl\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(content);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let mut headers = self.headers.clone();
        let content_type =
            HeaderValue::from_str(&format!("multipart/form-data; boundary={boundary}"))
                .expect("the boundary is ascii letters, digits and `-`");
        headers.insert(CONTENT_TYPE, content_type);
        let url = self.api_url("files");
        let answer = exchange(
            &self.transport,
            Method::POST,
            &url,
            headers,
            Bytes::from(body),
            classify,
        )
        .await?;
        let file = json_body(self.name, &answer, "the uploaded file")?;
        string_field(self.name, &file, "id", "the uploaded file")
    }

    /// The lines of the file `id`.
    async fn file_lines(&self, id: &str) -> Result<Vec<Value>> {
        let url = self.api_url(&format!("files/{id}/content"));
        let body = exchange_json(
            &self.transport,
            Method::GET,
            &url,
            self.headers.clone(),
            None,
            classify,
        )
        .await?;
        jsonl(self.name, &body)
    }
}

impl BatchApi for OpenAiClient {
    fn submit<'a>(&'a self, items: &'a [BatchItem]) -> BoxFuture<'a, Result<BatchStatus>> {
        Box::pin(async move {
            check_items(self.name, items)?;
            let mut input = Vec::new();
            for item in items {
                let line = json!({
                    "custom_id": item.custom_id,
                    "method": "POST",
                    "url": ENDPOINT,
                    "body": self.request_body(&item.request, false)?,
                });
                input.extend_from_slice(line.to_string().as_bytes());
                input.push(b'\n');
            }
            let file = self.upload(&input).await?;
            let body = json!({
                "input_file_id": file,
                "endpoint": ENDPOINT,
                "completion_window": "24h",
            });
            let url = self.api_url("batches");
            Ok(self.batch_object(Method::POST, &url, Some(body)).await?.0)
        })
    }

    fn status<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<BatchStatus>> {
        Box::pin(async move {
            let url = self.api_url(&format!("batches/{id}"));
            Ok(self.batch_object(Method::GET, &url, None).await?.0)
        })
    }

    fn results<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Vec<BatchResult>>> {
        Box::pin(async move {
            let url = self.api_url(&format!("batches/{id}"));
            let (_, batch) = self.batch_object(Method::GET, &url, None).await?;
            let mut results = Vec::new();
            for field in ["output_file_id", "error_file_id"] {
                if let Some(file) = batch.get(field).and_then(Value::as_str) {
                    for line in self.file_lines(file).await? {
                        results.push(result_of(self, &line)?);
                    }
                }
            }
            Ok(results)
        })
    }

    fn cancel<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<BatchStatus>> {
        Box::pin(async move {
            let url = self.api_url(&format!("batches/{id}/cancel"));
            Ok(self.batch_object(Method::POST, &url, None).await?.0)
        })
    }
}

/// A `batch` object.
fn status_of(provider: &'static str, batch: &Value) -> Result<BatchStatus> {
    let id = string_field(provider, batch, "id", "the batch")?;
    let state = match batch.get("status").and_then(Value::as_str) {
        Some("validating" | "in_progress") => BatchState::InProgress,
        Some("finalizing" | "cancelling") => BatchState::Ending,
        Some("completed" | "failed" | "expired" | "cancelled") => BatchState::Ended,
        other => {
            return Err(Error::invalid_response(
                provider,
                format!("batch {id} has status {other:?}"),
            ));
        }
    };
    let counts = batch.get("request_counts").cloned().unwrap_or_default();
    let total = count(&counts, "total");
    let succeeded = count(&counts, "completed");
    let errored = count(&counts, "failed");
    let errors = batch
        .pointer("/errors/data")
        .and_then(Value::as_array)
        .map(|errors| {
            errors
                .iter()
                .map(|error| {
                    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                    match error.get("line").and_then(Value::as_u64) {
                        Some(line) => format!("line {line}: {message}"),
                        None => message.to_owned(),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(BatchStatus {
        id,
        state,
        counts: BatchCounts {
            processing: total.saturating_sub(succeeded + errored),
            succeeded,
            errored,
            expired: 0,
            canceled: 0,
        },
        errors,
    })
}

/// One line of an output or error file: `{custom_id, response: {status_code, body}, error}`.
fn result_of(client: &OpenAiClient, line: &Value) -> Result<BatchResult> {
    let provider = client.name;
    let custom_id = string_field(provider, line, "custom_id", "a batch result")?;
    let error = line.get("error").filter(|e| !e.is_null());
    let response = line.get("response").filter(|r| !r.is_null());
    let outcome = match (response, error) {
        (_, Some(error)) => {
            let code = error.get("code").and_then(Value::as_str).unwrap_or("");
            let message = error.get("message").and_then(Value::as_str).unwrap_or("");
            match code {
                "batch_expired" => BatchOutcome::Expired,
                "batch_cancelled" => BatchOutcome::Canceled,
                _ => BatchOutcome::Errored(format!("{code}: {message}")),
            }
        }
        (Some(response), None) => {
            let status = response.get("status_code").and_then(Value::as_u64);
            let body = response.get("body").cloned().unwrap_or_default();
            if status == Some(200) {
                BatchOutcome::Succeeded(parse_response(
                    provider,
                    body.to_string().as_bytes(),
                    Default::default(),
                    &*client.transport.config.rng,
                )?)
            } else {
                let message = body
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                BatchOutcome::Errored(format!(
                    "status {}: {message}",
                    status.map_or_else(|| "unknown".to_owned(), |s| s.to_string())
                ))
            }
        }
        (None, None) => {
            return Err(Error::invalid_response(
                provider,
                format!("batch result {custom_id} has neither a response nor an error"),
            ));
        }
    };
    Ok(BatchResult { custom_id, outcome })
}
