//! `cargo xtask bench context`: what agents wait for. `get-node` latency from a cold process on
//! a node with 1,000 frames and a view over parent and siblings, and the time (and files per
//! second) to generate context over a generated tree with the offline producer and with a
//! simulated model, and to synthesize it.
//!
//! Every timing is a whole `merkle` process, start-up included, as an agent calling the CLI
//! sees it. The target is a get-node p99 under 5 ms.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::bench_proc::{ms, progress, settle, timed, work_dir};
use crate::tree::{Tree, TreeSpec};

/// How to run the context benchmark.
#[derive(Debug, Clone)]
pub struct ContextConfig {
    pub files: usize,
    /// Frames put on the node that get-node reads.
    pub frames: usize,
    /// Timed get-node runs.
    pub runs: usize,
    pub seed: u64,
    pub keep: Option<PathBuf>,
    /// The `merkle` binary to measure.
    pub merkle: PathBuf,
}

fn merkle(config: &ContextConfig, tree: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(&config.merkle);
    cmd.arg("--root").arg(tree).args(args);
    cmd
}

/// The value at a quantile (0..=1) of the samples, nearest rank.
fn quantile(samples: &[Duration], q: f64) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Runs the benchmark and returns the report as a table.
pub fn run_context(config: &ContextConfig) -> Result<String> {
    if config.files < 2 || config.runs == 0 {
        bail!("--files must be at least 2 and --runs at least 1");
    }
    let work = work_dir(config.keep.as_deref())?;
    let dir = work.path.as_path();
    let tree = prepare(config, dir)?;
    let steps = generations(config, dir)?;
    // The node get-node reads: the first planned file, with its siblings' frames from generate.
    let target = tree.files[0].path.clone();
    put_frames(config, dir, &target)?;
    let views = get_node_views(config, dir, &target)?;
    Ok(table(config, &tree, &steps, &views))
}

/// The generate and synthesize steps' times.
struct Generations {
    generate: Duration,
    synthesize: Duration,
    noop_generate: Duration,
    checkpoint_generate: Duration,
    sim_generate: Duration,
}

/// Writes the generated tree into `dir`, scans it and adds the agents that write frames.
fn prepare(config: &ContextConfig, dir: &Path) -> Result<Tree> {
    let tree = Tree::plan(TreeSpec {
        files: config.files,
        seed: config.seed,
    });
    progress(&format!("writing {} files", tree.files.len()));
    tree.write(dir)?;
    progress("merkle scan");
    timed(&mut merkle(config, dir, &["-q", "scan"]))?;
    for (agent, role) in [("bench", "synthesis"), ("bench2", "synthesis")] {
        timed(&mut merkle(
            config,
            dir,
            &["agent", "add", agent, "--role", role],
        ))?;
    }
    Ok(tree)
}

/// Times offline generation, synthesis, generation with nothing to do (twice: the second from
/// its checkpoint) and generation with a simulated model; an error where one reports
/// failures or a checkpointed one looks at nodes.
fn generations(config: &ContextConfig, dir: &Path) -> Result<Generations> {
    settle();
    progress("merkle generate --recursive (offline producer)");
    // The same command twice: the second run finds nothing to do.
    let offline_generate = [
        "--json",
        "generate",
        "--agent",
        "bench",
        "--recursive",
        "--type",
        "outline",
        "--offline",
    ];
    let (generate, out) = timed(&mut merkle(config, dir, &offline_generate))?;
    if !out.contains("\"failed\": []") {
        bail!("generate reported failures: {out}");
    }
    settle();
    progress("merkle synthesize . --recursive (every directory recomputed)");
    let (synthesize, _) = timed(&mut merkle(
        config,
        dir,
        &[
            "--json",
            "synthesize",
            ".",
            "--recursive",
            "--type",
            "outline",
            "--agent",
            "bench2",
            "--policy",
            "summary",
        ],
    ))?;
    settle();
    // synthesize wrote frames, so this one looks at every node (and finds nothing to do)...
    progress("merkle generate --recursive again (nothing to do)");
    let (noop_generate, _) = timed(&mut merkle(config, dir, &offline_generate))?;
    settle();
    // ...and leaves a checkpoint that the next one starts from: nothing changed, nothing to
    // look at.
    progress("merkle generate --recursive from its checkpoint");
    let (checkpoint_generate, out) = timed(&mut merkle(config, dir, &offline_generate))?;
    if !out.contains("\"visited\": 0") {
        bail!("generate from its checkpoint looked at nodes: {out}");
    }
    Ok(Generations {
        generate,
        synthesize,
        noop_generate,
        checkpoint_generate,
        sim_generate: sim_generate(config, dir)?,
    })
}

