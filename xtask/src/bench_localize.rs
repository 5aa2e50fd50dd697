//! `cargo xtask bench localize`: how often `merkle search`, given a real issue's text, ranks
//! the files its real fix changed near the top, against plain BM25 over the same index.
//!
//! The instances file holds one JSON object a line: `instance_id`, `repo` (`owner/name`),
//! `base_commit`, `problem_statement` and `gold_files` (the files the fix changed, tests left
//! out). For each instance, in file order, the repository's tree at the base commit is laid
//! out from a bare mirror (`MIRRORS/owner+name/repo`, as the search tool's `fetch` leaves it,
//! or `MIRRORS/owner+name` itself) with `git archive`, into one folder per repository that
//! keeps its `.merkle` between instances (so the store, the facts and the index are updated
//! as a user's would be after a checkout), with a `.git` that shares the mirror's objects and
//! whose HEAD is the base commit (the history a checkout has: commits up to the base, never
//! the fix). Then `merkle scan`, `merkle generate --recursive
//! --offline`, and `merkle --json search - --limit K` with the issue text on standard input,
//! once fused and once `--ranking plain`.
//!
//! Reported for each ranking: acc@1, acc@5 and acc@10 (every gold file within the first k),
//! MRR (of the first gold file) and the median time of a search (the whole process: a no-op
//! rescan, the index check and the query). At function level, for the fused ranking: the gold
//! functions are those the fix's hunk headers name (git's Python function context of
//! `git diff -U0 BASE FIX -- GOLD_FILES`, the fix found in the mirror as the pull request's
//! merge, `Merge pull request #N`, or its squashed commit, `(#N)`, N from the instance id);
//! acc@5 counts an instance when every gold function is among the definitions the top 5 files
//! list (a softer figure: at least one), over the instances whose headers name one.
//!
//! Where an instance gives its gold patch (`patch`), also the figures from it
//! ([`crate::bench_localize_figures`]): function acc@5, acc@10 and any@10 of the fused
//! ranking's definitions, and the line recall of `merkle --json context - --budget N` (the issue text
//! on standard input) at 4000, 8000 and 16000 tokens, beside the top plain-ranked files
//! pasted from their start into the same budget.
use std::fmt::Write as _;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value as Json;

use crate::bench_localize_figures::{Answers, BUDGETS, GoldFigures, GoldTally, evaluate};
use crate::bench_localize_gold::ranked_definitions;
use crate::bench_localize_plain::plain_functions;
use crate::bench_proc::{git, median, ms, progress, timed};

/// What the bench is run with.
#[derive(Debug, Clone)]
pub struct LocalizeConfig {
    pub instances: PathBuf,
    pub mirrors: PathBuf,
    pub merkle: PathBuf,
    /// Where the trees are laid out (kept); a temporary folder when none.
    pub work: Option<PathBuf>,
    /// Only the first N instances.
    pub take: Option<usize>,
    /// Per-instance results, one JSON object a line.
    pub out: Option<PathBuf>,
    /// A tree per instance (in `work`, kept and reused by a later run as it is) rather than
    /// one per repository moved from commit to commit.
    pub per_instance: bool,
}

#[derive(Debug)]
struct Instance {
    id: String,
    repo: String,
    commit: String,
    text: String,
    gold: Vec<String>,
    /// The fix as a unified diff, where the instance gives it.
    patch: Option<String>,
}

fn instances(path: &Path) -> Result<Vec<Instance>> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: Json = serde_json::from_str(line)
            .with_context(|| format!("{}:{}: not JSON", path.display(), i + 1))?;
        let field = |k: &str| -> Result<String> {
            v.get(k)
                .and_then(Json::as_str)
                .map(str::to_owned)
                .with_context(|| format!("{}:{}: no string field {k:?}", path.display(), i + 1))
        };
        let gold = v
            .get("gold_files")
            .and_then(Json::as_array)
            .with_context(|| {
                format!(
                    "{}:{}: no array field \"gold_files\"",
                    path.display(),
                    i + 1
                )
            })?
            .iter()
            .filter_map(|g| g.as_str().map(str::to_owned))
            .collect();
        out.push(Instance {
            id: field("instance_id")?,
            repo: field("repo")?,
            commit: field("base_commit")?,
            text: field("problem_statement")?,
            gold,
            patch: field("patch").ok(),
        });
    }
    Ok(out)
}

