//! `cargo xtask bench search --repo PATH --query TEXT...`: a whole `merkle search` process after
//! a no-op on a clone of a real checkout (scanned and generated offline first), against
//! `git grep -l WORD` on the same tree, WORD being the query's longest word.
//!
//! Two series per query, each interleaved with its own `git grep` runs:
//! - **disk**: no watch runs, so the search checks the tree itself (a `stat` per file) beside
//!   its first try;
//! - **watch**: `merkle watch` runs and vouches for its last rescan, so the search skips that
//!   walk. A watcher's file events cost the processes beside it time (every file `git grep`
//!   opens is an event it reads), so the ratio is taken against the `git grep` of the disk
//!   series, run with no watch; the `git grep` beside the watch is reported too.
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::bench_proc::{clone_checkout, git, interleaved, median, ms, progress, timed, work_dir};

/// What to measure.
pub struct SearchConfig {
    pub repo: PathBuf,
    pub merkle: PathBuf,
    pub queries: Vec<String>,
    pub runs: usize,
    pub keep: Option<PathBuf>,
}

/// One query's medians.
pub struct QueryRow {
    pub query: String,
    pub word: String,
    pub disk: Duration,
    pub watch: Duration,
    pub grep: Duration,
    pub grep_beside_watch: Duration,
}

/// The target of issue #23: a search as a whole process at most this long, and at most this
/// share of `git grep -l`.
const TARGET_MS: f64 = 50.0;
const TARGET_RATIO: f64 = 0.5;

/// The word `git grep -l` looks for: the query's longest word (the first of the longest).
pub fn grep_word(query: &str) -> &str {
    query
        .split_whitespace()
        .fold("", |best, w| if w.len() > best.len() { w } else { best })
}

