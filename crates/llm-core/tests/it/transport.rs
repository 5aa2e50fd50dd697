//! Retries, backoff, rate limiting and metrics, with a manual clock so nothing sleeps.

use std::time::{Duration, SystemTime};

use llm_core::retry::parse_retry_after;
use llm_core::{
    Error, ErrorKind, LlmClient, ManualClock, RateLimit, RateLimiter, Request, RetryHints,
    RetryPolicy, SplitMix64, TimeoutPhase,
};
use pretty_assertions::assert_eq;

use crate::server::{Reply, TestServer};
use crate::support::{anthropic, clock, epoch, openai};

const OK: &str = r#"{"id":"m","model":"claude-test","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}"#;
const RATE_LIMITED: &str =
    r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#;
const OVERLOADED: &str =
    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;

fn hi() -> Request {
    Request::new("claude-test").user("hi")
}

#[tokio::test]
async fn rate_limited_429_waits_as_retry_after_says_then_succeeds() {
    let server = TestServer::start(vec![
        Reply::json(429, RATE_LIMITED).header("retry-after", "3"),
        Reply::json(429, RATE_LIMITED).header("retry-after-ms", "1500"),
        Reply::json(200, OK),
    ])
    .await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let response = client
        .complete(&hi())
        .await
        .expect("third attempt succeeds");

    assert_eq!(response.text(), "ok");
    assert_eq!(
        clock.sleeps(),
        vec![Duration::from_secs(3), Duration::from_millis(1500)]
    );
    let stats = client.usage_stats();
    assert_eq!(
        (stats.requests, stats.retries, stats.failed_requests),
        (1, 2, 0)
    );
    assert_eq!(stats.errors.get(&ErrorKind::RateLimited), Some(&2));
}

#[tokio::test]
async fn quota_exhausted_429_is_never_retried() {
    let body = r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}"#;
    let server = TestServer::start(vec![
        Reply::json(429, body)
            .header("retry-after", "1")
            .header("x-should-retry", "true"),
    ])
    .await;
    let clock = clock();
    let client = openai(&server.url, &clock);

    let error = client.complete(&hi()).await.expect_err("quota");

    assert!(matches!(error, Error::QuotaExhausted { .. }), "{error:?}");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(clock.sleeps(), Vec::<Duration>::new());
}

#[tokio::test]
async fn overloaded_529_backs_off_exponentially_then_gives_up() {
    let server = TestServer::start(vec![
        Reply::json(529, OVERLOADED),
        Reply::json(529, OVERLOADED),
        Reply::json(529, OVERLOADED),
    ])
    .await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let error = client.complete(&hi()).await.expect_err("overloaded");

    assert!(matches!(error, Error::Overloaded { .. }), "{error:?}");
    assert_eq!(server.requests().len(), 3);
    let sleeps = clock.sleeps();
    assert_eq!(sleeps.len(), 2);
    // Base 500 ms then 1 s, each shortened by at most a quarter of jitter.
    assert!(sleeps[0] > Duration::from_millis(375) && sleeps[0] <= Duration::from_millis(500));
    assert!(sleeps[1] > Duration::from_millis(750) && sleeps[1] <= Duration::from_secs(1));
    let stats = client.usage_stats();
    assert_eq!(stats.errors.get(&ErrorKind::Overloaded), Some(&3));
    assert_eq!((stats.failed_requests, stats.retries), (1, 2));
}

