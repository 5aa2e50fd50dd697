//! The neutral types: their JSON shape, folding events, token estimates, provider config.

use std::collections::BTreeMap;

use llm_core::tokens::{Encoding, count_request, estimate_request, estimate_text};
use llm_core::{
    ApiKey, ContentBlock, Error, Event, HttpConfig, Provider, ProviderConfig, Request, Response,
    ResponseBuilder, StopReason, ToolCall, Usage, collect, events_from_response,
};
use pretty_assertions::assert_eq;
use serde_json::json;

fn sample_response() -> Response {
    Response {
        content: vec![
            ContentBlock::Thinking {
                text: "first".into(),
                signature: Some("sig-1".into()),
            },
            ContentBlock::Thinking {
                text: "second".into(),
                signature: Some("sig-2".into()),
            },
            ContentBlock::RedactedThinking {
                data: "opaque".into(),
            },
            ContentBlock::text("answer"),
            ContentBlock::ToolUse(ToolCall {
                id: "t1".into(),
                name: "run".into(),
                input: json!({"cmd": "ls"}),
            }),
        ],
        stop_reason: StopReason::Other("new_reason".into()),
        usage: Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_creation_input_tokens: 3,
            cache_read_input_tokens: 4,
            reasoning_tokens: 1,
            cache_creation_1h_input_tokens: 0,
        },
        model: "m".into(),
        id: Some("id".into()),
        request_id: Some("req".into()),
        headers: BTreeMap::from([("request-id".into(), "req".into())]),
        service_tier: None,
    }
}

#[tokio::test]
async fn a_replayed_response_collects_to_itself() {
    let response = sample_response();
    let events = events_from_response(&response);
    let stream = Box::pin(futures_util::stream::iter(events.into_iter().map(Ok)));

    assert_eq!(collect(stream).await.expect("collect"), response);
}

#[test]
fn a_builder_without_stop_reports_a_cut_stream() {
    let mut builder = ResponseBuilder::default();
    builder.push(Event::TextDelta { text: "par".into() });
    builder.push(Event::TextDelta {
        text: "tial".into(),
    });

    assert_eq!(builder.response().text(), "partial");
    assert!(matches!(
        builder.finish(),
        Err(Error::StreamInterrupted { .. })
    ));
}

#[test]
fn request_and_response_json_shapes_are_stable() {
    let request: Request = serde_json::from_value(json!({
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "text": "t", "signature": "s"},
                {"type": "tool_use", "id": "1", "name": "f", "input": {}},
            ]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "1", "content": "ok"}]},
        ],
        "tool_choice": {"type": "tool", "name": "f"},
        "thinking": {"budget_tokens": 2048},
    }))
    .expect("request json");
    assert_eq!(request.thinking.map(|t| t.budget_tokens), Some(2048));
    assert_eq!(request.max_tokens, 0);

    let value = serde_json::to_value(sample_response()).expect("response json");
    assert_eq!(value["stop_reason"], json!("new_reason"));
    assert_eq!(
        value["content"][4],
        json!({"type": "tool_use", "id": "t1", "name": "run", "input": {"cmd": "ls"}})
    );
    let back: Response = serde_json::from_value(value).expect("round trip");
    assert_eq!(back, sample_response());
}

#[test]
fn token_estimates() {
    let check = |text: &str, expected: u64| {
        assert_eq!(estimate_text(text), expected, "{text:?}");
    };
    check("", 0);
    check("hello world", 2);
    check("The quick brown fox jumps over the lazy dog.", 10);
    check("internationalization", 4);
    check("1234567", 3);
    check("fn main() {\n    println!(\"hi\");\n}", 12);
    check("日本語", 3);

    let request = Request::new("m").system("be brief").user("hello world");
    assert_eq!(estimate_request(&request), 3 + (4 + 2) + (4 + 2));
}

/// The estimate against a real BPE (o200k) on a mixed corpus: prose, JSON, Rust, Markdown.
#[test]
fn estimate_tracks_a_real_bpe() {
    let corpus = [
        ("english", include_str!("corpus/english.txt")),
        ("json", include_str!("corpus/data.json")),
        ("rust openai.rs", include_str!("../../src/openai.rs")),
        ("rust stream.rs", include_str!("../../src/stream.rs")),
        ("rust test", include_str!("anthropic.rs")),
        ("markdown", include_str!("corpus/notes.md")),
    ];
    let mut total_error = 0.0;
    for (name, text) in corpus {
        let real = Encoding::O200k.count(text) as f64;
        let error = (estimate_text(text) as f64 - real).abs() / real;
        println!(
            "{name}: {real} tokens, estimate off by {:.1}%",
            error * 100.0
        );
        assert!(
            error < 0.12,
            "{name}: estimate off by {:.1}%",
            error * 100.0
        );
        total_error += error;
    }
    let mean = total_error / corpus.len() as f64;
    println!("mean error {:.1}%", mean * 100.0);
    assert!(mean < 0.05, "mean error {:.1}%", mean * 100.0);
}

#[test]
fn exact_counts_for_openai_models() {
    assert_eq!(Encoding::for_model("gpt-4o-mini"), Some(Encoding::O200k));
    assert_eq!(Encoding::for_model("o3-mini"), Some(Encoding::O200k));
    assert_eq!(Encoding::for_model("gpt-4-turbo"), Some(Encoding::Cl100k));
    assert_eq!(Encoding::for_model("llama3.1:8b"), None);
    assert_eq!(Encoding::O200k.count("hello world"), 2);
    assert_eq!(Encoding::Cl100k.count("hello world"), 2);

    let request = Request::new("gpt-4o")
        .system("be brief")
        .user("hello world");
    // Priming 3; system: 3 + "system" 1 + "be brief" 2; user: 3 + "user" 1 + 2.
    assert_eq!(count_request(&request, Encoding::O200k), 3 + 6 + 6);
}

#[test]
fn provider_config_takes_keys_from_the_lookup_and_never_stores_them() {
    let env = |name: &str| (name == "ANTHROPIC_API_KEY").then(|| "sk-env".to_owned());
    let none = |_: &str| None;

    let anthropic = ProviderConfig::new(Provider::Anthropic);
    assert!(anthropic.connect(HttpConfig::default(), &env).is_ok());
    let error = ProviderConfig::new(Provider::OpenAi)
        .connect(HttpConfig::default(), &env)
        .err()
        .expect("no openai key");
    assert!(error.to_string().contains("OPENAI_API_KEY"), "{error}");
    assert!(
        ProviderConfig::new(Provider::OpenAiCompatible)
            .connect(HttpConfig::default(), &none)
            .is_err()
    );
    assert!(
        ProviderConfig::new(Provider::Ollama)
            .connect(HttpConfig::default(), &none)
            .is_ok()
    );

    let mut stored = ProviderConfig::new(Provider::OpenAiCompatible);
    stored.model = Some("qwen".into());
    stored.base_url = Some("http://127.0.0.1:8000/v1".into());
    stored.api_key = Some(ApiKey::new("sk-secret"));
    let json = serde_json::to_value(&stored).expect("json");
    assert_eq!(
        json,
        json!({"provider": "openai_compatible", "model": "qwen", "base_url": "http://127.0.0.1:8000/v1"})
    );
    assert!(!format!("{stored:?}").contains("sk-secret"));
    assert_eq!(
        Provider::parse("vllm").expect("vllm"),
        Provider::OpenAiCompatible
    );
    assert!(Provider::parse("gemini").is_err());
}
