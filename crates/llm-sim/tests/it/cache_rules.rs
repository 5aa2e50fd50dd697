//! The cache rules of late 2026 in the simulator: one-hour writes, each model's minimum
//! cacheable prefix, and Anthropic's 20-block lookback; and the Anthropic client sending a
//! one-hour breakpoint that the fake service bills as one.

use std::sync::Arc;
use std::time::Duration;

use llm_core::{CacheMarks, CacheTtl, ContentBlock, LlmClient, Message, Request, Usage};
use llm_sim::{FakeServer, PromptCache, parse_strategy};
use pretty_assertions::assert_eq;

use crate::support::{anthropic, clock, http, openai, responses};

/// A request for `model` whose system prompt is about `tokens` tokens (llm-core's estimate),
/// marked after the system prompt and its one message.
fn marked(model: &str, tokens: usize, ttl: CacheTtl) -> Request {
    let mut request = Request::new(model)
        .system("cache me ".repeat(tokens / 2))
        .user("go");
    request.cache = CacheMarks {
        system: true,
        messages: vec![0],
        ttl,
        ..CacheMarks::default()
    };
    request
}

fn billed(cache: &mut PromptCache, request: &Request) -> Usage {
    let mut usage = Usage {
        input_tokens: llm_core::tokens::estimate_request(request),
        ..Usage::default()
    };
    cache.apply(request, &mut usage);
    usage
}

#[test]
fn a_one_hour_write_outlives_a_ten_minute_pause_and_a_five_minute_one_does_not() {
    for (ttl, read_after_pause) in [(CacheTtl::FiveMinutes, false), (CacheTtl::OneHour, true)] {
        let clock = clock();
        let mut cache = PromptCache::new(Arc::clone(&clock) as _);
        let request = marked("claude-sonnet-4-5", 3000, ttl);
        let first = billed(&mut cache, &request);
        assert!(first.cache_creation_input_tokens > 1024, "{first:?}");
        let one_hour = if ttl == CacheTtl::OneHour {
            first.cache_creation_input_tokens
        } else {
            0
        };
        assert_eq!(first.cache_creation_1h_input_tokens, one_hour);
        clock.advance(Duration::from_secs(10 * 60));
        let second = billed(&mut cache, &request);
        assert_eq!(
            second.cache_read_input_tokens > 0,
            read_after_pause,
            "{ttl:?}"
        );
    }
}

#[test]
fn a_prefix_below_the_model_s_minimum_is_not_cached() {
    // About 3,000 tokens: enough for Sonnet 4.5 (1,024) and 4.6 (2,048), not Opus 4.6 (4,096).
    for (model, cached) in [
        ("claude-sonnet-4-5", true),
        ("claude-sonnet-4-6", true),
        ("claude-opus-4-6", false),
    ] {
        let mut cache = PromptCache::new(clock() as _);
        let request = marked(model, 3000, CacheTtl::FiveMinutes);
        let first = billed(&mut cache, &request);
        let second = billed(&mut cache, &request);
        assert_eq!(
            (
                first.cache_creation_input_tokens > 0,
                second.cache_read_input_tokens > 0
            ),
            (cached, cached),
            "{model}"
        );
    }
}

/// A tool loop: the system prompt, then `calls` answers each with a tool result, the last
/// message marked (and, with `intermediate`, also the message `calls - 12` back).
fn tool_loop(calls: usize, intermediate: Option<usize>) -> Request {
    let mut request = Request::new("claude-sonnet-4-5")
        .system("cache me ".repeat(1500))
        .user("start");
    for i in 0..calls {
        let call = llm_core::ToolCall {
            id: format!("t{i}"),
            name: "read_file".into(),
            input: serde_json::json!({"path": format!("f{i}")}),
        };
        request.messages.push(Message {
            role: llm_core::Role::Assistant,
            content: vec![ContentBlock::ToolUse(call)],
        });
        request.messages.push(Message {
            role: llm_core::Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: format!("t{i}"),
                content: "x".repeat(200),
                is_error: false,
            }],
        });
    }
    let last = request.messages.len() - 1;
    request.cache = CacheMarks {
        system: true,
        messages: intermediate
            .map(|back| last - back)
            .into_iter()
            .chain([last])
            .collect(),
        ..CacheMarks::default()
    };
    request
}

