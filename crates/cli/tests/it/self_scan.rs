//! Scans this repository's own checkout and compares its leaves with the files git sees.
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use pretty_assertions::assert_eq;

use crate::{ok, parse};

/// `git ls-files --cached --others --exclude-standard` in `root`, less the tracked files that are
/// deleted on disk (a scan sees the disk, the index remembers them); `None` if git is not
/// installed or `root` is not a git checkout.
fn git_files(root: &Path) -> Option<BTreeSet<String>> {
    let inside = Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .current_dir(root)
        .output()
        .ok()?;
    let toplevel = String::from_utf8(inside.stdout).ok()?;
    if !inside.status.success() || Path::new(toplevel.trim_end()).canonicalize().ok()? != root {
        return None;
    }
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .expect("git ran a moment ago");
    assert!(out.status.success(), "git ls-files failed: {out:?}");
    let listing = String::from_utf8(out.stdout).expect("git lists UTF-8 paths here");
    Some(
        listing
            .split('\0')
            .filter(|p| !p.is_empty() && root.join(p).symlink_metadata().is_ok())
            .map(str::to_owned)
            .collect(),
    )
}

/// The leaves (files and symlinks) of a fresh scan of `root` into `store`.
fn merkle_leaves(root: &Path, store: &Path) -> BTreeSet<String> {
    let merkle = |args: &[&str]| {
        let mut cmd = assert_cmd::cargo::cargo_bin_cmd!("merkle");
        cmd.arg("--root")
            .arg(root)
            .arg("--store")
            .arg(store)
            .args(args)
            .current_dir(root);
        ok(&mut cmd)
    };
    merkle(&["--json", "scan", "--force"]);
    let nodes = parse(&merkle(&["--json", "list-nodes", "--recursive"]));
    nodes
        .as_array()
        .expect("a list")
        .iter()
        .filter(|n| n["kind"] != "dir")
        .map(|n| n["path"].as_str().expect("a path").to_owned())
        .collect()
}

#[test]
fn scanning_this_checkout_sees_the_files_git_sees() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace root exists");
    let store = tempfile::tempdir().expect("creating a temporary store folder");
    // Someone may add or remove a file while this runs (an editor, insta writing a snapshot):
    // compare only when git saw the same files before and after the scan.
    for _ in 0..3 {
        let Some(before) = git_files(&root) else {
            panic!(
                "this test compares a scan with `git ls-files`: it needs git installed and {} \
                 to be a git checkout (run the tests from a clone)",
                root.display()
            );
        };
        let scanned = merkle_leaves(&root, store.path());
        if git_files(&root).as_ref() == Some(&before) {
            assert!(
                before.contains("crates/cli/tests/it/self_scan.rs"),
                "git lists this file"
            );
            assert_eq!(scanned, before);
            return;
        }
    }
    panic!("the checkout kept changing while it was scanned");
}
