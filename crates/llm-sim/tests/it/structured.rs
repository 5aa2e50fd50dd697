//! Structured outputs end to end: llm-core's providers ask for a schema in their own wire
//! forms, the fake server reads them back and answers with JSON of the schema, and
//! `complete_structured` checks what comes back.

use llm_core::{
    ContentBlock, Error, Request, Response, ResponseSchema, ToolChoice, complete_structured,
    structured_answer,
};
use llm_sim::{Api, FakeServer, SimulatedClient, parse_strategy};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::{anthropic, clock, http, openai, responses};

fn verdict() -> ResponseSchema {
    ResponseSchema {
        name: "verdict".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": ["pass", "fail"]},
                "files": {"type": "array", "items": {"type": "string"}, "minItems": 1},
            },
            "required": ["verdict", "files"],
            "additionalProperties": false,
        }),
    }
}

fn request() -> Request {
    let mut request = Request::new("m").user("Grade the change.");
    request.response_schema = Some(verdict());
    request
}

#[tokio::test]
async fn both_providers_ask_for_the_schema_and_get_json_that_follows_it() {
    // The script answers prose: the server answers with JSON of the schema anyway, as a model
    // held to a schema does.
    for api in [Api::OpenAi, Api::Responses, Api::Anthropic] {
        let strategy = parse_strategy("responses:\n  - content: Looks fine to me.\n", "s.yaml")
            .expect("script");
        let server = FakeServer::start("127.0.0.1:0", strategy)
            .await
            .expect("server");
        let clock = clock();
        let client = match api {
            Api::OpenAi => openai(&server.url(), http(&clock, 0)),
            Api::Responses => responses(&server.url(), http(&clock, 0)),
            Api::Anthropic => anthropic(&server.url(), http(&clock, 0)),
        };
        let (value, _) = complete_structured(&*client, &request())
            .await
            .expect("a structured answer");
        assert_eq!(value, json!({"verdict": "pass", "files": [""]}), "{api:?}");
        let served = server.served().pop().expect("served").request;
        match api {
            // OpenAI: a strict json_schema response (or text) format, read back as the schema.
            Api::OpenAi | Api::Responses => {
                assert_eq!(served.response_schema, Some(verdict()), "{api:?}");
            }
            // Anthropic: a tool of the schema's name, forced.
            Api::Anthropic => {
                assert_eq!(
                    served.tool_choice,
                    Some(ToolChoice::Tool {
                        name: "verdict".into()
                    })
                );
                let tool = served
                    .tools
                    .iter()
                    .find(|t| t.name == "verdict")
                    .expect("tool");
                assert_eq!(tool.input_schema, verdict().schema);
            }
        }
    }
}

#[tokio::test]
async fn an_answer_that_already_follows_the_schema_is_kept() {
    let client = SimulatedClient::scripted(
        llm_sim::Script::parse(
            "responses:\n  - content: '{\"verdict\": \"fail\", \"files\": [\"a.rs\", \"b.rs\"]}'\n",
            "s.yaml",
        )
        .expect("script"),
    );
    let (value, response) = complete_structured(&client, &request())
        .await
        .expect("answer");
    assert_eq!(value, json!({"verdict": "fail", "files": ["a.rs", "b.rs"]}));
    assert_eq!(
        serde_json::from_str::<Value>(&response.text()).expect("json"),
        value
    );
}

#[test]
fn an_answer_that_does_not_follow_the_schema_is_a_typed_error() {
    let answer = |text: &str| Response {
        content: vec![ContentBlock::text(text)],
        ..Response::default()
    };
    for (text, says) in [
        ("Looks fine.", "not JSON"),
        (r#"{"verdict": "maybe", "files": ["a"]}"#, "not one of"),
        (r#"{"verdict": "pass", "files": []}"#, "/files"),
        (
            r#"{"verdict": "pass", "files": ["a"], "extra": 1}"#,
            "\"extra\" is not allowed",
        ),
    ] {
        match structured_answer(&verdict(), &answer(text)) {
            Err(Error::SchemaMismatch {
                schema, details, ..
            }) => {
                assert_eq!(schema, "verdict");
                assert!(details.contains(says), "{text}: {details}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}