/// Times generation with the simulated model, one call per file and folder, 8 in flight.
fn sim_generate(config: &ContextConfig, dir: &Path) -> Result<Duration> {
    settle();
    progress(
        "merkle generate --recursive --provider sim (one simulated model call per file and folder)",
    );
    let (sim_generate, out) = timed(&mut merkle(
        config,
        dir,
        &[
            "--json",
            "generate",
            "--agent",
            "bench",
            "--recursive",
            "--type",
            "simulated",
            "--provider",
            "sim",
            "--concurrency",
            "8",
        ],
    ))?;
    if !out.contains("\"failed\": []") {
        bail!("generate --provider sim reported failures: {out}");
    }
    Ok(sim_generate)
}

/// Puts `config.frames` frames on `target`, their types taking turns.
fn put_frames(config: &ContextConfig, dir: &Path, target: &str) -> Result<()> {
    progress(&format!("putting {} frames on {target}", config.frames));
    let content = dir.join("..frame-content");
    for i in 0..config.frames {
        std::fs::write(&content, format!("note {i} about {target}\n"))
            .with_context(|| format!("writing {}", content.display()))?;
        let ty = ["notes", "summary", "review"][i % 3];
        timed(&mut merkle(
            config,
            dir,
            &[
                "put-frame",
                target,
                &content.to_string_lossy(),
                "--type",
                ty,
                "--agent",
                "bench",
            ],
        ))?;
    }
    let _ = std::fs::remove_file(&content);
    Ok(())
}

/// Times `config.runs` cold get-node processes for each view of `target`, after one warm-up
/// run that must print a frame count.
fn get_node_views(
    config: &ContextConfig,
    dir: &Path,
    target: &str,
) -> Result<Vec<(&'static str, Vec<Duration>)>> {
    // Two views over node + parent + siblings: the default one (each node's head frames) and
    // one over every frame of the node's history, ordered by relevance.
    let heads_view: Vec<&str> = vec![
        "--json",
        "get-node",
        target,
        "--source",
        "node,parent,siblings",
        "--max-frames",
        "50",
    ];
    let mut history_view = heads_view.clone();
    history_view.extend(["--all", "--ordering", "relevance"]);
    let mut views = Vec::new();
    for (label, args) in [("heads", &heads_view), ("history", &history_view)] {
        let (_, warm) = timed(&mut merkle(config, dir, args))?;
        if !warm.contains("\"frame_count\"") {
            bail!("get-node printed no frame_count: {warm}");
        }
        settle();
        progress(&format!("get-node ({label} view) x{}", config.runs));
        let mut samples = Vec::with_capacity(config.runs);
        for _ in 0..config.runs {
            samples.push(timed(&mut merkle(config, dir, args))?.0);
        }
        views.push((label, samples));
    }
    Ok(views)
}

/// The report: each step's time, generate's throughput, and get-node's p50 and p99 per view
/// against the 5 ms target.
fn table(
    config: &ContextConfig,
    tree: &Tree,
    steps: &Generations,
    views: &[(&str, Vec<Duration>)],
) -> String {
    let Generations {
        generate,
        synthesize,
        noop_generate,
        checkpoint_generate,
        sim_generate,
    } = *steps;
    let mut t = String::new();
    let dirs = tree.dirs.len() + 1;
    writeln!(
        t,
        "bench context: {} files in {dirs} folders, seed {}",
        tree.files.len(),
        config.seed
    )
    .expect("writing to a String");
    writeln!(t).expect("writing to a String");
    writeln!(t, "{:<62} {:>10}", "step", "time").expect("writing to a String");
    for (label, d) in [
        (
            "generate --recursive: outline every file, summarize every folder",
            generate,
        ),
        (
            "synthesize . --recursive: every folder recomputed",
            synthesize,
        ),
        (
            "generate --recursive again: nothing to do, every node looked at",
            noop_generate,
        ),
        (
            "generate --recursive from its checkpoint: nothing looked at",
            checkpoint_generate,
        ),
        (
            "generate --recursive --provider sim: a model call per node",
            sim_generate,
        ),
    ] {
        writeln!(t, "{label:<62} {:>10}", ms(d)).expect("writing to a String");
    }
    writeln!(t).expect("writing to a String");
    let files = tree.files.len() as f64;
    for (label, d) in [
        ("offline outline producer", generate),
        ("simulated model (8 calls in flight)", sim_generate),
    ] {
        writeln!(
            t,
            "generate throughput, {label:<36} {:>8.0} files/s",
            files / d.as_secs_f64().max(1e-9)
        )
        .expect("writing to a String");
    }
    writeln!(t).expect("writing to a String");
    writeln!(
        t,
        "get-node on a node with {} frames, sources node+parent+siblings, max 50, {} cold processes:",
        config.frames, config.runs
    )
    .expect("writing to a String");
    for (label, samples) in views {
        let p99 = quantile(samples, 0.99);
        writeln!(
            t,
            "  {label:<8} view: p50 {}  p99 {}  (target p99 <= 5 ms: {})",
            ms(quantile(samples, 0.5)),
            ms(p99),
            if p99 <= Duration::from_millis(5) {
                "PASS"
            } else {
                "MISS"
            }
        )
        .expect("writing to a String");
    }
    t
}
