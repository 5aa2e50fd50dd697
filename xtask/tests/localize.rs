//! The localisation benchmark's harness, end to end against a fake `merkle` over a bare mirror
//! made here: trees laid out at each instance's commit, both rankings asked, the figures right.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use xtask::bench_localize::{LocalizeConfig, run_localize};

/// `scan` and `generate` succeed; `search -` ranks `src/a.py` first when the issue (stdin)
/// says "alpha" unless `--ranking plain` is asked, and `src/b.py` first otherwise. The tree
/// must hold the commit's files: `src/a.py` is checked for.
const FAKE_MERKLE: &str = r#"#!/bin/sh
case "$*" in
scan|"generate --recursive --offline"|"search index") exit 0 ;;
esac
test -f src/a.py || { echo "no tree" >&2; exit 3; }
text=$(cat)
case "$*" in
*plain*) echo '[{"path":"src/b.py"},{"path":"src/a.py"}]' ;;
*)
    case "$text" in
    *alpha*) echo '[{"path":"src/a.py","symbols":[{"name":"alpha"}]},{"path":"src/b.py"}]' ;;
    *) echo '[{"path":"src/b.py"},{"path":"src/a.py"}]' ;;
    esac ;;
esac
"#;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[test]
fn both_rankings_are_scored_against_the_gold_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("src-repo");
    fs::create_dir_all(src.join("src")).expect("mkdir");
    fs::write(src.join("src/a.py"), "def alpha():\n    pass\n").expect("write");
    fs::write(src.join("src/b.py"), "def beta(): pass\n").expect("write");
    git(&src, &["init", "-q"]);
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-qm", "one"]);
    let commit = git(&src, &["rev-parse", "HEAD"]);
    // The fix of o__r-1, pull request #1: a branch that changes alpha, merged.
    git(&src, &["checkout", "-qb", "fix"]);
    fs::write(src.join("src/a.py"), "def alpha():\n    return 1\n").expect("write");
    git(&src, &["commit", "-qam", "fix alpha"]);
    git(&src, &["checkout", "-q", "-"]);
    git(
        &src,
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge pull request #1 from o/fix",
            "fix",
        ],
    );
    let mirrors = dir.path().join("mirrors");
    fs::create_dir_all(mirrors.join("o+r")).expect("mkdir");
    git(
        dir.path(),
        &["clone", "-q", "--bare", "src-repo", "mirrors/o+r/repo"],
    );

    let instances = dir.path().join("instances.jsonl");
    let line = |id: &str, text: &str, gold: &str| {
        serde_json::json!({
            "instance_id": id, "repo": "o/r", "base_commit": commit,
            "problem_statement": text, "gold_files": [gold],
        })
        .to_string()
    };
    fs::write(
        &instances,
        format!(
            "{}\n{}\n",
            line("o__r-1", "alpha is broken", "src/a.py"),
            line("o__r-2", "beta too", "src/b.py")
        ),
    )
    .expect("write instances");
    let merkle = dir.path().join("fake-merkle");
    fs::write(&merkle, FAKE_MERKLE).expect("write fake merkle");
    fs::set_permissions(&merkle, fs::Permissions::from_mode(0o755)).expect("chmod");
    let out = dir.path().join("results.jsonl");

    let report = run_localize(&LocalizeConfig {
        instances,
        mirrors,
        merkle,
        work: Some(dir.path().join("work")),
        take: None,
        out: Some(out.clone()),
        per_instance: false,
    })
    .expect("the bench runs");
    assert!(
        report.contains("| merkle search (fused) | 2 | 100.0% | 100.0% | 100.0% | 1.000 |"),
        "{report}"
    );
    assert!(
        report.contains("| plain BM25 (`--ranking plain`) | 2 | 50.0% | 100.0% | 100.0% | 0.750 |"),
        "{report}"
    );
    // Function level: only o__r-1's fix is in the mirror; its hunk names alpha, listed first.
    assert!(
        report.contains(
            "Function level (fused; the fix found in the mirror for 1 instances, not for 1; its \
             hunk headers name a function for 1): acc@5 100.0%"
        ),
        "{report}"
    );
    let results = fs::read_to_string(&out).expect("results");
    assert_eq!(results.lines().count(), 2);
    assert!(
        results.contains(r#""gold_functions":[["src/a.py","alpha"]]"#),
        "{results}"
    );
    assert!(dir.path().join("work/o+r/src/a.py").is_file());

    // A missing mirror is named.
    let err = run_localize(&LocalizeConfig {
        instances: dir.path().join("instances.jsonl"),
        mirrors: dir.path().join("nowhere"),
        merkle: dir.path().join("fake-merkle"),
        work: Some(dir.path().join("work2")),
        take: Some(1),
        out: None,
        per_instance: false,
    })
    .expect_err("no mirror");
    assert!(err.to_string().contains("no mirror of o/r"), "{err}");
}