#[test]
fn a_conversation_that_grew_past_twenty_blocks_reads_only_through_a_breakpoint_in_between() {
    // 12 more calls add 24 blocks: past the lookback from the last message's breakpoint.
    let mut cache = PromptCache::new(clock() as _);
    billed(&mut cache, &tool_loop(5, None));
    let grown = billed(&mut cache, &tool_loop(17, None));
    let system_only = grown.cache_read_input_tokens;
    let mut cache = PromptCache::new(clock() as _);
    billed(&mut cache, &tool_loop(5, None));
    let bridged = billed(&mut cache, &tool_loop(17, Some(16)));
    assert!(
        bridged.cache_read_input_tokens > system_only,
        "a breakpoint within 20 blocks of the old end reads it: {bridged:?} against {grown:?}"
    );
}

#[tokio::test]
async fn the_anthropic_client_sends_a_one_hour_breakpoint_that_the_service_bills_as_one() {
    let strategy = parse_strategy(
        "responses:\n  - content: one\n  - content: two\n",
        "ttl.yaml",
    )
    .expect("script parses");
    let server = FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server starts");
    let client = anthropic(&server.url(), http(&clock(), 0));
    let request = marked("claude-sonnet-4-5", 3000, CacheTtl::OneHour);
    let first = client.complete(&request).await.expect("answered");
    assert!(
        first.usage.cache_creation_1h_input_tokens > 1024,
        "{:?}",
        first.usage
    );
    assert_eq!(
        first.usage.cache_creation_1h_input_tokens,
        first.usage.cache_creation_input_tokens
    );
    assert_eq!(server.served()[0].request.cache.ttl, CacheTtl::OneHour);
    let second = client.complete(&request).await.expect("answered");
    assert!(
        second.usage.cache_read_input_tokens > 1024,
        "{:?}",
        second.usage
    );
}

#[tokio::test]
async fn a_prewarming_call_writes_the_prompt_answers_nothing_and_leaves_the_script_alone() {
    let strategy =
        parse_strategy("responses:\n  - content: one\n", "warm.yaml").expect("script parses");
    let server = FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server starts");
    let client = anthropic(&server.url(), http(&clock(), 0));
    let request = marked("claude-sonnet-4-5", 3000, CacheTtl::OneHour);
    let warmed = client
        .prewarm(&request)
        .await
        .expect("warmed")
        .expect("Anthropic pre-warms");
    assert!(warmed.cache_creation_1h_input_tokens > 1024, "{warmed:?}");
    assert_eq!(warmed.output_tokens, 0);
    // The script's first answer is still the first one given, and reads what was warmed.
    let answer = client.complete(&request).await.expect("answered");
    assert_eq!(answer.text(), "one");
    assert!(
        answer.usage.cache_read_input_tokens > 1024,
        "{:?}",
        answer.usage
    );
    assert_eq!(
        server.served().len(),
        1,
        "the pre-warming call takes no number"
    );
    assert_eq!(client.usage_stats().requests, 2);

    // The in-process simulator does the same; a provider without the call says so.
    let simulated = llm_sim::SimulatedClient::scripted(
        llm_sim::Script::parse("responses:\n  - content: one\n", "warm.yaml").expect("script"),
    );
    let warmed = simulated
        .prewarm(&request)
        .await
        .expect("warmed")
        .expect("usage");
    assert!(warmed.cache_creation_input_tokens > 1024, "{warmed:?}");
    let answer = simulated.complete(&request).await.expect("answered");
    assert_eq!(answer.text(), "one");
    assert!(
        answer.usage.cache_read_input_tokens > 1024,
        "{:?}",
        answer.usage
    );
    let openai = crate::support::openai(&server.url(), http(&clock(), 0));
    assert_eq!(openai.prewarm(&request).await.expect("no call"), None);
}

#[test]
fn gpt_5_6_writes_at_the_end_of_each_request_and_keeps_it_thirty_minutes() {
    let clock = clock();
    let mut cache = PromptCache::new(Arc::clone(&clock) as _);
    let conversation = |turns: usize| {
        let mut request = Request::new("gpt-5.6-terra").system("cache me ".repeat(1500));
        for turn in 0..turns {
            request = request.user(format!("question {turn}"));
            request
                .messages
                .push(Message::assistant(format!("answer {turn}")));
        }
        request.cache_key = Some("conversation".into());
        request
    };
    let first = billed(&mut cache, &conversation(1));
    assert!(
        first.cache_creation_input_tokens > 1024,
        "paid writes: {first:?}"
    );
    // Twenty minutes on, the next request reads all of the first and writes what it added.
    clock.advance(Duration::from_secs(20 * 60));
    let second = billed(&mut cache, &conversation(2));
    assert!(
        second.cache_read_input_tokens >= first.cache_creation_input_tokens,
        "{second:?}"
    );
    assert!(second.cache_creation_input_tokens > 0, "{second:?}");
    // Thirty minutes after its last use, nothing is left.
    clock.advance(Duration::from_secs(31 * 60));
    let third = billed(&mut cache, &conversation(2));
    assert_eq!(third.cache_read_input_tokens, 0, "{third:?}");
}

