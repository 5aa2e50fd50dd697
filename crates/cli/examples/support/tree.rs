//! What the benchmark examples share: their `--name value` flags, a copy of a real tree to run
//! on, and their tokio runtime.
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Copies the files of `from` (its `.git` and `.merkle` left out) to `to`; returns how many.
pub fn copy_tree(from: &Path, to: &Path) -> Result<usize> {
    let mut count = 0;
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        std::fs::create_dir_all(to.join(&rel))?;
        for entry in std::fs::read_dir(from.join(&rel))? {
            let entry = entry?;
            let name = entry.file_name();
            if name == ".git" || name == ".merkle" {
                continue;
            }
            let rel = rel.join(&name);
            let kind = entry.file_type()?;
            if kind.is_dir() {
                todo.push(rel);
            } else if kind.is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, to.join(&rel))?;
                count += 1;
            } else if kind.is_file() {
                std::fs::copy(entry.path(), to.join(&rel))?;
                count += 1;
            }
        }
    }
    Ok(count)
}

/// The value of `--name value` among this process's arguments, if given.
pub fn flag(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .cloned()
}

/// The path `--name PATH` gives, or an error naming the flag and `usage`.
pub fn required(name: &str, usage: &str) -> Result<PathBuf> {
    flag(name)
        .map(PathBuf::from)
        .with_context(|| format!("{name} is required; usage: {usage}"))
}

/// The examples' runtime: two workers, as the machines they are measured on have two cores.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}
