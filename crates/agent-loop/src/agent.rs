//! The turn loop: one user request in, tool calls dispatched until the model ends its turn,
//! calls `complete` or `escalate`, or the loop governor stops it.
//!
//! Per model call: the system prompt is built from the identity files (read again every call:
//! they may change between turns), the newest messages that fit the window are selected, the
//! conversation is compacted first if they do not all fit, the model is called, and its message
//! is persisted before any tool runs. The calls of one message run in order, each decided first
//! by governance when the agent has it, and their results are persisted as one message before
//! the next model call, so a crash loses at most the message in flight (and a tool call whose
//! result was not persisted is answered "interrupted" on resume).
//!
//! Tools are synchronous and run on the calling task, one at a time: their order is the
//! model's, and a turn never has two running at once. A turn's future may be dropped (Ctrl-C
//! in `merkle chat`); [`Agent::abort`] then resets governance and the next turn repairs any
//! call left without a result.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use governance::{AuditLog, Decision, Governor, LoopStop, Outcome, Reset, SELECT_ACTIVE_INTENT};
use llm_core::{
    CacheMarks, CacheTtl, Clock, ContentBlock, LlmClient, Message, Price, Request, Response, Role,
    ToolCall, Usage,
};
use serde::Serialize;

use crate::compaction::CompactionConfig;
use crate::conversation::ConversationStore;
use crate::error::{Error, Result};
use crate::prompt::{PromptLimits, RuntimeInfo, build_system_prompt, load_identity_files};
use crate::time::format_utc;
use crate::tools::control::{COMPLETE, ESCALATE};
use crate::tools::{ToolOutcome, ToolRegistry};
use crate::window::{MessageTokens, estimate_text_tokens, token_budget};

mod compact;

/// The text recorded for an answer with no content.
pub const EMPTY_ANSWER: &str = "[merkle: the model returned an empty answer]";

/// How an agent calls its model.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// The model name; empty: the client's default.
    pub model: String,
    /// The response's token limit, reserved out of the window.
    pub max_tokens: u32,
    /// The model's context window in tokens.
    pub context_window: u64,
    /// The agent's home folder, holding its identity files.
    pub home: PathBuf,
    pub prompt_limits: PromptLimits,
    /// The workspace as the system prompt names it.
    pub workspace_label: String,
    /// Model calls per request at most, whatever the policy: the last guard against a loop.
    pub max_model_calls: u32,
    pub compaction: CompactionConfig,
    /// How a governed agent's tools are offered as the intent changes.
    pub tool_offer: ToolOffering,
    /// What the model costs, for the policy's cost cap; `None`: calls cost 0 and the cap never
    /// trips.
    pub price: Option<Price>,
    /// Whether requests ask the provider to cache their stable prefix ([`cache_marks`] and a
    /// cache key per conversation); on by default.
    pub prompt_cache: bool,
    /// How long the cached prefix lives: five minutes (the default) for a loop that calls the
    /// model again at once; an hour where every call is followed by a long pause.
    pub cache_ttl: CacheTtl,
    /// After the model ends its turn, write the whole conversation to the provider's cache for
    /// an hour with a pre-warming call (no answer), so that a person's next request reads it
    /// however long they pause; for a chat. Off by default.
    pub keep_warm: bool,
}

/// How the tools a governed agent may call now are shown to the model. Either way the
/// dispatcher decides every call; this only changes what the model is told.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ToolOffering {
    /// The request's tool list holds only what the intent allows now.
    #[default]
    Filtered,
    /// The request holds every tool, and an OpenAI `allowed_tools` tool choice names the ones
    /// the intent allows now: for providers that keep the tool schema fixed (it caches better)
    /// and take the allowed names separately.
    AllowedList,
}

