//! OpenAI's Batch API: the calls go up as a JSONL file (`POST /files`, purpose `batch`), a
//! batch runs them (`POST /batches` against `/v1/chat/completions`), and its results come
//! back as two JSONL files: the output file (answers, and calls the API refused) and the
//! error file (calls that expired or were cancelled, among others).

use bytes::Bytes;
use futures_util::future::BoxFuture;
use reqwest::Method;
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use serde::Deserialize;
use serde_json::Value;

use super::{OpenAiClient, classify, parse_response};
use crate::batch::{
    BatchApi, BatchCounts, BatchItem, BatchOutcome, BatchResult, BatchState, BatchStatus,
    check_items, jsonl, to_json,
};
use crate::error::{Error, Result};
use crate::http::{exchange, exchange_json, json_body};
use crate::wire::batch::openai::{
    self as wire, Batch, BatchRequestInput, BatchRequestOutput, CreateBatchRequest, FileObject,
};
use crate::wire::openai::ErrorBody;

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
    ) -> Result<(BatchStatus, Batch)> {
        let body = exchange_json(
            &self.transport,
            method,
            url,
            self.headers.clone(),
            body,
            classify,
        )
        .await?;
        let batch: Batch = json_body(self.name, &body, "the batch")?;
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
        let file: FileObject = json_body(self.name, &answer, "the uploaded file")?;
        Ok(file.id)
    }

    /// The lines of the file `id`.
    async fn file_lines(&self, id: &str) -> Result<Vec<BatchRequestOutput>> {
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
                let line = BatchRequestInput {
                    custom_id: item.custom_id.clone(),
                    method: "POST".to_owned(),
                    url: ENDPOINT.to_owned(),
                    body: self.request_body(&item.request, false)?,
                };
                input.extend_from_slice(to_json(&line).to_string().as_bytes());
                input.push(b'\n');
            }
            let file = self.upload(&input).await?;
            let body = to_json(&CreateBatchRequest {
                input_file_id: file,
                endpoint: ENDPOINT.to_owned(),
                completion_window: "24h".to_owned(),
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
            for file in [batch.output_file_id, batch.error_file_id]
                .into_iter()
                .flatten()
            {
                for line in self.file_lines(&file).await? {
                    results.push(result_of(self, line)?);
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

/// Our status of a `batch` object.
fn status_of(provider: &'static str, batch: &Batch) -> Result<BatchStatus> {
    let id = batch.id.clone();
    let state = match batch.status {
        wire::BatchStatus::Validating | wire::BatchStatus::InProgress => BatchState::InProgress,
        wire::BatchStatus::Finalizing | wire::BatchStatus::Cancelling => BatchState::Ending,
        wire::BatchStatus::Completed
        | wire::BatchStatus::Failed
        | wire::BatchStatus::Expired
        | wire::BatchStatus::Cancelled => BatchState::Ended,
        wire::BatchStatus::Unknown => {
            return Err(Error::invalid_response(
                provider,
                format!("batch {id} has a status this client does not know"),
            ));
        }
    };
    let counts = batch.request_counts;
    let errors = batch
        .errors
        .iter()
        .flat_map(|errors| &errors.data)
        .map(|error| {
            let message = error.message.as_deref().unwrap_or("");
            match error.line {
                Some(line) => format!("line {line}: {message}"),
                None => message.to_owned(),
            }
        })
        .collect();
    Ok(BatchStatus {
        id,
        state,
        counts: BatchCounts {
            processing: counts
                .total
                .saturating_sub(counts.completed + counts.failed),
            succeeded: counts.completed,
            errored: counts.failed,
            expired: 0,
            canceled: 0,
        },
        errors,
    })
}

/// Our result of one line of an output or error file.
fn result_of(client: &OpenAiClient, line: BatchRequestOutput) -> Result<BatchResult> {
    let provider = client.name;
    let custom_id = line.custom_id;
    let outcome = match (line.response, line.error) {
        (_, Some(error)) => {
            let code = error.code.as_deref().unwrap_or("");
            let message = error.message.as_deref().unwrap_or("");
            match code {
                "batch_expired" => BatchOutcome::Expired,
                "batch_cancelled" => BatchOutcome::Canceled,
                _ => BatchOutcome::Errored(format!("{code}: {message}")),
            }
        }
        (Some(response), None) if response.status_code == 200 => {
            BatchOutcome::Succeeded(parse_response(
                provider,
                response.body.to_string().as_bytes(),
                Default::default(),
                &*client.transport.config.rng,
            )?)
        }
        (Some(response), None) => {
            // The body a failed call has: `{"error": {"message", ...}}`.
            let message = ErrorBody::deserialize(&response.body)
                .map(|body| body.error.message)
                .unwrap_or_default();
            BatchOutcome::Errored(format!("status {}: {message}", response.status_code))
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
