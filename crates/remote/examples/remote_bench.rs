//! `cargo xtask bench remote`: push and pull a million frames on 50,000 nodes through a real
//! PostgreSQL, then an incremental push of one edited file's frames against a no-op push.
//!
//! Prints a table on stdout. The server is `MERKLE_TEST_POSTGRES_URL` (default
//! `postgres://postgres@127.0.0.1:5432/test`); the bench works in a schema of its own and drops
//! it at the end. Options: `--nodes N` (50000), `--per-node N` frames on each (20), `--runs N`
//! for the incremental and no-op pushes (7).
use std::path::Path;
use std::time::{Duration, Instant};

use merkle_store::{NewFrame, OpenOptions, Role, ScanOptions, Store};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

struct Config {
    nodes: usize,
    per_node: usize,
    runs: usize,
}

fn parse_args() -> Result<Config> {
    let mut c = Config {
        nodes: 50_000,
        per_node: 20,
        runs: 7,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value: usize = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?
            .parse()?;
        match flag.as_str() {
            "--nodes" => c.nodes = value,
            "--per-node" => c.per_node = value,
            "--runs" => c.runs = value.max(1),
            _ => return Err(format!("unknown option {flag}").into()),
        }
    }
    Ok(c)
}

fn open(root: &Path, store_dir: &Path) -> Result<Store> {
    Ok(Store::open(
        root,
        &OpenOptions {
            store_dir: Some(store_dir.to_path_buf()),
            ..OpenOptions::default()
        },
    )?)
}

fn file_path(i: usize) -> String {
    format!("d{:04}/f{i:06}.txt", i / 100)
}

