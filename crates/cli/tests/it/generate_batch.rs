//! `merkle generate --batch` against the fake Anthropic and OpenAI servers, on a real tree (this
//! repository's own files): no direct model call, the same frames as a direct generate at half
//! the cost, a dry run that sends nothing, a batch that stays in progress for several reads (as
//! a real service's does), and a run killed while it waits that picks its batch up again
//! instead of sending another.
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use llm_sim::{Digest, FakeServer};
use merkle_store::{OpenOptions, Store};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::{Workspace, parse, run};

struct Server {
    /// Runs the fake server; kept for as long as it serves.
    runtime: tokio::runtime::Runtime,
    fake: FakeServer,
}

impl Server {
    fn start() -> Server {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let fake = runtime
            .block_on(FakeServer::start("127.0.0.1:0", Box::new(Digest)))
            .expect("the fake server starts");
        Server { runtime, fake }
    }

    fn direct_calls(&self) -> usize {
        self.fake
            .served()
            .iter()
            .filter(|s| s.batch.is_none())
            .count()
    }
}

/// A workspace holding this repository's tracked files: a real tree, present wherever the
/// tests run.
fn repository_tree() -> Workspace {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let listed = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(&repo)
        .output()
        .expect("git ls-files");
    assert!(listed.status.success(), "git ls-files failed");
    let ws = Workspace::empty();
    for path in listed.stdout.split(|&b| b == 0).filter(|p| !p.is_empty()) {
        let path = std::str::from_utf8(path).expect("utf-8 path");
        let from = repo.join(path);
        // A tracked file deleted in the working tree is not part of it.
        let Ok(meta) = std::fs::symlink_metadata(&from) else {
            continue;
        };
        let to = ws.path(path);
        std::fs::create_dir_all(to.parent().expect("a parent")).expect("mkdir");
        if meta.file_type().is_symlink() {
            let target = std::fs::read_link(&from).expect("readlink");
            std::os::unix::fs::symlink(target, &to).expect("symlink");
        } else {
            std::fs::copy(&from, &to).expect("copy");
        }
    }
    ws
}

/// The model flags for the fake server as `api` (`anthropic` or `openai`).
fn model_args(server: &Server, api: &str) -> Vec<String> {
    let url = match api {
        "anthropic" => server.fake.url(),
        _ => format!("{}/v1", server.fake.url()),
    };
    [
        "--provider",
        api,
        "--base-url",
        &url,
        "--api-key-env",
        "SIM_KEY",
        "--model",
        "claude-sim",
        "--price",
        "3,15",
        "--poll",
        "0.05",
    ]
    .map(str::to_owned)
    .to_vec()
}

fn generate(ws: &Workspace, server: &Server, api: &str, extra: &[&str]) -> Value {
    let mut args = vec!["--json", "generate", "-r"];
    args.extend_from_slice(extra);
    let model = model_args(server, api);
    args.extend(model.iter().map(String::as_str));
    let mut cmd = ws.cmd(&args);
    cmd.env("SIM_KEY", "sk-sim")
        .env_remove("MERKLE_LLM_MODE")
        .env_remove("MERKLE_AGENT");
    let r = run(&mut cmd);
    assert_eq!(r.code, 0, "{r}");
    parse(&r.stdout)
}

/// Every node's head summary frame: its id (a hash of node, content, type and agent) and who
/// made it.
fn heads(ws: &Workspace) -> BTreeMap<String, (String, Option<String>, Option<String>)> {
    let options = OpenOptions {
        read_only: true,
        ..OpenOptions::default()
    };
    let store = Store::open(&ws.root, &options).expect("the store opens");
    let mut heads = BTreeMap::new();
    for node in store.list_nodes("", true).expect("nodes") {
        if let Some(frame) = store.head(&node.node_id, "summary").expect("head") {
            let meta = &frame.metadata;
            heads.insert(
                node.path,
                (
                    frame.frame_id.to_hex(),
                    meta.extra.get("producer").cloned(),
                    meta.model.clone(),
                ),
            );
        }
    }
    heads
}

fn cost(report: &Value) -> f64 {
    report["llm"]["cost_usd"].as_f64().expect("a cost")
}

