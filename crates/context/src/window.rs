//! Which messages of a conversation fit a model's context window: a pure function over the
//! caller's own message type.
//!
//! [`select_messages`] keeps the newest messages whose estimated tokens fit a budget. The
//! conversation stays contiguous (a suffix), and a tool call is never separated from its
//! result: a provider rejects a tool result whose call it has not seen, so when the cut would
//! fall between a call and its result, the result is dropped too.
//!
//! The crate knows nothing of LLM message formats. The caller describes its messages through
//! an [`Estimator`]: the tokens of each one and the tool-call ids it opens and answers. A plain
//! closure `Fn(&M) -> u64` is an estimator for messages without tool calls. The estimator is
//! injected rather than imported so that selection and compaction share whatever estimate the
//! agent uses, and so that this stays a function of its inputs alone: no IO, no clock.

use std::collections::HashMap;

/// What selection needs to know about one message of type `M`.
pub trait Estimator<M> {
    /// The estimated tokens of `message` as the model will see it.
    fn tokens(&mut self, message: &M) -> u64;

    /// Calls `found` with the id of every tool call that `message` makes.
    fn tool_uses<'m>(&self, message: &'m M, found: &mut dyn FnMut(&'m str)) {
        let _ = (message, found);
    }

    /// Calls `found` with the id of every tool call that `message` answers.
    fn tool_results<'m>(&self, message: &'m M, found: &mut dyn FnMut(&'m str)) {
        let _ = (message, found);
    }
}

impl<M, F: FnMut(&M) -> u64> Estimator<M> for F {
    fn tokens(&mut self, message: &M) -> u64 {
        self(message)
    }
}

/// The messages that fit, and what had to be left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Selection<'a, M> {
    /// The newest messages that fit, oldest first: always a suffix of the input.
    pub selected: &'a [M],
    /// Estimated tokens of `selected`.
    pub tokens: u64,
    /// `None` when every message fits.
    pub overflow: Option<Overflow>,
}

/// What [`select_messages`] left out: always the oldest messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overflow {
    /// How many messages were dropped; they are the first `dropped` of the input.
    pub dropped: usize,
    /// Their estimated tokens, summed.
    pub dropped_tokens: u64,
}

/// Keeps the newest `messages` whose estimated tokens fit `budget`, never keeping a tool
/// result without the message that made its call.
///
/// If even the newest message does not fit, nothing is selected and every message is
/// reported as dropped; deciding what to do then (compacting, refusing) is the caller's.
/// Tool results whose call is not in `messages` at all impose nothing. Calls
/// `estimate.tokens` once per message; the tool-call pairing looks only at the kept suffix
/// and back from it to the calls it answers, so a long conversation of which little fits
/// costs little more than estimating it.
pub fn select_messages<M>(
    messages: &[M],
    budget: u64,
    mut estimate: impl Estimator<M>,
) -> Selection<'_, M> {
    let fit = fit(messages, budget, &mut estimate);
    if fit.cut == 0 {
        return Selection {
            selected: messages,
            tokens: fit.kept,
            overflow: None,
        };
    }
    let dropped_tokens = messages[..fit.start.saturating_sub(1)]
        .iter()
        .map(|m| estimate.tokens(m))
        .fold(fit.first_and_moved, u64::saturating_add);
    Selection {
        selected: &messages[fit.cut..],
        tokens: fit.kept,
        overflow: Some(Overflow {
            dropped: fit.cut,
            dropped_tokens,
        }),
    }
}

/// Where [`select_messages`] cuts, without the dropped messages' tokens: how many of the oldest
/// messages are left out, and the estimated tokens of the rest. The same cut, but it estimates
/// only the newest messages up to the budget, so it costs the same for a conversation of ten
/// thousand messages as for one of a hundred: the hot path of an agent's every model call.
pub fn newest_that_fit<M>(
    messages: &[M],
    budget: u64,
    mut estimate: impl Estimator<M>,
) -> (usize, u64) {
    let fit = fit(messages, budget, &mut estimate);
    (fit.cut, fit.kept)
}

/// A cut, and what [`select_messages`] needs to report what it dropped.
struct Fit {
    /// The first kept message.
    cut: usize,
    /// Tokens of `messages[cut..]`.
    kept: u64,
    /// The first message that fit the budget before pairs were kept whole.
    start: usize,
    /// Tokens of `messages[start - 1]` (the first that did not fit) and of the messages moved
    /// out to keep pairs whole.
    first_and_moved: u64,
}

