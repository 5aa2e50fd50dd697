//! `merkle llm complete` and `merkle sim serve`: one request to a model from the command line,
//! and the fake Anthropic/OpenAI server that answers from a script.
//!
//! Both build their own tokio runtime (the binary is the only place that may). Settings layer
//! as everywhere: flags over `MERKLE_LLM_*` variables over defaults, resolved by
//! `llm_sim::build`, so `MERKLE_LLM_MODE=simulated merkle llm complete hi` needs no key.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use futures_util::StreamExt;
use generate::agent_model;
use llm_core::{Event, Request, Response, ResponseBuilder};
use llm_sim::{FakeServer, Mode, Settings};
use serde_json::{Value, json};

#[derive(Subcommand, Debug)]
pub(crate) enum LlmCommand {
    /// Send one request and print the answer (as it arrives with --stream)
    Complete(CompleteArgs),
    /// Count a request's input tokens as the provider counts them (Anthropic's and OpenAI's
    /// count endpoints, else the model's tokenizer), and say where the figure comes from;
    /// with --offline, merkle's estimate, calibrated by the answers earlier commands got
    Count(CountArgs),
}

/// The request a model command sends or counts.
#[derive(Args, Debug)]
pub(crate) struct InputArgs {
    /// The user message, or - to read it from standard input
    #[arg(required_unless_present = "request")]
    prompt: Option<String>,
    /// A whole request as JSON (model, system, messages, tools, ...); PROMPT is appended as
    /// one more user message, and --system and --model override its fields
    #[arg(long, value_name = "FILE.json")]
    request: Option<PathBuf>,
    /// The system prompt
    #[arg(long)]
    system: Option<String>,
}

impl InputArgs {
    /// The request these flags describe: a request file, with PROMPT appended as a user
    /// message, and the system prompt and `model` (when given) overriding its own.
    fn request(&self, model: Option<&str>) -> Result<Request> {
        let mut request = match &self.request {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read {}", path.display()))?;
                serde_json::from_str::<Request>(&text)
                    .with_context(|| format!("{} is not a request", path.display()))?
            }
            None => Request::default(),
        };
        match self.prompt.as_deref() {
            Some("-") => {
                let mut prompt = String::new();
                std::io::stdin()
                    .read_to_string(&mut prompt)
                    .context("reading the prompt from standard input")?;
                request = request.user(prompt);
            }
            Some(prompt) => request = request.user(prompt),
            // Clap requires a prompt unless a request file gives the messages.
            None => {}
        }
        if let Some(system) = &self.system {
            request.system = Some(system.clone());
        }
        if let Some(model) = model {
            model.clone_into(&mut request.model);
        }
        Ok(request)
    }
}

#[derive(Args, Debug)]
pub(crate) struct CountArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    model: ModelArgs,
    /// Ask no provider: the estimate, scaled by what earlier answers of the model taught
    /// (kept in the workspace's store folder)
    #[arg(long)]
    offline: bool,
}

#[derive(Args, Debug)]
pub(crate) struct CompleteArgs {
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    model: ModelArgs,
    /// The most tokens to generate [default: the request's, else 4096]
    #[arg(value_parser = crate::at_least_one::<u32>, long)]
    max_tokens: Option<u32>,
    /// Print the text as it arrives
    #[arg(long, conflicts_with = "schema")]
    stream: bool,
    /// A JSON Schema (a .json file) the answer must follow (structured outputs: OpenAI's
    /// strict response format, a forced tool on Anthropic); the answer is checked against it
    /// and printed as JSON (with --json, as `structured`); one that does not follow it is an
    /// error
    #[arg(long, value_name = "FILE.json")]
    schema: Option<PathBuf>,
}

