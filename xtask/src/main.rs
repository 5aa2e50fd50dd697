//! `cargo xtask`: the one home for project automation (tidy checks, benchmarks, recording).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Result, bail};
use xtask::bench::{self, ScanConfig};
use xtask::tidy;

const USAGE: &str = "\
usage: cargo xtask <task>

tasks:
  tidy                  check dependency layering (ARCHITECTURE.md's `layering` block),
                        heavy-dependency owners and `//!` lines; exit 1 on any problem
  bench scan [options]  time merkle scan/status against git and b3sum on a generated tree
      --files N         files to generate (default 50000)
      --runs N          timed runs per step; the median is reported (default 5)
      --seed N          tree generator seed (default 1)
      --keep DIR        generate the tree in DIR (absent or empty) and keep it; pick a DIR
                        outside any git checkout so no parent .gitignore applies
      --merkle PATH     measure this binary instead of building `cargo build --release -p cli`
      --json            print the results as JSON on stdout instead of a table
  bench context [options]  get-node latency (cold process, 1,000 frames, parent+siblings view),
                        generate and recursive synthesis times on a generated tree
      --files N         files to generate (default 50000)
      --frames N        frames on the node get-node reads (default 1000)
      --runs N          timed get-node runs (default 200)
      --seed N, --keep DIR, --merkle PATH   as for bench scan
  bench llm             llm-core: SSE decoding throughput (10 MB streams) and per-request
                        client overhead against a local server vs a bare HTTP exchange
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
        ["bench", "llm"] => bench_llm(),
        ["record", rest @ ..] => record(rest),
        [] | ["help" | "-h" | "--help"] => {
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
        None => bench::build_merkle(workspace_root())?,
    };
    let report = bench::run_scan(&ScanConfig {
        files,
        runs,
        seed,
        keep,
        merkle,
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
        None => bench::build_merkle(workspace_root())?,
    };
    print!("{}", xtask::bench_context::run_context(&config)?);
    Ok(ExitCode::SUCCESS)
}

/// Runs llm-core's benchmark example in release mode and prints its figures as a table.
fn bench_llm() -> Result<ExitCode> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    eprintln!("bench: cargo run --release -p llm-core --example bench");
    let out = std::process::Command::new(cargo)
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "llm-core",
            "--example",
            "bench",
        ])
        .current_dir(workspace_root())
        .stderr(std::process::Stdio::inherit())
        .output()?;
    if !out.status.success() {
        bail!("the llm-core bench failed with {}", out.status);
    }
    let json = String::from_utf8_lossy(&out.stdout);
    let num = |key: &str| -> Result<f64> {
        let at = json
            .find(&format!("\"{key}\": "))
            .ok_or_else(|| anyhow::anyhow!("no {key} in {json}"))?;
        let rest = &json[at + key.len() + 4..];
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        Ok(rest[..end].parse()?)
    };
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
