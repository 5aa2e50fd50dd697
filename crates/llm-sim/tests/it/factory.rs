//! The mode switch: each mode from the environment (through a lookup, never the process's
//! own), and the errors that name the missing or wrong variable.

use std::collections::BTreeMap;

use llm_sim::{FakeServer, Mode, Scripted, Settings, build};
use pretty_assertions::assert_eq;

use crate::support::{fixture, request};

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: BTreeMap<String, String> = pairs
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    move |name| map.get(name).cloned()
}

fn error(pairs: &[(&str, &str)]) -> String {
    build(Settings::default(), &env(pairs))
        .map(|setup| format!("built {:?}", setup.mode))
        .unwrap_or_else(|err| err.to_string())
}

#[test]
fn missing_or_wrong_settings_name_their_variable() {
    let cases = [
        (
            vec![("MERKLE_LLM_MODE", "playback")],
            "MERKLE_LLM_RECORDING is required for MERKLE_LLM_MODE=playback: the recording to replay",
        ),
        (
            vec![("MERKLE_LLM_MODE", "record"), ("ANTHROPIC_API_KEY", "k")],
            "MERKLE_LLM_RECORDING is required for MERKLE_LLM_MODE=record: where to save the recording",
        ),
        (
            vec![("MERKLE_LLM_MODE", "simulate")],
            "MERKLE_LLM_MODE=\"simulate\" is not valid: expected real, simulated, record or playback",
        ),
        (
            vec![],
            "invalid configuration: no api key for anthropic: set ANTHROPIC_API_KEY, or name the \
             variable holding one with api_key_env (--api-key-env)",
        ),
        (
            vec![
                ("MERKLE_LLM_MODE", "real"),
                ("MERKLE_LLM_PROVIDER", "openai"),
            ],
            "invalid configuration: no api key for openai: set OPENAI_API_KEY, or name the \
             variable holding one with api_key_env (--api-key-env)",
        ),
        (
            vec![("MERKLE_LLM_PROVIDER", "gemini")],
            "MERKLE_LLM_PROVIDER=\"gemini\" is not valid: expected anthropic, openai, ollama or openai_compatible",
        ),
        (
            vec![
                ("MERKLE_LLM_MODE", "real"),
                ("MERKLE_LLM_PROVIDER", "openai_compatible"),
            ],
            "invalid configuration: provider openai_compatible needs a base url",
        ),
        (
            vec![
                ("MERKLE_LLM_MODE", "real"),
                ("MERKLE_LLM_API_KEY_ENV", "MY_KEY"),
            ],
            "invalid configuration: no api key for anthropic: api_key_env names MY_KEY, which \
             is not set",
        ),
        (
            vec![
                ("MERKLE_LLM_PROVIDER", "openai"),
                ("MERKLE_LLM_API_KEY_ENV", "MY_KEY"),
                ("MY_KEY", "k"),
            ],
            "built Real",
        ),
        (
            vec![
                ("MERKLE_LLM_PROVIDER", "openai"),
                ("MERKLE_LLM_API_KEY", "k"),
            ],
            "built Real",
        ),
        (
            vec![
                ("MERKLE_LLM_MODE", "simulated"),
                ("MERKLE_LLM_TIMEOUT", "soon"),
            ],
            "MERKLE_LLM_TIMEOUT=\"soon\" is not valid: expected a number of seconds greater than 0",
        ),
        (
            vec![
                ("MERKLE_LLM_MODE", "simulated"),
                ("MERKLE_LLM_IDLE_TIMEOUT", "0"),
            ],
            "MERKLE_LLM_IDLE_TIMEOUT=\"0\" is not valid: expected a number of seconds greater than 0",
        ),
        (
            vec![
                ("MERKLE_LLM_MODE", "simulated"),
                ("MERKLE_LLM_TIMEOUT", "1e30"),
            ],
            "MERKLE_LLM_TIMEOUT=\"1e30\" is not valid: expected a number of seconds greater than 0",
        ),
        (
            vec![
                ("MERKLE_LLM_MODE", "simulated"),
                ("MERKLE_LLM_TIMEOUT", "2.5"),
            ],
            "built Simulated",
        ),
        (vec![("MERKLE_LLM_MODE", "simulated")], "built Simulated"),
        (
            vec![
                ("MERKLE_LLM_PROVIDER", "openai"),
                ("MERKLE_LLM_API_KEY", "k"),
                ("MERKLE_LLM_API", "responses"),
            ],
            "built Real",
        ),
        (
            vec![
                ("MERKLE_LLM_PROVIDER", "openai"),
                ("MERKLE_LLM_API_KEY", "k"),
                ("MERKLE_LLM_API", "completions"),
            ],
            "MERKLE_LLM_API=\"completions\" is not valid: expected chat or responses",
        ),
        (
            vec![("ANTHROPIC_API_KEY", "k"), ("MERKLE_LLM_API", "responses")],
            "invalid configuration: api responses: only the openai-style providers (openai, \
             ollama, openai_compatible) speak another api; anthropic speaks its own",
        ),
        (
            vec![("MERKLE_LLM_MODE", " "), ("ANTHROPIC_API_KEY", "k")],
            "built Real",
        ),
    ];
    for (pairs, expected) in cases {
        assert_eq!(error(&pairs), expected, "{pairs:?}");
    }
    let missing_script = error(&[
        ("MERKLE_LLM_MODE", "simulated"),
        ("MERKLE_LLM_SCRIPT", "/nonexistent/script.yaml"),
    ]);
    assert_eq!(missing_script, "cannot read /nonexistent/script.yaml");
}

