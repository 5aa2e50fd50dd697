//! `merkle generate` with a model: the simulator answers, `--json` reports the calls, and a
//! re-run costs none.
use pretty_assertions::assert_eq;
use serde_json::json;

use crate::{Workspace, parse, run};

fn generate(ws: &Workspace, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--json", "generate", "--recursive"];
    all.extend_from_slice(args);
    let mut cmd = ws.cmd(&all);
    for name in ["MERKLE_LLM_MODE", "MERKLE_LLM_PROVIDER", "MERKLE_AGENT"] {
        cmd.env_remove(name);
    }
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    parse(&r.stdout)
}

#[test]
fn a_model_writes_frames_once_and_the_rerun_calls_nothing() {
    let ws = Workspace::fixture();
    let first = generate(&ws, &["--provider", "sim", "--concurrency", "3"]);
    // One call per file and per directory: a symlink's frame (where it points) needs none.
    assert_eq!(
        (
            &first["produced"],
            &first["synthesized"],
            &first["llm"]["calls"]
        ),
        (&json!(10), &json!(4), &json!(11)),
        "{first}"
    );
    assert!(
        first["producer"]
            .as_str()
            .is_some_and(|p| p.starts_with("llm-sim:default:")),
        "{first}"
    );
    let again = generate(&ws, &["--provider", "sim"]);
    assert_eq!(
        (
            &again["llm"]["calls"],
            &again["produced"],
            &again["synthesized"]
        ),
        (&json!(0), &json!(0), &json!(0))
    );
    // The default agent was registered with the synthesis role and wrote the frames.
    let head = ws.json(&["get-head", "src/lib.rs", "--type", "summary"]);
    assert_eq!(
        (&head["agent_id"], &head["content"]),
        (&json!("merkle"), &json!("Simulated response"))
    );
}

#[test]
fn without_a_model_generate_is_offline_and_says_so() {
    let ws = Workspace::fixture();
    let mut cmd = ws.cmd(&["generate", "-r"]);
    cmd.env_remove("MERKLE_LLM_MODE")
        .env_remove("MERKLE_LLM_PROVIDER");
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.stderr.contains("no model is configured") && r.stdout.contains("produced"),
        "{r}"
    );
    let offline = generate(&ws, &["--offline"]);
    assert_eq!(
        offline["producer"],
        json!("outline:v17:8:2048"),
        "{offline}"
    );
    assert!(offline.get("llm").is_none());
}

