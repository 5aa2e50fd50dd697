//! OpenAI's Flex tier through the fake service: a Flex call is answered and reported as Flex
//! (whole and streamed, in both OpenAI APIs); a model without the tier is refused as the API
//! refuses it; a call that finds no capacity is a 429 `resource_unavailable` that the client
//! reads as [`Error::CapacityUnavailable`] and does not send again by itself; and Anthropic's
//! client refuses the tier before sending anything.

use std::sync::Arc;

use llm_core::{Error, LlmClient, Request, ServiceTier, collect};
use llm_sim::{FakeServer, parse_strategy};
use pretty_assertions::assert_eq;

use crate::support::{anthropic, clock, http, openai, responses};

async fn server() -> FakeServer {
    let strategy = parse_strategy(
        "responses:\n  - content: one\n  - content: two\n  - content: three\n",
        "flex.yaml",
    )
    .expect("script parses");
    FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server starts")
}

fn flex(model: &str) -> Request {
    let mut request = Request::new(model).user("summarize").max_tokens(64);
    request.service_tier = Some(ServiceTier::Flex);
    request
}

type Connect = fn(&str, llm_core::HttpConfig) -> Arc<dyn LlmClient>;

#[tokio::test]
async fn a_flex_call_is_answered_and_billed_as_flex_in_both_openai_apis() {
    for (api, connect) in [("chat", openai as Connect), ("responses", responses)] {
        let server = server().await;
        let client = connect(&server.url(), http(&clock(), 2));
        let whole = client
            .complete(&flex("gpt-5.6-terra"))
            .await
            .expect("answer");
        assert_eq!(whole.service_tier.as_deref(), Some("flex"), "{api}");
        let streamed = collect(client.stream(&flex("gpt-5.6-terra")).await.expect("stream"))
            .await
            .expect("stream completes");
        assert_eq!(streamed.service_tier.as_deref(), Some("flex"), "{api}");
        let plain = client
            .complete(&Request::new("gpt-5.6-terra").user("hi"))
            .await
            .expect("answer");
        assert_eq!(plain.service_tier.as_deref(), Some("default"), "{api}");
        let served = server.served();
        assert_eq!(served[0].request.service_tier, Some(ServiceTier::Flex));
        assert_eq!(served[2].request.service_tier, None);
    }
}

#[tokio::test]
async fn no_capacity_is_an_unbilled_refusal_the_client_does_not_retry_by_itself() {
    let server = server().await;
    server.refuse_flex(1);
    // Retries allowed: a capacity refusal still comes back at once, for the caller to decide.
    let client = openai(&server.url(), http(&clock(), 2));
    let error = client
        .complete(&flex("gpt-5.6-terra"))
        .await
        .expect_err("no capacity");
    assert!(
        matches!(&error, Error::CapacityUnavailable { message, .. }
            if message.starts_with("Resource unavailable")),
        "{error:?}"
    );
    assert!(!error.is_retryable());
    // The refusal took no call number and asked no script step.
    assert!(server.served().is_empty());
    let again = client
        .complete(&flex("gpt-5.6-terra"))
        .await
        .expect("capacity is back");
    assert_eq!(again.text(), "one");
}

#[tokio::test]
async fn a_model_without_flex_is_refused_and_anthropic_refuses_the_tier_itself() {
    let server = server().await;
    let client = openai(&server.url(), http(&clock(), 0));
    let error = client
        .complete(&flex("gpt-4o"))
        .await
        .expect_err("no flex tier");
    assert!(
        matches!(&error, Error::InvalidRequest { status: 400, message, .. }
            if message == "Unsupported service_tier: flex"),
        "{error:?}"
    );
    let claude = anthropic(&server.url(), http(&clock(), 0));
    let error = claude
        .complete(&flex("claude-sonnet-4-6"))
        .await
        .expect_err("anthropic has no flex");
    assert!(
        matches!(&error, Error::Config { details } if details.contains("no flex tier")),
        "{error:?}"
    );
    assert!(server.served().is_empty());
}