/// Which model answers: a provider, or the simulator (a script, a recording to play back).
///
/// The provider and the mode are separate choices: `--provider` (or `--script`, which means
/// the simulator) names who answers, and the mode (`--record` or `--playback`, else
/// `MERKLE_LLM_MODE`, else real) says whether that provider answers, is recorded, or is
/// replaced by a recording. So one command line is switched by the environment alone.
#[derive(Args, Debug, Clone, Default)]
pub(crate) struct ModelArgs {
    /// The provider [default: the acting agent's own (`merkle agent add --provider`), else
    /// MERKLE_LLM_PROVIDER, else anthropic]. MERKLE_LLM_MODE wins over it: record records
    /// this provider, playback and simulated replace it; --record and --playback win over
    /// MERKLE_LLM_MODE
    #[arg(long, value_parser = agent_model::PROVIDERS)]
    pub(crate) provider: Option<String>,
    /// The model [default: MERKLE_LLM_MODEL, else the provider's default]
    #[arg(long)]
    pub(crate) model: Option<String>,
    /// The provider's base URL [default: MERKLE_LLM_BASE_URL, else the provider's own].
    /// ANTHROPIC_API_KEY and OPENAI_API_KEY are sent only to their provider's own URL; name
    /// one with --api-key-env to send it elsewhere
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// The API an OpenAI-style provider (openai, ollama, openai-compatible) speaks: chat
    /// (chat completions) or responses (OpenAI's Responses API, which carries reasoning
    /// between turns) [default: MERKLE_LLM_API, else chat]
    #[arg(long, value_parser = agent_model::APIS)]
    pub(crate) api: Option<String>,
    /// The environment variable holding the provider's key (its name, not the key), for any
    /// provider: a keyed vLLM, LiteLLM, OpenRouter or Groq server [default:
    /// MERKLE_LLM_API_KEY_ENV; else the key in MERKLE_LLM_API_KEY; else ANTHROPIC_API_KEY /
    /// OPENAI_API_KEY for their own URL; else none for ollama and openai-compatible]
    #[arg(long, value_name = "NAME", value_parser = parse_variable_name)]
    pub(crate) api_key_env: Option<String>,
    /// The longest one request to the model may take, in seconds [default:
    /// MERKLE_LLM_TIMEOUT, else 600]; retries are requests of their own
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub(crate) timeout: Option<Duration>,
    /// The longest silence in a streamed answer, in seconds [default:
    /// MERKLE_LLM_IDLE_TIMEOUT, else 120]
    #[arg(long, value_name = "SECONDS", value_parser = parse_seconds)]
    pub(crate) idle_timeout: Option<Duration>,
    /// Answer from this script or pattern file, without any API (implies --provider sim)
    /// [default with --provider sim: MERKLE_LLM_SCRIPT, else every answer is "Simulated response"]
    #[arg(long, value_name = "FILE", conflicts_with = "playback")]
    pub(crate) script: Option<PathBuf>,
    /// Answer from a recording made with --record, without any API; a request the recording
    /// does not hold is an error naming the closest one
    #[arg(long, value_name = "FILE", conflicts_with_all = ["record", "provider"])]
    pub(crate) playback: Option<PathBuf>,
    /// Record every model call of this run to FILE, for --playback: the provider's answers,
    /// or the simulator's with --provider sim or --script
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,
    /// The provider is an agent's own (`or_stored`): its model, base URL and key are the
    /// agent's or the flags', never MERKLE_LLM_MODEL, MERKLE_LLM_BASE_URL or the
    /// MERKLE_LLM_API_KEY* variables meant for another provider.
    #[arg(skip)]
    from_agent: bool,
}

/// `--timeout 30`, `--idle-timeout 0.5`: a positive number of seconds.
pub(crate) fn parse_seconds(text: &str) -> Result<Duration, String> {
    llm_sim::factory::parse_seconds(text.trim())
        .ok_or_else(|| format!("{text:?} is not a number of seconds greater than 0"))
}

/// An environment variable's name, so that a key pasted in its place is refused rather than
/// stored.
pub(crate) fn parse_variable_name(text: &str) -> Result<String, String> {
    let mut chars = text.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(text.to_owned())
    } else {
        Err(
            "expected the name of an environment variable (letters, digits and _, like \
             GROQ_API_KEY), not the key itself"
                .to_owned(),
        )
    }
}