#[tokio::test]
async fn server_saying_x_should_retry_false_is_believed() {
    let server = TestServer::start(vec![
        Reply::json(500, "boom").header("x-should-retry", "false"),
    ])
    .await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let error = client.complete(&hi()).await.expect_err("server error");

    assert!(
        matches!(error, Error::Server { status: 500, .. }),
        "{error:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn connect_errors_are_retried_then_reported() {
    // A port that was just free: nothing listens there.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    drop(listener);
    let clock = clock();
    let client = anthropic(&url, &clock);

    let error = client.complete(&hi()).await.expect_err("no server");

    assert!(matches!(error, Error::Connect { .. }), "{error:?}");
    assert_eq!(clock.sleeps().len(), 2);
    assert_eq!(
        client.usage_stats().errors.get(&ErrorKind::Connect),
        Some(&3)
    );
}

#[test]
fn retry_after_reads_seconds_and_http_dates() {
    let now = epoch();
    let check = |value: &str, expected: Option<Duration>| {
        assert_eq!(parse_retry_after(value, now), expected, "{value}");
    };
    check("7", Some(Duration::from_secs(7)));
    check(" 0.5 ", Some(Duration::from_millis(500)));
    check(
        "Wed, 21 Oct 2015 07:28:30 GMT",
        Some(Duration::from_secs(30)),
    );
    check("Wed, 21 Oct 2015 07:00:00 GMT", Some(Duration::ZERO));
    check("-1", None);
    check("soon", None);
}

#[test]
fn retry_delay_follows_hints_policy_and_bounds() {
    let policy = RetryPolicy::default();
    let rng = SplitMix64::seeded(1);
    let overloaded = Error::Overloaded {
        provider: "test",
        message: String::new(),
    };
    let invalid = Error::InvalidRequest {
        provider: "test",
        status: 400,
        message: String::new(),
    };
    let conflict = Error::InvalidRequest {
        provider: "test",
        status: 409,
        message: String::new(),
    };
    let none = RetryHints::default();
    let after = |seconds| RetryHints {
        should_retry: None,
        retry_after: Some(Duration::from_secs(seconds)),
    };

    assert_eq!(
        policy.delay(0, &overloaded, &after(5), &rng),
        Some(Duration::from_secs(5))
    );
    // A retry-after beyond the bound is not waited for.
    assert_eq!(policy.delay(0, &overloaded, &after(3600), &rng), None);
    assert_eq!(policy.delay(2, &overloaded, &none, &rng), None);
    assert_eq!(policy.delay(0, &invalid, &none, &rng), None);
    assert!(policy.delay(0, &conflict, &none, &rng).is_some());
    // The computed delay never exceeds the cap.
    let capped = RetryPolicy {
        max_retries: 20,
        ..RetryPolicy::default()
    };
    assert!(
        capped
            .delay(15, &overloaded, &none, &rng)
            .is_some_and(|delay| delay <= capped.max_delay)
    );
    let forced = RetryHints {
        should_retry: Some(true),
        retry_after: None,
    };
    assert!(policy.delay(0, &invalid, &forced, &rng).is_some());
}

#[tokio::test]
async fn rate_limiter_waits_for_request_and_token_buckets() {
    let clock = ManualClock::new(SystemTime::UNIX_EPOCH);
    let limiter = RateLimiter::new(
        RateLimit {
            requests_per_minute: Some(2),
            tokens_per_minute: Some(600),
        },
        llm_core::Clock::now(&clock),
    );

    limiter.acquire(100, &clock).await;
    limiter.acquire(100, &clock).await;
    // Out of requests: one refills every 30 s.
    limiter.acquire(100, &clock).await;
    // Again out of requests (30 s) and 50 tokens short (5 s): the longer wait wins.
    limiter.acquire(550, &clock).await;

    assert_eq!(
        clock.sleeps(),
        vec![Duration::from_secs(30), Duration::from_secs(30)]
    );
}

#[test]
fn rate_limiter_lets_an_oversized_request_through_on_a_full_bucket() {
    let clock = ManualClock::new(SystemTime::UNIX_EPOCH);
    let now = llm_core::Clock::now(&clock);
    let limiter = RateLimiter::new(
        RateLimit {
            requests_per_minute: None,
            tokens_per_minute: Some(60),
        },
        now,
    );

    assert_eq!(limiter.try_acquire(1_000, now), None);
    assert_eq!(limiter.try_acquire(30, now), Some(Duration::from_secs(30)));
}

#[tokio::test]
async fn request_timeout_is_a_typed_error() {
    let server = TestServer::start(vec![Reply::sse("", 1).stalled()]).await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let request = hi();
    let (result, ()) = futures_util::future::join(client.complete(&request), async {
        clock.advance(Duration::from_secs(601));
    })
    .await;

    let error = result.expect_err("timeout");
    assert!(
        matches!(
            error,
            Error::Timeout {
                phase: TimeoutPhase::Request,
                ..
            }
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn reset_clears_usage_stats() {
    let server = TestServer::start(vec![Reply::json(200, OK)]).await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);
    client.complete(&hi()).await.expect("complete");
    assert_eq!(client.usage_stats().usage.total(), 2);

    client.reset_usage_stats();

    assert_eq!(client.usage_stats(), llm_core::UsageStats::default());
}

#[tokio::test]
async fn a_200_that_is_not_a_message_is_an_invalid_response() {
    let server = TestServer::start(vec![Reply::json(200, "<html>proxy login</html>")]).await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let error = client.complete(&hi()).await.expect_err("not json");

    assert!(
        matches!(&error, Error::InvalidResponse { details, .. } if details.contains("<html>proxy login</html>")),
        "{error:?}"
    );
    let stats = client.usage_stats();
    assert_eq!(stats.errors.get(&ErrorKind::InvalidResponse), Some(&1));
    assert_eq!(stats.failed_requests, 1);
}

#[tokio::test]
async fn request_timeout_408_is_retried() {
    let server = TestServer::start(vec![Reply::json(408, "timeout"), Reply::json(200, OK)]).await;
    let clock = clock();
    let client = anthropic(&server.url, &clock);

    let response = client.complete(&hi()).await.expect("retried");

    assert_eq!(response.text(), "ok");
    assert_eq!(server.requests().len(), 2);
}
