//! Prompt caching: breakpoints sent by llm-core's providers, read back by the fake server, and
//! billed as the providers bill them (written, then read within five minutes, then gone).

use std::sync::Arc;
use std::time::Duration;

use llm_core::{CacheMarks, CacheTtl, LlmClient, Message, Request, Role, Usage};
use llm_sim::{Api, FakeServer, PromptCache, SimulatedClient, parse_strategy};
use pretty_assertions::assert_eq;

use crate::support::{anthropic, clock, http, openai, tool};

/// A system prompt of a few thousand tokens: above the shortest prefix a provider caches.
fn long_system() -> String {
    "You are a careful coding agent working in a large repository. ".repeat(300)
}

/// A conversation of `turns` user messages (and the answers between them), every prefix
/// marked as the agent marks it: the tools, the system prompt and the last message.
fn conversation(turns: usize) -> Request {
    let mut request = Request::new("claude-test").system(long_system());
    request.tools.push(tool("read_file"));
    for turn in 0..turns {
        if turn > 0 {
            request
                .messages
                .push(Message::assistant(format!("answer {turn}")));
        }
        request.messages.push(Message::user(format!(
            "step {turn}: {}",
            "context ".repeat(200)
        )));
    }
    request.cache = CacheMarks {
        tools: true,
        system: true,
        messages: vec![request.messages.len() - 1],
        ..CacheMarks::default()
    };
    request
}

fn usage(input: u64) -> Usage {
    Usage {
        input_tokens: input,
        output_tokens: 10,
        ..Usage::default()
    }
}

#[test]
fn a_prefix_is_written_then_read_within_five_minutes_and_then_gone() {
    let clock = clock();
    let mut cache = PromptCache::new(Arc::clone(&clock) as _);
    let first = conversation(1);
    let total = llm_core::tokens::estimate_request(&first);
    let mut u = usage(total);
    cache.apply(&first, &mut u);
    assert_eq!(u.cache_read_input_tokens, 0);
    assert!(u.cache_creation_input_tokens > 1024, "{u:?}");
    assert_eq!(
        u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
        total,
        "the parts add up to the whole"
    );

    // The next turn reads the first turn's prefix (marked at the previous last message too,
    // as the agent marks it) and writes only what was added.
    let mut second = conversation(2);
    second.cache.messages = vec![0, second.messages.len() - 1];
    let total2 = llm_core::tokens::estimate_request(&second);
    let mut u = usage(total2);
    clock.advance(Duration::from_secs(60));
    cache.apply(&second, &mut u);
    assert!(u.cache_read_input_tokens >= 1024, "{u:?}");
    assert!(
        u.cache_creation_input_tokens < u.cache_read_input_tokens,
        "{u:?}"
    );
    assert_eq!(
        u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
        total2
    );

    // Past five minutes without a read, nothing is left.
    clock.advance(CacheTtl::FiveMinutes.duration() + Duration::from_secs(1));
    assert!(cache.is_empty());
    let mut u = usage(total2);
    cache.apply(&second, &mut u);
    assert_eq!(u.cache_read_input_tokens, 0, "{u:?}");

    // A request without breakpoints or a key is billed as it came.
    let mut plain = conversation(1);
    plain.cache = CacheMarks::default();
    let mut u = usage(total);
    cache.apply(&plain, &mut u);
    assert_eq!(u, usage(total));
}

#[test]
fn short_prefixes_are_not_cached_and_at_most_four_marks_count() {
    let mut cache = PromptCache::default();
    let mut short = Request::new("claude-test").system("be brief").user("hi");
    short.cache = CacheMarks {
        tools: false,
        system: true,
        messages: vec![0],
        ..CacheMarks::default()
    };
    for _ in 0..2 {
        let mut u = usage(20);
        cache.apply(&short, &mut u);
        assert_eq!(u, usage(20), "under the minimum, nothing is cached");
    }
    let marks = CacheMarks {
        tools: true,
        system: true,
        messages: vec![4, 1, 3, 1],
        ..CacheMarks::default()
    };
    assert_eq!(
        marks.limited(4),
        CacheMarks {
            tools: false,
            system: true,
            messages: vec![1, 3, 4],
            ..CacheMarks::default()
        },
        "the earliest marks go first"
    );
    assert_eq!(marks.limited(4).len(), 4);
}

#[tokio::test]
async fn anthropic_breakpoints_reach_the_fake_server_and_its_usage_shows_reads() {
    let steps = "responses:\n  - content: one\n  - content: two\n  - content: three\n";
    let strategy = parse_strategy(steps, "cache.yaml").expect("script");
    let server = FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server");
    let clock = clock();
    let client = anthropic(&server.url(), http(&clock, 0));
    let mut reads = Vec::new();
    for turns in 1..=3 {
        let mut request = conversation(turns);
        // Up to six marks asked for: the client sends the latest four.
        request.cache.messages = (0..request.messages.len()).collect();
        request.cache.messages.truncate(4);
        let answer = client.complete(&request).await.expect("answer");
        reads.push(answer.usage.cache_read_input_tokens);
    }
    assert_eq!(reads[0], 0);
    assert!(reads[1] > 1024 && reads[2] > reads[1], "{reads:?}");
    for served in server.served() {
        assert_eq!(served.api, Api::Anthropic);
        assert!(
            served.request.cache.len() <= 4,
            "{:?}",
            served.request.cache
        );
    }
    // The last request asked for tools, system and four messages: the latest four went.
    let last = server.served().pop().expect("served").request;
    assert_eq!(last.cache.messages, [0, 1, 2, 3]);
    assert!(!last.cache.system && !last.cache.tools);
}

#[tokio::test]
async fn an_openai_cache_key_is_sent_and_a_repeated_prefix_is_read() {
    let steps = "responses:\n  - content: one\n  - content: two\n";
    let strategy = parse_strategy(steps, "cache.yaml").expect("script");
    let server = FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server");
    let clock = clock();
    let client = openai(&server.url(), http(&clock, 0));
    let mut usages = Vec::new();
    for turns in 1..=2 {
        let mut request = conversation(turns);
        request.cache = CacheMarks::default();
        request.cache_key = Some("conversation-1".into());
        usages.push(client.complete(&request).await.expect("answer").usage);
    }
    assert_eq!(usages[0].cache_read_input_tokens, 0);
    assert!(usages[1].cache_read_input_tokens > 1024, "{usages:?}");
    assert_eq!(
        usages[1].cache_creation_input_tokens, 0,
        "OpenAI bills no write"
    );
    for served in server.served() {
        assert_eq!(served.request.cache_key.as_deref(), Some("conversation-1"));
    }
}

#[tokio::test]
async fn the_simulated_client_bills_as_the_server_does() {
    let client = SimulatedClient::fixed().with_cache_clock(clock() as _);
    let first = client.complete(&conversation(1)).await.expect("answer");
    let mut second = conversation(2);
    second.cache.messages = vec![0, second.messages.len() - 1];
    let second = client.complete(&second).await.expect("answer");
    assert!(first.usage.cache_creation_input_tokens > 1024);
    assert_eq!(first.usage.cache_read_input_tokens, 0);
    assert!(second.usage.cache_read_input_tokens >= first.usage.cache_creation_input_tokens);
    assert_eq!(Role::User, client.history()[1].request.messages[2].role);
}