impl ModelArgs {
    /// Whether a model was asked for: a flag here, or `MERKLE_LLM_MODE` / `MERKLE_LLM_PROVIDER`
    /// in the environment. A key alone is not a request to spend it.
    pub(crate) fn is_configured(&self) -> bool {
        self.provider.is_some()
            || self.script.is_some()
            || self.playback.is_some()
            || self.record.is_some()
            || [llm_sim::factory::MODE_VAR, llm_sim::factory::PROVIDER_VAR]
                .iter()
                .any(|v| std::env::var(v).is_ok_and(|v| !v.trim().is_empty()))
    }

    /// These flags, completed by the model stored with `agent` (`merkle agent add --provider`)
    /// where they choose no provider themselves and `MERKLE_LLM_MODE` does not switch the
    /// whole process: the flags' `--model` and `--base-url` still win over the stored ones.
    pub(crate) fn or_stored(&self, agent: Option<&merkle_store::Agent>) -> ModelArgs {
        self.or_stored_in(agent, |name| std::env::var(name).ok())
    }

    /// [`ModelArgs::or_stored`] in the environment `environment` reads.
    fn or_stored_in(
        &self,
        agent: Option<&merkle_store::Agent>,
        environment: impl Fn(&str) -> Option<String>,
    ) -> ModelArgs {
        let stored = |key: &str| agent.and_then(|a| a.settings.get(key)).cloned();
        let chosen = self.provider.is_some() || self.script.is_some() || self.playback.is_some();
        let switched =
            environment(llm_sim::factory::MODE_VAR).is_some_and(|v| !v.trim().is_empty());
        match stored(agent_model::PROVIDER) {
            Some(provider) if !chosen && !switched => ModelArgs {
                provider: Some(provider),
                model: self.model.clone().or_else(|| stored(agent_model::MODEL)),
                base_url: self
                    .base_url
                    .clone()
                    .or_else(|| stored(agent_model::BASE_URL)),
                api: self.api.clone().or_else(|| stored(agent_model::API)),
                api_key_env: self
                    .api_key_env
                    .clone()
                    .or_else(|| stored(agent_model::API_KEY_ENV)),
                from_agent: true,
                ..self.clone()
            },
            _ => self.clone(),
        }
    }

    /// Whether a flag here names a model (the environment aside).
    pub(crate) fn names_a_model(&self) -> bool {
        self.provider.is_some()
            || self.model.is_some()
            || self.base_url.is_some()
            || self.script.is_some()
            || self.playback.is_some()
            || self.record.is_some()
    }

    /// The factory's settings for these flags, and the environment they override.
    pub(crate) fn settings(&self) -> (Settings, impl Fn(&str) -> Option<String> + '_) {
        self.settings_in(|name| std::env::var(name).ok())
    }

