//! How the model flags, the environment and an agent's stored settings combine: the mode
//! switch wraps the provider the flags name, the simulator never falls back to a real API,
//! keys go only where they are sent on purpose, and a call can be bounded. A loopback server
//! started here counts what reaches it, so "calls the real API" is a number, 0 where no
//! request may leave.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use pretty_assertions::assert_eq;
use serde_json::json;

use crate::llm::{Served, llm};
use crate::{Workspace, ok, parse, run};

/// What the counting server does with a request.
#[derive(Clone, Copy)]
enum Behaviour {
    /// Answers 401, which no client retries.
    Refuse,
    /// Reads the request and sends nothing, until the client goes away.
    Silent,
    /// Opens an event stream, then sends nothing more.
    SilentStream,
}

/// A loopback server that records each request's head (lowercased) and behaves as told.
struct Counting {
    url: String,
    heads: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Counting {
    fn start(behaviour: Behaviour) -> Counting {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let url = format!("http://{}", listener.local_addr().expect("local addr"));
        let heads = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (recorded, stopped) = (Arc::clone(&heads), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            for socket in listener.incoming() {
                if stopped.load(Ordering::SeqCst) {
                    return;
                }
                let Ok(socket) = socket else { continue };
                let recorded = Arc::clone(&recorded);
                std::thread::spawn(move || serve(socket, behaviour, &recorded));
            }
        });
        Counting {
            url,
            heads,
            stop,
            thread: Some(thread),
        }
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().expect("heads lock").clone()
    }
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop so that it sees the flag.
        let _ = TcpStream::connect(self.url.trim_start_matches("http://"));
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn serve(mut socket: TcpStream, behaviour: Behaviour, recorded: &Mutex<Vec<String>>) {
    let mut buffer = Vec::new();
    let mut piece = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        match socket.read(&mut piece) {
            Ok(0) | Err(_) => return,
            Ok(read) => buffer.extend_from_slice(&piece[..read]),
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).to_ascii_lowercase();
    recorded.lock().expect("heads lock").push(head);
    match behaviour {
        Behaviour::Refuse => {
            let body = r#"{"error":{"message":"bad key","type":"invalid_api_key"}}"#;
            let answer = format!(
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket
                .write_all(answer.as_bytes())
                .and_then(|()| socket.flush());
            return;
        }
        Behaviour::Silent => {}
        Behaviour::SilentStream => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                        transfer-encoding: chunked\r\n\r\n";
            let _ = socket
                .write_all(head.as_bytes())
                .and_then(|()| socket.flush());
        }
    }
    // Hold the connection, sending nothing, until the client closes it.
    while matches!(socket.read(&mut piece), Ok(read) if read > 0) {}
}

fn path_str(path: &std::path::Path) -> &str {
    path.to_str().expect("utf-8 path")
}

#[test]
fn the_simulator_is_recorded_and_never_falls_back_to_a_real_provider() {
    let ws = Workspace::empty();
    let real = Counting::start(Behaviour::Refuse);
    let recording = ws.path("sim.yaml");
    // Everything a real provider would need is in the environment, pointed at the counter.
    let mut cmd = llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "sim",
            "--record",
            path_str(&recording),
            "hi",
        ],
    );
    cmd.env("MERKLE_LLM_BASE_URL", &real.url)
        .env("MERKLE_LLM_API_KEY", "k")
        .env("ANTHROPIC_API_KEY", "k");
    let r = run(&mut cmd);
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (
            0,
            "Simulated response\n",
            format!("recorded to {}\n", recording.display()).as_str()
        )
    );
    assert_eq!(real.heads().len(), 0, "a request reached a real provider");
    let saved = std::fs::read_to_string(&recording).expect("the recording");
    assert!(saved.contains("content: Simulated response"), "{saved}");
}

#[test]
fn the_environment_s_mode_wraps_the_provider_the_flags_name() {
    let ws = Workspace::empty();
    ws.write("answers.yaml", "responses:\n  - content: recorded answer\n");
    let served = Served::start(&["--script", path_str(&ws.path("answers.yaml"))]);
    let recording = ws.path("rec.yaml");
    let flags = |url: &str| {
        [
            "llm",
            "complete",
            "--provider",
            "anthropic",
            "--model",
            "claude-sim",
            "--base-url",
            url,
            "--api-key-env",
            "TEST_KEY",
            "hi",
        ]
        .map(str::to_owned)
    };
    let with_mode = |mode: &str, url: &str| {
        let args = flags(url);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut cmd = llm(&ws, &args);
        cmd.env("MERKLE_LLM_MODE", mode)
            .env("MERKLE_LLM_RECORDING", &recording)
            .env("TEST_KEY", "sk-test");
        run(&mut cmd)
    };

    let recorded = with_mode("record", &served.url);
    assert_eq!(
        (recorded.code, recorded.stdout.as_str()),
        (0, "recorded answer\n"),
        "{recorded}"
    );
    assert!(recorded.stderr.starts_with("recorded to "), "{recorded}");
    let saved = std::fs::read_to_string(&recording).expect("record mode wrote the recording");
    assert!(saved.contains("content: recorded answer"), "{saved}");

    // The same command line in playback talks to no provider at all.
    let real = Counting::start(Behaviour::Refuse);
    let replayed = with_mode("playback", &real.url);
    assert_eq!(
        (replayed.code, replayed.stdout.as_str()),
        (0, "recorded answer\n"),
        "{replayed}"
    );
    assert_eq!(real.heads().len(), 0, "playback called the real API");
}

