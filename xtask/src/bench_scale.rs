//! `cargo xtask bench scale --files N --source DIR [--source DIR ...]`: issue #46's measure of
//! merkle on a monorepo-sized tree made of real source.
//!
//! The tree is the files of the `--source` checkouts (their `git ls-files`, else every file
//! below them), copied as often as needed to reach N files, each copy in a folder of its own
//! (`copy00/`, `copy01/`, ...) and each file with one line appended that names its copy, so that
//! no two files share content. It is committed to a fresh git repository. Then each step runs
//! as a whole process, with its peak RSS (GNU time's `%M`) and its baseline in the same run:
//! cold `scan` (no store; every file read once, untimed, before it) against `b3sum` over the
//! same files (skipped without b3sum), no-op `status` against `git status`, a one-file edit
//! and `scan` against a no-op `scan`, `generate --recursive --offline` and the first `search`
//! (the index build) against `ctags -R`, a warm `search` against `git grep -l`, `search` with
//! `merkle watch` running, `get-node` of a deep file, `merkle gc`, and the size of `.merkle`
//! against the source's (before and after gc).
//! `merkle validate` runs after the scan, the generation, the searches and gc, and must be
//! clean. The MCP server's figures are left to `bench mcp`.
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::bench_proc::{
    b3sum, git, has_b3sum, ls_files, median, ms, progress, remove_dir_if_present, reported_rss,
    settle, under_gnu_time, work_dir,
};
use crate::bench_search::Watch;

/// What to measure.
#[derive(Debug, Clone)]
pub struct ScaleConfig {
    pub files: usize,
    pub sources: Vec<PathBuf>,
    pub merkle: PathBuf,
    /// Timed runs of each short step (generation and the index build run once).
    pub runs: usize,
    pub keep: Option<PathBuf>,
    /// The query of the searches.
    pub query: String,
}

/// One step's figures.
#[derive(Debug, Clone)]
pub struct Row {
    pub step: &'static str,
    pub merkle: Duration,
    /// Peak RSS in KiB, where GNU time told it.
    pub rss_kib: Option<u64>,
    pub baseline: Option<(String, Duration)>,
    /// The ratio the issue allows, or an absolute limit in ms (`Limit::Ms`).
    pub limit: Limit,
}

/// What a step must stay within.
#[derive(Debug, Clone, Copy)]
pub enum Limit {
    Ratio(f64),
    Ms(f64),
    None,
}

/// Everything measured.
#[derive(Debug, Clone)]
pub struct Scale {
    pub files: usize,
    pub source_bytes: u64,
    /// `.merkle`'s bytes after the searches, and after `merkle gc`.
    pub before_gc: u64,
    pub store_bytes: u64,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
}

/// The largest peak RSS any command may have (issue #46).
const RSS_LIMIT_KIB: u64 = 1 << 20;

/// Reads `bench scale`'s options; the error is a usage message.
pub fn parse(args: &[&str]) -> Result<ScaleConfig, String> {
    let mut config = ScaleConfig {
        files: 100_000,
        sources: Vec::new(),
        merkle: PathBuf::new(),
        runs: 3,
        keep: None,
        query: "permission prompt shown to the user".to_owned(),
    };
    let mut it = args.iter();
    while let Some(&flag) = it.next() {
        let value = *it.next().ok_or_else(|| format!("`{flag}` needs a value"))?;
        let number = || {
            value
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("`{flag}` wants a number of at least 1, got `{value}`"))
        };
        match flag {
            "--files" => config.files = number()?,
            "--runs" => config.runs = number()?,
            "--source" => config.sources.push(PathBuf::from(value)),
            "--merkle" => config.merkle = PathBuf::from(value),
            "--keep" => config.keep = Some(PathBuf::from(value)),
            "--query" => config.query = value.to_owned(),
            other => return Err(format!("unknown option {other}")),
        }
    }
    if config.sources.is_empty() {
        return Err("bench scale needs at least one --source DIR (a checkout)".to_owned());
    }
    Ok(config)
}