    /// [`ModelArgs::settings`] over the environment `environment` reads.
    fn settings_in<E>(&self, environment: E) -> (Settings, impl Fn(&str) -> Option<String> + '_)
    where
        E: Fn(&str) -> Option<String> + 'static,
    {
        // The flags choose who answers; the mode is --record / --playback, else
        // MERKLE_LLM_MODE (left to the factory), so the environment can switch a command
        // line between real, record and playback without touching its provider.
        let mut settings = Settings {
            simulator: self.provider.as_deref() == Some("sim") || self.script.is_some(),
            timeout: self.timeout,
            idle_timeout: self.idle_timeout,
            ..Settings::default()
        };
        let provider = self
            .provider
            .as_deref()
            .filter(|provider| *provider != "sim")
            .map(|provider| provider.replace('-', "_"));
        if let Some(path) = &self.playback {
            settings.mode = Some(Mode::Playback);
            settings.recording = Some(path.clone());
        }
        if let Some(path) = &self.record {
            settings.mode = Some(Mode::Record);
            settings.recording = Some(path.clone());
        }
        settings.script.clone_from(&self.script);
        let env = move |name: &str| {
            use llm_sim::factory::{
                API_KEY_ENV_VAR, API_KEY_VAR, API_VAR, BASE_URL_VAR, MODEL_VAR,
            };
            let flag = match name {
                llm_sim::factory::PROVIDER_VAR => provider.clone(),
                MODEL_VAR => self.model.clone(),
                BASE_URL_VAR => self.base_url.clone(),
                API_VAR => self.api.clone(),
                API_KEY_ENV_VAR => self.api_key_env.clone(),
                _ => None,
            };
            let from_env = !(self.from_agent
                && [
                    MODEL_VAR,
                    BASE_URL_VAR,
                    API_VAR,
                    API_KEY_ENV_VAR,
                    API_KEY_VAR,
                ]
                .contains(&name));
            flag.or_else(|| from_env.then(|| environment(name)).flatten())
        };
        (settings, env)
    }

    /// Builds the client, turning a missing key into directions.
    pub(crate) fn build(&self, scrubber: llm_sim::Scrubber) -> Result<llm_sim::Setup> {
        if let Some(api) = &self.api {
            let simulated = self.script.is_some() || self.playback.is_some();
            let provider = if simulated {
                Some("sim")
            } else {
                self.provider.as_deref()
            };
            if let Some(provider) = provider.filter(|p| !agent_model::OPENAI_STYLE.contains(p)) {
                crate::usage!(
                    "--api {api} is for the providers that speak OpenAI's APIs ({}), not {provider}",
                    agent_model::OPENAI_STYLE.join(", ")
                );
            }
        }
        let (mut settings, env) = self.settings();
        settings.scrubber = scrubber;
        settings.http.calibration = crate::calibration::shared();
        llm_sim::build(settings, &env).map_err(|e| {
            let text = e.to_string();
            if text.contains("no api key") {
                anyhow::anyhow!(
                    "{text}\n\nTo use a provider, export its key (ANTHROPIC_API_KEY for anthropic, \
                     OPENAI_API_KEY for openai, each sent only to its provider's own URL), or \
                     name the variable holding a key with --api-key-env NAME, or pass \
                     --provider ollama / --provider openai-compatible --base-url URL for a \
                     local server. To run without any model, pass --provider sim (answers \
                     \"Simulated response\"), --script FILE (a scripted YAML) or --playback \
                     FILE (a recording)."
                )
            } else {
                anyhow::Error::new(e)
            }
        })
    }
}

#[derive(Subcommand, Debug)]
pub(crate) enum SimCommand {
    /// Serve the Anthropic Messages, OpenAI chat completions and Responses APIs on 127.0.0.1,
    /// with their batch APIs (Message Batches; files and batches), answering from a script, a
    /// recording or a pattern file; prints the URL, serves until Ctrl-C
    Serve(ServeArgs),
}

#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// The script, recording or pattern file that answers
    #[arg(long, value_name = "FILE")]
    script: PathBuf,
    /// The port [default: any free port]
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// How many reads of a batch answer that it is still in progress before one finds it
    /// ended, as a real service's batch runs for minutes (0: ended as soon as created)
    #[arg(long, value_name = "N", default_value_t = llm_sim::DEFAULT_BATCH_POLLS)]
    batch_polls: u32,
    /// The first N calls that ask for OpenAI's Flex tier find no capacity, refused as the
    /// service refuses them (429 resource_unavailable, not billed)
    #[arg(long, value_name = "N", default_value_t = 0)]
    refuse_flex: u32,
}

pub(crate) fn run_llm(cmd: &LlmCommand, json: bool) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    match cmd {
        LlmCommand::Complete(args) => {
            let request = build_request(args)?;
            runtime.block_on(complete(args, &request, json))
        }
        LlmCommand::Count(args) => {
            let request = args.input.request(args.model.model.as_deref())?;
            runtime.block_on(count(args, &request, json))
        }
    }
}

