//! `generate --batch`: a generation's model calls sent as provider batches at half the price,
//! with frames identical to a generation that calls the model directly.
//!
//! The LLM producers ([`crate::producer`]) ask a [`BatchQueue`] instead of the model when
//! one is set: a call it holds the answer to is answered from it, as the model would have
//! answered; any other call is queued and the producer answers [`context::DEFERRED`], which
//! makes `generate` count the file as deferred and leave the directories for later. A
//! [`BatchRun`] then repeats: generate, send what was queued as one batch, wait for it, hand
//! its results to the queue, and generate again, until a pass queues nothing. Files come
//! back in the first batch; with a model's directory policy each level of directories is one
//! more batch, deepest first, since a directory's prompt holds its children's frames.
//!
//! Each call's custom id is a hash of its request, so the same call always has the same id,
//! and the frames come out exactly as a direct generation's: same prompt, same producer id,
//! same memo keys. The batch in flight is kept as a note in the store
//! ([`merkle_store::Store::set_note`]) until the pass after its results has put their frames:
//! a run killed while it waits picks the same batch up, and submits nothing twice. A call that
//! errored, expired or was cancelled is sent again in the next batch, once; a second failure
//! fails its file.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use llm_core::{BatchApi, BatchItem, BatchOutcome, BatchResult, BatchState, BatchStatus};
use llm_core::{Request, Response};
use merkle_store::Store;
use serde_json::json;

use crate::error::{Error, Result};

/// How many times a call is sent in a batch before its file fails.
const MAX_ATTEMPTS: u32 = 2;

/// What a producer gets for a call.
pub(crate) enum Asked {
    Answer(Response),
    /// The call failed in every batch it was sent in.
    Failed(String),
    /// Queued for the next batch.
    Deferred,
}

/// A queued call.
#[derive(Debug, Clone)]
pub struct Pending {
    pub request: Request,
    /// What the call is for (a file's or directory's path), for estimates and messages.
    pub label: String,
}

enum Answered {
    Response(Response),
    Failed { message: String, attempts: u32 },
}

#[derive(Default)]
struct State {
    answers: HashMap<String, Answered>,
    pending: BTreeMap<String, Pending>,
}

/// The calls of a batched generation: answers that came back, and calls waiting for a batch.
#[derive(Default)]
pub struct BatchQueue {
    state: Mutex<State>,
}

/// What a batch's results did to the queue.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Answers {
    pub succeeded: usize,
    /// Errored, expired or cancelled calls (sent again once, in the next batch).
    pub failed: usize,
}

impl BatchQueue {
    /// The custom id of `request`: a hash of all of it, so the same call always has the same
    /// id (64 hex digits, the most a custom id may hold).
    pub fn custom_id(request: &Request) -> String {
        let bytes = serde_json::to_vec(request).expect("a request is plain data");
        blake3::hash(&bytes).to_hex().to_string()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn ask(&self, request: &Request, label: &str) -> Asked {
        let id = Self::custom_id(request);
        let mut state = self.lock();
        match state.answers.get(&id) {
            Some(Answered::Response(response)) => return Asked::Answer(response.clone()),
            Some(Answered::Failed { message, attempts }) if *attempts >= MAX_ATTEMPTS => {
                return Asked::Failed(message.clone());
            }
            _ => {}
        }
        state.pending.insert(
            id,
            Pending {
                request: request.clone(),
                label: label.to_owned(),
            },
        );
        Asked::Deferred
    }

    /// The calls queued since the last take, by custom id.
    pub fn take_pending(&self) -> Vec<(String, Pending)> {
        std::mem::take(&mut self.lock().pending)
            .into_iter()
            .collect()
    }

    /// Takes in a batch's results.
    pub fn answer(&self, results: Vec<BatchResult>) -> Answers {
        let mut state = self.lock();
        let mut answers = Answers::default();
        for result in results {
            let message = match result.outcome {
                BatchOutcome::Succeeded(response) => {
                    answers.succeeded += 1;
                    state
                        .answers
                        .insert(result.custom_id, Answered::Response(response));
                    continue;
                }
                BatchOutcome::Errored(message) => message,
                BatchOutcome::Expired => "the batch expired before this call ran".to_owned(),
                BatchOutcome::Canceled => "the batch was cancelled before this call ran".to_owned(),
            };
            answers.failed += 1;
            let attempts = match state.answers.get(&result.custom_id) {
                Some(Answered::Failed { attempts, .. }) => attempts + 1,
                _ => 1,
            };
            state
                .answers
                .insert(result.custom_id, Answered::Failed { message, attempts });
        }
        answers
    }
}

/// What a [`BatchRun`] reports as it goes.
#[derive(Debug, Clone)]
pub enum BatchEvent {
    /// A batch of `calls` was sent.
    Submitted { id: String, calls: usize },
    /// The batch a killed run left was picked up.
    Resumed { id: String },
    /// The batch as it was at a poll.
    Status(BatchStatus),
    /// Its results came back.
    Answered { id: String, answers: Answers },
}

/// A batched generation's driver.
pub struct BatchRun<'a> {
    pub queue: &'a BatchQueue,
    pub api: &'a dyn BatchApi,
    /// The runtime the batch calls block on.
    pub runtime: &'a tokio::runtime::Handle,
    pub store: &'a Store,
    /// The name of the note that keeps the batch in flight: one per generation (its type,
    /// agent, producer, policy and provider), so that only the same generation resumes it.
    pub note: String,
    /// Time between polls.
    pub poll: Duration,
    /// Set to stop waiting: the batch keeps running at the provider, and the note keeps it
    /// for the next run.
    pub interrupt: &'a AtomicBool,
    pub progress: &'a (dyn Fn(&BatchEvent) + Sync),
}

