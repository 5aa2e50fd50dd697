//! Walking the workspace: which files belong to the tree, their stat, and their content hashes.
//!
//! The walk honours .gitignore the way `git ls-files --cached --others --exclude-standard` does
//! for a checkout with no tracked-but-ignored files: nested .gitignore files, .git/info/exclude
//! and core.excludesFile; ripgrep's own `.ignore` files are not read. `.git`, the workspace's
//! `.merkle` folder and the store folder are never entered. Symlinks are recorded, never
//! followed.
//!
//! Whether a file must be hashed again is decided from the last scan's stat (size, mtime, ctime,
//! inode, mode) with git's racy-timestamp rule, made stricter: the stamp is taken when a scan
//! starts, not when it ends, so an entry whose mtime is not older than the scan that recorded it
//! is hashed again next time. A file changed while it was being scanned can then never hide
//! behind an unchanged stat.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::hash::{self, Hash};
use crate::node::{NodeKind, Stat, TreeEntry};

/// Files at least this large are hashed from a memory map with all cores.
const RAYON_MIN: u64 = 1 << 20;
/// Files at least this large are hashed from a memory map.
const MMAP_MIN: u64 = 64 << 10;

/// Where a scan is, for progress displays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// Walking: this many entries seen so far.
    Walked(u64),
    /// Hashing the files whose stat changed: `done` of `total`.
    Hashed { done: u64, total: u64 },
}

/// A leaf found on disk. `content_hash` is filled in by [`hash_leaves`].
#[derive(Debug)]
pub(crate) struct Leaf {
    pub(crate) path: String,
    pub(crate) kind: NodeKind,
    pub(crate) content_hash: Hash,
    pub(crate) stat: Stat,
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct Walked {
    pub(crate) leaves: Vec<Leaf>,
    /// Every directory below the root (the root itself is implied).
    pub(crate) dirs: Vec<String>,
    /// Entries that could not be read or named, with the reason.
    pub(crate) warnings: Vec<String>,
    /// How many leaves were hashed rather than taken from the last scan.
    pub(crate) hashed: u64,
    pub(crate) hashed_bytes: u64,
}

/// Walks the workspace in parallel, recording each entry's kind and stat; hashes nothing.
/// `skip` lists folders never entered besides `.git` (the workspace's `.merkle`, the store).
pub(crate) fn walk(
    root: &Path,
    skip: Vec<PathBuf>,
    progress: Option<&(dyn Fn(Progress) + Sync)>,
) -> Walked {
    let mut builder = ignore::WalkBuilder::new(root);
    builder
        .hidden(false)
        .ignore(false)
        .parents(true)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |e| {
            // Only folders are skipped; comparing names first keeps whole-path comparisons off
            // the path of every file.
            let name = e.file_name();
            if name == ".git" {
                return false;
            }
            !(e.file_type().is_some_and(|t| t.is_dir())
                && skip
                    .iter()
                    .any(|s| s.file_name() == Some(name) && s.as_path() == e.path()))
        });
    let out = Mutex::new(Walked::default());
    let seen = AtomicU64::new(0);
    builder.build_parallel().run(|| {
        let mut local = Local {
            out: &out,
            found: Walked::default(),
        };
        let seen = &seen;
        Box::new(move |entry| {
            match entry {
                Ok(entry) => visit(root, &entry, &mut local.found),
                Err(e) => local.found.warnings.push(e.to_string()),
            }
            let n = seen.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = progress.filter(|_| n.is_multiple_of(1024)) {
                p(Progress::Walked(n));
            }
            if local.found.leaves.len() >= 4096 {
                local.flush();
            }
            ignore::WalkState::Continue
        })
    });
    let mut walked = out.into_inner().unwrap_or_else(|e| e.into_inner());
    walked.leaves.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    walked.dirs.sort_unstable();
    if let Some(p) = progress {
        p(Progress::Walked(seen.load(Ordering::Relaxed)));
    }
    walked
}

/// How to decide which leaves to hash.
pub(crate) struct HashConfig<'a> {
    pub(crate) root: &'a Path,
    /// The last scan's entries, to skip hashing files whose stat has not changed.
    pub(crate) prev: &'a HashMap<String, TreeEntry>,
    /// The last scan's start stamp (ns); entries not older than it are hashed again.
    pub(crate) stamp: Option<i64>,
    /// Hash every file regardless of the last scan.
    pub(crate) force: bool,
    pub(crate) progress: Option<&'a (dyn Fn(Progress) + Sync)>,
}

