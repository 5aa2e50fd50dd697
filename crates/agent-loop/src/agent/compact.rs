//! How an agent compacts its conversation when the newest messages no longer all fit its
//! window: the oldest are replaced by one summary message carrying the ledger.

use super::{Agent, AgentEvent, TurnOutcome};
use crate::compaction::{missing_sections, pending_request, summary_message, summary_request};
use crate::conversation::Compaction;
use crate::error::{Error, Result};
use crate::time::format_utc;
use crate::window::{MessageTokens, estimate_text_tokens};

/// Tokens of framing around the summary and the ledger in the summary message.
const SUMMARY_SLACK: u64 = 256;

impl Agent {
    /// Replaces the oldest messages by a summary message (the model's summary, asked for twice
    /// at most, or a note) carrying the ledger. The messages kept leave room in `budget` for
    /// the summary message, so that it is sent with them.
    pub(super) async fn compact(&mut self, budget: u64, outcome: &mut TurnOutcome) -> Result<()> {
        let messages = self.conversation.messages();
        let intent = self.governor().and_then(|g| {
            g.intent()
                .map(|i| format!("{i}: {}", g.justification().unwrap_or_default()))
        });
        let pending = pending_request(messages);
        // Room for the summary message: the summary at its token limit, the ledger so far
        // (it grows a little with what is dropped now) and framing.
        let ledger_so_far = self
            .conversation
            .metadata()
            .ledger
            .render(intent.as_deref(), pending.as_deref());
        let reserve = u64::from(self.config.compaction.max_summary_tokens)
            + estimate_text_tokens(&ledger_so_far)
            + SUMMARY_SLACK;
        let (dropped, _) =
            context::newest_that_fit(messages, budget.saturating_sub(reserve), MessageTokens);
        let dropped = dropped.max(1);
        let dropped_tokens = messages[..dropped]
            .iter()
            .map(crate::window::estimate_message_tokens)
            .sum();
        let (old, kept) = messages.split_at(dropped);
        let mut ledger = self.conversation.metadata().ledger.clone();
        ledger.record(old);
        let ledger_text = ledger.render(intent.as_deref(), pending.as_deref());
        let request = summary_request(&self.config.model, old, &self.config.compaction);
        let kept = kept.to_vec();
        let mut summary: Result<String, String> = Err(String::new());
        for _attempt in 0..2 {
            outcome.model_calls += 1;
            summary = match self.client.complete(&request).await {
                Ok(response) => {
                    outcome.usage += response.usage;
                    // The summary's tokens count against the request's cap like any call's; a
                    // stop it causes is seen at the next model call's count.
                    let cost = self.config.price.map_or(0.0, |p| p.cost(&response.usage));
                    if let Some(g) = &mut self.governance {
                        let _ = g.governor.after_model_call(&response.usage, cost);
                    }
                    let text = response.text();
                    let missing = missing_sections(&text);
                    if missing.is_empty() {
                        Ok(text)
                    } else {
                        Err(format!("the summary lacked {}", missing.join(", ")))
                    }
                }
                // The provider failed (llm-core has already retried): keep the history as it
                // is, so that a retry of the request can still compact it.
                Err(e) => return Err(Error::Model(e)),
            };
            if summary.is_ok() {
                break;
            }
        }
        let message = summary_message(
            dropped,
            summary.as_deref().map_err(String::as_str),
            &ledger_text,
        );
        let mut transcript = Vec::with_capacity(kept.len() + 1);
        transcript.push(message);
        transcript.extend(kept);
        let record = Compaction {
            at: format_utc(self.clock.system_now()),
            dropped,
            dropped_tokens,
            summarized: summary.is_ok(),
            note: summary.as_ref().err().cloned(),
        };
        // The ledger first: a crash before the transcript is replaced only records the same
        // messages twice in it (its sets ignore that); the other order could lose them.
        self.conversation.update_metadata(|m| {
            m.compaction_count += 1;
            m.ledger = ledger;
            m.compactions.push(record);
        })?;
        self.conversation.replace_transcript(transcript)?;
        outcome.compactions += 1;
        self.emit(AgentEvent::Compacted {
            dropped,
            summarized: summary.is_ok(),
        });
        Ok(())
    }
}
