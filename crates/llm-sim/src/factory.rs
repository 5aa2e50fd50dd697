//! The mode switch: one place that builds a real, simulated, recording or playback client
//! from explicit settings and the environment.
//!
//! | variable | meaning |
//! | --- | --- |
//! | `MERKLE_LLM_MODE` | `real` (default), `simulated`, `record` or `playback` |
//! | `MERKLE_LLM_SCRIPT` | simulated: a script or pattern file (optional: without it every answer is "Simulated response") |
//! | `MERKLE_LLM_RECORDING` | record: where to save; playback: what to replay |
//! | `MERKLE_LLM_PROVIDER` | real and record: `anthropic` (default), `openai`, `ollama`, `openai_compatible` |
//! | `MERKLE_LLM_MODEL`, `MERKLE_LLM_BASE_URL` | real and record: the provider's model and URL |
//! | `MERKLE_LLM_API` | real and record: `chat` (default) or `responses`, the API an OpenAI-style provider speaks |
//! | `MERKLE_LLM_API_KEY_ENV` | real and record: the variable holding the key (its name, never the key) |
//! | `MERKLE_LLM_API_KEY` | real and record: the key itself, when no variable is named |
//! | `MERKLE_LLM_TIMEOUT`, `MERKLE_LLM_IDLE_TIMEOUT` | seconds: one request's bound, and the longest silence in a stream |
//!
//! Otherwise keys come from `ANTHROPIC_API_KEY` / `OPENAI_API_KEY` as llm-core reads them,
//! and only for the provider's own host. The mode wraps the provider the settings name (the
//! simulator included, [`Settings::simulator`]): record records its answers, playback
//! replaces it. The environment is read only through the lookup the caller passes, so tests
//! never touch the process's own.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use llm_core::{ApiKey, HttpConfig, LlmClient, OpenAiApi, Provider, ProviderConfig};

use crate::client::SimulatedClient;
use crate::error::{Error, Result};
use crate::playback::{Playback, Scrubber};
use crate::record::RecordingClient;
use crate::script::{Script, Step};
use crate::source::load_strategy;

pub const MODE_VAR: &str = "MERKLE_LLM_MODE";
pub const SCRIPT_VAR: &str = "MERKLE_LLM_SCRIPT";
pub const RECORDING_VAR: &str = "MERKLE_LLM_RECORDING";
pub const PROVIDER_VAR: &str = "MERKLE_LLM_PROVIDER";
pub const MODEL_VAR: &str = "MERKLE_LLM_MODEL";
pub const BASE_URL_VAR: &str = "MERKLE_LLM_BASE_URL";
pub const API_VAR: &str = "MERKLE_LLM_API";
pub const API_KEY_ENV_VAR: &str = "MERKLE_LLM_API_KEY_ENV";
pub const API_KEY_VAR: &str = "MERKLE_LLM_API_KEY";
pub const TIMEOUT_VAR: &str = "MERKLE_LLM_TIMEOUT";
pub const IDLE_TIMEOUT_VAR: &str = "MERKLE_LLM_IDLE_TIMEOUT";

/// Which kind of client to build.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A provider over the network.
    Real,
    /// A script (or pattern file) answers; no network.
    Simulated,
    /// A provider answers and every call is recorded for playback.
    Record,
    /// A recording answers; no network.
    Playback,
}

impl Mode {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "real" => Some(Self::Real),
            "simulated" => Some(Self::Simulated),
            "record" => Some(Self::Record),
            "playback" => Some(Self::Playback),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Real => "real",
            Self::Simulated => "simulated",
            Self::Record => "record",
            Self::Playback => "playback",
        }
    }
}

/// What the caller decides; whatever is left `None` comes from the environment.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    pub mode: Option<Mode>,
    pub script: Option<PathBuf>,
    pub recording: Option<PathBuf>,
    pub provider: Option<ProviderConfig>,
    /// The provider is the simulator (the script, else the fixed answer): real mode answers
    /// from it, and record mode records its answers. It never falls back to a real provider.
    pub simulator: bool,
    pub http: HttpConfig,
    /// The bound on one request, over `MERKLE_LLM_TIMEOUT`, over `http`'s.
    pub timeout: Option<Duration>,
    /// The longest silence in a stream, over `MERKLE_LLM_IDLE_TIMEOUT`, over `http`'s.
    pub idle_timeout: Option<Duration>,
    /// Applied when recording, and to live requests in playback.
    pub scrubber: Scrubber,
}

/// A built client, and in record mode what is needed to save the recording.
pub struct Setup {
    pub mode: Mode,
    pub client: Arc<dyn LlmClient>,
    /// Who answers, for the record: the provider's name (`anthropic`, `openai`, `ollama`,
    /// `openai_compatible`), `sim` for a script or the fixed answer, `playback` for a
    /// recording.
    pub provider: String,
    /// The model asked for, where the settings name one (else the provider's default).
    pub model: Option<String>,
    recorder: Option<(Arc<RecordingClient>, PathBuf)>,
}

impl std::fmt::Debug for Setup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Setup")
            .field("mode", &self.mode)
            .field("recorder", &self.recorder)
            .finish_non_exhaustive()
    }
}

impl Setup {
    /// The recording client in record mode.
    pub fn recorder(&self) -> Option<&Arc<RecordingClient>> {
        self.recorder.as_ref().map(|(recorder, _)| recorder)
    }

    /// Ends the session: in record mode, saves the recording where `MERKLE_LLM_RECORDING`
    /// (or the settings) said and returns that path; in other modes does nothing.
    pub fn finish(&self) -> Result<Option<&Path>> {
        match &self.recorder {
            Some((recorder, path)) => {
                recorder.save(path)?;
                Ok(Some(path))
            }
            None => Ok(None),
        }
    }
}