#[tokio::test]
async fn simulated_mode_follows_the_script_in_merkle_llm_script() {
    let script = fixture("fix_violation_escalate.yaml");
    let setup = build(
        Settings::default(),
        &env(&[
            ("MERKLE_LLM_MODE", "simulated"),
            ("MERKLE_LLM_SCRIPT", script.to_str().expect("utf-8 path")),
        ]),
    )
    .expect("simulated client");
    assert_eq!(setup.mode, Mode::Simulated);
    let response = setup.client.complete(&request("go")).await.expect("answer");
    assert_eq!(response.tool_calls()[0].name, "read_file");
    assert_eq!(setup.finish().expect("nothing to save"), None);
}

#[tokio::test]
async fn explicit_settings_win_over_the_environment() {
    let settings = Settings {
        mode: Some(Mode::Simulated),
        script: Some(fixture("fix_violation_success.yaml")),
        ..Settings::default()
    };
    let setup = build(settings, &env(&[("MERKLE_LLM_MODE", "playback")])).expect("built");
    let response = setup.client.complete(&request("go")).await.expect("answer");
    assert_eq!(response.tool_calls()[0].name, "read_file");
}

#[tokio::test]
async fn record_mode_records_a_provider_and_playback_mode_replays_it() {
    let server = FakeServer::start(
        "127.0.0.1:0",
        Box::new(Scripted::load(&fixture("fix_violation_escalate.yaml")).expect("fixture")),
    )
    .await
    .expect("server starts");
    let dir = tempfile::tempdir().expect("temp dir");
    let recording = dir.path().join("rec.yaml");
    let recording = recording.to_str().expect("utf-8 path");
    let url = server.url();
    let setup = build(
        Settings::default(),
        &env(&[
            ("MERKLE_LLM_MODE", "record"),
            ("MERKLE_LLM_RECORDING", recording),
            ("MERKLE_LLM_PROVIDER", "anthropic"),
            ("MERKLE_LLM_MODEL", "claude-sim"),
            ("MERKLE_LLM_BASE_URL", &url),
            // ANTHROPIC_API_KEY goes to api.anthropic.com only; this key goes where it is told.
            ("MERKLE_LLM_API_KEY", "sk-ant-fake-key-for-the-fake-server"),
        ]),
    )
    .expect("record mode builds");
    let mut question = request("go");
    question.model = String::new();
    let recorded = setup.client.complete(&question).await.expect("answer");
    assert_eq!(
        recorded.model, "claude-sim",
        "the default model came from MERKLE_LLM_MODEL"
    );
    assert_eq!(
        setup.finish().expect("saved").map(|path| path.to_owned()),
        Some(recording.into())
    );
    assert!(setup.recorder().is_some());

    // The response's id is recorded, and played back as recorded (here one a provider might
    // give, not the simulator's numbering).
    let text = std::fs::read_to_string(recording).expect("the recording");
    let id = recorded.id.clone().expect("the provider gave an id");
    assert!(text.contains(&format!("id: {id}")), "{text}");
    std::fs::write(recording, text.replace(&id, "msg_01XyZ")).expect("rewrite");

    let replay = build(
        Settings::default(),
        &env(&[
            ("MERKLE_LLM_MODE", "playback"),
            ("MERKLE_LLM_RECORDING", recording),
        ]),
    )
    .expect("playback mode builds");
    let replayed = replay.client.complete(&question).await.expect("replayed");
    assert_eq!(
        (replayed.tool_calls(), replayed.usage),
        (recorded.tool_calls(), recorded.usage)
    );
    assert_eq!(replayed.id.as_deref(), Some("msg_01XyZ"));
}

#[tokio::test]
async fn the_simulator_is_recorded_never_replaced_by_a_real_provider() {
    let dir = tempfile::tempdir().expect("temp dir");
    let recording = dir.path().join("sim.yaml");
    // Record mode from a flag and from the environment: the simulator answers both, with
    // no key and no network (a real provider here would fail for want of a key).
    for (mode, environment) in [
        (Some(Mode::Record), vec![]),
        (None, vec![("MERKLE_LLM_MODE", "record")]),
    ] {
        let settings = Settings {
            mode,
            simulator: true,
            recording: Some(recording.clone()),
            ..Settings::default()
        };
        let setup = build(settings, &env(&environment)).expect("record mode builds");
        assert_eq!(setup.mode, Mode::Record);
        let answer = setup.client.complete(&request("hi")).await.expect("answer");
        assert_eq!(answer.text(), "Simulated response");
        setup.finish().expect("saved");
        let saved = std::fs::read_to_string(&recording).expect("recording");
        assert!(saved.contains("content: Simulated response"), "{saved}");
    }
    // Real mode with the simulator is simulated.
    let settings = Settings {
        mode: Some(Mode::Real),
        simulator: true,
        ..Settings::default()
    };
    let setup = build(settings, &env(&[])).expect("simulated");
    let answer = setup.client.complete(&request("hi")).await.expect("answer");
    assert_eq!(answer.text(), "Simulated response");
}
