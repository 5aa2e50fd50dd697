//! `cargo xtask bench mcp --repo PATH`: many MCP clients at once on one `merkle mcp --http`
//! server over a real tree, each calling `get_node` and `search` as fast as it is answered.
//!
//! The tree is scanned and given offline frames (`merkle generate -r`) first. A sample of its
//! files and folders and a set of queries (names of files in it) are answered once by the CLI
//! (`merkle --json get-node`, `merkle --json search`): every answer the server gives must be
//! the same document. Each client is one MCP session (initialize, then calls over one kept-
//! alive connection); four calls of five are `get_node`, one is `search`. One `get_node` and
//! one `search` (the server's first rescan and its search caches) come before the clock starts;
//! the first `get_node`'s answer, timed from the server's start, is the first answer after
//! start. Prints one JSON object: the clients, the seconds, the first answer, the calls of each
//! tool with their p50, p99 and worst latency, the errors and the wrong answers, and the calls
//! per second.
//!
//! Usage: mcp_bench --merkle BIN --repo PATH [--clients N] [--secs S]
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

// Only its flags: this bench runs on the tree it is given.
#[allow(dead_code)]
#[path = "support/tree.rs"]
mod tree;

/// How many sampled nodes and queries each kind of call cycles through.
const NODES: usize = 200;
const QUERIES: usize = 20;

fn main() -> Result<()> {
    let usage = "mcp_bench --merkle BIN --repo PATH [--clients N] [--secs S]";
    let merkle = tree::required("--merkle", usage)?;
    let repo = tree::required("--repo", usage)?;
    let flag = tree::flag;
    let clients: usize = flag("--clients").map_or(Ok(50), |v| v.parse())?;
    let secs: u64 = flag("--secs").map_or(Ok(60), |v| v.parse())?;

    let cli = Cli {
        merkle: merkle.clone(),
        repo: repo.clone(),
    };
    eprintln!("scanning {} and giving it offline frames", repo.display());
    cli.run(&["scan"])?;
    cli.run(&["generate", "-r"])?;
    let (nodes, queries) = sample(&cli)?;
    eprintln!(
        "answering {} nodes and {} queries with the CLI",
        nodes.len(),
        queries.len()
    );
    let mut expected_nodes = Vec::new();
    for path in &nodes {
        expected_nodes.push(cli.json(&["get-node", path])?);
    }
    let mut expected_hits = Vec::new();
    for q in &queries {
        expected_hits.push(cli.json(&["search", q])?);
    }
    let cases = Arc::new(Cases {
        nodes: nodes.into_iter().zip(expected_nodes).collect(),
        queries: queries.into_iter().zip(expected_hits).collect(),
    });

    let spawned = Instant::now();
    let mut server = Command::new(&merkle)
        .args(["--root"])
        .arg(&repo)
        .args(["--json", "--quiet", "mcp", "--http", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting merkle mcp --http")?;
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().expect("piped")),
        &mut line,
    )?;
    let url = serde_json::from_str::<Value>(&line)
        .ok()
        .and_then(|v| v["url"].as_str().map(str::to_owned))
        .with_context(|| format!("the server printed no URL: {line:?}"))?;

    let runtime = tree::runtime()?;
    let span = Duration::from_secs(secs);
    let outcome = runtime.block_on(load(&url, cases, clients, span, spawned));
    let _ = server.kill();
    let _ = server.wait();
    let (calls, seconds, first_answer) = outcome?;

    let mut report = json!({
        "repo": repo.display().to_string(),
        "clients": clients,
        "seconds": seconds,
        "first_answer_ms": first_answer.as_secs_f64() * 1000.0,
    });
    let mut total = 0;
    for (tool, mut done) in calls {
        total += done.latencies.len();
        done.latencies.sort_unstable();
        let at = |q: f64| {
            let n = done.latencies.len();
            if n == 0 {
                return 0.0;
            }
            let i = ((q * n as f64).ceil() as usize).clamp(1, n) - 1;
            done.latencies[i].as_secs_f64() * 1000.0
        };
        report[tool] = json!({
            "calls": done.latencies.len(),
            "errors": done.errors,
            "wrong": done.wrong,
            "p50_ms": at(0.50),
            "p99_ms": at(0.99),
            "max_ms": at(1.0),
            "first_problem": done.first_problem,
        });
    }
    report["calls_per_second"] = json!(total as f64 / seconds);
    println!("{report}");
    Ok(())
}

