//! The OpenAI Responses API end to end: llm-core's client in its Responses mode against the
//! fake server's `/v1/responses`, with reasoning, tool calls, the prompt cache and a failure.

use futures_util::StreamExt;
use llm_core::{ContentBlock, Event, Message, ReasoningItem, Request, Role, StopReason, collect};
use llm_sim::{Api, FakeServer, parse_strategy};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{clock, http, request, responses};

async fn serve(yaml: &str) -> FakeServer {
    let strategy = parse_strategy(yaml, "responses.yaml").expect("script parses");
    FakeServer::start("127.0.0.1:0", strategy)
        .await
        .expect("server starts")
}

const THINK_THEN_CALL: &str = r#"
responses:
  - thinking: The file must be read first.
    content: Reading it.
    tool_calls: [{id: call_1, name: read_file, input: {path: src/lib.rs}}]
    usage: {input_tokens: 30, output_tokens: 12, reasoning_tokens: 5}
  - content: Done.
    usage: {input_tokens: 60, output_tokens: 2}
"#;

#[tokio::test]
async fn reasoning_and_a_tool_call_come_back_whole_or_streamed_and_go_back_as_they_came() {
    let clock = clock();
    let mut answers = Vec::new();
    for streamed in [false, true] {
        let server = serve(THINK_THEN_CALL).await;
        let client = responses(&server.url(), http(&clock, 0));
        let mut request = request("read the file");
        let first = if streamed {
            collect(client.stream(&request).await.expect("stream")).await
        } else {
            client.complete(&request).await
        }
        .expect("first answer");
        answers.push(first.clone());
        request.messages.push(first.into_message());
        request.messages.push(Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: "call_1".into(),
                content: "fn main() {}".into(),
                is_error: false,
            }],
        });
        let second = client.complete(&request).await.expect("second answer");
        assert_eq!(second.text(), "Done.");
        // The server read the conversation back as the client holds it, reasoning included.
        let served = server.served();
        assert_eq!(
            served
                .iter()
                .map(|s| (s.api, s.streamed))
                .collect::<Vec<_>>(),
            vec![(Api::Responses, streamed), (Api::Responses, false)]
        );
        assert_eq!(served[1].request.messages, request.messages, "{streamed}");
    }
    assert_eq!(
        answers[0], answers[1],
        "the stream collects to the whole answer"
    );
    let signature = ReasoningItem {
        id: "rs_sim1_0".into(),
        encrypted_content: Some("sim-encrypted-reasoning-1-0".into()),
    }
    .signature();
    assert_eq!(
        answers[0].content,
        vec![
            ContentBlock::Thinking {
                text: "The file must be read first.".into(),
                signature: Some(signature),
            },
            ContentBlock::text("Reading it."),
            ContentBlock::ToolUse(llm_core::ToolCall {
                id: "call_1".into(),
                name: "read_file".into(),
                input: json!({"path": "src/lib.rs"}),
            }),
        ]
    );
    assert_eq!(answers[0].stop_reason, StopReason::ToolUse);
    assert_eq!(
        (
            answers[0].usage.output_tokens,
            answers[0].usage.reasoning_tokens
        ),
        (12, 5)
    );
    assert_eq!(answers[0].request_id.as_deref(), Some("req_sim_1"));
}

#[tokio::test]
async fn a_cache_key_makes_a_repeated_prefix_read_from_the_cache() {
    let server = serve("responses:\n  - content: one\n  - content: two\n").await;
    let clock = clock();
    let client = responses(&server.url(), http(&clock, 0));
    let mut request = Request::new("gpt-sim")
        .system("Follow the house style. ".repeat(400))
        .user("first");
    request.cache_key = Some("conversation-1".into());
    let first = client.complete(&request).await.expect("first");
    assert_eq!(first.usage.cache_read_input_tokens, 0);
    request.messages.push(first.into_message());
    request.messages.push(Message::user("second"));
    let second = client.complete(&request).await.expect("second");
    assert!(
        second.usage.cache_read_input_tokens > 1024,
        "{:?}",
        second.usage
    );
    assert_eq!(second.usage.cache_creation_input_tokens, 0);
    assert_eq!(
        server.served()[1].request.cache_key.as_deref(),
        Some("conversation-1")
    );
}

#[tokio::test]
async fn a_stream_interrupted_mid_way_ends_in_the_error_event() {
    let server =
        serve("responses:\n  - content: one two three four\n    failure: {kind: mid_stream}\n")
            .await;
    let clock = clock();
    let items: Vec<_> = responses(&server.url(), http(&clock, 0))
        .stream(&request("q"))
        .await
        .expect("stream starts")
        .collect()
        .await;
    let text: String = items
        .iter()
        .filter_map(|item| match item {
            Ok(Event::TextDelta { text }) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "one two ");
    let Some(Err(err)) = items.last() else {
        panic!("the stream ends in an error: {items:?}");
    };
    assert_eq!(
        err.to_string(),
        "openai: server error (http 500): Overloaded"
    );
}

#[tokio::test]
async fn an_answer_cut_at_its_limit_is_incomplete() {
    let step = "  - content: cut off\n    stop_reason: max_tokens\n";
    let server = serve(&format!("responses:\n{step}{step}")).await;
    let clock = clock();
    let client = responses(&server.url(), http(&clock, 0));
    let whole = client.complete(&request("q")).await.expect("whole");
    let streamed = collect(client.stream(&request("q")).await.expect("stream"))
        .await
        .expect("streamed");
    assert_eq!(
        (whole.stop_reason, streamed.stop_reason),
        (StopReason::MaxTokens, StopReason::MaxTokens)
    );
}