/// Reads `bench search`'s options (`merkle` left empty when `--merkle` is not given); the
/// error is a usage message.
pub fn parse(args: &[&str]) -> Result<SearchConfig, String> {
    let mut config = SearchConfig {
        repo: PathBuf::new(),
        merkle: PathBuf::new(),
        queries: Vec::new(),
        runs: 11,
        keep: None,
    };
    let mut it = args.iter();
    while let Some(&flag) = it.next() {
        let value = *it.next().ok_or_else(|| format!("`{flag}` needs a value"))?;
        match flag {
            "--query" if value.trim().is_empty() => {
                return Err("`--query` needs a query, not an empty one".to_owned());
            }
            "--query" => config.queries.push(value.to_owned()),
            "--repo" => config.repo = PathBuf::from(value),
            "--merkle" => config.merkle = PathBuf::from(value),
            "--keep" => config.keep = Some(PathBuf::from(value)),
            "--runs" => {
                config.runs = value
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| {
                        format!("`--runs` wants a number of at least 1, got `{value}`")
                    })?;
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    if config.repo.as_os_str().is_empty() {
        return Err("bench search needs --repo PATH (a real tree)".to_owned());
    }
    if config.queries.is_empty() {
        return Err("bench search needs at least one --query TEXT".to_owned());
    }
    Ok(config)
}

pub fn run(config: &SearchConfig) -> Result<Vec<QueryRow>> {
    let repo = config
        .repo
        .canonicalize()
        .with_context(|| format!("--repo {}", config.repo.display()))?;
    let work = work_dir(config.keep.as_deref())?;
    let tree = work.path.as_path();
    clone_checkout(&repo, tree)?;
    let merkle = |args: &[&str]| {
        let mut cmd = Command::new(&config.merkle);
        cmd.arg("--root").arg(tree).args(args);
        cmd
    };
    progress("merkle scan, then generate --recursive (offline)");
    timed(&mut merkle(&["scan"]))?;
    timed(&mut merkle(&["generate", "--recursive", "."]))?;
    let grep = |word: &str| {
        let mut cmd = git(tree);
        cmd.args(["grep", "-l", "-e", word]);
        cmd
    };
    // `git grep` exits 1 when nothing matches: a time all the same.
    let grep_timed = |word: &str| -> Result<(Duration, String)> {
        let start = Instant::now();
        let out = grep(word)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .context("running git grep")?;
        if out.code().is_none_or(|c| c > 1) {
            bail!("git grep -l {word} failed with {out}");
        }
        Ok((start.elapsed(), String::new()))
    };
    let mut rows = Vec::new();
    for query in &config.queries {
        let word = grep_word(query).to_owned();
        // The first search builds the index: untimed.
        timed(&mut merkle(&["search", query]))?;
        progress(&format!(
            "`search {query}` (no watch) and `git grep -l {word}`"
        ));
        let [(disk, _), (grep_disk, _)] = interleaved(
            config.runs,
            ["search (disk)", "git grep"],
            |_| timed(&mut merkle(&["search", query])),
            |_| grep_timed(&word),
        )?;
        rows.push(QueryRow {
            query: query.clone(),
            word,
            disk: median(&disk),
            watch: Duration::ZERO,
            grep: median(&grep_disk),
            grep_beside_watch: Duration::ZERO,
        });
    }
    progress("starting merkle watch");
    let watch = Watch::start(
        merkle(&["watch"]),
        &tree.join(".merkle"),
        Duration::from_secs(30),
    )?;
    for row in &mut rows {
        progress(&format!("`search {}` beside merkle watch", row.query));
        let [(vouched, _), (grep_watch, _)] = interleaved(
            config.runs,
            ["search (watch)", "git grep (beside watch)"],
            |_| {
                watch.wait_vouched()?;
                timed(&mut merkle(&["search", &row.query]))
            },
            |_| grep_timed(&row.word),
        )?;
        row.watch = median(&vouched);
        row.grep_beside_watch = median(&grep_watch);
    }
    drop(watch);
    Ok(rows)
}

/// The report as a table.
pub fn report(config: &SearchConfig, rows: &[QueryRow]) -> String {
    let check = |d: Duration, base: Duration| {
        let ratio = d.as_secs_f64() / base.as_secs_f64();
        let pass = d.as_secs_f64() * 1000.0 <= TARGET_MS && ratio <= TARGET_RATIO;
        format!("{ratio:.2}x {}", if pass { "PASS" } else { "MISS" })
    };
    let mut out = format!(
        "bench search: {} (a clone, scanned and generated offline), medians of {} \
         interleaved runs; target <= {TARGET_MS} ms and <= {TARGET_RATIO}x git grep -l\n\n",
        config.repo.display(),
        config.runs
    );
    out.push_str(
        "| query | git grep -l WORD | search, disk checked | ratio | search, watch vouching | \
         ratio | git grep beside the watch |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let _ = writeln!(
            out,
            "| `{}` | `{}` {} | {} | {} | {} | {} | {} |",
            r.query,
            r.word,
            ms(r.grep),
            ms(r.disk),
            check(r.disk, r.grep),
            ms(r.watch),
            check(r.watch, r.grep),
            ms(r.grep_beside_watch)
        );
    }
    out
}

/// A running `merkle watch`, stopped when dropped.
pub(crate) struct Watch {
    child: Child,
    store: PathBuf,
    patience: Duration,
}

impl Watch {
    /// Starts it and waits for its first line, then for its vouching. `patience`: how long a
    /// vouching may take after that (a watch of a million files sets up ~200,000 inotify
    /// watches and rescans before it answers).
    pub(crate) fn start(mut cmd: Command, store: &Path, patience: Duration) -> Result<Watch> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting merkle watch")?;
        let stdout = child.stdout.take().context("merkle watch's stdout")?;
        let mut first = String::new();
        BufReader::new(stdout)
            .read_line(&mut first)
            .context("reading merkle watch's first line")?;
        if first.is_empty() {
            let _ = child.kill();
            bail!("merkle watch ended before its first rescan");
        }
        let watch = Watch {
            child,
            store: store.to_owned(),
            patience,
        };
        watch.wait_vouched()?;
        Ok(watch)
    }

    /// Waits until the watch vouches for its last rescan, asked as every read asks it
    /// (`watch::vouch`: `sync` on the socket in the store folder, `clean ROOT` back, or
    /// `partly ROOT N` where the kernel's inotify limit left N folders unwatched, which a read
    /// then checks by their stats).
    pub(crate) fn wait_vouched(&self) -> Result<()> {
        let deadline = Instant::now() + self.patience;
        loop {
            if ask(&self.store.join("watch.sock")).is_some_and(|a| unwatched(&a).is_some()) {
                return Ok(());
            }
            if Instant::now() > deadline {
                bail!(
                    "merkle watch did not vouch for its rescan within {} s",
                    self.patience.as_secs()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The watch's own peak RSS in KiB so far (Linux: `VmHWM` in `/proc/PID/status`): it
    /// answers the searches beside it, holding the tree's listing and index.
    pub(crate) fn peak_rss_kib(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace().nth(1)?.parse().ok()
    }

    /// How many folders the watch leaves unwatched (the kernel's inotify limit), as it vouches.
    pub(crate) fn unwatched(&self) -> usize {
        ask(&self.store.join("watch.sock"))
            .and_then(|a| unwatched(&a))
            .unwrap_or(0)
    }
}

#[cfg(unix)]
fn ask(socket: &Path) -> Option<String> {
    let mut stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(1))).ok()?;
    stream.write_all(b"sync\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    Some(answer)
}

#[cfg(not(unix))]
fn ask(_socket: &Path) -> Option<String> {
    None
}

/// The folders a watch's answer says it leaves unwatched: none for `clean ROOT`, N for
/// `partly ROOT N`; `None` where it does not vouch. (`watch::vouch::vouched` reads the same
/// answer; the bench drives merkle as processes and links none of its crates.)
fn unwatched(answer: &str) -> Option<usize> {
    let first = answer.lines().next()?;
    if first.starts_with("clean ") {
        return Some(0);
    }
    first
        .strip_prefix("partly ")?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::{grep_word, unwatched};

    #[test]
    fn a_watch_vouches_clean_or_for_part_of_the_tree() {
        assert_eq!(unwatched("clean 00ab\n"), Some(0));
        assert_eq!(unwatched("partly 00ab 2\n\"a\"\n\"b/c\"\n"), Some(2));
        assert_eq!(unwatched("stale 00ab\n"), None);
        assert_eq!(unwatched(""), None);
    }

    #[test]
    fn git_grep_looks_for_the_longest_word_of_the_query() {
        assert_eq!(
            grep_word("dprint_plugin_markdown"),
            "dprint_plugin_markdown"
        );
        assert_eq!(
            grep_word("permission prompt shown to the user"),
            "permission"
        );
        assert_eq!(grep_word("fmt markdown"), "markdown");
        assert_eq!(grep_word(""), "");
    }
}