/// Fills in every leaf's content hash: from the last scan where its stat is unchanged and not
/// racy, else by hashing, in parallel. Leaves that cannot be read are dropped with a warning.
pub(crate) fn hash_leaves(walked: &mut Walked, cfg: &HashConfig<'_>) {
    let mut todo = Vec::new();
    for (i, leaf) in walked.leaves.iter_mut().enumerate() {
        let reusable = cfg.prev.get(&leaf.path).filter(|p| {
            !cfg.force
                && p.kind == leaf.kind
                && p.stat == leaf.stat
                // A symlink cannot be rewritten in place (a new target is a new inode), so
                // only a file's mtime can be racy.
                && (leaf.kind == NodeKind::Symlink
                    || cfg.stamp.is_some_and(|s| leaf.stat.mtime_ns < s))
        });
        match reusable {
            Some(p) => leaf.content_hash = p.content_hash,
            None => todo.push(i),
        }
    }
    let total = todo.len() as u64;
    let done = AtomicU64::new(0);
    let results: Vec<(usize, std::io::Result<Hash>)> = todo
        .par_iter()
        .map(|&i| {
            let leaf = &walked.leaves[i];
            let path = cfg.root.join(&leaf.path);
            let r = match leaf.kind {
                NodeKind::Symlink => symlink_target(&path).map(|t| hash::content_hash(&t)),
                _ => hash_file(&path, leaf.stat.size),
            };
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if let Some(p) = cfg.progress.filter(|_| n.is_multiple_of(256) || n == total) {
                p(Progress::Hashed { done: n, total });
            }
            (i, r)
        })
        .collect();
    let mut failed = Vec::new();
    for (i, r) in results {
        match r {
            Ok(h) => {
                let leaf = &mut walked.leaves[i];
                leaf.content_hash = h;
                walked.hashed += 1;
                walked.hashed_bytes += leaf.stat.size;
            }
            Err(e) => {
                walked
                    .warnings
                    .push(format!("{}: skipped: {e}", walked.leaves[i].path));
                failed.push(i);
            }
        }
    }
    if !failed.is_empty() {
        let mut idx = 0;
        walked.leaves.retain(|_| {
            let keep = failed.binary_search(&idx).is_err();
            idx += 1;
            keep
        });
    }
    walked.warnings.sort();
}

/// One walker thread's findings, handed to the shared result in chunks and, when the walker
/// drops the thread's visitor, all of the rest.
struct Local<'a> {
    out: &'a Mutex<Walked>,
    found: Walked,
}

impl Local<'_> {
    fn flush(&mut self) {
        let mut o = self.out.lock().unwrap_or_else(|e| e.into_inner());
        let f = &mut self.found;
        o.leaves.append(&mut f.leaves);
        o.dirs.append(&mut f.dirs);
        o.warnings.append(&mut f.warnings);
    }
}

impl Drop for Local<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

fn visit(root: &Path, entry: &ignore::DirEntry, local: &mut Walked) {
    if entry.depth() == 0 {
        return;
    }
    let Some(path) = rel_path(root, entry.path()) else {
        local.warnings.push(format!(
            "{}: skipped: the path is not valid UTF-8",
            entry.path().display()
        ));
        return;
    };
    let Some(ft) = entry.file_type() else {
        return;
    };
    if ft.is_dir() {
        local.dirs.push(path);
        return;
    }
    let kind = if ft.is_symlink() {
        NodeKind::Symlink
    } else if ft.is_file() {
        NodeKind::File
    } else {
        local
            .warnings
            .push(format!("{path}: skipped: not a file, directory or symlink"));
        return;
    };
    match entry.path().symlink_metadata() {
        Ok(m) => local.leaves.push(Leaf {
            path,
            kind,
            content_hash: Hash([0; 32]),
            stat: Stat::of(&m),
        }),
        Err(e) => local.warnings.push(format!("{path}: skipped: {e}")),
    }
}

/// The workspace-relative path with `/` separators, or `None` if it is not UTF-8.
#[cfg(unix)]
fn rel_path(root: &Path, path: &Path) -> Option<String> {
    // The walker builds every path as the root joined with names, so a byte prefix test is
    // exact, and much cheaper than comparing components.
    use std::os::unix::ffi::OsStrExt;
    let rest = path
        .as_os_str()
        .as_bytes()
        .strip_prefix(root.as_os_str().as_bytes())?;
    let rest = rest.strip_prefix(b"/").unwrap_or(rest);
    std::str::from_utf8(rest).ok().map(str::to_owned)
}

/// The workspace-relative path with `/` separators, or `None` if it is not UTF-8.
#[cfg(not(unix))]
fn rel_path(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let mut out = String::new();
    for (i, c) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(c.as_os_str().to_str()?);
    }
    Some(out)
}
/// A symlink's target as raw bytes, so that it hashes the same whatever its encoding.
pub(crate) fn symlink_target(path: &Path) -> std::io::Result<Vec<u8>> {
    let target = std::fs::read_link(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(target.as_os_str().as_bytes().to_vec())
    }
    #[cfg(not(unix))]
    {
        // Windows targets use `\`; hash them with `/` so a tree hashes the same on every OS.
        Ok(target.to_string_lossy().replace('\\', "/").into_bytes())
    }
}

/// blake3 of a file's content, from a memory map with all cores for large files.
pub(crate) fn hash_file(path: &Path, size: u64) -> std::io::Result<Hash> {
    let mut h = blake3::Hasher::new();
    if size >= RAYON_MIN {
        h.update_mmap_rayon(path)?;
    } else if size >= MMAP_MIN {
        h.update_mmap(path)?;
    } else {
        h.update(&std::fs::read(path)?);
    }
    Ok(Hash(*h.finalize().as_bytes()))
}