/// An OpenAI-compatible server on 127.0.0.1 that holds every request until the test releases it,
/// then answers "ok"; it counts the requests it has received.
struct HeldServer {
    url: String,
    received: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    release: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl HeldServer {
    fn start() -> HeldServer {
        use std::io::{BufRead, BufReader, Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/v1", listener.local_addr().expect("address"));
        let received = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let release = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (count, gate) = (received.clone(), release.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { return };
                let (count, gate) = (count.clone(), gate.clone());
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                    let mut writer = stream;
                    loop {
                        let mut length = 0usize;
                        let mut line = String::new();
                        loop {
                            line.clear();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            if line == "\r\n" {
                                break;
                            }
                            let lower = line.to_ascii_lowercase();
                            if let Some(v) = lower.strip_prefix("content-length:") {
                                length = v.trim().parse().unwrap_or(0);
                            }
                        }
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        count.fetch_add(1, Ordering::SeqCst);
                        while !gate.load(Ordering::SeqCst) {
                            std::thread::yield_now();
                        }
                        let answer = r#"{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}"#;
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                            answer.len()
                        );
                        if writer.write_all(reply.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        HeldServer {
            url,
            received,
            release,
        }
    }
}

#[test]
fn an_interrupted_generate_keeps_finished_frames_and_a_rerun_resumes() {
    use std::sync::atomic::Ordering;
    let ws = Workspace::fixture();
    ws.ok(&["-q", "scan"]);
    let server = HeldServer::start();
    let args = [
        "--root",
        ws.root.to_str().expect("utf-8"),
        "generate",
        "-r",
        "--provider",
        "openai-compatible",
        "--base-url",
        &server.url,
        "--model",
        "m",
        "--concurrency",
        "2",
    ];
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("merkle"))
        .args(args)
        .env_remove("MERKLE_LLM_MODE")
        .env_remove("OPENAI_API_KEY")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting merkle generate");
    // Two calls in flight, held by the server: interrupt, then let them finish.
    while server.received.load(Ordering::SeqCst) < 2 {
        assert!(
            child.try_wait().expect("poll").is_none(),
            "generate ended early"
        );
        std::thread::yield_now();
    }
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    // Release the held calls only once generate has seen the interrupt, so that no other call
    // could start after they return.
    let stderr = child.stderr.take().expect("piped stderr");
    let (seen, seen_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        use std::io::BufRead;
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line.unwrap_or_default();
            if line.contains("interrupted: finishing the calls in flight") {
                let _ = seen.send(());
            }
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    seen_rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("generate reports the interrupt");
    server.release.store(true, Ordering::SeqCst);
    let status = child.wait().expect("waiting for generate");
    let stderr = reader.join().expect("the stderr reader");
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "interrupted: the 2 model calls that finished have their frames saved; run the same \
             generate again to resume"
        ),
        "{stderr}"
    );
    assert_eq!(
        server.received.load(Ordering::SeqCst),
        2,
        "no call started after Ctrl-C"
    );

    // The re-run makes the calls that were not made, and no others: the 7 files less the 2
    // saved, and the 4 folders. The 3 symlinks needed no call and were saved the first time.
    let again = generate(
        &ws,
        &[
            "--provider",
            "openai-compatible",
            "--base-url",
            &server.url,
            "--model",
            "m",
        ],
    );
    assert_eq!(
        (&again["produced"], &again["llm"]["calls"]),
        (&json!(5), &json!(9)),
        "{again}"
    );
}

#[test]
fn a_model_after_an_offline_run_replaces_the_outlines_and_offline_leaves_its_frames() {
    let ws = Workspace::fixture();
    let offline = generate(&ws, &["--offline"]);
    assert_eq!(offline["produced"], json!(10));
    let model = generate(&ws, &["--provider", "sim"]);
    assert_eq!(
        (
            &model["produced"],
            &model["synthesized"],
            &model["llm"]["calls"]
        ),
        (&json!(10), &json!(4), &json!(11)),
        "{model}"
    );
    // An offline run afterwards keeps what the model wrote.
    let again = generate(&ws, &["--offline"]);
    assert_eq!(
        (&again["produced"], &again["synthesized"]),
        (&json!(0), &json!(0))
    );
    let head = ws.json(&["get-head", "src/lib.rs", "--type", "summary"]);
    assert_eq!(head["content"], json!("Simulated response"));
}

#[test]
fn the_writing_agent_s_own_model_is_used_unless_a_flag_or_the_mode_says_otherwise() {
    let ws = Workspace::fixture();
    ws.ok(&[
        "agent",
        "add",
        "gen",
        "--role",
        "synthesis",
        "--provider",
        "sim",
        "--model",
        "house",
    ]);
    let own = generate(&ws, &["--agent", "gen"]);
    assert_eq!(own["llm"]["calls"], json!(11), "{own}");
    assert!(
        own["producer"]
            .as_str()
            .is_some_and(|p| p.starts_with("llm-sim:house:")),
        "{own}"
    );
    // --offline still means offline, and leaves the model's frames alone.
    let offline = generate(&ws, &["--agent", "gen", "--offline"]);
    assert_eq!(
        (&offline["produced"], &offline["llm"]),
        (&json!(0), &json!(null))
    );
    // A flag wins over the stored model: another model is other work.
    let flagged = generate(&ws, &["--agent", "gen", "--model", "other"]);
    assert!(
        flagged["producer"]
            .as_str()
            .is_some_and(|p| p.starts_with("llm-sim:other:")),
        "{flagged}"
    );
    assert_eq!(flagged["llm"]["calls"], json!(11), "{flagged}");

    // MERKLE_LLM_MODE switches the whole process, over an agent's own provider: this one
    // points at a port where nothing listens, and no call goes there.
    ws.ok(&[
        "agent",
        "add",
        "far",
        "--role",
        "synthesis",
        "--provider",
        "ollama",
        "--base-url",
        "http://127.0.0.1:9/v1",
    ]);
    let mut cmd = ws.cmd(&["--json", "generate", "--recursive", "--agent", "far"]);
    cmd.env("MERKLE_LLM_MODE", "simulated")
        .env_remove("MERKLE_LLM_PROVIDER")
        .env_remove("MERKLE_LLM_SCRIPT");
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    assert_eq!(parse(&r.stdout)["llm"]["calls"], json!(11), "{r}");
}

#[test]
fn generate_without_a_path_covers_the_workspace_root_from_a_subfolder_and_says_so() {
    let ws = Workspace::fixture();
    ws.ok(&["-q", "scan"]);
    let mut cmd = ws.cmd(&["--json", "generate", "--recursive", "--offline"]);
    cmd.current_dir(ws.path("src/util"));
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    let report = parse(&r.stdout);
    assert_eq!(
        (&report["path"], &report["recursive"], &report["failed"]),
        (&json!(""), &json!(true), &json!([])),
        "{report}"
    );
    // Files outside the subfolder got frames, and the root is up to date.
    for path in ["README.md", "docs/guide.md", "."] {
        let node = ws.json(&["get-node", path, "--type", "summary"]);
        assert_eq!(
            node["frames"].as_array().map(Vec::len),
            Some(1),
            "{path}: {node}"
        );
    }
    let status = ws.json(&["status"]);
    assert_eq!(status["stale_frames"], json!([]), "{status}");

    // A path is relative to the current folder, and the text says what was covered.
    let mut cmd = ws.cmd(&["generate", ".", "--offline"]);
    cmd.current_dir(ws.path("src/util"));
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.stdout
            .starts_with("covered: src/util (its own files; --recursive for all below)\n"),
        "{r}"
    );
}

#[test]
fn a_file_changed_during_generate_is_read_again_not_reported_as_a_bare_count() {
    use std::sync::atomic::Ordering;
    let ws = Workspace::fixture();
    ws.ok(&["-q", "scan"]);
    let server = HeldServer::start();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("merkle"))
        .args(["--root", ws.root.to_str().expect("utf-8"), "--json", "-q"])
        .args([
            "generate",
            "-r",
            "--provider",
            "openai-compatible",
            "--base-url",
        ])
        .args([&server.url, "--model", "m", "--concurrency", "1"])
        .env_remove("MERKLE_LLM_MODE")
        .env_remove("OPENAI_API_KEY")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting merkle generate");
    // The first file's call is held: every file is read by now or will be read after this
    // edit, and those read after find content that differs from the scan's.
    while server.received.load(Ordering::SeqCst) < 1 {
        assert!(
            child.try_wait().expect("poll").is_none(),
            "generate ended early"
        );
        std::thread::yield_now();
    }
    for (path, content) in crate::FIXTURE {
        if [
            "README.md",
            "docs/guide.md",
            "src/lib.rs",
            "src/util/mod.rs",
            "src/util/x.rs",
        ]
        .contains(path)
        {
            ws.write(path, &format!("{content}// changed during the run\n"));
        }
    }
    server.release.store(true, Ordering::SeqCst);
    let out = child.wait_with_output().expect("waiting for generate");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(parse(&stdout)["failed"], json!([]), "{stdout}");
    // Every frame is on the files as they are now.
    let status = ws.json(&["status"]);
    assert_eq!(
        (&status["changed_on_disk"], &status["stale_frames"]),
        (&json!([]), &json!([])),
        "{status}"
    );
}