#[test]
fn a_batch_makes_the_frames_of_direct_calls_in_one_batch_at_half_the_cost() {
    for api in ["anthropic", "openai"] {
        let server = Server::start();
        let direct_ws = repository_tree();
        let direct = generate(&direct_ws, &server, api, &["--policy", "map"]);
        let direct_calls = server.direct_calls();
        assert!(direct_calls > 300, "{api}: {direct_calls} calls");

        // The batch from a service of its own, which has not cached the direct run's prompts.
        let server = Server::start();
        let batch_ws = repository_tree();
        let planned = generate(&batch_ws, &server, api, &["--policy", "map", "--dry-run"]);
        assert_eq!(
            (&planned["calls"]["files"], &planned["calls"]["directories"]),
            (&json!(direct_calls), &json!(0)),
            "{api}: {planned}"
        );
        let (full, half) = (
            planned["cost_usd"]["direct"].as_f64().expect("a cost"),
            planned["cost_usd"]["batch"].as_f64().expect("a cost"),
        );
        assert!((half / full - 0.5).abs() < 1e-9, "{api}: {planned}");
        // Priced the other ways too: direct with the run's cached prefix, and Flex where the
        // price has that tier (a --price has none).
        let cached = planned["cost_usd"]["direct_cached"]
            .as_f64()
            .expect("a cost");
        assert!(cached < full * 0.75, "{api}: {planned}");
        assert_eq!(planned["cost_usd"]["flex"], json!(null), "{api}: {planned}");
        assert!(
            server.fake.batch_ids().is_empty(),
            "{api}: a dry run sends nothing"
        );

        let batched = generate(&batch_ws, &server, api, &["--policy", "map", "--batch"]);
        assert_eq!(server.fake.batch_ids().len(), 1, "{api}: one batch");
        assert_eq!(server.direct_calls(), 0, "{api}: no direct call");
        assert_eq!(batched["batch"]["batches"], json!(server.fake.batch_ids()));
        assert_eq!(heads(&batch_ws), heads(&direct_ws), "{api}");
        assert_eq!(batched["produced"], direct["produced"], "{api}");
        // Half, but for the one pre-warming call a direct run makes before its first file
        // (Anthropic), which a batch does not need.
        let tolerance = if api == "anthropic" { 0.02 } else { 1e-9 };
        assert!(
            (cost(&batched) / cost(&direct) - 0.5).abs() < tolerance,
            "{api}: {} vs {}",
            cost(&batched),
            cost(&direct)
        );
        // Everything is up to date: nothing more to send.
        let again = generate(&batch_ws, &server, api, &["--policy", "map", "--batch"]);
        assert_eq!(
            (&again["produced"], &again["batch"]["batches"]),
            (&json!(0), &json!([]))
        );
        assert_eq!(server.fake.batch_ids().len(), 1, "{api}");
    }
}

#[test]
fn with_a_model_s_directory_policy_each_level_is_one_more_batch() {
    let server = Server::start();
    let direct_ws = Workspace::fixture();
    generate(&direct_ws, &server, "anthropic", &[]);
    let batch_ws = Workspace::fixture();
    let batched = generate(&batch_ws, &server, "anthropic", &["--batch"]);
    // The files, then the directories two deep, one deep, and the root.
    assert_eq!(server.fake.batch_ids().len(), 4, "{batched}");
    assert_eq!(heads(&batch_ws), heads(&direct_ws));
}

#[test]
fn a_run_killed_while_it_waits_picks_its_batch_up_and_sends_nothing_twice() {
    let server = Server::start();
    let direct_ws = repository_tree();
    generate(&direct_ws, &server, "anthropic", &["--policy", "map"]);
    server.fake.hold_batches(true);
    let ws = repository_tree();
    let mut args = vec![
        "--root".to_owned(),
        ws.root.to_str().expect("utf-8").to_owned(),
        "generate".to_owned(),
        "-r".to_owned(),
        "--batch".to_owned(),
        "--policy".to_owned(),
        "map".to_owned(),
    ];
    args.extend(model_args(&server, "anthropic"));
    let mut child = Command::new(assert_cmd::cargo::cargo_bin!("merkle"))
        .args(&args)
        .env("SIM_KEY", "sk-sim")
        .env_remove("MERKLE_LLM_MODE")
        .env_remove("MERKLE_AGENT")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting merkle generate --batch");
    // Once it says it sent the batch, the batch is kept in the store; once it has read the
    // batch's state twice it is asleep between two reads: kill it there.
    let stderr = child.stderr.take().expect("piped stderr");
    let mut lines = BufReader::new(stderr).lines();
    let sent = lines
        .by_ref()
        .map_while(Result::ok)
        .find(|line| line.starts_with("sent batch "));
    assert!(
        sent.is_some(),
        "generate --batch never said it sent a batch"
    );
    let read_twice = server.runtime.block_on(async {
        let reads = server.fake.wait_for_batch_reads(2);
        tokio::time::timeout(std::time::Duration::from_secs(120), reads).await
    });
    let state = child.try_wait().expect("the child's state");
    assert!(
        read_twice.is_ok() && state.is_none(),
        "generate --batch stopped waiting: {state:?}"
    );
    child.kill().expect("kill -9");
    child.wait().expect("reaped");
    let first = server.fake.batch_ids();
    assert_eq!(first.len(), 1);

    server.fake.hold_batches(false);
    let resumed = generate(&ws, &server, "anthropic", &["--policy", "map", "--batch"]);
    assert_eq!(server.fake.batch_ids(), first, "no second submission");
    assert_eq!(
        (&resumed["batch"]["batches"], &resumed["batch"]["resumed"]),
        (&json!(first), &json!(true))
    );
    assert_eq!(heads(&ws), heads(&direct_ws));
}