/// `merkle llm count`: the provider's count, or with --offline the calibrated estimate.
async fn count(args: &CountArgs, request: &Request, json: bool) -> Result<ExitCode> {
    let setup = args.model.build(llm_sim::Scrubber::default())?;
    let counted = if args.offline {
        setup.client.count_offline(request)
    } else {
        setup.client.count_input(request).await?
    };
    setup.finish()?;
    let model = request_model(request, setup.model.as_deref());
    let mut stdout = std::io::stdout().lock();
    if json {
        let document = json!({
            "tokens": counted.tokens,
            "source": counted.source.as_str(),
            "exact": counted.source.is_exact(),
            "provider": setup.provider,
            "model": model,
        });
        writeln!(stdout, "{document}")?;
    } else {
        let how = match counted.source {
            llm_core::CountSource::Provider => "counted by the provider",
            llm_core::CountSource::Tokenizer => "counted with the model's tokenizer",
            llm_core::CountSource::Calibrated => {
                "estimated, calibrated by earlier answers of this model"
            }
            llm_core::CountSource::Estimate => {
                "estimated; no answer of this model has calibrated it yet"
            }
        };
        writeln!(stdout, "{} input tokens ({how})", counted.tokens)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The model a request goes to: its own, else the one the settings chose.
fn request_model(request: &Request, chosen: Option<&str>) -> String {
    match request.model.as_str() {
        "" => chosen.unwrap_or_default().to_owned(),
        model => model.to_owned(),
    }
}

pub(crate) fn run_sim(cmd: &SimCommand, json: bool) -> Result<ExitCode> {
    let SimCommand::Serve(args) = cmd;
    let strategy = llm_sim::load_strategy(&args.script)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(async {
        let server = FakeServer::start(&format!("127.0.0.1:{}", args.port), strategy).await?;
        server.set_batch_polls(args.batch_polls);
        server.refuse_flex(args.refuse_flex);
        // Listening before the address goes out, so a harness that stops us as soon as it
        // has read it still gets a clean exit.
        let shutdown = Shutdown::listen()?;
        let url = server.url();
        let line = if json {
            json!({"url": url, "anthropic_base_url": url, "openai_base_url": format!("{url}/v1")})
                .to_string()
        } else {
            url
        };
        // The first line is the contract: a script that started us reads it to connect.
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}").and_then(|()| stdout.flush())?;
        drop(stdout);
        shutdown.wait().await;
        drop(server);
        Ok(ExitCode::SUCCESS)
    })
}

/// Ctrl-C, or SIGTERM where there is one, so a test harness can stop the server cleanly.
pub(crate) struct Shutdown {
    #[cfg(unix)]
    signals: [tokio::signal::unix::Signal; 2],
}

impl Shutdown {
    pub(crate) fn listen() -> Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let interrupt = signal(SignalKind::interrupt()).context("listening for Ctrl-C")?;
            let terminate = signal(SignalKind::terminate()).context("listening for SIGTERM")?;
            Ok(Self {
                signals: [interrupt, terminate],
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    pub(crate) async fn wait(self) {
        #[cfg(unix)]
        {
            let [mut interrupt, mut terminate] = self.signals;
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            // Without a handler the default Ctrl-C behaviour ends the process just as well.
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

fn build_request(args: &CompleteArgs) -> Result<Request> {
    let mut request = args.input.request(args.model.model.as_deref())?;
    if let Some(max_tokens) = args.max_tokens {
        request.max_tokens = max_tokens;
    }
    if let Some(path) = &args.schema {
        request.response_schema = Some(read_schema(path)?);
    }
    Ok(request)
}

/// A JSON Schema file as a structured-output schema, named after the file.
fn read_schema(path: &std::path::Path) -> Result<llm_core::ResponseSchema> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let schema: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    if !schema.is_object() {
        crate::usage!("{} is not a JSON Schema (an object)", path.display());
    }
    // The name providers want: the file's stem in [A-Za-z0-9_-], at most 64 characters.
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy())
        .unwrap_or_default();
    let mut name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if name.is_empty() {
        name = "answer".to_owned();
    }
    Ok(llm_core::ResponseSchema { name, schema })
}

async fn complete(args: &CompleteArgs, request: &Request, json: bool) -> Result<ExitCode> {
    let setup = args.model.build(llm_sim::Scrubber::default())?;
    let response = if args.stream {
        let mut stream = setup.client.stream(request).await?;
        let mut builder = ResponseBuilder::default();
        let mut stdout = std::io::stdout().lock();
        let mut printed = false;
        while let Some(event) = stream.next().await {
            let event = event?;
            if let Event::TextDelta { text } = &event
                && !json
            {
                write!(stdout, "{text}").and_then(|()| stdout.flush())?;
                printed |= !text.is_empty();
            }
            builder.push(event);
        }
        if printed {
            writeln!(stdout)?;
        }
        builder.finish()?
    } else {
        setup.client.complete(request).await?
    };
    if let Some(path) = setup.finish()? {
        eprintln!("recorded to {}", path.display());
    }
    let structured = match &request.response_schema {
        Some(schema) => Some(llm_core::structured_answer(schema, &response)?),
        None => None,
    };
    let mut stdout = std::io::stdout().lock();
    if json {
        let mut document = response_json(&response);
        if let Some(value) = structured {
            document["structured"] = value;
        }
        let document =
            serde_json::to_string_pretty(&document).expect("a serde_json::Value always serializes");
        writeln!(stdout, "{document}")?;
    } else if let Some(value) = structured {
        let text =
            serde_json::to_string_pretty(&value).expect("a serde_json::Value always serializes");
        writeln!(stdout, "{text}")?;
    } else {
        let text = response.text();
        if !args.stream && !text.is_empty() {
            writeln!(stdout, "{text}")?;
        }
        for call in response.tool_calls() {
            writeln!(
                stdout,
                "[tool call {}] {} {}",
                call.id, call.name, call.input
            )?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The normalised response `--json` prints; its field names are a contract. `content` is
/// the whole answer as the library holds it (thinking with its signature, text, tool calls,
/// in order); the other fields are views of it for convenience.
fn response_json(response: &Response) -> Value {
    json!({
        "content": response.content,
        "text": response.text(),
        "tool_calls": response
            .tool_calls()
            .iter()
            .map(|call| json!({"id": call.id, "name": call.name, "input": call.input}))
            .collect::<Vec<_>>(),
        "thinking": response.thinking(),
        "stop_reason": response.stop_reason.as_str(),
        "usage": response.usage,
        "model": response.model,
        "id": response.id,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use llm_sim::factory::{BASE_URL_VAR, MODEL_VAR};

    use super::*;

    /// An environment that sets a model and a base URL for whatever provider it means.
    fn elsewhere(name: &str) -> Option<String> {
        match name {
            MODEL_VAR => Some("claude-elsewhere".to_owned()),
            BASE_URL_VAR => Some("http://127.0.0.1:9".to_owned()),
            _ => None,
        }
    }

    #[test]
    fn an_agent_s_own_provider_reads_no_model_from_the_environment() {
        let agent = merkle_store::Agent {
            id: "local".to_owned(),
            role: merkle_store::Role::Synthesis,
            settings: BTreeMap::from([(agent_model::PROVIDER.to_owned(), "ollama".to_owned())]),
        };
        let own = ModelArgs::default().or_stored_in(Some(&agent), elsewhere);
        assert_eq!(own.provider.as_deref(), Some("ollama"));
        let (_, env) = own.settings_in(elsewhere);
        assert_eq!((env(MODEL_VAR), env(BASE_URL_VAR)), (None, None));
        // Without an agent's provider, the environment is what chooses.
        let plain = ModelArgs::default();
        let (_, env) = plain.settings_in(elsewhere);
        assert_eq!(env(MODEL_VAR).as_deref(), Some("claude-elsewhere"));
        // A flag still wins over both.
        let flagged = ModelArgs {
            model: Some("qwen3".to_owned()),
            ..ModelArgs::default()
        }
        .or_stored_in(Some(&agent), elsewhere);
        let (_, env) = flagged.settings_in(elsewhere);
        assert_eq!(env(MODEL_VAR).as_deref(), Some("qwen3"));
    }
}
