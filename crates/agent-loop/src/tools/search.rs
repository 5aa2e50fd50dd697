//! Regex search over the workspace's files, honouring `.gitignore` the way ripgrep does.
//!
//! The walk (the `ignore` crate) skips hidden entries and what `.gitignore`, `.ignore` and
//! `.git/info/exclude` exclude, also outside a git checkout; the user's global git excludes
//! are not read, so a search gives the same answer on every machine. Symbolic links are not
//! followed, and every file is opened through [`Workspace::read`], so a search cannot read
//! outside the workspace even if the tree changes while it runs. Files are visited in path
//! order, so results are stable.

use ignore::WalkBuilder;
use regex::RegexBuilder;

use crate::error::{Error, Result};
use crate::tools::workspace::{EntryKind, Workspace};

/// Bounds on one search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchLimits {
    pub max_matches: usize,
    /// Larger files are skipped.
    pub max_file_bytes: u64,
    /// Longer matching lines are cut.
    pub max_line_bytes: usize,
}

/// What to look for, and where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query<'a> {
    /// A regular expression in the `regex` crate's syntax.
    pub pattern: &'a str,
    /// A folder or file of the workspace; `.` for all of it.
    pub path: &'a str,
    pub ignore_case: bool,
}

/// Lines matching the query, as `path:line: text`, one per line.
pub fn search(workspace: &Workspace, query: &Query<'_>, limits: &SearchLimits) -> Result<String> {
    let Query {
        pattern,
        path,
        ignore_case,
    } = *query;
    let regex = RegexBuilder::new(pattern)
        .case_insensitive(ignore_case)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| Error::InvalidPattern {
            pattern: pattern.to_owned(),
            reason: e.to_string(),
        })?;
    let (start, kind) = workspace.locate(path)?;
    let files: Vec<String> = match kind {
        None => return Err(Error::NoSuchPath { path: path.into() }),
        Some(EntryKind::File) => vec![start.clone()],
        Some(EntryKind::Dir) => {
            let from = if start == "." {
                workspace.root().to_owned()
            } else {
                workspace.root().join(&start)
            };
            WalkBuilder::new(from)
                .require_git(false)
                .git_global(false)
                .sort_by_file_path(|a, b| a.cmp(b))
                .build()
                .filter_map(|entry| entry.ok())
                .filter(|entry| entry.file_type().is_some_and(|t| t.is_file()))
                .filter_map(|entry| {
                    let relative = entry.path().strip_prefix(workspace.root()).ok()?;
                    relative.to_str().map(str::to_owned)
                })
                .collect()
        }
        Some(_) => return Err(Error::NotAFile { path: start }),
    };

    let mut out = String::new();
    let mut matches = 0;
    let mut skipped = 0;
    'files: for file in &files {
        let Ok(bytes) = workspace.read(file, limits.max_file_bytes) else {
            skipped += 1;
            continue;
        };
        if looks_binary(&bytes) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        for (number, line) in text.lines().enumerate() {
            if !regex.is_match(line) {
                continue;
            }
            if matches == limits.max_matches {
                out.push_str(&format!(
                    "[... stopped after {matches} matches; narrow the pattern or the path]\n"
                ));
                break 'files;
            }
            matches += 1;
            let shown = &line[..line.floor_char_boundary(limits.max_line_bytes)];
            out.push_str(&format!("{file}:{}: {shown}", number + 1));
            if shown.len() < line.len() {
                out.push_str(" [...]");
            }
            out.push('\n');
        }
    }
    if matches == 0 {
        out.push_str(&format!("no matches for {pattern:?} in {start}\n"));
    }
    if skipped > 0 {
        out.push_str(&format!(
            "[{skipped} {} skipped: unreadable or over {} bytes]\n",
            if skipped == 1 {
                "file was"
            } else {
                "files were"
            },
            limits.max_file_bytes
        ));
    }
    Ok(out)
}

/// A NUL in the first 8 KiB marks a binary file, as git and ripgrep decide.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0)
}
