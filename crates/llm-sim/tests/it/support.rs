//! Shared test helpers: requests, llm-core clients aimed at a fake server, and the paths
//! of the shipped fixtures.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use llm_core::{
    AnthropicClient, AnthropicConfig, ApiKey, HttpConfig, LlmClient, ManualClock, OpenAiApi,
    OpenAiClient, OpenAiConfig, Request, Response, RetryPolicy, SplitMix64, Tool,
};
use serde_json::{Value, json};

pub const SECRET: &str = "sk-test-key-never-recorded-0123456789";

/// A script shipped in `fixtures/scripts`.
pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/scripts")
        .join(name)
}

pub fn tool(name: &str) -> Tool {
    Tool {
        name: name.to_owned(),
        description: format!("the {name} tool"),
        input_schema: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

/// A request with a system prompt, one user message and three tools.
pub fn request(prompt: &str) -> Request {
    let mut request = Request::new("model-test")
        .system("You fix violations.")
        .user(prompt)
        .max_tokens(256);
    request.tools = vec![
        tool("read_file"),
        tool("extract_function"),
        tool("complete"),
    ];
    request
}

/// What most tests compare: text, tool calls (name and input), thinking, stop reason.
pub fn gist(response: &Response) -> Value {
    json!({
        "text": response.text(),
        "tool_calls": response
            .tool_calls()
            .iter()
            .map(|call| json!({"id": call.id, "name": call.name, "input": call.input}))
            .collect::<Vec<_>>(),
        "thinking": response.thinking(),
        "stop_reason": response.stop_reason.as_str(),
    })
}

pub fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
    ))
}

/// Transport settings with a manual clock and no retries unless a test asks.
pub fn http(clock: &Arc<ManualClock>, retries: u32) -> HttpConfig {
    HttpConfig {
        retry: RetryPolicy {
            max_retries: retries,
            ..RetryPolicy::default()
        },
        clock: Arc::clone(clock) as _,
        rng: Arc::new(SplitMix64::seeded(1)),
        ..HttpConfig::default()
    }
}

pub fn anthropic(url: &str, http: HttpConfig) -> Arc<dyn LlmClient> {
    let mut config = AnthropicConfig::new(ApiKey::new(SECRET));
    config.base_url = url.to_owned();
    config.http = http;
    Arc::new(AnthropicClient::new(config).expect("anthropic client"))
}

pub fn openai(url: &str, http: HttpConfig) -> Arc<dyn LlmClient> {
    let mut config = OpenAiConfig::openai(ApiKey::new(SECRET));
    config.base_url = format!("{url}/v1");
    config.http = http;
    Arc::new(OpenAiClient::new(config).expect("openai client"))
}

/// The OpenAI client in its Responses API mode.
pub fn responses(url: &str, http: HttpConfig) -> Arc<dyn LlmClient> {
    let mut config = OpenAiConfig::openai(ApiKey::new(SECRET));
    config.base_url = format!("{url}/v1");
    config.api = OpenAiApi::Responses;
    config.http = http;
    Arc::new(OpenAiClient::new(config).expect("responses client"))
}
