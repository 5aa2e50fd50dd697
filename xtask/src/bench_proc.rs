//! Running, timing and comparing the processes the benches measure: merkle built once in
//! release, git with the user's settings switched off, b3sum in batches, peak memory, medians
//! of repeated and interleaved runs, and the scratch folders they run in.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, bail};

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

pub(crate) fn json_str(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// The median; the mean of the middle two for an even count, zero for none.
pub fn median(samples: &[Duration]) -> Duration {
    let mut sorted = samples.to_vec();
    sorted.sort();
    match sorted.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
    }
}

/// Builds `merkle` in release mode from the workspace at `workspace` and returns its path in
/// cargo's target folder (which honours `CARGO_TARGET_DIR` and `build.target-dir`).
pub fn build_merkle(workspace: &Path) -> Result<PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    progress("building merkle: cargo build --release -p merkle");
    // cargo's own output goes to stderr so that `--json` leaves stdout clean.
    let status = Command::new(&cargo)
        .args(["build", "--release", "-p", "merkle"])
        .current_dir(workspace)
        .stdout(io::stderr())
        .status()
        .context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release -p merkle failed with {status}");
    }
    let out = Command::new(&cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(workspace)
        .stderr(Stdio::inherit())
        .output()
        .context("running cargo metadata")?;
    if !out.status.success() {
        bail!("cargo metadata failed with {}", out.status);
    }
    let metadata = String::from_utf8_lossy(&out.stdout);
    let target = json_string_field(&metadata, "target_directory")
        .context("no target_directory in cargo metadata's output")?;
    let exe = Path::new(&target)
        .join("release")
        .join(format!("merkle{}", std::env::consts::EXE_SUFFIX));
    if !exe.is_file() {
        bail!("cargo build succeeded but {} does not exist", exe.display());
    }
    Ok(exe)
}

/// The field `key` of a JSON object's text (merkle's and cargo's `--json` output).
pub(crate) fn json_field(json: &str, key: &str) -> Option<serde_json::Value> {
    serde_json::from_str::<serde_json::Value>(json)
        .ok()?
        .get(key)
        .cloned()
}

/// The string field `key`.
pub(crate) fn json_string_field(json: &str, key: &str) -> Option<String> {
    json_field(json, key)?.as_str().map(str::to_owned)
}

/// The number field `key`.
pub(crate) fn json_number_field(json: &str, key: &str) -> Option<u64> {
    json_field(json, key)?.as_u64()
}

/// Whether the field `key` holds an empty array.
pub(crate) fn json_empty_array_field(json: &str, key: &str) -> Option<bool> {
    json_field(json, key)?.as_array().map(Vec::is_empty)
}

pub(crate) fn progress(step: &str) {
    eprintln!("bench: {step}");
}

/// Runs `cmd` to completion and returns its wall-clock time and stdout; a failure is an error
/// carrying the command's stderr.
pub(crate) fn timed(cmd: &mut Command) -> Result<(Duration, String)> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let out = cmd.output().with_context(|| format!("running {cmd:?}"))?;
    let elapsed = start.elapsed();
    if !out.status.success() {
        bail!(
            "{cmd:?} failed with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok((elapsed, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// A git command in `tree`, isolated from the user's and the system's configuration.
pub(crate) fn git(tree: &Path) -> Command {
    let mut cmd = Command::new("git");
    cmd.current_dir(tree)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env(
            "GIT_CONFIG_GLOBAL",
            if cfg!(windows) { "NUL" } else { "/dev/null" },
        )
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .args([
            "-c",
            "init.defaultBranch=main",
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            // `git commit` would otherwise start a detached `gc --auto` over the 50,000 loose
            // objects, which competes with the timings that follow and races the cleanup.
            "-c",
            "gc.auto=0",
            "-c",
            "maintenance.auto=false",
        ]);
    cmd
}

/// A fresh repository: `.git` removed, re-initialised, and told to ignore merkle's store even if
/// the store's own `.gitignore` were missing.
pub(crate) fn fresh_git(tree: &Path) -> Result<()> {
    remove_dir_if_present(&tree.join(".git"))?;
    timed(git(tree).args(["init", "-q"]))?;
    fs::write(tree.join(".git/info/exclude"), "/.merkle/\n").context("writing .git/info/exclude")
}

pub(crate) fn remove_dir_if_present(dir: &Path) -> Result<()> {
    match fs::remove_dir_all(dir) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("removing {}", dir.display()))
        }
        _ => Ok(()),
    }
}