pub fn run(config: &ScaleConfig) -> Result<Scale> {
    let work = work_dir(config.keep.as_deref())?;
    let tree = work.path.as_path();
    let (paths, source_bytes) = build_tree(config, tree)?;
    progress("git init, add and commit (untimed)");
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &["commit", "-q", "-m", "scale"],
    ] {
        run_ok(git(tree).args(args))?;
    }
    let mut notes = Vec::new();
    let mut rows = Vec::new();
    let step = Step {
        merkle: &config.merkle,
        tree,
    };
    rows.push(cold_scan(config, &step, &paths, &mut notes)?);
    step.validate("scan")?;
    rows.extend(status_and_edit(config, &step, &paths)?);
    let ctags = ctags_time(tree)?;
    rows.push(generate(&step, &ctags)?);
    step.validate("generate")?;
    rows.extend(searches(config, &step, &ctags, &paths, &mut notes)?);
    step.validate("search")?;
    let before_gc = dir_bytes(&tree.join(".merkle"))?;
    progress("merkle gc (once)");
    let (d, rss) = measured(&mut step.merkle(&["gc"]))?;
    rows.push(Row {
        step: "gc (collect, compact)",
        merkle: d,
        rss_kib: rss,
        baseline: None,
        limit: Limit::None,
    });
    step.validate("gc")?;
    let store_bytes = dir_bytes(&tree.join(".merkle"))?;
    Ok(Scale {
        files: paths.len(),
        source_bytes,
        before_gc,
        store_bytes,
        rows,
        notes,
    })
}

/// The tree of `config.files` files, copied from the sources; its paths and bytes.
fn build_tree(config: &ScaleConfig, tree: &Path) -> Result<(Vec<String>, u64)> {
    let mut sources = Vec::new();
    for dir in &config.sources {
        let dir = dir
            .canonicalize()
            .with_context(|| format!("--source {}", dir.display()))?;
        let files = ls_files(&dir).or_else(|_| walk(&dir))?;
        sources.push((dir, files));
    }
    let (mut paths, mut bytes) = (Vec::with_capacity(config.files), 0u64);
    let mut copy = 0;
    'copies: loop {
        for (dir, files) in &sources {
            let mut copied_one = false;
            for file in files {
                if paths.len() == config.files {
                    break 'copies;
                }
                let Ok(mut content) = fs::read(dir.join(file)) else {
                    continue;
                };
                if fs::symlink_metadata(dir.join(file)).is_ok_and(|m| !m.is_file()) {
                    continue;
                }
                content.extend_from_slice(
                    format!("\n{} merkle-scale copy {copy}\n", comment(file)).as_bytes(),
                );
                let path = format!("copy{copy:02}/{file}");
                let dest = tree.join(&path);
                if let Some(parent) = dest.parent() {
                    fs::create_dir_all(parent)?;
                }
                fs::write(&dest, &content)
                    .with_context(|| format!("writing {}", dest.display()))?;
                bytes += content.len() as u64;
                paths.push(path);
                copied_one = true;
                if paths.len() % 20_000 == 0 {
                    progress(&format!("{} files laid out", paths.len()));
                }
            }
            if !copied_one {
                bail!("--source {}: no file to copy", dir.display());
            }
            copy += 1;
        }
    }
    progress(&format!(
        "{} files, {} bytes, in {copy} copies and more",
        paths.len(),
        bytes
    ));
    Ok((paths, bytes))
}

/// The line comment of `path`'s language, so that the appended line keeps code code.
fn comment(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "py" | "sh" | "toml" | "yaml" | "yml" | "rb" | "pl" | "r" | "cmake" => "#",
        "sql" | "lua" | "hs" => "--",
        _ => "//",
    }
}

/// Every file below `dir` (no git), as workspace paths.
fn walk(dir: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
            } else if let Ok(rel) = path.strip_prefix(dir) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    Ok(out)
}

/// How the steps run merkle on the tree.
struct Step<'a> {
    merkle: &'a Path,
    tree: &'a Path,
}

impl Step<'_> {
    fn merkle(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(self.merkle);
        cmd.arg("--root").arg(self.tree).args(args);
        cmd
    }

    /// `merkle validate`, which must find nothing wrong.
    fn validate(&self, after: &str) -> Result<()> {
        progress(&format!("merkle validate after {after}"));
        run_ok(&mut self.merkle(&["validate"]))
            .with_context(|| format!("merkle validate after {after}"))
    }
}