/// The bare mirror of `repo` under `mirrors`.
fn mirror(mirrors: &Path, repo: &str) -> Result<PathBuf> {
    let base = mirrors.join(repo.replace('/', "+"));
    for candidate in [base.join("repo"), base.clone()] {
        if candidate.join("objects").is_dir() {
            return Ok(candidate);
        }
    }
    bail!(
        "no mirror of {repo} at {} (fetch it first: the search tool's `fetch github:{repo}`)",
        base.display()
    )
}

/// Lays out `commit` of `git_dir` in `tree`, replacing everything but `.merkle` and `.git`.
fn checkout(git_dir: &Path, commit: &str, tree: &Path) -> Result<()> {
    fs::create_dir_all(tree).with_context(|| format!("creating {}", tree.display()))?;
    for entry in fs::read_dir(tree).with_context(|| format!("reading {}", tree.display()))? {
        let entry = entry?;
        if entry.file_name() == ".merkle" || entry.file_name() == ".git" {
            continue;
        }
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            fs::remove_dir_all(&path)
        } else {
            fs::remove_file(&path)
        }
        .with_context(|| format!("removing {}", path.display()))?;
    }
    if extract(git_dir, commit, tree, &[])? {
        return Ok(());
    }
    // A snapshot mirror may lack its largest files' blobs (data, generated single headers),
    // on which `git archive` fails: the tree is laid out without them.
    let absent = absent_files(git_dir, commit)?;
    if absent.is_empty() || !extract(git_dir, commit, tree, &absent)? {
        bail!("git archive {commit} | tar -x failed");
    }
    progress(&format!(
        "{commit}: laid out without {} files the mirror lacks ({})",
        absent.len(),
        absent.join(", ")
    ));
    Ok(())
}

/// `git archive COMMIT | tar -x` into `tree`, leaving out `exclude`; whether both succeeded.
fn extract(git_dir: &Path, commit: &str, tree: &Path, exclude: &[String]) -> Result<bool> {
    let mut cmd = Command::new("git");
    cmd.arg("--git-dir").arg(git_dir).args(["archive", commit]);
    if !exclude.is_empty() {
        cmd.args(["--", "."]);
        cmd.args(exclude.iter().map(|p| format!(":(exclude,literal){p}")));
    }
    let mut archive = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("running git archive")?;
    let stdout = archive.stdout.take().context("git archive's stdout")?;
    let tar = Command::new("tar")
        .args(["-x", "-C"])
        .arg(tree)
        .stdin(stdout)
        .status()
        .context("running tar")?;
    Ok(archive.wait()?.success() && tar.success())
}