#[test]
fn simulated_frames_say_who_wrote_them_and_replace_brings_the_outlines_back() {
    let ws = Workspace::fixture();
    let offline = generate(&ws, &["--offline"]);
    let outline = ws.json(&["get-head", "src/lib.rs", "--type", "summary"]);
    assert_eq!(
        (
            &outline["metadata"]["provider"],
            &outline["metadata"]["model"]
        ),
        (&json!(null), &json!(null))
    );
    // The simulator says what it writes, and its frames name it: file and directory alike.
    let mut cmd = ws.cmd(&["generate", "-r", "--provider", "sim"]);
    cmd.env_remove("MERKLE_LLM_MODE");
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    assert!(
        r.stderr.contains(
            "note: the simulator writes these frames (its scripted or fixed answers), not a model"
        ),
        "{r}"
    );
    for path in ["src/lib.rs", "src"] {
        let head = ws.json(&["get-head", path, "--type", "summary"]);
        assert_eq!(
            (&head["metadata"]["provider"], &head["metadata"]["model"]),
            (&json!("sim"), &json!("simulated")),
            "{path}: {head}"
        );
    }
    // An offline run keeps them; --replace makes the outlines again, as they were.
    let kept = generate(&ws, &["--offline"]);
    assert_eq!(
        (&kept["produced"], &kept["synthesized"]),
        (&json!(0), &json!(0))
    );
    let replaced = generate(&ws, &["--offline", "--replace"]);
    // The outlines come back from their memos: the same content, no parse.
    assert_eq!(
        replaced["produced"].as_u64().unwrap_or(0) + replaced["reused"].as_u64().unwrap_or(0),
        offline["produced"].as_u64().expect("a count"),
        "{replaced}"
    );
    let back = ws.json(&["get-head", "src/lib.rs", "--type", "summary"]);
    assert_eq!(back["content"], outline["content"]);
    assert_eq!(back["metadata"]["provider"], json!(null));
}

