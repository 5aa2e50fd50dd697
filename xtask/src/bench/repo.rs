//! `cargo xtask bench scan --repo`: the comparisons of issue #15 on a clone of a real checkout,
//! each merkle step interleaved with its baseline (A B A B in the same run).
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use super::{Findings, REPO_ROWS, ScanConfig, ScanReport, Setup};
use crate::bench_proc::{
    clone_checkout, fresh_git, git, has_b3sum, interleaved, json_empty_array_field,
    json_number_field, ls_files, peak_rss, progress, remove_dir_if_present, settle, timed,
    work_dir,
};

/// `--repo`: the comparisons of issue #15 on a clone of a real checkout, each merkle step
/// interleaved with its baseline.
pub(super) fn run_repo(config: &ScanConfig, repo: &Path) -> Result<ScanReport> {
    let runs = config.runs;
    let repo = repo
        .canonicalize()
        .with_context(|| format!("--repo {}", repo.display()))?;
    if !repo.join(".git").exists() {
        bail!(
            "--repo {}: not a git checkout (no .git); `git init && git add -A && git commit` \
             one first",
            repo.display()
        );
    }
    let work = work_dir(config.keep.as_deref())?;
    let tree_dir = work.path.as_path();
    clone_checkout(&repo, tree_dir)?;
    let setup = Setup::new(config, tree_dir);
    let mut findings = Findings::default();

    let (files, bytes, dirs) = cold_vs_git_add(&setup, &mut findings)?;
    if has_b3sum(&mut findings.notes) {
        cold_vs_b3sum(&setup, &mut findings, &files)?;
    }
    statuses(&setup, &mut findings)?;
    edited(&setup, &mut findings, &files)?;

    let peak_rss_kib = peak_rss(&setup.store, setup.merkle(&["scan"]), &mut findings.notes)?;
    if work.keep {
        progress(&format!("kept the clone in {}", tree_dir.display()));
    }
    Ok(ScanReport {
        repo: Some(repo),
        rows: REPO_ROWS,
        peak_rss_kib,
        files: files.len(),
        dirs,
        bytes,
        runs,
        seed: 0,
        measures: findings.measures,
        notes: findings.notes,
    })
}

/// A cold `merkle scan`: the store removed and the disk settled first (untimed).
fn cold_scan(setup: &Setup<'_>) -> Result<(Duration, String)> {
    remove_dir_if_present(&setup.store)?;
    settle();
    timed(&mut setup.merkle(&["scan"]))
}

/// A cold `merkle scan` against `git add -A` into a fresh repository, then an untimed commit;
/// returns the checkout's files (as `git ls-files` lists them), their bytes, and the folders
/// the scan counted, and notes a scan whose file count differs from git's.
fn cold_vs_git_add(
    setup: &Setup<'_>,
    findings: &mut Findings,
) -> Result<(Vec<String>, u64, usize)> {
    let (runs, tree_dir) = (setup.config.runs, setup.tree_dir);
    progress("cold merkle scan and git add -A into a fresh repository, interleaved");
    let [(scans, outputs), (adds, _)] = interleaved(
        runs,
        ["merkle scan (cold)", "git add -A (fresh repo)"],
        |_| cold_scan(setup),
        |_| {
            fresh_git(tree_dir)?;
            settle();
            timed(git(tree_dir).args(["add", "-A"]))
        },
    )?;
    findings.record("merkle_cold_scan_2", "merkle scan (cold)", scans);
    findings.record("git_add", "git add -A (fresh repo)", adds);
    timed(git(tree_dir).args(["commit", "-q", "--no-verify", "-m", "bench"]))?;
    let files = ls_files(tree_dir)?;
    let bytes = files
        .iter()
        .filter_map(|p| fs::symlink_metadata(tree_dir.join(p)).ok())
        .map(|m| m.len())
        .sum();
    let last = outputs.last().map(String::as_str).unwrap_or_default();
    let dirs = json_number_field(last, "dirs").unwrap_or(0) as usize;
    match json_number_field(last, "files") {
        Some(n) if n == files.len() as u64 => {}
        found => findings.notes.push(format!(
            "merkle scan reported files = {found:?}, git ls-files lists {}: the figures may \
             not compare like with like",
            files.len()
        )),
    }
    Ok((files, bytes, dirs))
}