#[test]
fn keys_go_where_they_are_named_and_nowhere_else() {
    let ws = Workspace::empty();
    let server = Counting::start(Behaviour::Refuse);
    let v1 = format!("{}/v1", server.url);

    // A keyed OpenAI-compatible server gets the key the flag names, or MERKLE_LLM_API_KEY.
    let mut named = llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "openai-compatible",
            "--base-url",
            &v1,
            "--api-key-env",
            "GROQ_KEY",
            "--model",
            "m",
            "hi",
        ],
    );
    named
        .env("GROQ_KEY", "gsk-named")
        .env("OPENAI_API_KEY", "sk-openai-own");
    assert_eq!(run(&mut named).code, 1);
    let mut direct = llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "ollama",
            "--base-url",
            &v1,
            "--model",
            "m",
            "hi",
        ],
    );
    direct.env("MERKLE_LLM_API_KEY", "key-direct");
    assert_eq!(run(&mut direct).code, 1);
    let authorization = |head: &str| {
        head.lines()
            .find_map(|line| line.strip_prefix("authorization: "))
            .map(str::to_owned)
    };
    let heads = server.heads();
    assert_eq!(
        heads.iter().map(|h| authorization(h)).collect::<Vec<_>>(),
        vec![
            Some("bearer gsk-named".to_owned()),
            Some("bearer key-direct".to_owned())
        ]
    );

    // OpenAI's own key is not sent to another host, by flag or by MERKLE_LLM_BASE_URL.
    let mut by_flag = llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "openai",
            "--base-url",
            &v1,
            "--model",
            "m",
            "hi",
        ],
    );
    by_flag.env("OPENAI_API_KEY", "sk-openai-own");
    let mut by_env = llm(&ws, &["llm", "complete", "--model", "m", "hi"]);
    by_env
        .env("MERKLE_LLM_PROVIDER", "openai")
        .env("MERKLE_LLM_BASE_URL", &v1)
        .env("OPENAI_API_KEY", "sk-openai-own");
    for mut cmd in [by_flag, by_env] {
        let r = run(&mut cmd);
        assert_eq!(r.code, 1, "{r}");
        assert!(
            r.stderr
                .contains("OPENAI_API_KEY is sent only to https://api.openai.com/v1")
                && r.stderr.contains("--api-key-env OPENAI_API_KEY"),
            "{r}"
        );
    }
    assert_eq!(
        server.heads().len(),
        2,
        "OPENAI_API_KEY left for another host"
    );

    // A key where a variable's name belongs is a usage error, and is not echoed.
    let pasted = run(&mut llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "sim",
            "--api-key-env",
            "sk-live-123",
            "hi",
        ],
    ));
    assert_eq!(pasted.code, 2, "{pasted}");
    assert!(
        pasted
            .stderr
            .contains("expected the name of an environment variable"),
        "{pasted}"
    );
}

#[test]
fn an_agent_keeps_the_name_of_its_key_variable_and_uses_it() {
    let ws = Workspace::empty();
    let server = Counting::start(Behaviour::Refuse);
    let v1 = format!("{}/v1", server.url);
    let added = parse(&ok(&mut llm(
        &ws,
        &[
            "--json",
            "agent",
            "add",
            "groq",
            "--role",
            "writer",
            "--provider",
            "openai-compatible",
            "--model",
            "llama",
            "--base-url",
            &v1,
            "--api-key-env",
            "GROQ_KEY",
        ],
    )));
    assert_eq!(
        added,
        json!({"agent_id": "groq", "role": "writer", "provider": "openai-compatible",
               "model": "llama", "base_url": v1, "api": null, "api_key_env": "GROQ_KEY", "price": null})
    );
    let listed = ok(&mut llm(&ws, &["agent", "list"]));
    assert!(listed.contains("(key from $GROQ_KEY)"), "{listed}");
    let mut run_cmd = llm(&ws, &["run", "--agent", "groq", "say hi"]);
    run_cmd.env("GROQ_KEY", "gsk-stored");
    let r = run(&mut run_cmd);
    assert_eq!(r.code, 1, "{r}");
    let heads = server.heads();
    assert_eq!(heads.len(), 1, "{r}");
    assert!(
        heads[0].contains("authorization: bearer gsk-stored"),
        "{}",
        heads[0]
    );
}