#[test]
fn counts_that_cannot_work_are_usage_errors() {
    let ws = Workspace::fixture();
    for args in [
        &["generate", "--concurrency", "0"][..],
        &["generate", "--max-tokens", "0"],
        &["generate", "--max-input-tokens", "0"],
        &["get-node", ".", "--max-frames", "0"],
        &["run", "--max-model-calls", "0", "task"],
        &["search", "x", "--limit", "0"],
    ] {
        let r = ws.run(args);
        assert_eq!(r.code, 2, "{args:?}: {r}");
        assert!(
            r.stderr.contains("invalid value '0'") || r.stderr.contains("must be at least 1"),
            "{args:?}: {r}"
        );
    }
}

#[test]
fn an_invalidation_marker_is_never_shown_as_context() {
    let ws = Workspace::fixture();
    generate(&ws, &["--offline"]);
    ws.ok(&["invalidate", "README.md", "--agent", "merkle"]);
    let node = ws.json(&["get-node", "README.md"]);
    let types: Vec<_> = node["frames"]
        .as_array()
        .expect("frames")
        .iter()
        .map(|f| f["frame_type"].clone())
        .collect();
    assert_eq!(types, vec![json!("summary")], "{node}");
    // Asked for by type, it is there.
    let marker = ws.json(&["get-node", "README.md", "--type", "merkle.invalidate"]);
    assert_eq!(
        marker["frames"].as_array().map(Vec::len),
        Some(1),
        "{marker}"
    );
}

/// A map over children whose frames a model wrote (no size line) counts each file by its size
/// in the tree, never as 0 bytes.
#[test]
fn a_map_over_model_written_files_counts_their_real_sizes() {
    let ws = Workspace::fixture();
    generate(&ws, &["--provider", "sim"]);
    ws.ok(&[
        "synthesize",
        "src/util",
        "--policy",
        "map",
        "--agent",
        "merkle",
    ]);
    let map = ws.json(&["get-head", "src/util", "--type", "summary"]);
    let text = map["content"].as_str().expect("text");
    // mod.rs holds 34 bytes and x.rs 4 ("aaa\n").
    assert!(text.contains("2 files, 38 bytes"), "{text}");
    assert!(!text.contains(": 0 bytes"), "{text}");
}