impl Default for AgentConfig {
    fn default() -> Self {
        Self {
            model: String::new(),
            max_tokens: 8_192,
            context_window: 200_000,
            home: PathBuf::from("."),
            prompt_limits: PromptLimits::default(),
            workspace_label: ".".to_owned(),
            max_model_calls: 200,
            compaction: CompactionConfig::default(),
            tool_offer: ToolOffering::Filtered,
            prompt_cache: true,
            cache_ttl: CacheTtl::FiveMinutes,
            keep_warm: false,
            price: None,
        }
    }
}

/// Answers governance's asks: the user's yes or no to one call.
pub trait Approver: Send {
    fn approve(&mut self, call: &ToolCall, rule: &str) -> bool;
}

/// Governance of an agent: every call decided before it runs, every decision audited.
pub struct Governance {
    pub governor: Governor,
    pub audit: AuditLog,
    /// Answers asks when the governor leaves them to the user ([`governance::AskMode::Prompt`]).
    pub approver: Option<Box<dyn Approver>>,
}

/// What the loop reports as it goes, for progress output.
#[derive(Debug)]
#[non_exhaustive]
pub enum AgentEvent<'a> {
    /// The identity files had problems (truncated, unreadable); once per request.
    IdentityWarnings(&'a [String]),
    /// Older messages were replaced by a summary (`summarized`) or dropped with a note.
    Compacted { dropped: usize, summarized: bool },
    /// The model answered.
    Response(&'a Response),
    /// A tool call is about to be decided and, if allowed, run.
    ToolCall(&'a ToolCall),
    /// A tool call's result, as the model will read it.
    ToolResult {
        call: &'a ToolCall,
        outcome: &'a ToolOutcome,
    },
}

/// Receives [`AgentEvent`]s.
pub type Observer = Box<dyn FnMut(AgentEvent<'_>) + Send>;

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model ended its turn without calling a tool.
    EndTurn,
    /// The model called `complete`.
    Completed { summary: String },
    /// The model called `escalate`.
    Escalated { reason: String },
    /// The loop governor ended the request.
    Stopped { stop: LoopStop },
    /// The request reached [`AgentConfig::max_model_calls`].
    ModelCallCap { limit: u32 },
}

/// What one request did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnOutcome {
    /// The text of the model's last message.
    pub text: String,
    pub end: TurnEnd,
    /// Model calls, the summarizer's included.
    pub model_calls: u32,
    pub tool_calls: u32,
    pub usage: Usage,
    pub compactions: u32,
    /// The tools that change the workspace (write, edit, command: [`crate::tools::ToolDefinition::changes`])
    /// whose last call in this request failed (refused, invalid input, or the tool itself
    /// failed), by name. A `complete` with any here claims a task that a failed change left
    /// undone or unchecked (an edit that did not apply, say); a failed read does not count.
    pub failed_tools: Vec<String>,
}

/// An agent in one conversation.
pub struct Agent {
    client: Arc<dyn LlmClient>,
    conversation: ConversationStore,
    tools: ToolRegistry,
    config: AgentConfig,
    clock: Arc<dyn Clock>,
    governance: Option<Governance>,
    observer: Option<Observer>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("conversation", &self.conversation)
            .field("tools", &self.tools)
            .field("config", &self.config)
            .field("governed", &self.governance.is_some())
            .finish_non_exhaustive()
    }
}

impl Agent {
    pub fn new(
        client: Arc<dyn LlmClient>,
        conversation: ConversationStore,
        tools: ToolRegistry,
        config: AgentConfig,
        clock: Arc<dyn Clock>,
    ) -> Agent {
        Agent {
            client,
            conversation,
            tools,
            config,
            clock,
            governance: None,
            observer: None,
        }
    }

    /// Puts every tool call under `governance`.
    pub fn with_governance(mut self, governance: Governance) -> Agent {
        self.governance = Some(governance);
        self
    }

    pub fn with_observer(mut self, observer: Observer) -> Agent {
        self.observer = Some(observer);
        self
    }