#[test]
fn a_batch_still_in_progress_for_several_reads_is_waited_for() {
    // A real service's batch runs for minutes: here it answers in progress to three reads.
    for api in ["anthropic", "openai"] {
        let server = Server::start();
        server.fake.set_batch_polls(3);
        let direct_ws = Workspace::fixture();
        generate(&direct_ws, &server, api, &[]);
        let batch_ws = Workspace::fixture();
        let batched = generate(&batch_ws, &server, api, &["--batch"]);
        assert_eq!(server.fake.batch_ids().len(), 4, "{api}: {batched}");
        assert_eq!(heads(&batch_ws), heads(&direct_ws), "{api}");
    }
}

#[test]
fn batch_needs_a_provider_with_a_batch_api() {
    let ws = Workspace::fixture();
    let mut cmd = ws.cmd(&["generate", "-r", "--batch", "--provider", "sim"]);
    cmd.env_remove("MERKLE_LLM_MODE");
    let r = run(&mut cmd);
    assert_eq!(r.code, 2, "{r}");
    assert!(
        r.stderr
            .contains("--batch and --dry-run need a provider with a batch API"),
        "{r}"
    );
}

/// Fails the first `flaky` calls it gets and every call whose prompt holds `NEVER ANSWERED`;
/// answers the rest as [`Digest`] does.
#[derive(Debug)]
struct Failing {
    flaky: u64,
}

impl llm_sim::Strategy for Failing {
    fn reply(&mut self, call: u64, request: &llm_core::Request) -> llm_sim::Result<llm_sim::Reply> {
        let prompt = serde_json::to_string(&request.messages).expect("plain data");
        if call <= self.flaky || prompt.contains("NEVER ANSWERED") {
            return Ok(llm_sim::Reply::Failure(llm_sim::Failure::Server {
                status: 500,
                message: "the model broke".to_owned(),
            }));
        }
        llm_sim::Strategy::reply(&mut Digest, call, request)
    }
}

#[test]
fn failed_calls_go_in_the_next_batch_once_and_then_fail_their_file() {
    let direct = Server::start();
    let direct_ws = Workspace::fixture();
    generate(&direct_ws, &direct, "anthropic", &["--policy", "map"]);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let fake = runtime
        .block_on(FakeServer::start(
            "127.0.0.1:0",
            Box::new(Failing { flaky: 2 }),
        ))
        .expect("the fake server starts");
    let server = Server { runtime, fake };
    let ws = Workspace::fixture();
    let retried = generate(&ws, &server, "anthropic", &["--policy", "map", "--batch"]);
    // The two failed calls went again in a second batch, and succeeded there.
    assert_eq!(server.fake.batch_ids().len(), 2, "{retried}");
    assert_eq!(heads(&ws), heads(&direct_ws));

    // A call that fails in both batches fails its file, named with the provider's error.
    ws.write("stubborn.txt", "NEVER ANSWERED\n");
    let mut args = vec!["generate", "-r", "--policy", "map", "--batch"];
    let model = model_args(&server, "anthropic");
    args.extend(model.iter().map(String::as_str));
    let mut cmd = ws.cmd(&args);
    cmd.env("SIM_KEY", "sk-sim").env_remove("MERKLE_LLM_MODE");
    let r = run(&mut cmd);
    assert_eq!(r.code, 1, "{r}");
    assert!(
        r.stderr.contains("stubborn.txt") && r.stderr.contains("the model broke"),
        "{r}"
    );
    assert_eq!(server.fake.batch_ids().len(), 4, "{r}");
}

/// Billable input as Anthropic bills a generate run: uncached 1x, cache writes (the run's
/// one-hour prefix) 2x, reads 0.1x.
fn billable_input(report: &Value) -> f64 {
    let llm = &report["llm"];
    let n = |key: &str| llm[key].as_f64().unwrap_or_else(|| panic!("{key}: {llm}"));
    n("input_tokens") + 2.0 * n("cache_write_tokens") + 0.1 * n("cache_read_tokens")
}

