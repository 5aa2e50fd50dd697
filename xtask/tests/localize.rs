//! The localisation benchmark's harness, end to end against a fake `merkle` over a bare mirror
//! made here: trees laid out at each instance's commit, both rankings asked, the figures right.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use xtask::bench_localize::{LocalizeConfig, run_localize};

/// `scan` and `generate` succeed; `search -` ranks `src/a.py` first when the issue (stdin)
/// says "alpha" unless `--ranking plain` is asked, and `src/b.py` first otherwise; `context
/// -` shows alpha's source for "alpha" (its outline at 4000 tokens), else b.py's outline. The
/// tree must hold the commit's files: `src/a.py` is checked for.
const FAKE_MERKLE: &str = r#"#!/bin/sh
case "$*" in
scan|"generate --recursive --offline"|"search index") exit 0 ;;
esac
test -f src/a.py || { echo "no tree" >&2; exit 3; }
text=$(cat)
outline='{"kind":"outline","name":null,"line_start":1,"line_end":2,"text":"Python\n1: def alpha()"}'
case "$*" in
*context*)
    case "$text" in
    *alpha*)
        case "$*" in
        *"--budget 4000"*) printf '%s\n' '{"tokens":10,"files":[{"path":"src/a.py","sections":['"$outline"']}]}' ;;
        *) printf '%s\n' '{"tokens":20,"files":[{"path":"src/a.py","sections":[{"kind":"definition","name":"alpha","line_start":1,"line_end":2,"text":"def alpha():\n    pass"}]}]}' ;;
        esac ;;
    *) printf '%s\n' '{"tokens":20,"files":[{"path":"src/b.py","sections":['"$outline"']}]}' ;;
    esac ;;
*--functions*)
    case "$text" in
    *alpha*) echo '[{"path":"src/a.py","name":"alpha","line_start":1,"line_end":2}]' ;;
    *) echo '[]' ;;
    esac ;;
*plain*) echo '[{"path":"src/b.py"},{"path":"src/a.py"}]' ;;
*)
    case "$text" in
    *alpha*) echo '[{"path":"src/a.py","symbols":[{"name":"alpha","line_start":1,"line_end":2}]},{"path":"src/b.py"}]' ;;
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

/// A repository with three files at its first commit, and the fix of o__r-1 (pull request
/// #1: a branch that changes alpha) merged after it, as a bare mirror under `dir/mirrors`
/// that lacks the blob of one file (`data/big.json`, as a snapshot leaves its largest files
/// out); the first commit.
fn mirror_with_a_fix(dir: &Path) -> String {
    let src = dir.join("src-repo");
    fs::create_dir_all(src.join("src")).expect("mkdir");
    fs::create_dir_all(src.join("data")).expect("mkdir");
    fs::write(src.join("src/a.py"), "def alpha():\n    pass\n").expect("write");
    fs::write(src.join("src/b.py"), "def beta(): pass\n").expect("write");
    fs::write(src.join("data/big.json"), "[1, 2, 3]\n").expect("write");
    git(&src, &["init", "-q"]);
    git(&src, &["add", "-A"]);
    git(&src, &["commit", "-qm", "one"]);
    let commit = git(&src, &["rev-parse", "HEAD"]);
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
    fs::create_dir_all(dir.join("mirrors/o+r")).expect("mkdir");
    git(
        dir,
        &["clone", "-q", "--bare", "src-repo", "mirrors/o+r/repo"],
    );
    let big = git(&src, &["rev-parse", "HEAD:data/big.json"]);
    let (fan, rest) = big.split_at(2);
    fs::remove_file(dir.join("mirrors/o+r/repo/objects").join(fan).join(rest))
        .expect("the blob is a loose object of the mirror");
    commit
}

/// Two instances at `commit`, in `dir/instances.jsonl`, with their gold patches: alpha's body
/// changed; a line added after beta, outside it.
fn write_instances(dir: &Path, commit: &str) -> PathBuf {
    let instances = dir.join("instances.jsonl");
    let line = |id: &str, text: &str, gold: &str, patch: &str| {
        serde_json::json!({
            "instance_id": id, "repo": "o/r", "base_commit": commit,
            "problem_statement": text, "gold_files": [gold], "patch": patch,
        })
        .to_string()
    };
    fs::write(
        &instances,
        format!(
            "{}\n{}\n",
            line(
                "o__r-1",
                "alpha is broken",
                "src/a.py",
                "--- a/src/a.py\n+++ b/src/a.py\n@@ -2 +2 @@ def alpha():\n-    pass\n+    return 1\n"
            ),
            line(
                "o__r-2",
                "beta too",
                "src/b.py",
                "--- a/src/b.py\n+++ b/src/b.py\n@@ -1,0 +2 @@\n+X = 1\n"
            )
        ),
    )
    .expect("write instances");
    instances
}

#[test]
fn both_rankings_are_scored_against_the_gold_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let commit = mirror_with_a_fix(dir.path());
    let instances = write_instances(dir.path(), &commit);
    let mirrors = dir.path().join("mirrors");
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
    // From the gold patches: alpha found first by the fused ranking; o__r-2 changes no
    // definition. Lines: the bundles show alpha's line from 8000 tokens on, never beta's; the
    // plain files pasted (b.py, then a.py, 85 bytes) show both.
    assert!(
        report.contains(
            "(1 of 2 instances with a patch change a line inside a definition; the rest only \
             lines outside every one)"
        ),
        "{report}"
    );
    // Ranked by `search --functions`, by the hits' symbols, and by the plain BM25 over the
    // checkout's definitions (alpha is the one holding the issue's word).
    for row in [
        "| `merkle search --functions` | 1 | 100.0% | 100.0% | 100.0% |",
        "| `merkle search` hits' symbols, hit after hit | 1 | 100.0% | 100.0% | 100.0% |",
        "| plain BM25 over definitions | 1 | 100.0% | 100.0% | 100.0% |",
    ] {
        assert!(report.contains(row), "{row}\n{report}");
    }
    assert!(
        report.contains("| 4000 | 0.0% | 0.0% | 10 | 100.0% | 100.0% | 22 |"),
        "{report}"
    );
    assert!(
        report.contains("| 16000 | 50.0% | 50.0% | 20 | 100.0% | 100.0% | 22 |"),
        "{report}"
    );
    let results = fs::read_to_string(&out).expect("results");
    assert!(
        results.contains(
            r#""functions":[{"line_end":2,"line_start":1,"name":"alpha","path":"src/a.py","rank":1}]"#
        ),
        "{results}"
    );
    assert_eq!(results.lines().count(), 2);
    assert!(
        results.contains(r#""gold_functions":[["src/a.py","alpha"]]"#),
        "{results}"
    );
    assert!(dir.path().join("work/o+r/src/a.py").is_file());
    assert!(!dir.path().join("work/o+r/data/big.json").exists());

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
