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
