//! `cargo xtask bench outline PATH`: the offline outline against universal-ctags on a real
//! checkout. It reports how many of ctags' top-level definitions each file's outline frame
//! names (recall, by language, over files where ctags finds at most `--max-defs` definitions)
//! and the times of ctags and of `merkle generate --recursive --offline` over the same files.
//!
//! The checkout is only read: merkle's store goes to a temporary folder (`--store`). ctags is
//! given exactly the files merkle scans (`merkle list-nodes`), with its default kinds and
//! extras, so file-scoped definitions (C's `static` functions, macros in `.c` files) count too.
//! A top-level definition is a tag without a scope; tags of imports (Python's and Go's
//! `import ... as name`, which ctags tags as `namespace`, `unknown` or `packageName`) are left
//! out. A name counts as found when the frame holds it as a whole identifier.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use crate::bench_proc::{ms, progress, settle, timed, work_dir};
use crate::ctags::{Tag, read_tags};
use serde_json::Value as Json;

/// How to run the outline benchmark.
#[derive(Debug, Clone)]
pub struct OutlineConfig {
    /// The checkout to outline.
    pub repo: PathBuf,
    /// Recall counts files where ctags finds at most this many definitions.
    pub max_defs: usize,
    /// The `merkle` binary to measure.
    pub merkle: PathBuf,
    /// The ctags binary.
    pub ctags: PathBuf,
}

/// The languages the outline parses with a grammar, as ctags names them.
const LANGUAGES: &[&str] = &[
    "Rust",
    "Python",
    "JavaScript",
    "TypeScript",
    "Go",
    "Java",
    "C",
    "C++",
];

/// The frame type the bench generates.
const FRAME_TYPE: &str = "outline-bench";

/// Recall counts for one language.
#[derive(Default)]
struct Recall {
    files: usize,
    names: usize,
    found: usize,
    misses: Vec<String>,
}

/// Runs the benchmark and returns the report.
pub fn run_outline(config: &OutlineConfig) -> Result<String> {
    let repo = config
        .repo
        .canonicalize()
        .with_context(|| format!("no checkout at {}", config.repo.display()))?;
    let store = work_dir(None)?;
    let merkle = |args: &[&str]| {
        let mut cmd = Command::new(&config.merkle);
        cmd.arg("--root")
            .arg(&repo)
            .arg("--store")
            .arg(&store.path)
            .args(args)
            .env_remove("MERKLE_LLM_MODE")
            .env_remove("MERKLE_LLM_PROVIDER");
        cmd
    };

    let (scan, files) = scan_files(&merkle, &repo)?;
    let (ctags, tags) = run_ctags(config, &repo, &store.path, &files)?;
    let (generate, noop) = generate_frames(&merkle)?;
    progress("reading the frames");
    let frames = read_frames(&files, &tags, |args| merkle(args))?;
    let by_language = recall(config, &tags, &frames);

    let mut t = String::new();
    write_recall(&mut t, config, &repo, &files, &tags, &by_language);
    write_times(
        &mut t,
        Times {
            ctags,
            scan,
            generate,
            noop,
        },
    );
    crate::bench_index::report(&mut t, &repo, &files, &tags, LANGUAGES, &merkle)?;
    let misses: Vec<&String> = by_language.values().flat_map(|r| &r.misses).collect();
    if !misses.is_empty() {
        line(&mut t, String::new());
        line(&mut t, "some names the outline missed:".to_owned());
        for m in misses {
            let _ = writeln!(t, "  {m}");
        }
    }
    Ok(t)
}

/// The steps' times.
struct Times {
    ctags: Duration,
    scan: Duration,
    generate: Duration,
    noop: Duration,
}

/// Scans the checkout into the bench's store: the scan's time and the files merkle lists
/// (an error when there are none).
fn scan_files(merkle: &dyn Fn(&[&str]) -> Command, repo: &Path) -> Result<(Duration, Vec<String>)> {
    progress("merkle scan");
    settle();
    let (scan, _) = timed(&mut merkle(&["-q", "scan"]))?;
    let (_, nodes) = timed(&mut merkle(&["--json", "list-nodes", "--recursive"]))?;
    let nodes = serde_json::from_str::<Json>(&nodes).context("reading list-nodes' JSON")?;
    let files: Vec<String> = nodes
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n.get("kind").and_then(Json::as_str) == Some("file"))
        .filter_map(|n| n.get("path").and_then(Json::as_str).map(str::to_owned))
        .collect();
    if files.is_empty() {
        bail!("merkle found no files under {}", repo.display());
    }
    Ok((scan, files))
}