    pub fn tools(&self) -> &ToolRegistry {
        &self.tools
    }

    pub fn conversation(&self) -> &ConversationStore {
        &self.conversation
    }

    pub fn governor(&self) -> Option<&Governor> {
        self.governance.as_ref().map(|g| &g.governor)
    }

    /// One request: `input` as a new user message, then model calls and tool calls until the
    /// request ends. The intent and the loop governor's counters start afresh.
    pub async fn process_turn(&mut self, input: &str) -> Result<TurnOutcome> {
        self.conversation.answer_interrupted_calls()?;
        if let Some(g) = &mut self.governance {
            g.governor.reset(Reset::NewRequest);
        }
        self.conversation.append_message(Message::user(input))?;
        self.run_request().await
    }

    /// Sends the pending request again (after a model call failed, or a turn was aborted):
    /// the intent resets, the loop governor's counters do not.
    pub async fn retry(&mut self) -> Result<TurnOutcome> {
        self.conversation.answer_interrupted_calls()?;
        if self.conversation.messages().last().map(|m| m.role) != Some(Role::User) {
            return Err(Error::NothingToRetry);
        }
        if let Some(g) = &mut self.governance {
            g.governor.reset(Reset::Retry);
        }
        self.run_request().await
    }

    /// Records that the request in flight was abandoned: the intent and counters reset.
    pub fn abort(&mut self) {
        if let Some(g) = &mut self.governance {
            g.governor.reset(Reset::Abort);
        }
    }

    /// Model calls and their tool calls until the request ends: the model ends its turn, a
    /// call ends the request, or a cap stops it.
    async fn run_request(&mut self) -> Result<TurnOutcome> {
        let mut outcome = TurnOutcome {
            text: String::new(),
            end: TurnEnd::EndTurn,
            model_calls: 0,
            tool_calls: 0,
            usage: Usage::default(),
            compactions: 0,
            failed_tools: Vec::new(),
        };
        // Whether each tool's last call in this request failed; a later success clears it.
        let mut failed: BTreeMap<String, bool> = BTreeMap::new();
        let mut first = true;
        loop {
            let request = self.prepare_request(&mut outcome, first).await?;
            first = false;
            // A failed call is not an abort: the request stays pending, and `retry` (which
            // resets the intent) must not buy it a fresh budget of calls and tokens.
            let response = self.client.complete(&request).await?;
            let last_usage = response.usage;
            let (calls, stop) = self.record_response(response, &mut outcome)?;
            if calls.is_empty() {
                outcome.failed_tools = still_failed(&failed);
                self.keep_warm(&mut outcome).await;
                return Ok(outcome);
            }
            let mut end = stop.map(|stop| TurnEnd::Stopped { stop });
            let mut results = self.run_calls(&calls, &mut end, &mut outcome, &mut failed)?;
            if end.is_none() {
                end = self
                    .cap_stop(outcome.model_calls, last_usage, &results)
                    .await;
            }
            if let Some(note) = end.as_ref().and_then(stop_note) {
                results.push(ContentBlock::text(note));
            }
            self.conversation.append_message(Message {
                role: Role::User,
                content: results,
            })?;
            if let Some(end) = end {
                outcome.end = end;
                outcome.failed_tools = still_failed(&failed);
                return Ok(outcome);
            }
        }
    }

    /// With [`AgentConfig::keep_warm`], writes the conversation as the next request will send
    /// it to the cache for an hour, and counts what that cost in the turn's usage. A provider
    /// without pre-warming, or a failed call, costs only the read a later request misses.
    async fn keep_warm(&mut self, outcome: &mut TurnOutcome) {
        if !(self.config.keep_warm && self.config.prompt_cache) {
            return;
        }
        let Ok(mut request) = self.prepare_request(outcome, false).await else {
            return;
        };
        request.cache.ttl = CacheTtl::OneHour;
        if let Ok(Some(usage)) = self.client.prewarm(&request).await {
            outcome.usage += usage;
        }
    }

