//! One definition per wire format (Anthropic Messages, OpenAI chat completions, the OpenAI
//! Responses API), checked end to end: what llm-core's client encodes, the fake server decodes
//! to the same request, and what the server encodes, whole or as an event stream, the client
//! decodes to the same response. The batch formats are checked type by type in [`batch`].

mod batch;

use std::collections::BTreeMap;

use llm_core::{
    CacheMarks, ContentBlock, HttpConfig, ImageSource, LlmClient, Message, ReasoningItem, Request,
    Response, ResponseSchema, Role, StopReason, Thinking, Tool, ToolCall, ToolChoice, Usage,
    collect,
};
use llm_sim::{Answer, FakeServer, Reply, Strategy};
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::support::{anthropic, clock, http, openai, responses};

/// Answers every call with the same response.
#[derive(Debug)]
struct Always(Response);

impl Strategy for Always {
    fn reply(&mut self, _call: u64, _request: &Request) -> llm_sim::Result<Reply> {
        Ok(Reply::Answer(Answer {
            response: self.0.clone(),
            ..Answer::default()
        }))
    }
}

type Connect = fn(&str, HttpConfig) -> std::sync::Arc<dyn LlmClient>;

/// Sends `request` whole and streamed; the server must have read it back unchanged both times.
async fn check_request(connect: Connect, request: &Request) {
    let server = FakeServer::start("127.0.0.1:0", Box::new(Always(answer("ok"))))
        .await
        .expect("server starts");
    let client = connect(&server.url(), http(&clock(), 0));
    client.complete(request).await.expect("answer");
    collect(client.stream(request).await.expect("stream starts"))
        .await
        .expect("stream completes");
    let served = server.served();
    assert_eq!(served.len(), 2);
    for served in served {
        assert_eq!(&served.request, request, "streamed: {}", served.streamed);
    }
}

/// The server answers `response`; the client must decode it whole and streamed to what
/// `expected` makes of it for call number 1 (whole) and 2 (streamed): the server's id and
/// request id.
async fn check_response(
    connect: Connect,
    response: &Response,
    expected: impl Fn(u64, &Response) -> Response,
) {
    let server = FakeServer::start("127.0.0.1:0", Box::new(Always(response.clone())))
        .await
        .expect("server starts");
    let client = connect(&server.url(), http(&clock(), 0));
    let request = Request::new("model-test").user("hi").max_tokens(64);
    let whole = client.complete(&request).await.expect("answer");
    let streamed = collect(client.stream(&request).await.expect("stream starts"))
        .await
        .expect("stream completes");
    for (call, decoded) in [(1, whole), (2, streamed)] {
        assert_eq!(decoded, expected(call, response), "call {call}");
    }
}

/// What the Anthropic client reads back: the response, with the server's request id.
fn anthropic_decoded(call: u64, response: &Response) -> Response {
    let request_id = format!("req_sim_{call}");
    Response {
        request_id: Some(request_id.clone()),
        headers: BTreeMap::from([("request-id".to_owned(), request_id)]),
        ..response.clone()
    }
}

/// What the chat completions client reads back: the response, with the server's
/// completion id and request id.
fn openai_decoded(call: u64, response: &Response) -> Response {
    let request_id = format!("req_sim_{call}");
    Response {
        id: Some(format!("chatcmpl-sim{call}")),
        request_id: Some(request_id.clone()),
        headers: BTreeMap::from([("x-request-id".to_owned(), request_id)]),
        // The tier that answered, which OpenAI always reports.
        service_tier: Some("default".to_owned()),
        ..response.clone()
    }
}

/// What the Responses API client reads back: the response, with the server's response id
/// and request id.
fn responses_decoded(call: u64, response: &Response) -> Response {
    let request_id = format!("req_sim_{call}");
    Response {
        id: Some(format!("resp_sim{call}")),
        request_id: Some(request_id.clone()),
        headers: BTreeMap::from([("x-request-id".to_owned(), request_id)]),
        // The tier that answered, which OpenAI always reports.
        service_tier: Some("default".to_owned()),
        ..response.clone()
    }
}

fn answer(text: &str) -> Response {
    Response {
        content: vec![ContentBlock::text(text)],
        stop_reason: StopReason::EndTurn,
        usage: Usage {
            input_tokens: 10,
            output_tokens: 3,
            ..Usage::default()
        },
        model: "model-test".into(),
        id: Some("msg_1".into()),
        request_id: None,
        headers: BTreeMap::new(),
        service_tier: None,
    }
}