/// Runs ctags over exactly `files` (listed in a file in `store`): its time and its tags.
fn run_ctags(
    config: &OutlineConfig,
    repo: &Path,
    store: &Path,
    files: &[String],
) -> Result<(Duration, BTreeMap<String, Vec<Tag>>)> {
    progress(&format!("ctags over {} files", files.len()));
    let list = store.join("ctags-files.txt");
    std::fs::write(&list, files.join("\n") + "\n")
        .with_context(|| format!("writing {}", list.display()))?;
    settle();
    let (ctags, tags_out) = timed(
        Command::new(&config.ctags)
            .current_dir(repo)
            .args(["--output-format=json", "--fields=+nlKZ", "-f", "-", "-L"])
            .arg(&list),
    )?;
    Ok((ctags, read_tags(&tags_out)?))
}

/// Generates outline frames offline over the whole checkout, then again with nothing to do:
/// both times (an error where the first fails anywhere or the second produces a frame).
fn generate_frames(merkle: &dyn Fn(&[&str]) -> Command) -> Result<(Duration, Duration)> {
    progress("merkle generate --recursive --offline");
    timed(&mut merkle(&[
        "agent",
        "add",
        "bench",
        "--role",
        "synthesis",
    ]))?;
    let generate_args = [
        "--json",
        "generate",
        "--recursive",
        "--offline",
        "--agent",
        "bench",
        "--type",
        FRAME_TYPE,
    ];
    settle();
    let (generate, out) = timed(&mut merkle(&generate_args))?;
    if !out.contains("\"failed\": []") {
        bail!("generate reported failures: {out}");
    }
    settle();
    let (noop, out) = timed(&mut merkle(&generate_args))?;
    if !out.contains("\"produced\": 0") {
        bail!("a second generate produced frames: {out}");
    }
    Ok((generate, noop))
}

/// Per language, how many of ctags' top-level names in each file's tags its frame holds, over
/// the files with at most `--max-defs` tags, with the first misses.
fn recall<'t>(
    config: &OutlineConfig,
    tags: &'t BTreeMap<String, Vec<Tag>>,
    frames: &BTreeMap<String, String>,
) -> BTreeMap<&'t str, Recall> {
    let mut by_language: BTreeMap<&str, Recall> = BTreeMap::new();
    for (path, file_tags) in tags {
        let Some(language) = file_tags.first().map(|t| t.language.as_str()) else {
            continue;
        };
        if !LANGUAGES.contains(&language) || file_tags.len() > config.max_defs {
            continue;
        }
        // ctags names anonymous structs and enums `__anon...`: nothing to find.
        let top: Vec<&Tag> = file_tags
            .iter()
            .filter(|t| t.top_level && !t.name.starts_with("__anon"))
            .collect();
        if top.is_empty() {
            continue;
        }
        let content = frames.get(path.as_str()).map_or("", String::as_str);
        let r = by_language.entry(language).or_default();
        r.files += 1;
        for t in top {
            r.names += 1;
            if names(content, &t.name) {
                r.found += 1;
            } else if r.misses.len() < 8 {
                r.misses.push(format!("{path}: {} {}", t.kind, t.name));
            }
        }
    }
    by_language
}

/// Appends `text` and a newline to `t`.
fn line(t: &mut String, text: String) {
    t.push_str(&text);
    t.push('\n');
}

