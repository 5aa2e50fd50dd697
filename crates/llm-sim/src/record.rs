//! Recording real traffic: [`RecordingClient`] passes calls through to a real client and
//! keeps each request with its answer, then writes them as a playback script.
//!
//! Only allowlisted fields are kept: from the request its model, system prompt, messages and
//! tools; from the response its thinking (and signature), text, tool calls, stop reason,
//! usage and model. Headers, request ids, metadata and provider extras never reach the file,
//! and a secret scan refuses to write one that still holds something key-like.
//!
//! A step holds one thinking, one text and the tool calls, in that order; a response whose
//! blocks interleave differently is replayed in that order, so its next request would not
//! match. Providers answer in this order unless interleaved thinking is enabled.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use llm_core::{
    ContentBlock, Event, EventStream, LlmClient, Request, Response, ResponseBuilder, UsageStats,
};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::playback::{Scrubber, canonical_request};
use crate::script::{Metadata, Script, Step, ToolCallSpec};
use crate::secrets;

/// A real client whose every answered call is recorded.
pub struct RecordingClient {
    inner: Arc<dyn LlmClient>,
    scrubber: Scrubber,
    metadata: Metadata,
    steps: Arc<Mutex<Vec<Step>>>,
}

impl std::fmt::Debug for RecordingClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let recorded = self.steps.lock().map_or(0, |steps| steps.len());
        f.debug_struct("RecordingClient")
            .field("scrubber", &self.scrubber)
            .field("recorded", &recorded)
            .finish_non_exhaustive()
    }
}

impl RecordingClient {
    pub fn new(inner: Arc<dyn LlmClient>) -> Self {
        Self {
            inner,
            scrubber: Scrubber::default(),
            metadata: Metadata::default(),
            steps: Arc::default(),
        }
    }

    /// Rules applied to every recorded string; give playback the same ones.
    pub fn with_scrubber(mut self, scrubber: Scrubber) -> Self {
        self.scrubber = scrubber;
        self
    }

    pub fn with_metadata(mut self, metadata: Metadata) -> Self {
        self.metadata = metadata;
        self
    }

    /// What was recorded so far, as a playback script.
    pub fn script(&self) -> Script {
        let steps = self.steps.lock().unwrap_or_else(PoisonError::into_inner);
        Script {
            metadata: Some(self.metadata.clone()).filter(|m| *m != Metadata::default()),
            responses: steps.clone(),
        }
    }

    /// Writes the playback script to `path` (creating its folder), after the secret scan:
    /// a file that would hold a key-like string is not written.
    pub fn save(&self, path: &Path) -> Result<()> {
        let script = self.script();
        let text = format!(
            "# Recorded by llm-sim: {} calls. Replay with MERKLE_LLM_MODE=playback.\n{}",
            script.responses.len(),
            script.to_yaml()
        );
        if let Some(hit) = secrets::scan(&text).into_iter().next() {
            return Err(Error::SecretFound {
                path: path.to_owned(),
                line: hit.line,
                kind: hit.kind,
                preview: hit.preview,
            });
        }
        let write_error = |source| Error::Write {
            path: path.to_owned(),
            source,
        };
        if let Some(parent) = path
            .parent()
            .filter(|parent| !parent.as_os_str().is_empty())
        {
            std::fs::create_dir_all(parent).map_err(write_error)?;
        }
        // Written beside the target and renamed, so a reader never sees half a recording.
        let mut partial = path.as_os_str().to_owned();
        partial.push(".partial");
        std::fs::write(&partial, text).map_err(write_error)?;
        std::fs::rename(&partial, path).map_err(write_error)
    }
}

/// Appends the step recording `request` and its `response`.
fn record(steps: &Mutex<Vec<Step>>, scrubber: &Scrubber, request: Value, response: &Response) {
    let scrub = |text: String| scrubber.scrub_str(&text);
    let mut signature = None;
    let mut thinking: Option<String> = None;
    for block in &response.content {
        if let ContentBlock::Thinking {
            text,
            signature: signed,
        } = block
        {
            thinking.get_or_insert_with(String::new).push_str(text);
            if signed.is_some() {
                signature.clone_from(signed);
            }
        }
    }
    let tool_calls = response
        .tool_calls()
        .into_iter()
        .map(|call| {
            let mut input = call.input.clone();
            scrubber.scrub_value(&mut input);
            ToolCallSpec {
                id: Some(call.id.clone()),
                name: call.name.clone(),
                input: Some(input),
                raw_input: None,
            }
        })
        .collect();
    let mut steps = steps.lock().unwrap_or_else(PoisonError::into_inner);
    let step = Step {
        step: Some(u32::try_from(steps.len() + 1).unwrap_or(u32::MAX)),
        request: Some(request),
        id: response.id.clone().filter(|id| !id.is_empty()),
        model: Some(response.model.clone()).filter(|model| !model.is_empty()),
        thinking: thinking.map(scrub),
        signature,
        content: Some(response.text())
            .filter(|text| !text.is_empty())
            .map(scrub),
        tool_calls,
        stop_reason: Some(response.stop_reason.clone()),
        usage: Some(response.usage.into()),
        failure: None,
    };
    steps.push(step);
}

impl LlmClient for RecordingClient {
    fn complete<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, llm_core::Result<Response>> {
        Box::pin(async move {
            let response = self.inner.complete(request).await?;
            let canonical = canonical_request(request, &self.scrubber);
            record(&self.steps, &self.scrubber, canonical, &response);
            Ok(response)
        })
    }

    fn stream<'a>(&'a self, request: &'a Request) -> BoxFuture<'a, llm_core::Result<EventStream>> {
        Box::pin(async move {
            let inner = self.inner.stream(request).await?;
            let steps = Arc::clone(&self.steps);
            let scrubber = self.scrubber.clone();
            let mut pending = Some((
                canonical_request(request, &self.scrubber),
                ResponseBuilder::default(),
            ));
            let stream = inner.map(move |item| {
                if let Ok(event) = &item
                    && let Some((_, builder)) = pending.as_mut()
                {
                    builder.push(event.clone());
                    if matches!(event, Event::Stop { .. })
                        && let Some((canonical, builder)) = pending.take()
                    {
                        record(&steps, &scrubber, canonical, builder.response());
                    }
                }
                item
            });
            Ok(Box::pin(stream) as EventStream)
        })
    }

    fn usage_stats(&self) -> UsageStats {
        self.inner.usage_stats()
    }

    fn reset_usage_stats(&self) {
        self.inner.reset_usage_stats();
    }

    fn count_tokens(&self, request: &Request) -> u64 {
        self.inner.count_tokens(request)
    }

    fn prewarm<'a>(
        &'a self,
        request: &'a Request,
    ) -> BoxFuture<'a, llm_core::Result<Option<llm_core::Usage>>> {
        self.inner.prewarm(request)
    }

    fn count_offline(&self, request: &Request) -> llm_core::TokenCount {
        self.inner.count_offline(request)
    }

    fn count_input<'a>(
        &'a self,
        request: &'a Request,
    ) -> BoxFuture<'a, llm_core::Result<llm_core::TokenCount>> {
        self.inner.count_input(request)
    }
}