    /// Counts a model call's usage and cost (with the loop governor's verdict on them), tells
    /// the observer and persists the answer; the tool calls it asks for and any stop.
    fn record_response(
        &mut self,
        response: Response,
        outcome: &mut TurnOutcome,
    ) -> Result<(Vec<ToolCall>, Option<LoopStop>)> {
        outcome.model_calls += 1;
        outcome.usage += response.usage;
        let cost = self.config.price.map_or(0.0, |p| p.cost(&response.usage));
        let stop = self
            .governance
            .as_mut()
            .and_then(|g| g.governor.after_model_call(&response.usage, cost));
        self.emit(AgentEvent::Response(&response));
        outcome.text = response.text();
        let calls: Vec<ToolCall> = response.tool_calls().into_iter().cloned().collect();
        let mut message = response.into_message();
        // Providers reject an empty assistant message (or empty text block) in a later
        // request, so an empty answer is recorded as a marker rather than as nothing.
        message
            .content
            .retain(|b| !matches!(b, ContentBlock::Text { text } if text.is_empty()));
        if message.content.is_empty() {
            message.content.push(ContentBlock::text(EMPTY_ANSWER));
        }
        self.conversation.append_message(message)?;
        Ok((calls, stop))
    }

    /// Decides and runs one answer's calls in order, noting in `failed` whether each changing
    /// tool's call failed; their result blocks. A failure of the loop itself is returned once
    /// the results so far are persisted.
    fn run_calls(
        &mut self,
        calls: &[ToolCall],
        end: &mut Option<TurnEnd>,
        outcome: &mut TurnOutcome,
        failed: &mut BTreeMap<String, bool>,
    ) -> Result<Vec<ContentBlock>> {
        let mut results = Vec::with_capacity(calls.len() + 1);
        // A failure of the loop itself (the audit log cannot be written) ends the request,
        // but only after the results so far are saved: the calls that ran must not be
        // answered "interrupted" and run again.
        let mut failure = None;
        for call in calls {
            outcome.tool_calls += 1;
            if failure.is_some() {
                results.push(ContentBlock::ToolResult {
                    tool_use_id: call.id.clone(),
                    content: "not run: the request failed at an earlier call".to_owned(),
                    is_error: true,
                });
                continue;
            }
            // Calls answered "not run" after the request ended say nothing of the tools.
            let ran = end.is_none();
            match self.dispatch(call, end) {
                Ok(block) => {
                    let changes = self.tools.get(&call.name).is_some_and(|t| t.changes);
                    if let (true, true, ContentBlock::ToolResult { is_error, .. }) =
                        (ran, changes, &block)
                    {
                        failed.insert(call.name.clone(), *is_error);
                    }
                    results.push(block);
                }
                Err(e) => {
                    results.push(ContentBlock::ToolResult {
                        tool_use_id: call.id.clone(),
                        content: format!("error: {e}"),
                        is_error: true,
                    });
                    failure = Some(e);
                }
            }
        }
        if let Some(e) = failure {
            self.conversation.append_message(Message {
                role: Role::User,
                content: results,
            })?;
            return Err(e);
        }
        Ok(results)
    }

