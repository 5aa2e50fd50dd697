//! Choosing and configuring a provider: the settings an agent stores, resolved against the
//! environment into a ready client.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::anthropic::{ANTHROPIC_BASE_URL, AnthropicClient, AnthropicConfig};
use crate::client::LlmClient;
use crate::error::{Error, Result};
use crate::http::HttpConfig;
pub use crate::key::ApiKey;
use crate::openai::responses::OpenAiApi;
use crate::openai::{OPENAI_BASE_URL, OpenAiClient, OpenAiConfig};

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
    /// The name [`Provider::parse`] reads and stored settings hold.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
            Self::Ollama => "ollama",
            Self::OpenAiCompatible => "openai_compatible",
        }
    }

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
/// key is deserialized if present but never serialized, so stored settings hold no secret
/// (`api_key_env` names the variable that holds it instead).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderConfig {
    pub provider: Provider,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    #[serde(default, skip_serializing)]
    pub api_key: Option<ApiKey>,
    /// The environment variable holding the key, read when connecting: the explicit way to
    /// give any provider a key, and the only way to send `ANTHROPIC_API_KEY` or
    /// `OPENAI_API_KEY` to a base URL other than the provider's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Which API an OpenAI-style provider speaks: chat completions (the default, left out
    /// of stored settings) or the Responses API. Anthropic speaks only its own.
    #[serde(default, skip_serializing_if = "OpenAiApi::is_chat")]
    pub api: OpenAiApi,
}

impl ProviderConfig {
    pub fn new(provider: Provider) -> Self {
        Self {
            provider,
            model: None,
            base_url: None,
            api_key: None,
            api_key_env: None,
            api: OpenAiApi::default(),
        }
    }

    /// Builds the client, taking what the config leaves open from `env` (a lookup such as
    /// `|name| std::env::var(name).ok()`).
    ///
    /// The key is `api_key`, else the variable `api_key_env` names (which must be set),
    /// else the provider's own variable (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`), but only
    /// while the base URL is the provider's own: that secret is never sent to another host
    /// unless `api_key_env` names it. Ollama and OpenAI-compatible servers get a key only
    /// from the first two. Ollama's address comes from `OLLAMA_HOST`.
    pub fn connect(
        &self,
        http: HttpConfig,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Arc<dyn LlmClient>> {
        let explicit = self.explicit_key(env)?;
        // The provider's own variable, for its own host only.
        let own_key = |variable: &str, own_url: &str| {
            let own_host = self
                .base_url
                .as_deref()
                .is_none_or(|url| same_host(url, own_url));
            match env(variable).filter(|key| !key.is_empty()) {
                Some(key) if own_host => Ok(Some(ApiKey::new(key))),
                Some(_) => Err(Error::Config {
                    details: format!(
                        "no api key for {} at {}: {variable} is sent only to {own_url}; to send \
                         it to this base url, name it explicitly (api_key_env / --api-key-env \
                         {variable})",
                        self.provider.as_str(),
                        self.base_url.as_deref().unwrap_or(own_url),
                    ),
                }),
                None => Ok(None),
            }
        };
        let missing = |variable: &str| Error::Config {
            details: format!(
                "no api key for {}: set {variable}, or name the variable holding one with \
                 api_key_env (--api-key-env)",
                self.provider.as_str()
            ),
        };
        match self.provider {
            Provider::Anthropic if self.api != OpenAiApi::ChatCompletions => Err(Error::Config {
                details: format!(
                    "api {}: only the openai-style providers (openai, ollama, \
                     openai_compatible) speak another api; anthropic speaks its own",
                    self.api.as_str()
                ),
            }),
            Provider::Anthropic => {
                let api_key = match explicit {
                    Some(key) => key,
                    None => own_key("ANTHROPIC_API_KEY", ANTHROPIC_BASE_URL)?
                        .ok_or_else(|| missing("ANTHROPIC_API_KEY"))?,
                };
                let mut config = AnthropicConfig::new(api_key);
                if let Some(base_url) = &self.base_url {
                    config.base_url.clone_from(base_url);
                }
                config.default_model.clone_from(&self.model);
                config.http = http;
                Ok(Arc::new(AnthropicClient::new(config)?))
            }
            Provider::OpenAi => {
                let api_key = match explicit {
                    Some(key) => key,
                    None => own_key("OPENAI_API_KEY", OPENAI_BASE_URL)?
                        .ok_or_else(|| missing("OPENAI_API_KEY"))?,
                };
                let mut config = OpenAiConfig::openai(api_key);
                if let Some(base_url) = &self.base_url {
                    config.base_url.clone_from(base_url);
                }
                config.default_model.clone_from(&self.model);
                config.api = self.api;
                config.http = http;
                Ok(Arc::new(OpenAiClient::new(config)?))
            }
            Provider::Ollama => {
                let base_url = match (&self.base_url, env("OLLAMA_HOST")) {
                    (Some(base_url), _) => base_url.clone(),
                    (None, Some(host)) => ollama_base_url(&host),
                    (None, None) => ollama_base_url("127.0.0.1:11434"),
                };
                let mut config = OpenAiConfig::compatible(base_url, explicit);
                config.name = "ollama";
                config.default_model.clone_from(&self.model);
                config.api = self.api;
                config.http = http;
                Ok(Arc::new(OpenAiClient::new(config)?))
            }
            Provider::OpenAiCompatible => {
                let base_url = self.base_url.clone().ok_or_else(|| Error::Config {
                    details: "provider openai_compatible needs a base url".to_owned(),
                })?;
                // Never OPENAI_API_KEY unless named: that would send OpenAI's secret to a
                // third party.
                let mut config = OpenAiConfig::compatible(base_url, explicit);
                config.default_model.clone_from(&self.model);
                config.api = self.api;
                config.http = http;
                Ok(Arc::new(OpenAiClient::new(config)?))
            }
        }
    }

    /// The key given outright, else read from the variable `api_key_env` names.
    fn explicit_key(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<ApiKey>> {
        if let Some(key) = &self.api_key {
            return Ok(Some(key.clone()));
        }
        let Some(variable) = &self.api_key_env else {
            return Ok(None);
        };
        match env(variable).filter(|key| !key.is_empty()) {
            Some(key) => Ok(Some(ApiKey::new(key))),
            None => Err(Error::Config {
                details: format!(
                    "no api key for {}: api_key_env names {variable}, which is not set",
                    self.provider.as_str()
                ),
            }),
        }
    }
}

/// Whether `url` points at the host of `own` (scheme and port aside). A URL that does not
/// parse is nobody's own.
fn same_host(url: &str, own: &str) -> bool {
    let host = |url: &str| {
        reqwest::Url::parse(url)
            .ok()
            .and_then(|url| url.host_str().map(str::to_ascii_lowercase))
    };
    matches!((host(url), host(own)), (Some(a), Some(b)) if a == b)
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