/// A direct generate shares one cached prefix among its calls (the instructions and a map of
/// the workspace's files), written once by a pre-warming call before the calls start: on this
/// repository's tree it bills at most 0.4x the input of the same run without cache hints.
#[test]
fn a_direct_generate_shares_one_cached_prefix_and_bills_under_half_the_input() {
    let server = Server::start();
    let cached = generate(
        &repository_tree(),
        &server,
        "anthropic",
        &["--policy", "map"],
    );
    let served = server.fake.served();
    let first = &served.first().expect("calls").request;
    let system = first.system.as_deref().unwrap_or_default();
    assert!(
        system.contains("\nARCHITECTURE.md\nCONTRIBUTING.md\n"),
        "{system}"
    );
    assert!(first.cache.system, "the prefix is marked");
    assert_eq!(first.cache.ttl, llm_core::CacheTtl::OneHour);
    let plain = generate(
        &repository_tree(),
        &server,
        "anthropic",
        &["--policy", "map", "--no-prompt-cache"],
    );
    assert_eq!(cached["produced"], plain["produced"]);
    assert_eq!(plain["llm"]["cache_read_tokens"], json!(0), "{plain}");
    let ratio = billable_input(&cached) / billable_input(&plain);
    assert!(
        ratio <= 0.4,
        "billable input {ratio:.3}x: {cached} against {plain}"
    );
}

/// A small tree of distinct files, for runs that need no real repository.
fn small_tree() -> Workspace {
    let ws = Workspace::empty();
    for i in 0..6 {
        ws.write(
            &format!("src/m{i}.rs"),
            &format!("pub fn f{i}() -> u32 {{\n    {i}\n}}\n"),
        );
    }
    ws
}

/// `generate` through the fake OpenAI service with gpt-5.6-terra (which has a Flex tier).
fn generate_terra(ws: &Workspace, server: &Server, extra: &[&str]) -> crate::Run {
    let url = format!("{}/v1", server.fake.url());
    let mut args = vec!["--json", "generate", "-r", "--policy", "map"];
    args.extend_from_slice(extra);
    args.extend([
        "--provider",
        "openai",
        "--base-url",
        &url,
        "--api-key-env",
        "SIM_KEY",
        "--model",
        "gpt-5.6-terra",
    ]);
    let mut cmd = ws.cmd(&args);
    cmd.env("SIM_KEY", "sk-sim")
        .env_remove("MERKLE_LLM_MODE")
        .env_remove("MERKLE_AGENT");
    run(&mut cmd)
}

/// `--service-tier flex` asks for OpenAI's Flex tier on every call; calls the service refuses
/// for capacity wait and go again (the report counts the waits), every file gets its frame,
/// and the run bills at the Flex price: half of the same run on the default tier.
#[test]
fn a_flex_generate_waits_out_a_capacity_shortage_and_bills_half() {
    let server = Server::start();
    server.fake.refuse_flex(3);
    let r = generate_terra(&small_tree(), &server, &["--service-tier", "flex"]);
    assert_eq!(r.code, 0, "{r}");
    let flex = parse(&r.stdout);
    assert_eq!(flex["llm"]["flex_waits"], json!(3), "{flex}");
    assert_eq!(flex["produced"], json!(6), "{flex}");
    let served = server.fake.served();
    assert!(
        served
            .iter()
            .all(|s| s.request.service_tier == Some(llm_core::ServiceTier::Flex))
    );
    // The same run on the default tier, from a fresh service (no cache shared with the first).
    let fresh = Server::start();
    let r = generate_terra(&small_tree(), &fresh, &[]);
    assert_eq!(r.code, 0, "{r}");
    let plain = parse(&r.stdout);
    assert_eq!(plain["llm"]["flex_waits"], json!(0), "{plain}");
    let ratio = cost(&flex) / cost(&plain);
    assert!(
        (ratio - 0.5).abs() < 1e-9,
        "{ratio}: {flex} against {plain}"
    );
}

/// Anthropic has no Flex tier: the run is refused before a call, naming the flag.
#[test]
fn flex_on_anthropic_is_refused_before_any_call() {
    let server = Server::start();
    let ws = small_tree();
    let model = model_args(&server, "anthropic");
    let mut args = vec!["generate", "-r", "--service-tier", "flex"];
    args.extend(model.iter().map(String::as_str));
    let mut cmd = ws.cmd(&args);
    cmd.env("SIM_KEY", "sk-sim").env_remove("MERKLE_LLM_MODE");
    let r = run(&mut cmd);
    assert_eq!(r.code, 2, "{r}");
    assert!(r.stderr.contains("--service-tier flex"), "{r}");
    assert!(server.fake.served().is_empty());
}