fn fit<M>(messages: &[M], budget: u64, estimate: &mut impl Estimator<M>) -> Fit {
    // The smallest start whose suffix fits, found from the newest message back: suffix sums
    // only grow as the start moves back. `tail[i]` holds the tokens of `messages[start + i]`.
    let mut start = messages.len();
    let mut kept: u64 = 0;
    let mut tail = Vec::new();
    let mut first_dropped = 0;
    while start > 0 {
        let tokens = estimate.tokens(&messages[start - 1]);
        let with_previous = kept.saturating_add(tokens);
        if with_previous > budget {
            first_dropped = tokens;
            break;
        }
        tail.push(tokens);
        kept = with_previous;
        start -= 1;
    }
    if start == 0 {
        return Fit {
            cut: 0,
            kept,
            start: 0,
            first_and_moved: 0,
        };
    }
    tail.reverse();

    // A cut at `start` splits a pair when a dropped message made a call that a kept message
    // answers. Moving the cut forward drops the answer too, but the answer's own message may
    // make further calls (or sit between a call and a later answer), so the cut moves until
    // no dropped call reaches past it: `reach[i]` is the last message answering a call of
    // `messages[start + i]`, and `earlier` maps each id answered in the suffix before the
    // suffix calls it to its last answer there: its call, if any, was dropped.
    let mut reach = vec![0usize; messages.len() - start];
    let mut calls: HashMap<&str, usize> = HashMap::new();
    let mut earlier: HashMap<&str, usize> = HashMap::new();
    for (index, message) in messages.iter().enumerate().skip(start) {
        estimate.tool_results(message, &mut |id| match calls.get(id) {
            Some(&call) => reach[call - start] = index,
            None => {
                earlier.insert(id, index);
            }
        });
        estimate.tool_uses(message, &mut |id| {
            calls.insert(id, index);
        });
    }
    // The newest dropped call with such an id is the one answered; stop once all are found.
    let mut furthest = 0;
    let mut index = start;
    while !earlier.is_empty() && index > 0 {
        index -= 1;
        estimate.tool_uses(&messages[index], &mut |id| {
            if let Some(answer) = earlier.remove(id) {
                furthest = furthest.max(answer);
            }
        });
    }
    let mut cut = start;
    while furthest >= cut {
        furthest = furthest.max(reach[cut - start]);
        cut += 1;
    }
    let moved: u64 = tail[..cut - start].iter().sum();
    Fit {
        cut,
        kept: kept - moved,
        start,
        first_and_moved: first_dropped.saturating_add(moved),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message for tests: its tokens, the calls it makes, the calls it answers.
    struct Msg {
        tokens: u64,
        uses: &'static [&'static str],
        results: &'static [&'static str],
    }

    struct Shape;

    impl Estimator<Msg> for Shape {
        fn tokens(&mut self, message: &Msg) -> u64 {
            message.tokens
        }
        fn tool_uses<'m>(&self, message: &'m Msg, found: &mut dyn FnMut(&'m str)) {
            message.uses.iter().for_each(|id| found(id));
        }
        fn tool_results<'m>(&self, message: &'m Msg, found: &mut dyn FnMut(&'m str)) {
            message.results.iter().for_each(|id| found(id));
        }
    }

    fn text(tokens: u64) -> Msg {
        Msg {
            tokens,
            uses: &[],
            results: &[],
        }
    }

    fn call(tokens: u64, uses: &'static [&'static str]) -> Msg {
        Msg {
            tokens,
            uses,
            results: &[],
        }
    }

    fn answer(tokens: u64, results: &'static [&'static str]) -> Msg {
        Msg {
            tokens,
            uses: &[],
            results,
        }
    }

    /// Selects from `messages` and compares (selected count, tokens, overflow).
    fn check(messages: &[Msg], budget: u64, expected: (usize, u64, Option<(usize, u64)>)) {
        let selection = select_messages(messages, budget, Shape);
        let overflow = selection.overflow.map(|o| (o.dropped, o.dropped_tokens));
        assert_eq!(
            newest_that_fit(messages, budget, Shape),
            (messages.len() - selection.selected.len(), selection.tokens)
        );
        assert_eq!(
            (selection.selected.len(), selection.tokens, overflow),
            expected
        );
        assert!(std::ptr::eq(
            selection.selected.as_ptr_range().end,
            messages.as_ptr_range().end
        ));
    }

    #[test]
    fn everything_fits() {
        check(&[text(10), text(20)], 30, (2, 30, None));
        check(&[], 0, (0, 0, None));
    }

    #[test]
    fn keeps_the_newest_that_fit() {
        check(&[text(10), text(20), text(5)], 25, (2, 25, Some((1, 10))));
        check(&[text(10), text(20), text(5)], 24, (1, 5, Some((2, 30))));
    }

    #[test]
    fn a_newest_message_too_big_drops_everything() {
        check(&[text(1), text(50)], 10, (0, 0, Some((2, 51))));
    }

    #[test]
    fn never_keeps_a_result_without_its_call() {
        // The budget would cut between the call and its result: the result goes too.
        let messages = [text(10), call(10, &["a"]), answer(10, &["a"]), text(10)];
        check(&messages, 25, (1, 10, Some((3, 30))));
        check(&messages, 30, (3, 30, Some((1, 10))));
    }

    #[test]
    fn a_call_with_results_in_later_messages_stays_whole() {
        // One call message answered across two result messages (a crash-repaired transcript).
        let messages = [
            call(10, &["a", "b"]),
            answer(10, &["a"]),
            answer(10, &["b"]),
            text(1),
        ];
        check(&messages, 25, (1, 1, Some((3, 30))));
    }

    #[test]
    fn dropping_an_answer_drops_what_it_was_paired_with_too() {
        // Moving the cut past the answer to "a" drops the call "b", whose answer follows.
        let messages = [
            call(10, &["a"]),
            call(10, &["b"]),
            answer(10, &["a"]),
            answer(10, &["b"]),
            text(1),
        ];
        check(&messages, 31, (1, 1, Some((4, 40))));
    }

    #[test]
    fn results_without_a_call_impose_nothing() {
        check(&[answer(10, &["gone"]), text(10)], 20, (2, 20, None));
        check(
            &[text(10), answer(10, &["gone"]), text(10)],
            20,
            (2, 20, Some((1, 10))),
        );
    }

    #[test]
    fn a_plain_closure_is_an_estimator() {
        let lengths = ["aaaa", "bb", "c"];
        let selection = select_messages(&lengths, 3, |m: &&str| m.len() as u64);
        assert_eq!(selection.selected, &["bb", "c"]);
        assert_eq!(
            selection.overflow,
            Some(Overflow {
                dropped: 1,
                dropped_tokens: 4
            })
        );
    }
}
