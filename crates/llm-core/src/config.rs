//! Choosing and configuring a provider: the settings an agent stores, resolved against the
//! environment into a ready client.

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::anthropic::{AnthropicClient, AnthropicConfig};
use crate::client::LlmClient;
use crate::error::{Error, Result};
use crate::http::HttpConfig;
use crate::openai::{OpenAiClient, OpenAiConfig};

/// A secret that never shows in `Debug` output, logs or error messages.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the one place that puts it in a header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provider {
    Anthropic,
    /// OpenAI's own API.
    #[serde(rename = "openai")]
    OpenAi,
    /// A local Ollama server, through its OpenAI-compatible endpoint.
    Ollama,
    /// Any other server speaking OpenAI chat completions (vLLM, LM Studio, ...); needs a
    /// base URL.
    #[serde(rename = "openai_compatible")]
    OpenAiCompatible,
}

impl Provider {
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "anthropic" => Ok(Self::Anthropic),
            "openai" => Ok(Self::OpenAi),
            "ollama" => Ok(Self::Ollama),
            "openai_compatible" | "openai-compatible" | "vllm" | "lmstudio" => {
                Ok(Self::OpenAiCompatible)
            }
            other => Err(Error::Config {
                details: format!(
                    "unknown provider {other:?}: expected anthropic, openai, ollama or openai_compatible"
                ),
            }),
        }
    }
}

/// Which provider and model an agent talks to. Serializable so an agent can store it; the
/// key is deserialized if present but never serialized, so stored settings hold no secret.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderConfig {
    pub provider: Provider,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing)]
    pub api_key: Option<ApiKey>,
}

impl ProviderConfig {
    pub fn new(provider: Provider) -> Self {
        Self {
            provider,
            model: None,
            base_url: None,
            api_key: None,
        }
    }

    /// Builds the client, taking what the config leaves open from `env` (a lookup such as
    /// `|name| std::env::var(name).ok()`): `ANTHROPIC_API_KEY`, `OPENAI_API_KEY`,
    /// `OLLAMA_HOST`.
    pub fn connect(
        &self,
        http: HttpConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn LlmClient>> {
        let key_from = |name: &str| {
            self.api_key
                .clone()
                .or_else(|| env(name).filter(|key| !key.is_empty()).map(ApiKey::new))
        };
        match self.provider {
            Provider::Anthropic => {
                let api_key = key_from("ANTHROPIC_API_KEY").ok_or_else(|| Error::Config {
                    details: "no api key for anthropic: set ANTHROPIC_API_KEY or pass one"
                        .to_owned(),
                })?;
                let mut config = AnthropicConfig::new(api_key);
                if let Some(base_url) = &self.base_url {
                    config.base_url.clone_from(base_url);
                }
                config.default_model.clone_from(&self.model);
                config.http = http;
                Ok(Arc::new(AnthropicClient::new(config)?))
            }
            Provider::OpenAi => {
                let api_key = key_from("OPENAI_API_KEY").ok_or_else(|| Error::Config {
                    details: "no api key for openai: set OPENAI_API_KEY or pass one".to_owned(),
                })?;
                let mut config = OpenAiConfig::openai(api_key);
                if let Some(base_url) = &self.base_url {
                    config.base_url.clone_from(base_url);
                }
                config.default_model.clone_from(&self.model);
                config.http = http;
                Ok(Arc::new(OpenAiClient::new(config)?))
            }
            Provider::Ollama => {
                let base_url = match (&self.base_url, env("OLLAMA_HOST")) {
                    (Some(base_url), _) => base_url.clone(),
                    (None, Some(host)) => ollama_base_url(&host),
                    (None, None) => ollama_base_url("127.0.0.1:11434"),
                };
                let mut config = OpenAiConfig::compatible(base_url, self.api_key.clone());
                config.name = "ollama";
                config.default_model.clone_from(&self.model);
                config.http = http;
                Ok(Arc::new(OpenAiClient::new(config)?))
            }
            Provider::OpenAiCompatible => {
                let base_url = self.base_url.clone().ok_or_else(|| Error::Config {
                    details: "provider openai_compatible needs a base url".to_owned(),
                })?;
                // Never OPENAI_API_KEY here: that would send OpenAI's secret to a third party.
                let mut config = OpenAiConfig::compatible(base_url, self.api_key.clone());
                config.default_model.clone_from(&self.model);
                config.http = http;
                Ok(Arc::new(OpenAiClient::new(config)?))
            }
        }
    }
}

/// `OLLAMA_HOST` is `host:port` or a URL; its OpenAI endpoint lives under `/v1`.
fn ollama_base_url(host: &str) -> String {
    let host = host.trim_end_matches('/');
    if host.starts_with("http://") || host.starts_with("https://") {
        format!("{host}/v1")
    } else {
        format!("http://{host}/v1")
    }
}
