//! llm-core's batch clients end to end against the fake server's batch APIs: a batch's
//! answers are the ones direct calls get, failures come back as errored and expired results,
//! a batch answers in progress to its first reads, a held batch stays in progress until released, and a cancelled one ends with its calls
//! canceled.

use llm_core::{BatchItem, BatchOutcome, BatchState, LlmClient};
use llm_sim::{Api, FakeServer, parse_strategy};
use pretty_assertions::assert_eq;

use crate::support::{anthropic, clock, gist, http, openai, request};

type Connect = fn(&str, llm_core::HttpConfig) -> std::sync::Arc<dyn LlmClient>;

const PROVIDERS: [(Api, Connect); 2] = [(Api::Anthropic, anthropic), (Api::OpenAi, openai)];

const SCRIPT: &str = "
responses:
  - content: first answer
    usage: {input_tokens: 10, output_tokens: 3}
  - failure: {kind: server_error, status: 500, message: it broke}
  - failure: {kind: timeout}
  - content: fourth answer
";

fn items() -> Vec<BatchItem> {
    (1..=4)
        .map(|n| BatchItem {
            custom_id: format!("item-{n}"),
            request: request(&format!("call {n}")),
        })
        .collect()
}

async fn serve() -> FakeServer {
    let strategy = parse_strategy(SCRIPT, "batch.yaml").expect("script parses");
    FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server starts")
}

/// Each result as (custom id, what became of it).
fn outcomes(results: Vec<llm_core::BatchResult>) -> Vec<(String, String)> {
    let mut outcomes: Vec<(String, String)> = results
        .into_iter()
        .map(|r| {
            let outcome = match r.outcome {
                BatchOutcome::Succeeded(response) => {
                    format!("succeeded: {}", gist(&response)["text"])
                }
                BatchOutcome::Errored(message) => format!("errored: {message}"),
                BatchOutcome::Expired => "expired".to_owned(),
                BatchOutcome::Canceled => "canceled".to_owned(),
            };
            (r.custom_id, outcome)
        })
        .collect();
    outcomes.sort();
    outcomes
}

#[tokio::test]
async fn a_batch_answers_as_direct_calls_would_with_failures_as_results() {
    for (api, connect) in PROVIDERS {
        let server = serve().await;
        let clock = clock();
        let client = connect(&server.url(), http(&clock, 0));
        let batches = client.batches().expect("the provider has a batch api");
        let created = batches.submit(&items()).await.expect("batch created");
        assert_eq!(created.state, BatchState::InProgress, "{api:?}");
        assert_eq!(server.batch_ids(), vec![created.id.clone()], "{api:?}");
        // As on the real service, the batch is still running when first read.
        let mut states = Vec::new();
        for _ in 0..=llm_sim::DEFAULT_BATCH_POLLS {
            states.push(batches.status(&created.id).await.expect("status").state);
        }
        let mut running = vec![BatchState::InProgress; llm_sim::DEFAULT_BATCH_POLLS as usize];
        running.push(BatchState::Ended);
        assert_eq!(states, running, "{api:?}");
        let status = batches.status(&created.id).await.expect("status");
        assert_eq!(status.state, BatchState::Ended, "{api:?}");
        assert_eq!(status.counts.succeeded, 2, "{api:?}");
        let got = outcomes(batches.results(&created.id).await.expect("results"));
        let server_error = match api {
            Api::Anthropic => "errored: api_error: it broke",
            Api::OpenAi | Api::Responses => "errored: status 500: it broke",
        };
        assert_eq!(
            got,
            vec![
                ("item-1".into(), "succeeded: \"first answer\"".into()),
                ("item-2".into(), server_error.into()),
                ("item-3".into(), "expired".into()),
                ("item-4".into(), "succeeded: \"fourth answer\"".into()),
            ],
            "{api:?}"
        );
        // Every call reached the strategy through the batch, none directly.
        let served = server.served();
        assert_eq!(served.len(), 4, "{api:?}");
        assert!(
            served
                .iter()
                .all(|s| s.batch.as_deref() == Some(&created.id)),
            "{api:?}"
        );
        assert_eq!(served[0].request, request("call 1"), "{api:?}");
    }
}

#[tokio::test]
async fn a_held_batch_waits_and_a_cancelled_one_ends_canceled() {
    for (api, connect) in PROVIDERS {
        let server = serve().await;
        server.hold_batches(true);
        let clock = clock();
        let client = connect(&server.url(), http(&clock, 0));
        let batches = client.batches().expect("the provider has a batch api");
        let first = batches.submit(&items()[..1]).await.expect("batch created");
        let status = batches.status(&first.id).await.expect("status");
        assert_eq!(
            (status.state, status.counts.processing),
            (BatchState::InProgress, 1),
            "{api:?}"
        );
        let second = batches.submit(&items()[1..]).await.expect("batch created");
        let cancelled = batches.cancel(&second.id).await.expect("cancel");
        assert_ne!(cancelled.state, BatchState::InProgress, "{api:?}");
        let got = outcomes(batches.results(&second.id).await.expect("results"));
        assert!(got.iter().all(|(_, o)| o == "canceled"), "{api:?}: {got:?}");
        assert_eq!(got.len(), 3, "{api:?}");
        server.hold_batches(false);
        let got = outcomes(batches.results(&first.id).await.expect("results"));
        assert_eq!(
            got,
            vec![("item-1".into(), "succeeded: \"first answer\"".into())],
            "{api:?}"
        );
    }
}

#[tokio::test]
async fn bad_custom_ids_are_refused_before_anything_is_sent() {
    let server = serve().await;
    let clock = clock();
    let client = anthropic(&server.url(), http(&clock, 0));
    let batches = client.batches().expect("batch api");
    let mut twice = items();
    twice[1].custom_id = "item-1".into();
    let err = batches.submit(&twice).await.expect_err("duplicate ids");
    assert!(
        err.to_string().contains("\"item-1\" is used twice"),
        "{err}"
    );
    let mut bad = items();
    bad[0].custom_id = "has space".into();
    let err = batches.submit(&bad).await.expect_err("bad id");
    assert!(err.to_string().contains("\"has space\""), "{err}");
    assert!(server.batch_ids().is_empty());
}