/// One note per (file, k): about 120 bytes, like a short summary.
fn frames_for(store: &Store, path: &str, per_node: usize, tag: &str) -> Result<Vec<NewFrame>> {
    let node = store
        .node_at(path)?
        .ok_or_else(|| format!("no node at {path}"))?;
    Ok((0..per_node)
        .map(|k| {
            NewFrame::new(
                node.node_id,
                "notes",
                "bench",
                format!("note {k} on {path} ({tag}): what this file does, who calls it, and what to watch out for when changing it.").into_bytes(),
            )
        })
        .collect())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn secs(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

fn main() -> Result<()> {
    let config = parse_args()?;
    let url = std::env::var("MERKLE_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_owned());
    let tmp = tempfile::tempdir()?;
    let ws = tmp.path().join("ws");
    write_files(&ws, config.nodes)?;
    let a = open(&ws, &tmp.path().join("a-store"))?;
    a.scan(&ScanOptions::default())?;
    a.add_agent("bench", Role::Writer)?;
    let local_put = put_locally(&a, &config)?;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let schema = format!("bench_remote_{}", std::process::id());
    let target = remote::Remote {
        name: "bench".to_owned(),
        url: url.clone(),
        schema: schema.clone(),
    };
    let result = runtime.block_on(bench_remote(&config, &target, &a, &ws, tmp.path()));
    let measured = match result {
        Ok(r) => r,
        Err(e) => {
            runtime.block_on(session_drop(&url, &schema));
            return Err(e);
        }
    };
    print_table(&config, &url, local_put, &measured);
    Ok(())
}

/// Writes the workspace's files, a hundred to a folder.
fn write_files(ws: &Path, nodes: usize) -> Result<()> {
    eprintln!("bench remote: writing {nodes} files");
    for i in 0..nodes {
        let p = ws.join(file_path(i));
        if i % 100 == 0 {
            std::fs::create_dir_all(p.parent().ok_or("a parent")?)?;
        }
        std::fs::write(&p, format!("file {i}\n"))?;
    }
    Ok(())
}

/// Puts every file's frames into store `a`, 50,000 at a time; how long that took.
fn put_locally(a: &Store, config: &Config) -> Result<Duration> {
    let total = config.nodes * config.per_node;
    eprintln!("bench remote: putting {total} frames locally");
    let started = Instant::now();
    let mut batch = Vec::new();
    for i in 0..config.nodes {
        batch.extend(frames_for(a, &file_path(i), config.per_node, "v1")?);
        if batch.len() >= 50_000 || i + 1 == config.nodes {
            for r in a.put_frames(std::mem::take(&mut batch)) {
                r?;
            }
        }
    }
    Ok(started.elapsed())
}

/// What the bench measured against the remote.
struct Measured {
    full: remote::PushReport,
    noop: Duration,
    incremental: Duration,
    incremental_bytes: u64,
    pull: remote::PullReport,
}

/// The remote half: a full push, no-op and incremental pushes, and a pull into a second
/// store; the bench's schema is dropped after.
async fn bench_remote(
    config: &Config,
    target: &remote::Remote,
    a: &Store,
    ws: &Path,
    tmp: &Path,
) -> Result<Measured> {
    let env = |k: &str| std::env::var(k).ok();
    let mut session = remote::connect(target, &env).await?;
    remote::schema::init(&mut session, &[], &[]).await?;
    eprintln!("bench remote: pushing");
    let full = remote::push(a, &mut session, &remote::PushOptions::default()).await?;

    let mut noop = Vec::new();
    let mut incremental = Vec::new();
    let mut incremental_bytes = 0;
    for run in 0..config.runs {
        let r = remote::push(a, &mut session, &remote::PushOptions::default()).await?;
        noop.push(Duration::from_secs_f64(r.seconds));
        // Edit one file, rescan, give its new version its frames, push them.
        let path = file_path(run * 997 % config.nodes);
        std::fs::write(ws.join(&path), format!("edited in run {run}\n"))?;
        a.scan(&ScanOptions::default())?;
        for r in a.put_frames(frames_for(a, &path, config.per_node, "edit")?) {
            r?;
        }
        let r = remote::push(a, &mut session, &remote::PushOptions::default()).await?;
        if r.pushed.frames != config.per_node as u64 {
            return Err(format!("the incremental push sent {} frames", r.pushed.frames).into());
        }
        incremental_bytes = r.bytes;
        incremental.push(Duration::from_secs_f64(r.seconds));
    }

    eprintln!("bench remote: pulling into a second store");
    let b = open(ws, &tmp.join("b-store"))?;
    b.scan(&ScanOptions::default())?;
    let pull = remote::pull(&b, &mut session, &remote::PullOptions::default()).await?;
    session_drop(&target.url, &target.schema).await;
    Ok(Measured {
        full,
        noop: median(noop),
        incremental: median(incremental),
        incremental_bytes,
        pull,
    })
}

/// Prints the table of results.
fn print_table(config: &Config, url: &str, local_put: Duration, m: &Measured) {
    let total = config.nodes * config.per_node;
    let Measured {
        full,
        noop,
        incremental,
        incremental_bytes,
        pull,
    } = m;
    let rate = |frames: u64, s: f64| frames as f64 / s.max(1e-9);
    println!(
        "bench remote: {} frames on {} nodes, PostgreSQL at {}\n",
        total,
        config.nodes,
        remote::config::redact(url)
    );
    println!(
        "{:<44} {:>12} {:>14} {:>12}",
        "step", "time", "frames/s", "MB sent/recv"
    );
    println!(
        "{:<44} {:>12} {:>14.0} {:>12}",
        "local put_frames (for reference)",
        secs(local_put),
        rate(total as u64, local_put.as_secs_f64()),
        "-"
    );
    println!(
        "{:<44} {:>12} {:>14.0} {:>12.1}",
        "push, everything",
        format!("{:.3} s", full.seconds),
        rate(full.pushed.frames, full.seconds),
        full.bytes as f64 / 1e6
    );
    println!(
        "{:<44} {:>12} {:>14.0} {:>12.1}",
        "pull, the local tree's frames",
        format!("{:.3} s", pull.seconds),
        rate(pull.pulled.frames, pull.seconds),
        pull.bytes as f64 / 1e6
    );
    println!(
        "{:<44} {:>12} {:>14} {:>12.3}",
        format!("no-op push (median of {})", config.runs),
        secs(*noop),
        "-",
        0.0
    );
    println!(
        "{:<44} {:>12} {:>14} {:>12.3}",
        format!("push of one edited file's {} frames", config.per_node),
        secs(*incremental),
        "-",
        *incremental_bytes as f64 / 1e6
    );
    let ratio = incremental.as_secs_f64() / noop.as_secs_f64().max(1e-9);
    println!(
        "\nincremental / no-op push: {ratio:.2}x (target <= 2x: {})",
        if ratio <= 2.0 { "PASS" } else { "FAIL" }
    );
    println!(
        "pushed {} frames, {} nodes; pulled {} frames, {} nodes",
        full.pushed.frames, full.pushed.nodes, pull.pulled.frames, pull.pulled.nodes
    );
}

/// Drops the bench's schema (best effort: the bench's result stands either way).
async fn session_drop(url: &str, schema: &str) {
    if let Ok((client, conn)) = tokio_postgres::connect(url, tokio_postgres::NoTls).await {
        tokio::spawn(conn);
        let _ = client
            .batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"))
            .await;
    }
}