/// A cold `merkle scan` against b3sum over the same files, run in parallel by xargs.
fn cold_vs_b3sum(setup: &Setup<'_>, findings: &mut Findings, files: &[String]) -> Result<()> {
    let (runs, tree_dir) = (setup.config.runs, setup.tree_dir);
    // The file list lives in .git, which merkle never enters.
    let list = tree_dir.join(".git/merkle-bench-files");
    fs::write(&list, files.join("\0")).with_context(|| format!("writing {}", list.display()))?;
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    progress(&format!(
        "cold merkle scan and `git ls-files -z | xargs -0 -P{jobs} b3sum`, interleaved"
    ));
    let [(scans, _), (sums, _)] = interleaved(
        runs,
        ["merkle scan (cold)", "b3sum (same files)"],
        |_| cold_scan(setup),
        |_| {
            settle();
            let mut cmd = Command::new("sh");
            cmd.current_dir(tree_dir)
                .arg("-c")
                .arg(format!("xargs -0 -P{jobs} b3sum -- < \"$0\" > /dev/null"))
                .arg(&list);
            timed(&mut cmd)
        },
    )?;
    findings.record("merkle_cold_scan", "merkle scan (cold)", scans);
    findings.record("b3sum", "b3sum (same files, xargs -P)", sums);
    Ok(())
}

/// No-op `merkle status` against warm `git status`, then no-op `merkle scan` against no-op
/// `merkle status`; notes a scan that found a change or a status that found one on disk.
fn statuses(setup: &Setup<'_>, findings: &mut Findings) -> Result<()> {
    let (runs, tree_dir) = (setup.config.runs, setup.tree_dir);
    let merkle = |args: &[&str]| setup.merkle(args);
    progress("no-op merkle status and warm git status, interleaved (one untimed run each first)");
    timed(&mut merkle(&["scan"]))?;
    timed(&mut merkle(&["status"]))?;
    timed(git(tree_dir).arg("status"))?;
    let [(statuses, status_out), (gits, _)] = interleaved(
        runs,
        ["merkle status (no-op)", "git status (warm)"],
        |_| {
            settle();
            timed(&mut merkle(&["status"]))
        },
        |_| {
            settle();
            timed(git(tree_dir).arg("status"))
        },
    )?;
    findings.record("merkle_status_2", "merkle status (no-op)", statuses);
    findings.record("git_status", "git status (warm)", gits);

    progress("no-op merkle scan and no-op merkle status, interleaved");
    let [(noops, noop_out), (statuses, status_out_2)] = interleaved(
        runs,
        ["merkle scan (no-op)", "merkle status (no-op)"],
        |_| {
            settle();
            timed(&mut merkle(&["scan"]))
        },
        |_| {
            settle();
            timed(&mut merkle(&["status"]))
        },
    )?;
    findings.record("merkle_noop_scan", "merkle scan (no-op)", noops);
    findings.record("merkle_status", "merkle status (no-op)", statuses);
    if noop_out
        .iter()
        .any(|o| json_number_field(o, "changed") != Some(0))
    {
        findings
            .notes
            .push("a no-op merkle scan did not report `changed: 0`".to_owned());
    }
    if status_out
        .iter()
        .chain(&status_out_2)
        .any(|o| json_empty_array_field(o, "changed_on_disk") != Some(true))
    {
        findings
            .notes
            .push("merkle status did not report an empty `changed_on_disk`".to_owned());
    }
    Ok(())
}

/// One line appended to one file, then `merkle scan` against `git add -A` of the same edit;
/// notes a scan that found no change.
fn edited(setup: &Setup<'_>, findings: &mut Findings, files: &[String]) -> Result<()> {
    let (runs, tree_dir) = (setup.config.runs, setup.tree_dir);
    progress("append a line to one file, then merkle scan and git add -A, interleaved");
    let [(edits, edit_out), (adds, _)] = interleaved(
        runs,
        ["merkle scan (one file edited)", "git add -A (same edit)"],
        |i| {
            // The edit is made once, before the pair: both tools find exactly that file changed.
            let path = repo_edit_target(tree_dir, files, i)?;
            let mut text =
                fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
            text.extend_from_slice(format!("\nmerkle bench edit {i}\n").as_bytes());
            fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
            settle();
            timed(&mut setup.merkle(&["scan"]))
        },
        |_| {
            settle();
            timed(git(tree_dir).args(["add", "-A"]))
        },
    )?;
    findings.record("merkle_edit_scan", "merkle scan (one file edited)", edits);
    findings.record("git_add_edit", "git add -A (same edit)", adds);
    if edit_out
        .iter()
        .any(|o| json_number_field(o, "changed").is_none_or(|n| n == 0))
    {
        findings
            .notes
            .push("a merkle scan after an edit did not report `changed` > 0".to_owned());
    }
    Ok(())
}

/// The file edited in pair `i` of `--repo`: a text file (no NUL in its first 8 KiB, under
/// 1 MiB, not a symlink), a different one each run, spread over the checkout.
fn repo_edit_target(dir: &Path, files: &[String], i: usize) -> Result<PathBuf> {
    let n = files.len();
    (0..n)
        .map(|k| dir.join(&files[(n / 2 + (i * 7919 + k) * 104_729) % n]))
        .find(|p| {
            fs::symlink_metadata(p).is_ok_and(|m| m.is_file() && m.len() < 1 << 20)
                && fs::read(p).is_ok_and(|b| !b[..b.len().min(8192)].contains(&0))
        })
        .with_context(|| format!("no text file to edit among the {n} files of the checkout"))
}
