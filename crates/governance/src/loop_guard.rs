//! The loop governor: ends a request that repeats itself or outgrows its caps, with a typed
//! reason the agent loop records in the transcript.
//!
//! It counts per user request. A retry does not reset it (retrying must not buy a looping model
//! a fresh budget); a new request and an abort do. Every call counts, denied ones included: a
//! model that keeps making a blocked call is looping too.
use std::fmt;

use llm_types::{ToolCall, Usage};
use serde::{Deserialize, Serialize};

use crate::canonical::args_hash;
use crate::policy::Limits;

/// Why the loop governor ended a request. Serialized (tagged by `reason`) into transcripts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LoopStop {
    /// The same tool with the same arguments `times` times in a row; the last was not run.
    RepeatedCall { tool: String, times: u32 },
    /// The same error result `times` times in a row.
    RepeatedError { error: String, times: u32 },
    /// One more tool call would exceed the cap; it was not run.
    ToolCallCap { limit: u32 },
    /// The request's model calls used `used` tokens, at or over the cap.
    TokenCap { limit: u64, used: u64 },
    /// The request cost `used_usd`, at or over the cap.
    CostCap { limit_usd: f64, used_usd: f64 },
    /// The request cost `used_usd`, and its next model call could cost up to `next_usd`, which
    /// would pass the cap: the call was not made. `exact`: the call's input was counted as the
    /// provider counts it, rather than estimated.
    NextCallCost {
        limit_usd: f64,
        used_usd: f64,
        next_usd: f64,
        #[serde(default)]
        exact: bool,
    },
}

impl LoopStop {
    /// The limit that stopped the request, named like a rule: `limits.repeat_calls`.
    pub fn rule(&self) -> &'static str {
        match self {
            LoopStop::RepeatedCall { .. } => "limits.repeat_calls",
            LoopStop::RepeatedError { .. } => "limits.repeat_errors",
            LoopStop::ToolCallCap { .. } => "limits.max_tool_calls",
            LoopStop::TokenCap { .. } => "limits.max_tokens",
            LoopStop::CostCap { .. } | LoopStop::NextCallCost { .. } => "limits.max_cost_usd",
        }
    }
}

impl fmt::Display for LoopStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoopStop::RepeatedCall { tool, times } => write!(
                f,
                "{tool} was called with the same arguments {times} times in a row"
            ),
            LoopStop::RepeatedError { error, times } => {
                write!(
                    f,
                    "the same error came back {times} times in a row: {error}"
                )
            }
            LoopStop::ToolCallCap { limit } => {
                write!(f, "the request reached its cap of {limit} tool calls")
            }
            LoopStop::TokenCap { limit, used } => {
                write!(f, "the request used {used} tokens, its cap is {limit}")
            }
            LoopStop::CostCap {
                limit_usd,
                used_usd,
            } => write!(
                f,
                "the request cost ${used_usd:.4}, its cap is ${limit_usd:.4}"
            ),
            LoopStop::NextCallCost {
                limit_usd,
                used_usd,
                next_usd,
                exact,
            } => write!(
                f,
                "the request cost ${used_usd:.4}, and its next model call could cost up to \
                 ${next_usd:.4} ({}), which would pass its cap of ${limit_usd:.4}",
                if *exact {
                    "its input counted as the provider counts it"
                } else {
                    "its input estimated"
                }
            ),
        }
    }
}

/// Counters of one request against its [`Limits`].
#[derive(Clone, Debug)]
pub struct LoopGuard {
    limits: Limits,
    calls: u32,
    /// The last call's tool and argument hash, and how many times in a row it came.
    last_call: Option<(String, String)>,
    call_streak: u32,
    last_error: Option<String>,
    error_streak: u32,
    tokens: u64,
    cost_usd: f64,
}

impl LoopGuard {
    pub fn new(limits: Limits) -> LoopGuard {
        LoopGuard {
            limits,
            calls: 0,
            last_call: None,
            call_streak: 0,
            last_error: None,
            error_streak: 0,
            tokens: 0,
            cost_usd: 0.0,
        }
    }

    /// Starts a new request: every counter back to zero.
    pub fn reset(&mut self) {
        *self = LoopGuard::new(self.limits.clone());
    }

    /// Counts a call the model made, before it is decided or run; `Some` means do not run it
    /// and end the request.
    pub fn before_call(&mut self, call: &ToolCall) -> Option<LoopStop> {
        self.calls += 1;
        let key = (call.name.clone(), args_hash(&call.input));
        if self.last_call.as_ref() == Some(&key) {
            self.call_streak += 1;
        } else {
            self.last_call = Some(key);
            self.call_streak = 1;
        }
        if let Some(limit) = self.limits.max_tool_calls
            && self.calls > limit
        {
            return Some(LoopStop::ToolCallCap { limit });
        }
        if let Some(k) = self.limits.repeat_calls
            && self.call_streak >= k
        {
            return Some(LoopStop::RepeatedCall {
                tool: call.name.clone(),
                times: self.call_streak,
            });
        }
        None
    }

    /// Counts a call's result: `error` is the error result's text (a governance denial
    /// included), `None` a success, which ends any run of errors.
    pub fn after_call(&mut self, error: Option<&str>) -> Option<LoopStop> {
        let Some(error) = error else {
            self.last_error = None;
            self.error_streak = 0;
            return None;
        };
        if self.last_error.as_deref() == Some(error) {
            self.error_streak += 1;
        } else {
            self.last_error = Some(error.to_owned());
            self.error_streak = 1;
        }
        match self.limits.repeat_errors {
            Some(k) if self.error_streak >= k => Some(LoopStop::RepeatedError {
                error: error.to_owned(),
                times: self.error_streak,
            }),
            _ => None,
        }
    }

    /// Counts a model call's usage and its cost as the caller prices it (0 when it does not).
    pub fn after_model_call(&mut self, usage: &Usage, cost_usd: f64) -> Option<LoopStop> {
        self.tokens += usage.total();
        self.cost_usd += cost_usd;
        if let Some(limit) = self.limits.max_tokens
            && self.tokens >= limit
        {
            return Some(LoopStop::TokenCap {
                limit,
                used: self.tokens,
            });
        }
        if let Some(limit_usd) = self.limits.max_cost_usd
            && self.cost_usd >= limit_usd
        {
            return Some(LoopStop::CostCap {
                limit_usd,
                used_usd: self.cost_usd,
            });
        }
        None
    }

    /// The stop for a next model call whose cost could be up to `next_usd` (its input counted
    /// exactly, or estimated), when that would pass the request's cost cap: checked before the
    /// call, so the bound is never passed.
    pub fn before_model_call(&self, next_usd: f64, exact: bool) -> Option<LoopStop> {
        let limit_usd = self.limits.max_cost_usd?;
        (self.cost_usd + next_usd > limit_usd).then_some(LoopStop::NextCallCost {
            limit_usd,
            used_usd: self.cost_usd,
            next_usd,
            exact,
        })
    }

    /// Tool calls counted in this request.
    pub fn calls(&self) -> u32 {
        self.calls
    }

    /// Tokens counted in this request.
    pub fn tokens(&self) -> u64 {
        self.tokens
    }
}