fn tool(name: &str) -> Tool {
    Tool {
        name: name.into(),
        description: format!("the {name} tool"),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

fn call(id: &str, name: &str, input: serde_json::Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        input,
    }
}

/// Requests that between them use every field and block the Messages API carries.
fn anthropic_requests() -> Vec<Request> {
    let text = Request::new("model-test")
        .system("be brief")
        .user("hello")
        .max_tokens(100);

    let mut images = Request::new("model-test").max_tokens(100);
    images.messages.push(Message {
        role: Role::User,
        content: vec![
            ContentBlock::Image {
                source: ImageSource::Base64 {
                    media_type: "image/png".into(),
                    data: "iVBORw0KGgo=".into(),
                },
            },
            ContentBlock::Image {
                source: ImageSource::Url {
                    url: "https://example.com/cat.jpg".into(),
                },
            },
            ContentBlock::text("what are these?"),
        ],
    });

    let tools = |choice| {
        let mut request = Request::new("model-test").user("read it").max_tokens(100);
        request.tools = vec![tool("read_file"), tool("write_file")];
        request.tool_choice = Some(choice);
        request.messages.push(Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::text("Reading both."),
                ContentBlock::ToolUse(call("toolu_1", "read_file", json!({"path": "a.rs"}))),
                ContentBlock::ToolUse(call("toolu_2", "read_file", json!({}))),
            ],
        });
        request.messages.push(Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_1".into(),
                    content: "fn main() {}".into(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "toolu_2".into(),
                    content: "no path given".into(),
                    is_error: true,
                },
            ],
        });
        request
    };

    let mut thinking = Request::new("model-test").user("think").max_tokens(2048);
    thinking.thinking = Some(Thinking {
        budget_tokens: 1024,
    });
    thinking.messages.push(Message {
        role: Role::Assistant,
        content: vec![
            ContentBlock::Thinking {
                text: "Let me see.".into(),
                signature: Some("sig-abc".into()),
            },
            ContentBlock::RedactedThinking {
                data: "opaque".into(),
            },
            ContentBlock::text("Done."),
        ],
    });
    thinking.messages.push(Message::user("and now?"));

    let mut cached = Request::new("model-test")
        .system("a long system prompt")
        .user("first")
        .max_tokens(100);
    cached.tools = vec![tool("read_file")];
    cached.messages.push(Message::assistant("reply"));
    cached.messages.push(Message::user("second"));
    cached.cache = CacheMarks {
        tools: true,
        system: true,
        messages: vec![0, 2],
        ..CacheMarks::default()
    };

    let mut sampling = Request::new("model-test").user("count").max_tokens(100);
    sampling.stop_sequences = vec!["END".into(), "STOP".into()];
    sampling.temperature = Some(0.7);
    sampling.top_p = Some(0.9);
    sampling.metadata.insert("user_id".into(), "u-1".into());

    vec![
        text,
        images,
        tools(ToolChoice::Auto),
        tools(ToolChoice::Any),
        tools(ToolChoice::None),
        tools(ToolChoice::Tool {
            name: "read_file".into(),
        }),
        thinking,
        cached,
        sampling,
    ]
}

/// Answers with text, tool calls, signed and redacted thinking, cache usage, and every stop
/// reason.
fn anthropic_responses() -> Vec<Response> {
    let tool_calls = Response {
        content: vec![
            ContentBlock::text("Reading."),
            ContentBlock::ToolUse(call("toolu_1", "read_file", json!({"path": "src/lib.rs"}))),
            ContentBlock::ToolUse(call("toolu_2", "list", json!({}))),
        ],
        stop_reason: StopReason::ToolUse,
        ..answer("")
    };
    let thinking = Response {
        content: vec![
            ContentBlock::Thinking {
                text: "First this, then that.".into(),
                signature: Some("sig-xyz".into()),
            },
            ContentBlock::RedactedThinking {
                data: "opaque".into(),
            },
            ContentBlock::text("The answer."),
        ],
        ..answer("")
    };
    let cache_usage = Response {
        usage: Usage {
            input_tokens: 12,
            output_tokens: 7,
            cache_creation_input_tokens: 2048,
            cache_read_input_tokens: 4096,
            reasoning_tokens: 0,
            cache_creation_1h_input_tokens: 1024,
        },
        ..answer("from the cache")
    };
    let mut responses = vec![
        answer("Hello there, how are you?"),
        tool_calls,
        thinking,
        cache_usage,
    ];
    for reason in [
        StopReason::MaxTokens,
        StopReason::StopSequence,
        StopReason::Refusal,
        StopReason::PauseTurn,
        StopReason::Other("model_context_window_exceeded".into()),
    ] {
        responses.push(Response {
            stop_reason: reason,
            ..answer("cut")
        });
    }
    responses
}