/// The files of `commit` whose blobs `git_dir` does not hold.
fn absent_files(git_dir: &Path, commit: &str) -> Result<Vec<String>> {
    let listing = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["ls-tree", "-r", "-z", commit])
        .stderr(Stdio::inherit())
        .output()
        .context("running git ls-tree")?;
    // `MODE blob OID\tPATH`, NUL-terminated.
    let blobs: Vec<(String, String)> = listing
        .stdout
        .split(|&b| b == 0)
        .filter_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            let (meta, path) = entry.split_once('\t')?;
            let mut meta = meta.split(' ').skip(1);
            let (kind, id) = (meta.next()?, meta.next()?);
            (kind == "blob").then(|| (id.to_owned(), path.to_owned()))
        })
        .collect();
    let mut check = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(["cat-file", "--batch-check"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .context("running git cat-file")?;
    let mut input = check.stdin.take().context("git cat-file's stdin")?;
    let ids: String = blobs.iter().map(|(id, _)| format!("{id}\n")).collect();
    // Written beside the reading, so that neither pipe fills while the other waits.
    let writer = std::thread::spawn(move || input.write_all(ids.as_bytes()));
    let out = check.wait_with_output()?;
    writer
        .join()
        .map_err(|_| anyhow::anyhow!("writing to git cat-file panicked"))??;
    let answers = String::from_utf8_lossy(&out.stdout);
    Ok(blobs
        .into_iter()
        .zip(answers.lines())
        .filter(|(_, answer)| answer.ends_with(" missing"))
        .map(|((_, path), _)| path)
        .collect())
}

/// Gives `tree` the history a checkout of `commit` has, as a user's would: a git folder that
/// shares the mirror's objects (`git clone --shared`), its HEAD at `commit`. A search reads
/// the commits HEAD reaches, so the fix (a later commit) is never among them.
fn with_history(git_dir: &Path, commit: &str, tree: &Path) -> Result<()> {
    if !tree.join(".git/objects").is_dir() {
        timed(
            git(tree)
                .args(["clone", "-q", "--shared", "--bare"])
                .arg(git_dir)
                .arg(".git"),
        )?;
        timed(git(tree).args(["--git-dir", ".git", "config", "core.bare", "false"]))?;
    }
    timed(git(tree).args([
        "--git-dir",
        ".git",
        "update-ref",
        "--no-deref",
        "HEAD",
        commit,
    ]))?;
    Ok(())
}

/// Runs `merkle ARGS` in `tree` with `stdin`; its wall time and stdout.
fn merkle(
    bin: &Path,
    tree: &Path,
    args: &[&str],
    stdin: Option<&str>,
) -> Result<(Duration, String)> {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .current_dir(tree)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd
        .spawn()
        .with_context(|| format!("running merkle {}", args.join(" ")))?;
    if let Some(text) = stdin {
        let mut input = child.stdin.take().context("merkle's stdin")?;
        input.write_all(text.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    let elapsed = start.elapsed();
    if !out.status.success() {
        bail!(
            "merkle {} in {} failed with {}: {}",
            args.join(" "),
            tree.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok((elapsed, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// The functions the fix of `inst` changes, as its hunk headers name them: (file, name) in
/// diff order; `None` when the mirror holds no commit of the fix.
fn gold_functions(
    git_dir: &Path,
    inst: &Instance,
    attributes: &Path,
) -> Result<Option<Vec<(String, String)>>> {
    let Some(number) = inst
        .id
        .rsplit_once('-')
        .map(|(_, n)| n)
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    else {
        return Ok(None);
    };
    let git = |args: &[&str]| -> Result<String> {
        let out = Command::new("git")
            .arg("--git-dir")
            .arg(git_dir)
            .arg("-c")
            .arg(format!("core.attributesFile={}", attributes.display()))
            .args(args)
            .stderr(Stdio::null())
            .output()
            .context("running git")?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let merge = git(&[
        "log",
        "--all",
        "--format=%H %P",
        "--grep",
        &format!("Merge pull request #{number} "),
        "-n",
        "1",
    ])?;
    let fields: Vec<&str> = merge.split_whitespace().collect();
    // The fix: the pull request's head against the base (a merge), or the squashed commit
    // against its parent.
    let (from, head) = if let [_, _, pr_head] = fields.as_slice() {
        (inst.commit.clone(), (*pr_head).to_owned())
    } else {
        let squash = git(&[
            "log",
            "--all",
            "--format=%H",
            "--grep",
            &format!("(#{number})"),
            "-n",
            "1",
        ])?;
        match squash.split_whitespace().next() {
            Some(c) => (format!("{c}^"), c.to_owned()),
            None => return Ok(None),
        }
    };
    let mut args = vec!["diff", "-U0", from.as_str(), head.as_str(), "--"];
    args.extend(inst.gold.iter().map(String::as_str));
    let diff = git(&args)?;
    let mut out: Vec<(String, String)> = Vec::new();
    let mut file = None;
    for line in diff.lines() {
        if let Some(f) = line.strip_prefix("+++ ") {
            // `+++ /dev/null`: a deleted file names no function.
            file = f.strip_prefix("b/").map(str::to_owned);
        } else if let (Some(header), Some(f)) = (line.strip_prefix("@@"), &file) {
            let context = header.split_once("@@").map_or("", |(_, c)| c).trim();
            let context = context.strip_prefix("async ").unwrap_or(context);
            let name = ["def ", "class "]
                .iter()
                .find_map(|k| context.strip_prefix(k))
                .map(|rest| {
                    rest.chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect::<String>()
                })
                .filter(|n| !n.is_empty());
            if let Some(name) = name
                && !out.iter().any(|(g, n)| g == f && *n == name)
            {
                out.push((f.clone(), name));
            }
        }
    }
    Ok(Some(out))
}

/// Function-level figures of a ranking (see the module documentation).
#[derive(Debug, Default, Clone)]
struct FnTally {
    n: usize,
    all5: usize,
    any5: usize,
}

impl FnTally {
    /// `hits` is a search's JSON; `gold` the gold functions (none: the instance is not counted).
    fn add(&mut self, hits: &Json, gold: &[(String, String)]) {
        if gold.is_empty() {
            return;
        }
        let top5 = Json::Array(
            hits.as_array()
                .into_iter()
                .flatten()
                .take(5)
                .cloned()
                .collect(),
        );
        let listed = ranked_definitions(&top5);
        let found = |(f, n): &(String, String)| listed.iter().any(|d| d.path == *f && d.name == *n);
        self.n += 1;
        self.all5 += usize::from(gold.iter().all(found));
        self.any5 += usize::from(gold.iter().any(found));
    }
}

/// One ranking's figures.
#[derive(Debug, Default, Clone)]
struct Tally {
    n: usize,
    at1: usize,
    at5: usize,
    at10: usize,
    rr: f64,
    times: Vec<Duration>,
}

impl Tally {
    fn add(&mut self, ranked: &[String], gold: &[String], time: Duration) {
        let rank = |g: &String| ranked.iter().position(|p| p == g);
        let worst = gold
            .iter()
            .map(rank)
            .try_fold(0, |w, r| r.map(|r| w.max(r + 1)));
        let first = gold.iter().filter_map(rank).min();
        self.n += 1;
        if let Some(w) = worst {
            self.at1 += usize::from(w <= 1);
            self.at5 += usize::from(w <= 5);
            self.at10 += usize::from(w <= 10);
        }
        if let Some(f) = first {
            self.rr += 1.0 / (f + 1) as f64;
        }
        self.times.push(time);
    }

    fn row(&self, name: &str) -> String {
        let pct = |k: usize| 100.0 * k as f64 / self.n.max(1) as f64;
        format!(
            "| {name} | {} | {:.1}% | {:.1}% | {:.1}% | {:.3} | {} |",
            self.n,
            pct(self.at1),
            pct(self.at5),
            pct(self.at10),
            self.rr / self.n.max(1) as f64,
            ms(median(&self.times)),
        )
    }
}

fn paths_of(v: &Json) -> Result<Vec<String>> {
    Ok(v.as_array()
        .context("merkle search printed no array")?
        .iter()
        .filter_map(|h| h.get("path").and_then(Json::as_str).map(str::to_owned))
        .collect())
}

/// The run's figures so far.
#[derive(Debug, Default)]
struct Run {
    fused: Tally,
    plain: Tally,
    functions: FnTally,
    /// Instances whose fix the mirror holds, and those whose fix it does not.
    fixes: usize,
    no_fix: usize,
    /// Scan, generate and index update per checkout.
    prepare: Vec<Duration>,
    gold: GoldTally,
}

/// Lays out `inst`'s tree (or finds it laid out, with `--per-instance`) and brings merkle's
/// store and index in step with it; the tree.
fn prepare(
    config: &LocalizeConfig,
    work: &Path,
    git_dir: &Path,
    inst: &Instance,
    run: &mut Run,
) -> Result<PathBuf> {
    let (tree, ready) = if config.per_instance {
        let tree = work.join(&inst.id);
        let marker = work.join(format!("{}.ready", inst.id));
        let ready = fs::read_to_string(&marker).is_ok_and(|c| c.trim() == inst.commit);
        if !ready {
            checkout(git_dir, &inst.commit, &tree)?;
        }
        with_history(git_dir, &inst.commit, &tree)?;
        (tree, Some((marker, ready)))
    } else {
        let tree = work.join(inst.repo.replace('/', "+"));
        checkout(git_dir, &inst.commit, &tree)?;
        with_history(git_dir, &inst.commit, &tree)?;
        (tree, None)
    };
    let start = Instant::now();
    if !matches!(ready, Some((_, true))) {
        merkle(&config.merkle, &tree, &["scan"], None)?;
        merkle(
            &config.merkle,
            &tree,
            &["generate", "--recursive", "--offline"],
            None,
        )?;
    }
    // The first search after a checkout brings the index in step (the changed files
    // indexed again), and the first task's the history read for its HEAD: part of the
    // preparation, not of a query's time.
    merkle(
        &config.merkle,
        &tree,
        &["search", "-"],
        Some("index\nhistory"),
    )?;
    run.prepare.push(start.elapsed());
    if let Some((marker, false)) = &ready {
        fs::write(marker, &inst.commit).with_context(|| format!("writing {}", marker.display()))?;
    }
    Ok(tree)
}

/// `merkle --json search` of the issue's text (`--ranking plain` where `plain`): its time
/// and its JSON.
fn search(bin: &Path, tree: &Path, inst: &Instance, plain: bool) -> Result<(Duration, Json)> {
    let mut args = vec!["--json", "search", "-", "--limit", "10"];
    if plain {
        args.extend(["--ranking", "plain"]);
    }
    let (time, out) = merkle(bin, tree, &args, Some(&inst.text))?;
    let json = serde_json::from_str(&out).context("merkle search's JSON")?;
    Ok((time, json))
}

/// `merkle --json context` of the issue's text at each of [`BUDGETS`].
fn bundles(bin: &Path, tree: &Path, inst: &Instance) -> Result<Vec<Json>> {
    BUDGETS
        .iter()
        .map(|budget| {
            let budget = budget.to_string();
            let args = ["--json", "context", "-", "--budget", budget.as_str()];
            let (_, out) = merkle(bin, tree, &args, Some(&inst.text))?;
            serde_json::from_str(&out).context("merkle context's JSON")
        })
        .collect()
}

/// The 1-based ranks of `gold` in `ranked`, `-` for none, comma-separated.
fn ranks_of(ranked: &[String], gold: &[String]) -> String {
    gold.iter()
        .map(|g| {
            ranked
                .iter()
                .position(|p| p == g)
                .map_or("-".to_owned(), |k| (k + 1).to_string())
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Searches `inst`'s prepared tree, scores the answers into `run` and says so; the
/// instance's `--out` line.
fn measure(
    config: &LocalizeConfig,
    tree: &Path,
    git_dir: &Path,
    attributes: &Path,
    inst: &Instance,
    run: &mut Run,
    counter: &str,
) -> Result<Json> {
    let (tf, fused_json) = search(&config.merkle, tree, inst, false)?;
    let ranked = paths_of(&fused_json)?;
    run.fused.add(&ranked, &inst.gold, tf);
    let gold_fns = gold_functions(git_dir, inst, attributes)?;
    match &gold_fns {
        Some(g) => {
            run.fixes += 1;
            run.functions.add(&fused_json, g);
        }
        None => run.no_fix += 1,
    }
    let (tp, plain_json) = search(&config.merkle, tree, inst, true)?;
    let plain_ranked = paths_of(&plain_json)?;
    run.plain.add(&plain_ranked, &inst.gold, tp);
    let figures = match &inst.patch {
        Some(patch) => {
            let bundles = bundles(&config.merkle, tree, inst)?;
            let args = ["--json", "search", "--functions", "-", "--limit", "10"];
            let (_, out) = merkle(&config.merkle, tree, &args, Some(&inst.text))?;
            let functions = serde_json::from_str(&out).context("merkle search's JSON")?;
            let plain_functions = plain_functions(tree, &inst.text, 10)?;
            let answers = Answers {
                fused: &fused_json,
                plain: &plain_json,
                functions: &functions,
                plain_functions: &plain_functions,
                bundles: &bundles,
            };
            Some(evaluate(tree, patch, &inst.gold, &answers))
        }
        None => None,
    };
    if let Some(f) = &figures {
        run.gold.add(f);
    }
    progress(&format!(
        "{counter} {}: fused {} plain {} ({} + {}){}",
        inst.id,
        ranks_of(&ranked, &inst.gold),
        ranks_of(&plain_ranked, &inst.gold),
        ms(tf),
        ms(tp),
        figures
            .as_ref()
            .map_or(String::new(), |f| format!("; {}", f.progress()))
    ));
    Ok(serde_json::json!({
        "instance_id": inst.id,
        "gold_files": inst.gold,
        "gold_functions": gold_fns,
        "fused": fused_json,
        "plain": plain_ranked,
        "fused_ms": tf.as_secs_f64() * 1000.0,
        "plain_ms": tp.as_secs_f64() * 1000.0,
        "patch": figures.as_ref().map(GoldFigures::json),
    }))
}

/// The run's figures as Markdown.
fn report(config: &LocalizeConfig, instances: usize, run: &Run) -> Result<String> {
    let mut report = String::new();
    writeln!(
        report,
        "{instances} instances from {}; scan + offline generate + index update per checkout: \
         median {}\n",
        config.instances.display(),
        ms(median(&run.prepare))
    )?;
    writeln!(
        report,
        "| ranking | n | acc@1 | acc@5 | acc@10 | MRR | median time per search |"
    )?;
    writeln!(report, "|---|---|---|---|---|---|---|")?;
    writeln!(report, "{}", run.fused.row("merkle search (fused)"))?;
    writeln!(
        report,
        "{}",
        run.plain.row("plain BM25 (`--ranking plain`)")
    )?;
    let functions = &run.functions;
    let pct = |k: usize| 100.0 * k as f64 / functions.n.max(1) as f64;
    writeln!(
        report,
        "\nFunction level (fused; the fix found in the mirror for {} instances, not for \
         {}; its hunk headers name a function for {}): acc@5 {:.1}% (every gold function \
         among the definitions the top 5 files list), {:.1}% (at least one)",
        run.fixes,
        run.no_fix,
        functions.n,
        pct(functions.all5),
        pct(functions.any5)
    )?;
    report.push_str(&run.gold.report());
    Ok(report)
}

/// Runs the bench; the report, Markdown tables.
pub fn run_localize(config: &LocalizeConfig) -> Result<String> {
    let mut all = instances(&config.instances)?;
    if let Some(n) = config.take {
        all.truncate(n);
    }
    let temp;
    let work = match &config.work {
        Some(dir) => dir.clone(),
        None => {
            temp = crate::bench_proc::work_dir(None)?;
            temp.path.clone()
        }
    };
    let mut out = match &config.out {
        Some(p) => Some(fs::File::create(p).with_context(|| format!("creating {}", p.display()))?),
        None => None,
    };
    // git's Python function context for the fixes' hunk headers.
    fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let attributes = work.join(".python-funcname.attributes");
    fs::write(&attributes, "*.py diff=python\n")
        .with_context(|| format!("writing {}", attributes.display()))?;
    let mut run = Run::default();
    for (i, inst) in all.iter().enumerate() {
        let git_dir = mirror(&config.mirrors, &inst.repo)?;
        let tree = prepare(config, &work, &git_dir, inst, &mut run)?;
        let counter = format!("{}/{}", i + 1, all.len());
        let line = measure(
            config,
            &tree,
            &git_dir,
            &attributes,
            inst,
            &mut run,
            &counter,
        )?;
        if let Some(f) = out.as_mut() {
            writeln!(f, "{line}")?;
        }
    }
    report(config, all.len(), &run)
}