/// Removes the generated tree on drop unless the user asked to keep it.
pub(crate) struct WorkDir {
    pub(crate) path: PathBuf,
    pub(crate) keep: bool,
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

pub(crate) fn work_dir(keep: Option<&Path>) -> Result<WorkDir> {
    let (path, keep) = match keep {
        Some(dir) => (dir.to_owned(), true),
        None => {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let name = format!("merkle-bench-{}-{nanos}", std::process::id());
            (std::env::temp_dir().join(name), false)
        }
    };
    let occupied = path.exists()
        && fs::read_dir(&path)
            .with_context(|| format!("reading {}", path.display()))?
            .next()
            .is_some();
    if occupied {
        bail!(
            "{} is not empty: the bench generates its own tree there",
            path.display()
        );
    }
    fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
    Ok(WorkDir { path, keep })
}

/// Flushes dirty pages to disk so that writeback left by an earlier step (git writes hundreds of
/// MiB of objects) is not charged to the next timing. Best effort: without `sync` on PATH the
/// figures are only noisier.
pub(crate) fn settle() {
    let _ = Command::new("sync").status();
}

/// Times `runs` repetitions of `step`, after `prepare` and [`settle`] (untimed) each time,
/// printing progress.
pub(crate) fn repeat(
    runs: usize,
    label: &str,
    mut prepare: impl FnMut(usize) -> Result<()>,
    mut step: impl FnMut() -> Result<(Duration, String)>,
) -> Result<(Vec<Duration>, Vec<String>)> {
    let mut samples = Vec::with_capacity(runs);
    let mut outputs = Vec::with_capacity(runs);
    for i in 0..runs {
        prepare(i)?;
        settle();
        let (d, out) = step()?;
        progress(&format!("  {label} {}/{runs}: {}", i + 1, ms(d)));
        samples.push(d);
        outputs.push(out);
    }
    Ok((samples, outputs))
}

/// Whether `b3sum` can be run; when it cannot, a note says so and how to get it.
pub(crate) fn has_b3sum(notes: &mut Vec<String>) -> bool {
    if Command::new("b3sum").arg("--version").output().is_ok() {
        return true;
    }
    let note = "b3sum is not on PATH, so the `cold scan vs b3sum` row is skipped: \
                `cargo install b3sum --locked` (or `apt-get install b3sum`) to measure it";
    progress(note);
    notes.push(note.to_owned());
    false
}

/// GNU time, which reports a process's peak resident set (`%M`).
pub(crate) const GNU_TIME: &str = "/usr/bin/time";

/// What [`under_gnu_time`] prints before the peak resident set.
const RSS_MARK: &str = "peak_rss_kib=";

/// `cmd` (its program, arguments and folder) run under [`GNU_TIME`], reading nothing and its
/// output thrown away; the peak RSS comes on stderr ([`reported_rss`]).
pub(crate) fn under_gnu_time(cmd: &Command) -> Command {
    let mut timed = Command::new(GNU_TIME);
    timed
        .args(["-f", &format!("{RSS_MARK}%M")])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    if let Some(dir) = cmd.get_current_dir() {
        timed.current_dir(dir);
    }
    timed
}

/// The peak RSS in KiB that a run under [`under_gnu_time`] printed on `stderr`.
pub(crate) fn reported_rss(stderr: &[u8]) -> Option<u64> {
    String::from_utf8_lossy(stderr)
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(RSS_MARK))
        .and_then(|n| n.parse().ok())
}

/// The peak resident set, in KiB, of one untimed cold run of `scan` (the store at `store`
/// removed first), as GNU time's `%M` reports it; `None` with a note where it cannot be told.
pub(crate) fn peak_rss(
    store: &Path,
    mut scan: Command,
    notes: &mut Vec<String>,
) -> Result<Option<u64>> {
    progress("peak RSS of a cold merkle scan (untimed)");
    remove_dir_if_present(store)?;
    let kib = under_gnu_time(&scan)
        .output()
        .ok()
        .and_then(|out| reported_rss(&out.stderr));
    if kib.is_none() {
        // The scan itself must still work: run it plainly so a broken binary is an error.
        timed(&mut scan)?;
        notes.push(format!(
            "peak RSS not measured: {GNU_TIME} (GNU time, which reports %M) is not available"
        ));
    }
    Ok(kib)
}