    /// The end a cap puts to a request still running after `model_calls` calls, the last of
    /// which used `last_usage` and was answered by `results`: the model call cap, else the cost
    /// cap.
    async fn cap_stop(
        &self,
        model_calls: u32,
        last_usage: Usage,
        results: &[ContentBlock],
    ) -> Option<TurnEnd> {
        if model_calls >= self.config.max_model_calls {
            return Some(TurnEnd::ModelCallCap {
                limit: self.config.max_model_calls,
            });
        }
        // A priced request under a cost cap stops before a call that could pass it: the
        // next call's input is this one's and its answer (as the provider billed them) and
        // these results (as the provider counts them, where it can say), and its output at
        // most max_tokens, all at full price.
        let (Some(g), Some(price)) = (&self.governance, self.config.price) else {
            return None;
        };
        let results = Request {
            model: self.config.model.clone(),
            messages: vec![Message {
                role: Role::User,
                content: results.to_vec(),
            }],
            ..Request::default()
        };
        let added = match self.client.count_input(&results).await {
            Ok(count) => count,
            Err(_) => self.client.count_offline(&results),
        };
        let next_usd = price.cost(&Usage {
            input_tokens: last_usage.total_input() + last_usage.output_tokens + added.tokens,
            output_tokens: u64::from(self.config.max_tokens),
            ..Usage::default()
        });
        g.governor
            .loop_guard()
            .before_model_call(next_usd, added.source.is_exact())
            .map(|stop| TurnEnd::Stopped { stop })
    }

    /// The next model request: system prompt, tools, and the messages that fit, compacting
    /// first when they do not all fit.
    async fn prepare_request(
        &mut self,
        outcome: &mut TurnOutcome,
        first_of_request: bool,
    ) -> Result<Request> {
        let identity = load_identity_files(&self.config.home, &self.config.prompt_limits);
        if first_of_request && !identity.warnings.is_empty() {
            self.emit(AgentEvent::IdentityWarnings(&identity.warnings));
        }
        let hashes = identity.hashes();
        if hashes != self.conversation.metadata().identity_hashes {
            self.conversation
                .update_metadata(|m| m.identity_hashes = hashes)?;
        }
        let registered = self.tools.export();
        let mut extra = std::collections::BTreeMap::new();
        let (offered, described) = match &self.governance {
            Some(g) => {
                let offer = g.governor.allowed_tools(&registered);
                match self.config.tool_offer {
                    ToolOffering::Filtered => (offer.tools, offer.all_tools),
                    ToolOffering::AllowedList => {
                        extra.insert(
                            "tool_choice".to_owned(),
                            allowed_tools_choice(&offer.allowed),
                        );
                        (offer.all_tools.clone(), offer.all_tools)
                    }
                }
            }
            None => (registered.clone(), registered),
        };
        // The prompt describes every tool, not just those the intent offers now, so that it
        // stays byte-identical as the intent changes and provider prompt caches keep working.
        let date = format_utc(self.clock.system_now());
        let system = build_system_prompt(
            &identity,
            &described,
            &RuntimeInfo {
                workspace: self.config.workspace_label.clone(),
                current_time: date.get(..10).unwrap_or(&date).to_owned(),
            },
        );
        let fixed = estimate_text_tokens(&system)
            + offered
                .iter()
                .map(crate::window::estimate_tool_tokens)
                .sum::<u64>();
        let budget = token_budget(
            self.config.context_window,
            fixed,
            u64::from(self.config.max_tokens),
        );
        // Only the newest messages that fit are estimated; the dropped ones only when
        // compaction needs their tokens.
        let messages = self.conversation.messages();
        let (mut cut, _) = context::newest_that_fit(messages, budget, MessageTokens);
        if cut == messages.len()
            && let Some(newest) = messages.last()
        {
            // Compacting cannot help: the message being answered is itself too large.
            return Err(Error::ContextOverflow {
                tokens: crate::window::estimate_message_tokens(newest),
                budget,
            });
        }
        // Once per request: if even the summary does not fit, compacting again would only
        // summarize the summary; selection then drops what does not fit.
        if cut > 0 && outcome.compactions == 0 {
            self.compact(budget, outcome).await?;
            cut = context::newest_that_fit(self.conversation.messages(), budget, MessageTokens).0;
        }
        let selected = &self.conversation.messages()[cut..];
        Ok(Request {
            model: self.config.model.clone(),
            system: Some(system),
            cache: if self.config.prompt_cache {
                cache_marks(selected, self.config.cache_ttl)
            } else {
                CacheMarks::default()
            },
            cache_key: self
                .config
                .prompt_cache
                .then(|| self.conversation.id().to_owned()),
            messages: selected.to_vec(),
            tools: offered,
            max_tokens: self.config.max_tokens,
            extra,
            ..Request::default()
        })
    }

