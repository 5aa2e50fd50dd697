//! Tool results within a client's budget: every MCP tool takes `max_tokens` (default
//! [`DEFAULT_MAX_TOKENS`], below the 25,000 at which Claude Code cuts a tool's output) and a
//! `cursor`, and an answer that would pass the budget is cut at a clean boundary.
//!
//! Tokens are estimated at 4 bytes each, of the answer's text as sent. A list answer (the
//! array of `search` or `related`, the `frames` of `get_node` and `list_frames`, the `files` of
//! `context`) keeps whole items: as many as fit, from the cursor's, the document otherwise
//! unchanged, so it stays the JSON of `merkle --json`. Any other answer, or one item larger
//! than the whole budget, is cut after a whole line. Either way a second content block says
//! what was left out and gives the cursor that continues it.
use serde_json::Value;

/// The budget of a tool call that names none.
pub(crate) const DEFAULT_MAX_TOKENS: u64 = 20_000;

/// Bytes per token, as the estimate goes.
const BYTES_PER_TOKEN: u64 = 4;

/// Where a cut answer continues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cursor {
    /// From this item of the answer's list.
    Item(usize),
    /// From this line of the answer's text.
    Line(usize),
}

impl Cursor {
    pub(crate) fn parse(text: &str) -> Result<Cursor, String> {
        let bad = || {
            format!(
                "invalid cursor {text:?}: pass back the cursor a cut answer gave, with the same \
                 arguments"
            )
        };
        let (kind, n) = text.split_once(':').ok_or_else(bad)?;
        let n: usize = n.parse().map_err(|_| bad())?;
        match kind {
            "item" => Ok(Cursor::Item(n)),
            "line" => Ok(Cursor::Line(n)),
            _ => Err(bad()),
        }
    }

    fn render(self) -> String {
        match self {
            Cursor::Item(n) => format!("item:{n}"),
            Cursor::Line(n) => format!("line:{n}"),
        }
    }
}

/// The budget arguments of a call, taken out of its arguments (which the tool then reads
/// without them).
pub(crate) fn take(args: &mut Value) -> Result<(u64, Option<Cursor>), String> {
    let Some(object) = args.as_object_mut() else {
        return Ok((DEFAULT_MAX_TOKENS, None));
    };
    let max_tokens = match object.remove("max_tokens") {
        None | Some(Value::Null) => DEFAULT_MAX_TOKENS,
        Some(v) => v.as_u64().filter(|n| *n >= 1).ok_or_else(|| {
            format!("max_tokens {v}: expected a whole number of tokens, 1 or more")
        })?,
    };
    let cursor = match object.remove("cursor") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(Cursor::parse(&s)?),
        Some(v) => return Err(format!("cursor {v}: expected the string a cut answer gave")),
    };
    Ok((max_tokens, cursor))
}

/// The properties every tool's input schema gains.
pub(crate) fn schema_properties() -> [(String, Value); 2] {
    [
        (
            "max_tokens".to_owned(),
            serde_json::json!({
                "type": "integer",
                "minimum": 1,
                "description": format!(
                    "The most tokens the answer may take (estimated at 4 bytes each) \
                     [default: {DEFAULT_MAX_TOKENS}]; a longer one is cut at a whole item or \
                     line and says how to continue"
                ),
            }),
        ),
        (
            "cursor".to_owned(),
            serde_json::json!({
                "type": "string",
                "description": "Where to continue a cut answer: the cursor it gave, with the \
                                same other arguments",
            }),
        ),
    ]
}

/// `text`, a tool's answer, within `max_tokens` from `cursor`: the text to send, and the note
/// that says what was left out when something was.
pub(crate) fn fit(
    text: &str,
    max_tokens: u64,
    cursor: Option<Cursor>,
) -> Result<(String, Option<String>), String> {
    let budget = usize::try_from(max_tokens.saturating_mul(BYTES_PER_TOKEN)).unwrap_or(usize::MAX);
    match cursor {
        None | Some(Cursor::Item(_)) => {
            let start = match cursor {
                Some(Cursor::Item(n)) => n,
                _ => 0,
            };
            if let Ok(doc) = serde_json::from_str::<Value>(text)
                && list(&doc).is_some()
            {
                if let Some(fitted) = fit_items(&doc, budget, start)? {
                    return Ok(fitted);
                }
            } else if start > 0 {
                return Err("an item cursor continues a list answer, and this one is none".into());
            }
            if text.len() <= budget {
                return Ok((text.to_owned(), None));
            }
            Ok(fit_lines(text, budget, 0))
        }
        Some(Cursor::Line(n)) => Ok(fit_lines(text, budget, n)),
    }
}

/// The list of a list answer: the document itself when it is an array, else its `frames` or
/// `files`.
fn list(doc: &Value) -> Option<&Vec<Value>> {
    match doc {
        Value::Array(items) => Some(items),
        Value::Object(o) => ["frames", "files"]
            .iter()
            .find_map(|k| o.get(*k).and_then(Value::as_array)),
        _ => None,
    }
}

fn with_items(doc: &Value, items: &[Value]) -> Value {
    match doc {
        Value::Array(_) => Value::Array(items.to_vec()),
        Value::Object(o) => {
            let mut o = o.clone();
            for k in ["frames", "files"] {
                if o.get(k).is_some_and(Value::is_array) {
                    o.insert(k.to_owned(), Value::Array(items.to_vec()));
                    break;
                }
            }
            Value::Object(o)
        }
        other => other.clone(),
    }
}

fn pretty(doc: &Value) -> String {
    serde_json::to_string_pretty(doc).expect("a serde_json::Value always serializes")
}