/// Builds the client `settings` and `env` describe; `env` looks a variable up (e.g.
/// `|name| std::env::var(name).ok()`). A setting the mode needs and neither gives is an
/// error naming its variable.
pub fn build(settings: Settings, env: &dyn Fn(&str) -> Option<String>) -> Result<Setup> {
    let var = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    let mode = match settings.mode {
        Some(mode) => mode,
        None => match var(MODE_VAR) {
            None => Mode::Real,
            Some(value) => Mode::parse(value.trim()).ok_or(Error::InvalidSetting {
                variable: MODE_VAR,
                value,
                expected: "real, simulated, record or playback",
            })?,
        },
    };
    let path_of =
        |given: Option<PathBuf>, variable: &str| given.or_else(|| var(variable).map(PathBuf::from));
    let setup = |client: Arc<dyn LlmClient>, provider: &str, model: Option<String>| Setup {
        mode,
        client,
        provider: provider.to_owned(),
        model,
        recorder: None,
    };
    let mut http = settings.http;
    if let Some(after) = duration_setting(settings.timeout, TIMEOUT_VAR, &var)? {
        http.request_timeout = after;
    }
    if let Some(after) = duration_setting(settings.idle_timeout, IDLE_TIMEOUT_VAR, &var)? {
        http.stream_idle_timeout = after;
    }
    let script = path_of(settings.script, SCRIPT_VAR);
    let simulated = |script: Option<PathBuf>| -> Result<Arc<dyn LlmClient>> {
        Ok(Arc::new(match script {
            Some(path) => SimulatedClient::from_boxed(load_strategy(&path)?),
            None => SimulatedClient::fixed(),
        }))
    };
    let model = var(MODEL_VAR);
    match mode {
        Mode::Real if settings.simulator => Ok(setup(simulated(script)?, "sim", model)),
        Mode::Real => {
            let provider = provider_config(settings.provider, &var)?;
            let (name, model) = (provider.provider.as_str(), provider.model.clone());
            Ok(setup(provider.connect(http, env)?, name, model))
        }
        Mode::Simulated => Ok(setup(simulated(script)?, "sim", model)),
        Mode::Playback => {
            let path = path_of(settings.recording, RECORDING_VAR).ok_or(Error::MissingSetting {
                variable: RECORDING_VAR,
                mode: mode.as_str(),
                hint: "the recording to replay",
            })?;
            let playback = Playback::load(&path)?.with_scrubber(settings.scrubber);
            Ok(setup(
                Arc::new(SimulatedClient::new(playback)),
                "playback",
                model,
            ))
        }
        Mode::Record => {
            let path = path_of(settings.recording, RECORDING_VAR).ok_or(Error::MissingSetting {
                variable: RECORDING_VAR,
                mode: mode.as_str(),
                hint: "where to save the recording",
            })?;
            let (answering, provider, model) = if settings.simulator {
                (simulated(script)?, "sim", model)
            } else {
                let config = provider_config(settings.provider, &var)?;
                let (name, model) = (config.provider.as_str(), config.model.clone());
                (config.connect(http, env)?, name, model)
            };
            let recorder =
                Arc::new(RecordingClient::new(answering).with_scrubber(settings.scrubber));
            Ok(Setup {
                mode,
                client: Arc::clone(&recorder) as Arc<dyn LlmClient>,
                provider: provider.to_owned(),
                model,
                recorder: Some((recorder, path)),
            })
        }
    }
}

/// A positive number of seconds: `given`, else the variable `variable`, else `None`.
fn duration_setting(
    given: Option<Duration>,
    variable: &'static str,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Duration>> {
    if given.is_some() {
        return Ok(given);
    }
    let Some(value) = var(variable) else {
        return Ok(None);
    };
    parse_seconds(value.trim())
        .map(Some)
        .ok_or(Error::InvalidSetting {
            variable,
            value,
            expected: "a number of seconds greater than 0",
        })
}

/// `30`, `0.5`: seconds, more than none and few enough to be a `Duration`.
pub fn parse_seconds(text: &str) -> Option<Duration> {
    let seconds = text.parse::<f64>().ok()?;
    (seconds > 0.0)
        .then(|| Duration::try_from_secs_f64(seconds).ok())
        .flatten()
}

fn provider_config(
    given: Option<ProviderConfig>,
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderConfig> {
    if let Some(given) = given {
        return Ok(given);
    }
    let provider = match var(PROVIDER_VAR) {
        None => Provider::Anthropic,
        Some(value) => Provider::parse(value.trim()).map_err(|_| Error::InvalidSetting {
            variable: PROVIDER_VAR,
            value,
            expected: "anthropic, openai, ollama or openai_compatible",
        })?,
    };
    let mut config = ProviderConfig::new(provider);
    config.model = var(MODEL_VAR);
    config.base_url = var(BASE_URL_VAR);
    if let Some(value) = var(API_VAR) {
        config.api = OpenAiApi::parse(value.trim()).map_err(|_| Error::InvalidSetting {
            variable: API_VAR,
            value,
            expected: "chat or responses",
        })?;
    }
    config.api_key_env = var(API_KEY_ENV_VAR).map(|name| name.trim().to_owned());
    if config.api_key_env.is_none() {
        config.api_key = var(API_KEY_VAR).map(|key| ApiKey::new(key.trim()));
    }
    Ok(config)
}

/// A scripted client from inline steps, for tests.
pub fn for_testing(responses: impl IntoIterator<Item = Step>) -> SimulatedClient {
    SimulatedClient::scripted(Script {
        metadata: None,
        responses: responses.into_iter().collect(),
    })
}