    /// Decides and runs one call; its result block. Sets `end` when the call ends the request.
    fn dispatch(&mut self, call: &ToolCall, end: &mut Option<TurnEnd>) -> Result<ContentBlock> {
        self.emit(AgentEvent::ToolCall(call));
        let outcome = match end {
            Some(end) => {
                // The request is over; the call still needs an answer for the transcript to be
                // a valid request.
                if let (Some(g), TurnEnd::Stopped { stop }) = (&self.governance, &*end) {
                    g.audit.append(&g.governor.audit_stop(call, stop))?;
                }
                ToolOutcome {
                    content: format!("not run: {}", end_text(end)),
                    is_error: true,
                }
            }
            None => match self.governance.take() {
                None => self.tools.call(&call.name, &call.input),
                Some(mut g) => {
                    let result = self.governed_call(&mut g, call, end);
                    self.governance = Some(g);
                    result?
                }
            },
        };
        if end.is_none() && !outcome.is_error {
            let text = |field: &str| {
                call.input
                    .get(field)
                    .and_then(|v| v.as_str())
                    .unwrap_or_default()
                    .to_owned()
            };
            if call.name == COMPLETE {
                *end = Some(TurnEnd::Completed {
                    summary: text("summary"),
                });
            } else if call.name == ESCALATE {
                *end = Some(TurnEnd::Escalated {
                    reason: text("reason"),
                });
            }
        }
        self.emit(AgentEvent::ToolResult {
            call,
            outcome: &outcome,
        });
        Ok(ContentBlock::ToolResult {
            tool_use_id: call.id.clone(),
            content: outcome.content,
            is_error: outcome.is_error,
        })
    }

    /// The governor's hook around one call: count it, decide it, ask if need be, run it if
    /// allowed, count its result, audit the decision and what became of the call.
    fn governed_call(
        &mut self,
        g: &mut Governance,
        call: &ToolCall,
        end: &mut Option<TurnEnd>,
    ) -> Result<ToolOutcome> {
        if let Some(stop) = g.governor.before_call(call) {
            g.audit.append(&g.governor.audit_stop(call, &stop))?;
            let outcome = ToolOutcome {
                content: format!("not run: {}", stop_text(&stop)),
                is_error: true,
            };
            *end = Some(TurnEnd::Stopped { stop });
            return Ok(outcome);
        }
        let decision = g.governor.decide(call);
        let (outcome, audited) = match &decision {
            Decision::Deny { .. } => (
                ToolOutcome {
                    content: decision.error_text().unwrap_or_default(),
                    is_error: true,
                },
                Outcome::Blocked,
            ),
            Decision::Ask { rule } => {
                let yes = g
                    .approver
                    .as_mut()
                    .is_some_and(|approver| approver.approve(call, rule));
                if yes {
                    self.run_allowed(g, call, &decision)?
                } else {
                    (
                        ToolOutcome {
                            content: format!(
                                "not run: the user declined this call (rule {rule} asks first)"
                            ),
                            is_error: true,
                        },
                        Outcome::Declined,
                    )
                }
            }
            Decision::Allow { .. } => self.run_allowed(g, call, &decision)?,
        };
        g.audit
            .append(&g.governor.audit_entry(call, &decision, audited))?;
        let error = outcome.is_error.then_some(outcome.content.as_str());
        if let Some(stop) = g.governor.after_call(error) {
            *end = Some(TurnEnd::Stopped { stop });
        }
        Ok(outcome)
    }

