//! The README's quick tour and agent example run as written, twice in a row, from the root of a
//! copy of this repository (a fresh clone: no store yet), so that they cannot rot.
//!
//! The blocks are read from README.md itself and run by `sh -e` with the built `merkle` first on
//! PATH, not through `cargo_bin_cmd!`: what is tested is the text a reader pastes. The one
//! liberty taken: the agent example's scratch folder `/tmp/fix` becomes a temporary folder, so
//! that parallel runs cannot meet there.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Workspace;

fn repository() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The first ```sh block after the line containing `marker`.
fn block_after(readme: &str, marker: &str) -> String {
    let (_, rest) = readme
        .split_once(marker)
        .unwrap_or_else(|| panic!("README.md has no line with {marker:?}"));
    let (_, rest) = rest
        .split_once("```sh\n")
        .unwrap_or_else(|| panic!("no ```sh block after {marker:?} in README.md"));
    let (block, _) = rest
        .split_once("\n```")
        .unwrap_or_else(|| panic!("the ```sh block after {marker:?} is not closed"));
    block.to_owned()
}

/// Copies the repository's sources: everything but build output, stores and git's own folder
/// (an empty `.git` marks the copy's root, as a clone's does).
fn copy_repository(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("reading a repository folder") {
        let entry = entry.expect("a repository entry");
        let name = entry.file_name();
        if [".git", ".merkle", "target"]
            .map(std::ffi::OsStr::new)
            .contains(&name.as_os_str())
        {
            continue;
        }
        let target = to.join(&name);
        let kind = entry.file_type().expect("a file type");
        if kind.is_dir() {
            std::fs::create_dir_all(&target).expect("creating a folder");
            copy_repository(&entry.path(), &target);
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target).expect("copying a repository file");
        }
    }
}

/// Runs `script` with `sh -e` in `dir`, twice; both runs must succeed.
fn run_twice(ws: &Workspace, dir: &Path, script: &str) {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_merkle"));
    let path = std::env::join_paths(
        std::iter::once(bin.parent().expect("the binary is in a folder").to_owned()).chain(
            std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
        ),
    )
    .expect("a PATH of valid folders");
    for attempt in ["first", "second"] {
        let mut cmd = Command::new("sh");
        cmd.args(["-ec", script])
            .current_dir(dir)
            .env("PATH", &path)
            .env("HOME", ws.path("../home"));
        for name in crate::llm::LLM_ENV {
            cmd.env_remove(name);
        }
        let out = cmd.output().expect("running sh");
        assert!(
            out.status.success(),
            "the {attempt} run of\n{script}\nfailed with {}\n--- stdout\n{}--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn the_quick_tour_and_the_agent_example_run_twice_as_written() {
    let readme = std::fs::read_to_string(repository().join("README.md")).expect("README.md");
    let ws = Workspace::empty();
    copy_repository(&repository(), &ws.root);
    std::fs::create_dir_all(ws.path(".git")).expect("creating .git");

    run_twice(&ws, &ws.root, &block_after(&readme, "A quick tour"));
    let head = ws.json(&["get-head", "crates/cli/src/main.rs", "--type", "summary"]);
    assert_eq!(
        head["content"],
        "Entry point: parses flags, dispatches commands.\n"
    );

    let scratch = ws.path("../fix");
    let agent = block_after(&readme, "on a fresh copy of the example workspace").replace(
        "/tmp/fix",
        scratch.to_str().expect("a UTF-8 temporary path"),
    );
    assert!(
        agent.contains("fixtures/agent/fix_violation_success.yaml"),
        "{agent}"
    );
    run_twice(&ws, &ws.root, &agent);
}

/// Byte counts as `N bytes`: they change with every edit, the README's own included.
fn without_byte_counts(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find(" bytes") {
        let number = rest[..at].trim_end_matches(|c: char| c.is_ascii_digit() || c == ',');
        let digits = &rest[number.len()..at];
        out.push_str(number);
        out.push_str(if digits.is_empty() { "" } else { "N" });
        out.push_str(" bytes");
        rest = &rest[at + " bytes".len()..];
    }
    out.push_str(rest);
    out
}

#[test]
fn the_readme_s_sample_map_is_this_repository_s() {
    let readme = std::fs::read_to_string(repository().join("README.md")).expect("README.md");
    let (_, rest) = readme
        .split_once("An excerpt of this repository's")
        .expect("README.md shows a sample map");
    let (_, rest) = rest.split_once("```text\n").expect("a ```text block");
    let (sample, _) = rest.split_once("\n```").expect("a closed block");
    let ws = Workspace::empty();
    copy_repository(&repository(), &ws.root);
    std::fs::create_dir_all(ws.path(".git")).expect("creating .git");
    ws.ok(&["-q", "generate", "--recursive", "--offline"]);
    let map: Vec<String> = ws
        .ok(&["get-node", "."])
        .lines()
        // The frame's text, as `get-node` indents it.
        .map(|line| without_byte_counts(line.strip_prefix("    ").unwrap_or(line)))
        .collect();
    // Every line the excerpt shows is the map's, in the map's order ("..." elides the rest).
    let mut at = 0;
    for line in sample.lines().filter(|l| *l != "...") {
        let line = without_byte_counts(line);
        match map[at..].iter().position(|m| *m == line) {
            Some(found) => at += found + 1,
            None => panic!(
                "README.md's sample map shows {line:?}, which `merkle get-node .` does not (in \
                 that order); the map:\n{}",
                map.join("\n")
            ),
        }
    }
}
