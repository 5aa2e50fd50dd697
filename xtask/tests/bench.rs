//! The scan benchmark's harness, run end to end against a fake `merkle` on a small tree.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;

use pretty_assertions::assert_eq;
use xtask::bench::{ScanConfig, run_scan};

/// A stand-in for `merkle --root DIR scan|status --json` that really detects changes, by
/// checksums, so the harness's sanity checks on `files` and `changed` have something to check.
const FAKE_MERKLE: &str = r#"#!/bin/sh
root=$2
list() { (cd "$root" && find . -path ./.git -prune -o -path ./.merkle -prune -o -type f -print | sort | xargs cksum); }
case $3 in
scan)
    mkdir -p "$root/.merkle"
    touch "$root/.merkle/sums"
    list > "$root/.merkle/new"
    changed=$(diff "$root/.merkle/sums" "$root/.merkle/new" | grep -c '^>')
    mv "$root/.merkle/new" "$root/.merkle/sums"
    echo "{\"root\":\"fake\",\"files\":$(wc -l < "$root/.merkle/sums"),\"dirs\":1,\"changed\":$changed}"
    ;;
status)
    echo '{"root":"fake","nodes":1,"frames":0,"changed_on_disk":[]}'
    ;;
*) exit 2 ;;
esac
"#;

#[test]
fn harness_runs_every_step_and_reports_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let merkle = dir.path().join("fake-merkle");
    fs::write(&merkle, FAKE_MERKLE).expect("write fake merkle");
    fs::set_permissions(&merkle, fs::Permissions::from_mode(0o755)).expect("chmod");

    let report = run_scan(&ScanConfig {
        files: 150,
        runs: 2,
        seed: 5,
        keep: Some(dir.path().join("tree")),
        merkle,
        repo: None,
    })
    .expect("the bench runs");

    let has_b3sum = std::process::Command::new("b3sum")
        .arg("--version")
        .output()
        .is_ok();
    let mut expected = vec!["git_add", "merkle_cold_scan"];
    expected.extend(has_b3sum.then_some("b3sum"));
    expected.extend([
        "git_status",
        "merkle_status",
        "merkle_noop_scan",
        "merkle_edit_scan",
        "merkle_targeted_scan",
    ]);
    let keys: Vec<&str> = report.measures.iter().map(|m| m.key).collect();
    assert_eq!(keys, expected);
    assert!(report.measures.iter().all(|m| m.samples.len() == 2));
    let notes: Vec<&String> = report
        .notes
        .iter()
        .filter(|n| !n.contains("b3sum"))
        .collect();
    assert_eq!(notes, Vec::<&String>::new());
    assert_eq!(report.files, 150);

    let table = report.table();
    for row in [
        "cold scan vs git add -A",
        "cold scan vs b3sum",
        "no-op status vs git status",
        "one-file rescan vs no-op rescan",
        "targeted rescan vs no-op rescan",
    ] {
        assert!(table.contains(row), "{row} missing from\n{table}");
    }
    let json = report.json();
    assert!(json.starts_with("{\"files\":150,"), "{json}");
    assert!(
        json.contains("\"name\":\"cold scan vs git add -A\""),
        "{json}"
    );
    assert!(
        dir.path().join("tree/.git").is_dir(),
        "--keep leaves the tree"
    );
}

/// `git` in `dir` with no user or system configuration.
fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn repo_mode_interleaves_every_pair_on_a_clone_and_leaves_the_checkout_alone() {
    let dir = tempfile::tempdir().expect("temp dir");
    let merkle = dir.path().join("fake-merkle");
    fs::write(&merkle, FAKE_MERKLE).expect("write fake merkle");
    fs::set_permissions(&merkle, fs::Permissions::from_mode(0o755)).expect("chmod");
    let repo = dir.path().join("repo");
    fs::create_dir_all(repo.join("src/deep")).expect("mkdir");
    for (path, text) in [
        ("README", "hello\n"),
        ("src/a.py", "print(1)\n"),
        ("src/deep/b.rs", "fn main() {}\n"),
        ("src/deep/c.ts", "export {}\n"),
    ] {
        fs::write(repo.join(path), text).expect("write");
    }
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "x"]);

    let report = run_scan(&ScanConfig {
        files: 1,
        runs: 2,
        seed: 1,
        keep: Some(dir.path().join("clone")),
        merkle,
        repo: Some(repo.clone()),
    })
    .expect("the bench runs");

    let has_b3sum = std::process::Command::new("b3sum")
        .arg("--version")
        .output()
        .is_ok();
    let mut expected = vec!["merkle_cold_scan_2", "git_add"];
    expected.extend(
        has_b3sum
            .then_some(["merkle_cold_scan", "b3sum"])
            .into_iter()
            .flatten(),
    );
    expected.extend([
        "merkle_status_2",
        "git_status",
        "merkle_noop_scan",
        "merkle_status",
        "merkle_edit_scan",
        "git_add_edit",
    ]);
    let keys: Vec<&str> = report.measures.iter().map(|m| m.key).collect();
    assert_eq!(keys, expected);
    assert!(report.measures.iter().all(|m| m.samples.len() == 2));
    let notes: Vec<&String> = report
        .notes
        .iter()
        .filter(|n| !n.contains("b3sum") && !n.contains("peak RSS"))
        .collect();
    assert_eq!(notes, Vec::<&String>::new());
    assert_eq!(report.files, 4);
    let table = report.table();
    for row in [
        "cold scan vs b3sum",
        "no-op scan vs no-op status",
        "edit + scan vs edit + git add -A",
        "no-op status vs git status",
        "cold scan vs git add -A (fresh)",
        "bench scan --repo",
    ] {
        assert!(table.contains(row), "{row} missing from\n{table}");
    }
    // The edits went to the clone, never to the checkout measured.
    assert_eq!(git(&repo, &["status", "--porcelain"]), "");
    assert!(!repo.join(".merkle").exists());
    assert!(
        dir.path().join("clone/.git").is_dir(),
        "--keep leaves the clone"
    );
}

#[test]
fn repo_mode_names_a_folder_that_is_not_a_checkout() {
    let dir = tempfile::tempdir().expect("temp dir");
    let err = run_scan(&ScanConfig {
        files: 1,
        runs: 1,
        seed: 1,
        keep: None,
        merkle: dir.path().join("merkle"),
        repo: Some(dir.path().to_path_buf()),
    })
    .expect_err("not a checkout");
    let message = format!("{err:#}");
    assert!(
        message.contains(&dir.path().display().to_string()) && message.contains("not a git"),
        "{message}"
    );
}