#[test]
fn timeouts_bound_a_call_from_flags_or_the_environment() {
    let ws = Workspace::empty();
    let silent = Counting::start(Behaviour::Silent);
    let v1 = format!("{}/v1", silent.url);
    let base = [
        "llm",
        "complete",
        "--provider",
        "ollama",
        "--base-url",
        &v1,
        "--model",
        "m",
    ];

    let flagged = run(&mut llm(
        &ws,
        &[&base[..], &["--timeout", "0.3", "hi"]].concat(),
    ));
    assert_eq!(
        (flagged.code, flagged.stderr.as_str()),
        (1, "error: ollama: request timeout after 300ms\n")
    );
    let mut from_env = llm(&ws, &[&base[..], &["hi"]].concat());
    from_env.env("MERKLE_LLM_TIMEOUT", "0.25");
    let from_env = run(&mut from_env);
    assert_eq!(
        (from_env.code, from_env.stderr.as_str()),
        (1, "error: ollama: request timeout after 250ms\n")
    );

    let stalled = Counting::start(Behaviour::SilentStream);
    let v1 = format!("{}/v1", stalled.url);
    let idle = run(&mut llm(
        &ws,
        &[
            "llm",
            "complete",
            "--provider",
            "ollama",
            "--base-url",
            &v1,
            "--model",
            "m",
            "--stream",
            "--idle-timeout",
            "0.2",
            "hi",
        ],
    ));
    assert_eq!(
        (idle.code, idle.stderr.as_str()),
        (1, "error: ollama: stream idle timeout after 200ms\n")
    );

    let zero = run(&mut llm(
        &ws,
        &[&base[..], &["--timeout", "0", "hi"]].concat(),
    ));
    assert_eq!(zero.code, 2, "{zero}");
    assert!(
        zero.stderr
            .contains("not a number of seconds greater than 0"),
        "{zero}"
    );
}

#[test]
fn json_output_keeps_the_thinking_signature() {
    let ws = Workspace::empty();
    ws.write(
        "signed.yaml",
        "responses:\n  - thinking: weighing it\n    signature: sig-abc\n    content: done\n",
    );
    let doc = parse(&ok(&mut llm(
        &ws,
        &[
            "--json",
            "llm",
            "complete",
            "--script",
            path_str(&ws.path("signed.yaml")),
            "hi",
        ],
    )));
    assert_eq!(
        doc["content"],
        json!([
            {"type": "thinking", "text": "weighing it", "signature": "sig-abc"},
            {"type": "text", "text": "done"}
        ])
    );
}

#[test]
fn an_agent_keeps_its_api_and_speaks_it() {
    let ws = Workspace::empty();
    let server = Counting::start(Behaviour::Refuse);
    let v1 = format!("{}/v1", server.url);
    let add = |provider: &str| {
        run(&mut llm(
            &ws,
            &[
                "--json",
                "agent",
                "add",
                "reasoner",
                "--role",
                "writer",
                "--provider",
                provider,
                "--model",
                "gpt-sim",
                "--base-url",
                &v1,
                "--api",
                "responses",
                "--api-key-env",
                "MY_KEY",
            ],
        ))
    };
    let refused = add("anthropic");
    assert_eq!(refused.code, 2, "{refused}");
    assert!(
        refused.stderr.contains(
            "--api responses is for the providers that speak OpenAI's APIs (openai, ollama, \
             openai-compatible), not anthropic"
        ),
        "{refused}"
    );
    let added = add("openai");
    assert_eq!(added.code, 0, "{added}");
    assert_eq!(parse(&added.stdout)["api"], json!("responses"));
    let listed = ok(&mut llm(&ws, &["agent", "list"]));
    assert!(
        listed.contains("(api responses) (key from $MY_KEY)"),
        "{listed}"
    );
    let mut run_cmd = llm(&ws, &["run", "--agent", "reasoner", "say hi"]);
    run_cmd.env("MY_KEY", "sk-stored");
    let r = run(&mut run_cmd);
    assert_eq!(r.code, 1, "{r}");
    let heads = server.heads();
    assert_eq!(heads.len(), 1, "{r}");
    assert!(heads[0].starts_with("post /v1/responses "), "{}", heads[0]);
}