/// Two calls sharing a long system prompt, each with its own long message (as `generate`'s
/// calls share the run's prefix and differ by file), the system prompt marked.
fn shared_prefix(model: &str, tail: &str, automatic: bool) -> Request {
    let mut request = Request::new(model)
        .system("shared instructions ".repeat(1500))
        .user(format!("{tail} ").repeat(1500));
    request.cache = CacheMarks {
        system: true,
        automatic,
        ..CacheMarks::default()
    };
    request
}

#[tokio::test]
async fn gpt_5_6_explicit_breakpoints_write_only_the_marked_prefix_in_both_apis() {
    for connect in [openai as Connect, responses] {
        for automatic in [false, true] {
            let strategy = parse_strategy(
                "responses:\n  - content: one\n  - content: two\n",
                "breakpoints.yaml",
            )
            .expect("script parses");
            let server = FakeServer::start("127.0.0.1:0", strategy)
                .await
                .expect("server starts");
            let client = connect(&server.url(), http(&clock(), 0));
            let first = client
                .complete(&shared_prefix("gpt-5.6-terra", "alpha", automatic))
                .await
                .expect("answered")
                .usage;
            let second = client
                .complete(&shared_prefix("gpt-5.6-terra", "omega", automatic))
                .await
                .expect("answered")
                .usage;
            // The server read the marks back as they were sent.
            let served = &server.served()[0].request;
            assert!(served.cache.system, "{:?}", served.cache);
            assert_eq!(served.cache.automatic, automatic);
            // Explicit: the prefix alone is written and the file stays uncached input;
            // implicit: the whole request is written too. The second call reads the prefix
            // either way, and writes again only with the implicit breakpoint.
            let whole = first.total_input();
            if automatic {
                assert_eq!(first.cache_creation_input_tokens, whole, "{first:?}");
            } else {
                assert!(first.input_tokens > 1000, "{first:?}");
                assert_eq!(
                    first.cache_creation_input_tokens + first.input_tokens,
                    whole
                );
            }
            let prefix = second.cache_read_input_tokens;
            assert!(prefix > 4000 && prefix < whole, "{second:?}");
            if automatic {
                assert_eq!(second.input_tokens, 0, "{second:?}");
            } else {
                assert_eq!(first.cache_creation_input_tokens, prefix, "{first:?}");
                assert_eq!(second.cache_creation_input_tokens, 0, "{second:?}");
            }
            assert_eq!(second.cache_creation_1h_input_tokens, 0);
        }
    }
}

#[tokio::test]
async fn anthropic_automatic_caching_writes_the_end_and_the_next_turn_reads_it() {
    let strategy = parse_strategy(
        "responses:\n  - content: one\n  - content: two\n",
        "automatic.yaml",
    )
    .expect("script parses");
    let server = FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server starts");
    let client = anthropic(&server.url(), http(&clock(), 0));
    let mut request = Request::new("claude-sonnet-4-5")
        .system("rules ".repeat(2000))
        .user("first question");
    request.cache.automatic = true;
    let first = client.complete(&request).await.expect("answered");
    assert_eq!(
        first.usage.cache_creation_input_tokens,
        first.usage.total_input(),
        "{:?}",
        first.usage
    );
    let served = &server.served()[0].request;
    assert!(served.cache.automatic && served.cache.is_empty());
    let written = first.usage.total_input();
    request.messages.push(first.into_message());
    request.messages.push(Message::user("second question"));
    let second = client.complete(&request).await.expect("answered");
    assert_eq!(
        second.usage.cache_read_input_tokens, written,
        "the breakpoint moved forward and found the first turn: {:?}",
        second.usage
    );
}

type Connect = fn(&str, llm_core::HttpConfig) -> Arc<dyn LlmClient>;