/// Runs `cmd` under GNU time: its wall time and peak RSS (KiB, where GNU time is there).
fn measured(cmd: &mut Command) -> Result<(Duration, Option<u64>)> {
    settle();
    let start = Instant::now();
    let out = under_gnu_time(cmd).output();
    let elapsed = start.elapsed();
    match out {
        Ok(out) => {
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                bail!("{:?} failed: {err}", cmd.get_program());
            }
            Ok((elapsed, reported_rss(&out.stderr)))
        }
        // No GNU time: the plain run, no RSS.
        Err(_) => {
            let start = Instant::now();
            run_ok(cmd)?;
            Ok((start.elapsed(), None))
        }
    }
}

/// `runs` measured runs of `cmd` (each after `before`): the median time and the highest RSS.
fn measured_runs(
    runs: usize,
    mut before: impl FnMut() -> Result<()>,
    mut cmd: impl FnMut() -> Command,
) -> Result<(Duration, Option<u64>)> {
    let (mut times, mut rss) = (Vec::new(), None::<u64>);
    for _ in 0..runs {
        before()?;
        let (d, r) = measured(&mut cmd())?;
        times.push(d);
        rss = rss.max(r);
    }
    Ok((median(&times), rss))
}

fn run_ok(cmd: &mut Command) -> Result<()> {
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("running {:?}", cmd.get_program()))?;
    if !out.status.success() {
        bail!(
            "{:?} {:?} failed: {}",
            cmd.get_program(),
            cmd.get_args().collect::<Vec<_>>(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok(())
}

fn cold_scan(
    config: &ScaleConfig,
    step: &Step<'_>,
    paths: &[String],
    notes: &mut Vec<String>,
) -> Result<Row> {
    let refs: Vec<&str> = paths.iter().map(String::as_str).collect();
    let b3sum_here = has_b3sum(notes);
    if b3sum_here {
        // Both read the files from the page cache. Run first after the layout and git's
        // commit, a scan of a million files took 45 s and b3sum 23 s after it; with a read of
        // every file before both, 14.5 s and 15.5 s. "Cold" is a scan without a store.
        progress("reading every file once (untimed)");
        b3sum(step.tree, &refs)?;
    }
    progress("cold merkle scan");
    let store = step.tree.join(".merkle");
    let (scan, rss) = measured_runs(
        config.runs,
        || remove_dir_if_present(&store),
        || step.merkle(&["scan"]),
    )?;
    let baseline = if b3sum_here {
        let times = (0..config.runs)
            .map(|_| b3sum(step.tree, &refs).map(|(d, _)| d))
            .collect::<Result<Vec<_>>>()?;
        Some(("b3sum".to_owned(), median(&times)))
    } else {
        None
    };
    Ok(Row {
        step: "cold scan",
        merkle: scan,
        rss_kib: rss,
        baseline,
        limit: Limit::Ratio(1.5),
    })
}

fn status_and_edit(config: &ScaleConfig, step: &Step<'_>, paths: &[String]) -> Result<Vec<Row>> {
    progress("no-op status against git status");
    let (status, status_rss) = measured_runs(config.runs, || Ok(()), || step.merkle(&["status"]))?;
    let (git_status, _) = measured_runs(
        config.runs,
        || Ok(()),
        || {
            let mut cmd = git(step.tree);
            cmd.arg("status");
            cmd
        },
    )?;
    progress("a one-file edit and scan against a no-op scan");
    let deep = deepest(paths);
    let edited = step.tree.join(deep);
    let mut n = 0;
    let (edit, edit_rss) = measured_runs(
        config.runs,
        || {
            n += 1;
            let mut f = fs::OpenOptions::new().append(true).open(&edited)?;
            std::io::Write::write_all(&mut f, format!("// edit {n}\n").as_bytes())?;
            Ok(())
        },
        || step.merkle(&["scan"]),
    )?;
    let (noop, _) = measured_runs(config.runs, || Ok(()), || step.merkle(&["scan"]))?;
    Ok(vec![
        Row {
            step: "no-op status",
            merkle: status,
            rss_kib: status_rss,
            baseline: Some(("git status".to_owned(), git_status)),
            limit: Limit::Ratio(0.75),
        },
        Row {
            step: "one-file edit + scan",
            merkle: edit,
            rss_kib: edit_rss,
            baseline: Some(("no-op scan".to_owned(), noop)),
            limit: Limit::Ratio(1.2),
        },
    ])
}

/// The path with the most folders above it (the first such).
fn deepest(paths: &[String]) -> &str {
    paths
        .iter()
        .max_by_key(|p| (p.matches('/').count(), std::cmp::Reverse(p.as_str())))
        .map_or("", String::as_str)
}

/// `ctags -R` over the languages merkle outlines, once.
fn ctags_time(tree: &Path) -> Result<Duration> {
    progress("ctags -R (the baseline of generate and of the index build)");
    let mut cmd = Command::new("ctags");
    cmd.current_dir(tree).args([
        "-R",
        "--languages=Rust,TypeScript,JavaScript,Python,Go,Java,C,C++",
        "-f",
        "/dev/null",
        ".",
    ]);
    Ok(measured(&mut cmd)?.0)
}

fn generate(step: &Step<'_>, ctags: &Duration) -> Result<Row> {
    progress("merkle generate --recursive --offline (once)");
    let (d, rss) = measured(&mut step.merkle(&["generate", "--recursive", "--offline", "."]))?;
    Ok(Row {
        step: "generate --recursive --offline",
        merkle: d,
        rss_kib: rss,
        baseline: Some(("ctags -R".to_owned(), *ctags)),
        limit: Limit::Ratio(1.5),
    })
}

fn searches(
    config: &ScaleConfig,
    step: &Step<'_>,
    ctags: &Duration,
    paths: &[String],
    notes: &mut Vec<String>,
) -> Result<Vec<Row>> {
    progress("the first search (the index build, once)");
    remove_dir_if_present(&step.tree.join(".merkle/index"))?;
    let query = config.query.as_str();
    let (first, first_rss) = measured(&mut step.merkle(&["search", query]))?;
    progress("warm search against git grep -l");
    let (warm, warm_rss) =
        measured_runs(config.runs, || Ok(()), || step.merkle(&["search", query]))?;
    let word = crate::bench_search::grep_word(query).to_owned();
    let (grep, _) = measured_runs(
        config.runs,
        || Ok(()),
        || {
            let mut cmd = git(step.tree);
            cmd.args(["grep", "-l", "-e", &word]);
            cmd
        },
    )?;
    progress("get-node of a deep file");
    let deep = deepest(paths).to_owned();
    let (node, node_rss) =
        measured_runs(config.runs, || Ok(()), || step.merkle(&["get-node", &deep]))?;
    progress("search with merkle watch running");
    // Over the kernel's inotify limit the watch watches what fits and says how many folders it
    // left out (reads check those by their stats); a watch that does not run is said, not fatal.
    // 30 s, and 90 s more a million files: the watch's first rescan and its watches' setup.
    let patience = Duration::from_secs(30 + 90 * config.files as u64 / 1_000_000);
    let watched = match Watch::start(
        step.merkle(&["watch"]),
        &step.tree.join(".merkle"),
        patience,
    ) {
        Ok(watch) => {
            // Its first answer makes what it keeps (the listing, the path table, the open
            // index), as the first search builds the index: timed apart, said in a note.
            watch.wait_vouched()?;
            let (first, _) = measured(&mut step.merkle(&["search", query]))?;
            notes.push(format!(
                "the first search beside merkle watch after it started (what it keeps made): \
                 {:.1} ms; the row is the searches after it",
                first.as_secs_f64() * 1000.0
            ));
            let runs = measured_runs(
                config.runs,
                || watch.wait_vouched(),
                || step.merkle(&["search", query]),
            )?;
            let runs = match watch.peak_rss_kib() {
                Some(peak) => {
                    notes.push(format!(
                        "merkle watch answered the searches beside it (its listing and index \
                         kept between them); their row's peak RSS is the watch's, {} MiB",
                        peak / 1024
                    ));
                    (runs.0, runs.1.max(Some(peak)))
                }
                None => runs,
            };
            let unwatched = watch.unwatched();
            if unwatched > 0 {
                notes.push(format!(
                    "merkle watch left {unwatched} folders unwatched (the inotify limit): the \
                     searches beside it checked those by their stats"
                ));
            }
            Some(runs)
        }
        Err(e) => {
            notes.push(format!(
                "merkle watch did not run, so no search beside it: {e:#}"
            ));
            None
        }
    };
    let mut rows = vec![
        Row {
            step: "first search (index build)",
            merkle: first,
            rss_kib: first_rss,
            baseline: Some(("ctags -R".to_owned(), *ctags)),
            limit: Limit::Ratio(1.5),
        },
        Row {
            step: "warm search",
            merkle: warm,
            rss_kib: warm_rss,
            baseline: Some((format!("git grep -l {word}"), grep)),
            limit: Limit::Ratio(0.3),
        },
        Row {
            step: "get-node of a deep file",
            merkle: node,
            rss_kib: node_rss,
            baseline: None,
            limit: Limit::None,
        },
    ];
    if let Some((watched, watched_rss)) = watched {
        rows.push(Row {
            step: "search beside merkle watch",
            merkle: watched,
            rss_kib: watched_rss,
            baseline: None,
            limit: Limit::Ms(300.0),
        });
    }
    Ok(rows)
}

/// The bytes of the files below `dir`.
fn dir_bytes(dir: &Path) -> Result<u64> {
    let mut total = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).with_context(|| format!("listing {}", d.display()))? {
            let entry = entry?;
            let meta = entry.metadata()?;
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                total += meta.len();
            }
        }
    }
    Ok(total)
}

