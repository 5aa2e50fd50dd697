//! OpenAI GPT-5.6's explicit prompt-cache breakpoints as the fake service reads them: the items
//! (chat messages, Responses input items) whose content ends with a `prompt_cache_breakpoint`,
//! and `prompt_cache_options.mode`, read into [`llm_core::CacheMarks`] so that the prompt cache
//! bills them ([`crate::cache`]).

use std::collections::BTreeSet;

use llm_core::Request;
use llm_core::cache_rules::openai_breakpoints;
use serde_json::Value;

/// The breakpoints of one body.
pub(crate) struct Marked {
    /// Positions in the body's item list.
    items: BTreeSet<usize>,
    /// `prompt_cache_options.mode: explicit`: no implicit breakpoint at the end.
    explicit: bool,
}

impl Marked {
    /// Reads the items of `body[list]` that carry a breakpoint, and the request's mode.
    pub(crate) fn read(body: &Value, list: &str) -> Marked {
        let has_breakpoint = |item: &Value| {
            ["content", "output"].iter().any(|field| {
                item[field].as_array().is_some_and(|blocks| {
                    blocks
                        .iter()
                        .any(|block| !block["prompt_cache_breakpoint"].is_null())
                })
            })
        };
        let items = body[list]
            .as_array()
            .map(|items| {
                (0..items.len())
                    .filter(|&i| has_breakpoint(&items[i]))
                    .collect()
            })
            .unwrap_or_default();
        Marked {
            items,
            explicit: body["prompt_cache_options"]["mode"] == "explicit",
        }
    }

    /// After item `item` was read into `request`: marks the system prompt (`system`, the
    /// item was one) or the request's last message, when the item carried a breakpoint.
    pub(crate) fn note(&self, item: usize, system: bool, request: &mut Request) {
        if !self.items.contains(&item) {
            return;
        }
        let cache = &mut request.cache;
        if system {
            cache.system = true;
        } else if let Some(last) = request.messages.len().checked_sub(1)
            && !cache.messages.contains(&last)
        {
            cache.messages.push(last);
        }
    }

    /// Once the body is read: GPT-5.6 and later add their implicit breakpoint unless the mode
    /// is explicit (earlier models have only OpenAI's automatic prefix cache). Not modelled:
    /// explicit mode with no breakpoint at all, which OpenAI caches nothing of and this bills
    /// as implicit; merkle's client never sends it (no marks, no `prompt_cache_options`).
    pub(crate) fn finish(&self, request: &mut Request) {
        request.cache.automatic = openai_breakpoints(&request.model) && !self.explicit;
    }
}