/// The CLI on the tree.
struct Cli {
    merkle: PathBuf,
    repo: PathBuf,
}

impl Cli {
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.merkle);
        c.arg("--root").arg(&self.repo).arg("--quiet").args(args);
        c
    }

    fn run(&self, args: &[&str]) -> Result<()> {
        let status = self.command(args).stdout(Stdio::null()).status()?;
        if !status.success() {
            bail!("merkle {} failed: {status}", args.join(" "));
        }
        Ok(())
    }

    fn json(&self, args: &[&str]) -> Result<Value> {
        let mut c = self.command(&["--json"]);
        let out = c.args(args).output()?;
        if !out.status.success() {
            bail!(
                "merkle --json {} failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        Ok(serde_json::from_slice(&out.stdout)?)
    }
}

/// Every `len / n`-th of `items`, `n` of them at most.
fn spread<T: Clone>(items: &[T], n: usize) -> Vec<T> {
    let step = (items.len() / n).max(1);
    items.iter().step_by(step).take(n).cloned().collect()
}

/// The nodes (files and folders, spread over the tree) and queries (the names of files,
/// without their extension) the clients ask for.
fn sample(cli: &Cli) -> Result<(Vec<String>, Vec<String>)> {
    let listing = cli.json(&["list-nodes", "-r"])?;
    let entries = listing.as_array().context("list-nodes gave no list")?;
    let of_kind = |kind: &str| -> Vec<String> {
        entries
            .iter()
            .filter(|e| e["kind"] == kind)
            .filter_map(|e| e["path"].as_str().map(str::to_owned))
            .collect()
    };
    let (files, dirs) = (of_kind("file"), of_kind("dir"));
    let mut nodes = spread(&files, NODES * 3 / 4);
    nodes.extend(spread(&dirs, NODES / 4));
    let mut queries: Vec<String> = spread(&files, QUERIES * 4)
        .iter()
        .filter_map(|p| Path::new(p).file_stem()?.to_str().map(str::to_owned))
        .filter(|s| s.len() >= 4 && s.chars().all(|c| c.is_alphanumeric() || c == '_'))
        .collect();
    queries.sort();
    queries.dedup();
    let queries = spread(&queries, QUERIES);
    if nodes.is_empty() || queries.is_empty() {
        bail!("the tree has too few files to sample");
    }
    Ok((nodes, queries))
}

/// The requests and their expected answers.
struct Cases {
    nodes: Vec<(String, Value)>,
    queries: Vec<(String, Value)>,
}

/// One tool's calls.
#[derive(Default)]
struct Calls {
    latencies: Vec<Duration>,
    errors: usize,
    wrong: usize,
    first_problem: Option<String>,
}

impl Calls {
    fn problem(&mut self, wrong: bool, what: String) {
        if wrong {
            self.wrong += 1;
        } else {
            self.errors += 1;
        }
        self.first_problem.get_or_insert(what);
    }
}

/// Runs `clients` sessions for `span`; returns each tool's calls and the seconds it took.
async fn load(
    url: &str,
    cases: Arc<Cases>,
    clients: usize,
    span: Duration,
    spawned: Instant,
) -> Result<(Vec<(&'static str, Calls)>, f64, Duration)> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(clients * 2)
        .build()?;
    let mut sessions = Vec::new();
    for _ in 0..clients {
        sessions.push(Session::open(http.clone(), url).await?);
    }
    // The server's first calls rescan the tree and bring its search caches in step: done
    // before the clock starts, so that the figures are those of a server that has run a while.
    let mut first_answer = spawned.elapsed();
    if let Some(first) = sessions.first_mut() {
        let (path, _) = &cases.nodes[0];
        first.call("get_node", json!({"path": path})).await?;
        first_answer = spawned.elapsed();
        let (query, _) = &cases.queries[0];
        first.call("search", json!({"query": query})).await?;
    }
    let start = Instant::now();
    let deadline = start + span;
    let mut tasks = tokio::task::JoinSet::new();
    for (i, mut session) in sessions.into_iter().enumerate() {
        let cases = Arc::clone(&cases);
        tasks.spawn(async move {
            let (mut nodes, mut searches) = (Calls::default(), Calls::default());
            let mut n = i;
            while Instant::now() < deadline {
                n += 1;
                let began = Instant::now();
                if n % 5 == 0 {
                    let (query, expected) = &cases.queries[(n / 5) % cases.queries.len()];
                    let answer = session.call("search", json!({"query": query})).await;
                    searches.latencies.push(began.elapsed());
                    check(&mut searches, answer, expected, query);
                } else {
                    let (path, expected) = &cases.nodes[n % cases.nodes.len()];
                    let answer = session.call("get_node", json!({"path": path})).await;
                    nodes.latencies.push(began.elapsed());
                    check(&mut nodes, answer, expected, path);
                }
            }
            (nodes, searches)
        });
    }
    let (mut nodes, mut searches) = (Calls::default(), Calls::default());
    while let Some(done) = tasks.join_next().await {
        let (n, s) = done?;
        for (all, one) in [(&mut nodes, n), (&mut searches, s)] {
            all.latencies.extend(one.latencies);
            all.errors += one.errors;
            all.wrong += one.wrong;
            if all.first_problem.is_none() {
                all.first_problem = one.first_problem;
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok((
        vec![("get_node", nodes), ("search", searches)],
        seconds,
        first_answer,
    ))
}

fn check(calls: &mut Calls, answer: Result<Value>, expected: &Value, asked: &str) {
    match answer {
        Ok(got) if &got == expected => {}
        Ok(_) => calls.problem(true, format!("{asked}: an answer unlike the CLI's")),
        Err(e) => calls.problem(false, format!("{asked}: {e:#}")),
    }
}

/// One MCP session over Streamable HTTP.
struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
    next: u64,
}

const PROTOCOL: &str = "2025-11-25";

impl Session {
    async fn open(http: reqwest::Client, url: &str) -> Result<Session> {
        let init = json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "mcp_bench", "version": "1"},
            },
        });
        let response = http
            .post(url)
            .header("accept", "application/json, text/event-stream")
            .json(&init)
            .send()
            .await?;
        let id = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
            .context("initialize gave no mcp-session-id")?;
        reply(response, 0).await?;
        let session = Session {
            http,
            url: url.to_owned(),
            id,
            next: 1,
        };
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        session.post(&note).await?.error_for_status()?;
        Ok(session)
    }

    async fn post(&self, body: &Value) -> Result<reqwest::Response> {
        Ok(self
            .http
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", PROTOCOL)
            .json(body)
            .send()
            .await?)
    }

    /// Calls `tool` with a budget no answer reaches; returns its JSON document.
    async fn call(&mut self, tool: &str, mut arguments: Value) -> Result<Value> {
        arguments["max_tokens"] = json!(1_000_000);
        let id = self.next;
        self.next += 1;
        let request = json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        });
        let result = reply(self.post(&request).await?, id).await?;
        let text = result["content"][0]["text"]
            .as_str()
            .context("a result without text")?;
        if result["isError"] == true {
            bail!("{tool} failed: {text}");
        }
        Ok(serde_json::from_str(text)?)
    }
}

/// The result of JSON-RPC request `id` in `response`, a JSON body or an event stream.
async fn reply(response: reqwest::Response, id: u64) -> Result<Value> {
    let status = response.status();
    let body = response.text().await?;
    if !status.is_success() {
        bail!("HTTP {status}: {body}");
    }
    let messages: Vec<Value> = if body.trim_start().starts_with('{') {
        vec![serde_json::from_str(&body)?]
    } else {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str(d.trim()).ok())
            .collect()
    };
    let message = messages
        .into_iter()
        .find(|m| m["id"] == id)
        .with_context(|| format!("no answer to request {id} in {body:?}"))?;
    if let Some(error) = message.get("error") {
        bail!("error: {error}");
    }
    Ok(message["result"].clone())
}
