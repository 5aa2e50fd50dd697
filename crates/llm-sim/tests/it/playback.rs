//! Record and playback: a real provider (llm-core's Anthropic client against the fake
//! server) is recorded, saved, scanned for secrets and replayed; misses name the closest
//! recorded request and the first field that differs.

use std::sync::Arc;

use llm_core::{ContentBlock, LlmClient, Message, Request, Response, Role, collect};
use llm_sim::{
    Error, FakeServer, Playback, PlaybackOrder, RecordingClient, Script, Scripted, Scrubber,
    SimulatedClient, Step, Strategy, for_testing,
};
use pretty_assertions::assert_eq;

use crate::support::{anthropic, clock, fixture, gist, http, request};

/// Drives a small agent loop: answers every tool call with a result until `complete`;
/// the second call streams.
/// Tool results name a temporary folder that differs from run to run, as real ones do.
async fn run_conversation(
    client: &dyn LlmClient,
    prompt: &str,
    run: u32,
) -> llm_core::Result<Vec<Response>> {
    let mut request = request(prompt);
    let mut responses = Vec::new();
    for call in 0..6 {
        let response = if call == 1 {
            collect(client.stream(&request).await?).await?
        } else {
            client.complete(&request).await?
        };
        responses.push(response.clone());
        let calls: Vec<_> = response.tool_calls().into_iter().cloned().collect();
        request.messages.push(response.into_message());
        if calls.iter().any(|call| call.name == "complete") || calls.is_empty() {
            break;
        }
        request.messages.push(Message {
            role: Role::User,
            content: calls
                .iter()
                .map(|call| ContentBlock::ToolResult {
                    tool_use_id: call.id.clone(),
                    content: format!("ok: {} in /tmp/run-{run}/work", call.name),
                    is_error: false,
                })
                .collect(),
        });
    }
    Ok(responses)
}

fn scrubber() -> Scrubber {
    Scrubber::new()
        .rule(r"/tmp/run-\d+", "[TMP]")
        .expect("valid scrub rule")
}

#[tokio::test]
async fn a_recording_of_a_real_provider_plays_back_the_same_conversation() {
    let server = FakeServer::start(
        "127.0.0.1:0",
        Box::new(Scripted::load(&fixture("fix_violation_success.yaml")).expect("fixture")),
    )
    .await
    .expect("server starts");
    let clock = clock();
    let recorder =
        RecordingClient::new(anthropic(&server.url(), http(&clock, 0))).with_scrubber(scrubber());
    let recorded = run_conversation(&recorder, "reduce the complexity of execute", 1234)
        .await
        .expect("the recorded conversation runs");
    assert_eq!(recorded.len(), 4);

    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("recordings/session.yaml");
    recorder.save(&path).expect("the recording saves");
    let text = std::fs::read_to_string(&path).expect("the recording exists");
    assert!(
        !text.contains(crate::support::SECRET),
        "no key in the recording"
    );
    insta::assert_snapshot!(text);

    // The replay runs in a fresh temporary folder; the scrubber makes that invisible.
    let playback = Playback::load(&path)
        .expect("recording loads")
        .with_scrubber(scrubber());
    let replayed = run_conversation(
        &SimulatedClient::new(playback),
        "reduce the complexity of execute",
        5678,
    )
    .await
    .expect("every request matches the recording");
    assert_eq!(
        replayed
            .iter()
            .map(|r| (gist(r), r.usage, r.id.clone(), r.model.clone()))
            .collect::<Vec<_>>(),
        recorded
            .iter()
            .map(|r| (gist(r), r.usage, r.id.clone(), r.model.clone()))
            .collect::<Vec<_>>(),
    );

    // A recording is also a script: a directory of recordings serves as fixtures.
    let as_script = llm_sim::load_strategy(&path).expect("loads as a strategy");
    assert!(
        format!("{as_script:?}").starts_with("Playback"),
        "{as_script:?}"
    );
}

#[tokio::test]
async fn a_miss_names_the_closest_recording_and_the_first_difference() {
    let inner = Arc::new(for_testing([Step::text("first"), Step::text("second")]));
    let recorder = RecordingClient::new(inner);
    recorder.complete(&request("alpha")).await.expect("answer");
    recorder.complete(&request("beta")).await.expect("answer");
    let mut playback = Playback::new(recorder.script(), "inline").expect("a recording");

    let err = playback
        .reply(1, &request("gamma"))
        .expect_err("no recording of gamma");
    let Error::PlaybackMiss {
        call,
        closest_step,
        field,
        recorded,
        actual,
        closest,
    } = &err
    else {
        panic!("not a miss: {err:?}");
    };
    assert_eq!(
        (
            *call,
            *closest_step,
            field.as_str(),
            recorded.as_str(),
            actual.as_str()
        ),
        (
            1,
            1,
            "messages[0].content[0].text",
            "\"alpha\"",
            "\"gamma\""
        )
    );
    assert!(closest.contains("\"alpha\""), "{closest}");
    insta::assert_snapshot!(err.to_string());

    // In order by default: the second recording does not answer the first call.
    let err = playback
        .reply(1, &request("beta"))
        .expect_err("out of order");
    assert!(
        matches!(
            err,
            Error::PlaybackMiss {
                closest_step: 2,
                ..
            }
        ),
        "{err}"
    );

    let mut shorter = request("alpha");
    shorter.tools.pop();
    let err = playback.reply(1, &shorter).expect_err("a tool is missing");
    assert!(
        matches!(&err, Error::PlaybackMiss { field, recorded, actual, .. }
            if field == "tools[2]" && actual == "nothing" && recorded.contains("complete")),
        "{err}"
    );

    // Through the client the miss is an llm-core error carrying the same message.
    let client =
        SimulatedClient::new(Playback::new(recorder.script(), "inline").expect("recording"));
    let err = client.complete(&request("gamma")).await.expect_err("miss");
    assert!(err.to_string().contains("playback miss at call 1"), "{err}");
}