/// Whole items from `start` while they fit; `None` when not even one does (the caller cuts
/// lines instead).
fn fit_items(
    doc: &Value,
    budget: usize,
    start: usize,
) -> Result<Option<(String, Option<String>)>, String> {
    let items = list(doc).expect("a list answer");
    if start > items.len() {
        return Err(format!(
            "the cursor item:{start} is past the answer's {} items",
            items.len()
        ));
    }
    let rest = &items[start..];
    let whole = pretty(&with_items(doc, rest));
    if whole.len() <= budget {
        let note = (start > 0).then(|| {
            format!(
                "merkle: items {start} to {} of {} (the rest of a cut answer); nothing more left \
                 out.",
                items.len().saturating_sub(1),
                items.len()
            )
        });
        return Ok(Some((whole, note)));
    }
    // The most items that fit, by bisection on the count (the text grows with it).
    let (mut lo, mut hi) = (0, rest.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if pretty(&with_items(doc, &rest[..mid])).len() <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 && start == 0 {
        return Ok(None);
    }
    if lo == 0 {
        // Past the first page, an item larger than the whole budget goes whole, said so.
        let note = format!(
            "merkle: item {start} of {} is larger than max_tokens by itself and is above whole; \
             call again with the same arguments and cursor \"{}\" for the rest.",
            items.len(),
            Cursor::Item(start + 1).render()
        );
        return Ok(Some((pretty(&with_items(doc, &rest[..1])), Some(note))));
    }
    let end = start + lo;
    let note = format!(
        "merkle: the answer was cut to fit max_tokens (about {} tokens at 4 bytes each): items \
         {start} to {} of {} are above; {} left out. Call again with the same arguments and \
         cursor \"{}\" for the rest.",
        budget / 4,
        end - 1,
        items.len(),
        items.len() - end,
        Cursor::Item(end).render()
    );
    Ok(Some((pretty(&with_items(doc, &rest[..lo])), Some(note))))
}

/// Whole lines of `text` from line `start` while they fit (at least one, cut at a character
/// if it alone does not).
fn fit_lines(text: &str, budget: usize, start: usize) -> (String, Option<String>) {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut out = String::new();
    let mut next = start;
    for line in lines.iter().skip(start) {
        if out.len() + line.len() > budget {
            break;
        }
        out.push_str(line);
        next += 1;
    }
    if next == start
        && let Some(line) = lines.get(start)
    {
        // One line longer than the budget: its head, at a character boundary.
        out.push_str(&line[..line.floor_char_boundary(budget)]);
        next += 1;
    }
    let note = if next < lines.len() {
        Some(format!(
            "merkle: the answer was cut to fit max_tokens (about {} tokens at 4 bytes each) after \
             a whole line: lines {start} to {} of {} are above (not a whole JSON document); call \
             again with the same arguments and cursor \"{}\" for the rest.",
            budget / 4,
            next.saturating_sub(1),
            lines.len(),
            Cursor::Line(next).render()
        ))
    } else if start > 0 {
        Some(format!(
            "merkle: lines {start} to {} of {} (the rest of a cut answer); nothing more left out.",
            lines.len().saturating_sub(1),
            lines.len()
        ))
    } else {
        None
    };
    (out, note)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_list_is_cut_at_whole_items_and_the_cursor_continues_it() {
        let hits: Vec<Value> = (0..50)
            .map(|i| json!({"path": format!("src/file_{i}.rs"), "score": i}))
            .collect();
        let text = pretty(&Value::Array(hits.clone()));
        let (first, note) = fit(&text, 200, None).expect("fit");
        assert!(first.len() <= 800);
        let shown: Vec<Value> = serde_json::from_str(&first).expect("whole JSON");
        assert!(!shown.is_empty() && shown.len() < 50);
        let note = note.expect("a note");
        let cursor = note.split('"').nth(1).expect("a cursor");
        let mut all = shown;
        let mut cursor = Some(Cursor::parse(cursor).expect("cursor"));
        while let Some(c) = cursor {
            let (more, note) = fit(&text, 200, Some(c)).expect("fit");
            all.extend(serde_json::from_str::<Vec<Value>>(&more).expect("whole JSON"));
            cursor = note.filter(|n| n.contains("cursor")).and_then(|n| {
                n.split('"')
                    .nth(1)
                    .map(|c| Cursor::parse(c).expect("cursor"))
            });
        }
        assert_eq!(all, hits, "every item once, in order");
        // Small enough: as it was, no note.
        assert_eq!(fit(&text, 100_000, None).expect("fit"), (text, None));
    }

    #[test]
    fn frames_are_cut_whole_and_a_giant_item_by_lines() {
        let doc = json!({
            "node": {"path": "a.rs"},
            "frames": [{"content": "one"}, {"content": "two"}, {"content": "x\n".repeat(2000)}],
        });
        let text = pretty(&doc);
        let (first, note) = fit(&text, 30, None).expect("fit");
        let shown: Value = serde_json::from_str(&first).expect("whole JSON");
        assert_eq!(shown["node"]["path"], "a.rs");
        assert!(shown["frames"].as_array().is_some_and(|f| !f.is_empty()));
        assert!(note.is_some());
        // Nothing fits whole: whole lines, continued by line.
        let (cut, note) = fit(&text, 5, None).expect("fit");
        assert!(cut.len() <= 20 && cut.ends_with('\n'), "{cut:?}");
        assert!(note.expect("note").contains("line:"));
        assert!(Cursor::parse("item:x").is_err() && Cursor::parse("page:2").is_err());
        let mut args = json!({"path": "a", "max_tokens": 0});
        assert!(take(&mut args).is_err());
        let mut args = json!({"path": "a", "max_tokens": 9, "cursor": "item:3"});
        assert_eq!(take(&mut args), Ok((9, Some(Cursor::Item(3)))));
        assert_eq!(args, json!({"path": "a"}));
    }
}