/// What a batched generation did besides its generations (its JSON is `generate`'s `batch`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Batched {
    /// The batches whose results were used, in order.
    pub batches: Vec<String>,
    /// Whether the first was one a killed run had left.
    pub resumed: bool,
}

impl BatchRun<'_> {
    /// Runs `generate` until a pass queues no call, sending each pass's calls as a batch;
    /// returns every pass's report and the batches.
    pub fn run<G, E: From<Error>>(
        &self,
        mut generate: impl FnMut() -> Result<G, E>,
    ) -> Result<(Vec<G>, Batched), E> {
        let mut passes = Vec::new();
        let mut batched = Batched::default();
        loop {
            passes.push(generate()?);
            // The previous batch's frames are put: nothing is left to resume.
            if let Some(id) = batched.batches.last()
                && self.kept()?.as_deref() == Some(id.as_str())
            {
                self.keep(None)?;
            }
            let pending = self.queue.take_pending();
            if pending.is_empty() {
                return Ok((passes, batched));
            }
            let id = match self.kept()? {
                Some(id) if !batched.batches.contains(&id) => {
                    batched.resumed |= batched.batches.is_empty();
                    (self.progress)(&BatchEvent::Resumed { id: id.clone() });
                    id
                }
                _ => self.submit(pending)?,
            };
            let status = self.wait(&id)?;
            let results = self.block(self.api.results(&id))?;
            let answers = self.queue.answer(results);
            (self.progress)(&BatchEvent::Answered {
                id: id.clone(),
                answers,
            });
            if answers.succeeded + answers.failed == 0 {
                // Nothing came back (a batch whose input the provider refused): another pass
                // would send the same calls again.
                self.keep(None)?;
                return Err(Error::BatchFailed {
                    id,
                    errors: if status.errors.is_empty() {
                        "it returned no results".to_owned()
                    } else {
                        status.errors.join("; ")
                    },
                }
                .into());
            }
            batched.batches.push(id);
        }
    }

    fn block<T>(&self, call: impl std::future::Future<Output = llm_core::Result<T>>) -> Result<T> {
        Ok(self.runtime.block_on(call)?)
    }

    /// The id of the batch the note keeps.
    fn kept(&self) -> Result<Option<String>> {
        let Some(bytes) = self.store.note(&self.note)? else {
            return Ok(None);
        };
        let note: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
        Ok(note["id"].as_str().map(str::to_owned))
    }

    fn keep(&self, id: Option<&str>) -> Result<()> {
        let note = id.map(|id| json!({"id": id}).to_string());
        self.store
            .set_note(&self.note, note.as_deref().map(str::as_bytes))?;
        Ok(())
    }

    fn submit(&self, pending: Vec<(String, Pending)>) -> Result<String> {
        let items: Vec<BatchItem> = pending
            .into_iter()
            .map(|(custom_id, pending)| BatchItem {
                custom_id,
                request: pending.request,
            })
            .collect();
        let created = self.block(self.api.submit(&items))?;
        // Kept before the wait: from here on a killed run resumes this batch.
        self.keep(Some(&created.id))?;
        (self.progress)(&BatchEvent::Submitted {
            id: created.id.clone(),
            calls: items.len(),
        });
        Ok(created.id)
    }

    fn wait(&self, id: &str) -> Result<BatchStatus> {
        loop {
            let status = self.block(self.api.status(id))?;
            (self.progress)(&BatchEvent::Status(status.clone()));
            if status.state == BatchState::Ended {
                return Ok(status);
            }
            let mut slept = Duration::ZERO;
            // In short naps, so that an interruption is seen at once.
            while slept < self.poll {
                if self.interrupt.load(Ordering::SeqCst) {
                    return Err(Error::BatchWaitInterrupted { id: id.to_owned() });
                }
                let nap = (self.poll - slept).min(Duration::from_millis(100));
                // The sleep is made inside the runtime: `tokio::time::sleep` built outside it
                // panics (no reactor), and this thread is not one of the runtime's.
                self.runtime
                    .block_on(async move { tokio::time::sleep(nap).await });
                slept += nap;
            }
        }
    }
}
