//! Which key goes to which host: a provider's own key only to its own API unless named,
//! any key through `api_key_env`.

use llm_core::{HttpConfig, Provider, ProviderConfig, Request};
use pretty_assertions::assert_eq;

use crate::server::{Reply, TestServer};
use crate::support::{clock, http_config};

const OPENAI_OK: &str = r#"{"id":"c","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}"#;
const ANTHROPIC_OK: &str = r#"{"id":"m","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}"#;

/// An environment holding both providers' keys and a key of the user's own.
fn env(name: &str) -> Option<String> {
    match name {
        "OPENAI_API_KEY" => Some("sk-openai-own".to_owned()),
        "ANTHROPIC_API_KEY" => Some("sk-ant-own".to_owned()),
        "GROQ_KEY" => Some("gsk-groq".to_owned()),
        _ => None,
    }
}

fn config(provider: Provider, base_url: &str, key_env: Option<&str>) -> ProviderConfig {
    let mut config = ProviderConfig::new(provider);
    config.base_url = Some(base_url.to_owned());
    config.model = Some("m".to_owned());
    config.api_key_env = key_env.map(str::to_owned);
    config
}

fn http() -> HttpConfig {
    http_config(&clock())
}

#[test]
fn a_provider_s_own_key_is_not_sent_to_another_host_unless_named() {
    for (provider, variable) in [
        (Provider::OpenAi, "OPENAI_API_KEY"),
        (Provider::Anthropic, "ANTHROPIC_API_KEY"),
    ] {
        let error = config(provider, "http://127.0.0.1:9/v1", None)
            .connect(http(), &env)
            .err()
            .expect("no key for a foreign host");
        let text = error.to_string();
        assert!(
            text.contains(&format!("{variable} is sent only to"))
                && text.contains(&format!("--api-key-env {variable}")),
            "{text}"
        );
    }
    // Their own hosts still get them without being asked.
    assert!(
        config(Provider::OpenAi, "https://api.openai.com/v1", None)
            .connect(http(), &env)
            .is_ok()
    );
    assert!(
        ProviderConfig::new(Provider::Anthropic)
            .connect(http(), &env)
            .is_ok()
    );
}

#[test]
fn a_named_variable_that_is_not_set_is_an_error_naming_it() {
    let error = config(Provider::Ollama, "http://127.0.0.1:9/v1", Some("NOPE_KEY"))
        .connect(http(), &env)
        .err()
        .expect("unset variable");
    assert_eq!(
        error.to_string(),
        "invalid configuration: no api key for ollama: api_key_env names NOPE_KEY, which is not set"
    );
}

#[tokio::test]
async fn every_provider_sends_the_key_its_variable_names() {
    let request = Request::new("m").user("hi");
    for (provider, key_env, header, expected) in [
        (
            Provider::OpenAiCompatible,
            "GROQ_KEY",
            "authorization",
            "Bearer gsk-groq",
        ),
        (
            Provider::Ollama,
            "GROQ_KEY",
            "authorization",
            "Bearer gsk-groq",
        ),
        (
            Provider::OpenAi,
            "OPENAI_API_KEY",
            "authorization",
            "Bearer sk-openai-own",
        ),
        (
            Provider::Anthropic,
            "ANTHROPIC_API_KEY",
            "x-api-key",
            "sk-ant-own",
        ),
    ] {
        let (reply, base_url) = match provider {
            Provider::Anthropic => (ANTHROPIC_OK, ""),
            _ => (OPENAI_OK, "/v1"),
        };
        let server = TestServer::start(vec![Reply::json(200, reply)]).await;
        let client = config(
            provider,
            &format!("{}{base_url}", server.url),
            Some(key_env),
        )
        .connect(http(), &env)
        .expect("a client");

        client.complete(&request).await.expect("an answer");

        let requests = server.requests();
        assert_eq!(requests[0].header(header), Some(expected), "{provider:?}");
    }
    // Without a named key, an OpenAI-compatible server gets none.
    let server = TestServer::start(vec![Reply::json(200, OPENAI_OK)]).await;
    config(
        Provider::OpenAiCompatible,
        &format!("{}/v1", server.url),
        None,
    )
    .connect(http(), &env)
    .expect("a client")
    .complete(&request)
    .await
    .expect("an answer");
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[test]
fn stored_settings_keep_the_variable_s_name_never_a_key() {
    let stored = config(
        Provider::OpenAiCompatible,
        "http://127.0.0.1:8000/v1",
        Some("GROQ_KEY"),
    );
    let json = serde_json::to_value(&stored).expect("json");
    assert_eq!(
        json,
        serde_json::json!({"provider": "openai_compatible", "model": "m", "base_url": "http://127.0.0.1:8000/v1", "api_key_env": "GROQ_KEY"})
    );
}
