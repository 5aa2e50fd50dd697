//! Clients wired to a test server and a manual clock.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use llm_core::{
    AnthropicClient, AnthropicConfig, ApiKey, HttpConfig, ManualClock, OpenAiClient, OpenAiConfig,
    RetryPolicy, SplitMix64,
};

pub const SECRET: &str = "sk-test-very-secret-key";

/// 2015-10-21 07:28:00 UTC, the moment HTTP-date tests count from.
pub fn epoch() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_480)
}

pub fn http_config(clock: &Arc<ManualClock>) -> HttpConfig {
    HttpConfig {
        retry: RetryPolicy {
            max_retries: 2,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(8),
            max_retry_after: Duration::from_secs(60),
        },
        stream_idle_timeout: Duration::from_secs(30),
        clock: Arc::clone(clock) as _,
        rng: Arc::new(SplitMix64::seeded(7)),
        ..HttpConfig::default()
    }
}

pub fn anthropic(url: &str, clock: &Arc<ManualClock>) -> AnthropicClient {
    let mut config = AnthropicConfig::new(ApiKey::new(SECRET));
    config.base_url = url.to_owned();
    config.beta = vec!["beta-a".into(), "beta-b".into()];
    config.http = http_config(clock);
    AnthropicClient::new(config).expect("anthropic client")
}

pub fn openai(url: &str, clock: &Arc<ManualClock>) -> OpenAiClient {
    let mut config = OpenAiConfig::openai(ApiKey::new(SECRET));
    config.base_url = format!("{url}/v1");
    config.http = http_config(clock);
    OpenAiClient::new(config).expect("openai client")
}

pub fn compatible(url: &str, clock: &Arc<ManualClock>) -> OpenAiClient {
    let mut config = OpenAiConfig::compatible(format!("{url}/v1"), None);
    config.http = http_config(clock);
    OpenAiClient::new(config).expect("compatible client")
}

pub fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(epoch()))
}