/// Times `runs` interleaved pairs, A then B, each step after its own untimed preparation and
/// [`settle`]; returns both steps' samples and outputs. A machine that other work shares moves
/// both of a pair alike, which a ratio of medians then mostly cancels.
#[allow(clippy::type_complexity)]
pub(crate) fn interleaved(
    runs: usize,
    labels: [&str; 2],
    mut a: impl FnMut(usize) -> Result<(Duration, String)>,
    mut b: impl FnMut(usize) -> Result<(Duration, String)>,
) -> Result<[(Vec<Duration>, Vec<String>); 2]> {
    let mut out: [(Vec<Duration>, Vec<String>); 2] = Default::default();
    for i in 0..runs {
        let steps: [&mut dyn FnMut(usize) -> Result<(Duration, String)>; 2] = [&mut a, &mut b];
        for (side, step) in steps.into_iter().enumerate() {
            let (d, text) = step(i)?;
            progress(&format!("  {} {}/{runs}: {}", labels[side], i + 1, ms(d)));
            out[side].0.push(d);
            out[side].1.push(text);
        }
    }
    Ok(out)
}

/// The files of the checkout at `dir` as its index lists them.
pub(crate) fn ls_files(dir: &Path) -> Result<Vec<String>> {
    let (_, out) = timed(git(dir).args(["ls-files", "-z"]))?;
    Ok(out
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect())
}

/// Clones the checkout at `repo` into `tree` (the checkout itself is never written), whose git
/// is told to ignore merkle's store.
pub(crate) fn clone_checkout(repo: &Path, tree: &Path) -> Result<()> {
    progress(&format!(
        "cloning {} into {} (the checkout itself is never written)",
        repo.display(),
        tree.display()
    ));
    timed(
        git(Path::new("."))
            .args(["clone", "-q", "--no-hardlinks"])
            .arg(repo)
            .arg(tree),
    )
    .with_context(|| format!("--repo {}: cloning it (it needs a commit)", repo.display()))?;
    let exclude = tree.join(".git/info/exclude");
    fs::write(&exclude, "/.merkle/\n").with_context(|| format!("writing {}", exclude.display()))
}

/// Hashes exactly `paths` (relative to `dir`) with b3sum, batched so no argument list is too long.
pub(crate) fn b3sum(dir: &Path, paths: &[&str]) -> Result<(Duration, String)> {
    const BATCH_BYTES: usize = 128 * 1024;
    let mut total = Duration::ZERO;
    let mut rest = paths;
    while !rest.is_empty() {
        let mut bytes = 0;
        let take = rest
            .iter()
            .take_while(|p| {
                bytes += p.len() + 1;
                bytes <= BATCH_BYTES
            })
            .count()
            .max(1);
        let mut cmd = Command::new("b3sum");
        cmd.current_dir(dir).arg("--").args(&rest[..take]);
        total += timed(&mut cmd)?.0;
        rest = &rest[take..];
    }
    Ok((total, String::new()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_fields_are_read_from_merkle_output() {
        let out = r#"{ "root": "ab\"c", "files" : 50000, "changed": 0, "changed_on_disk": [ ] }"#;
        assert_eq!(json_string_field(out, "root"), Some("ab\"c".to_owned()));
        assert_eq!(json_number_field(out, "files"), Some(50000));
        assert_eq!(json_number_field(out, "changed"), Some(0));
        assert_eq!(json_empty_array_field(out, "changed_on_disk"), Some(true));
        assert_eq!(
            json_empty_array_field(r#"{"changed_on_disk":["a"]}"#, "changed_on_disk"),
            Some(false)
        );
        assert_eq!(json_number_field(out, "dirs"), None);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        let d = Duration::from_millis;
        assert_eq!(median(&[d(5), d(1), d(3)]), d(3));
        assert_eq!(
            median(&[d(4), d(1), d(3), d(2)]),
            Duration::from_micros(2500)
        );
        assert_eq!(median(&[]), Duration::ZERO);
    }
}