/// The report's head and its recall table: one row per language, then all of them against
/// the 0.95 target.
fn write_recall(
    t: &mut String,
    config: &OutlineConfig,
    repo: &Path,
    files: &[String],
    tags: &BTreeMap<String, Vec<Tag>>,
    by_language: &BTreeMap<&str, Recall>,
) {
    line(
        t,
        format!(
            "bench outline: {} ({} files merkle scans, {} with ctags tags)",
            repo.display(),
            files.len(),
            tags.len()
        ),
    );
    line(t, String::new());
    line(
        t,
        format!(
            "recall of ctags' top-level definitions, files with at most {} definitions:",
            config.max_defs
        ),
    );
    line(
        t,
        format!(
            "  {:<12} {:>7} {:>8} {:>8} {:>8}",
            "language", "files", "names", "found", "recall"
        ),
    );
    let (mut names_all, mut found_all, mut files_all) = (0, 0, 0);
    for (language, r) in by_language {
        names_all += r.names;
        found_all += r.found;
        files_all += r.files;
        line(
            t,
            format!(
                "  {language:<12} {:>7} {:>8} {:>8} {:>8.3}",
                r.files,
                r.names,
                r.found,
                ratio(r.found, r.names)
            ),
        );
    }
    let overall = ratio(found_all, names_all);
    line(
        t,
        format!(
            "  {:<12} {files_all:>7} {names_all:>8} {found_all:>8} {overall:>8.3}  (target >= 0.95: {})",
            "all",
            if overall >= 0.95 { "PASS" } else { "MISS" }
        ),
    );
}

/// The steps' times, and scan + generate over ctags against the 2x target.
fn write_times(t: &mut String, times: Times) {
    let Times {
        ctags,
        scan,
        generate,
        noop,
    } = times;
    line(t, String::new());
    line(t, format!("{:<58} {:>10}", "step", "time"));
    let rows: [(&str, Duration); 5] = [
        ("ctags -R over the same files (JSON to a pipe)", ctags),
        ("merkle scan (cold store)", scan),
        (
            "merkle generate --recursive --offline (after the scan)",
            generate,
        ),
        ("  scan + generate", scan + generate),
        ("merkle generate again (no-op: no producer runs)", noop),
    ];
    for (label, d) in rows {
        line(t, format!("{label:<58} {:>10}", ms(d)));
    }
    let r = (scan + generate).as_secs_f64() / ctags.as_secs_f64().max(1e-9);
    line(
        t,
        format!(
            "scan + generate / ctags: {r:.2}x (target <= 2x: {})",
            if r <= 2.0 { "PASS" } else { "MISS" }
        ),
    );
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// Each tagged file's frame content, read one folder at a time (a file's view with its
/// siblings holds the folder's frames).
fn read_frames(
    files: &[String],
    tags: &BTreeMap<String, Vec<Tag>>,
    merkle: impl Fn(&[&str]) -> Command,
) -> Result<BTreeMap<String, String>> {
    let mut by_dir: BTreeMap<&str, &str> = BTreeMap::new();
    for f in files.iter().filter(|f| tags.contains_key(f.as_str())) {
        let dir = f.rsplit_once('/').map_or("", |(d, _)| d);
        by_dir.entry(dir).or_insert(f);
    }
    let mut frames = BTreeMap::new();
    for file in by_dir.values() {
        let (_, out) = timed(&mut merkle(&[
            "--json",
            "get-node",
            file,
            "--source",
            "node,siblings",
            "--type",
            FRAME_TYPE,
            "--max-frames",
            "1000000",
        ]))?;
        let doc = serde_json::from_str::<Json>(&out).context("reading get-node's JSON")?;
        for f in doc
            .get("frames")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let path = f.get("path").and_then(Json::as_str);
            let content = f.get("content").and_then(Json::as_str);
            if let (Some(p), Some(c)) = (path, content) {
                frames.insert(p.to_owned(), c.to_owned());
            }
        }
    }
    Ok(frames)
}

/// Whether `text` holds `name` as a whole identifier (a name with other characters, a Markdown
/// heading say, anywhere).
fn names(text: &str, name: &str) -> bool {
    if name.is_empty() {
        return true;
    }
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + name.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

/// The repository path argument, checked.
pub fn checkout(path: &str) -> Result<PathBuf> {
    let p = Path::new(path);
    if !p.is_dir() {
        bail!("{path} is not a folder");
    }
    Ok(p.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_counts_only_as_a_whole_identifier() {
        assert!(names("12: pub fn open() -> Store", "open"));
        assert!(!names("12: pub fn reopen() -> Store", "open"));
        assert!(names("3: ## Install guide", "Install guide"));
        assert!(!names("", "x"));
    }
}