#[tokio::test]
async fn anthropic_requests_arrive_as_the_client_built_them() {
    for request in anthropic_requests() {
        check_request(anthropic, &request).await;
    }
}

#[tokio::test]
async fn anthropic_answers_arrive_as_the_server_built_them() {
    for response in anthropic_responses() {
        check_response(anthropic, &response, anthropic_decoded).await;
    }
}

/// Requests that between them use every field chat completions carry for one of ours:
/// no thinking (it takes none back), no cache breakpoints (OpenAI caches by itself), and
/// tool results without the error flag (it has none; the client says it in the content).
fn openai_requests() -> Vec<Request> {
    let text = Request::new("model-test")
        .system("be brief")
        .user("hello")
        .max_tokens(100);

    let mut images = Request::new("model-test").max_tokens(100);
    images.messages.push(Message {
        role: Role::User,
        content: vec![
            ContentBlock::Image {
                source: ImageSource::Base64 {
                    media_type: "image/png".into(),
                    data: "iVBORw0KGgo=".into(),
                },
            },
            ContentBlock::Image {
                source: ImageSource::Url {
                    url: "https://example.com/cat.jpg".into(),
                },
            },
            ContentBlock::text("what are these?"),
        ],
    });

    let tools = |choice| {
        let mut request = Request::new("model-test").user("read it").max_tokens(100);
        request.tools = vec![tool("read_file"), tool("write_file")];
        request.tool_choice = Some(choice);
        request.messages.push(Message {
            role: Role::Assistant,
            content: vec![
                ContentBlock::text("Reading both."),
                ContentBlock::ToolUse(call("call_1", "read_file", json!({"path": "a.rs"}))),
                ContentBlock::ToolUse(call("call_2", "read_file", json!({}))),
            ],
        });
        request.messages.push(Message {
            role: Role::User,
            content: vec![
                ContentBlock::ToolResult {
                    tool_use_id: "call_1".into(),
                    content: "fn main() {}".into(),
                    is_error: false,
                },
                ContentBlock::ToolResult {
                    tool_use_id: "call_2".into(),
                    content: "fn lib() {}".into(),
                    is_error: false,
                },
                ContentBlock::text("and now?"),
            ],
        });
        request
    };

    let mut calls_only = Request::new("model-test").user("go").max_tokens(100);
    calls_only.messages.push(Message {
        role: Role::Assistant,
        content: vec![ContentBlock::ToolUse(call("call_1", "list", json!({})))],
    });

    let mut sampling = Request::new("model-test").user("count").max_tokens(100);
    sampling.stop_sequences = vec!["END".into(), "STOP".into()];
    sampling.temperature = Some(0.7);
    sampling.top_p = Some(0.9);
    sampling.metadata.insert("user_id".into(), "u-1".into());
    sampling.cache_key = Some("conversation-1".into());

    let mut structured = Request::new("model-test").user("a point").max_tokens(100);
    structured.response_schema = Some(ResponseSchema {
        name: "point".into(),
        schema: json!({"type": "object", "properties": {"x": {"type": "number"}}}),
    });

    vec![
        text,
        images,
        tools(ToolChoice::Auto),
        tools(ToolChoice::Any),
        tools(ToolChoice::None),
        tools(ToolChoice::Tool {
            name: "read_file".into(),
        }),
        calls_only,
        sampling,
        structured,
    ]
}

/// Answers with text, tool calls, reasoning, cached and reasoning usage, and each stop
/// reason a `finish_reason` tells apart.
fn openai_responses() -> Vec<Response> {
    let tool_calls = Response {
        content: vec![
            ContentBlock::text("Reading."),
            ContentBlock::ToolUse(call("call_1", "read_file", json!({"path": "src/lib.rs"}))),
            ContentBlock::ToolUse(call("call_2", "list", json!({}))),
        ],
        stop_reason: StopReason::ToolUse,
        ..answer("")
    };
    let calls_only = Response {
        content: vec![ContentBlock::ToolUse(call("call_1", "list", json!({})))],
        stop_reason: StopReason::ToolUse,
        ..answer("")
    };
    let reasoning = Response {
        content: vec![
            ContentBlock::Thinking {
                text: "First this, then that.".into(),
                signature: None,
            },
            ContentBlock::text("The answer."),
        ],
        usage: Usage {
            input_tokens: 12,
            output_tokens: 40,
            cache_read_input_tokens: 4096,
            reasoning_tokens: 30,
            ..Usage::default()
        },
        ..answer("")
    };
    let mut responses = vec![
        answer("Hello there, how are you?"),
        tool_calls,
        calls_only,
        reasoning,
    ];
    for reason in [StopReason::MaxTokens, StopReason::Refusal] {
        responses.push(Response {
            stop_reason: reason,
            ..answer("cut")
        });
    }
    responses
}