/// The figures as Markdown: a row per step, with its ratio and whether it holds.
pub fn report(config: &ScaleConfig, scale: &Scale) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "bench scale: {} files from {}, {} bytes; medians of {} runs (generate and the index \
         build once); peak RSS limit 1 GiB\n",
        scale.files,
        config
            .sources
            .iter()
            .map(|s| s.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        scale.source_bytes,
        config.runs
    );
    let _ = writeln!(
        out,
        "| step | merkle | peak RSS | baseline | ratio | target |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for r in &scale.rows {
        let rss = r.rss_kib.map_or("-".to_owned(), |k| {
            let verdict = if k <= RSS_LIMIT_KIB { "" } else { " OVER" };
            format!("{:.0} MiB{verdict}", k as f64 / 1024.0)
        });
        let (base, ratio) = match &r.baseline {
            Some((label, d)) => (
                format!("{label} {}", ms(*d)),
                format!("{:.2}x", r.merkle.as_secs_f64() / d.as_secs_f64()),
            ),
            None => ("-".to_owned(), "-".to_owned()),
        };
        let target = match (r.limit, &r.baseline) {
            (Limit::Ratio(x), Some((_, d))) => verdict(
                r.merkle.as_secs_f64() / d.as_secs_f64() <= x,
                &format!("<= {x}x"),
            ),
            (Limit::Ratio(x), None) => format!("<= {x}x (no baseline)"),
            (Limit::Ms(limit), _) => verdict(
                r.merkle.as_secs_f64() * 1e3 <= limit,
                &format!("<= {limit} ms"),
            ),
            (Limit::None, _) => "-".to_owned(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {rss} | {base} | {ratio} | {target} |",
            r.step,
            ms(r.merkle)
        );
    }
    for (what, bytes) in [
        ("`.merkle` size before gc", scale.before_gc),
        ("`.merkle` size", scale.store_bytes),
    ] {
        let ratio = bytes as f64 / scale.source_bytes.max(1) as f64;
        let _ = writeln!(
            out,
            "| {what} | {bytes} bytes | | the source {} bytes | {ratio:.2}x | {} |",
            scale.source_bytes,
            verdict(ratio <= 0.3, "<= 0.3x")
        );
    }
    let _ = writeln!(
        out,
        "\nmerkle validate: clean after the scan, the generation, the searches and gc"
    );
    for n in &scale.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

fn verdict(ok: bool, target: &str) -> String {
    format!("{target} {}", if ok { "PASS" } else { "MISS" })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_appended_line_is_a_comment_of_the_file_s_language() {
        assert_eq!(comment("a/b.py"), "#");
        assert_eq!(comment("a/b.rs"), "//");
        assert_eq!(comment("Makefile"), "//");
        assert_eq!(comment("q.sql"), "--");
    }

    #[test]
    fn the_deepest_path_is_the_first_with_the_most_folders() {
        let paths = ["a/b.rs", "a/b/c/d.rs", "a/b/c/e.rs", "x.rs"].map(str::to_owned);
        assert_eq!(deepest(&paths), "a/b/c/d.rs");
    }

    #[test]
    fn options_are_read_and_a_source_is_needed() {
        let config =
            parse(&["--files", "10", "--source", "/tmp/x", "--runs", "2"]).expect("parsed");
        assert_eq!((config.files, config.runs), (10, 2));
        assert_eq!(config.sources, [PathBuf::from("/tmp/x")]);
        assert!(parse(&["--files", "10"]).is_err());
        assert!(parse(&["--files", "0", "--source", "x"]).is_err());
        assert!(parse(&["--bogus", "1", "--source", "x"]).is_err());
    }
}
