//! `cargo xtask`: the one home for project automation (tidy checks, benchmarks, recording).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use xtask::bench::{self, ScanConfig};
use xtask::tidy;

mod bench_agent_cost;
mod bench_generate_cost;
use bench_agent_cost::bench_agent_cost;
use bench_generate_cost::bench_generate_cost;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  tidy                  check dependency layering (ARCHITECTURE.md's `layering` block),
                        heavy-dependency owners, module circles, `//!` lines, files of at
                        most 800 lines and functions of at most 120; exit 1 on any problem
  bench scan [options]  time merkle scan/status against git and b3sum on a generated tree
      --files N         files to generate (default 50000)
      --runs N          timed runs per step; the median is reported (default 5)
      --seed N          tree generator seed (default 1)
      --keep DIR        generate the tree in DIR (absent or empty) and keep it; pick a DIR
                        outside any git checkout so no parent .gitignore applies
      --merkle PATH     measure this binary instead of building `cargo build --release -p merkle`
      --repo PATH       measure a clone of this git checkout (committed; the checkout itself is
                        not written) instead of a generated tree: cold scan vs b3sum, no-op
                        scan vs status, edit + scan vs edit + git add -A, status vs git status,
                        cold scan vs git add -A, each pair interleaved; --keep DIR keeps the clone
      --json            print the results as JSON on stdout instead of a table
  bench context [options]  get-node latency (cold process, 1,000 frames, parent+siblings view),
                        generate and recursive synthesis times on a generated tree
      --files N         files to generate (default 50000)
      --frames N        frames on the node get-node reads (default 1000)
      --runs N          timed get-node runs (default 200)
      --seed N, --keep DIR, --merkle PATH   as for bench scan
  bench outline PATH [options]  recall of the offline outline against universal-ctags'
                        top-level definitions on a real checkout (by language, files with at
                        most N definitions), and the times of ctags and of offline
                        `generate --recursive` over the same files (the checkout is only read)
      --max-defs N      recall counts files with at most N ctags definitions (default 40)
      --ctags PATH      the universal-ctags binary (default `ctags`)
      --merkle PATH     as for bench scan
  bench localize --instances FILE [options]  file localisation on real issues: for each
                        instance (repo, base_commit, problem_statement, gold_files), the tree
                        at its base commit from a bare mirror, scan, offline generate, then
                        `merkle search` with the issue text, fused and `--ranking plain`
                        (BM25); acc@1/@5/@10, MRR and time per search. Where an instance
                        gives its gold `patch`: function acc@5/@10 and any@10 of the fused
                        search's definitions, and the share of the patch's lines that
                        `merkle context` shows at 4000/8000/16000 tokens, against the top
                        plain-ranked files pasted into the same budget
      --mirrors DIR     bare mirrors as DIR/owner+name[/repo] (default ../.mirror)
      --take N          only the first N instances
      --keep DIR        lay the trees out in DIR and keep them (reused by a later run)
      --per-instance    with --keep: a tree per instance, laid out and generated once and
                        searched as it is by later runs (for comparing rankings quickly)
      --out FILE        per-instance results, one JSON object a line
      --merkle PATH     as for bench scan
  bench search --repo PATH --query TEXT [--query TEXT ...] [options]  a whole `merkle
                        search` process after a no-op on a clone of a real checkout (scanned
                        and generated offline) against `git grep -l` of the query's longest
                        word, interleaved: with the search checking the disk itself, and with
                        `merkle watch` running and vouching for its rescan (target <= 50 ms
                        and <= 0.5x git grep)
      --runs N          timed runs of each (default 11)
      --keep DIR, --merkle PATH   as for bench scan
  bench scale --source DIR [--source DIR ...] [options]  issue #46: a tree of N files copied
                        from real checkouts (a line naming its copy appended to each); cold
                        scan, status, edit + scan, generate, the index build, warm search (and
                        beside merkle watch), get-node, with peak RSS and each baseline (b3sum,
                        git status, ctags -R, git grep -l), and .merkle's size; validate after
      --files N         files (default 100000)   --runs N  runs per short step (default 3)
      --query TEXT      the searches' query   --keep DIR, --merkle PATH  as for bench scan
  bench agent-cost      agent-loop: billable input of a 30-call agent session (a 10-minute pause) with and
                        without prompt caching, through the simulator (target <= 0.3x)
  bench batch --repo PATH [--merkle PATH]  generate --batch on a real tree against the fake
                        Anthropic server: one batch, no direct call, the frames of a direct
                        generate at 0.5x the cost, and a kill -9 while it waits then a rerun
                        that picks the same batch up
  bench generate-cost --repo PATH [--merkle PATH]  billable input of generate -r on a real
                        tree, Anthropic and GPT-5.6 rules: direct cached, Flex, batch against
                        uncached (targets <= 0.4x, batch <= 0.25x)
  bench mcp --repo PATH [--merkle PATH] [--clients N] [--secs S]  N (default 50) MCP
                        clients at once on one `merkle mcp --http` over a real tree for S
                        (default 60) seconds, calling get_node and search: calls a second,
                        p50 and p99 latency, every answer checked against the CLI's (target:
                        no error, p99 of get_node under 20 ms)
  bench llm             llm-core: SSE decoding throughput (10 MB streams) and per-request
                        client overhead against a local server vs a bare HTTP exchange
  bench agent           agent-loop: per-turn overhead with an instant model (on disk and on
                        tmpfs, with and without governance), loading and selecting from a
                        transcript of 100,000 messages, each against a baseline and a target
  bench remote [options]  remote: push and pull 1,000,000 frames on 50,000 nodes through the
                        PostgreSQL at MERKLE_TEST_POSTGRES_URL, then an incremental push of one
                        edited file's frames against a no-op push (target <= 2x)
      --nodes N         files (default 50000)
      --per-node N      frames on each (default 20)
      --runs N          incremental and no-op pushes; medians reported (default 7)
  record --provider P --model M --scenario FILE --out FILE [--base-url U]
                        run a scenario (fixtures/scenarios/*.yaml) against a real provider and
                        write the playback script, scrubbed; needs ANTHROPIC_API_KEY or
                        OPENAI_API_KEY (never part of the tests)
";

/// A usage mistake: reported with the usage text and exit code 2.
#[derive(Debug)]
struct Usage(String);

impl std::fmt::Display for Usage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Usage {}

fn main() -> ExitCode {
    match run(std::env::args().skip(1).collect()) {
        Ok(code) => code,
        Err(e) if e.is::<Usage>() => {
            eprintln!("error: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one folder below the workspace root")
}

fn run(args: Vec<String>) -> Result<ExitCode> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Help anywhere, after a task or among its options too (`cargo xtask bench scan --help`).
    if args.iter().any(|a| matches!(*a, "-h" | "--help")) {
        print!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    match args.as_slice() {
        ["tidy"] => {
            let problems = tidy::check(workspace_root())?;
            for p in &problems {
                eprintln!("{p}");
            }
            if problems.is_empty() {
                eprintln!("tidy: ok");
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("tidy: {} problem(s)", problems.len());
                Ok(ExitCode::FAILURE)
            }
        }
        ["bench", "scan", rest @ ..] => bench_scan(rest),
        ["bench", "context", rest @ ..] => bench_context(rest),
        ["bench", "outline", rest @ ..] => bench_outline(rest),
        ["bench", "localize", rest @ ..] => bench_localize(rest),
        ["bench", "search", rest @ ..] => bench_search(rest),
        ["bench", "scale", rest @ ..] => bench_scale(rest),
        ["bench", "llm"] => bench_llm(),
        ["bench", "agent"] => bench_agent(),
        ["bench", "agent-cost"] => bench_agent_cost(),
        ["bench", "batch", rest @ ..] => bench_batch(rest),
        ["bench", "generate-cost", rest @ ..] => bench_generate_cost(rest),
        ["bench", "mcp", rest @ ..] => bench_mcp(rest),
        ["bench", "remote", rest @ ..] => bench_remote(rest),
        ["record", rest @ ..] => record(rest),
        [] | ["help"] => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        _ => Err(Usage(format!("unknown task `{}`", args.join(" "))).into()),
    }
}

fn bench_scan(args: &[&str]) -> Result<ExitCode> {
    let mut files = 50_000;
    let mut runs = 5;
    let mut seed = 1;
    let mut keep = None;
    let mut merkle = None;
    let mut repo = None;
    let mut json = false;
    let mut it = args.iter();
    while let Some(&flag) = it.next() {
        let mut value = || -> Result<&str> {
            it.next()
                .copied()
                .ok_or_else(|| Usage(format!("`{flag}` needs a value")).into())
        };
        let number = |v: &str| -> Result<usize> {
            v.parse()
                .map_err(|_| Usage(format!("`{flag}` wants a number, got `{v}`")).into())
        };
        match flag {
            "--json" => json = true,
            "--files" => files = number(value()?)?,
            "--runs" => runs = number(value()?)?,
            "--seed" => seed = number(value()?)? as u64,
            "--keep" => keep = Some(PathBuf::from(value()?)),
            "--merkle" => merkle = Some(PathBuf::from(value()?)),
            "--repo" => repo = Some(PathBuf::from(value()?)),
            _ => bail!(Usage(format!("unknown option `{flag}` for bench scan"))),
        }
    }
    if files == 0 || runs == 0 {
        bail!(Usage(
            "`--files` and `--runs` must be at least 1".to_owned()
        ));
    }
    let merkle = match merkle {
        Some(path) => path,
        None => xtask::bench_proc::build_merkle(workspace_root())?,
    };
    let report = bench::run_scan(&ScanConfig {
        files,
        runs,
        seed,
        keep,
        merkle,
        repo,
    })?;
    if json {
        println!("{}", report.json());
    } else {
        print!("{}", report.table());
    }
    Ok(ExitCode::SUCCESS)
}

fn bench_context(args: &[&str]) -> Result<ExitCode> {
    let mut config = xtask::bench_context::ContextConfig {
        files: 50_000,
        frames: 1000,
        runs: 200,
        seed: 1,
        keep: None,
        merkle: PathBuf::new(),
    };
    let mut merkle = None;
    let mut it = args.iter();
    while let Some(&flag) = it.next() {
        let value = it
            .next()
            .copied()
            .ok_or_else(|| Usage(format!("`{flag}` needs a value")))?;
        let number = || -> Result<usize> {
            value
                .parse()
                .map_err(|_| Usage(format!("`{flag}` wants a number, got `{value}`")).into())
        };
        match flag {
            "--files" => config.files = number()?,
            "--frames" => config.frames = number()?,
            "--runs" => config.runs = number()?,
            "--seed" => config.seed = number()? as u64,
            "--keep" => config.keep = Some(PathBuf::from(value)),
            "--merkle" => merkle = Some(PathBuf::from(value)),
            _ => bail!(Usage(format!("unknown option `{flag}` for bench context"))),
        }
    }
    config.merkle = match merkle {
        Some(path) => path,
        None => xtask::bench_proc::build_merkle(workspace_root())?,
    };
    print!("{}", xtask::bench_context::run_context(&config)?);
    Ok(ExitCode::SUCCESS)
}

/// Runs remote's benchmark example in release mode, passing its options through; it prints
/// its own table.
fn bench_remote(args: &[&str]) -> Result<ExitCode> {
    let valid = args.chunks(2).all(|pair| {
        matches!(pair, [flag, value]
            if ["--nodes", "--per-node", "--runs"].contains(flag) && value.parse::<u64>().is_ok())
    });
    if !valid {
        bail!(Usage(format!(
            "bad options for bench remote: {}",
            args.join(" ")
        )));
    }
    print!(
        "{}",
        run_bench_example_with("remote", "remote_bench", args)?
    );
    Ok(ExitCode::SUCCESS)
}

fn bench_outline(args: &[&str]) -> Result<ExitCode> {
    let (path, rest) = match args {
        [path, rest @ ..] if !path.starts_with('-') => (*path, rest),
        _ => return Err(Usage("bench outline needs the PATH of a checkout".to_owned()).into()),
    };
    let mut max_defs = 40;
    let mut ctags = PathBuf::from("ctags");
    let mut merkle = None;
    let mut it = rest.iter();
    while let Some(&flag) = it.next() {
        let value = it
            .next()
            .copied()
            .ok_or_else(|| Usage(format!("`{flag}` needs a value")))?;
        match flag {
            "--max-defs" => {
                max_defs = value
                    .parse()
                    .map_err(|_| Usage(format!("`{flag}` wants a number, got `{value}`")))?
            }
            "--ctags" => ctags = PathBuf::from(value),
            "--merkle" => merkle = Some(PathBuf::from(value)),
            _ => bail!(Usage(format!("unknown option `{flag}` for bench outline"))),
        }
    }
    let repo = xtask::bench_outline::checkout(path)?;
    let merkle = match merkle {
        Some(path) => path,
        None => xtask::bench_proc::build_merkle(workspace_root())?,
    };
    let config = xtask::bench_outline::OutlineConfig {
        repo,
        max_defs,
        merkle,
        ctags,
    };
    print!("{}", xtask::bench_outline::run_outline(&config)?);
    Ok(ExitCode::SUCCESS)
}

fn bench_localize(args: &[&str]) -> Result<ExitCode> {
    let mut instances = None;
    let mut mirrors = workspace_root().join("../.mirror");
    let mut take = None;
    let mut work = None;
    let mut out = None;
    let mut merkle = None;
    let mut per_instance = false;
    let mut it = args.iter();
    while let Some(&flag) = it.next() {
        if flag == "--per-instance" {
            per_instance = true;
            continue;
        }
        let value = it
            .next()
            .copied()
            .ok_or_else(|| Usage(format!("`{flag}` needs a value")))?;
        match flag {
            "--instances" => instances = Some(PathBuf::from(value)),
            "--mirrors" => mirrors = PathBuf::from(value),
            "--take" => {
                take = Some(
                    value
                        .parse()
                        .map_err(|_| Usage(format!("`{flag}` wants a number, got `{value}`")))?,
                )
            }
            "--keep" => work = Some(PathBuf::from(value)),
            "--out" => out = Some(PathBuf::from(value)),
            "--merkle" => merkle = Some(PathBuf::from(value)),
            _ => bail!(Usage(format!("unknown option `{flag}` for bench localize"))),
        }
    }
    let Some(instances) = instances else {
        bail!(Usage("bench localize needs --instances FILE".to_owned()));
    };
    let merkle = match merkle {
        Some(path) => path,
        None => xtask::bench_proc::build_merkle(workspace_root())?,
    };
    if per_instance && work.is_none() {
        bail!(Usage("--per-instance needs --keep DIR".to_owned()));
    }
    let config = xtask::bench_localize::LocalizeConfig {
        instances,
        mirrors,
        merkle,
        work,
        take,
        out,
        per_instance,
    };
    print!("{}", xtask::bench_localize::run_localize(&config)?);
    Ok(ExitCode::SUCCESS)
}

/// Runs `package`'s `example` in release mode; its stdout, a small JSON object.
fn run_bench_example(package: &str, example: &str) -> Result<String> {
    run_bench_example_with(package, example, &[])
}

/// Runs `package`'s `example` in release mode with `args`; its stdout.
fn run_bench_example_with(package: &str, example: &str, args: &[&str]) -> Result<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("bench: cargo run --release -p {package} --example {example}");
    let out = std::process::Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            package,
            "--example",
            example,
            "--",
        ])
        .args(args)
        .current_dir(workspace_root())
        .stderr(std::process::Stdio::inherit())
        .output()?;
    if !out.status.success() {
        bail!("the {package} bench failed with {}", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The number `key` of a bench example's JSON object.
fn json_number(json: &str, key: &str) -> Result<f64> {
    let doc: serde_json::Value = serde_json::from_str(json)?;
    doc.get(key)
        .and_then(serde_json::Value::as_f64)
        .ok_or_else(|| anyhow::anyhow!("no number {key} in {json}"))
}

/// Runs llm-core's benchmark example in release mode and prints its figures as a table.
fn bench_llm() -> Result<ExitCode> {
    let json = run_bench_example("llm-core", "bench")?;
    let num = |key: &str| json_number(&json, key);
    println!("bench llm (llm-core, release)\n");
    println!("SSE decoding, 10 MB stream of text deltas:");
    println!("  anthropic  {:>8.1} MB/s", num("anthropic")?);
    println!("  openai     {:>8.1} MB/s", num("openai")?);
    println!("\none request against a local server (median of 300, kept-alive connection):");
    println!("  llm-core client   {:>8.1} us", num("client")?);
    println!("  bare HTTP/1.1     {:>8.1} us", num("bare_http")?);
    println!(
        "  client overhead   {:>8.1} us  ({:.2}x the bare exchange)",
        num("overhead")?,
        num("ratio")?
    );
    Ok(ExitCode::SUCCESS)
}

/// `--name value` pairs of `args`, each name one of `known`.
fn flag_values<'a>(
    args: &[&'a str],
    known: &[&str],
) -> Result<std::collections::HashMap<&'a str, &'a str>> {
    let mut flags = std::collections::HashMap::new();
    let mut it = args.iter();
    while let Some(&arg) = it.next() {
        if !known.contains(&arg) {
            return Err(Usage(format!("unknown option {arg}")).into());
        }
        let value = it
            .next()
            .ok_or_else(|| Usage(format!("{arg} needs a value")))?;
        flags.insert(arg, *value);
    }
    Ok(flags)
}

fn bench_search(args: &[&str]) -> Result<ExitCode> {
    let mut config = xtask::bench_search::parse(args).map_err(Usage)?;
    if config.merkle.as_os_str().is_empty() {
        config.merkle = xtask::bench_proc::build_merkle(workspace_root())?;
    }
    let rows = xtask::bench_search::run(&config)?;
    print!("{}", xtask::bench_search::report(&config, &rows));
    Ok(ExitCode::SUCCESS)
}

fn bench_scale(args: &[&str]) -> Result<ExitCode> {
    let mut config = xtask::bench_scale::parse(args).map_err(Usage)?;
    if config.merkle.as_os_str().is_empty() {
        config.merkle = xtask::bench_proc::build_merkle(workspace_root())?;
    }
    let scale = xtask::bench_scale::run(&config)?;
    print!("{}", xtask::bench_scale::report(&config, &scale));
    Ok(ExitCode::SUCCESS)
}

/// The `--repo` a real-tree bench needs.
fn repo_flag(flags: &std::collections::HashMap<&str, &str>, bench: &str) -> Result<String> {
    match flags.get("--repo") {
        Some(repo) => Ok((*repo).to_owned()),
        None => Err(Usage(format!("bench {bench} needs --repo PATH (a real tree)")).into()),
    }
}

/// The merkle binary: `--merkle`, else a release build of this workspace's.
fn merkle_flag(flags: &std::collections::HashMap<&str, &str>) -> Result<String> {
    let merkle = match flags.get("--merkle") {
        Some(path) => PathBuf::from(path),
        None => xtask::bench_proc::build_merkle(workspace_root())?,
    };
    Ok(merkle.to_string_lossy().into_owned())
}

/// Runs the CLI's batch example in release mode on a real tree: `generate --batch` against a
/// direct generate, and a batched run killed while it waits, then resumed.
fn bench_batch(args: &[&str]) -> Result<ExitCode> {
    let flags = flag_values(args, &["--repo", "--merkle"])?;
    let repo = repo_flag(&flags, "batch")?;
    let merkle = merkle_flag(&flags)?;
    let json = run_bench_example_with(
        "merkle",
        "batch_bench",
        &["--merkle", &merkle, "--repo", &repo],
    )?;
    let doc: serde_json::Value = serde_json::from_str(&json)?;
    let batch = &doc["batch"];
    let killed = &doc["killed_and_resumed"];
    let check = |ok: bool| if ok { "PASS" } else { "MISS" };
    println!(
        "bench batch (release, fake Anthropic server): {} files of {repo}\n",
        doc["files"]
    );
    println!(
        "direct generate: {} calls, {:.1} s, ${:.4}",
        doc["direct"]["calls"],
        doc["direct"]["seconds"].as_f64().unwrap_or(0.0),
        doc["direct"]["cost_usd"].as_f64().unwrap_or(0.0)
    );
    println!(
        "generate --batch: {} batch, {} direct calls, {:.1} s, ${:.4}",
        batch["batches"],
        batch["direct_calls"],
        batch["seconds"].as_f64().unwrap_or(0.0),
        batch["cost_usd"].as_f64().unwrap_or(0.0)
    );
    let ratio = batch["cost_ratio"].as_f64().unwrap_or(f64::NAN);
    println!(
        "  one batch and no direct call: {}",
        check(batch["batches"] == 1 && batch["direct_calls"] == 0)
    );
    println!(
        "  frames identical to the direct run ({} nodes): {}",
        batch["frames"],
        check(batch["frames_identical"] == true)
    );
    println!(
        "  cost, batch / direct: {ratio:.3}x (target 0.5x): {}",
        check((ratio - 0.5).abs() < 1e-9)
    );
    println!(
        "kill -9 while waiting, then run again: {} batch before, {} after, resumed {}: {}",
        killed["batches_before"],
        killed["batches_after"],
        killed["resumed"],
        check(
            killed["batches_before"] == 1
                && killed["batches_after"] == 1
                && killed["resumed"] == true
                && killed["frames_identical"] == true
        )
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs the CLI's MCP load example in release mode: many sessions at once on one HTTP server
/// over a real tree, every answer checked against the CLI's.
fn bench_mcp(args: &[&str]) -> Result<ExitCode> {
    let flags = flag_values(args, &["--repo", "--merkle", "--clients", "--secs"])?;
    let repo = repo_flag(&flags, "mcp")?;
    let merkle = merkle_flag(&flags)?;
    let clients = flags.get("--clients").copied().unwrap_or("50");
    let secs = flags.get("--secs").copied().unwrap_or("60");
    let json = run_bench_example_with(
        "merkle",
        "mcp_bench",
        &[
            "--merkle",
            &merkle,
            "--repo",
            &repo,
            "--clients",
            clients,
            "--secs",
            secs,
        ],
    )?;
    let doc: serde_json::Value = serde_json::from_str(&json)?;
    let check = |ok: bool| if ok { "PASS" } else { "MISS" };
    println!(
        "bench mcp (release, Streamable HTTP on loopback): {} clients for {:.0} s on {repo}\n",
        doc["clients"],
        doc["seconds"].as_f64().unwrap_or(0.0)
    );
    println!(
        "{:<10} {:>8} {:>8} {:>8} {:>9} {:>9} {:>9}",
        "tool", "calls", "errors", "wrong", "p50 ms", "p99 ms", "max ms"
    );
    let mut clean = true;
    for tool in ["get_node", "search"] {
        let t = &doc[tool];
        let ms = |k: &str| t[k].as_f64().unwrap_or(f64::NAN);
        println!(
            "{tool:<10} {:>8} {:>8} {:>8} {:>9.2} {:>9.2} {:>9.2}",
            t["calls"].as_u64().unwrap_or(0),
            t["errors"].as_u64().unwrap_or(0),
            t["wrong"].as_u64().unwrap_or(0),
            ms("p50_ms"),
            ms("p99_ms"),
            ms("max_ms")
        );
        if let Some(problem) = t["first_problem"].as_str() {
            println!("  first problem: {problem}");
        }
        clean &= t["errors"] == 0 && t["wrong"] == 0 && t["calls"].as_u64().unwrap_or(0) > 0;
    }
    println!(
        "\nfirst answer after start (a get_node, from the server's spawn): {:.0} ms",
        doc["first_answer_ms"].as_f64().unwrap_or(f64::NAN)
    );
    let p99 = doc["get_node"]["p99_ms"].as_f64().unwrap_or(f64::NAN);
    println!(
        "\nthroughput: {:.0} calls/s",
        doc["calls_per_second"].as_f64().unwrap_or(0.0)
    );
    println!(
        "every call answered, every answer the CLI's: {}",
        check(clean)
    );
    println!(
        "p99 of get_node {p99:.2} ms (target < 20 ms): {}",
        check(p99 < 20.0)
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs agent-loop's benchmark example in release mode and prints each figure against its
/// baseline and target.
fn bench_agent() -> Result<ExitCode> {
    let json = run_bench_example("agent-loop", "agent_bench")?;
    let num = |key: &str| json_number(&json, key);
    println!(
        "bench agent (agent-loop, release): {} turns with a model that answers at once \
         ({:.2} us a call), {} messages ({:.1} MB)\n",
        num("turns")?,
        num("model_us")?,
        num("messages")?,
        num("transcript_mb")?
    );
    println!(
        "{:<31} {:>11}  {:<24} {:>11} {:>8}  {:>8}  result",
        "figure", "median", "baseline", "median", "ratio", "target"
    );
    // A figure against its baseline, both in the unit their keys end in, and its target.
    let row = |figure: &str, key: &str, baseline: &str, base_key: &str, target_ms: f64| {
        let (unit, scale) = if key.ends_with("_us") {
            ("us", 1000.0)
        } else {
            ("ms", 1.0)
        };
        let (value, base) = (num(key)?, num(base_key)?);
        println!(
            "{figure:<31} {:>11}  {baseline:<24} {:>11} {:>7.2}x  {:>8}  {}",
            format!("{value:.1} {unit}"),
            format!("{base:.1} {unit}"),
            value / base,
            format!("< {target_ms} ms"),
            if value < target_ms * scale {
                "PASS"
            } else {
                "MISS"
            }
        );
        anyhow::Ok(())
    };
    row(
        "turn overhead, disk",
        "overhead_us",
        "append + fdatasync",
        "append_us",
        1.0,
    )?;
    row(
        "  governed",
        "overhead_governed_us",
        "append + fdatasync",
        "append_us",
        1.0,
    )?;
    // Absent where the example found no tmpfs.
    if json.contains("\"turn_mem_us\"") {
        row(
            "turn overhead, tmpfs",
            "overhead_mem_us",
            "append, tmpfs",
            "append_mem_us",
            1.0,
        )?;
        row(
            "  governed",
            "overhead_governed_mem_us",
            "append, tmpfs",
            "append_mem_us",
            1.0,
        )?;
    }
    row(
        "load 100k messages",
        "load_ms",
        "read + parse each line",
        "parse_ms",
        300.0,
    )?;
    row(
        "select from 100k messages",
        "fit_ms",
        "estimate every one",
        "estimate_ms",
        5.0,
    )?;
    row(
        "  with dropped tokens",
        "select_ms",
        "estimate every one",
        "estimate_ms",
        5.0,
    )?;
    println!(
        "\nA turn's overhead is its time less the model call's; a turn appends two messages \
         durably,\nand on tmpfs an fsync costs nothing, which leaves the loop's own work. \
         Loads are a median of 5,\nselections a median of 21 with a budget of {} tokens \
         (it kept {} messages); a turn's selection\nestimates only the messages that fit, the \
         full report (for compaction) every one.",
        num("budget")?,
        num("selected")?
    );
    Ok(ExitCode::SUCCESS)
}

/// Runs llm-sim's record example, which does the recording, passing the arguments through.
fn record(args: &[&str]) -> Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "llm-sim",
            "--example",
            "record",
            "--",
        ])
        .args(args)
        .current_dir(workspace_root())
        .status()?;
    Ok(if status.success() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