#[tokio::test]
async fn chat_completions_requests_arrive_as_the_client_built_them() {
    for request in openai_requests() {
        check_request(openai, &request).await;
    }
}

#[tokio::test]
async fn chat_completions_answers_arrive_as_the_server_built_them() {
    for response in openai_responses() {
        check_response(openai, &response, openai_decoded).await;
    }
}

/// A thinking block as the Responses API client makes one of a reasoning item.
fn reasoning(text: &str, id: &str) -> ContentBlock {
    let item = ReasoningItem {
        id: id.into(),
        encrypted_content: Some(format!("gAAAA-{id}")),
    };
    ContentBlock::Thinking {
        text: text.into(),
        signature: Some(item.signature()),
    }
}

/// Requests that between them use every field the Responses API carries for one of ours:
/// the chat completions cases less stop sequences (it takes none), and reasoning items sent
/// back. Thinking is carried only as the client's own reasoning items (it sends no other
/// back) and `Request::thinking` not at all (it asks for a summary, which a request does not
/// echo).
fn responses_requests() -> Vec<Request> {
    let mut requests: Vec<Request> = openai_requests()
        .into_iter()
        .filter(|request| request.stop_sequences.is_empty())
        .collect();

    let mut sampling = Request::new("model-test").user("count").max_tokens(100);
    sampling.temperature = Some(0.7);
    sampling.top_p = Some(0.9);
    sampling.metadata.insert("user_id".into(), "u-1".into());
    sampling.cache_key = Some("conversation-1".into());

    let mut reasoned = Request::new("model-test")
        .system("think first")
        .user("read it")
        .max_tokens(100);
    reasoned.tools = vec![tool("read_file")];
    reasoned.messages.push(Message {
        role: Role::Assistant,
        content: vec![
            reasoning("The file first.", "rs_1"),
            ContentBlock::text("Reading."),
            reasoning("", "rs_2"),
            ContentBlock::ToolUse(call("call_1", "read_file", json!({"path": "a.rs"}))),
        ],
    });
    reasoned.messages.push(Message {
        role: Role::User,
        content: vec![
            ContentBlock::ToolResult {
                tool_use_id: "call_1".into(),
                content: "fn main() {}".into(),
                is_error: false,
            },
            ContentBlock::text("shorter,"),
            ContentBlock::text("please"),
        ],
    });

    requests.extend([sampling, reasoned]);
    requests
}

/// Answers with text, tool calls, reasoning items, cached and reasoning usage, and each stop
/// reason a response's status tells apart.
fn responses_answers() -> Vec<Response> {
    let tool_calls = Response {
        content: vec![
            ContentBlock::text("Reading."),
            ContentBlock::ToolUse(call("call_1", "read_file", json!({"path": "src/lib.rs"}))),
            ContentBlock::ToolUse(call("call_2", "list", json!({}))),
        ],
        stop_reason: StopReason::ToolUse,
        ..answer("")
    };
    let calls_only = Response {
        content: vec![ContentBlock::ToolUse(call("call_1", "list", json!({})))],
        stop_reason: StopReason::ToolUse,
        ..answer("")
    };
    let reasoned = Response {
        content: vec![
            reasoning("First this, then that.", "rs_1"),
            ContentBlock::text("The answer."),
            reasoning("", "rs_2"),
            ContentBlock::ToolUse(call("call_1", "list", json!({}))),
        ],
        stop_reason: StopReason::ToolUse,
        usage: Usage {
            input_tokens: 12,
            output_tokens: 40,
            cache_read_input_tokens: 4096,
            reasoning_tokens: 30,
            ..Usage::default()
        },
        ..answer("")
    };
    let mut answers = vec![
        answer("Hello there, how are you?"),
        tool_calls,
        calls_only,
        reasoned,
    ];
    for reason in [StopReason::MaxTokens, StopReason::Refusal] {
        answers.push(Response {
            stop_reason: reason,
            ..answer("cut")
        });
    }
    answers
}

#[tokio::test]
async fn responses_api_requests_arrive_as_the_client_built_them() {
    for request in responses_requests() {
        check_request(responses, &request).await;
    }
}

#[tokio::test]
async fn responses_api_answers_arrive_as_the_server_built_them() {
    for response in responses_answers() {
        check_response(responses, &response, responses_decoded).await;
    }
}