#[tokio::test]
async fn any_order_playback_and_the_end_of_a_recording() {
    let inner = Arc::new(for_testing([Step::text("first"), Step::text("second")]));
    let recorder = RecordingClient::new(inner);
    recorder.complete(&request("alpha")).await.expect("answer");
    recorder.complete(&request("beta")).await.expect("answer");
    let mut playback = Playback::new(recorder.script(), "rec.yaml")
        .expect("recording")
        .with_order(PlaybackOrder::AnyOrder);
    let client_request = |text| request(text);
    let second = playback
        .reply(1, &client_request("beta"))
        .expect("beta matches");
    let first = playback
        .reply(2, &client_request("alpha"))
        .expect("alpha matches");
    let text = |reply: llm_sim::Reply| match reply {
        llm_sim::Reply::Answer(answer) => answer.response.text(),
        llm_sim::Reply::Failure(failure) => format!("{failure:?}"),
    };
    assert_eq!(
        (text(second), text(first)),
        ("second".to_owned(), "first".to_owned())
    );
    assert_eq!(playback.remaining(), 0);
    let err = playback
        .reply(3, &client_request("alpha"))
        .expect_err("exhausted");
    assert_eq!(
        err.to_string(),
        "playback: call 3 has no recorded response left (the recording rec.yaml holds 2)"
    );
}

#[test]
fn a_script_without_requests_is_not_a_recording() {
    let script = Script::parse("responses:\n  - content: hi\n", "plain.yaml").expect("parses");
    let err = Playback::new(script, "plain.yaml").expect_err("no requests");
    assert_eq!(
        err.to_string(),
        "plain.yaml: responses[0] has no request, expected a recording: every step of a playback \
         script carries the request it answered"
    );
}

#[tokio::test]
async fn saving_refuses_a_recording_that_holds_a_key() {
    let recorder = RecordingClient::new(Arc::new(for_testing([Step::text("noted")])));
    let leaked = Request::new("m").user("my key is sk-ant-api03-abcdefghijklmnopqrstuv, keep it");
    recorder.complete(&leaked).await.expect("answer");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("leak.yaml");
    let err = recorder.save(&path).expect_err("a key is in the recording");
    let message = err.to_string();
    assert!(
        matches!(
            err,
            Error::SecretFound {
                kind: "an anthropic api key",
                ..
            }
        ),
        "{message}"
    );
    assert!(
        message.contains("sk-ant...") && !message.contains("abcdefghijkl"),
        "{message}"
    );
    assert!(!path.exists(), "nothing was written");

    // A scrub rule removes it, and the recording saves.
    let scrubbed = RecordingClient::new(Arc::new(for_testing([Step::text("noted")])))
        .with_scrubber(
            Scrubber::new()
                .rule(r"sk-ant-[\w-]+", "[KEY]")
                .expect("rule"),
        );
    scrubbed.complete(&leaked).await.expect("answer");
    scrubbed.save(&path).expect("saves once scrubbed");
    assert!(
        std::fs::read_to_string(&path)
            .expect("written")
            .contains("my key is [KEY], keep it")
    );
}

#[tokio::test]
async fn awkward_strings_survive_the_yaml_round_trip() {
    let awkward = [
        "yes",
        "null",
        "0123",
        "1e3",
        "~",
        "- not a list",
        "key: value",
        "# not a comment",
        "trailing spaces   ",
        "  leading spaces",
        "line one\nline two\n\n",
        "tab\there",
        "ünïcödé ✓ 🦀",
        "'quotes' and \"quotes\"",
        "",
    ];
    let recorder = RecordingClient::new(Arc::new(for_testing(
        awkward.iter().map(|text| Step::text(*text)),
    )));
    for text in awkward {
        let mut question = request(text);
        question.system = Some(text.to_owned());
        recorder.complete(&question).await.expect("answer");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("awkward.yaml");
    recorder.save(&path).expect("saves");
    let client = SimulatedClient::new(Playback::load(&path).expect("loads"));
    for text in awkward {
        let mut question = request(text);
        question.system = Some(text.to_owned());
        let response = client
            .complete(&question)
            .await
            .expect("every request matches");
        assert_eq!(response.text(), text);
    }
}