    /// Runs a call governance allowed. A tool's run is on the audit log before it starts, so a
    /// call that never returns (it killed the process) is on record too; a control tool (the
    /// intent selection, complete, escalate), which only tells the loop something, gets its one
    /// record after.
    fn run_allowed(
        &self,
        g: &mut Governance,
        call: &ToolCall,
        decision: &Decision,
    ) -> Result<(ToolOutcome, Outcome)> {
        let outcome = if call.name == SELECT_ACTIVE_INTENT {
            ToolOutcome {
                content: g.governor.selection_text(),
                is_error: false,
            }
        } else {
            if decision.rule() != governance::RULE_CONTROL {
                g.audit
                    .append(&g.governor.audit_entry(call, decision, Outcome::Started))?;
            }
            self.tools.call(&call.name, &call.input)
        };
        let audited = if outcome.is_error {
            Outcome::Error
        } else {
            Outcome::Ok
        };
        Ok((outcome, audited))
    }

    fn emit(&mut self, event: AgentEvent<'_>) {
        if let Some(observer) = &mut self.observer {
            observer(event);
        }
    }
}

/// Where a request of the conversation `messages` asks the provider to cache its prefix:
/// after the tools and after the system prompt (both byte-stable), after the last message (what
/// the next request will find cached), and after the last message the previous request sent,
/// the one before the newest answer (what this request reads). The marks are positions in the
/// messages sent, so they move forward as the conversation grows; after compaction the first
/// request misses once and the next reads again.
pub fn cache_marks(messages: &[Message], ttl: CacheTtl) -> CacheMarks {
    let mut marks = CacheMarks {
        tools: true,
        system: true,
        messages: Vec::new(),
        ttl,
        automatic: false,
    };
    if let Some(answer) = messages.iter().rposition(|m| m.role == Role::Assistant)
        && answer > 0
    {
        marks.messages.push(answer - 1);
    }
    if !messages.is_empty() {
        marks.messages.push(messages.len() - 1);
    }
    marks.messages.dedup();
    marks
}

/// OpenAI's `allowed_tools` tool choice naming `allowed`, the model deciding whether to call one.
fn allowed_tools_choice(allowed: &[String]) -> serde_json::Value {
    let tools: Vec<serde_json::Value> = allowed
        .iter()
        .map(|name| serde_json::json!({"type": "function", "function": {"name": name}}))
        .collect();
    serde_json::json!({
        "type": "allowed_tools",
        "allowed_tools": {"mode": "auto", "tools": tools},
    })
}

/// The tools whose last call failed, in name order.
fn still_failed(failed: &BTreeMap<String, bool>) -> Vec<String> {
    failed
        .iter()
        .filter(|(_, failed)| **failed)
        .map(|(tool, _)| tool.clone())
        .collect()
}

/// The text block recorded in the transcript when the request was stopped, typed: the stop
/// serialized as JSON after a sentence for people. `None` for ends the model chose.
fn stop_note(end: &TurnEnd) -> Option<String> {
    match end {
        TurnEnd::Stopped { .. } | TurnEnd::ModelCallCap { .. } => Some(format!(
            "[merkle: turn stopped: {}] {}",
            end_text(end),
            serde_json::to_string(end).unwrap_or_default()
        )),
        TurnEnd::EndTurn | TurnEnd::Completed { .. } | TurnEnd::Escalated { .. } => None,
    }
}

fn end_text(end: &TurnEnd) -> String {
    match end {
        TurnEnd::EndTurn => "the turn ended".to_owned(),
        TurnEnd::Completed { .. } => "the task was completed by an earlier call".to_owned(),
        TurnEnd::Escalated { .. } => "the task was escalated by an earlier call".to_owned(),
        TurnEnd::Stopped { stop } => stop_text(stop),
        TurnEnd::ModelCallCap { limit } => {
            format!("the request reached its cap of {limit} model calls")
        }
    }
}

fn stop_text(stop: &LoopStop) -> String {
    format!(
        "the loop governor stopped the request ({}): {stop}",
        stop.rule()
    )
}
