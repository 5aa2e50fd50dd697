//! A request's cache marks as OpenAI GPT-5.6 takes them: `prompt_cache_breakpoint` on the
//! content block a prefix ends with, and `prompt_cache_options` saying whether the service adds
//! its own implicit breakpoint at the end (`implicit`) or writes only the marked ones
//! (`explicit`, when the request has marks and is not [`CacheMarks::automatic`]). Earlier
//! models take neither field, so nothing is added for them; tools carry no breakpoint on
//! OpenAI's wire, so a mark after the tools is left out.

use serde_json::{Value, json};

use crate::cache_rules::openai_breakpoints;
use crate::types::{CacheMarks, MAX_CACHE_MARKS, Request};

/// Where marks go in one wire body: the items (chat messages or Responses input items) each
/// request message ended with, and the item holding the system prompt, if one does.
pub(crate) struct Places<'a> {
    /// The body's list of items: `messages` or `input`.
    pub list: &'a str,
    pub system: Option<usize>,
    /// For each message of the request, the index of the last item it became (none when it
    /// became none).
    pub ends: &'a [Option<usize>],
    /// The text block type of a block made from a bare string, by item.
    pub text_type: fn(&Value) -> &'static str,
}

/// Marks `body` for `request`'s cache marks, when its model takes breakpoints.
pub(crate) fn mark(body: &mut Value, request: &Request, model: &str, places: &Places<'_>) {
    let cache = &request.cache;
    if !openai_breakpoints(model) || cache.is_empty() {
        return;
    }
    let implicit = cache.automatic;
    let marks: CacheMarks = cache.limited(MAX_CACHE_MARKS - usize::from(implicit));
    let mut items: Vec<usize> = marks
        .messages
        .iter()
        .filter_map(|&i| places.ends.get(i).copied().flatten())
        .collect();
    if marks.system {
        items.extend(places.system);
    }
    for item in items {
        if let Some(item) = body[places.list].get_mut(item) {
            let kind = (places.text_type)(item);
            mark_item(item, kind);
        }
    }
    body["prompt_cache_options"] = json!({
        "mode": if implicit { "implicit" } else { "explicit" },
        "ttl": "30m",
    });
}

/// Puts a breakpoint on the last block of `item`'s content (or a function output's), turning
/// a bare string into one `kind` block; an item without content (a tool call) takes none.
fn mark_item(item: &mut Value, kind: &str) {
    let field = if item.get("content").is_some_and(|c| !c.is_null()) {
        "content"
    } else {
        "output"
    };
    let breakpoint = json!({"mode": "explicit"});
    match item.get_mut(field) {
        Some(Value::String(text)) => {
            let text = std::mem::take(text);
            item[field] =
                json!([{"type": kind, "text": text, "prompt_cache_breakpoint": breakpoint}]);
        }
        Some(Value::Array(blocks)) => {
            if let Some(Value::Object(last)) = blocks.last_mut() {
                last.insert("prompt_cache_breakpoint".to_owned(), breakpoint);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::CacheTtl;
    use pretty_assertions::assert_eq;

    fn places(ends: &[Option<usize>]) -> Places<'_> {
        Places {
            list: "messages",
            system: Some(0),
            ends,
            text_type: |_| "text",
        }
    }

    #[test]
    fn marks_go_on_the_last_block_and_only_gpt_5_6_takes_them() {
        let mut request = Request::new("gpt-5.6-terra").system("rules").user("a file");
        request.cache = CacheMarks {
            system: true,
            ttl: CacheTtl::OneHour,
            ..CacheMarks::default()
        };
        let body = json!({"messages": [
            {"role": "system", "content": "rules"},
            {"role": "user", "content": "a file"},
        ]});
        let ends = [Some(1)];
        let mut marked = body.clone();
        mark(&mut marked, &request, "gpt-5.6-terra", &places(&ends));
        assert_eq!(
            marked["messages"][0]["content"],
            json!([{"type": "text", "text": "rules", "prompt_cache_breakpoint": {"mode": "explicit"}}])
        );
        assert_eq!(marked["messages"][1], body["messages"][1]);
        assert_eq!(
            marked["prompt_cache_options"],
            json!({"mode": "explicit", "ttl": "30m"})
        );
        request.cache.automatic = true;
        request.cache.messages = vec![0];
        let mut marked = body.clone();
        mark(&mut marked, &request, "gpt-5.6-terra", &places(&ends));
        assert_eq!(marked["prompt_cache_options"]["mode"], "implicit");
        assert!(
            marked["messages"][1]["content"][0]
                .get("prompt_cache_breakpoint")
                .is_some()
        );
        let mut older = body.clone();
        mark(&mut older, &request, "gpt-5.4", &places(&ends));
        assert_eq!(older, body);
    }
}
