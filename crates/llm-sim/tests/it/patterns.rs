//! The pattern strategy: ordered matchers over the request, a default, and the escalation
//! when nothing matches.

use llm_core::{ContentBlock, LlmClient, Message, Request, Role};
use llm_sim::{Patterns, SimulatedClient, parse_strategy};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{request, tool};

const PATTERNS: &str = r#"
metadata: {name: patterns under test}
patterns:
  - when: {call: 3}
    respond: {content: third call}
  - when: {last_user_message: "(?i)^fix .*\\.rs$", tools: [read_file, extract_function]}
    respond:
      tool_calls: [{name: read_file, input: {path: src/lib.rs}}]
  - when: {system_contains: reviewer}
    respond: {content: looks good}
  - when: {last_user_message: "tests passed"}
    respond:
      tool_calls: [{name: complete, input: {summary: done}}]
"#;

fn user_with_tool_result(text: &str) -> Request {
    let mut request = request("fix src/lib.rs");
    request.messages.push(Message {
        role: Role::Assistant,
        content: vec![ContentBlock::text("running tests")],
    });
    request.messages.push(Message {
        role: Role::User,
        content: vec![ContentBlock::ToolResult {
            tool_use_id: "t1".into(),
            content: text.into(),
            is_error: false,
        }],
    });
    request
}

#[tokio::test]
async fn the_first_matching_pattern_answers() {
    let client = SimulatedClient::from_boxed(
        parse_strategy(PATTERNS, "patterns.yaml").expect("pattern file parses"),
    );
    let mut reviewer = Request::new("m")
        .system("You are a reviewer.")
        .user("check this");
    reviewer.tools = vec![tool("read_file")];
    let mut missing_tool = request("fix src/lib.rs");
    missing_tool
        .tools
        .retain(|tool| tool.name != "extract_function");
    let cases = [
        (request("Fix src/lib.rs"), json!({"tool": "read_file"})),
        (reviewer, json!({"text": "looks good"})),
        (request("anything"), json!({"text": "third call"})),
        (
            user_with_tool_result("all 12 tests passed"),
            json!({"tool": "complete"}),
        ),
        (
            missing_tool,
            json!({"tool": "escalate", "input": {"reason": "no pattern match"}}),
        ),
        (
            request("fix it please"),
            json!({"tool": "escalate", "input": {"reason": "no pattern match"}}),
        ),
    ];
    let mut actual = Vec::new();
    let mut expected = Vec::new();
    for (request, wanted) in cases {
        let response = client.complete(&request).await.expect("an answer");
        let got = match response.tool_calls().first() {
            Some(call) if wanted.get("input").is_some() => {
                json!({"tool": call.name, "input": call.input})
            }
            Some(call) => json!({"tool": call.name}),
            None => json!({"text": response.text()}),
        };
        actual.push(got);
        expected.push(wanted);
    }
    assert_eq!(actual, expected);
}

#[tokio::test]
async fn a_default_answers_when_nothing_matches() {
    let yaml = "patterns: []\ndefault: {content: fallback}\n";
    let client = SimulatedClient::from_boxed(parse_strategy(yaml, "p.yaml").expect("parses"));
    let response = client.complete(&request("x")).await.expect("answer");
    assert_eq!(response.text(), "fallback");
}

#[tokio::test]
async fn patterns_can_be_built_in_code() {
    let mut patterns = Patterns::default();
    patterns.push(
        llm_sim::Matcher {
            system_contains: Some("violations".into()),
            ..Default::default()
        },
        llm_sim::Step::text("matched in code"),
    );
    let client = SimulatedClient::new(patterns);
    let response = client.complete(&request("x")).await.expect("answer");
    assert_eq!(response.text(), "matched in code");
    let other = client
        .complete(&Request::new("m").user("x"))
        .await
        .expect("answer");
    assert_eq!(other.text(), "No matching pattern found");
}
